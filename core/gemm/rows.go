package gemm

import (
	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
)

// AddRow adds b to every row of C (len(b) = C.Cols), the rows split over the goroutines: the
// intercept's broadcast after a product X·W, a pass over C as long as the product's output.
func AddRow(C blas64.General, b []float64) {
	if len(b) != C.Cols {
		panic("gemm: dimension mismatch")
	}
	parallel.For(C.Rows, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := C.Data[i*C.Stride:][:C.Cols]
			for a, v := range b {
				row[a] += v
			}
		}
	})
}

// ColumnSums writes the sums of the columns of G into dst (len(dst) = G.Cols): the intercept's row
// of a product Xᵀ·G. The columns are split over the goroutines and each is summed in row order,
// so the sums do not depend on the number of threads.
func ColumnSums(dst []float64, G blas64.General) {
	if len(dst) != G.Cols {
		panic("gemm: dimension mismatch")
	}
	clear(dst)
	parallel.For(G.Cols, 64, func(lo, hi int) {
		b := dst[lo:hi]
		for i := 0; i < G.Rows; i++ {
			for a, v := range G.Data[i*G.Stride:][lo:hi] {
				b[a] += v
			}
		}
	})
}
