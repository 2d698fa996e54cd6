package ridge

import (
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// hessian applies the linear model's H (see linearSystem) to V, both k×d, writing H V into dst.
type hessian interface {
	apply(dst, V *mat.Dense)
}

// narrowSystem applies the same H as linearSystem with the scores held transposed (d×m), for
// outputs narrower than narrowCols (multi-class, small rankings). Transposed, the products are
// (d×n)·(n×m) and (d×m)·(m×n), whose rows are m and n long, and the curvature with a full S
// becomes one product of d×d by d×m instead of m matrix–vector products. It was written when
// the row-major products with d columns ran gemm at a fraction of its speed; MulPanel's 4×12 and
// masked kernels now cover a narrow W as well, and linearSystem is as fast or faster from 12
// columns on. One application of H (2 cores, AMD EPYC with AVX-512), narrowSystem against
// linearSystem: permutations(5) (d = 10, 1,000 × 20) 47 against 124 µs, multiclass(10) 5,000 × 50
// 387 against 410 µs, multilabel(14) 1,500 × 103 245 against 280 µs but a whole fit 8.1 against
// 7.5 ms (the copy of Xᵀ doubles what the iterations read), multilabel(40) 5,000 × 100 1.9
// against 1.3 ms, permutations(11) (d = 55) 650 against 580 µs.
type narrowSystem struct {
	p         *Problem
	x, xt     *mat.Dense // X (m×n) and a copy of Xᵀ (n×m)
	intercept bool
	s         *mat.Dense // S, d×d
	deltaT    *mat.Dense // Δᵀ, d×m
	// scratch
	vt, ut, ct, prod *mat.Dense // Vᵀ without the intercept row (d×n), Uᵀ and Cᵀ (d×m), Cᵀ·X (d×n)
	r                []float64  // δ_iᵀu_i, m
}

// Narrow outputs go through narrowSystem when X has at most narrowMaxEntries entries (the copy
// of Xᵀ it keeps, 8 bytes each) and W fewer than narrowCols columns.
const (
	narrowMaxEntries = 1 << 24
	narrowCols       = 12
)

// newNarrowSystem returns the transposed form of H for des, or nil when it does not apply.
func newNarrowSystem(p *Problem, des design) *narrowSystem {
	if des.sp != nil {
		return nil // it would hold Xᵀ densely
	}
	m, n := des.X.Dims()
	_, d := p.dims()
	if d >= narrowCols || m*n > narrowMaxEntries || p.S == nil {
		return nil
	}
	ns := &narrowSystem{p: p, x: des.X, intercept: des.intercept, s: denseOfSymmetric(p.S),
		xt: xmat.Transpose(des.X), deltaT: xmat.Transpose(p.Delta),
		vt: mat.NewDense(d, n, nil), ut: mat.NewDense(d, m, nil), ct: mat.NewDense(d, m, nil),
		prod: mat.NewDense(d, n, nil), r: make([]float64, m)}
	return ns
}

func (ns *narrowSystem) apply(dst, V *mat.Dense) {
	d, n := ns.vt.Dims()
	xmat.TransposeInto(ns.vt, V) // without the intercept row
	gemm.MulPanel(ns.ut.RawMatrix(), ns.vt.RawMatrix(), ns.xt.RawMatrix())
	if ns.intercept {
		for a, b := range V.RawRowView(n)[:d] {
			row := ns.ut.RawRowView(a)
			for i := range row {
				row[i] += b
			}
		}
	}
	// Row i of C is s_i (S u_i + (δ_iᵀu_i) δ_i); transposed, Cᵀ = (S Uᵀ + Δᵀ diag(r)) diag(s).
	gemm.MulPanel(ns.ct.RawMatrix(), ns.s.RawMatrix(), ns.ut.RawMatrix())
	r := ns.r
	clear(r)
	for a := 0; a < d; a++ {
		u, da := ns.ut.RawRowView(a), ns.deltaT.RawRowView(a)
		for i, v := range u {
			r[i] += da[i] * v
		}
	}
	w := ns.p.Weight
	for a := 0; a < d; a++ {
		c, da := ns.ct.RawRowView(a), ns.deltaT.RawRowView(a)
		for i := range c {
			c[i] = w[i] * (c[i] + r[i]*da[i])
		}
	}
	gemm.MulPanel(ns.prod.RawMatrix(), ns.ct.RawMatrix(), ns.x.RawMatrix())
	prod := ns.prod.RawMatrix().Data
	f := 2 * ns.p.Alpha
	for j := 0; j < n; j++ {
		out, v := dst.RawRowView(j)[:d], V.RawRowView(j)[:d]
		for a := range out {
			out[a] = prod[a*n+j] + f*v[a]
		}
	}
	if ns.intercept {
		out := dst.RawRowView(n)[:d]
		for a := range out {
			var s float64
			for _, v := range ns.ct.RawRowView(a) {
				s += v
			}
			out[a] = s
		}
	}
}
