// Package xmat holds the input matrix X of a fit or a prediction when it is sparse: a compressed
// sparse row (CSR) matrix that views the caller's arrays (indptr, indices and data, with int32 or
// int64 indices as scipy.sparse gives them), with the products the solvers need (X·W, Xᵀ·G, the
// weighted Gram matrix Xᵀdiag(s)X, row norms and the inner products of kernels) in O(nnz) memory
// besides their outputs: X is never densified.
package xmat

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/budget"
	"gonum.org/v1/gonum/mat"
)

// Index is the integer type of a CSR matrix's indptr and indices: scipy uses int32 while nnz and
// the number of columns fit, int64 beyond.
type Index interface{ ~int32 | ~int64 }

// CSR is an m×n sparse matrix in canonical compressed sparse row form: row i holds the values
// data[indptr[i]:indptr[i+1]] in the columns indices[indptr[i]:indptr[i+1]], strictly increasing
// (sorted, no duplicates). It views the arrays it was built from; a CSR made by Copy or
// CopyRows owns its arrays. A CSR is read-only and safe for concurrent use.
type CSR struct {
	impl csrImpl
}

// csrImpl is implemented by csr[int32] and csr[int64], so that the inner loops are compiled
// for each index type rather than converting indices on every access.
type csrImpl interface {
	dims() (int, int)
	nnz() int
	span(i int) (int, int)
	slice(lo, hi int) csrImpl
	copyRows(rows []int) csrImpl
	transpose() csrImpl
	rowDense(i int, dst []float64)
	rowDot(i int, x []float64) float64
	rowAxpy(i int, f float64, dst []float64)
	rowSqNorm(i int) float64
	mul(U []float64, ldu int, W []float64, ldw, k int)
	tmul(out []float64, ldo int, G []float64, ldg, k int)
	gram(G []float64, ldg int, s []float64, col []float64)
	colSqSums(s []float64, out []float64)
	rowEntries(i int, fn func(col int, v float64))
	columnCounts(out []int)
	shiftColumns(c []float64) csrImpl
}

// New validates a CSR matrix with rows × cols entries and views its arrays (indptr of rows+1
// values, indices and data of nnz values each). Malformed arrays are an error naming the
// argument: indptr must start at 0, be non-decreasing and end at nnz; every index must lie in
// [0, cols) and increase strictly within a row; every value must be finite.
func New[I Index](rows, cols int, indptr, indices []I, data []float64) (*CSR, error) {
	c, err := newCSR(rows, cols, indptr, indices, data)
	if err != nil {
		return nil, err
	}
	return &CSR{impl: c}, nil
}

func newCSR[I Index](rows, cols int, indptr, indices []I, data []float64) (*csr[I], error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("X: negative shape %d×%d", rows, cols)
	}
	if len(indptr) != rows+1 {
		return nil, fmt.Errorf("indptr has %d entries, want rows + 1 = %d", len(indptr), rows+1)
	}
	if len(indices) != len(data) {
		return nil, fmt.Errorf("indices has %d entries but data has %d: both must hold nnz values", len(indices), len(data))
	}
	if indptr[0] != 0 {
		return nil, fmt.Errorf("indptr[0] = %d, want 0", int64(indptr[0]))
	}
	nnz := int64(len(data))
	for i := 0; i < rows; i++ {
		lo, hi := int64(indptr[i]), int64(indptr[i+1])
		if hi < lo {
			return nil, fmt.Errorf("indptr[%d] = %d < indptr[%d] = %d: indptr must be non-decreasing", i+1, hi, i, lo)
		}
		if hi > nnz {
			return nil, fmt.Errorf("indptr[%d] = %d exceeds nnz = %d (the length of indices and data)", i+1, hi, nnz)
		}
		prev := int64(-1)
		for k := lo; k < hi; k++ {
			j := int64(indices[k])
			if j < 0 || j >= int64(cols) {
				return nil, fmt.Errorf("indices[%d] = %d (row %d) is out of range [0, %d)", k, j, i, cols)
			}
			if j <= prev {
				return nil, fmt.Errorf("indices[%d] = %d (row %d) does not exceed the previous index %d: the column indices "+
					"of a row must be sorted and without duplicates (scipy: X.sum_duplicates())", k, j, i, prev)
			}
			prev = j
			if v := data[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("data[%d] = %v (X[%d, %d]): values must be finite", k, v, i, j)
			}
		}
	}
	if end := int64(indptr[rows]); end != nnz {
		return nil, fmt.Errorf("indptr[%d] = %d, want nnz = %d (the length of indices and data)", rows, end, nnz)
	}
	return &csr[I]{rows: rows, cols: cols, ptr: indptr, ind: indices, data: data}, nil
}

// FromDense returns the CSR form of a dense row-major rows×cols matrix (owning its arrays), for
// tests and small conversions.
func FromDense(rows, cols int, x []float64) *CSR {
	ptr := make([]int64, rows+1)
	var ind []int64
	var data []float64
	for i := 0; i < rows; i++ {
		for j, v := range x[i*cols : (i+1)*cols] {
			if v != 0 {
				ind = append(ind, int64(j))
				data = append(data, v)
			}
		}
		ptr[i+1] = int64(len(data))
	}
	return &CSR{impl: &csr[int64]{rows: rows, cols: cols, ptr: ptr, ind: ind, data: data}}
}

// Dims returns the shape.
func (a *CSR) Dims() (rows, cols int) { return a.impl.dims() }

// NNZ is the number of stored entries.
func (a *CSR) NNZ() int { return a.impl.nnz() }

// Bytes is the memory held by the arrays of a (indptr, indices and data).
func (a *CSR) Bytes() int64 {
	r, _ := a.Dims()
	w := int64(8)
	if _, ok := a.impl.(*csr[int32]); ok {
		w = 4
	}
	return w*int64(r+1) + (w+8)*int64(a.NNZ())
}

// Slice returns rows [lo, hi) as a view.
func (a *CSR) Slice(lo, hi int) *CSR { return &CSR{impl: a.impl.slice(lo, hi)} }

// CopyRows returns an owned copy of the listed rows, in that order.
func (a *CSR) CopyRows(rows []int) *CSR { return &CSR{impl: a.impl.copyRows(rows)} }

// Copy returns an owned copy of a.
func (a *CSR) Copy() *CSR {
	r, _ := a.Dims()
	idx := make([]int, r)
	for i := range idx {
		idx[i] = i
	}
	return a.CopyRows(idx)
}

// ColumnCounts returns the number of values each column stores.
func (a *CSR) ColumnCounts() []int {
	_, n := a.Dims()
	out := make([]int, n)
	a.impl.columnCounts(out)
	return out
}

// ShiftColumns returns a copy of a (new values and row pointers, a's indices) whose stored values
// of column j are c[j] lower. Where column j stores a value in every row it is X − 1cᵀ there,
// exactly: the centring a sparse X allows without densifying. The caller checks its arrays against
// the budget (Bytes bounds them).
func (a *CSR) ShiftColumns(c []float64) *CSR { return &CSR{impl: a.impl.shiftColumns(c)} }

// CentredDenseColumns returns a copy of a whose columns that store a value in every row are
// shifted by their mu (a − 1muᵀ there, exactly: the centring a sparse X allows without densifying),
// and that shift (mu on those columns, 0 elsewhere); nil, nil when no such column has a nonzero mu,
// the memory budget refuses the copy, or a shifted value leaves X's bounds (CheckMagnitude).
func (a *CSR) CentredDenseColumns(mu []float64) (*CSR, []float64) {
	m, n := a.Dims()
	shift := make([]float64, n)
	any := false
	for j, c := range a.ColumnCounts() {
		if c == m && m > 0 && mu[j] != 0 {
			shift[j], any = mu[j], true
		}
	}
	if !any || budget.Check(fmt.Sprintf("a copy of sparse X's values (%d samples × %d features, %d stored) with its dense columns centred",
		m, n, a.NNZ()), a.Bytes()) != nil {
		return nil, nil
	}
	shifted := a.ShiftColumns(shift)
	if shifted.CheckMagnitude("X") != nil {
		return nil, nil // centred values up to twice X's: let X's own bounds hold
	}
	return shifted, shift
}

// Transpose returns aᵀ as an owned CSR (n×m): the CSC form of a. Its row pointers and the
// sort's cursors hold two indices per column of a, whatever a stores (CheckTranspose).
func (a *CSR) Transpose() *CSR { return &CSR{impl: a.impl.transpose()} }

// CheckTranspose checks the row pointers of Transpose against the budget, naming a as name and
// what the transpose is for: a row pointer and a cursor per declared column, whatever a stores,
// so that a sparse matrix of ten rows declaring 2³⁶ columns asks for 1 TB. (Its indices and
// values are a copy of a's own, and are not counted: the callers transpose matrices whose rows
// they also hold m×m products of.)
func (a *CSR) CheckTranspose(name, purpose string) error {
	m, n := a.Dims()
	idx := int64(4)
	if wideTranspose(m, a.NNZ()) {
		idx = 8
	}
	return budget.Check(fmt.Sprintf("%s: the transpose of its %d columns, for %s", name, n, purpose),
		budget.Mul(2*idx, budget.Add(int64(n), 1)))
}

// RowDense writes row i into dst (n values, zeros included).
func (a *CSR) RowDense(i int, dst []float64) { a.impl.rowDense(i, dst) }

// RowNNZ is the number of stored entries of row i.
func (a *CSR) RowNNZ(i int) int {
	lo, hi := a.impl.span(i)
	return hi - lo
}

// RowDot returns ⟨row i, x⟩ for a dense x of n values.
func (a *CSR) RowDot(i int, x []float64) float64 { return a.impl.rowDot(i, x) }

// RowAxpy adds f·(row i) to the dense dst of n values.
func (a *CSR) RowAxpy(i int, f float64, dst []float64) { a.impl.rowAxpy(i, f, dst) }

// RowEntries calls fn for each stored entry of row i, in column order.
func (a *CSR) RowEntries(i int, fn func(col int, v float64)) { a.impl.rowEntries(i, fn) }

// SquaredNorms returns ‖row i‖² for every row.
func (a *CSR) SquaredNorms() []float64 {
	r, _ := a.Dims()
	out := make([]float64, r)
	for i := range out {
		out[i] = a.impl.rowSqNorm(i)
	}
	return out
}

// Mul writes U = A·W (q×k, row stride ldu) for W's first n rows (n×k, row stride ldw).
func (a *CSR) Mul(U []float64, ldu int, W []float64, ldw, k int) { a.impl.mul(U, ldu, W, ldw, k) }

// TMul writes out = Aᵀ·G (n×k, row stride ldo) for G (q×k, row stride ldg).
func (a *CSR) TMul(out []float64, ldo int, G []float64, ldg, k int) { a.impl.tmul(out, ldo, G, ldg, k) }

// Gram adds Aᵀ diag(s) A to the upper triangle of G (n×n, row stride ldg) and Aᵀs to col (n).
func (a *CSR) Gram(G []float64, ldg int, s, col []float64) { a.impl.gram(G, ldg, s, col) }

// ColumnSquareSums adds Σ_i s_i A_ij² to out_j: the diagonal of Aᵀ diag(s) A.
func (a *CSR) ColumnSquareSums(s, out []float64) { a.impl.colSqSums(s, out) }

// Equal reports whether a and b hold the same matrix (same shape, entries and values).
func Equal(a, b *CSR) bool {
	if a == nil || b == nil {
		return a == b
	}
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb || a.NNZ() != b.NNZ() {
		return false
	}
	for i := 0; i < ra; i++ {
		var ea, eb []float64
		a.RowEntries(i, func(c int, v float64) { ea = append(ea, float64(c), v) })
		b.RowEntries(i, func(c int, v float64) { eb = append(eb, float64(c), v) })
		if len(ea) != len(eb) {
			return false
		}
		for k := range ea {
			if ea[k] != eb[k] {
				return false
			}
		}
	}
	return true
}

// Raw returns owned int64 copies of indptr and indices and a copy of data, for serialisation.
func (a *CSR) Raw() (indptr, indices []int64, data []float64) {
	r, _ := a.Dims()
	indptr = make([]int64, r+1)
	for i := 0; i < r; i++ {
		a.RowEntries(i, func(c int, v float64) {
			indices = append(indices, int64(c))
			data = append(data, v)
		})
		indptr[i+1] = int64(len(data))
	}
	return indptr, indices, data
}

// Matrix is an input matrix X as the solvers take it: dense row-major (Dense) or sparse
// (Sparse), exactly one of them set.
type Matrix struct {
	Dense  *mat.Dense
	Sparse *CSR
	// SparseT and DenseT, optional, are the transpose of Sparse or Dense, kept by callers that
	// take many products against the same rows (Products needs SparseT; the dense kernel
	// products would otherwise copy Dense transposed, or the other operand, every time).
	SparseT *CSR
	DenseT  *mat.Dense
}

// WithTranspose returns x with its transpose (SparseT or DenseT) set. A dense transpose, as large
// as x, is made only where the memory budget allows it: the products it serves give the same
// values without it (copying an operand per call).
func (x Matrix) WithTranspose() Matrix {
	switch {
	case x.Sparse != nil && x.SparseT == nil:
		x.SparseT = x.Sparse.Transpose()
	case x.Sparse == nil && x.Dense != nil && x.DenseT == nil:
		r, c := x.Dense.Dims()
		if r > 0 && c > 0 && budget.Check("a transposed copy of the inputs", budget.Floats(r, c)) == nil {
			x.DenseT = Transpose(x.Dense)
		}
	}
	return x
}

// transposeTile is the side of the square tiles Transpose copies: a tile's rows of source and
// destination (8 KB each way) stay in the first level of cache while it is copied.
const transposeTile = 32

// Transpose returns a new matrix holding xᵀ (x has rows and columns).
func Transpose(x *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	t := mat.NewDense(c, r, nil)
	TransposeInto(t, x)
	return t
}

// TransposeInto sets dst (c×r) to the transpose of the first r rows and c columns of x, a tile
// at a time.
func TransposeInto(dst, x *mat.Dense) {
	c, r := dst.Dims()
	if xr, xc := x.Dims(); xr < r || xc < c {
		panic("xmat: TransposeInto: x is smaller than dst transposed")
	}
	src, out := x.RawMatrix(), dst.RawMatrix()
	for i0 := 0; i0 < r; i0 += transposeTile {
		i1 := min(r, i0+transposeTile)
		for j0 := 0; j0 < c; j0 += transposeTile {
			j1 := min(c, j0+transposeTile)
			for i := i0; i < i1; i++ {
				row := src.Data[i*src.Stride:]
				for j := j0; j < j1; j++ {
					out.Data[j*out.Stride+i] = row[j]
				}
			}
		}
	}
}

// Dims returns the shape of X.
func (x Matrix) Dims() (rows, cols int) {
	if x.Sparse != nil {
		return x.Sparse.Dims()
	}
	return x.Dense.Dims()
}

// Slice returns rows [lo, hi) of X as a view.
func (x Matrix) Slice(lo, hi int) Matrix {
	if x.Sparse != nil {
		return Matrix{Sparse: x.Sparse.Slice(lo, hi)}
	}
	_, n := x.Dense.Dims()
	out := Matrix{Dense: x.Dense.Slice(lo, hi, 0, n).(*mat.Dense)}
	if x.DenseT != nil && hi > lo {
		out.DenseT = x.DenseT.Slice(0, n, lo, hi).(*mat.Dense)
	}
	return out
}

// SquaredNorms returns the squared norm of every row of X.
func (x Matrix) SquaredNorms() []float64 {
	if x.Sparse != nil {
		return x.Sparse.SquaredNorms()
	}
	r, _ := x.Dense.Dims()
	out := make([]float64, r)
	for i := range out {
		var s float64 // in a register: summed into out[i], each addition waited for a store
		for _, v := range x.Dense.RawRowView(i) {
			s += v * v
		}
		out[i] = s
	}
	return out
}

// CopyRows returns an owned copy of the listed rows of X, in that order, in X's layout.
func (x Matrix) CopyRows(rows []int) Matrix {
	if x.Sparse != nil {
		return Matrix{Sparse: x.Sparse.CopyRows(rows)}
	}
	_, n := x.Dense.Dims()
	out := mat.NewDense(max(1, len(rows)), n, nil)
	if len(rows) == 0 {
		return Matrix{Dense: out.Slice(0, 0, 0, n).(*mat.Dense)}
	}
	for r, i := range rows {
		copy(out.RawRowView(r), x.Dense.RawRowView(i))
	}
	return Matrix{Dense: out}
}

// CheckMagnitude names the first row whose squared norm overflows (name is the argument's name):
// fits multiply inputs with themselves, so values beyond about 1e154 make them infinite.
func (a *CSR) CheckMagnitude(name string) error {
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		if math.IsInf(a.impl.rowSqNorm(i), 0) {
			var top float64
			a.RowEntries(i, func(_ int, v float64) { top = math.Max(top, math.Abs(v)) })
			return fmt.Errorf("%s row %d: its squared norm overflows (largest |value| %g): %s holds values too large; "+
				"scale %s (e.g. with MaxAbsScaler)", name, i, top, name, name)
		}
	}
	return nil
}

// Rows is the inputs of a prediction call: Q rows of N features, dense row-major (Dense, Q·N
// values; unchecked) or sparse (Sparse, Q×N CSR). Unlike Matrix it may have no rows.
type Rows struct {
	Q, N   int
	Dense  []float64
	Sparse *CSR
}

// DenseRows views q rows of n features, row-major.
func DenseRows(X []float64, q, n int) Rows { return Rows{Q: q, N: n, Dense: X} }

// SparseRows views the rows of a CSR matrix.
func SparseRows(X *CSR) Rows {
	q, n := X.Dims()
	return Rows{Q: q, N: n, Sparse: X}
}

// Slice returns rows [lo, hi).
func (r Rows) Slice(lo, hi int) Rows {
	if r.Sparse != nil {
		return Rows{Q: hi - lo, N: r.N, Sparse: r.Sparse.Slice(lo, hi)}
	}
	return Rows{Q: hi - lo, N: r.N, Dense: r.Dense[lo*r.N : hi*r.N]}
}
