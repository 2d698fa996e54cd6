package ridge

import (
	"testing"

	"gonum.org/v1/gonum/floats"
)

// TestCGInterceptStaysOffItsNullSpace (dense, sparse X, and the distributed fit's sums): where ψ has directions of constant value (span(1) for
// multiclass and k-subsets, the vertex potentials of directed cycles), J does not depend on the
// intercept along them, and the preconditioners' 1/(2α) there let CG's rounding move it: at
// α = 1e-9 (features in units of 1e-4, the α = 0.1 problem rescaled) the decision function of
// k-subsets was 4 % from the exact solver's and CG stalled at tol 1e-11 with a 100× worse gradient
// than it had passed; multiclass on sparse X shifted every class score by 4. CG now keeps the
// intercept's component there at zero, the minimum-norm optimum the exact solver returns, and
// converges at tight tolerances.
func TestCGInterceptStaysOffItsNullSpace(t *testing.T) {
	for _, sp := range nullDirectionSpaces(t) {
		const m, n, c = 60, 4, 1e-4
		X, ys := synthetic(t, sp, m, n, 3)
		// the reference: the exact solver on the well-conditioned problem before the rescaling
		opt := baseOptions()
		opt.Alpha = 0.1
		opt.Solver = Exact
		exact, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := decisionOf(t, exact, X, m, n)
		floats.Scale(c, X)
		opt.Alpha = 0.1 * c * c
		p, err := NewProblem(sp, ys, m, nil, opt.Alpha)
		if err != nil {
			t.Fatal(err)
		}
		drop := interceptNullSpace(p)
		if drop == nil {
			t.Fatalf("%s: no null directions of the intercept found", sp.Kind())
		}
		for _, form := range []string{"dense", "sparse", "sums"} {
			for _, tol := range []float64{1e-8, 1e-11, 1e-13} {
				o := opt
				o.Solver, o.Tol, o.MaxIter = CG, tol, 10000
				md := fitCGForm(t, form, sp, X, m, n, ys, o)
				if rel := maxRelDiff(decisionOf(t, md, X, m, n), want); !md.Result.Converged || rel > 1e-6 {
					t.Errorf("%s form=%s tol=%g: converged %v after %d iterations (relative gradient %.1e), scores %.1e from the exact solver's on the unscaled problem",
						sp.Kind(), form, tol, md.Result.Converged, md.Result.Iterations, md.Result.RelGrad, rel)
				}
				// the intercept row holds nothing the null directions would remove
				b := md.Coef.RawRowView(n)
				kept := append([]float64(nil), b...)
				drop(kept)
				if along := floats.Distance(b, kept, 2); along > 1e-6*floats.Norm(b, 2) {
					t.Errorf("%s form=%s tol=%g: the intercept has %.1e of its norm %.1e along its null space", sp.Kind(), form, tol, along, floats.Norm(b, 2))
				}
			}
		}
	}
}
