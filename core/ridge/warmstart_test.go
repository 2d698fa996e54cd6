package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// TestWarmStartOfAnotherScale warm-starts CG from a model fitted at other sample weights: scaling
// every weight by s fits as alpha/s does, so the optimum moves by orders of magnitude while the
// warm start does not. The warm fit must reach the cold fit's optimum. Before, a start 1e200 too
// large for the fit's units overflowed its products, and the fit was refused as an overflow.
func TestWarmStartOfAnotherScale(t *testing.T) {
	sp, err := space.New("multilabel", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 60, 5
	X, ys := synthetic(t, sp, m, n, 3)
	flipped := make([]int64, len(ys)) // the complementary labels: their model points the other way
	for i, v := range ys {
		flipped[i] = 1 - v
	}
	r := rand.New(rand.NewPCG(5, 6))
	base := weights(r, m)
	for _, kern := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3}} {
		opt := baseOptions()
		opt.Solver, opt.Tol, opt.Kernel = CG, 1e-10, kern
		first, err := Fit(sp, X, m, n, ys, base, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, targets := range []struct {
			name string
			ys   []int64
		}{{"same labels", ys}, {"complementary labels", flipped}} {
			for _, s := range []float64{1e-300, 1e-200, 1e-150, 1e-30, 1e30, 1e200} {
				name := fmt.Sprintf("%v/%s/weights×%g", kern.Kind, targets.name, s)
				w := make([]float64, m)
				for i, v := range base {
					w[i] = v * s
				}
				cold, err := Fit(sp, X, m, n, targets.ys, w, opt)
				if err != nil {
					t.Fatalf("%s, cold: %v", name, err)
				}
				warmOpt := opt
				warmOpt.Init = first
				warm, err := Fit(sp, X, m, n, targets.ys, w, warmOpt)
				if err != nil {
					t.Errorf("%s, warm: %v", name, err)
					continue
				}
				if !warm.Result.Converged {
					t.Errorf("%s: the warm fit stopped at a relative gradient of %v", name, warm.Result.RelGrad)
				}
				if dist := relDist(scoresOf(t, warm, X, m, n), scoresOf(t, cold, X, m, n)); dist > 1e-6 {
					t.Errorf("%s: warm scores %.3g from the cold fit's", name, dist)
				}
				// (A kernel fit from zero may take the dual over the examples, in a few iterations
				// where a warm start stays in kernel CG until its share: solveKernelCGScaled.)
				if it, coldIt := warm.Result.Iterations, cold.Result.Iterations; kern.Kind == kernel.Linear && it > coldIt+2 {
					t.Errorf("%s: the warm fit took %d iterations, the cold one %d", name, it, coldIt)
				}
			}
		}
		// From its own optimum a warm fit has nothing left to do.
		warmOpt := opt
		warmOpt.Init = first
		again, err := Fit(sp, X, m, n, ys, base, warmOpt)
		if err != nil {
			t.Fatal(err)
		}
		if again.Result.Iterations > 2 {
			t.Errorf("%v: a warm start at the optimum took %d iterations", kern.Kind, again.Result.Iterations)
		}
	}
}

// TestWarmStartBeyondTheSolversRange starts CG from the optimum's direction at a scale that does
// not fit in float64 in the solver's units (W/‖B‖ overflows): the direction is kept and scaled to
// the minimum along it, which is the optimum itself, so that CG has (almost) nothing left to do.
func TestWarmStartBeyondTheSolversRange(t *testing.T) {
	H := mat.NewSymDense(4, []float64{1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4})
	B := mat.NewDense(4, 1, []float64{1e-300, 2e-300, 3e-300, 4e-300}) // the optimum is 1e-300·(1, 1, 1, 1)
	opt := baseOptions()
	opt.Tol = 1e-12
	cold := mat.NewDense(4, 1, nil)
	coldRes, err := conjugateGradients(denseHessian{H}, B, identityPrecond{}, cold, 0, &opt)
	if err != nil {
		t.Fatal(err)
	}
	W := mat.NewDense(4, 1, []float64{1e10, 1e10, 1e10, 1e10})
	res, err := conjugateGradients(denseHessian{H}, B, identityPrecond{}, W, 0, &opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.Iterations > 1 || res.Iterations >= coldRes.Iterations {
		t.Errorf("from the optimum's direction: %d iterations (converged %v), from 0: %d", res.Iterations, res.Converged, coldRes.Iterations)
	}
	for i := range 4 {
		if got := W.At(i, 0); math.Abs(got-1e-300) > 1e-12*1e-300 {
			t.Errorf("W[%d] = %v, want 1e-300", i, got)
		}
	}
}

// TestWeightHintsSayWhatFits checks the advice the weight-scale errors give against fits: growing
// every weight by c must fit as alpha / c does, shrinking them by c as alpha·c does. Every hint
// said the reverse (probe EQ), which sent a user's alpha the wrong way by c².
func TestWeightHintsSayWhatFits(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const m, n, c = 30, 4, 1e3
	X, ys := synthetic(t, sp, m, n, 2)
	base := weights(rand.New(rand.NewPCG(7, 8)), m)
	opt := baseOptions()
	opt.Solver, opt.Alpha = Exact, 0.5
	for _, h := range []struct {
		hint         string
		weightFactor float64
		alphaFactor  float64
	}{{growWeights, c, 1 / c}, {shrinkWeights, 1 / c, c}} {
		// The hint's own words name the alpha that fits as the rescaled weights do.
		if want := map[bool]string{true: "alpha / c", false: "alpha·c"}[h.alphaFactor < 1]; !strings.Contains(h.hint, want) {
			t.Fatalf("hint %q does not say %q", h.hint, want)
		}
		w := make([]float64, m)
		for i, v := range base {
			w[i] = v * h.weightFactor
		}
		rescaled, err := Fit(sp, X, m, n, ys, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		moved := opt
		moved.Alpha *= h.alphaFactor
		same, err := Fit(sp, X, m, n, ys, base, moved)
		if err != nil {
			t.Fatal(err)
		}
		if e := relDiff(rescaled.Coef, same.Coef); e > 1e-9 {
			t.Errorf("%q: the rescaled weights and the moved alpha differ by %.2e", h.hint, e)
		}
	}
}
