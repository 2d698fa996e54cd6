package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// MulSym gives X·K for a symmetric K on every route: with the eight-row kernels (more than
// symDotRows rows of X), each entry exactly the fused multiply–add chain of its terms in order, as
// MulPanel computes K·Xᵀ; through MulT's dot products (fewer rows, or no AVX-512), gonum's product
// to rounding. Strided views, shapes across the kernels' blocks and none at all.
func TestMulSym(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, avx512 := range []bool{true, false} {
		old := setHaveAVX512(avx512 && haveAVX512)
		for _, c := range []struct{ q, m int }{{1, 1}, {8, 5}, {9, 7}, {14, 100}, {17, 333}, {40, 64}, {150, 70}, {3, 0}, {0, 4}} {
			if c.q == 0 || c.m == 0 {
				MulSym(blas64.General{Rows: c.q, Cols: c.m, Stride: 1}, blas64.General{Rows: c.q, Cols: c.m, Stride: 1},
					blas64.General{Rows: c.m, Cols: c.m, Stride: 1})
				continue
			}
			Kbig := randDense(r, c.m+2, c.m+3)
			Kh := Kbig.Slice(1, c.m+1, 2, c.m+2).(*mat.Dense)
			for i := 0; i < c.m; i++ {
				for j := 0; j < i; j++ {
					Kh.Set(i, j, Kh.At(j, i))
				}
			}
			Xbig := randDense(r, c.q+1, c.m+4)
			X := Xbig.Slice(1, c.q+1, 3, c.m+3).(*mat.Dense)
			Cbig := mat.NewDense(c.q+2, c.m+5, nil)
			for i := range Cbig.RawMatrix().Data {
				Cbig.RawMatrix().Data[i] = math.NaN()
			}
			C := Cbig.Slice(2, c.q+2, 1, c.m+1).(*mat.Dense)
			MulSym(C.RawMatrix(), X.RawMatrix(), Kh.RawMatrix())
			exact := haveAVX512 && c.q > symDotRows
			for i := 0; i < c.q; i++ {
				for j := 0; j < c.m; j++ {
					var want, ref float64
					for l := 0; l < c.m; l++ {
						want = math.FMA(Kh.At(j, l), X.At(i, l), want)
						ref += X.At(i, l) * Kh.At(l, j)
					}
					got := C.At(i, j)
					if exact && got != want || !exact && math.Abs(got-ref) > 1e-12*float64(c.m) {
						t.Fatalf("avx512=%v q=%d m=%d: C[%d,%d] = %v, want %v", avx512, c.q, c.m, i, j, got, want)
					}
				}
			}
			// Nothing outside C's view is written.
			for i := 0; i < c.q+2; i++ {
				for j := 0; j < c.m+5; j++ {
					if (i < 2 || i >= c.q+2 || j < 1 || j >= c.m+1) && !math.IsNaN(Cbig.At(i, j)) {
						t.Fatalf("avx512=%v q=%d m=%d: Cbig[%d,%d] written", avx512, c.q, c.m, i, j)
					}
				}
			}
		}
		setHaveAVX512(old)
	}
}
