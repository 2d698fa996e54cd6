package ridge

import (
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// narrowSystem and groupedSystem (with its copy of X in group order and without, its products
// with the distinct targets as sums of rows and as panel products) must apply the same Hessian as
// linearSystem, with and without the intercept, on spaces with a diagonal and a
// full covariance, and with sample weights (some zero).
func TestHessianFormsMatchLinearSystem(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		kind string
		args []int64
		m    int
	}{{"multilabel", []int64{3}, 203}, {"multiclass", []int64{7}, 37}, {"permutations", []int64{4}, 301}} {
		// n and the intercept make rows of 10 to 12 values: padded to 12 by 2, 1 and 0 entries in
		// the grouped form's copy, and not a multiple of gemm's unrolling.
		for _, n := range []int{10, 11} {
			for _, intercept := range []bool{false, true} {
				sp, err := space.New(c.kind, c.args)
				if err != nil {
					t.Fatal(err)
				}
				X, ys := synthetic(t, sp, c.m, n, 3)
				w := weights(r, c.m)
				w[4] = 0
				p, err := NewProblem(sp, ys, c.m, w, 0.3)
				if err != nil {
					t.Fatal(err)
				}
				des := design{X: mat.NewDense(c.m, n, X), intercept: intercept}
				forms := map[string]hessian{}
				if ns := newNarrowSystem(p, des); ns != nil {
					forms["narrow"] = ns
				}
				if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil {
					forms["grouped"] = gs
				}
				if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil && gs.xs != nil {
					gs.xs, gs.ws = nil, nil // X read in place, as when the budget refuses the copy
					forms["grouped, X in place"] = gs
				}
				// Δ_G's products as sums of rows and as panel products, whichever the density chose
				if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil {
					gs.sparse, gs.vc = denseTargets(gs.deltas, columnModes(gs.deltas, nil), nil), make([]float64, des.cols())
					forms["grouped, Δ_G sparse"] = gs
				}
				if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil {
					gs.sparse, gs.vc = nil, nil
					forms["grouped, Δ_G dense"] = gs
				}
				if len(forms) != 5 {
					t.Fatalf("%s (m = %d): only %d of the five forms apply", c.kind, c.m, len(forms))
				}
				ls := newLinearSystem(p, des)
				V := mat.NewDense(des.cols(), sp.Dim(), nil)
				for i := range V.RawMatrix().Data {
					V.RawMatrix().Data[i] = r.NormFloat64()
				}
				want := mat.NewDense(des.cols(), sp.Dim(), nil)
				ls.apply(want, V)
				for name, h := range forms {
					got := mat.NewDense(des.cols(), sp.Dim(), nil)
					for range 2 { // the second call reuses the scratch
						h.apply(got, V)
					}
					if !mat.EqualApprox(got, want, 1e-10*mat.Norm(want, 2)) {
						t.Errorf("%s, n = %d, intercept %v: %s H·V differs from the row-major one", c.kind, n, intercept, name)
					}
					// the right-hand side, from the groups' sums of rows where X is copied
					if gs, ok := h.(*groupedSystem); ok && !mat.EqualApprox(gs.rhs(), ls.B, 1e-12*mat.Norm(ls.B, 2)) {
						t.Errorf("%s, n = %d, intercept %v: %s B differs from the row-major one", c.kind, n, intercept, name)
					}
				}
			}
		}
	}
}

// groupedSystem declines targets that are too varied for it to pay.
func TestGroupedSystemNeedsRepeatedTargets(t *testing.T) {
	sp, _ := space.NewMultilabel(12)
	const m, n = 40, 5
	X, ys := synthetic(t, sp, m, n, 9) // 40 random label sets of 4096: almost all distinct
	p, err := NewProblem(sp, ys, m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, n, X), intercept: true}
	if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil {
		t.Errorf("grouped form used for %d groups among %d examples", gs.q.RawMatrix().Rows, m)
	}
}
