package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// wideSparse draws a wide design (m < n) with about a quarter of X's entries stored, dense or as
// CSR, and structures of sp for its rows.
func wideSparse(t *testing.T, sp space.Space, m, n int, sparse, intercept bool, seed uint64) (design, []float64, []int64) {
	t.Helper()
	X, ys := synthetic(t, sp, m, n, seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range X {
		if r.Float64() < 0.75 {
			X[i] = 0
		}
	}
	if sparse {
		return design{sp: xmat.FromDense(m, n, X), intercept: intercept}, X, ys
	}
	return design{X: mat.NewDense(m, n, X), intercept: intercept}, X, ys
}

// dualPrecond, through the rows' m×m Gram matrix, applies the same inverse of the Kronecker part
// as spectralPrecond through the k×k G: on spaces of one eigenspace (multilabel, joined), three
// (permutations) and one with a null eigenspace (directed cycles' potentials), with weights of
// which one is zero, dense and sparse X, with and without the intercept.
func TestDualPrecondEqualsSpectral(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct {
		kind string
		n    int64
	}{{"multilabel", 7}, {"permutations", 4}, {"dicycles", 5}} {
		sp, err := space.New(c.kind, []int64{c.n})
		if err != nil {
			t.Fatal(err)
		}
		for _, sparse := range []bool{false, true} {
			for _, intercept := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/sparse=%v/intercept=%v", c.kind, sparse, intercept), func(t *testing.T) {
					const m, n = 14, 40
					des, _, ys := wideSparse(t, sp, m, n, sparse, intercept, 5)
					w := weights(r, m)
					w[3] = 0
					p, err := NewProblem(sp, ys, m, w, 0.3)
					if err != nil {
						t.Fatal(err)
					}
					op, ok := useDual(p, des)
					if !ok {
						t.Fatal("a wide design with a Spectral covariance should take dualPrecond")
					}
					dual, err := newDualPrecond(p, des, op)
					if err != nil {
						t.Fatal(err)
					}
					spec, err := newSpectralPrecondChol(p, des, op, spectrumValues(op), spectrumTop(op), des.gram(w))
					if err != nil {
						t.Fatal(err)
					}
					R := randDense(r, des.cols(), sp.Dim())
					got, want := mat.NewDense(des.cols(), sp.Dim(), nil), mat.NewDense(des.cols(), sp.Dim(), nil)
					dual.apply(got, R)
					spec.apply(want, R)
					if diff := maxAbsDiff(got, want); diff > 1e-9*maxAbs(want) {
						t.Errorf("dualPrecond differs from spectralPrecond by %.3g (largest entry %.3g)", diff, maxAbs(want))
					}
				})
			}
		}
	}
}

func spectrumValues(op space.Spectral) []float64 {
	var out []float64
	for _, e := range op.Spectrum() {
		out = append(out, max(0, e.Value))
	}
	return out
}

func spectrumTop(op space.Spectral) float64 {
	var top float64
	for _, v := range spectrumValues(op) {
		top = max(top, v)
	}
	return top
}

// On a wide sparse design the CG fit with dualPrecond reaches the exact solver's optimum in fewer
// iterations than with G's diagonal, which it replaces (medical: 20 against 166).
func TestDualPrecondIterations(t *testing.T) {
	sp, err := space.New("multilabel", []int64{12})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 60, 300
	des, _, ys := wideSparse(t, sp, m, n, true, true, 9)
	opt := baseOptions()
	opt.Alpha = 0.05
	exact, err := FitCSR(sp, des.sp, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	iterations := map[string]int{}
	for _, form := range []string{"dual", "diagonal"} {
		func() {
			if form == "diagonal" {
				defer func(v int) { dualMaxRows = v }(dualMaxRows)
				dualMaxRows = 0
			}
			o := opt
			o.Solver, o.Tol, o.MaxIter = CG, 1e-10, 5000
			md, err := FitCSR(sp, des.sp, ys, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := maxAbsDiff(md.Coef, exact.Coef); form == "dual" && diff > 1e-7*maxAbs(exact.Coef) {
				t.Errorf("%s: CG differs from the exact solver by %.3g", form, diff)
			}
			iterations[form] = md.Result.Iterations
		}()
	}
	t.Logf("iterations: %v", iterations)
	if iterations["dual"] >= iterations["diagonal"] {
		t.Errorf("dualPrecond took %d iterations, G's diagonal %d", iterations["dual"], iterations["diagonal"])
	}
}
