package ridge

import (
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// generalOperator hides every method of an Operator but the interface's own, so that curvature
// takes its general path.
type generalOperator struct{ space.Operator }

// The one-pass curvature of diag(a) + c·11ᵀ spaces must equal, bit for bit, the general row loop
// through MulVec, with c = 0 (multi-label) and c ≠ 0 (multi-class, k-subsets) and weighted rows.
func TestDiagonalCurvatureMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const m = 300
	for _, sp := range []space.Space{mustSpace(t, "multilabel", 7), mustSpace(t, "multiclass", 5), mustSpace(t, "ksubsets", 6, 2)} {
		ys := make([]int64, m*sp.Width())
		y := make([]int64, sp.Width())
		for i := 0; i < m; i++ {
			sp.Sample(r, y)
			copy(ys[i*sp.Width():], y)
		}
		weights := make([]float64, m)
		for i := range weights {
			weights[i] = r.Float64() * 3
		}
		p, err := NewProblem(sp, ys, m, weights, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Cov.(space.DiagonalPlusConstant); !ok {
			t.Fatalf("%T: covariance is not diag(a) + c·11ᵀ", sp)
		}
		V := randDense(r, m, sp.Dim())
		fast, general := mat.NewDense(m, sp.Dim(), nil), mat.NewDense(m, sp.Dim(), nil)
		p.curvature(fast, V)
		p.Cov = generalOperator{p.Cov}
		p.curvature(general, V)
		if !mat.Equal(fast, general) {
			t.Errorf("%T: one-pass curvature differs from the general loop", sp)
		}
	}
}

func mustSpace(t *testing.T, kind string, params ...int64) space.Space {
	t.Helper()
	sp, err := space.New(kind, params)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
