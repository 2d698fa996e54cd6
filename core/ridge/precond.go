package ridge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// This file holds the linear CG preconditioners. The Hessian of J in W (k×d, k = rows of W) is
//
//	H = 2α E⊗I + Σ_i s_i x̃_i x̃_iᵀ ⊗ (S + δ_iδ_iᵀ),   E = diag(1, …, 1, 0 for the intercept),
//
// (Kronecker factors written as (k×k) ⊗ (d×d), acting on W as A⊗B: W ↦ A W B). Its Kronecker
// part 2αE⊗I + G⊗S, G = X̃ᵀdiag(s)X̃, is what spectralPrecond inverts exactly; kronPrecond inverts
// 2αE⊗I + G⊗M̄, M̄ = S + D̄, D̄ = Σ_i s_i δ_iδ_iᵀ / Σ_i s_i, from a dense M̄ (d ≤ MaxDim); and
// newDiagPrecond, for operator-only Problems (d > MaxDim) without a closed-form spectrum, replaces
// M̄ by its diagonal. Only kronPrecond holds a d×d matrix.

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
// covariance is Spectral. With many more examples than labels, where D̄ has full rank, it still
// wins: on BenchmarkManyLabels' d = 1,000 problem (30 % of labels on) it takes 26 iterations,
// against 64 with τ_k, 32 with the diagonal of M̄, 104 with kronPrecond's exact M̄ and 57 with
// kronPrecond on S plus D̄'s mean part δ̄δ̄ᵀ alone: δ_i varies with x_i, and no Kronecker
// product G ⊗ M captures Σ_i x_i x_iᵀ ⊗ δ_iδ_iᵀ better than G ⊗ S does.
type spectralPrecond struct {
	op    space.Spectral
	m     []float64   // M_c = σ_c (+ τ_c)
	q     *mat.Dense  // Q, eigenvectors of G, k×k
	diag  [][]float64 // D_c, per eigenspace k values
	a     [][]float64 // a_c (nil without the intercept update)
	gamma []float64   // γ_c
	v     [][]float64 // Q a_c = A_c⁻¹e, k values each (interceptColumn)
	// inv, when not nil, holds the inverse of every block 2αE + M_c G, computed through its
	// Cholesky factorisation, instead of the shared eigenbasis (q, diag, a and gamma unused): see
	// spectralEigenMax.
	inv []*mat.Dense
	// scratch, k×d
	t, acc, proj *mat.Dense
	// applyLowRank's scratch, k×r (r held eigenvectors), allocated on first use
	lowC, lowZ *mat.Dense
	// zero removes the eigenspaces that are J's null directions (nullspace.go), where the blocks
	// are zero (diag[c] and inv[c] nil)
	zero nullDrop
}

func (pc *spectralPrecond) nullDirections() nullDrop { return pc.zero }

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

// spectralTau returns τ_c = Σ_i s_i ‖P_c δ_i‖² / (Σ s · dim_c), the examples' share of the average
// curvature M_c = σ_c + τ_c on op's eigenspace c, for the eigenspaces where want(c) (0 for the
// others), the per-example terms summed in a fixed order so that the result does not depend on
// the number of threads.
func spectralTau(p *Problem, op space.Spectral, want func(c int) bool) []float64 {
	es := op.Spectrum()
	m, d := p.dims()
	tau := make([]float64, len(es))
	var wanted []int // the eigenspaces computed: one column of terms each
	for c := range es {
		if want(c) {
			wanted = append(wanted, c)
		}
	}
	if len(wanted) == 0 {
		return tau
	}
	terms := mat.NewDense(max(m, 1), len(wanted), nil)
	parallel.For(m, 4, func(lo, hi int) {
		buf, row := make([]float64, d), make([]float64, d)
		for i := lo; i < hi; i++ {
			if p.Weight[i] == 0 {
				continue
			}
			di := p.deltaRow(i, row)
			for col, c := range wanted {
				op.Project(c, buf, di)
				terms.Set(i, col, p.Weight[i]*floats.Dot(buf, buf))
			}
		}
	})
	var total float64
	for _, w := range p.Weight {
		total += w
	}
	for col, c := range wanted {
		var sum float64
		for i := 0; i < m; i++ {
			sum += terms.At(i, col)
		}
		tau[c] = sum / (total * float64(es[c].Dim))
	}
	return tau
}

func newSpectralPrecond(p *Problem, des design, G *mat.SymDense, op space.Spectral, correct bool) (*spectralPrecond, error) {
	es := op.Spectrum()
	nk := len(es)
	_, d := p.dims()
	M := make([]float64, nk)
	for c, e := range es {
		M[c] = e.Value
	}
	if correct {
		for c, tau := range spectralTau(p, op, func(int) bool { return true }) {
			M[c] += tau
		}
	}
	var top float64
	for c := range M {
		M[c] = math.Max(0, M[c])
		top = math.Max(top, M[c])
	}
	op, M = mergeEqualValues(op, M)
	es, nk = op.Spectrum(), len(M)
	zero := zeroSpaces(p, op, M, top)
	k := des.cols()
	if k > spectralEigenMax || nk <= spectralCholeskySpaces || lowRank(op) {
		return newSpectralPrecondChol(p, des, op, M, top, zero, G)
	}
	var eg mat.EigenSym
	if !eg.Factorize(G, true) {
		return nil, fmt.Errorf("eigendecomposition of XᵀX failed (non-finite inputs?)")
	}
	pc := &spectralPrecond{op: op, m: M, q: new(mat.Dense), diag: make([][]float64, nk), a: make([][]float64, nk),
		gamma: make([]float64, nk), v: make([][]float64, nk), t: mat.NewDense(k, d, nil), acc: mat.NewDense(k, d, nil), proj: mat.NewDense(k, d, nil),
		zero: eigenspacesDrop(op, zero)}
	eg.VectorsTo(pc.q)
	mu := eg.Values(nil)
	var qe []float64 // Qᵀe, the intercept's unit vector in the eigenbasis
	if des.intercept {
		qe = pc.q.RawRowView(k - 1)
	}
	blocks := make([]float64, 0, nk*k)
	for c := range es {
		if slices.Contains(zero, c) {
			continue // J's null directions: the block is zero (nullspace.go)
		}
		dc := make([]float64, k)
		for j := range dc {
			dc[j] = 1 / (2*p.Alpha + M[c]*math.Max(0, mu[j]))
			blocks = append(blocks, 2*p.Alpha+M[c]*math.Max(0, mu[j]))
		}
		pc.diag[c] = dc
		// On an eigenspace where M_c vanishes (the potentials of directed cycles, span(1) of
		// multiclass), the intercept has no curvature at all: leaving it penalised there, like
		// the other rows, keeps the block invertible and the intercept's component along ker S
		// at zero, the minimum-norm optimum that the exact solver picks.
		if qe == nil || M[c] <= nullRelTol*top {
			continue
		}
		// 1 − 2α eᵀA_c⁻¹e = Σ_j (Qᵀe)_j² M_c μ_j / (2α + M_c μ_j), summed without the cancellation
		// of 1 − 2α·Σ_j (Qᵀe)_j² / (2α + M_c μ_j) when α is small.
		ac := make([]float64, k)
		var denom float64
		for j := range ac {
			ac[j] = dc[j] * qe[j]
			denom += qe[j] * ac[j] * M[c] * math.Max(0, mu[j])
		}
		gamma := 2 * p.Alpha / denom
		if !(denom > 0) || math.IsInf(gamma, 0) {
			return nil, errIllConditioned
		}
		pc.a[c], pc.gamma[c] = ac, gamma
		pc.v[c] = interceptColumn(pc.q, qe, mu, 2*p.Alpha, M[c], denom)
	}
	if !spreadWithin(blocks) {
		return nil, errIllConditioned
	}
	return pc, nil
}

// interceptColumn returns A⁻¹e for A = 2αI + νG, G = Q diag(μ) Qᵀ (μ clipped at 0) and e the
// intercept's unit vector (the last; qe = Qᵀe), given denom = 1 − 2α eᵀA⁻¹e > 0: the vector along
// which Sherman–Morrison's rank-one term, γ = 2α/denom times it, unpenalises the intercept. Where
// the intercept's own curvature is far below 2α (denom small: sample weights of 1e-60 against
// α = 1), γ is huge, and Q D Qᵀe, whose feature entries are rounding noise of order 1/(2α) about
// their true value near 0, would carry that noise into the features amplified by γ: CG then
// stopped at a relative gradient of 1e28, its coefficients 30 orders of magnitude off. So for
// denom < ½ the column is taken as e/(2α) − (ν/2α)·Q diag(μ_j/(2α + νμ_j)) Qᵀe, whose second term
// is small and accurate relative to itself; elsewhere as Q D Qᵀe, which is accurate when 2α does
// not dominate (the difference would then cancel).
func interceptColumn(q *mat.Dense, qe, mu []float64, twoAlpha, nu, denom float64) []float64 {
	k := len(qe)
	w := make([]float64, k)
	for j, e := range qe {
		mj := math.Max(0, mu[j])
		if denom >= 0.5 {
			w[j] = e / (twoAlpha + nu*mj)
		} else {
			w[j] = -e * nu * mj / (twoAlpha * (twoAlpha + nu*mj))
		}
	}
	v := make([]float64, k)
	mat.NewVecDense(k, v).MulVec(q, mat.NewVecDense(k, w))
	if denom < 0.5 {
		v[k-1] += 1 / twoAlpha
	}
	return v
}

// newSpectralPrecondChol factorises every block 2αE + M_c G (the intercept left unpenalised
// except on eigenspaces where M_c vanishes, as with the eigenbasis) but those of the eigenspaces
// zero, J's null directions, which are zero.
func newSpectralPrecondChol(p *Problem, des design, op space.Spectral, M []float64, top float64, zero []int, G *mat.SymDense) (*spectralPrecond, error) {
	k := des.cols()
	_, d := p.dims()
	inv, err := blockInverses(G, M, top, zero, p.Alpha, des.intercept, des.stop)
	if err != nil {
		return nil, err
	}
	return &spectralPrecond{op: op, m: M, inv: inv, zero: eigenspacesDrop(op, zero),
		acc: mat.NewDense(k, d, nil), proj: mat.NewDense(k, d, nil), t: mat.NewDense(k, d, nil)}, nil
}

// blockInverses returns the inverses of the blocks 2αE + M_c G, each through its Cholesky
// factorisation, with E the identity whose intercept entry (the last, when intercept is set) is
// zero except for the blocks where M_c vanishes (M_c ≤ nullRelTol·top), which stay penalised; nil
// for the blocks zero, J's null directions (nullspace.go).
func blockInverses(G *mat.SymDense, M []float64, top float64, zero []int, alpha float64, intercept bool, stop *cancel.Flag) ([]*mat.Dense, error) {
	k := G.SymmetricDim()
	inv := make([]*mat.Dense, len(M))
	B := mat.NewSymDense(k, nil)
	for c := range M {
		if slices.Contains(zero, c) {
			continue
		}
		B.ScaleSym(M[c], G)
		for j := 0; j < k; j++ {
			if j < k-1 || !intercept || M[c] <= nullRelTol*top {
				B.SetSym(j, j, B.At(j, j)+2*alpha)
			}
		}
		raw := B.RawSymmetric()
		b := blas64.General{Rows: k, Cols: k, Stride: raw.Stride, Data: raw.Data}
		var err error
		inv[c], err = spdInverse(b, stop)
		if errors.Is(err, ErrCancelled) {
			return nil, err
		}
		if err != nil || !wellConditioned(b, inv[c].RawMatrix()) {
			return nil, errIllConditioned
		}
	}
	return inv, nil
}

func (pc *spectralPrecond) apply(dst, R *mat.Dense) {
	k, d := R.Dims()
	rowChunk := max(1, 4096/max(d, 1)) // a projection costs O(d): keep small ones on one thread
	if pc.zero != nil {
		defer pc.zero(dst) // what rounding leaves along the zero blocks' eigenspaces
	}
	if ds, ok := pc.op.(*denseSpectrum); ok && lowRank(ds) && pc.inv != nil {
		pc.applyLowRank(ds, dst, R)
		return
	}
	if pc.inv != nil {
		pc.acc.Zero()
		for c, inv := range pc.inv {
			if inv == nil {
				continue
			}
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
	// γ_c a_cᵀ·(projected rows), added along A_c⁻¹e after the rotation
	type correction struct{ along, by []float64 }
	var corrections []correction
	for c, dc := range pc.diag {
		if dc == nil {
			continue
		}
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
			floats.Scale(pc.gamma[c], s)
			corrections = append(corrections, correction{pc.v[c], slices.Clone(s)})
		}
	}
	dst.Mul(pc.q, pc.acc)
	for _, c := range corrections {
		for j, v := range c.along {
			floats.AddScaled(dst.RawRowView(j), v, c.by)
		}
	}
}

// lowRank reports whether op is a denseSpectrum whose merged eigenspace is held implicitly
// (newPartialSpectrum's, or newDenseSpectrum's with merging): its eigenspaces are then applied
// through products with its eigenvectors (applyLowRank), one block inverse each.
func lowRank(op space.Spectral) bool {
	ds, ok := op.(*denseSpectrum)
	return ok && ds.first > 0
}

// applyLowRank is apply on ds's eigenspaces in products: with C = R Vᵀ (V the held eigenvectors,
// rows of ds.qt), P_c(R) = C_c v_cᵀ for c ≥ 1 and P_0(R) = R − C V, so Σ_c A_c⁻¹ P_c(R) =
// A_0⁻¹ (R − C V) + Z V with column c − 1 of Z = A_c⁻¹ C_c. Eigenvector by eigenvector and row by
// row (Project), 255 eigenspaces made a preconditioned iteration on gasch2_GO (d = 3,698) 0.2 s.
func (pc *spectralPrecond) applyLowRank(ds *denseSpectrum, dst, R *mat.Dense) {
	k, _ := R.Dims()
	r, _ := ds.qt.Dims()
	qt := ds.qt.RawMatrix()
	if pc.lowC == nil {
		pc.lowC, pc.lowZ = mat.NewDense(k, r, nil), mat.NewDense(k, r, nil)
	}
	C, Z := pc.lowC, pc.lowZ
	gemm.MulT(C.RawMatrix(), R.RawMatrix(), qt)
	gemm.MulPanel(pc.t.RawMatrix(), C.RawMatrix(), qt)
	pc.t.Sub(R, pc.t) // R − C V
	col, out := make([]float64, k), make([]float64, k)
	for c := 1; c < len(pc.inv); c++ {
		mat.Col(col, c-1, C)
		if pc.inv[c] == nil {
			clear(out)
		} else {
			mat.NewVecDense(k, out).MulVec(pc.inv[c], mat.NewVecDense(k, col))
		}
		Z.SetCol(c-1, out)
	}
	if pc.inv[0] == nil {
		dst.Zero()
	} else {
		gemm.MulPanel(dst.RawMatrix(), pc.inv[0].RawMatrix(), pc.t.RawMatrix())
	}
	gemm.MulPanelAdd(dst.RawMatrix(), Z.RawMatrix(), qt)
}

// kronPrecond applies M⁻¹ for M = 2αE⊗I + G⊗M̄, where M̄ = S + Σ s_i δ_iδ_iᵀ / Σ s_i is the average
// curvature of the loss in the scores and E the identity with the intercept's entry zeroed (the
// intercept is not penalised). M is H when the δ_i do not depend on the inputs.
//
// In the eigenbasis of M̄ = Σ_b ν_b q_b q_bᵀ, M is block diagonal with blocks 2αE + ν_b G, and the
// eigenbasis G = Q diag(μ) Qᵀ makes 2αI + ν_b G diagonal. The intercept makes each block a rank-one
// update of that diagonal, inverted by Sherman–Morrison as in spectralPrecond:
//
//	(2αE + ν_b G)⁻¹ = Q [D_b + γ_b D_b Qᵀe eᵀQ D_b] Qᵀ,  D_b = diag(1/(2α + ν_b μ_j)),
//	γ_b = 2α / (1 − 2α eᵀQ D_b Qᵀe).
//
// Penalising the intercept here (M = 2αI + G⊗M̄) looks harmless but is not: along the
// eigenvectors of M̄ with small ν_b, the intercept's curvature m·ν_b is far below 2α, and CG then
// resolves those directions one at a time (gasch2_GO with the empirical measure, d = 564: 785
// iterations against 20; TestKronPrecondInterceptIterations).
type kronPrecond struct {
	qg, qm *mat.Dense // eigenvectors of G (k×k) and M̄ (d×d; nil: the identity)
	scale  *mat.Dense // D_b's diagonals: 1 / (2α + μ_j ν_b), k×d
	// qe is Qᵀe, the intercept's unit vector in G's eigenbasis, and gamma the γ_b (nil without
	// an intercept; 0 where ν_b vanishes, whose block stays penalised as in spectralPrecond).
	qe, gamma []float64
	v         *mat.Dense // column b: A_b⁻¹e, A_b = 2αI + ν_b G (interceptColumn), k×d
	t1, t2    *mat.Dense // k×d scratch
	s         []float64
	zero      nullDrop // J's null directions, where scale is zero (nullspace.go)
}

func (pc *kronPrecond) nullDirections() nullDrop { return pc.zero }

func newKronPrecond(p *Problem, des design, G *mat.SymDense) (linearPrecond, error) {
	m, d := p.dims()
	var total float64
	for i := 0; i < m; i++ {
		total += p.Weight[i]
	}
	// M̄'s δδᵀ part as Δᵀ diag(s/Σs) Δ, one block of rows at a time on package gemm.
	const block = 256
	sum := mat.NewDense(d, d, nil)
	rows, scaled := mat.NewDense(min(block, max(m, 1)), d, nil), mat.NewDense(min(block, max(m, 1)), d, nil)
	for lo := 0; lo < m; lo += block {
		hi := min(m, lo+block)
		for i := lo; i < hi; i++ {
			di := p.deltaRow(i, rows.RawRowView(i-lo))
			copy(rows.RawRowView(i-lo), di)
			floats.ScaleTo(scaled.RawRowView(i-lo), p.Weight[i]/total, di)
		}
		r := rows.Slice(0, hi-lo, 0, d).(*mat.Dense).RawMatrix()
		sr := scaled.Slice(0, hi-lo, 0, d).(*mat.Dense).RawMatrix()
		gemm.MulTNAdd(sum.RawMatrix(), r, sr)
	}
	mbar := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			mbar.SetSym(a, b, 0.5*(sum.At(a, b)+sum.At(b, a))+p.S.At(a, b))
		}
	}
	return kronPrecondOf(mbar, G, p.Alpha, des.intercept, des.stop)
}

// kronPrecondOf is the Kronecker preconditioner of the average curvature mbar and the Gram matrix
// G, whose last row and column are the intercept's when intercept is set: a kronPrecond, which
// diagonalises G, or for a large G a kronCholPrecond, which does not (kroncholesky.go).
func kronPrecondOf(mbar, G *mat.SymDense, alpha float64, intercept bool, stop *cancel.Flag) (linearPrecond, error) {
	var em mat.EigenSym
	if !em.Factorize(mbar, true) {
		return nil, fmt.Errorf("eigendecomposition of the average curvature failed")
	}
	qm := new(mat.Dense)
	em.VectorsTo(qm)
	nu := em.Values(nil)
	var pc linearPrecond
	var err error
	if blocks := kronCholBlocks(G.SymmetricDim(), len(nu)); blocks > 0 {
		pc, err = newKronCholPrecond(G, qm, nu, blocks, alpha, intercept, stop)
	} else {
		pc, err = newKronBlocks(G, qm, nu, alpha, intercept)
	}
	if err != nil || !intercept {
		return pc, err
	}
	return wrapNullIntercept(pc, nullEigenDrop(qm, nu)), nil
}

// newKronBlocks is the kronPrecond of G and the curvature Q_M diag(nu) Q_Mᵀ; a nil qm stands for
// the identity (newDiagPrecond: M̄ replaced by its diagonal nu).
func newKronBlocks(G *mat.SymDense, qm *mat.Dense, nu []float64, alpha float64, intercept bool) (*kronPrecond, error) {
	var eg mat.EigenSym
	if !eg.Factorize(G, true) {
		return nil, fmt.Errorf("eigendecomposition of XᵀX failed (non-finite inputs?)")
	}
	pc := &kronPrecond{qg: new(mat.Dense), qm: qm}
	eg.VectorsTo(pc.qg)
	mu := eg.Values(nil)
	k, d := len(mu), len(nu)
	pc.scale = mat.NewDense(k, d, nil)
	blocks := make([]float64, 0, k*d)
	zero := zeroValues(nu)
	if qm == nil {
		pc.zero = coordinatesDrop(zero)
	} else {
		pc.zero = vectorsDrop(qm, zero)
	}
	for j := 0; j < k; j++ {
		row := pc.scale.RawRowView(j)
		for b := range row {
			if slices.Contains(zero, b) {
				continue // J's null directions: zero here
			}
			v := 2*alpha + math.Max(0, mu[j])*math.Max(0, nu[b])
			row[b] = 1 / v
			blocks = append(blocks, v)
		}
	}
	if !spreadWithin(blocks) {
		return nil, errIllConditioned
	}
	pc.t1, pc.t2 = mat.NewDense(k, d, nil), mat.NewDense(k, d, nil)
	if !intercept {
		return pc, nil
	}
	pc.qe = pc.qg.RawRowView(k - 1)
	pc.gamma = make([]float64, d)
	pc.s = make([]float64, d)
	pc.v = mat.NewDense(k, d, nil)
	top := math.Max(0, floats.Max(nu))
	for b := range pc.gamma {
		if nu[b] <= nullRelTol*top {
			continue
		}
		var denom float64 // 1 − 2α eᵀ(2αI + ν_b G)⁻¹e without cancellation, as in spectralPrecond
		for j, q := range pc.qe {
			denom += q * q * math.Max(0, mu[j]) * math.Max(0, nu[b]) * pc.scale.At(j, b)
		}
		gamma := 2 * alpha / denom
		if !(denom > 0) || math.IsInf(gamma, 0) {
			return nil, errIllConditioned
		}
		pc.gamma[b] = gamma
		pc.v.SetCol(b, interceptColumn(pc.qg, pc.qe, mu, 2*alpha, math.Max(0, nu[b]), denom))
	}
	return pc, nil
}

func (pc *kronPrecond) apply(dst, R *mat.Dense) {
	t1, t2 := pc.t1.RawMatrix(), pc.t2.RawMatrix()
	if pc.qm == nil {
		gemm.MulTN(t2, pc.qg.RawMatrix(), R.RawMatrix()) // Qᵀ R
	} else {
		gemm.MulTN(t1, pc.qg.RawMatrix(), R.RawMatrix())
		gemm.MulPanel(t2, t1, pc.qm.RawMatrix()) // Qᵀ R Q_M̄: column b is ν_b's block
	}
	pc.t2.MulElem(pc.t2, pc.scale)
	if pc.qe != nil {
		// s_b = γ_b eᵀQ D_b t_b, with D_b t_b already in place; column b of the rotated result
		// gets s_b A_b⁻¹e below
		clear(pc.s)
		for j, q := range pc.qe {
			floats.AddScaled(pc.s, q, pc.t2.RawRowView(j))
		}
		floats.Mul(pc.s, pc.gamma)
	}
	out := t1
	if pc.qm == nil {
		out = dst.RawMatrix()
	}
	gemm.MulPanel(out, pc.qg.RawMatrix(), t2)
	if pc.qe != nil {
		for j := 0; j < out.Rows; j++ {
			row := out.Data[j*out.Stride:][:out.Cols]
			for b, v := range pc.v.RawRowView(j) {
				row[b] += v * pc.s[b]
			}
		}
	}
	if pc.qm != nil {
		gemm.MulT(dst.RawMatrix(), t1, pc.qm.RawMatrix())
	}
	if pc.zero != nil {
		pc.zero(dst)
	}
}

// newDiagPrecond is the fallback for covariance operators without a closed-form spectral
// decomposition (space.Spectral): kronPrecond with M̄ replaced by its diagonal, read off the
// operator in O(d), so that the ψ side needs no rotation. It is weaker than spectralPrecond (it
// ignores every off-diagonal entry of S) but costs O(k²d) per application and O(k·d) memory besides
// G's eigenbasis; for a large G it is a kronCholPrecond of that diagonal instead (kronCholBlocks),
// whose blocks hold up to 256 MB.
func newDiagPrecond(p *Problem, des design, G *mat.SymDense) (linearPrecond, error) {
	nu := p.curvatureDiag()
	if blocks := kronCholBlocks(G.SymmetricDim(), len(nu)); blocks > 0 {
		return newKronCholPrecond(G, nil, nu, blocks, p.Alpha, des.intercept, des.stop)
	}
	return newKronBlocks(G, nil, nu, p.Alpha, des.intercept)
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
