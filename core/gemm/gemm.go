// Package gemm multiplies dense row-major matrices, the products that dominate the solvers:
// Gram matrices and the Nyström map (MulPanel against the transposed inputs up to 512 features,
// MulT beyond), the products with K in every kernel CG iteration (MulT: K is symmetric, so
// X·K = X·Kᵀ, rows against rows), and the linear solvers' X·W (MulPanel) and Xᵀ·G (MulTN, over the
// rows as stored).
//
// gonum's Dgemm forms such products as rank-one updates of 64×64 blocks, one axpy of length 64 per
// entry of X. Mul combines eight rows of B per row of a tile of C, which reads and writes C an
// eighth as often (fmaRows8). MulT, MulTN and MulPanel go further where the processor has AVX2 and
// FMA: a block of C stays in vector registers for a whole chunk of terms (dot2x6, fma4x12), so
// loads feed the multiply–adds at about 0.6 per operation and C is written once per chunk. On one
// core of this project's 2-core AMD EPYC machine the kernels run at about 46 GFLOP/s in cache.
//
// Tiles of C are independent and spread over the goroutines of package parallel; every entry of C
// is always accumulated in the same order and with the same arithmetic, so results do not depend
// on the number of threads.
package gemm

import (
	"math"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
)

// Mul sets C = X·B for X (q×p), B (p×m) and C (q×m). C must not alias X or B.
func Mul(C, X, B blas64.General) { mul(C, X, B, false) }

// MulAdd sets C += X·B, with the shapes and aliasing rules of Mul.
func MulAdd(C, X, B blas64.General) { mul(C, X, B, true) }

// Tiles of C: rows in chunks of tileRows and columns in blocks of about tileCols, so that a tile
// of C (160 KB) stays in the second level of cache and eight rows of B across it (20 KB) in the
// first while the rows of the tile go by.
const (
	tileRows = 64
	tileCols = 320
)

func mul(C, X, B blas64.General, add bool) {
	q, p := X.Rows, X.Cols
	m := B.Cols
	if B.Rows != p || C.Rows != q || C.Cols != m {
		panic("gemm: dimension mismatch")
	}
	count(q, p, m)
	if q == 0 || m == 0 {
		return
	}
	nb := (m + tileCols - 1) / tileCols
	if t := parallel.Threads(); nb > 1 && nb%t != 0 && nb < 4*t {
		nb += t - nb%t // balance the threads when there are few column blocks
	}
	width := (m + nb - 1) / nb
	width = (width + 3) &^ 3 // whole vectors: the kernel's scalar tail then only ends the last tile
	nb = (m + width - 1) / width
	nr := (q + tileRows - 1) / tileRows
	body := func(lo, hi int) {
		for t := lo; t < hi; t++ {
			r, b := t/nb, t%nb
			mulTile(C, X, B, r*tileRows, min(q, (r+1)*tileRows), b*width, min(m, (b+1)*width), add)
		}
	}
	if q*p*m < parallel.MinWork {
		body(0, nr*nb)
		return
	}
	parallel.For(nr*nb, 1, body)
}

// mulTile computes rows i0..i1, columns j0..j1 of C = X·B (or adds them to C).
func mulTile(C, X, B blas64.General, i0, i1, j0, j1 int, add bool) {
	p := X.Cols
	n := j1 - j0
	if !add {
		for i := i0; i < i1; i++ {
			clear(C.Data[i*C.Stride+j0:][:n])
		}
	}
	row := func(l int) []float64 { return B.Data[l*B.Stride+j0:][:n] }
	if haveFMA && i1-i0 == 1 {
		mulRow(C.Data[i0*C.Stride+j0:][:n], X.Data[i0*X.Stride:][:p], B, j0)
		return
	}
	l := 0
	if haveFMA {
		n4 := n &^ 3
		for ; l+8 <= p; l += 8 {
			k0, k1, k2, k3 := row(l), row(l+1), row(l+2), row(l+3)
			k4, k5, k6, k7 := row(l+4), row(l+5), row(l+6), row(l+7)
			for i := i0; i < i1; i++ {
				x := (*[8]float64)(X.Data[i*X.Stride+l:])
				c := C.Data[i*C.Stride+j0:][:n]
				if n4 > 0 {
					fmaRows8(&c[0], &k0[0], B.Stride, n4, x)
				}
				fmaTail(c, x, k0, k1, k2, k3, k4, k5, k6, k7, n4)
			}
		}
		if l < p {
			// The last p mod 8 rows of B, padded with zero rows (and X with zeros) to eight, so
			// that they take the vector kernel too: as scalar axpys they cost as much as all the
			// other rows together when p is small (103 features, 14 labels).
			// On the stack: a heap slice per tile was 20 MB of garbage per product with a
			// million rows, which raised a million-row linear fit's peak memory by 0.1 GiB.
			var buf [8 * tileCols]float64
			pad := buf[:]
			if 8*n > len(buf) {
				pad = make([]float64, 8*n)
			}
			pad = pad[:8*n] // zero, as declared: the rows past p stay zero
			for t := 0; t < p-l; t++ {
				copy(pad[t*n:(t+1)*n], row(l+t))
			}
			prow := func(t int) []float64 { return pad[t*n : (t+1)*n] }
			var x [8]float64
			for i := i0; i < i1; i++ {
				copy(x[:], X.Data[i*X.Stride+l:i*X.Stride+p])
				c := C.Data[i*C.Stride+j0:][:n]
				if n4 > 0 {
					fmaRows8(&c[0], &pad[0], n, n4, &x)
				}
				fmaTail(c, &x, prow(0), prow(1), prow(2), prow(3), prow(4), prow(5), prow(6), prow(7), n4)
			}
			return
		}
	}
	for ; l+8 <= p; l += 8 {
		k0, k1, k2, k3 := row(l), row(l+1), row(l+2), row(l+3)
		k4, k5, k6, k7 := row(l+4), row(l+5), row(l+6), row(l+7)
		for i := i0; i < i1; i++ {
			x := X.Data[i*X.Stride+l:][:8]
			a0, a1, a2, a3, a4, a5, a6, a7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
			c := C.Data[i*C.Stride+j0:][:n]
			for j := range c {
				c[j] += ((a0*k0[j] + a1*k1[j]) + (a2*k2[j] + a3*k3[j])) +
					((a4*k4[j] + a5*k5[j]) + (a6*k6[j] + a7*k7[j]))
			}
		}
	}
	for ; l < p; l++ {
		k0 := row(l)
		for i := i0; i < i1; i++ {
			a0 := X.Data[i*X.Stride+l]
			c := C.Data[i*C.Stride+j0:][:n]
			for j := range c {
				c[j] += a0 * k0[j]
			}
		}
	}
}

// mulRow adds x·B[:, j0:j0+len(c)] to c, the tile of a single row of C (a single prediction's
// product with the dual coefficients), with mulTile's arithmetic: groups of eight rows of B, the
// last p mod 8 padded with zero rows. Its columns, 16 at a time, stay in registers over all the
// groups (fmaRowsSpan); with one row, mulTile's calls of fmaRows8 would wait on each other's store
// and reload of the same row.
func mulRow(c, x []float64, B blas64.General, j0 int) {
	p, n := len(x), len(c)
	groups := p / 8
	var xpad [8]float64
	copy(xpad[:], x[8*groups:])
	var pad [8 * 16]float64
	for b := 0; b < n; b += 16 {
		w := min(16, n-b)
		var masks [4][4]uint64
		for j := 0; j < w; j++ {
			masks[j/4][j%4] = ^uint64(0)
		}
		if groups > 0 {
			fmaRowsSpan(&c[b], &B.Data[j0+b], B.Stride, groups, &x[0], &masks)
		}
		if 8*groups < p {
			clear(pad[:])
			for t := 0; 8*groups+t < p; t++ {
				copy(pad[16*t:16*t+w], B.Data[(8*groups+t)*B.Stride+j0+b:][:w])
			}
			fmaRowsSpan(&c[b], &pad[0], 16, 1, &xpad[0], &masks)
		}
	}
}

// fmaTail does fmaRows8's arithmetic on the columns j ≥ n4 past its last multiple of four. Which
// columns take this path depends on the tile boundaries, and so on the thread count, which must
// not change the result.
func fmaTail(c []float64, x *[8]float64, k0, k1, k2, k3, k4, k5, k6, k7 []float64, n4 int) {
	for j := n4; j < len(c); j++ {
		lo := math.FMA(x[3], k3[j], math.FMA(x[2], k2[j], math.FMA(x[1], k1[j], math.FMA(x[0], k0[j], c[j]))))
		hi := math.FMA(x[7], k7[j], math.FMA(x[6], k6[j], math.FMA(x[5], k5[j], x[4]*k4[j])))
		c[j] = lo + hi
	}
}
