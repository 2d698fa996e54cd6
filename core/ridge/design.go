package ridge

import (
	"fmt"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// design is the input matrix X (m×n) with an optional implicit column of ones for the intercept,
// kept implicit so that fitting never copies the caller's X. X is dense (X) or sparse (sp, CSR;
// X is then nil): every product the solvers take of X goes through the methods below, which never
// densify a sparse X (sparse.go).
type design struct {
	X         *mat.Dense
	sp        *xmat.CSR
	intercept bool
	// stop, when set, cuts the blocked passes over X (gram, tmul) short: their callers check it
	// and discard the partial result.
	stop *cancel.Flag
	// ones, when not nil, is [X 1] held explicitly (withOnes): mul and tmul then take the
	// intercept's column inside their products instead of a pass of its own over the m×d output.
	ones *mat.Dense
}

// withOnes returns d with [X 1] held explicitly when X is dense and has an intercept, and d itself
// otherwise. tmul's products are then the same sums in the same order (the ones column is the last
// term of each, and 1·v is exact; only where gemm.MulTN sums a tall X in slabs is the intercept's
// row summed slab by slab), one pass over the m×d operand shorter: for a wide output (1,000
// labels) the intercept's broadcast and column sums took 0.24 of the 1.77 CPU-seconds of a fit.
// (mul reads the copy's first n columns and adds the intercept within the product either way.)
// The copy costs m·(n+1) values, checked against the memory budget; when refused, d is returned
// as it is.
func (d design) withOnes() design {
	if d.sp != nil || !d.intercept || d.ones != nil {
		return d
	}
	m, n := d.X.Dims()
	if budget.Check(fmt.Sprintf("a copy of X (%d samples × %d features) with the intercept's column", m, n),
		budget.Mul(int64(m), int64(n+1), 8)) != nil {
		return d
	}
	ones := mat.NewDense(m, n+1, nil)
	for i := 0; i < m; i++ {
		row := ones.RawRowView(i)
		copy(row, d.X.RawRowView(i)[:n])
		row[n] = 1
	}
	d.ones = ones
	return d
}

// features is n, the number of columns of X.
func (d design) features() int {
	if d.sp != nil {
		_, n := d.sp.Dims()
		return n
	}
	_, n := d.X.Dims()
	return n
}

// samples is m, the number of rows of X.
func (d design) samples() int {
	if d.sp != nil {
		m, _ := d.sp.Dims()
		return m
	}
	m, _ := d.X.Dims()
	return m
}

// input is X as an xmat.Matrix.
func (d design) input() xmat.Matrix { return xmat.Matrix{Dense: d.X, Sparse: d.sp} }

// cols is the number of rows of W: n, plus one for the intercept.
func (d design) cols() int {
	n := d.features()
	if d.intercept {
		return n + 1
	}
	return n
}

// mul writes [X 1]·W into U (m×k).
func (d design) mul(U, W *mat.Dense) {
	n := d.features()
	m, k := U.Dims()
	if d.sp == nil {
		X, w := d.X, W.Slice(0, n, 0, k).(*mat.Dense).RawMatrix()
		if d.ones != nil {
			X = d.ones.Slice(0, m, 0, n).(*mat.Dense)
		}
		if d.intercept {
			// The intercept in the product's own pass (each sum starts from it): a separate pass
			// read and wrote U again.
			gemm.MulPanelBias(U.RawMatrix(), X.RawMatrix(), w, W.RawRowView(n)[:k])
		} else {
			gemm.MulPanel(U.RawMatrix(), X.RawMatrix(), w)
		}
		return
	}
	u, w := U.RawMatrix(), W.RawMatrix()
	d.sp.Mul(u.Data, u.Stride, w.Data, w.Stride, u.Cols)
	if d.intercept {
		gemm.AddRow(u, W.RawRowView(n)[:k])
	}
}

// tmul writes [X 1]ᵀ·G into out (cols()×k).
func (d design) tmul(out, G *mat.Dense) {
	if d.sp != nil {
		d.sparseTmul(out, G)
		return
	}
	X := d.X
	if d.ones != nil {
		X = d.ones
	}
	m, n := X.Dims()
	_, k := G.Dims()
	// Xᵀ·G over the rows as they are stored (no transposed copies), a block of rows at a time so
	// that a stop request ends a pass over a large X early.
	const block = 1 << 18
	dst := out.Slice(0, n, 0, k).(*mat.Dense).RawMatrix()
	if m == 0 {
		for j := 0; j < n; j++ {
			clear(dst.Data[j*dst.Stride:][:k])
		}
	}
	for lo := 0; lo < m; lo += block {
		if d.stop.Yield() {
			return
		}
		hi := min(lo+block, m)
		x, g := X.Slice(lo, hi, 0, n).(*mat.Dense).RawMatrix(), G.Slice(lo, hi, 0, k).(*mat.Dense).RawMatrix()
		if lo == 0 {
			gemm.MulTN(dst, x, g)
		} else {
			gemm.MulTNAdd(dst, x, g)
		}
	}
	if d.intercept && d.ones == nil {
		gemm.ColumnSums(out.RawRowView(n)[:k], G.RawMatrix())
	}
}

// penalty is ‖W‖²_F without the intercept row.
func (d design) penalty(W *mat.Dense) float64 {
	n := d.features()
	_, k := W.Dims()
	if raw := W.RawMatrix(); raw.Stride == k {
		// one vector dot over the contiguous rows: a scalar loop took a seventh of a sparse SGD
		// partial_fit chunk on 2²⁰ × 20 weights
		rows := raw.Data[:n*k]
		return floats.Dot(rows, rows)
	}
	var s float64
	for j := 0; j < n; j++ {
		row := W.RawRowView(j)[:k]
		s += floats.Dot(row, row)
	}
	return s
}

// addPenaltyGrad adds f·W to grad on every row but the intercept's.
func (d design) addPenaltyGrad(grad, W *mat.Dense, f float64) {
	n := d.features()
	_, k := W.Dims()
	for j := 0; j < n; j++ {
		g, w := grad.RawRowView(j), W.RawRowView(j)
		for a := 0; a < k; a++ {
			g[a] += f * w[a]
		}
	}
}

// gram is [X 1]ᵀ diag(s) [X 1], accumulated over blocks of rows so that X is never copied whole.
func (d design) gram(s []float64) *mat.SymDense {
	if d.sp != nil {
		return d.sparseGram(s)
	}
	m, n := d.X.Dims()
	// Blocks of rows of diag(s)·X, each multiplied into XᵀX's upper triangle: long enough for its
	// slabs to share the cores, short enough for the copy to stay small (a quarter of a
	// megabyte per feature). The copy and a block transpose ran on one thread, a quarter of the
	// set-up of a tall fit. Wide X takes fewer rows, about 2^33 multiply-adds a block, so that a
	// stop request is seen within a block: 32,768 rows of a 3,000-column Nyström map were 0.5 s
	// (probe DG).
	block := min(4*8192, max(256, (1<<33)/max(n*n, 1)))
	// Unit weights (no sample_weight) need no copy: diag(s)·X is X, bit for bit.
	unit := !slices.ContainsFunc(s, func(w float64) bool { return w != 1 })
	var xs *mat.Dense
	if !unit {
		xs = mat.NewDense(min(m, block), n, nil)
	}
	top := mat.NewDense(n, n, nil)
	col, part := make([]float64, n), make([]float64, n)
	var total float64
	for lo := 0; lo < m; lo += block {
		if d.stop.Yield() {
			break
		}
		hi := min(lo+block, m)
		rows := d.X.Slice(lo, hi, 0, n).(*mat.Dense)
		b := rows
		if !unit {
			b = xs.Slice(0, hi-lo, 0, n).(*mat.Dense)
			parallel.For(hi-lo, parallel.RowsPerChunk(n), func(i0, i1 int) {
				for i := i0; i < i1; i++ {
					floats.ScaleTo(b.RawRowView(i), s[lo+i], d.X.RawRowView(lo + i)[:n])
				}
			})
		}
		gemm.MulTNUpperAdd(top.RawMatrix(), b.RawMatrix(), rows.RawMatrix())
		if d.intercept {
			gemm.ColumnSums(part, b.RawMatrix())
			floats.Add(col, part)
		}
		for _, w := range s[lo:hi] {
			total += w
		}
	}
	g := mat.NewSymDense(d.cols(), nil)
	for a := 0; a < n; a++ {
		for b := a; b < n; b++ {
			g.SetSym(a, b, top.At(a, b))
		}
	}
	if d.intercept {
		for j := 0; j < n; j++ {
			g.SetSym(j, n, col[j])
		}
		g.SetSym(n, n, total)
	}
	return g
}
