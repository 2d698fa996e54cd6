package ridge

import (
	"errors"
	"fmt"
	"testing"

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
				_, errChol := newSpectralPrecondChol(p, des, op, spectrumValues(op), spectrumTop(op), des.gram(w))
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
				opt.Alpha = c.alpha / c.weight
				ref, err := Fit(sp, X, m, n, ys, nil, opt)
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
