package benchmarks

// Sampled fits of ProbabilisticStructured (Adam on Monte Carlo gradients) with fresh chains at
// every gradient (the fits before persistent chains), persistent chains averaging ψ or its
// conditioned (Rao–Blackwellised) value, and with the norm test's growing samples, on
// label-ranking data whose exact optimum J* is known
// (exact inference by dynamic programming): time, J − J*, and the relative gradient each fit
// reports (± its standard error) against the exact one at the coefficients it returned.
//
//	COMBPRED_SAMPLED_TABLE=1 go test ./benchmarks -run TestSampledFitTable -v -timeout 60m
//
// writes SAMPLED_FIT.md here; without COMBPRED_SAMPLED_TABLE the test is skipped.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

type sampledVariant struct {
	name    string
	fresh   bool
	plain   bool // plain means of ψ, not the conditioned ones
	samples int
	growth  int
	maxIter int
}

func TestSampledFitTable(t *testing.T) {
	if os.Getenv("COMBPRED_SAMPLED_TABLE") == "" {
		t.Skip("set COMBPRED_SAMPLED_TABLE=1 to measure (several CPU minutes) and write SAMPLED_FIT.md")
	}
	const seeds = 2
	// Persistent chains make an iteration about 4× cheaper: the comparisons at equal time are
	// fresh chains for 100 iterations against persistent ones for 400.
	variants := []sampledVariant{
		{"fresh chains, plain means (before session 11), 100 iterations", true, true, 20, 1, 100},
		{"persistent chains, plain means (session 11), 400 iterations", false, true, 20, 1, 400},
		{"persistent chains, conditioned means, 400 iterations", false, false, 20, 1, 400},
		{"persistent chains, conditioned means, 5 samples, 400 iterations", false, false, 5, 1, 400},
		{"persistent, conditioned, norm test (MaxSampleGrowth 8), 400 iterations", false, false, 20, 8, 400},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %d cores, %s/%s, %s.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "Adam (tol 1e-6, η = 0.2), the default alpha (1/(2m)) with an intercept, 20 samples per row per gradient (unless stated) "+
		"from the space's mixed chain (`sampler=\"metropolis\"`-style local + meta moves, default burn-in 100 × thinning, "+
		"thinning = d); persistent chains resume where the last gradient left them with one thinning interval of burn-in. "+
		"J* and the exact relative gradient come from exact inference (dynamic programming) at the coefficients each fit "+
		"returned; 'reported' is what the fit says of itself (`relative_gradient_` ± `relative_gradient_se_`, the mean and "+
		"spread of 4 independent sampled gradients). 'Conditioned means' average each pair's conditional expectation "+
		"within the pair of rankings an exchange of its two labels links (Rao–Blackwellisation), 'plain means' ψ itself. "+
		"Median over %d seeds (time and J − J*: median and max).\n\n", seeds)
	b.WriteString("| data | variant | fit (s, median / max) | J − J* (median / max) | exact relative gradient | reported | samples at the end |\n")
	b.WriteString("|---|---|---:|---|---:|---|---:|\n")
	for _, name := range []string{"glass", "vowel"} {
		X, ys, m, n, k := labelRanking(t, name)
		sp, err := space.New("permutations", []int64{int64(k)})
		if err != nil {
			t.Fatal(err)
		}
		alpha := prob.DefaultAlpha(sp, nil, m)
		exact, err := prob.Fit(sp, X, m, n, ys, nil, prob.Options{Alpha: alpha, Intercept: true, Tol: 1e-9, MaxIter: 2000})
		if err != nil {
			t.Fatal(err)
		}
		p, err := prob.NewProblem(sp, X, m, n, ys, nil, alpha, true)
		if err != nil {
			t.Fatal(err)
		}
		exactInf := prob.InferenceOptions{Method: prob.InferExact}
		g0 := mat.NewDense(n+1, sp.Dim(), nil)
		if _, err := p.Objective(mat.NewDense(n+1, sp.Dim(), nil), exactInf, 0, g0); err != nil {
			t.Fatal(err)
		}
		norm0 := floats.Norm(g0.RawMatrix().Data, 2)
		for _, v := range variants {
			var times, gaps, rels, reps, ses []float64
			final := 0
			for s := 0; s < seeds; s++ {
				opt := prob.Options{Alpha: alpha, Intercept: true, Tol: 1e-6, MaxIter: v.maxIter, Seed: uint64(s + 1),
					FreshChains: v.fresh, MaxSampleGrowth: v.growth,
					Inference: prob.InferenceOptions{Method: prob.InferSampled, Samples: v.samples, PlainMeans: v.plain,
						Sampler: prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMixed}}}
				start := time.Now()
				md, err := prob.Fit(sp, X, m, n, ys, nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				times = append(times, time.Since(start).Seconds())
				g := mat.NewDense(n+1, sp.Dim(), nil)
				J, err := p.Objective(md.Coef, exactInf, 0, g)
				if err != nil {
					t.Fatal(err)
				}
				gaps = append(gaps, J-exact.Result.Objective)
				rels = append(rels, floats.Norm(g.RawMatrix().Data, 2)/norm0)
				reps, ses = append(reps, md.Result.RelGrad), append(ses, md.Result.RelGradSE)
				final = md.Result.FinalSamples
				t.Logf("%s %s seed %d: %.1f s, J − J* = %.2e, exact %.4f, reported %.4f ± %.4f, %d samples",
					name, v.name, s, times[s], gaps[s], rels[s], reps[s], ses[s], final)
			}
			fmt.Fprintf(&b, "| %s (%d × %d, %d labels) | %s | %.1f / %.1f | %.2e / %.2e | %.4f | %.4f ± %.4f | %d |\n",
				name, m, n, k, v.name, median(times), slices.Max(times), median(gaps), slices.Max(gaps), median(rels), median(reps), median(ses), final)
		}
	}
	if err := os.WriteFile("SAMPLED_FIT.md", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

// median of xs (xs is sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// TestConditionedMarginalsTable measures what conditioning (Rao–Blackwellisation) buys sampled
// marginals: the spread of the estimate over seeds (tr Cov) and its time, plain against
// conditioned means of the same chains, and their product (variance × time, the cost of a given
// accuracy).
//
//	COMBPRED_SAMPLED_TABLE=1 go test ./benchmarks -run TestConditionedMarginalsTable -v
//
// writes SAMPLED_MARGINALS.md here.
func TestConditionedMarginalsTable(t *testing.T) {
	if os.Getenv("COMBPRED_SAMPLED_TABLE") == "" {
		t.Skip("set COMBPRED_SAMPLED_TABLE=1 to measure and write SAMPLED_MARGINALS.md")
	}
	const seeds, samples = 100, 100
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %d cores, %s/%s, %s.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "`prob.Marginals` with %d samples of the mixed chain (default burn-in and thinning) at a random score "+
		"vector u of the stated norm; tr Cov is the spread of the estimate over %d seeds, time the total of those %d "+
		"estimates (one at a time, parallel over the chain blocks). Variance × time is the cost of a given accuracy; "+
		"its ratio plain / conditioned is the gain.\n\n", samples, seeds, seeds)
	b.WriteString("| space | ‖u‖ | tr Cov plain | tr Cov conditioned | variance ratio | time plain (s) | time conditioned (s) | gain (variance × time) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, tc := range []struct {
		kind string
		n    int64
	}{{"permutations", 11}, {"permutations", 20}, {"dicycles", 20}} {
		sp, err := space.New(tc.kind, []int64{tc.n})
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		for _, norm := range []float64{3, 10, 30} {
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(norm)))
			u := make([]float64, d)
			for j := range u {
				u[j] = r.NormFloat64()
			}
			floats.Scale(norm/floats.Norm(u, 2), u)
			var spread, secs [2]float64
			for k, plain := range []bool{true, false} {
				inf := prob.InferenceOptions{Method: prob.InferSampled, Samples: samples, PlainMeans: plain,
					Sampler: prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMixed}}
				means := make([][]float64, seeds)
				start := time.Now()
				for s := range means {
					means[s] = make([]float64, d)
					if _, err := prob.Marginals(sp, u, inf, uint64(s), means[s]); err != nil {
						t.Fatal(err)
					}
				}
				secs[k] = time.Since(start).Seconds()
				for j := 0; j < d; j++ {
					var m, sq float64
					for _, x := range means {
						m += x[j]
						sq += x[j] * x[j]
					}
					spread[k] += (sq - m*m/seeds) / (seeds - 1)
				}
			}
			fmt.Fprintf(&b, "| %s(%d) | %g | %.4f | %.4f | %.2f | %.2f | %.2f | %.2f× |\n", tc.kind, tc.n, norm,
				spread[0], spread[1], spread[1]/spread[0], secs[0], secs[1], spread[0]*secs[0]/(spread[1]*secs[1]))
		}
	}
	if err := os.WriteFile("SAMPLED_MARGINALS.md", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}
