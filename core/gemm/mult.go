package gemm

import (
	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
)

// MulT sets C = X·Bᵀ for X (q×p), B (m×p) and C (q×m). C must not alias X or B.
//
// Every entry of C is the dot product of two contiguous rows, so neither operand is transposed or
// packed. Where the processor has AVX2 and FMA, the kernel dot2x6 holds a 2×6 block of C in twelve
// vector registers while two rows of X and six rows of B stream through them: eight loads feed
// twelve fused multiply–adds, and C is written once per chunk of dotChunk terms, where Mul's
// kernel reads and writes its tile of C for every eight terms. With AVX-512, dot4x6z and dot4x6y
// hold a 4×6 block in 24 of the 32 registers (ten loads feed 24 multiply–adds) and give each entry
// exactly as dot2x6z and dot2x6 do: on a 2-core Xeon, kernel CG's X·K went from 39 to 46 GFLOP/s
// on one thread and the rbf Gram matrix of 103 features from 19 to 42 (package kernel has since
// moved Gram matrices of up to 512 features to MulPanel, at 123 on a Zen 5 where MulT gave 56;
// wider inputs still take this path). A symmetric B gives X·B: the products with the kernel
// matrix K in kernel CG take this path.
//
// The rows of B are spread over the goroutines of package parallel in groups of six, and every
// entry of C is always accumulated in the same order, so the result does not depend on the number
// of threads.
func MulT(C, X, B blas64.General) { mulT(C, X, B, false) }

// MulTAdd sets C += X·Bᵀ, with the shapes and aliasing rules of MulT.
func MulTAdd(C, X, B blas64.General) { mulT(C, X, B, true) }

func mulT(C, X, B blas64.General, add bool) {
	q, p := X.Rows, X.Cols
	m := B.Rows
	if B.Cols != p || C.Rows != q || C.Cols != m {
		panic("gemm: dimension mismatch")
	}
	count(q, p, m)
	if q == 0 || m == 0 {
		return
	}
	if p == 0 {
		for i := 0; i < q && !add; i++ {
			clear(C.Data[i*C.Stride:][:m])
		}
		return
	}
	if q == 1 && haveFMA && !(haveAVX512 && p >= dotWideTerms) && p*m < parallel.MinWork {
		mulTRow(C, X, B, add)
		return
	}
	groups := (m + 5) / 6
	body := func(lo, hi int) { mulTCols(C, X, B, 6*lo, min(m, 6*hi), add) }
	if q*p*m < parallel.MinWork {
		body(0, groups)
		return
	}
	parallel.For(groups, 1, body)
}

// Blocking of MulT: dot2x6 reads dotChunk terms of eight rows per call (a chunk of six rows of B,
// 24 KB, stays in the first level of cache while the rows of X go by; 512 measured best among
// 128–1024 on kernel CG's product, within this machine's noise), and the rows of X are taken in
// panels whose chunks (at most panelBytes) stay in the second level while the rows of B go by.
const (
	dotChunk   = 512
	panelBytes = 192 << 10
)

// dotWideTerms is the shortest chunk that dot2x6z takes over from dot2x6 where the processor has
// AVX-512F: on short rows its fold from eight lanes to four costs more than its wider loads save
// (the rbf Gram matrix of 103 features: 69 against 75 GFLOP/s on 2 threads), on kernel CG's
// 512-term chunks it is the faster (74 against 62).
const dotWideTerms = 256

// tailMasks[k] selects the first k lanes of a vector: the last p mod 4 terms of a dot product,
// or the last columns of a block of C.
var tailMasks = [5][4]uint64{
	{},
	{^uint64(0)},
	{^uint64(0), ^uint64(0)},
	{^uint64(0), ^uint64(0), ^uint64(0)},
	{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)},
}

// mulTCols computes the columns j0..j1 of C = X·Bᵀ (the rows j0..j1 of B), or adds them to C; j0 is
// a multiple of 6.
func mulTCols(C, X, B blas64.General, j0, j1 int, add bool) {
	q, p := X.Rows, X.Cols
	if !haveFMA {
		mulTColsPortable(C, X, B, j0, j1, add)
		return
	}
	panel := max(2, panelBytes/(8*min(p, dotChunk))&^1)
	var rows [8]*float64
	var out [12]float64
	var out4 [24]float64
	for i0 := 0; i0 < q; i0 += panel {
		i1 := min(q, i0+panel)
		for l0 := 0; l0 < p; l0 += dotChunk {
			n := min(dotChunk, p-l0)
			mask := &tailMasks[n&3]
			wide := haveAVX512 && n >= dotWideTerms
			for j := j0; j < j1; j += 6 {
				nc := min(6, j1-j)
				// A group of fewer than six rows repeats its last row; the extra sums are dropped.
				for c := 0; c < 6; c++ {
					rows[2+c] = &B.Data[(j+min(c, nc-1))*B.Stride+l0]
				}
				i := i0
				// Four rows of X at a time where dot4x6z and dot4x6y compute the same sums as
				// dot2x6z and dot2x6 (which take the rest): their 24 sums need ten loads per step
				// against sixteen.
				for ; haveAVX512 && nc == 6 && i+4 <= i1; i += 4 {
					x, b := &X.Data[i*X.Stride+l0], &B.Data[j*B.Stride+l0]
					if wide {
						dot4x6z(x, X.Stride, b, B.Stride, n, 1<<(n&3)-1, &out4)
					} else {
						dot4x6y(x, X.Stride, b, B.Stride, n, 1<<(n&3)-1, &out4)
					}
					for r := 0; r < 4; r++ {
						c := C.Data[(i+r)*C.Stride+j:][:6]
						if l0 == 0 && !add {
							copy(c, out4[6*r:6*r+6])
						} else {
							for k := range c {
								c[k] += out4[6*r+k]
							}
						}
					}
				}
				for ; i < i1; i += 2 {
					nr := min(2, i1-i)
					rows[0] = &X.Data[i*X.Stride+l0]
					rows[1] = &X.Data[(i+nr-1)*X.Stride+l0]
					if haveAVX512 && n >= dotWideTerms {
						dot2x6z(&rows, n, mask, &out)
					} else {
						dot2x6(&rows, n, mask, &out)
					}
					for r := 0; r < nr; r++ {
						c := C.Data[(i+r)*C.Stride+j:][:nc]
						if l0 == 0 && !add {
							copy(c, out[6*r:6*r+nc])
						} else {
							for k := range c {
								c[k] += out[6*r+k]
							}
						}
					}
				}
			}
		}
	}
}

// mulTRow is mulTCols for one row of X (a single prediction's kernel row), twelve rows of B at a
// time with dot1x12 instead of six with dot2x6, which would compute the row's products twice. It
// takes the place of mulTCols only where that would run dot2x6 alone (no chunk of dot2x6z's
// length), so that the row's entries are those of any other product it is part of.
func mulTRow(C, X, B blas64.General, add bool) {
	p, m := X.Cols, B.Rows
	c := C.Data[:m]
	var rows [8]*float64
	var out [12]float64
	for l0 := 0; l0 < p; l0 += dotChunk {
		n := min(dotChunk, p-l0)
		mask := &tailMasks[n&3]
		put := func(j int, v []float64) {
			if l0 == 0 && !add {
				copy(c[j:], v)
				return
			}
			for k, x := range v {
				c[j+k] += x
			}
		}
		j := 0
		for ; j+12 <= m; j += 12 {
			if l0 == 0 && !add { // straight into C: a copy per twelve entries cost a fifth of a kernel row
				dot1x12(&X.Data[l0], &B.Data[j*B.Stride+l0], B.Stride, n, mask, (*[12]float64)(c[j:j+12]))
				continue
			}
			dot1x12(&X.Data[l0], &B.Data[j*B.Stride+l0], B.Stride, n, mask, &out)
			put(j, out[:])
		}
		for ; j < m; j += 6 { // the last m mod 12 rows of B, as mulTCols takes them
			nc := min(6, m-j)
			rows[0], rows[1] = &X.Data[l0], &X.Data[l0]
			for k := 0; k < 6; k++ {
				rows[2+k] = &B.Data[(j+min(k, nc-1))*B.Stride+l0]
			}
			dot2x6(&rows, n, mask, &out)
			put(j, out[:nc])
		}
	}
}

// mulTColsPortable is mulTCols without the vector kernel: each entry a dot product with four
// partial sums.
func mulTColsPortable(C, X, B blas64.General, j0, j1 int, add bool) {
	q, p := X.Rows, X.Cols
	p4 := p &^ 3
	for i := 0; i < q; i++ {
		x := X.Data[i*X.Stride:][:p]
		c := C.Data[i*C.Stride:]
		for j := j0; j < j1; j++ {
			b := B.Data[j*B.Stride:][:p]
			var s0, s1, s2, s3 float64
			for l := 0; l < p4; l += 4 {
				s0 += x[l] * b[l]
				s1 += x[l+1] * b[l+1]
				s2 += x[l+2] * b[l+2]
				s3 += x[l+3] * b[l+3]
			}
			for l := p4; l < p; l++ {
				s0 += x[l] * b[l]
			}
			if add {
				c[j] += (s0 + s2) + (s1 + s3)
			} else {
				c[j] = (s0 + s2) + (s1 + s3)
			}
		}
	}
}
