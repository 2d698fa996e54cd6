package ridge

import (
	"math"
	"slices"
	"sync"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// empiricalOperator applies the covariance of a reference measure with an empirical part,
// μ = (1 − w)·U + w·E, E the weighted training structures ψ_i, without its dense d×d matrix:
//
//	S v = w Σ_i (s_i/Σs) ψ_i ⟨ψ_i, v⟩ + (1 − w)(S_U v + p_U ⟨p_U, v⟩) − p ⟨p, v⟩.
//
// The training structures are sparse in most spaces (a gene's 9 nodes of 500, 36 GO terms of
// 3,700), so a product costs O(nnz + d) instead of O(d²) — the difference between an empirical
// reference fit that costs what the uniform one does and one dominated by dense products.
type empiricalOperator struct {
	dense *mat.SymDense // the same S, for At
	w     float64
	off   []int
	idx   []int32
	val   []float64 // ψ_i's non-zero values
	wt    []float64 // s_i/Σs per row
	p     []float64 // the mixture's mean
	pu    []float64 // uniform part (w < 1): its mean and covariance operator
	su    space.Operator
	// the structures by coordinate, for mulRows (ensureColumns)
	once   sync.Once
	colOff []int
	colRow []int32
	colVal []float64
}

// sparseReference switches empiricalOperator on (tests compare fits with and without it).
var sparseReference = true

// newEmpiricalOperator builds the operator of ref from the training structures of p (ψ_i = δ_i +
// p.Mean, the uniform mean before setReference re-centres them), or returns nil when its products
// would cost more than the dense matrix's (2·nnz + the uniform part's d per vector against d²).
func newEmpiricalOperator(p *Problem, ref *reference, w float64) *empiricalOperator {
	if !sparseReference {
		return nil
	}
	m, d := p.dims()
	nnz := 0
	for i := 0; i < m; i++ {
		if p.Weight[i] != 0 {
			nnz += p.psiNonzeros(i)
		}
	}
	if empiricalProductCost(nnz, d) >= d*d {
		return nil
	}
	op := &empiricalOperator{dense: ref.cov, w: w, off: make([]int, 1, m+1), p: ref.mean}
	var total float64
	for i := 0; i < m; i++ {
		total += p.Weight[i]
	}
	for i := 0; i < m; i++ {
		s := p.Weight[i]
		if s == 0 {
			continue
		}
		for a, v := range p.Delta.RawRowView(i) {
			if x := v + p.Mean[a]; x != 0 {
				op.idx = append(op.idx, int32(a))
				op.val = append(op.val, x)
			}
		}
		op.off = append(op.off, len(op.idx))
		op.wt = append(op.wt, s/total)
	}
	if w < 1 {
		op.pu, op.su = p.Mean, p.Cov
	}
	return op
}

// empiricalProductCost is the cost of one product of empiricalOperator with a vector, for
// training structures with nnz non-zero coordinates in all: two passes over them, and the
// uniform part's operator, O(d) in every space (space.Operator).
func empiricalProductCost(nnz, d int) int { return 2*nnz + 4*d }

// Dim returns d.
func (o *empiricalOperator) Dim() int { return o.dense.SymmetricDim() }

// At returns S[i, j].
func (o *empiricalOperator) At(i, j int) float64 { return o.dense.At(i, j) }

// MulVec writes S v into dst.
func (o *empiricalOperator) MulVec(dst, v []float64) {
	if o.su != nil {
		o.su.MulVec(dst, v)
		var pv float64
		for a, x := range v {
			pv += o.pu[a] * x
		}
		for a := range dst {
			dst[a] = (1 - o.w) * (dst[a] + o.pu[a]*pv)
		}
	} else {
		clear(dst)
	}
	for r, s := range o.wt {
		lo, hi := o.off[r], o.off[r+1]
		var f float64
		for k := lo; k < hi; k++ {
			f += o.val[k] * v[o.idx[k]]
		}
		f *= o.w * s
		for k := lo; k < hi; k++ {
			dst[o.idx[k]] += f * o.val[k]
		}
	}
	var pv float64
	for a, x := range v {
		pv += o.p[a] * x
	}
	for a := range dst {
		dst[a] -= o.p[a] * pv
	}
}

// mulCols writes S·X into dst for X and dst (d×m) in kernel CG's transposed layout, a block of
// columns at a time: mulRows' two sparse passes without its transposes. A reference with a
// uniform part (w < 1), whose operator works on rows, goes through mulRows.
func (o *empiricalOperator) mulCols(dst, X *mat.Dense) {
	d, m := X.Dims()
	if o.su != nil {
		V, out := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
		xmat.TransposeInto(V, X)
		o.mulRows(out, V)
		xmat.TransposeInto(dst, out)
		return
	}
	nr := len(o.wt)
	o.ensureColumns()
	const block = 1024
	at, pv := make([]float64, nr*min(block, m)), make([]float64, min(block, m))
	for lo := 0; lo < m; lo += block {
		hi := min(lo+block, m)
		b := hi - lo
		parallel.For(nr, 16, func(r0, r1 int) {
			for r := r0; r < r1; r++ {
				row := at[r*b : (r+1)*b]
				clear(row)
				for k := o.off[r]; k < o.off[r+1]; k++ {
					floats.AddScaled(row, o.val[k], X.RawRowView(int(o.idx[k]))[lo:hi])
				}
				floats.Scale(o.w*o.wt[r], row)
			}
		})
		clear(pv[:b])
		for a, v := range o.p {
			floats.AddScaled(pv[:b], v, X.RawRowView(a)[lo:hi])
		}
		parallel.For(d, 16, func(k0, k1 int) {
			for k := k0; k < k1; k++ {
				row := dst.RawRowView(k)[lo:hi]
				floats.ScaleTo(row, -o.p[k], pv[:b])
				for e := o.colOff[k]; e < o.colOff[k+1]; e++ {
					floats.AddScaled(row, o.colVal[e], at[int(o.colRow[e])*b:int(o.colRow[e]+1)*b])
				}
			}
		})
	}
}

// gram returns ΓΓᵀ for the rows Γ_r = √(s_r/Σs)·(ψ_r − p) of the pure empirical reference
// (w = 1), whose covariance is ΓᵀΓ: both have the same non-zero eigenvalues.
func (o *empiricalOperator) gram() *mat.SymDense {
	nr, d := len(o.wt), len(o.p)
	g := mat.NewDense(nr, d, nil)
	for r, s := range o.wt {
		row := g.RawRowView(r)
		for a, v := range o.p {
			row[a] = -v
		}
		for k := o.off[r]; k < o.off[r+1]; k++ {
			row[o.idx[k]] += o.val[k]
		}
		floats.Scale(math.Sqrt(s), row)
	}
	c := mat.NewDense(nr, nr, nil)
	gemm.MulT(c.RawMatrix(), g.RawMatrix(), g.RawMatrix())
	out := mat.NewSymDense(nr, nil)
	for a := 0; a < nr; a++ {
		for b := a; b < nr; b++ {
			out.SetSym(a, b, c.At(a, b))
		}
	}
	return out
}

// mulRows writes V·S into dst (m×d), row i being S v_i, a block of rows at a time in the
// transposed layout, where both sparse passes are axpys over contiguous rows of the block:
// Aᵀ[r] = Σ_k ψ_rk Vᵀ[k] for the training structures r, then Dᵀ[k] = Σ_r ψ_rk s_r Aᵀ[r].
func (o *empiricalOperator) mulRows(dst, V *mat.Dense) {
	m, d := V.Dims()
	nr := len(o.wt)
	const block = 256
	o.ensureColumns()
	for lo := 0; lo < m; lo += block {
		hi := min(lo+block, m)
		b := hi - lo
		vt := make([]float64, d*b) // Vᵀ of the block, d×b
		for i := lo; i < hi; i++ {
			for k, x := range V.RawRowView(i) {
				vt[k*b+i-lo] = x
			}
		}
		at := make([]float64, nr*b)
		parallel.For(nr, 16, func(r0, r1 int) {
			for r := r0; r < r1; r++ {
				row := at[r*b : (r+1)*b]
				for k := o.off[r]; k < o.off[r+1]; k++ {
					floats.AddScaled(row, o.val[k], vt[int(o.idx[k])*b:int(o.idx[k]+1)*b])
				}
				floats.Scale(o.w*o.wt[r], row)
			}
		})
		dt := make([]float64, d*b)
		parallel.For(d, 16, func(k0, k1 int) {
			for k := k0; k < k1; k++ {
				row := dt[k*b : (k+1)*b]
				for e := o.colOff[k]; e < o.colOff[k+1]; e++ {
					floats.AddScaled(row, o.colVal[e], at[int(o.colRow[e])*b:int(o.colRow[e]+1)*b])
				}
			}
		})
		parallel.For(b, 8, func(i0, i1 int) {
			scratch := make([]float64, d)
			for i := i0; i < i1; i++ {
				v, out := V.RawRowView(lo+i), dst.RawRowView(lo+i)
				if o.su != nil {
					o.su.MulVec(scratch, v)
				}
				var pv, puv float64
				for a, x := range v {
					pv += o.p[a] * x
					if o.su != nil {
						puv += o.pu[a] * x
					}
				}
				for a := range out {
					out[a] = dt[a*b+i] - o.p[a]*pv
					if o.su != nil {
						out[a] += (1 - o.w) * (scratch[a] + o.pu[a]*puv)
					}
				}
			}
		})
	}
}

// ensureColumns builds the column-major copy of the structures (per coordinate k, the rows r with
// ψ_rk ≠ 0 and the values) that mulRows' second pass reads; once, before any concurrent use.
func (o *empiricalOperator) ensureColumns() {
	o.once.Do(func() {
		d := o.Dim()
		o.colOff = make([]int, d+1)
		for _, k := range o.idx {
			o.colOff[k+1]++
		}
		for k := 0; k < d; k++ {
			o.colOff[k+1] += o.colOff[k]
		}
		o.colRow = make([]int32, len(o.idx))
		o.colVal = make([]float64, len(o.idx))
		fill := slices.Clone(o.colOff[:d])
		for r := range o.wt {
			for e := o.off[r]; e < o.off[r+1]; e++ {
				k := o.idx[e]
				o.colRow[fill[k]] = int32(r)
				o.colVal[fill[k]] = o.val[e]
				fill[k]++
			}
		}
	})
}
