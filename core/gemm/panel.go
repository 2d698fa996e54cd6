package gemm

import (
	"sync"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
)

// MulTN sets C = Aᵀ·B for A (p×q), B (p×m) and C (q×m): the products Xᵀ·G of the linear solvers,
// taken over the rows of X and G as they are stored. C must not alias A or B.
//
// Where the processor has AVX2 and FMA, a 4×12 block of C stays in twelve vector registers while
// the kernel runs down the rows: each row adds four broadcast entries of A times three vectors of
// B, seven loads for twelve fused multiply–adds, and neither operand is transposed or packed.
// Every entry of C accumulates its p terms in order of the rows, whatever the blocking and the
// number of threads.
func MulTN(C, A, B blas64.General) { mulTN(C, A, B, false, whole) }

// MulTNAdd sets C += Aᵀ·B, with the shapes and aliasing rules of MulTN.
func MulTNAdd(C, A, B blas64.General) { mulTN(C, A, B, true, whole) }

// MulTNUpperAdd adds Aᵀ·B to C for A and B (p×n) and C (n×n) on and above the diagonal only: a
// Gram matrix XᵀDX needs one triangle. Column blocks of upperBlock are taken one at a time, block j
// against the first j+1 blocks of A: about 0.6 of the full product's arithmetic for n in the
// thousands; within a block (and for n under 2·upperBlock, the whole product) the kernels skip
// the groups of four rows that lie below a block of their columns, which brings it near one half.
// Below the diagonal, entries of the diagonal blocks may be added too; the others are left as
// they were. Each entry on and above the diagonal is the one MulTNAdd computes, bit for bit.
func MulTNUpperAdd(C, A, B blas64.General) {
	p, n := A.Rows, A.Cols
	if B.Rows != p || B.Cols != n || C.Rows != n || C.Cols != n {
		panic("gemm: dimension mismatch")
	}
	if n < 2*upperBlock {
		mulTN(C, A, B, true, 0)
		return
	}
	for j0 := 0; j0 < n; j0 += upperBlock {
		j1 := min(j0+upperBlock, n)
		mulTN(blas64.General{Rows: j1, Cols: j1 - j0, Stride: C.Stride, Data: C.Data[j0:]},
			blas64.General{Rows: p, Cols: j1, Stride: A.Stride, Data: A.Data},
			blas64.General{Rows: p, Cols: j1 - j0, Stride: B.Stride, Data: B.Data[j0:]}, true, j0)
	}
}

// upperBlock is the width of MulTNUpperAdd's column blocks. Narrow blocks waste less of the
// triangle but slow the kernels down: on 12,384 × 1,500 (2 threads), 128 was no faster than the full
// product, 384 took 0.50 s against its 0.71 s.
const upperBlock = 384

// whole is the diag argument of mulTN, panelMul and panelRange that asks for every entry of C.
const whole = -1

// mulTN sets C = Aᵀ·B, or adds it to C (add). diag ≥ 0 asks for the entries on and above the
// diagonal of a square matrix of which C holds the columns diag, diag+1, … (MulTNUpperAdd): the
// kernels may skip any entry below it.
func mulTN(C, A, B blas64.General, add bool, diag int) {
	p, q := A.Rows, A.Cols
	if B.Rows != p || C.Rows != q || C.Cols != B.Cols {
		panic("gemm: dimension mismatch")
	}
	if q == 0 || B.Cols == 0 {
		return
	}
	m := B.Cols
	if p < 2*slabTerms || q*m > slabMaxEntries {
		if q <= m || m > thinColumns || diag != whole { // (a thin last block of a triangle is rare)
			panelMul(C, strided{A.Data, 1, A.Stride}, p, B, add, nil, diag, tnTerms)
			return
		}
		// A thin B (the scores of a few outputs) against a wide A (Xᵀ·G on a Nyström map of a
		// thousand components): Cᵀ = Bᵀ·A packs B's m columns instead of A's q, which the kernel
		// would gather from rows of A a stride apart, and runs along A's rows. Each entry
		// accumulates the same products in the same order as without the swap. Its terms come in
		// MulPanel's chunks: chunks of 8 rows of the wide A had made it fewer streams across memory
		// than the prefetchers follow, but once the panel kernels prefetched A's rows themselves the
		// short chunks cost more than they saved (alternated, two threads / one: 12,384 × 1,501 by 6
		// columns 24–27 → 31–38 / 13.5 → 20–22 GFLOP/s, 50,000 × 1,001 by 6 25 → 34–37 / 13 → 19–21,
		// by 3 13–16 → 17–21 / 8 → 12; by 20, which took chunks of 256, 63–75 → 76–86 / 37 → 39–43).
		buf := thinPool.Get().(*[]float64)
		defer thinPool.Put(buf)
		if cap(*buf) < m*q {
			*buf = make([]float64, m*q)
		}
		t := (*buf)[:m*q]
		panelMul(blas64.General{Rows: m, Cols: q, Stride: q, Data: t}, strided{B.Data, 1, B.Stride}, p, A, false, nil, whole, panelTermsFor(q))
		untranspose(C.Data, C.Stride, q, m, t, add)
		return
	}
	swap := q > m
	if swap {
		diag = whole // a triangle of Cᵀ is not a triangle of C
	}
	if diag == whole {
		count(q, p, m) // panelMul counts the other path
	} else {
		countUpper(q, p, m, diag)
	}
	// A long sum into a small C (Xᵀ·G on tall X): each goroutine takes whole slabs of terms into
	// a partial product of its own, so that the cores share the rows of X instead of each
	// streaming all of them, and the partial products are added in slab order, whatever the
	// number of threads.
	//
	// When C has more rows than columns, each slab computes Cᵀ = Bᵀ·A instead: the operand the
	// kernel packs is then B's m columns rather than A's q (Xᵀ·G at 50 features and 20 labels
	// packed 2.5 times fewer values, and the 4×12 kernel covers 20×50 better than 50×20). Each
	// entry still accumulates the same products in the same order: the sums are bit-identical.
	slabs := (p + slabTerms - 1) / slabTerms
	parts := make([]float64, slabs*q*m)
	parallel.For(slabs, 1, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			l0, n := s*slabTerms, min(slabTerms, p-s*slabTerms)
			As := blas64.General{Rows: n, Cols: q, Stride: A.Stride, Data: A.Data[l0*A.Stride:]}
			Bs := blas64.General{Rows: n, Cols: m, Stride: B.Stride, Data: B.Data[l0*B.Stride:]}
			if swap {
				As, Bs = Bs, As
			}
			part := blas64.General{Rows: As.Cols, Cols: Bs.Cols, Stride: Bs.Cols, Data: parts[s*q*m : (s+1)*q*m]}
			panelRange(part, strided{As.Data, 1, As.Stride}, n, Bs, 0, As.Cols, 0, Bs.Cols, true, nil, diag, tnTerms, swap)
		}
	})
	rowStep, colStep := m, 1 // entry (i, j) of a part
	if swap {
		rowStep, colStep = 1, q
	}
	for i := 0; i < q; i++ {
		c := C.Data[i*C.Stride:][:m]
		if !add {
			clear(c)
		}
		for s := 0; s < slabs; s++ {
			part := parts[s*q*m:][:q*m]
			for j := range c {
				c[j] += part[i*rowStep+j*colStep]
			}
		}
	}
}

// thinColumns is the widest B whose product with a wider A mulTN computes transposed. Best of 7
// beside other work, direct against transposed: 12,384 × 1,501 by 6 columns 133 against 51 ms,
// 30,000 × 1,001 by 20 197 against 95 ms, 5,000 × 1,001 by 64 61 against 29 ms, by 96 74 against
// 54 ms, 5,000 × 1,837 by 159 187 against 160 ms.
const thinColumns = 160

// tnTerms is the chunk of terms of MulTN's other products, whose packed operand is A's columns and
// whose B (G, or X in a slab of a tall sum) has rows wider than twelve values: the twelve columns
// of B a block reads span two or three cache lines a row, so that 256 rows of them (the chunk of
// MulPanel, whose W is read whole) overflowed the first level of cache, read again for every four
// rows of C. Alternated in one run on an AMD EPYC, two threads: Xᵀ·G at 200,000 × 50 by 20 went
// from 10.6 to 18.1 GFLOP/s (128 terms: 13.4), at 5,000 × 101 by 1,000 from 27 to 41 (128: 42);
// MulPanel's X·W was slower with 64 (35 → 26 and 27 → 22) and keeps panelTerms.
const tnTerms = 64

// thinPool holds mulTN's transposed products, reused across the iterations of a solver (a fresh
// one per call was a fit's largest allocation, against its memory budget).
var thinPool = sync.Pool{New: func() any { return new([]float64) }}

// MulTN splits a sum of at least 2·slabTerms terms into slabs when C has at most slabMaxEntries
// entries (the partial products then take at most 32 bytes per row of A).
const (
	slabTerms      = 8192
	slabMaxEntries = 4096
)

// MulPanel sets C = X·B for X (q×p), B (p×m) and C (q×m), as Mul does, with MulTN's kernel: the
// block of C stays in registers across all p terms instead of being read and written every
// eight. C must not alias X or B.
func MulPanel(C, X, B blas64.General) {
	if B.Rows != X.Cols || C.Rows != X.Rows || C.Cols != B.Cols {
		panic("gemm: dimension mismatch")
	}
	panelMul(C, strided{X.Data, X.Stride, 1}, X.Cols, B, false, nil, whole, panelTermsFor(B.Cols))
}

// MulPanelAdd sets C += X·B, with the shapes and aliasing rules of MulPanel.
func MulPanelAdd(C, X, B blas64.General) {
	if B.Rows != X.Cols || C.Rows != X.Rows || C.Cols != B.Cols {
		panic("gemm: dimension mismatch")
	}
	panelMul(C, strided{X.Data, X.Stride, 1}, X.Cols, B, true, nil, whole, panelTermsFor(B.Cols))
}

// MulPanelBias sets C = X·B + 1·biasᵀ (bias added to every row of C), with the shapes and aliasing
// rules of MulPanel and bias of length C.Cols: an intercept in the same pass as the product. Each
// entry's sum starts from its bias, where MulPanel followed by AddRow adds it last, so the two
// round differently.
func MulPanelBias(C, X, B blas64.General, bias []float64) {
	if B.Rows != X.Cols || C.Rows != X.Rows || C.Cols != B.Cols || len(bias) < C.Cols {
		panic("gemm: dimension mismatch")
	}
	panelMul(C, strided{X.Data, X.Stride, 1}, X.Cols, B, false, bias[:C.Cols], whole, panelTermsFor(B.Cols))
}

// strided is a matrix whose entry (i, l) is data[i·row + l·col]: X (row = stride, col = 1) or the
// transpose of A (row = 1, col = stride), read in place.
type strided struct {
	data     []float64
	row, col int
}

// Blocking of panelMul: terms in chunks of panelTerms rows of B, so that a chunk of twelve columns
// of B (24 KB) stays in the first level of cache while the rows of A go by, and the rows of A in
// blocks whose chunks (panelRowBytes) stay in the second level while the columns of B go by.
const (
	panelTerms    = 256
	panelRowBytes = 128 << 10
)

// panelTermsFor is MulPanel's chunk of terms for a B of m columns: half of panelTerms where the
// 512-bit kernels take B 24 (or 17–23) columns at a time, so that their chunk stays at 24 KB. At
// 48 KB it overflowed the first level of cache of a Zen 5, and a block of columns was read again
// from the second for every four rows of C: alternated in one process, one / two threads, the
// kernel dual's Cholesky updates (64 × 750 by 750 × 750) went from 85 to 112 / 157 to 204 GFLOP/s,
// 64 × 1,400 by 100 from 84 to 103 / 136 to 159, 200 × 1,000 by 40 from 91 to 100 / 164 to 170; B
// of 12–24 columns ran alike with either chunk, and narrower B keep panelTerms (a Nyström map's
// X·W by 6 columns was 10 % slower with 128).
func panelTermsFor(m int) int {
	if haveAVX512 && m > 16 {
		return panelTerms / 2
	}
	return panelTerms
}

// panelMul sets C = A·B + 1·biasᵀ (bias nil: zeros) or adds A·B to C (add; bias unused), for A
// (q×p, strided), B (p×m) and bias of length m; diag as in mulTN.
func panelMul(C blas64.General, A strided, p int, B blas64.General, add bool, bias []float64, diag, terms int) {
	q, m := C.Rows, C.Cols
	if diag == whole {
		count(q, p, m)
	} else {
		countUpper(q, p, m, diag)
	}
	if q == 0 || m == 0 {
		return
	}
	if p == 0 {
		if !add {
			fillBlock(C, 0, q, 0, m, bias)
		}
		return
	}
	rowGroups, colBlocks := (q+3)/4, (m+11)/12
	body := func(lo, hi int) {
		if rowGroups >= colBlocks {
			panelRange(C, A, p, B, 4*lo, min(q, 4*hi), 0, m, add, bias, diag, terms, false)
		} else {
			panelRange(C, A, p, B, 0, q, 12*lo, min(m, 12*hi), add, bias, diag, terms, false)
		}
	}
	n := max(rowGroups, colBlocks)
	if q*p*m < parallel.MinWork {
		body(0, n)
		return
	}
	if diag == whole || rowGroups < colBlocks {
		parallel.For(n, 1, body)
		return
	}
	// A triangle split into equal numbers of rows would leave the first thread most of the work:
	// split it into equal shares of the entries on and above the diagonal instead.
	w := min(parallel.Threads(), n)
	cuts := triangleCuts(rowGroups, diag, m, w)
	parallel.Go(w, func(t int) { body(cuts[t], cuts[t+1]) })
}

// triangleCuts splits groups of four rows of C into w contiguous ranges with about equal numbers
// of entries on and above the diagonal (C holding the columns diag..diag+m−1 of the whole
// matrix): range t is cuts[t]..cuts[t+1].
func triangleCuts(groups, diag, m, w int) []int {
	entries := func(g int) int { return 4 * min(max(diag+m-4*g, 1), m) }
	var total int
	for g := range groups {
		total += entries(g)
	}
	cuts := make([]int, w+1)
	g, sum := 0, 0
	for t := 1; t < w; t++ {
		for g < groups && sum+entries(g)/2 < total*t/w {
			sum += entries(g)
			g++
		}
		cuts[t] = g
	}
	cuts[w] = groups
	return cuts
}

// panelRange adds to rows i0..i1 and columns j0..j1 of C their products, or sets them to the
// products plus bias (nil: zeros) when add is false; i0 is a multiple of 4 and j0 of 12. To set
// them, the kernels start the first chunk of terms from the bias row (or a row of zeros) without
// reading C: clearing each block first, and adding an intercept row after, were passes over C of
// their own, 10 % and 3 % of the CPU profile of a linear fit on a million rows (X·W at
// 1,000,000 × 50 by 50 × 20), whose time went from 1.55 to 1.41 s without them.
//
// A transposed operand (A.col ≠ 1: the rows of C are columns of X) wider than packNarrow values a
// row is first copied, a block of rows and a chunk of terms at a time, into groups of four
// interleaved rows: read in place, each term of the kernel would fetch a new line of X for four of
// its values, and the kernel ran at a third of its speed on tall X. A narrower one is read in place
// (see packNarrow).
//
// diag ≥ 0 (mulTN) skips the groups of four rows that lie wholly below a block of columns.
//
// streamB says that B's rows stream from memory (X in mulTN's transposed slabs, read once): each
// chunk of its rows is then asked for while the previous one is added, where the kernels ask only
// for A's rows ahead (PANEL_PREFETCH) and the processor's prefetchers do not run far enough ahead
// of rows a few hundred bytes wide (Xᵀ·G at 200,000 × 50 by 20: 31–32 → 35 GFLOP/s on one
// thread, alternated builds).
func panelRange(C blas64.General, A strided, p int, B blas64.General, i0, i1, j0, j1 int, add bool, bias []float64, diag, terms int, streamB bool) {
	if !haveFMA {
		if !add {
			fillBlock(C, i0, i1, j0, j1, bias)
		}
		panelPortable(C, A, p, B, i0, i1, j0, j1)
		return
	}
	rowBlock := max(4, panelRowBytes/(8*min(p, terms))&^3)
	var pack []float64
	if A.col > packNarrow {
		buf := packPool.Get().(*[]float64)
		defer packPool.Put(buf)
		if size := min(rowBlock, i1-i0+3) * min(p, terms); cap(*buf) < size {
			*buf = make([]float64, size)
		}
		pack = *buf
	}
	var a, c [4]*float64
	var a8, c8 [8]*float64
	for ib := i0; ib < i1; ib += rowBlock {
		ie := min(i1, ib+rowBlock)
		for l0 := 0; l0 < p; l0 += terms {
			n := min(terms, p-l0)
			// start is where the sums of columns j.. start: C itself (nil), zeros or the bias.
			start := func(j int) *float64 {
				switch {
				case add || l0 > 0:
					return nil
				case bias == nil:
					return &zeroRow[0]
				}
				return &bias[j]
			}
			if pack != nil {
				packGroups(pack, A, ib, ie, l0, n)
			}
			if streamB && l0+n < p {
				// B's next chunk, while this one is added: see streamB.
				prefetchRows(&B.Data[(l0+n)*B.Stride+j0], B.Stride, min(terms, p-l0-n), (j1-j0)*8/64+2)
			}
			for j := j0; j < j1; {
				// A lone row 64 columns at a time (fma1x64) where the processor has AVX-512F;
				// otherwise 24 columns at a time in 512-bit registers where it has them, a last
				// 9–23 in two or three of them with the last one masked, and the rest (every column
				// elsewhere) 12 at a time.
				if ie-ib == 1 && haveAVX512 && diag == whole && j1-j >= 64 {
					a0, aStep := &A.data[ib*A.row+l0*A.col], A.col
					if pack != nil {
						a0, aStep = &pack[0], 4
					}
					fma1x64(a0, aStep, &B.Data[l0*B.Stride+j], B.Stride, n, &C.Data[ib*C.Stride+j], start(j))
					j += 64
					continue
				}
				w := min(12, j1-j)
				if haveAVX512 && j1-j > 8 {
					w = min(24, j1-j)
				}
				b := &B.Data[l0*B.Stride+j]
				last := ie
				if diag != whole {
					last = min(ie, diag+j+w)
				}
				i := ib
				if haveAVX512 && w <= 16 {
					// Eight rows at a time where there are eight (panel8_amd64.s): the rows two
					// groups of four would take, each entry of C with the same operations.
					for ; i+8 <= last; i += 8 {
						aStep := A.col
						for r := range 8 {
							if pack != nil {
								a8[r], aStep = &pack[(i+r&^3-ib)*n+r&3], 4
							} else {
								a8[r] = &A.data[(i+r)*A.row+l0*A.col]
							}
							c8[r] = &C.Data[(i+r)*C.Stride+j]
						}
						if w > 8 {
							fma8x16m(&a8, aStep, b, B.Stride, n, &c8, start(j), 1<<(w-8)-1)
						} else {
							fma8x8m(&a8, aStep, b, B.Stride, n, &c8, start(j), 1<<w-1)
						}
					}
				}
				for ; i < last; i += 4 {
					// A group of fewer than four rows repeats its last row: the repeated rows load the
					// same values, add the same terms and store the same sums.
					aStep := A.col
					for r := range 4 {
						ir := min(i+r, ie-1)
						if pack != nil {
							a[r], aStep = &pack[(i-ib)*n+r], 4
						} else {
							a[r] = &A.data[ir*A.row+l0*A.col]
						}
						c[r] = &C.Data[ir*C.Stride+j]
					}
					switch {
					case w == 24:
						fma4x24(&a, aStep, b, B.Stride, n, &c, start(j))
					case haveAVX512 && w > 16:
						fma4x24m(&a, aStep, b, B.Stride, n, &c, start(j), 1<<(w-16)-1)
					case haveAVX512 && w > 8:
						fma4x16m(&a, aStep, b, B.Stride, n, &c, start(j), 1<<(w-8)-1)
					case haveAVX512:
						fma4x8m(&a, aStep, b, B.Stride, n, &c, start(j), 1<<w-1)
					case w == 12:
						fma4x12(&a, aStep, b, B.Stride, n, &c, start(j))
					case w > 8:
						fma4x8(&a, aStep, b, B.Stride, n, &c, &tailMasks[4], start(j))
						for r := range 4 {
							c[r] = &C.Data[min(i+r, ie-1)*C.Stride+j+8]
						}
						fma4x4(&a, aStep, &B.Data[l0*B.Stride+j+8], B.Stride, n, &c, &tailMasks[w-8], start(j+8))
					case w > 4:
						fma4x8(&a, aStep, b, B.Stride, n, &c, &tailMasks[w-4], start(j))
					default:
						fma4x4(&a, aStep, b, B.Stride, n, &c, &tailMasks[w], start(j))
					}
				}
				j += w
			}
		}
	}
}

// packNarrow is the widest transposed operand (values a row of the matrix stored) that panelRange
// reads in place rather than packing: its four values of a term share a cache line, its rows a few
// lines, which stay in the first level of cache for a chunk of terms, and the kernels' prefetch
// runs ahead of them. The copy had cost as much as the products: Xᵀ·G at 200,000 × 50 by 20 (G read
// transposed in its slabs) went from 35 to 42 GFLOP/s on one thread and 59 to 74 on two, Xᵀ·G at
// 200,000 × 30 by 30 from 27 to 41, 50,000 × 120 by 120 from 55 to 71 (alternated builds); at 200
// and 256 values a row the packed operand was as fast or faster, on two threads.
const packNarrow = 128

// packPool holds panelRange's buffers for transposed operands, one per concurrent call.
var packPool = sync.Pool{New: func() any { return new([]float64) }}

// packGroups copies the terms l0..l0+n of the rows ib..ie of A into pack, four rows at a time with
// their terms interleaved: pack[(i−ib)·n + 4l + r] = A(i + r, l0 + l) for each group i, a short
// last group repeating its last row. A term's values are contiguous in a transposed operand, so
// the copy runs along them.
func packGroups(pack []float64, A strided, ib, ie, l0, n int) {
	full := ib + (ie-ib)&^3
	for l := 0; l < n; l++ {
		src := A.data[(l0+l)*A.col:]
		for i := ib; i < full; i += 4 {
			g := pack[(i-ib)*n+4*l:][:4]
			g[0], g[1], g[2], g[3] = src[i*A.row], src[(i+1)*A.row], src[(i+2)*A.row], src[(i+3)*A.row]
		}
		if full < ie {
			g := pack[(full-ib)*n+4*l:][:4]
			for r := range 4 {
				g[r] = src[min(full+r, ie-1)*A.row]
			}
		}
	}
}

// fillBlock sets rows i0..i1 and columns j0..j1 of C to bias[j0:j1] (nil: zeros).
func fillBlock(C blas64.General, i0, i1, j0, j1 int, bias []float64) {
	for i := i0; i < i1; i++ {
		if bias == nil {
			clear(C.Data[i*C.Stride:][j0:j1])
		} else {
			copy(C.Data[i*C.Stride:][j0:j1], bias[j0:j1])
		}
	}
}

// zeroRow is the row the kernels start from when a product sets C without a bias, as wide as the
// widest block a kernel starts (fma1x64's).
var zeroRow [64]float64

// panelPortable is panelRange without the vector kernels.
func panelPortable(C blas64.General, A strided, p int, B blas64.General, i0, i1, j0, j1 int) {
	for i := i0; i < i1; i++ {
		c := C.Data[i*C.Stride:][j0:j1]
		for l := 0; l < p; l++ {
			x := A.data[i*A.row+l*A.col]
			b := B.Data[l*B.Stride:][j0:j1]
			for k := range c {
				c[k] += x * b[k]
			}
		}
	}
}
