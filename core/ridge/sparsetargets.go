package ridge

import (
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// sparseTargetSystem applies the same H as linearSystem through the Gram matrix G and the
// sparsity of the centred targets. Each column a of Δ is written c_a + B_{·a}, c_a being the
// column's most common value, so that B is sparse whenever the structures are (a multi-label
// target with few labels on, a path in a taxonomy, a ranking's pairs relative to the most common
// order). With v_a the column a of V and r_i = x̃_iᵀVδ_i = Σ_{a: b_ia ≠ 0} b_ia⟨x̃_i, v_a⟩ + ⟨x̃_i, Vc⟩,
//
//	H V = 2αE V + G V S + Q + (X̃ᵀf) cᵀ,  f_i = s_i r_i,  column a of Q = Σ_{i: b_ia ≠ 0} f_i b_ia x̃_i,
//
// which costs about 4·nnz(B)·k (for a dense X; Σ nnz(x_i)·nnz(b_i) for a sparse one) plus
// 2·k²·d for G V S, where linearSystem's two products with X cost 4·m·k·d: a problem with many
// labels of which each example has a few costs about what d independent ridge problems cost.
type sparseTargetSystem struct {
	p    *Problem
	des  design
	gram *mat.Dense // G, k×k
	*sparseTargets
	// scratch
	vt, qt *mat.Dense // d×k: Vᵀ and Qᵀ
	vs     *mat.Dense // k×d: V S
	vc     []float64  // V c, k
	f      *mat.Dense // m×1: f
	z      *mat.Dense // k×1: X̃ᵀ f
}

// sparseTargets is Δ (m×d) written as c + B: c the most common value of each column, B sparse,
// held by rows (rowPtr, rowCol, rowVal) and by columns (colPtr, colRow, colVal).
type sparseTargets struct {
	m, d           int
	c              []float64
	rowPtr, rowCol []int
	rowVal         []float64
	colPtr, colRow []int
	colVal         []float64
}

// row writes δ_i into buf (length d) and returns it.
func (t *sparseTargets) row(i int, buf []float64) []float64 {
	copy(buf, t.c)
	for k := t.rowPtr[i]; k < t.rowPtr[i+1]; k++ {
		buf[t.rowCol[k]] += t.rowVal[k]
	}
	return buf
}

// newSparseTargets returns the targets with column values c and the entries of B given by rows
// (rowPtr, rowCol, rowVal), building B's columns.
func newSparseTargets(m, d int, c []float64, rowPtr, rowCol []int, rowVal []float64) *sparseTargets {
	nnz := rowPtr[m]
	t := &sparseTargets{m: m, d: d, c: c, rowPtr: rowPtr, rowCol: rowCol, rowVal: rowVal,
		colPtr: make([]int, d+1), colRow: make([]int, nnz), colVal: make([]float64, nnz)}
	for _, a := range rowCol[:nnz] {
		t.colPtr[a+1]++
	}
	for a := 0; a < d; a++ {
		t.colPtr[a+1] += t.colPtr[a]
	}
	next := append([]int(nil), t.colPtr[:d]...)
	for i := 0; i < m; i++ {
		for k := rowPtr[i]; k < rowPtr[i+1]; k++ {
			a := rowCol[k]
			t.colRow[next[a]], t.colVal[next[a]] = i, rowVal[k]
			next[a]++
		}
	}
	return t
}

// denseTargets writes a dense Δ as c + B for the column values c (columnModes), or returns nil
// once stop is seen set (nil never stops).
func denseTargets(delta *mat.Dense, c []float64, stop *cancel.Flag) *sparseTargets {
	m, d := delta.Dims()
	rowPtr := make([]int, m+1)
	var rowCol []int
	var rowVal []float64
	for i := 0; i < m; i++ {
		if i%stopRows == 0 && stop.Stopped() {
			return nil
		}
		for a, v := range delta.RawRowView(i)[:d] {
			if v != c[a] {
				rowCol, rowVal = append(rowCol, a), append(rowVal, v-c[a])
			}
		}
		rowPtr[i+1] = len(rowCol)
	}
	return newSparseTargets(m, d, c, rowPtr, rowCol, rowVal)
}

// cubeTargets is Δ = Y − 1pᵀ for 0/1 targets Y (m×d) given by the positions of their ones
// (indptr, indices: CSR without values, validated by the caller) and the mean p: a column with at
// most half its entries on has c_a = −p_a and B's entries 1 where Y is on; a column mostly on has
// c_a = 1 − p_a and B's entries −1 where Y is off. nnz(B) is at most nnz(Y), and m·d never appears.
func cubeTargets(m, d int, indptr, indices []int64, p []float64) *sparseTargets {
	on := make([]int, d)
	for _, a := range indices[:indptr[m]] {
		on[a]++
	}
	c := make([]float64, d)
	var frequent []int // the columns mostly on
	for a := range c {
		c[a] = -p[a]
		if 2*on[a] > m {
			c[a] = 1 - p[a]
			frequent = append(frequent, a)
		}
	}
	mostlyOn := make([]bool, d)
	for _, a := range frequent {
		mostlyOn[a] = true
	}
	rowPtr := make([]int, m+1)
	var rowCol []int
	var rowVal []float64
	mark := make([]bool, d)
	for i := 0; i < m; i++ {
		row := indices[indptr[i]:indptr[i+1]]
		for _, a := range row {
			if mostlyOn[a] {
				mark[a] = true
			} else {
				rowCol, rowVal = append(rowCol, int(a)), append(rowVal, 1)
			}
		}
		for _, a := range frequent {
			if !mark[a] {
				rowCol, rowVal = append(rowCol, a), append(rowVal, -1)
			}
			mark[a] = false
		}
		rowPtr[i+1] = len(rowCol)
	}
	// rows are in column order within each kind; the products do not depend on the order
	return newSparseTargets(m, d, c, rowPtr, rowCol, rowVal)
}

// sparseTargetMode forces (sparseTargetAlways) or forbids (sparseTargetNever) the sparse-target
// form for tests and benchmarks; sparseTargetAuto chooses it by cost.
var sparseTargetMode = sparseTargetAuto

const (
	sparseTargetAuto = iota
	sparseTargetNever
	sparseTargetAlways
)

// sparseTargetGather is how many times more a scattered product per entry of B costs than one
// fused multiply-add in gemm: measured on the many-label benchmark (5000 × 100, d = 1000, 30 % of
// labels on: the sparse form took 1.28× the dense one's time, 2.55 s against 2.0 s, once the dense
// products ran on gemm's panel kernels), it keeps the dense form when B is not sparse enough to
// pay for the change.
const sparseTargetGather = 4.5

// newSparseTargetSystem returns the sparse-target form of H for des with the Gram matrix G of des
// (k×k), or nil when it would cost more than the products with X it replaces. A Problem whose
// targets are only held sparsely (p.targets) always gets it.
func newSparseTargetSystem(p *Problem, des design, G *mat.SymDense) *sparseTargetSystem {
	m, d := p.dims()
	if G == nil || m == 0 {
		return nil
	}
	t := p.targets
	if t == nil {
		if sparseTargetMode == sparseTargetNever {
			return nil
		}
		if sparseTargetMode != sparseTargetAlways && m >= 4*sparseTargetMinSample && clearlyDenseTargets(p.Delta, des, d) {
			return nil
		}
		// Each of the three passes over Δ takes a tenth of a second or more at 1,000,000 × 60:
		// they return early at a stop request, and the caller returns ErrCancelled.
		c := columnModes(p.Delta, des.stop)
		perRow := make([]int, m)
		nnz := countOffMode(p.Delta, c, perRow, des.stop)
		if des.stop.Yield() || sparseTargetMode != sparseTargetAlways && !sparseTargetPays(des, perRow, nnz, m, des.cols(), d) {
			return nil
		}
		if t = denseTargets(p.Delta, c, des.stop); t == nil {
			return nil
		}
	}
	k := des.cols()
	return &sparseTargetSystem{p: p, des: des, gram: denseOfSymmetric(G), sparseTargets: t,
		vt: mat.NewDense(d, k, nil), qt: mat.NewDense(d, k, nil), vs: mat.NewDense(k, d, nil),
		vc: make([]float64, k), f: mat.NewDense(m, 1, nil), z: mat.NewDense(k, 1, nil)}
}

// sparseTargetPays compares the arithmetic of one application of both forms.
func sparseTargetPays(des design, perRow []int, nnz, m, k, d int) bool {
	var scattered, products float64
	if des.sp == nil {
		scattered = 4 * float64(nnz) * float64(k)
		products = 4 * float64(m) * float64(k) * float64(d)
	} else {
		for i, b := range perRow {
			x := des.sp.RowNNZ(i) + 1 // the intercept
			scattered += 4 * float64(b) * float64(x)
		}
		products = 4 * float64(des.sp.NNZ()+m) * float64(d)
	}
	return sparseTargetGather*scattered+2*float64(k)*float64(k)*float64(d) < products
}

// clearlyDenseTargets judges the targets from sparseTargetSample evenly spaced rows, or from every
// fourth row of a problem with fewer than four times as many (at least sparseTargetMinSample): on
// the many-label benchmark (5,000 rows, 1,000 labels, 30 % on) the two exact passes over Δ it
// skips took 45 ms of a 0.8 s fit, on one thread.
const (
	sparseTargetSample    = 4096
	sparseTargetMinSample = 256
)

// sparseTargetMargin is how far the sampled cost of the sparse form must exceed the products it
// would replace for clearlyDenseTargets to skip the exact count: a sample of 4096 rows estimates
// the share of entries off their column's mode to about 1 % (binomial), well inside 25 %.
const sparseTargetMargin = 1.25

// clearlyDenseTargets reports whether a sample of the rows of Δ (every m/sparseTargetSample-th,
// or every fourth) shows that the sparse-target form would cost more than sparseTargetMargin
// times the products it replaces, so that the two exact passes over Δ (columnModes and the count,
// a tenth of a second each at a million rows on one thread, in a fit of 3.7 s) are skipped. It
// only chooses the cheaper of two forms of the same H, never the answer.
func clearlyDenseTargets(delta *mat.Dense, des design, d int) bool {
	m, _ := delta.Dims()
	rows := min(sparseTargetSample, m/4)
	step := m / rows
	sample := mat.NewDense(rows, d, nil)
	for r := range rows {
		copy(sample.RawRowView(r), delta.RawRowView(r * step)[:d])
	}
	counts := make([]int, rows)
	nnz := countOffMode(sample, columnModes(sample, nil), counts, nil)
	// Each sampled row stands for m/rows rows, at the place sparseTargetPays reads the sparse X's
	// row length; the counts are discounted by the margin.
	scale := float64(m) / float64(rows) / sparseTargetMargin
	perRow := make([]int, m)
	for r, b := range counts {
		perRow[r*step] = int(math.Ceil(float64(b) * scale))
	}
	return !sparseTargetPays(des, perRow, int(math.Ceil(float64(nnz)*scale)), m, des.cols(), d)
}

// countOffMode writes into perRow the number of entries of each row of delta that differ from
// their column's c, and returns their total; once stop is seen set, it returns the count so far.
func countOffMode(delta *mat.Dense, c []float64, perRow []int, stop *cancel.Flag) int {
	nnz := 0
	for i := range perRow {
		if i%stopRows == 0 && stop.Stopped() {
			return nnz
		}
		perRow[i] = 0
		for a, v := range delta.RawRowView(i)[:len(c)] {
			if v != c[a] {
				perRow[i]++
			}
		}
		nnz += perRow[i]
	}
	return nnz
}

// columnModes returns the most common value of each column of a (m×d) by the majority vote of
// Boyer and Moore, which finds a value held by more than half the rows and otherwise some value of
// the column: B stays correct either way, only less sparse. Once stop is seen set, it returns the
// votes of the rows so far.
func columnModes(a *mat.Dense, stop *cancel.Flag) []float64 {
	m, d := a.Dims()
	mode, count := make([]float64, d), make([]int, d)
	for i := 0; i < m && (i%stopRows != 0 || !stop.Stopped()); i++ {
		for j, v := range a.RawRowView(i)[:d] {
			switch {
			case count[j] == 0:
				mode[j], count[j] = v, 1
			case mode[j] == v:
				count[j]++
			default:
				count[j]--
			}
		}
	}
	return mode
}

// rhs returns X̃ᵀ diag(s) Δ, linearSystem's B, through B and c.
func (ts *sparseTargetSystem) rhs() *mat.Dense {
	m, d := ts.p.dims()
	copy(ts.f.RawMatrix().Data, ts.p.Weight[:m])
	ts.scatter()
	out := mat.NewDense(ts.des.cols(), d, nil)
	ts.add(out)
	return out
}

// scatter writes Qᵀ (rows q_a) and z = X̃ᵀf for the f in ts.f.
func (ts *sparseTargetSystem) scatter() {
	d, _ := ts.qt.Dims()
	n := ts.des.features()
	f := ts.f.RawMatrix().Data
	parallel.For(d, 8, func(lo, hi int) {
		for a := lo; a < hi && !ts.des.stop.Stopped(); a++ {
			q := ts.qt.RawRowView(a)
			clear(q)
			for t := ts.colPtr[a]; t < ts.colPtr[a+1]; t++ {
				i := ts.colRow[t]
				g := f[i] * ts.colVal[t]
				if g == 0 {
					continue
				}
				ts.des.rowAxpy(i, g, q[:n])
				if ts.des.intercept {
					q[n] += g
				}
			}
		}
	})
	ts.des.tmul(ts.z, ts.f)
}

// add adds Q + z cᵀ to dst (k×d).
func (ts *sparseTargetSystem) add(dst *mat.Dense) {
	d, k := ts.qt.Dims()
	qt, z := ts.qt.RawMatrix().Data, ts.z.RawMatrix().Data
	for j := 0; j < k; j++ {
		out := dst.RawRowView(j)[:d]
		for a := range out {
			out[a] += qt[a*k+j] + z[j]*ts.c[a]
		}
	}
}

func (ts *sparseTargetSystem) apply(dst, V *mat.Dense) {
	d, k := ts.vt.Dims()
	n := ts.des.features()
	m := len(ts.rowPtr) - 1
	xmat.TransposeInto(ts.vt, V)
	for j := 0; j < k; j++ {
		var s float64
		for a, v := range V.RawRowView(j)[:d] {
			s += v * ts.c[a]
		}
		ts.vc[j] = s
	}
	f, w := ts.f.RawMatrix().Data, ts.p.Weight
	// A stop request cuts the product short (every stopRows rows and between its passes): the CG
	// loop sees the flag and discards what it holds. One application took 0.4 s at 1,000,000 × 60.
	stop := ts.des.stop
	parallel.For(m, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if (i-lo)%stopRows == 0 && stop.Stopped() {
				return
			}
			if w[i] == 0 {
				f[i] = 0
				continue
			}
			r := ts.des.rowDot(i, ts.vc[:n])
			if ts.des.intercept {
				r += ts.vc[n]
			}
			for t := ts.rowPtr[i]; t < ts.rowPtr[i+1]; t++ {
				va := ts.vt.RawRowView(ts.rowCol[t])
				x := ts.des.rowDot(i, va[:n])
				if ts.des.intercept {
					x += va[n]
				}
				r += ts.rowVal[t] * x
			}
			f[i] = w[i] * r
		}
	})
	if stop.Stopped() {
		return
	}
	ts.scatter()
	ts.p.mulS(ts.vs, V)
	gemm.Mul(dst.RawMatrix(), ts.gram.RawMatrix(), ts.vs.RawMatrix())
	ts.add(dst)
	ts.des.addPenaltyGrad(dst, V, 2*ts.p.Alpha)
}
