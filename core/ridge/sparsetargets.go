package ridge

import (
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
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
	c    []float64  // the most common value of each column of Δ
	// B by rows (rowPtr, rowCol, rowVal) and by columns (colPtr, colRow, colVal)
	rowPtr, rowCol []int
	rowVal         []float64
	colPtr, colRow []int
	colVal         []float64
	// scratch
	vt, qt *mat.Dense // d×k: Vᵀ and Qᵀ
	vs     *mat.Dense // k×d: V S
	vc     []float64  // V c, k
	f      *mat.Dense // m×1: f
	z      *mat.Dense // k×1: X̃ᵀ f
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
// fused multiply-add in gemm: measured on the many-label benchmark (dot products and axpys of
// length k ≈ 100 against the blocked kernel), it keeps the dense form when B is not sparse enough
// to pay for the change.
const sparseTargetGather = 3.0

// newSparseTargetSystem returns the sparse-target form of H for des with the Gram matrix G of des
// (k×k), or nil when it would cost more than the products with X it replaces.
func newSparseTargetSystem(p *Problem, des design, G *mat.SymDense) *sparseTargetSystem {
	m, d := p.Delta.Dims()
	if sparseTargetMode == sparseTargetNever || G == nil || m == 0 {
		return nil
	}
	c := columnModes(p.Delta)
	nnz := 0
	perRow := make([]int, m)
	for i := 0; i < m; i++ {
		for a, v := range p.Delta.RawRowView(i)[:d] {
			if v != c[a] {
				perRow[i]++
			}
		}
		nnz += perRow[i]
	}
	k := des.cols()
	if sparseTargetMode != sparseTargetAlways && !sparseTargetPays(des, perRow, nnz, m, k, d) {
		return nil
	}
	ts := &sparseTargetSystem{p: p, des: des, gram: mat.DenseCopyOf(G), c: c,
		rowPtr: make([]int, m+1), rowCol: make([]int, nnz), rowVal: make([]float64, nnz),
		colPtr: make([]int, d+1), colRow: make([]int, nnz), colVal: make([]float64, nnz),
		vt: mat.NewDense(d, k, nil), qt: mat.NewDense(d, k, nil), vs: mat.NewDense(k, d, nil),
		vc: make([]float64, k), f: mat.NewDense(m, 1, nil), z: mat.NewDense(k, 1, nil)}
	t := 0
	for i := 0; i < m; i++ {
		for a, v := range p.Delta.RawRowView(i)[:d] {
			if v != c[a] {
				ts.rowCol[t], ts.rowVal[t] = a, v-c[a]
				ts.colPtr[a+1]++
				t++
			}
		}
		ts.rowPtr[i+1] = t
	}
	for a := 0; a < d; a++ {
		ts.colPtr[a+1] += ts.colPtr[a]
	}
	next := append([]int(nil), ts.colPtr[:d]...)
	for i := 0; i < m; i++ {
		for t := ts.rowPtr[i]; t < ts.rowPtr[i+1]; t++ {
			a := ts.rowCol[t]
			ts.colRow[next[a]], ts.colVal[next[a]] = i, ts.rowVal[t]
			next[a]++
		}
	}
	return ts
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

// columnModes returns the most common value of each column of a (m×d) by the majority vote of
// Boyer and Moore, which finds a value held by more than half the rows and otherwise some value of
// the column: B stays correct either way, only less sparse.
func columnModes(a *mat.Dense) []float64 {
	m, d := a.Dims()
	mode, count := make([]float64, d), make([]int, d)
	for i := 0; i < m; i++ {
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
	m, d := ts.p.Delta.Dims()
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
		for a := lo; a < hi; a++ {
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
	transposeInto(ts.vt, V)
	for j := 0; j < k; j++ {
		var s float64
		for a, v := range V.RawRowView(j)[:d] {
			s += v * ts.c[a]
		}
		ts.vc[j] = s
	}
	f, w := ts.f.RawMatrix().Data, ts.p.Weight
	parallel.For(m, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
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
	ts.scatter()
	ts.p.mulS(ts.vs, V)
	gemm.Mul(dst.RawMatrix(), ts.gram.RawMatrix(), ts.vs.RawMatrix())
	ts.add(dst)
	ts.des.addPenaltyGrad(dst, V, 2*ts.p.Alpha)
}
