package ridge

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// groupedSystem applies the same H as linearSystem when the examples' centred targets δ_i take
// few distinct values δ_g (g ≪ m: a multi-class problem has at most d, yeast's 1500 label sets
// 198), through
//
//	H V = 2αE V + G V S + Σ_g δ_g-weighted rows,  with the last term X̃ᵀ diag(s∘r) Δ = Σ_g q_g δ_gᵀ,
//	r_i = x̃_iᵀ V δ_{g(i)},  q_g = Σ_{i: g(i) = g} s_i r_i x̃_i,
//
// where G = X̃ᵀ diag(s) X̃ is the Gram matrix the preconditioner needs anyway. The products with X
// that cost 2·m·k·d per application elsewhere become one pass over X of 2·m·k (r_i from row g(i)
// of Δ_G Vᵀ, then q_g), with products of size g·k·d and k²·d around it: on yeast about a quarter
// of the arithmetic of narrowSystem.
type groupedSystem struct {
	p         *Problem
	des       design // X (m×n)
	intercept bool
	gram      *mat.Dense // G, k×k
	s         *mat.Dense // S, d×d
	deltas    *mat.Dense // Δ_G, g×d: the distinct δ_i
	// deltasT is Δ_Gᵀ (d×g), so that Δ_Gᵀ Q reads it row by row: Δ_G read down its columns was
	// copied into groups of four rows at every application (a twentieth of yeast's fit).
	deltasT *mat.Dense
	// sparse, when not nil, is Δ_G written as 1cᵀ + B with B sparse (sparseTargets: the distinct
	// label sets of a multi-label problem, each with a few labels on): Δ_G Vᵀ and Δ_Gᵀ Q are then
	// sums of a few rows of Vᵀ and Q (groupedSparseShare), and vc = V c.
	sparse  *sparseTargets
	vc      []float64
	members []int // the examples of group g, ascending: members[start[g]:start[g+1]]
	start   []int
	// xs, for a dense X of at most groupedCopyEntries entries, holds X's rows in the order of
	// members, so that each application reads X front to back (taken in the examples' order,
	// rows are fetched from across X, and the prefetcher cannot follow: 3.3 ms of a 9.7 ms fit
	// on yeast), and ws their weights. Each row is x̃_i itself: the features, then 1 for the
	// intercept, then zeros up to a multiple of four entries, so that the scores and the updates
	// run in whole vectors without a scalar tail or a separate intercept term (yeast's 103
	// features and intercept make 104). pt's and q's rows have the same padded length (stride),
	// their padding zero.
	xs     *mat.Dense
	ws     []float64
	stride int
	// scratch
	vt, svt, hv, qd *mat.Dense // d×k: Vᵀ, S Vᵀ, S Vᵀ G and Δ_Gᵀ Q
	pt, q           *mat.Dense // g×k views of g×stride matrices: Δ_G Vᵀ and Q (rows q_g)
}

// groupedMaxShare is the largest share of distinct targets among the examples for which
// groupedSystem is used: its products of size g·k·d cost as much as narrowSystem's when g = m.
const groupedMaxShare = 0.25

// groupedSparseShare is the largest share of B's entries among those of Δ_G for which the
// products with Δ_G run as sums of rows: an entry then costs two vector updates of k values where
// the panel kernels spend 2·d multiply–adds per row of Δ_G at a few times the rate. Yeast's 164
// distinct label sets have 0.30 of their 14 labels on: its fit, alternated in one process with the
// panel products, took 2–4 % less (6.65 → 6.47 ms and 8.19 → 7.86 ms, medians of 400).
const groupedSparseShare = 0.4

// groupedCols bounds the outputs of groupedSystem: its products with S and Δ_G grow as d².
const groupedCols = 64

// groupedProbe is the number of examples after which newGroupedSystem gives up if they already
// hold too many distinct targets.
const groupedProbe = 4096

// newGroupedSystem returns the grouped form of H for des with the Gram matrix G of des (k×k), or
// nil when the targets are too varied or the outputs too wide (groupedCols) for it.
func newGroupedSystem(p *Problem, des design, G *mat.SymDense) *groupedSystem {
	m, d := p.dims()
	if d >= groupedCols || p.S == nil || m == 0 {
		return nil
	}
	limit := int(groupedMaxShare * float64(m))
	index := make(map[string]int)
	group := make([]int, m)
	var distinct []float64
	key := make([]byte, 8*d)
	for i := 0; i < m; i++ {
		if i%stopRows == 0 && des.stop.Yield() {
			return nil // the caller sees the stop request
		}
		row := p.Delta.RawRowView(i)[:d]
		for a, v := range row {
			binary.LittleEndian.PutUint64(key[8*a:], math.Float64bits(v))
		}
		g, ok := index[string(key)]
		if !ok {
			if len(index) == limit {
				return nil
			}
			g = len(index)
			index[string(key)] = g
			distinct = append(distinct, row...)
		}
		group[i] = g
		if i+1 == groupedProbe && len(index) > int(groupedMaxShare*groupedProbe) {
			return nil // give up early rather than index up to a quarter of a large data set
		}
	}
	ng := len(index)
	k := des.cols()
	// The examples listed by group, so that each q_g is summed by one goroutine, over its
	// examples in their order.
	start := make([]int, ng+1)
	for _, g := range group {
		start[g+1]++
	}
	for g := 0; g < ng; g++ {
		start[g+1] += start[g]
	}
	members, next := make([]int, m), slices.Clone(start[:ng])
	for i, g := range group {
		members[next[g]] = i
		next[g]++
	}
	stride := (k + 3) &^ 3
	padded := func(rows int) *mat.Dense {
		return mat.NewDense(rows, stride, nil).Slice(0, rows, 0, k).(*mat.Dense)
	}
	deltas := mat.NewDense(ng, d, distinct)
	gs := &groupedSystem{p: p, des: des, intercept: des.intercept, gram: denseOfSymmetric(G), s: denseOfSymmetric(p.S),
		deltas: deltas, deltasT: mat.DenseCopyOf(deltas.T()), members: members, start: start, stride: stride,
		vt: mat.NewDense(d, k, nil), svt: mat.NewDense(d, k, nil), hv: mat.NewDense(d, k, nil), qd: mat.NewDense(d, k, nil),
		pt: padded(ng), q: padded(ng)}
	if c := columnModes(gs.deltas, nil); countOffMode(gs.deltas, c, make([]int, ng), nil) <= int(groupedSparseShare*float64(ng*d)) {
		gs.sparse, gs.vc = denseTargets(gs.deltas, c, nil), make([]float64, k)
	}
	// The copy is a speed-up, not a need: where the budget refuses it, X is read in place.
	if n := des.features(); des.sp == nil && m*stride <= groupedCopyEntries && budget.Check("", budget.Floats(m, stride+1)) == nil {
		gs.xs, gs.ws = mat.NewDense(m, stride, scratchFloats(m*stride)), make([]float64, m) // released by release
		for j, i := range members {
			row := gs.xs.RawRowView(j)
			clear(row[copy(row, des.X.RawRowView(i)):]) // the padding too: the buffer is recycled
			if des.intercept {
				row[n] = 1
			}
			gs.ws[j] = p.Weight[i]
		}
	}
	return gs
}

// rhs returns B = X̃ᵀ diag(s) Δ, the right-hand side of H W = B, as Σ_g z_g δ_gᵀ with z_g the
// weighted sum of group g's rows: one pass over the copy of X and a product of size g·k·d, where
// the product with every δ_i took 2·m·k·d (a twentieth of yeast's fit). Without the copy it is
// linearSystem's.
func (gs *groupedSystem) rhs() *mat.Dense {
	if gs.xs == nil {
		return newLinearSystem(gs.p, gs.des).B
	}
	ng, d := gs.deltas.Dims()
	k := gs.des.cols()
	xs := gs.xs.RawMatrix()
	row := func(j int) []float64 { return xs.Data[j*xs.Stride : j*xs.Stride+k] }
	Z := mat.NewDense(ng, k, nil)
	for g := 0; g < ng; g++ {
		z := Z.RawRowView(g)
		lo, hi := gs.start[g], gs.start[g+1]
		for ; lo+4 <= hi; lo += 4 {
			gemm.Axpy4(z, (*[4]float64)(gs.ws[lo:lo+4]), row(lo), row(lo+1), row(lo+2), row(lo+3))
		}
		for ; lo < hi; lo++ {
			gemm.Axpy(z, gs.ws[lo], row(lo))
		}
	}
	B := mat.NewDense(k, d, nil)
	gemm.MulTN(B.RawMatrix(), Z.RawMatrix(), gs.deltas.RawMatrix())
	return B
}

// release hands the copy of X back to scratchPool, at the end of the solve.
func (gs *groupedSystem) release() {
	if gs.xs != nil {
		releaseFloats(gs.xs.RawMatrix().Data)
		gs.xs = nil
	}
}

// paddedRow is row g of a g×stride matrix viewed as pt and q are, padding included.
func (gs *groupedSystem) paddedRow(v *mat.Dense, g int) []float64 {
	raw := v.RawMatrix()
	return raw.Data[g*raw.Stride : g*raw.Stride+gs.stride]
}

// groupedCopyEntries bounds the copy of X that groupedSystem keeps (8 bytes an entry).
const groupedCopyEntries = 1 << 22

func (gs *groupedSystem) apply(dst, V *mat.Dense) {
	d, k := gs.vt.Dims()
	n := gs.des.features()
	xmat.TransposeInto(gs.vt, V)
	if gs.sparse != nil {
		clear(gs.vc)
		for a, c := range gs.sparse.c {
			if c != 0 {
				gemm.Axpy(gs.vc, c, gs.vt.RawRowView(a))
			}
		}
	} else {
		gemm.MulPanel(gs.pt.RawMatrix(), gs.deltas.RawMatrix(), gs.vt.RawMatrix())
	}
	w := gs.p.Weight
	ng, _ := gs.q.Dims()
	minGroups := 4
	if gs.start[ng]*(n+1) < parallel.MinWork {
		minGroups = ng
	}
	parallel.For(ng, minGroups, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			if gs.sparse != nil {
				gs.sparseRowTimesVt(g)
			}
			if gs.xs != nil {
				q := gs.paddedRow(gs.q, g)
				clear(q)
				gs.addGroupRows(gs.start[g], gs.start[g+1], gs.paddedRow(gs.pt, g), q)
				continue
			}
			pr, q := gs.pt.RawRowView(g), gs.q.RawRowView(g)
			clear(q)
			for _, i := range gs.members[gs.start[g]:gs.start[g+1]] {
				if w[i] != 0 {
					gs.addRow(i, pr, q)
				}
			}
		}
	})
	if gs.sparse != nil {
		gs.sparseTTimesQ()
	} else {
		gemm.MulPanel(gs.qd.RawMatrix(), gs.deltasT.RawMatrix(), gs.q.RawMatrix())
	}
	gemm.MulPanel(gs.svt.RawMatrix(), gs.s.RawMatrix(), gs.vt.RawMatrix())
	gemm.MulPanel(gs.hv.RawMatrix(), gs.svt.RawMatrix(), gs.gram.RawMatrix())
	hv, qd := gs.hv.RawMatrix().Data, gs.qd.RawMatrix().Data
	f := 2 * gs.p.Alpha
	for j := 0; j < k; j++ {
		out, v := dst.RawRowView(j)[:d], V.RawRowView(j)[:d]
		pen := f
		if gs.intercept && j == n {
			pen = 0
		}
		for a := range out {
			out[a] = hv[a*k+j] + qd[a*k+j] + pen*v[a]
		}
	}
}

// addRow adds s_i r_i x̃_i to q, r_i = ⟨x̃_i, pr⟩ (the intercept, when there is one, pr's and q's
// last entry).
func (gs *groupedSystem) addRow(i int, pr, q []float64) {
	n := gs.des.features()
	r := gs.des.rowDot(i, pr[:n])
	if gs.intercept {
		r += pr[n]
	}
	f := gs.p.Weight[i] * r
	gs.des.rowAxpy(i, f, q[:n])
	if gs.intercept {
		q[n] += f
	}
}

// addGroupRows is addRow for the rows lo…hi−1 of xs, whose padded rows (intercept included) make
// each score one dot product and each update one axpy over whole vectors: four rows at a time
// where it can, pr read once for four scores and q updated once for four rows.
func (gs *groupedSystem) addGroupRows(lo, hi int, pr, q []float64) {
	xs := gs.xs.RawMatrix()
	row := func(j int) []float64 { return xs.Data[j*xs.Stride : j*xs.Stride+gs.stride] }
	var f [4]float64
	j := lo
	for ; j+4 <= hi; j += 4 {
		x0, x1, x2, x3 := row(j), row(j+1), row(j+2), row(j+3)
		r := gemm.DotRows4(x0, x1, x2, x3, pr)
		for t := range r {
			f[t] = gs.ws[j+t] * r[t]
		}
		gemm.Axpy4(q, &f, x0, x1, x2, x3)
	}
	for ; j < hi; j++ {
		if gs.ws[j] != 0 {
			x := row(j)
			gemm.Axpy(q, gs.ws[j]*floats.Dot(x, pr), x)
		}
	}
}

// sparseRowTimesVt writes row g of Δ_G Vᵀ, V c + Σ_a b_ga v_a (v_a row a of Vᵀ), into pt, four
// rows of Vᵀ at a time.
func (gs *groupedSystem) sparseRowTimesVt(g int) {
	t := gs.sparse
	_, k := gs.vt.Dims()
	out := gs.pt.RawRowView(g)[:k]
	copy(out, gs.vc)
	lo, hi := t.rowPtr[g], t.rowPtr[g+1]
	row := func(e int) []float64 { return gs.vt.RawRowView(t.rowCol[e]) }
	for ; lo+4 <= hi; lo += 4 {
		gemm.Axpy4(out, (*[4]float64)(t.rowVal[lo:lo+4]), row(lo), row(lo+1), row(lo+2), row(lo+3))
	}
	for ; lo < hi; lo++ {
		gemm.Axpy(out, t.rowVal[lo], row(lo))
	}
}

// sparseTTimesQ writes Δ_Gᵀ Q, whose row a is c_a Σ_g q_g + Σ_g b_ga q_g, into qd.
func (gs *groupedSystem) sparseTTimesQ() {
	t := gs.sparse
	d, k := gs.qd.Dims()
	ng, _ := gs.q.Dims()
	sum := gs.vc // V c is no longer needed: Σ_g q_g
	clear(sum)
	for g := 0; g < ng; g++ {
		floats.Add(sum, gs.q.RawRowView(g)[:k])
	}
	for a := 0; a < d; a++ {
		out := gs.qd.RawRowView(a)[:k]
		floats.ScaleTo(out, t.c[a], sum)
		row := func(e int) []float64 { return gs.q.RawRowView(t.colRow[e]) }
		e, hi := t.colPtr[a], t.colPtr[a+1]
		for ; e+4 <= hi; e += 4 {
			gemm.Axpy4(out, (*[4]float64)(t.colVal[e:e+4]), row(e), row(e+1), row(e+2), row(e+3))
		}
		for ; e < hi; e++ {
			gemm.Axpy(out, t.colVal[e], row(e))
		}
	}
}
