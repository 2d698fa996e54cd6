package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
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
	r := rand.New(rand.NewPCG(5, 6))
	base := weights(r, m)
	for _, kern := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3}} {
		opt := baseOptions()
		opt.Solver, opt.Tol, opt.Kernel = CG, 1e-10, kern
		first, err := Fit(sp, X, m, n, ys, base, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []float64{1e-200, 1e-30, 1e30, 1e200} {
			name := fmt.Sprintf("%v/weights×%g", kern.Kind, s)
			w := make([]float64, m)
			for i, v := range base {
				w[i] = v * s
			}
			cold, err := Fit(sp, X, m, n, ys, w, opt)
			if err != nil {
				t.Fatalf("%s, cold: %v", name, err)
			}
			warmOpt := opt
			warmOpt.Init = first
			warm, err := Fit(sp, X, m, n, ys, w, warmOpt)
			if err != nil {
				t.Fatalf("%s, warm: %v", name, err)
			}
			if !warm.Result.Converged {
				t.Errorf("%s: the warm fit stopped at a relative gradient of %v", name, warm.Result.RelGrad)
			}
			if dist := relDist(scoresOf(t, warm, X, m, n), scoresOf(t, cold, X, m, n)); dist > 1e-6 {
				t.Errorf("%s: warm scores %.3g from the cold fit's", name, dist)
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
