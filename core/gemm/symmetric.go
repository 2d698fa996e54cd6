package gemm

import (
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
)

// MulSym sets C = X·K for a symmetric K (m×m), X (q×m) and C (q×m); only that K equals its
// transpose is used, not checked. C must not alias X or K.
//
// Where the processor has AVX-512F and X has more than symDotRows rows, it computes (K·Xᵀ)ᵀ:
// MulPanel takes K's rows eight at a time against Xᵀ, whose columns the eight-row kernels hold in
// registers, so K is read once for every symChunk rows of X; the transposes of X and of the
// result are q·m copies against q·m² multiply–adds. Kernel CG's product at yeast's size
// (1,500 × 1,500, 14 outputs) on a Zen 5 went from 34 to 58 GFLOP/s on one thread and 62 to 87
// on two against MulT's dot products of X's rows with K's, which the other cases keep: by 6 rows
// the two were level (30–34 against 30), and the 256-bit kernels, without eight-row ones, gave
// 25 against MulT's 27.5.
//
// As MulT and MulPanel, the result does not depend on the number of threads.
func MulSym(C, X, K blas64.General) {
	q, m := X.Rows, X.Cols
	if K.Rows != m || K.Cols != m || C.Rows != q || C.Cols != m {
		panic("gemm: dimension mismatch")
	}
	if !haveAVX512 || q <= symDotRows {
		MulT(C, X, K)
		return
	}
	// X's rows symChunk at a time, so that the transposed copies stay small beside K.
	xt, kx := symPool.Get().(*[]float64), symPool.Get().(*[]float64)
	defer symPool.Put(xt)
	defer symPool.Put(kx)
	rows := min(q, symChunk)
	for _, b := range []*[]float64{xt, kx} {
		if cap(*b) < m*rows {
			*b = make([]float64, m*rows)
		}
	}
	for r0 := 0; r0 < q; r0 += symChunk {
		c := min(symChunk, q-r0)
		Xt := blas64.General{Rows: m, Cols: c, Stride: c, Data: (*xt)[:m*c]}
		KX := blas64.General{Rows: m, Cols: c, Stride: c, Data: (*kx)[:m*c]}
		for i := 0; i < c; i++ {
			for j, v := range X.Data[(r0+i)*X.Stride:][:m] {
				Xt.Data[j*c+i] = v
			}
		}
		MulPanel(KX, K, Xt)
		untranspose(C.Data[r0*C.Stride:], C.Stride, c, m, KX.Data, false)
	}
}

// untranspose writes into the rows×cols block of dst (row stride ld) the transpose of t, a
// cols×rows row-major matrix: dst[i][j] = t[j][i], or with add dst[i][j] += t[j][i]. The products
// computed in a transposed layout (MulSym, mulTN's thin route) end with it.
func untranspose(dst []float64, ld, rows, cols int, t []float64, add bool) {
	for i := 0; i < rows; i++ {
		row := dst[i*ld:][:cols]
		if add {
			for j := range row {
				row[j] += t[j*rows+i]
			}
			continue
		}
		for j := range row {
			row[j] = t[j*rows+i]
		}
	}
}

// symDotRows is the most rows of X for which MulSym takes MulT's dot products.
const symDotRows = 8

// symChunk is the most rows of X that MulSym transposes at once: its two copies take at most
// 2·symChunk·m values, a small share of K's m² (an eighth at m = 1,024), whatever X's height;
// each chunk reads K once.
const symChunk = 64

// symPool holds MulSym's transposed operands and results, two per concurrent call.
var symPool = sync.Pool{New: func() any { return new([]float64) }}
