package ridge

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
)

// Where the penalty is negligible against the data's curvature (or the reverse, past what an
// intercept update can represent), the exact Kronecker preconditioners refuse with
// errIllConditioned, and the CG fit, on the diagonal preconditioner and in units of ‖B‖,
// converges to a finite model that does not depend on the scale of the weights: weights c·s with
// penalty α give the model of weights s with α/c.
func TestPrecondIllConditionedFallsBack(t *testing.T) {
	sp, err := space.New("multilabel", []int64{6})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 20, 200
	for _, c := range []struct {
		name          string
		weight, alpha float64
		refuse        bool
	}{
		{"plain", 1, 0.5, false},
		{"weights-huge", 1e300, 0.5, true},
		{"alpha-tiny", 1, 0.5e-300, true},
		{"weights-tiny", 1e-300, 0.5, false},
		{"alpha-huge", 1, 0.5e300, true},
	} {
		for _, sparse := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/sparse=%v", c.name, sparse), func(t *testing.T) {
				des, X, ys := wideSparse(t, sp, m, n, sparse, true, 5)
				w := make([]float64, m)
				for i := range w {
					w[i] = c.weight
				}
				p, err := NewProblem(sp, ys, m, w, c.alpha)
				if err != nil {
					t.Fatal(err)
				}
				op, _ := useDual(p, des)
				_, errDual := newDualPrecond(p, des, op)
				_, errChol := newSpectralPrecondChol(p, des, op, spectrumValues(op), spectrumTop(op), zeroSpaces(p, op, spectrumValues(op), spectrumTop(op)), des.gram(w))
				if c.refuse && (!errors.Is(errDual, errIllConditioned) || !errors.Is(errChol, errIllConditioned)) {
					t.Errorf("want errIllConditioned from both, got %v and %v", errDual, errChol)
				}
				if c.name == "plain" && (errDual != nil || errChol != nil) {
					t.Errorf("a plain problem was refused: %v, %v", errDual, errChol)
				}
				opt := baseOptions()
				opt.Alpha, opt.Solver, opt.Tol = c.alpha, CG, 1e-9
				var md *Model
				if sparse {
					md, err = FitCSR(sp, des.sp, ys, w, opt)
				} else {
					md, err = Fit(sp, X, m, n, ys, w, opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !md.Result.Converged {
					t.Fatalf("CG stopped after %d iterations at a relative gradient of %.3g", md.Result.Iterations, md.Result.RelGrad)
				}
				// The reference is fitted on the same form of X: with α ≈ 0 and n > m the minimum
				// is not unique, and CG on a dense X (centred, centring.go) finds another point of it.
				opt.Alpha = c.alpha / c.weight
				var ref *Model
				if sparse {
					ref, err = FitCSR(sp, des.sp, ys, nil, opt)
				} else {
					ref, err = Fit(sp, X, m, n, ys, nil, opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				if scale := maxAbs(ref.Coef); scale > 0 && maxAbsDiff(md.Coef, ref.Coef) > 1e-6*scale {
					t.Errorf("weights %g with α = %g differ from unit weights with α = %g by %.3g (scale %.3g)",
						c.weight, c.alpha, opt.Alpha, maxAbsDiff(md.Coef, ref.Coef), scale)
				}
			})
		}
	}
}

// A fit whose Gram matrix and preconditioner blocks would exceed the memory budget goes without
// them (products with X, the diagonal or the rows' preconditioner) instead of allocating them:
// a dense X of 10 × 60,000 features asked for six matrices of 29 GB, past any budget. The fit
// allocates a fraction of what G would take, and reaches the optimum of the unrestricted fit.
// Under the race detector only the optimum is checked (see raceEnabled).
func TestLinearCGStaysWithinBudget(t *testing.T) {
	sp, err := space.New("multilabel", []int64{5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ m, n int }{{30, 3000}, {1200, 1000}} {
		t.Run(fmt.Sprintf("%dx%d", c.m, c.n), func(t *testing.T) {
			X, ys := synthetic(t, sp, c.m, c.n, 3)
			opt := baseOptions()
			opt.Solver, opt.Tol = CG, 1e-9
			ref, err := Fit(sp, X, c.m, c.n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			k := int64(c.n + 1)
			limit := 8 * k * k // one k×k matrix: G alone would not fit
			defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
			if err := budget.Set(limit); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			md, err := Fit(sp, X, c.m, c.n, ys, nil, opt)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(after.TotalAlloc - before.TotalAlloc); got > limit && !raceEnabled {
				t.Errorf("the fit allocated %d bytes, more than the budget of %d", got, limit)
			}
			if diff := maxAbsDiff(md.Coef, ref.Coef); diff > 1e-6*maxAbs(ref.Coef) {
				t.Errorf("the fit within the budget differs from the unrestricted one by %.3g", diff)
			}
		})
	}
}
