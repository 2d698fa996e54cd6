package benchmarks

// The dispersed-start check of sampled marginals (prob.InferenceOptions.DispersedCheck, Python's
// predict_marginals(check_mixing=True)) on the score vectors of the mixing audit: how many of the
// estimates that are wrong it reports, how many right ones it reports falsely, and what it costs.
//
//	COMBPRED_MIXING_TABLE=1 go test ./benchmarks -run TestMixingCheckTable -v -timeout 30m
//
// writes MIXING_CHECK.md here (about a minute on one core); without COMBPRED_MIXING_TABLE the
// test is skipped. mixing_check/scores.json holds 4 score vectors u = s·(Wx + b) per space and
// scale s ∈ {0.1, 0.3, 1, 3, 10} from models fitted by exact inference on synthetic data
// (Gaussian features, no intercept), so that the scale sweeps from near-uniform to peaked π.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

// mixingCase is one space at one scale: its kind, parameters and score vectors.
type mixingCase struct {
	Kind   string      `json:"kind"`
	Params []int64     `json:"params"`
	U      [][]float64 `json:"u"`
}

// mixingRun is one sampled estimate with the check: its error against the exact marginals.
type mixingRun struct {
	space, sampler     string
	n                  int
	err                float64 // max_j |estimate_j − exact_j|
	flagged, unvouched bool
	steps, checkSteps  int64
	checkFactor        float64 // the check's steps over the estimate's
}

const (
	mixingBad  = 0.1  // an estimate off by more than this in a coordinate is wrong
	mixingFine = 0.05 // one within this is right
)

func TestMixingCheckTable(t *testing.T) {
	if os.Getenv("COMBPRED_MIXING_TABLE") == "" {
		t.Skip("set COMBPRED_MIXING_TABLE=1 to measure the mixing check and write MIXING_CHECK.md")
	}
	raw, err := os.ReadFile("mixing_check/scores.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]mixingCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(cases))
	for k := range cases {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	samplers := []struct {
		name string
		opt  prob.SampleOptions
	}{
		{"auto", prob.SampleOptions{Sampler: prob.SamplerAuto}},
		{"metropolis", prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMeta}},
		{"local", prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainLocal}},
		{"mixed", prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMixed}},
	}
	start := time.Now()
	var runs []mixingRun
	for _, key := range keys {
		c := cases[key]
		sp, err := space.New(c.Kind, c.Params)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		name, _, _ := strings.Cut(key, "|")
		for row, u := range c.U {
			exact := make([]float64, sp.Dim())
			if _, err := prob.ExactMarginals(sp, u, exact); err != nil {
				t.Fatalf("%s row %d: %v", key, row, err)
			}
			for _, smp := range samplers {
				if smp.opt.Chain != prob.ChainMeta && smp.opt.Sampler == prob.SamplerChain && !prob.HasLocalChain(sp) {
					continue
				}
				for _, n := range []int{100, 2000} {
					for seed := range uint64(3) {
						opt := prob.InferenceOptions{Method: prob.InferSampled, Samples: n, Sampler: smp.opt, DispersedCheck: true}
						mean := make([]float64, sp.Dim())
						info, err := prob.Marginals(sp, u, opt, 1000*seed+uint64(row), mean)
						if err != nil {
							t.Fatalf("%s row %d %s: %v", key, row, smp.name, err)
						}
						if !info.Checked { // "auto" resolved to exact samples (CFTP): nothing to check
							continue
						}
						r := mixingRun{space: name, sampler: smp.name, n: n, flagged: info.Disagrees,
							unvouched: info.Unvouched > 0, steps: info.Steps, checkSteps: info.CheckSteps,
							checkFactor: float64(info.CheckSteps) / float64(info.Steps)}
						for j := range mean {
							r.err = math.Max(r.err, math.Abs(mean[j]-exact[j]))
						}
						runs = append(runs, r)
					}
				}
			}
		}
	}
	elapsed := time.Since(start)
	var b strings.Builder
	writeMixingTables(&b, runs, len(keys), elapsed)
	if err := os.WriteFile("MIXING_CHECK.md", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

// mixingCount tallies runs: all, those off by more than mixingBad, those within mixingFine, and
// of each the ones the check, the unvouched report or either flagged.
type mixingCount struct {
	runs, bad, fine                   int
	badCheck, badUnvouched, badEither int
	fineCheck, fineEither             int
	badFar, badFarEither              int // off by more than 0.3
	factors                           []float64
	steps, checkSteps                 int64
}

func (c *mixingCount) add(r mixingRun) {
	c.runs++
	c.factors = append(c.factors, r.checkFactor)
	c.steps += r.steps
	c.checkSteps += r.checkSteps
	either := r.flagged || r.unvouched
	if r.err > mixingBad {
		c.bad++
		c.badCheck += b2i(r.flagged)
		c.badUnvouched += b2i(r.unvouched)
		c.badEither += b2i(either)
		if r.err > 0.3 {
			c.badFar++
			c.badFarEither += b2i(either)
		}
	}
	if r.err <= mixingFine {
		c.fine++
		c.fineCheck += b2i(r.flagged)
		c.fineEither += b2i(either)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pct(k, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d (%.0f %%)", k, n, 100*float64(k)/float64(n))
}

func writeMixingTables(b *strings.Builder, runs []mixingRun, cases int, elapsed time.Duration) {
	fmt.Fprintf(b, "# The dispersed-start check of sampled marginals (`benchmarks/mixing_check_test.go`)\n\n")
	fmt.Fprintf(b, "`COMBPRED_MIXING_TABLE=1 go test ./benchmarks -run TestMixingCheckTable -v -timeout 30m` (%.0f s here).\n\n", elapsed.Seconds())
	fmt.Fprintf(b, "Score vectors: `mixing_check/scores.json`, %d (space, scale) cases × 4 rows, scales 0.1–10 of models fitted by exact "+
		"inference, from near-uniform to peaked π. Every chain sampler each space has (`auto` only where it resolves to a chain), "+
		"n_samples ∈ {100, 2000}, 3 seeds; exact marginals by `prob.ExactMarginals`. A run is **wrong** when its estimate is more than %.2g "+
		"off the exact marginals in some coordinate, **right** when it is within %.2g. The check (`DispersedCheck`, Python "+
		"`check_mixing=True`) runs one chain from a perturb-and-MAP start for the burn-in + n/4 samples and flags a row when a "+
		"coordinate's means differ by more than max(0.15, 4 se) (batch means); \"unvouched\" is the report every sampled estimate "+
		"carries (a Metropolis chain that never moved, too few proposals to vouch for the mode).\n\n", cases, mixingBad, mixingFine)
	fmt.Fprintf(b, "| n_samples | runs | wrong | wrong, flagged by the check | by unvouched | by either | off > 0.3, by either | right | right, flagged by the check | by either | check's steps / estimate's (median) | total |\n")
	fmt.Fprintf(b, "|---:|---:|---:|---|---|---|---|---:|---|---|---:|---:|\n")
	for _, n := range []int{100, 2000} {
		var c mixingCount
		for _, r := range runs {
			if r.n == n {
				c.add(r)
			}
		}
		fmt.Fprintf(b, "| %d | %d | %d | %s | %s | %s | %s | %d | %s | %s | %.2f | %.2f |\n", n, c.runs, c.bad,
			pct(c.badCheck, c.bad), pct(c.badUnvouched, c.bad), pct(c.badEither, c.bad), pct(c.badFarEither, c.badFar),
			c.fine, pct(c.fineCheck, c.fine), pct(c.fineEither, c.fine), median(slices.Clone(c.factors)),
			float64(c.checkSteps)/float64(c.steps))
	}
	fmt.Fprintf(b, "\nPer space and sampler at n_samples = 2000 (rows with at least one wrong run): wrong runs flagged by the check / wrong; right runs flagged / right.\n\n")
	fmt.Fprintf(b, "| space | sampler | wrong, flagged by the check | right, flagged |\n|---|---|---|---|\n")
	type group struct{ space, sampler string }
	counts := map[group]*mixingCount{}
	var order []group
	for _, r := range runs {
		if r.n != 2000 {
			continue
		}
		g := group{r.space, r.sampler}
		if counts[g] == nil {
			counts[g] = &mixingCount{}
			order = append(order, g)
		}
		counts[g].add(r)
	}
	for _, g := range order {
		if c := counts[g]; c.bad > 0 {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.space, g.sampler, pct(c.badCheck, c.bad), pct(c.fineCheck, c.fine))
		}
	}
}
