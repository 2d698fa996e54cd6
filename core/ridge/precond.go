package ridge

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// This file holds the linear CG preconditioners that never form a d×d matrix, so that they serve
// operator-only Problems (d > MaxDim). The Hessian of J in W (k×d, k = rows of W) is
//
//	H = 2α E⊗I + Σ_i s_i x̃_i x̃_iᵀ ⊗ (S + δ_iδ_iᵀ),   E = diag(1, …, 1, 0 for the intercept),
//
// (Kronecker factors written as (k×k) ⊗ (d×d), acting on W as A⊗B: W ↦ A W B). Its Kronecker
// part 2αE⊗I + G⊗S, G = X̃ᵀdiag(s)X̃, is what spectralPrecond inverts exactly; diagPrecond, for
// covariances without a closed-form spectrum, replaces S + D̄, D̄ = Σ_i s_i δ_iδ_iᵀ / Σ_i s_i, by
// its diagonal.

// precondMode selects the linear CG preconditioner; tests and benchmarks change it to compare.
type precondMode int

const (
	precondAuto         precondMode = iota // spectral when S has a closed form, else kronPrecond with a dense S, else diagonal
	precondSpectralMean                    // spectral with the symmetrised D̄ correction τ_k
	precondDiag                            // the diagonal fallback even for Spectral operators
	precondNone                            // no preconditioning
	precondKron                            // kronPrecond (dense S and D̄) whenever S is held
)

// linearPrecondMode is the preconditioner in use (precondAuto outside tests and benchmarks).
var linearPrecondMode = precondAuto

// spectralPrecond applies M⁻¹ = Σ_c (2αE + M_c G)⁻¹ ⊗ P_c, the exact inverse of
//
//	M = Σ_c (2αE + M_c G) ⊗ P_c = 2α E⊗I + G ⊗ Σ_c M_c P_c,
//
// where S = Σ_c σ_c P_c is the closed-form spectral decomposition of the space's covariance
// (space.Spectral: two or three eigenspaces for the pair spaces) and M_c = σ_c: M is the
// Kronecker part 2αE⊗I + G⊗S of H, with the intercept row left unpenalised exactly.
//
// All blocks share the eigenbasis G = Q diag(μ) Qᵀ: without the intercept, 2αI + M_c G is
// diagonal there, and with it 2αE + M_c G = A_c − 2α e eᵀ (e the intercept's unit vector, A_c =
// 2αI + M_c G) is a rank-one update, inverted by Sherman–Morrison:
//
//	(2αE + M_c G)⁻¹ = Q [D_c + γ_c a_c a_cᵀ] Qᵀ,  D_c = diag(1/(2α + M_c μ_j)),  a_c = D_c Qᵀe,
//	γ_c = 2α / (1 − 2α eᵀQ a_c),
//
// (1 − 2α eᵀA_c⁻¹e > 0 by the determinant lemma, 2αE + M_c G being positive definite when M_c > 0).
// Applying M⁻¹ costs two k×k by k×d products and, per eigenspace, k projections and O(k·d):
// O(k²d + K·k·d) time and O(k² + k·d) memory, never d×d.
//
// The mean δδᵀ term can be added through M_c = σ_c + τ_c, τ_c = tr(P_c D̄)/dim P_c, the
// projection of D̄ onto the span of the P_c (D̄ averaged over the relabellings of the space), at
// O(K·m·d) set-up cost (precondSpectralMean). It is measured to hurt (BenchmarkLargePairSpace:
// 25 instead of 17 iterations on Permutations(120), 37 instead of 20 on DirectedCycles(141)):
// D̄ has rank at most m ≪ d, so spreading its trace over whole eigenspaces overstates the
// curvature in almost every direction, while CG handles the few large eigenvalues that D̄ adds
// to M⁻¹H in few iterations. It is therefore off by default. For the same reason this
// preconditioner also beats kronPrecond, whose M̄ holds D̄ exactly, on the pair spaces below
// MaxDim (22 instead of 78 iterations on Permutations(50)), and it is used for every space whose
// covariance is Spectral.
type spectralPrecond struct {
	op    space.Spectral
	m     []float64   // M_c = σ_c (+ τ_c)
	q     *mat.Dense  // Q, eigenvectors of G, k×k
	diag  [][]float64 // D_c, per eigenspace k values
	a     [][]float64 // a_c (nil without the intercept update)
	gamma []float64   // γ_c
	// inv, when not nil, holds the inverse of every block 2αE + M_c G, computed through its
	// Cholesky factorisation, instead of the shared eigenbasis (q, diag, a and gamma unused): see
	// spectralEigenMax.
	inv []*mat.Dense
	// scratch, k×d
	t, acc, proj *mat.Dense
}

// spectralPrecond diagonalises G only when k ≤ spectralEigenMax and S has more than
// spectralCholeskySpaces eigenspaces. Otherwise one Cholesky factorisation per eigenspace of S is
// far cheaper than gonum's symmetric eigendecomposition, whose cost grows faster than k³ once G
// leaves the cache (k = 1000: 0.2 s per factorisation against 6 s; k = 104, yeast: 0.1 against 2
// ms), while applying it costs two triangular solves per eigenspace instead of two products in
// all. The blocks are inverted explicitly, once, because a product with the inverse runs on
// package gemm, where gonum's triangular solves with d right-hand sides took a third of the
// linear fit on yeast (0.2 ms per application). Tests change both to check the two forms against
// each other.
var (
	spectralEigenMax       = 256
	spectralCholeskySpaces = 2
)

func newSpectralPrecond(p *Problem, des design, G *mat.SymDense, op space.Spectral, correct bool) (*spectralPrecond, error) {
	es := op.Spectrum()
	nk := len(es)
	m, d := p.dims()
	M := make([]float64, nk)
	for c, e := range es {
		M[c] = e.Value
	}
	if correct {
		// τ_c = Σ_i s_i ‖P_c δ_i‖² / (Σ s · dim_c), the per-example terms summed in a fixed order
		// so that the result does not depend on the number of threads.
		terms := mat.NewDense(m, nk, nil)
		parallel.For(m, 4, func(lo, hi int) {
			buf, row := make([]float64, d), make([]float64, d)
			for i := lo; i < hi; i++ {
				if p.Weight[i] == 0 {
					continue
				}
				di := p.deltaRow(i, row)
				for c := range es {
					op.Project(c, buf, di)
					terms.Set(i, c, p.Weight[i]*floats.Dot(buf, buf))
				}
			}
		})
		var total float64
		for _, w := range p.Weight {
			total += w
		}
		for c := range es {
			var tau float64
			for i := 0; i < m; i++ {
				tau += terms.At(i, c)
			}
			M[c] += tau / (total * float64(es[c].Dim))
		}
	}
	var top float64
	for c := range M {
		M[c] = math.Max(0, M[c])
		top = math.Max(top, M[c])
	}
	k := des.cols()
	if k > spectralEigenMax || nk <= spectralCholeskySpaces {
		return newSpectralPrecondChol(p, des, op, M, top, G)
	}
	var eg mat.EigenSym
	if !eg.Factorize(G, true) {
		return nil, fmt.Errorf("eigendecomposition of XᵀX failed (non-finite inputs?)")
	}
	pc := &spectralPrecond{op: op, m: M, q: new(mat.Dense), diag: make([][]float64, nk), a: make([][]float64, nk),
		gamma: make([]float64, nk), t: mat.NewDense(k, d, nil), acc: mat.NewDense(k, d, nil), proj: mat.NewDense(k, d, nil)}
	eg.VectorsTo(pc.q)
	mu := eg.Values(nil)
	var qe []float64 // Qᵀe, the intercept's unit vector in the eigenbasis
	if des.intercept {
		qe = pc.q.RawRowView(k - 1)
	}
	for c := range es {
		dc := make([]float64, k)
		for j := range dc {
			dc[j] = 1 / (2*p.Alpha + M[c]*math.Max(0, mu[j]))
		}
		pc.diag[c] = dc
		// On an eigenspace where M_c vanishes (the potentials of directed cycles, span(1) of
		// multiclass), the intercept has no curvature at all: leaving it penalised there, like
		// the other rows, keeps the block invertible and the intercept's component along ker S
		// at zero, the minimum-norm optimum that the exact solver picks.
		if qe == nil || M[c] <= 1e-12*top {
			continue
		}
		ac := make([]float64, k)
		var eAe float64
		for j := range ac {
			ac[j] = dc[j] * qe[j]
			eAe += qe[j] * ac[j]
		}
		denom := 1 - 2*p.Alpha*eAe
		if !(denom > 0) {
			return nil, fmt.Errorf("the preconditioner block 2αE + %g·XᵀX is not positive definite (non-finite inputs?)", M[c])
		}
		pc.a[c], pc.gamma[c] = ac, 2*p.Alpha/denom
	}
	return pc, nil
}

// newSpectralPrecondChol factorises every block 2αE + M_c G (the intercept left unpenalised
// except on eigenspaces where M_c vanishes, as with the eigenbasis).
func newSpectralPrecondChol(p *Problem, des design, op space.Spectral, M []float64, top float64, G *mat.SymDense) (*spectralPrecond, error) {
	k := des.cols()
	_, d := p.dims()
	pc := &spectralPrecond{op: op, m: M, inv: make([]*mat.Dense, len(M)),
		acc: mat.NewDense(k, d, nil), proj: mat.NewDense(k, d, nil), t: mat.NewDense(k, d, nil)}
	B := mat.NewSymDense(k, nil)
	for c := range M {
		B.ScaleSym(M[c], G)
		for j := 0; j < k; j++ {
			if j < k-1 || !des.intercept || M[c] <= 1e-12*top {
				B.SetSym(j, j, B.At(j, j)+2*p.Alpha)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(B) {
			return nil, fmt.Errorf("the preconditioner block 2αE + %g·XᵀX is not positive definite (non-finite inputs?)", M[c])
		}
		// An error only reports a large condition number; the inverse is still the best
		// available, and CG judges convergence on the true gradient.
		var inv mat.SymDense
		_ = ch.InverseTo(&inv)
		pc.inv[c] = mat.DenseCopyOf(&inv)
	}
	return pc, nil
}

func (pc *spectralPrecond) apply(dst, R *mat.Dense) {
	k, d := R.Dims()
	rowChunk := max(1, 4096/max(d, 1)) // a projection costs O(d): keep small ones on one thread
	if pc.inv != nil {
		pc.acc.Zero()
		for c, inv := range pc.inv {
			parallel.For(k, rowChunk, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					pc.op.Project(c, pc.proj.RawRowView(j), R.RawRowView(j))
				}
			})
			gemm.MulPanelAdd(pc.acc.RawMatrix(), inv.RawMatrix(), pc.proj.RawMatrix())
		}
		dst.Copy(pc.acc)
		return
	}
	pc.t.Mul(pc.q.T(), R)
	pc.acc.Zero()
	s := make([]float64, d)
	for c, dc := range pc.diag {
		parallel.For(k, rowChunk, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				pr := pc.proj.RawRowView(j)
				pc.op.Project(c, pr, pc.t.RawRowView(j))
				floats.AddScaled(pc.acc.RawRowView(j), dc[j], pr)
			}
		})
		if ac := pc.a[c]; ac != nil {
			clear(s) // s = a_cᵀ · projected rows
			for j, v := range ac {
				floats.AddScaled(s, v, pc.proj.RawRowView(j))
			}
			for j, v := range ac {
				floats.AddScaled(pc.acc.RawRowView(j), pc.gamma[c]*v, s)
			}
		}
	}
	dst.Mul(pc.q, pc.acc)
}

// diagPrecond is the fallback for covariance operators without a closed-form spectral
// decomposition (space.Spectral): it applies (2αI + G ⊗ diag(S + D̄))⁻¹, diagonal in the
// eigenbasis of G, with diag(S) read off the operator in O(d). It is weaker than spectralPrecond
// (it ignores every off-diagonal entry of S and penalises the intercept like the other rows) but
// still costs O(k²d) per application and O(k·d) memory.
type diagPrecond struct {
	qg    *mat.Dense // eigenvectors of G, k×k
	scale *mat.Dense // 1 / (2α + μ_j M_a), k×d
	t     *mat.Dense // scratch k×d
}

func newDiagPrecond(p *Problem, G *mat.SymDense) (*diagPrecond, error) {
	_, d := p.dims()
	diag := p.curvatureDiag()
	var eg mat.EigenSym
	if !eg.Factorize(G, true) {
		return nil, fmt.Errorf("eigendecomposition of XᵀX failed (non-finite inputs?)")
	}
	pc := &diagPrecond{qg: new(mat.Dense)}
	eg.VectorsTo(pc.qg)
	mu := eg.Values(nil)
	k := len(mu)
	pc.scale = mat.NewDense(k, d, nil)
	pc.t = mat.NewDense(k, d, nil)
	for j := 0; j < k; j++ {
		row := pc.scale.RawRowView(j)
		for a := range row {
			row[a] = 1 / (2*p.Alpha + math.Max(0, mu[j])*diag[a])
		}
	}
	return pc, nil
}

func (pc *diagPrecond) apply(dst, R *mat.Dense) {
	pc.t.Mul(pc.qg.T(), R)
	pc.t.MulElem(pc.t, pc.scale)
	dst.Mul(pc.qg, pc.t)
}

// identityPrecond leaves the residual unchanged (plain CG), for comparisons.
type identityPrecond struct{}

func (identityPrecond) apply(dst, R *mat.Dense) { dst.Copy(R) }

// curvatureDiag is the diagonal of the average curvature M̄ = S + Σ s_i δ_iδ_iᵀ / Σ s_i of the loss
// in the scores (see kronPrecond), clipped at 0: what the diagonal preconditioners scale by.
func (p *Problem) curvatureDiag() []float64 {
	m, d := p.dims()
	diag := make([]float64, d)
	var total float64
	for i := 0; i < m; i++ {
		total += p.Weight[i]
	}
	row := make([]float64, d)
	for i := 0; i < m; i++ {
		f := p.Weight[i] / total
		for a, v := range p.deltaRow(i, row) {
			diag[a] += f * v * v
		}
	}
	for a := range diag {
		diag[a] = math.Max(0, diag[a]+p.Cov.At(a, a))
	}
	return diag
}
