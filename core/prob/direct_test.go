package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// TestSamplerAutoDrawsDirectlyWhereTheSpaceCan: on the spaces with an exact sampler of scores,
// SamplerAuto draws by it, at every scale: the samples follow π by a chi-square test where the
// space is enumerable (scores peaked enough that CFTP's proven cost is beyond AutoCFTPFactor, where
// SamplerAuto took a chain before), they are exact, the same whatever the number of threads, and
// on spaces far too large to enumerate their mean agrees with the exact marginals. Before, on
// Tournaments(40) (3^780 structures) the Metropolis chain never left the mode: every sample was
// the mode.
func TestSamplerAutoDrawsDirectlyWhereTheSpaceCan(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, sp := range []space.Space{mustSpace(t, "tournaments", 4), mustSpace(t, "subtrees", smallTree...),
		mustSpace(t, "ksubsets", 7, 3), mustSpace(t, "ordinal", 9)} {
		name := fmt.Sprintf("%s%v", sp.Kind(), sp.Params())
		u := randomScores(r, sp.Dim(), 8)
		if cf, err := NewCFTP(sp, u, 0); err == nil && cf.MeanStepsBound() <= float64(AutoCFTPFactor*DefaultThin(sp)) {
			t.Fatalf("%s: CFTP is affordable at these scores; the test needs peaked ones", name)
		}
		const n = 20000
		out := make([]int64, n*sp.Width())
		st, err := Sample(sp, u, n, 3, SampleOptions{Sampler: SamplerAuto}, out)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Exact || st.Steps != 0 {
			t.Errorf("%s: stats %+v, want exact samples without Markov steps", name, st)
		}
		e := newExactDist(t, sp, u)
		counts := make([]int, len(e.pi))
		for i := 0; i < n; i++ {
			counts[e.stateOf(t, out[i*sp.Width():(i+1)*sp.Width()])]++
		}
		if stat, df, p := spacetest.ChiSquare(counts, e.pi); p < 1e-4 {
			t.Errorf("%s: samples do not follow π: χ² = %.1f on %d df, p = %.2g", name, stat, df, p)
		}
		serial := make([]int64, len(out))
		if _, err := visitSamples(sp, u, n, 3, SampleOptions{Sampler: SamplerAuto}, false, func(_, i int, y []int64, _ []float64) {
			copy(serial[i*sp.Width():], y)
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(serial) != fmt.Sprint(out) {
			t.Errorf("%s: parallel and serial samples differ", name)
		}
	}
	for _, sp := range []space.Space{mustSpace(t, "tournaments", 40), mustSpace(t, "multilabel", 300), mustSpace(t, "ksubsets", 300, 40)} {
		name := fmt.Sprintf("%s%v", sp.Kind(), sp.Params())
		u := randomScores(r, sp.Dim(), 0.3*math.Sqrt(float64(sp.Dim())))
		const n = 4000
		out := make([]int64, n*sp.Width())
		if _, err := Sample(sp, u, n, 4, SampleOptions{Sampler: SamplerAuto}, out); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, sp.Dim())
		if _, err := ExactMarginals(sp, u, want); err != nil {
			t.Fatal(err)
		}
		psi := make([]float64, sp.Dim())
		got := make([]float64, sp.Dim())
		for i := 0; i < n; i++ {
			sp.Embed(out[i*sp.Width():(i+1)*sp.Width()], psi)
			for j, v := range psi {
				got[j] += v / n
			}
		}
		for j := range got { // ψ_j ∈ [−1, 1]: a standard error of at most 1/√n
			if math.Abs(got[j]-want[j]) > 5/math.Sqrt(n) {
				t.Fatalf("%s: the samples' mean of ψ_%d is %.4f, E[ψ_%d] = %.4f", name, j, got[j], j, want[j])
			}
		}
	}
}

// TestSamplerAutoKeepsCFTPBeyondTheExactScale: k-subsets' tables are log-domain sums, inexact
// beyond exactScoreLimit; there SamplerAuto does not draw by them. The scale-exact spaces' samplers
// still do.
func TestSamplerAutoKeepsCFTPBeyondTheExactScale(t *testing.T) {
	huge := []float64{1e11, -1e11, 3e11, 0}
	if got := autoSampler(mustSpace(t, "ksubsets", 4, 2), huge, nil); got == samplerDirect {
		t.Errorf("k-subsets at ‖u‖₁ = 5e11: auto resolved to %v", got)
	}
	if got := autoSampler(mustSpace(t, "multilabel", 4), huge, nil); got != samplerDirect {
		t.Errorf("multilabel at ‖u‖₁ = 5e11: auto resolved to %v, want direct", got)
	}
	if _, err := ParseSamplerKind("direct"); err == nil {
		t.Error("ParseSamplerKind accepted the internal resolution direct")
	}
}

// TestSamplerDirectDoesNotDependOnThreads: where the k-subsets sampler's table fits the budget
// once but not once per thread, a call's samples are the same exact ones with one thread or two
// (the review found the second run falling back to a Metropolis chain, every sample the mode); an
// unparallel call, one table per row at once, is refused with a memory error naming the sampler.
// A resolution given back to the sampler (samplerDirect, on a space or scores without the
// sampler) resolves as SamplerAuto does, where it panicked.
func TestSamplerDirectDoesNotDependOnThreads(t *testing.T) {
	sp := mustSpace(t, "ksubsets", 2000, 1000)
	u := randomScores(rand.New(rand.NewPCG(8, 9)), sp.Dim(), 5)
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	defer parallel.SetThreads(parallel.Threads())
	if err := budget.Set(closedFormBytes(sp) * 3 / 2); err != nil {
		t.Fatal(err)
	}
	var runs [2][]int64
	for th := 1; th <= 2; th++ {
		parallel.SetThreads(th)
		runs[th-1] = make([]int64, 8*sp.Width())
		st, err := Sample(sp, u, 8, 5, SampleOptions{Sampler: SamplerAuto}, runs[th-1])
		if err != nil || !st.Exact {
			t.Fatalf("%d threads: %+v, %v", th, st, err)
		}
	}
	if fmt.Sprint(runs[0]) != fmt.Sprint(runs[1]) {
		t.Error("the samples differ with the number of threads")
	}
	_, err := visitSamples(sp, u, 8, 5, SampleOptions{Sampler: SamplerAuto}, false, func(int, int, []int64, []float64) {})
	if !budget.Is(err) || !strings.Contains(err.Error(), "exact sampling on the ksubsets space") {
		t.Errorf("two tables above the budget: %v", err)
	}
	// rows run at once, each with its tables: every row meets the refusal, which names none (review)
	md := &Model{Space: sp, Coef: mat.NewDense(1, sp.Dim(), u), NFeatures: 1}
	X := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	err = md.SampleRows(xmat.DenseRows(X, 8, 1), 2, 5, SampleOptions{Sampler: SamplerAuto}, false, make([]int64, 16*sp.Width()), nil)
	if !budget.Is(err) || !strings.HasPrefix(err.Error(), "exact sampling on the ksubsets space") {
		t.Errorf("rows above the budget: %v", err)
	}
	_ = budget.Set(0)
	perms := mustSpace(t, "permutations", 4)
	pu := randomScores(rand.New(rand.NewPCG(8, 9)), perms.Dim(), 0.5)
	a, b := make([]int64, 50*perms.Width()), make([]int64, 50*perms.Width())
	if _, err := Sample(perms, pu, 50, 2, SampleOptions{Sampler: samplerDirect}, a); err != nil {
		t.Fatal(err)
	}
	if _, err := Sample(perms, pu, 50, 2, SampleOptions{Sampler: SamplerAuto}, b); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("samplerDirect on permutations did not resolve as SamplerAuto")
	}
}
