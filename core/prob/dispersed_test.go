package prob

import (
	"math"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// On small spaces whose chains mix at moderate scores, the check agrees: the exact marginals (by
// enumeration) confirm that the estimates are right, and the check fires on at most 1 of the 90
// runs (its measured false-alarm rate on right estimates is about 1 % at n = 2,000, 3 % at 100:
// batch means understate the noise of a slowly moving chain; here multilabel's local chain, seed
// 6, whose diagnostic chain's 100 states put coordinate 3 at 0.10 against 0.27).
func TestDispersedCheckQuietWhenMixing(t *testing.T) {
	fired, runs := 0, 0
	spaces := []space.Space{}
	for _, spec := range []struct {
		kind   string
		params []int64
	}{{"permutations", []int64{4}}, {"multilabel", []int64{5}}, {"dicycles", []int64{5}}, {"multiclass", []int64{6}}} {
		sp, err := space.New(spec.kind, spec.params)
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, sp)
	}
	for _, sp := range spaces {
		r := newRand(7, uint64(sp.Dim()))
		u := make([]float64, sp.Dim())
		for j := range u {
			u[j] = 0.5 * r.NormFloat64()
		}
		exact := make([]float64, sp.Dim())
		if _, err := ExactMarginals(sp, u, exact); err != nil {
			t.Fatal(err)
		}
		kinds := []ChainKind{ChainMeta}
		if HasLocalChain(sp) {
			kinds = append(kinds, ChainLocal, ChainMixed)
		}
		for _, kind := range kinds {
			for seed := uint64(0); seed < 10; seed++ {
				opt := InferenceOptions{Method: InferSampled, Samples: 400, DispersedCheck: true,
					Sampler: SampleOptions{Sampler: SamplerChain, Chain: kind}}
				mean := make([]float64, sp.Dim())
				info, err := Marginals(sp, u, opt, seed, mean)
				if err != nil {
					t.Fatal(err)
				}
				if !info.Checked || info.CheckSteps == 0 {
					t.Fatalf("%s %s: the check did not run: %+v", sp.Kind(), kind, info)
				}
				var worst float64
				for j := range mean {
					worst = math.Max(worst, math.Abs(mean[j]-exact[j]))
				}
				if worst > 0.2 {
					t.Errorf("%s %s seed %d: estimate %.3f from the exact marginals: not a mixing case", sp.Kind(), kind, seed, worst)
				}
				runs++
				if info.Disagrees {
					fired++
					t.Logf("%s %s seed %d: the check fired on a mixing chain (estimate %.3f from exact)", sp.Kind(), kind, seed, worst)
				}
			}
		}
	}
	if fired > 1 {
		t.Errorf("the check fired on %d of %d runs of mixing chains", fired, runs)
	}
}

// A row of the sampler audit (Permutations(6), the fitted model's scores ×3, row 0): the
// transposition chain stays near the mode and its estimate is 0.8–0.95 off in a coordinate; the
// check fired on every seed of the measurement.
func TestDispersedCheckFiresOnTrappedChain(t *testing.T) {
	sp, err := space.New("permutations", []int64{6})
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{-1.731951, 3.108196, -0.235149, -1.69791, 2.573317, 0.188221, -1.0104, -0.300717, 1.598464,
		0.414139, -0.486129, 2.322954, 1.5481, -2.00424, -1.087037}
	exact := make([]float64, sp.Dim())
	if _, err := ExactMarginals(sp, u, exact); err != nil {
		t.Fatal(err)
	}
	fired := 0
	for seed := uint64(0); seed < 3; seed++ {
		opt := InferenceOptions{Method: InferSampled, Samples: 100, DispersedCheck: true,
			Sampler: SampleOptions{Sampler: SamplerChain, Chain: ChainLocal}}
		mean := make([]float64, sp.Dim())
		info, err := Marginals(sp, u, opt, deriveSeed(seed, 0), mean)
		if err != nil {
			t.Fatal(err)
		}
		var worst float64
		for j := range mean {
			worst = math.Max(worst, math.Abs(mean[j]-exact[j]))
		}
		t.Logf("seed %d: estimate %.3f off, disagrees %v", seed, worst, info.Disagrees)
		if info.Disagrees {
			fired++
		}
	}
	if fired < 2 {
		t.Errorf("the check fired on %d of 3 seeds of a chain that does not mix", fired)
	}
}

// Exact samples and exact marginals are not checked; without the option nothing runs.
func TestDispersedCheckOnlyChains(t *testing.T) {
	sp, err := space.New("multilabel", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{0.3, -0.2, 1, 0}
	mean := make([]float64, 4)
	for _, opt := range []InferenceOptions{
		{Method: InferSampled, DispersedCheck: true, Sampler: SampleOptions{Sampler: SamplerCFTP}},
		{Method: InferExact, DispersedCheck: true, Sampler: SampleOptions{Sampler: SamplerChain}},
		{Method: InferSampled, Sampler: SampleOptions{Sampler: SamplerChain}},
	} {
		info, err := Marginals(sp, u, opt, 1, mean)
		if err != nil {
			t.Fatal(err)
		}
		if info.Checked || info.Disagrees || info.CheckSteps != 0 {
			t.Errorf("%+v: checked %+v", opt, info)
		}
	}
	// SamplerAuto resolving to a chain is checked.
	big := make([]float64, 4)
	for j := range big {
		big[j] = 40 * float64(j%2*2-1)
	}
	info, err := Marginals(sp, big, InferenceOptions{Method: InferSampled, DispersedCheck: true, Sampler: SampleOptions{Sampler: SamplerAuto}}, 1, mean)
	if err != nil {
		t.Fatal(err)
	}
	if autoSampler(sp, big) == SamplerChain && !info.Checked {
		t.Errorf("auto resolved to a chain and was not checked: %+v", info)
	}
}

// Batch means: runs of a block are cut evenly, and their spread gives the standard error.
func TestBatchSumsSE(t *testing.T) {
	s := newBatchSums(20, 1, 1)
	for i := 0; i < 20; i++ {
		s.add(0, i, []float64{float64(i / 2 % 2)}) // runs of 2 samples: means 0, 1, 0, 1, ...
	}
	// 10 runs, means alternating 0 and 1: sd = √(10·0.25/9), se = sd/√10.
	want := math.Sqrt(10*0.25/9) / math.Sqrt(10)
	if got := s.se()[0]; math.Abs(got-want) > 1e-12 {
		t.Errorf("se = %g, want %g", got, want)
	}
	one := newBatchSums(1, 1, 1)
	one.add(0, 0, []float64{1})
	if !math.IsInf(one.se()[0], 1) {
		t.Errorf("one run: se = %g, want +Inf", one.se()[0])
	}
	if dispersedDisagree(0.1, 0, 0) || !dispersedDisagree(0.2, 0, 0) || dispersedDisagree(0.4, 0.1, 0.05) || !dispersedDisagree(0.2, math.Inf(1), 0) {
		t.Error("the rule: max(floor, z·se)")
	}
}
