package ridge

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// design.gram is X̃ᵀ diag(s) X̃ (X̃ = [X 1] with an intercept) for row counts below, at and across
// its block of rows, with and without the intercept.
func TestDesignGram(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 7
	for _, m := range []int{1, 5, 4 * 8192, 4*8192 + 5, 2*4*8192 + 3} {
		X := randDense(r, m, n)
		s := make([]float64, m)
		for i := range s {
			s[i] = r.Float64() * 2
		}
		for _, intercept := range []bool{false, true} {
			des := design{X: X, intercept: intercept}
			k := des.cols()
			xt := mat.NewDense(m, k, nil)
			xt.Slice(0, m, 0, n).(*mat.Dense).Copy(X)
			sx := mat.NewDense(m, k, nil)
			for i := 0; i < m; i++ {
				if intercept {
					xt.Set(i, n, 1)
				}
				for j := 0; j < k; j++ {
					sx.Set(i, j, s[i]*xt.At(i, j))
				}
			}
			var want mat.Dense
			want.Mul(xt.T(), sx)
			got := des.gram(s)
			for a := 0; a < k; a++ {
				for b := 0; b < k; b++ {
					if diff := got.At(a, b) - want.At(a, b); diff > 1e-9*float64(m) || diff < -1e-9*float64(m) {
						t.Fatalf("m=%d intercept=%v: G[%d,%d] = %v, want %v", m, intercept, a, b, got.At(a, b), want.At(a, b))
					}
				}
			}
		}
	}
}
