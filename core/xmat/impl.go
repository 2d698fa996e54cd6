package xmat

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
)

// csr is CSR for one index type. A view of rows [lo, hi) of a larger matrix keeps ptr unrebased
// (ptr[0] need not be 0): ind and data are indexed by ptr's values.
type csr[I Index] struct {
	rows, cols int
	ptr, ind   []I
	data       []float64
}

func (a *csr[I]) dims() (int, int) { return a.rows, a.cols }

func (a *csr[I]) nnz() int { return int(a.ptr[a.rows] - a.ptr[0]) }

func (a *csr[I]) slice(lo, hi int) csrImpl {
	return &csr[I]{rows: hi - lo, cols: a.cols, ptr: a.ptr[lo : hi+1], ind: a.ind, data: a.data}
}

func (a *csr[I]) span(i int) (int, int) { return int(a.ptr[i]), int(a.ptr[i+1]) }

func (a *csr[I]) copyRows(rows []int) csrImpl {
	total := 0
	for _, i := range rows {
		lo, hi := a.span(i)
		total += hi - lo
	}
	out := &csr[I]{rows: len(rows), cols: a.cols, ptr: make([]I, len(rows)+1), ind: make([]I, 0, total), data: make([]float64, 0, total)}
	for r, i := range rows {
		lo, hi := a.span(i)
		out.ind = append(out.ind, a.ind[lo:hi]...)
		out.data = append(out.data, a.data[lo:hi]...)
		out.ptr[r+1] = I(len(out.data))
	}
	return out
}

func (a *csr[I]) transpose() csrImpl {
	if wideTranspose(a.rows, a.nnz()) {
		return transposeTo[I, int64](a)
	}
	return transposeTo[I, int32](a)
}

// wideTranspose reports whether the transpose of a CSR matrix of rows rows and nnz stored values
// needs int64 indices.
func wideTranspose(rows, nnz int) bool { return rows > math.MaxInt32 || nnz > math.MaxInt32 }

// transposeTo returns aᵀ with indices of type J, by a counting sort of the entries by column: the
// rows of aᵀ come out sorted since a's rows are visited in order.
func transposeTo[I, J Index](a *csr[I]) *csr[J] {
	nz := a.nnz()
	t := &csr[J]{rows: a.cols, cols: a.rows, ptr: make([]J, a.cols+1), ind: make([]J, nz), data: make([]float64, nz)}
	base := int(a.ptr[0])
	for _, j := range a.ind[base : base+nz] {
		t.ptr[j+1]++
	}
	for j := 0; j < a.cols; j++ {
		t.ptr[j+1] += t.ptr[j]
	}
	next := make([]J, a.cols)
	copy(next, t.ptr[:a.cols])
	for i := 0; i < a.rows; i++ {
		lo, hi := a.span(i)
		for k := lo; k < hi; k++ {
			j := a.ind[k]
			p := next[j]
			t.ind[p] = J(i)
			t.data[p] = a.data[k]
			next[j]++
		}
	}
	return t
}

func (a *csr[I]) rowDense(i int, dst []float64) {
	clear(dst)
	lo, hi := a.span(i)
	for k := lo; k < hi; k++ {
		dst[a.ind[k]] = a.data[k]
	}
}

func (a *csr[I]) rowDot(i int, x []float64) float64 {
	lo, hi := a.span(i)
	var s float64
	for k := lo; k < hi; k++ {
		s += a.data[k] * x[a.ind[k]]
	}
	return s
}

func (a *csr[I]) rowAxpy(i int, f float64, dst []float64) {
	lo, hi := a.span(i)
	for k := lo; k < hi; k++ {
		dst[a.ind[k]] += f * a.data[k]
	}
}

func (a *csr[I]) columnCounts(out []int) {
	for _, j := range a.ind[a.ptr[0]:a.ptr[a.rows]] {
		out[j]++
	}
}

func (a *csr[I]) shiftColumns(c []float64) csrImpl {
	lo, hi := a.ptr[0], a.ptr[a.rows]
	ptr := make([]I, a.rows+1)
	for i, p := range a.ptr[:a.rows+1] {
		ptr[i] = p - lo
	}
	ind, data := a.ind[lo:hi], make([]float64, hi-lo)
	for k, j := range ind {
		data[k] = a.data[int(lo)+k] - c[j]
	}
	return &csr[I]{rows: a.rows, cols: a.cols, ptr: ptr, ind: ind, data: data}
}

func (a *csr[I]) rowEntries(i int, fn func(int, float64)) {
	lo, hi := a.span(i)
	for k := lo; k < hi; k++ {
		fn(int(a.ind[k]), a.data[k])
	}
}

func (a *csr[I]) rowSqNorm(i int) float64 {
	lo, hi := a.span(i)
	var s float64
	for _, v := range a.data[lo:hi] {
		s += v * v
	}
	return s
}

// mul: U = A·W, one row of U per row of A, rows split between the goroutines.
func (a *csr[I]) mul(U []float64, ldu int, W []float64, ldw, k int) {
	parallel.For(a.rows, 64, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			u := U[i*ldu : i*ldu+k]
			clear(u)
			lo, hi := a.span(i)
			p := lo
			for ; p+4 <= hi; p += 4 {
				j0, j1, j2, j3 := int(a.ind[p]), int(a.ind[p+1]), int(a.ind[p+2]), int(a.ind[p+3])
				gemm.Axpy4(u, (*[4]float64)(a.data[p:p+4]), W[j0*ldw:j0*ldw+k], W[j1*ldw:j1*ldw+k], W[j2*ldw:j2*ldw+k], W[j3*ldw:j3*ldw+k])
			}
			for ; p < hi; p++ {
				j := int(a.ind[p])
				gemm.Axpy(u, a.data[p], W[j*ldw:j*ldw+k])
			}
		}
	})
}

// colBlocks splits the columns into blocks for the column-parallel products (tmul, gram), taken
// by the goroutines from a shared counter: each output entry is then accumulated by one goroutine
// in row order, and the result does not depend on the number of threads.
func (a *csr[I]) colBlocks(body func(c0, c1 int)) {
	w := parallel.Threads()
	nb := 1
	if w > 1 && a.nnz() > 4096 {
		nb = min(a.cols, 16*w)
	}
	width := (a.cols + nb - 1) / max(nb, 1)
	if nb <= 1 || width == 0 {
		body(0, a.cols)
		return
	}
	var next atomic.Int64
	parallel.Go(w, func(int) {
		for {
			b := int(next.Add(1)) - 1
			c0 := b * width
			if c0 >= a.cols {
				return
			}
			body(c0, min(c0+width, a.cols))
		}
	})
}

// first returns the position of row i's first entry in a column ≥ c (indices being sorted).
func (a *csr[I]) first(i, c int) int {
	lo, hi := a.span(i)
	if c == 0 || lo == hi {
		return lo
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return int(a.ind[lo+k]) >= c })
}

// tmul: out = Aᵀ·G, the columns of A (rows of out) split in blocks.
func (a *csr[I]) tmul(out []float64, ldo int, G []float64, ldg, k int) {
	a.colBlocks(func(c0, c1 int) {
		for j := c0; j < c1; j++ {
			clear(out[j*ldo : j*ldo+k])
		}
		for i := 0; i < a.rows; i++ {
			_, hi := a.span(i)
			g := G[i*ldg : i*ldg+k]
			for p := a.first(i, c0); p < hi; p++ {
				j := int(a.ind[p])
				if j >= c1 {
					break
				}
				gemm.Axpy(out[j*ldo:j*ldo+k], a.data[p], g)
			}
		}
	})
}

// gram: the upper triangle of G += Aᵀ diag(s) A, the rows of G split in blocks, and col += Aᵀs.
func (a *csr[I]) gram(G []float64, ldg int, s, col []float64) {
	a.colBlocks(func(c0, c1 int) {
		for i := 0; i < a.rows; i++ {
			si := s[i]
			if si == 0 {
				continue
			}
			_, hi := a.span(i)
			for p := a.first(i, c0); p < hi; p++ {
				j := int(a.ind[p])
				if j >= c1 {
					break
				}
				f := si * a.data[p]
				col[j] += f
				row := G[j*ldg:]
				for q := p; q < hi; q++ {
					row[a.ind[q]] += f * a.data[q]
				}
			}
		}
	})
}

func (a *csr[I]) colSqSums(s, out []float64) {
	for i := 0; i < a.rows; i++ {
		lo, hi := a.span(i)
		for p := lo; p < hi; p++ {
			out[a.ind[p]] += s[i] * a.data[p] * a.data[p]
		}
	}
}
