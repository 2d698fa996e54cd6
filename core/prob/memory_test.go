package prob

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// Sample counts set by a caller (n_samples, n_chains, or read from model bytes) are checked
// against the memory budget before the sampler's per-block buffers exist: n_samples = 10⁹ on
// DirectedCycles(16) used to ask for 15 GB and abort the process.
func TestSampleCountsAreBudgeted(t *testing.T) {
	sp := mustSpace(t, "dicycles", 16)
	d := sp.Dim()
	u := make([]float64, d)
	X := []float64{1, 0, 0, 1, 0.5, 0.5}
	ys := make([]int64, 3*sp.Width())
	for i := 0; i < 3; i++ {
		if err := sp.Validate(ys[i*sp.Width() : (i+1)*sp.Width()]); err != nil {
			sp.Sample(newRand(1, uint64(i)), ys[i*sp.Width():(i+1)*sp.Width()])
		}
	}
	sampled := InferenceOptions{Method: InferSampled, Samples: 1_000_000_000}
	model := &Model{Space: sp, Coef: mat.NewDense(3, d, nil), Intercept: true, NFeatures: 2, Inference: InferenceOptions{Samples: 1<<31 - 1}}
	for _, c := range []struct {
		name  string
		param string
		run   func() error
	}{
		{"Marginals", "n_samples = 1000000000", func() error {
			_, err := Marginals(sp, u, sampled, 1, make([]float64, d))
			return err
		}},
		{"n_chains", "n_chains = 1000000000000", func() error {
			_, err := Marginals(sp, u, InferenceOptions{Method: InferSampled, Samples: 10,
				Sampler: SampleOptions{Sampler: SamplerChain, Chains: 1_000_000_000_000}}, 1, make([]float64, d))
			return err
		}},
		{"Fit", "n_samples = 1000000000", func() error {
			_, err := Fit(sp, X, 3, 2, ys, nil, Options{Alpha: 1, Intercept: true, Tol: 1e-3, MaxIter: 1, Inference: sampled})
			return err
		}},
		{"a model's stored samples", "n_samples = 2147483647", func() error {
			return model.Marginals(X[:2], 1, 2, 1, make([]float64, d))
		}},
	} {
		err := c.run()
		if !budget.Is(err) || !strings.Contains(err.Error(), c.param) {
			t.Errorf("%s: %v, want a budget error naming %q", c.name, err, c.param)
		}
	}
}

// A fit whose m×d and (n+1)×d matrices exceed the budget is refused before NewProblem embeds ψ.
func TestFitWorkingSetIsBudgeted(t *testing.T) {
	defer func() { _ = budget.Set(0) }()
	sp, err := space.New("permutations", []int64{300}) // d = 44,850
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(10 << 20); err != nil {
		t.Fatal(err)
	}
	ys := make([]int64, 2*300)
	for i := range ys {
		ys[i] = int64(i%300 + 1)
	}
	_, err = Fit(sp, []float64{1, 2}, 2, 1, ys, nil, Options{Alpha: 1, Intercept: true, Tol: 1e-3, MaxIter: 1})
	if !budget.Is(err) || !strings.Contains(err.Error(), "dimension d = 44850") {
		t.Fatalf("Fit = %v, want a budget error naming d", err)
	}
}

// The k-subsets closed form holds (n+1)×(k+1) tables: KSubsets(200000, 100000) asked for 320 GB.
func TestClosedFormTablesAreBudgeted(t *testing.T) {
	sp := mustSpace(t, "ksubsets", 200000, 100000)
	_, err := ExactMarginals(sp, make([]float64, sp.Dim()), make([]float64, sp.Dim()))
	if !budget.Is(err) || !strings.Contains(err.Error(), "ksubsets space [200000 100000]") {
		t.Fatalf("ExactMarginals = %v, want a budget error naming the space", err)
	}
	if _, err := ExactMarginals(mustSpace(t, "ksubsets", 100, 50), make([]float64, 100), make([]float64, 100)); err != nil {
		t.Fatal(err)
	}
}

// A sampled estimate the budget refuses allocates nothing first: its per-block sums were made
// before the conditioning scratch was counted, so a refusal left gigabytes to the garbage
// collector (n_samples = 2³¹ − 1: 5 GB resident and 10 s per refused call).
func TestRefusedSamplingAllocatesNothing(t *testing.T) {
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	sp := mustSpace(t, "permutations", 5) // d = 10: 104 bytes of sums per block, 376 of conditioning
	const n = 1 << 26                     // a million blocks: 110 MB of sums, 500 MB with conditioning
	if err := budget.Set(250 << 20); err != nil {
		t.Fatal(err)
	}
	u := make([]float64, sp.Dim())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Marginals(sp, u, InferenceOptions{Method: InferSampled, Samples: n}, 1, make([]float64, sp.Dim()))
	runtime.ReadMemStats(&after)
	if !budget.Is(err) {
		t.Fatalf("Marginals = %v, want a budget error", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("the refused estimate allocated %d bytes first", got)
	}
}

// TestSampleMemoryCountCoversTheBlocks compares what a sampled estimate allocates with what
// checkSampleMemory counts for it: the count was short by the blocks' conditioning slots and
// structs (27 % on Permutations(5), 53 % on Multilabel(1), whose blocks do not condition at all).
// The estimate runs on one goroutine, with the collector off so that TotalAlloc is what it held.
func TestSampleMemoryCountCoversTheBlocks(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 1 << 16 // 1,025 blocks of CFTP samples
	for _, c := range []struct {
		kind  string
		param int64
	}{{"multilabel", 1}, {"multilabel", 6}, {"permutations", 5}, {"dicycles", 5}} {
		sp := mustSpace(t, c.kind, c.param)
		opt := InferenceOptions{Method: InferSampled, Samples: n}
		counted := sampleBlocks(n, opt.Sampler) * (sampleBlockBytes(sp, opt) + 24)
		u := make([]float64, sp.Dim())
		mean := make([]float64, sp.Dim())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := marginalsFrom(sp, u, opt, 1, mean, false, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// the samplers' own state per goroutine and the sampled structures are not per block
		const fixed = 64 << 10
		if got := int64(after.TotalAlloc - before.TotalAlloc); got > counted+fixed {
			t.Errorf("%s(%d): allocated %d bytes, the check counts %d (+%d fixed)", c.kind, c.param, got, counted, fixed)
		}
	}
}
