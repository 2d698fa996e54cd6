package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// sparseTargetSystem must apply the same H, and give the same B = −∇J(0), as linearSystem: for
// dense and sparse X, with and without the intercept, with sample weights (one zero), on spaces
// with a diagonal, a full and a structured covariance, and under a data-driven reference measure
// (whose centred targets are not the uniform measure's).
func TestSparseTargetSystemMatchesLinearSystem(t *testing.T) {
	defer func(m int) { sparseTargetMode = m }(sparseTargetMode)
	sparseTargetMode = sparseTargetAlways
	spaces := []struct {
		kind string
		args []int64
	}{{"multilabel", []int64{70}}, {"multiclass", []int64{7}}, {"permutations", []int64{4}}, {"subtrees", []int64{-1, 0, 0, 1, 1, 2}}}
	for _, c := range spaces {
		for _, ref := range []string{"uniform", "empirical"} {
			for _, sparse := range []bool{false, true} {
				for _, intercept := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/sparse=%v/intercept=%v", c.kind, ref, sparse, intercept)
					t.Run(name, func(t *testing.T) {
						sp, err := space.New(c.kind, c.args)
						if err != nil {
							t.Fatal(err)
						}
						r := rand.New(rand.NewPCG(7, uint64(sp.Dim())))
						const m, n = 83, 11
						X, ys := synthetic(t, sp, m, n, 4)
						w := weights(r, m)
						w[5] = 0
						p, err := NewProblem(sp, ys, m, w, 0.3)
						if err != nil {
							t.Fatal(err)
						}
						if ref == "empirical" {
							if err := p.useReference(sp, Empirical, 0.5); err != nil {
								t.Fatal(err)
							}
						}
						des := design{X: mat.NewDense(m, n, X), intercept: intercept}
						if sparse {
							des = design{sp: sparsify(t, X, m, n, 2, false), intercept: intercept}
						}
						ts := newSparseTargetSystem(p, des, des.gram(p.Weight))
						if ts == nil {
							t.Fatal("not built although forced")
						}
						ls := newLinearSystem(p, des)
						if got := ts.rhs(); !mat.EqualApprox(got, ls.B, 1e-12*mat.Norm(ls.B, 2)) {
							t.Errorf("B differs from linearSystem's")
						}
						V := mat.NewDense(des.cols(), sp.Dim(), nil)
						for i := range V.RawMatrix().Data {
							V.RawMatrix().Data[i] = r.NormFloat64()
						}
						want := mat.NewDense(des.cols(), sp.Dim(), nil)
						ls.apply(want, V)
						got := mat.NewDense(des.cols(), sp.Dim(), nil)
						for range 2 { // the second call reuses the scratch
							ts.apply(got, V)
						}
						if !mat.EqualApprox(got, want, 1e-11*mat.Norm(want, 2)) {
							var diff mat.Dense
							diff.Sub(got, want)
							t.Errorf("H·V differs from linearSystem's by %.3g (norm %.3g)", mat.Norm(&diff, 2), mat.Norm(want, 2))
						}
					})
				}
			}
		}
	}
}

// A fit through the sparse-target form reaches the same coefficients as one through the products
// with X, and the automatic choice takes it for rare labels among many and declines dense ones.
func TestSparseTargetFitsEqualAndChoice(t *testing.T) {
	defer func(m int) { sparseTargetMode = m }(sparseTargetMode)
	const m, n, d = 400, 12, 300
	sp, err := space.NewMultilabel(d)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	X := randDense(r, m, n)
	for _, density := range []float64{0.01, 0.6} {
		ys, p, des := rareLabels(t, sp, r, X, density)
		sparseTargetMode = sparseTargetAuto
		chosen := newSparseTargetSystem(p, des, des.gram(p.Weight)) != nil
		if chosen != (density < 0.5) {
			t.Errorf("label density %v: sparse-target form chosen = %v", density, chosen)
		}
		var coef [2]*mat.Dense
		for j, mode := range []int{sparseTargetAlways, sparseTargetNever} {
			sparseTargetMode = mode
			opt := baseOptions()
			opt.Solver, opt.Tol = CG, 1e-12
			model, err := Fit(sp, X.RawMatrix().Data, m, n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			coef[j] = model.Coef
		}
		if diff := relDiff(coef[0], coef[1]); diff > 1e-9 {
			t.Errorf("label density %v: fits differ by %.3g relative", density, diff)
		}
	}
}

// clearlyDenseTargets (a sample of the rows) skips the exact count only where the count would
// refuse the sparse form too, and does skip it for dense targets, on both sides of the 1/4.5
// share of entries at which the sparse form stops paying: with sparseTargetSample rows, and with
// every fourth row of a smaller problem.
func TestClearlyDenseTargetsAgreesWithCount(t *testing.T) {
	const n, d = 12, 40
	sp, err := space.NewMultilabel(d)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, m := range []int{5 * sparseTargetSample, 4 * sparseTargetMinSample, 1203} {
		X := randDense(r, m, n)
		for _, density := range []float64{0.01, 0.15, 0.2, 0.25, 0.3, 0.5, 0.9} {
			_, p, des := rareLabels(t, sp, r, X, density)
			perRow := make([]int, m)
			nnz := countOffMode(p.Delta, columnModes(p.Delta, nil), perRow, nil)
			pays := sparseTargetPays(des, perRow, nnz, m, des.cols(), d)
			skipped := clearlyDenseTargets(p.Delta, des, d)
			if skipped && pays {
				t.Errorf("m = %d, density %v: the sample skipped a sparse form that pays", m, density)
			}
			if share := min(density, 1-density); share >= 0.3 && !skipped {
				t.Errorf("m = %d, density %v: %v of the entries off the mode, and the sample did not skip the count", m, density, share)
			}
		}
	}
}

// columnModes finds a strict majority wherever there is one.
func TestColumnModes(t *testing.T) {
	a := mat.NewDense(5, 3, []float64{
		1, 2, 3,
		1, 2, 4,
		0, 5, 3,
		1, 2, 4,
		0, 5, 3,
	})
	got := columnModes(a, nil)
	for j, want := range []float64{1, 2, 3} {
		if got[j] != want {
			t.Errorf("column %d: mode %v, want %v", j, got[j], want)
		}
	}
}

// BenchmarkHessianForms times one application of H in the sparse-target form and in
// linearSystem's, on the many-label benchmark's shape (5,000 × 100, 1,000 labels) at label
// densities of 2 % and 30 %: the measurements behind sparseTargetGather.
func BenchmarkHessianForms(b *testing.B) {
	const m, n, d = 5000, 100, 1000
	sp, err := space.NewMultilabel(d)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	X := randDense(r, m, n)
	for _, density := range []float64{0.02, 0.3} {
		_, p, des := rareLabels(b, sp, r, X, density)
		defer func(m int) { sparseTargetMode = m }(sparseTargetMode)
		sparseTargetMode = sparseTargetAlways
		forms := map[string]hessian{
			"sparse-target": newSparseTargetSystem(p, des, des.gram(p.Weight)),
			"products":      newLinearSystem(p, des),
		}
		V := mat.NewDense(des.cols(), d, nil)
		for i := range V.RawMatrix().Data {
			V.RawMatrix().Data[i] = r.NormFloat64()
		}
		dst := mat.NewDense(des.cols(), d, nil)
		for name, h := range forms {
			b.Run(fmt.Sprintf("density=%v/%s", density, name), func(b *testing.B) {
				for b.Loop() {
					h.apply(dst, V)
				}
			})
		}
	}
}

// rareLabels draws multi-label targets for the rows of X, each label on with probability density,
// and returns them with their Problem (α = 1) and the design with the intercept.
func rareLabels(tb testing.TB, sp space.Space, r *rand.Rand, X *mat.Dense, density float64) ([]int64, *Problem, design) {
	tb.Helper()
	m, _ := X.Dims()
	ys := make([]int64, m*sp.Dim())
	for i := range ys {
		if r.Float64() < density {
			ys[i] = 1
		}
	}
	p, err := NewProblem(sp, ys, m, nil, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return ys, p, design{X: X, intercept: true}
}
