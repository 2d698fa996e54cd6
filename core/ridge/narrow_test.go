package ridge

import (
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// narrowSystem must apply the same Hessian as linearSystem, with and without the intercept, on
// spaces with a diagonal and a full covariance, and with sample weights.
func TestNarrowSystemMatchesLinearSystem(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		kind string
		args []int64
	}{{"multilabel", []int64{5}}, {"multiclass", []int64{7}}, {"permutations", []int64{4}}} {
		for _, intercept := range []bool{false, true} {
			sp, err := space.New(c.kind, c.args)
			if err != nil {
				t.Fatal(err)
			}
			const m, n = 37, 11 // neither a multiple of gemm's unrolling
			X, ys := synthetic(t, sp, m, n, 3)
			p, err := NewProblem(sp, ys, m, weights(r, m), 0.3)
			if err != nil {
				t.Fatal(err)
			}
			des := design{X: mat.NewDense(m, n, X), intercept: intercept}
			ns := newNarrowSystem(p, des)
			if ns == nil {
				t.Fatalf("%s: narrowSystem does not apply to d = %d", c.kind, sp.Dim())
			}
			ls := newLinearSystem(p, des)
			V := mat.NewDense(des.cols(), sp.Dim(), nil)
			for i := range V.RawMatrix().Data {
				V.RawMatrix().Data[i] = r.NormFloat64()
			}
			want, got := mat.NewDense(des.cols(), sp.Dim(), nil), mat.NewDense(des.cols(), sp.Dim(), nil)
			ls.apply(want, V)
			for range 2 { // the second call reuses the scratch
				ns.apply(got, V)
			}
			if !mat.EqualApprox(got, want, 1e-10*mat.Norm(want, 2)) {
				t.Errorf("%s, intercept %v: narrow H·V differs from the row-major one", c.kind, intercept)
			}
		}
	}
}
