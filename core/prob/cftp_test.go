package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestCFTPExact draws exact samples by CFTP on enumerable permutations, directed and undirected
// cycles and subtrees at two temperatures and compares the counts with π ∝ exp(⟨u, ψ⟩) by a
// chi-square test at level 1e-4 (fixed seeds). It also checks that every sample is a valid
// structure and, on the same draws, that the mean number of backward steps respects the bound
// E T ≤ exp(f_max − f_min) (with slack for sampling error).
func TestCFTPExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	spaces := []space.Space{
		mustSpace(t, "permutations", 4),
		mustSpace(t, "dicycles", 5),
		mustSpace(t, "ucycles", 5),
		mustSpace(t, "subtrees", smallTree...),
	}
	const n = 30000
	for _, sp := range spaces {
		for _, norm := range []float64{0.5, 2} {
			name := fmt.Sprintf("%s%v/|u|=%g", sp.Kind(), sp.Params(), norm)
			u := randomScores(r, sp.Dim(), norm)
			e := newExactDist(t, sp, u)
			out := make([]int64, n*sp.Width())
			st, err := Sample(sp, u, n, 42, SampleOptions{}, out)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !st.Exact || st.Samples != n {
				t.Fatalf("%s: stats %+v", name, st)
			}
			counts := make([]int, len(e.pi))
			for i := 0; i < n; i++ {
				y := out[i*sp.Width() : (i+1)*sp.Width()]
				if err := sp.Validate(y); err != nil {
					t.Fatalf("%s: sample %d invalid: %v", name, i, err)
				}
				counts[e.stateOf(t, y)]++
			}
			stat, df, p := spacetest.ChiSquare(counts, e.pi)
			t.Logf("%s: χ² = %.1f on %d df, p = %.3g; mean backward steps %.2f", name, stat, df, p, float64(st.Steps)/n)
			if p < 1e-4 {
				t.Errorf("%s: CFTP samples do not follow π: χ² = %.1f on %d df, p = %.2g", name, stat, df, p)
			}
			cf, _ := NewCFTP(sp, u, 0)
			if mean := float64(st.Steps) / n; mean > 1.1*cf.MeanStepsBound()+0.1 {
				t.Errorf("%s: mean backward time %.2f above the bound exp(f_max − f_min) = %.2f", name, mean, cf.MeanStepsBound())
			}
			// E T = |Y| e^F / Z exactly, for exact decoders: the mean must agree within sampling error.
			if wantT := math.Exp(sp.LogCount() + cf.fMax - e.logZ); math.Abs(float64(st.Steps)/n-wantT) > 6*math.Sqrt(wantT*(wantT-1)/n)+1e-6 {
				t.Errorf("%s: mean backward time %.3f, expected %.3f", name, float64(st.Steps)/n, wantT)
			}
		}
	}
}

// TestCFTPDeterministic: the same seed gives the same samples, whatever the number of threads.
func TestCFTPDeterministic(t *testing.T) {
	sp := mustSpace(t, "permutations", 6)
	u := randomScores(rand.New(rand.NewPCG(1, 1)), sp.Dim(), 2)
	a := make([]int64, 500*sp.Width())
	b := make([]int64, 500*sp.Width())
	if _, err := Sample(sp, u, 500, 9, SampleOptions{}, a); err != nil {
		t.Fatal(err)
	}
	if _, err := visitSamples(sp, u, 500, 9, SampleOptions{}, false, func(_, i int, y []int64, _ []float64) {
		copy(b[i*sp.Width():], y)
	}); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("parallel and serial sampling differ at %d", i)
		}
	}
}

// TestCFTPWorkBound: scores that make coalescence astronomically unlikely end with an error
// wrapping ErrWorkBound after the bound, quickly, instead of hanging.
func TestCFTPWorkBound(t *testing.T) {
	sp := mustSpace(t, "permutations", 10)
	u := randomScores(rand.New(rand.NewPCG(2, 2)), sp.Dim(), 60)
	cf, err := NewCFTP(sp, u, 200000)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	y := make([]int64, sp.Width())
	_, err = cf.SampleSeed(1, y)
	if !errors.Is(err, ErrWorkBound) {
		t.Fatalf("want ErrWorkBound, got %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the bound took %v", el)
	}
	t.Log(err)
	// Through Sample, with the default bound, the error also comes back.
	out := make([]int64, sp.Width())
	if _, err := Sample(sp, u, 1, 3, SampleOptions{MaxSteps: 100000}, out); !errors.Is(err, ErrWorkBound) {
		t.Fatalf("Sample: want ErrWorkBound, got %v", err)
	}
}

// TestCFTPCancellable: a sample that would run to a far work bound stops at a set stop flag within
// cftpStopEvery steps, in Sample and in the adaptive FPRAS alike (Ctrl-C was ignored for the whole
// of a draw, tens of seconds on large spaces).
func TestCFTPCancellable(t *testing.T) {
	sp := mustSpace(t, "permutations", 10)
	u := randomScores(rand.New(rand.NewPCG(2, 2)), sp.Dim(), 60)
	stop := &cancel.Flag{}
	stop.Stop()
	out := make([]int64, sp.Width())
	start := time.Now()
	cf := mustCFTP(t, sp, u, 1<<40)
	cf.stop = stop // set after the preparation, which a set flag would stop
	steps, _, err := cf.sampleAt(1, 1, out, true, 1<<40)
	if !errors.Is(err, ErrCancelled) || steps != cftpStopEvery {
		t.Errorf("sampleAt: %d steps, error %v; want ErrCancelled after %d", steps, err, cftpStopEvery)
	}
	later := &cancel.Flag{} // set while the first sample runs, not before it starts
	time.AfterFunc(50*time.Millisecond, later.Stop)
	_, err = Sample(sp, u, 1, 3, SampleOptions{Sampler: SamplerCFTP, MaxSteps: 1 << 40, Stop: later}, out)
	if !errors.Is(err, ErrCancelled) {
		t.Errorf("Sample: want ErrCancelled, got %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("stopping took %v", el)
	}
}

func mustCFTP(t *testing.T, sp space.Space, u []float64, maxSteps int) *CFTP {
	t.Helper()
	cf, err := NewCFTP(sp, u, maxSteps)
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestCFTPApproximateDecoders: beyond exact decoding (dicycles and ucycles on 16 vertices,
// permutations of 18 labels, cliques on 22 vertices) CFTP uses a proven upper bound on max f
// instead of the decoded maximum; the bound must dominate every score seen and samples must be
// valid structures.
func TestCFTPApproximateDecoders(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, sp := range []space.Space{mustSpace(t, "dicycles", 16), mustSpace(t, "ucycles", 16),
		mustSpace(t, "permutations", 18), mustSpace(t, "cliques", 22)} {
		if sp.Guarantee() == 0 {
			t.Fatalf("%s%v decodes exactly; the test needs an approximate decoder", sp.Kind(), sp.Params())
		}
		u := randomScores(r, sp.Dim(), 0.5)
		cf, err := NewCFTP(sp, u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cf.exactMax {
			t.Fatalf("%s: claims an exact maximum", sp.Kind())
		}
		y := make([]int64, sp.Width())
		sc := newScorer(sp, u)
		for s := 0; s < 50; s++ {
			if _, err := cf.SampleSeed(uint64(s), y); err != nil {
				t.Fatalf("%s: %v", sp.Kind(), err)
			}
			if err := sp.Validate(y); err != nil {
				t.Fatalf("%s: invalid sample: %v", sp.Kind(), err)
			}
			if f := sc.score(y); f > cf.fMax {
				t.Fatalf("%s: score %g above the bound %g", sp.Kind(), f, cf.fMax)
			}
		}
		sp.Decode(u, y)
		if f := sc.score(y); f > cf.fMax {
			t.Fatalf("%s: decoded score %g above the bound %g", sp.Kind(), f, cf.fMax)
		}
	}
}

// TestCFTPAtLargeScores: two tied classes of Multiclass(4) at ‖u‖₁ = 4·10¹², the others e^{−2·10¹²}
// as likely: CFTP coalesces in |Y|·e^F/Z ≈ 2 steps per sample and splits its samples evenly. The
// rounding margin on F was 10⁻⁹·‖u‖₁ = 4000, which made every sample pass the work bound.
func TestCFTPAtLargeScores(t *testing.T) {
	sp := mustSpace(t, "multiclass", 4)
	u := []float64{1e12, -1e12, 1e12, -1e12}
	const n = 4000
	out := make([]int64, n)
	st, err := Sample(sp, u, n, 7, SampleOptions{Sampler: SamplerCFTP}, out)
	if err != nil {
		t.Fatal(err)
	}
	if mean := float64(st.Steps) / n; mean > 2.2 {
		t.Errorf("mean backward steps %.2f, want about 2", mean)
	}
	counts := make([]int, 4)
	for _, y := range out {
		counts[y]++
	}
	if stat, df, p := spacetest.ChiSquare(counts, []float64{0.5, 0, 0.5, 0}); p < 1e-4 || counts[1]+counts[3] > 0 {
		t.Errorf("counts %v: χ² = %.1f on %d df, p = %.2g", counts, stat, df, p)
	}
}
