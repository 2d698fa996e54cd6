package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
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
