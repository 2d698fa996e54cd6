package ridge

import (
	"errors"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// dualPrecond applies spectralPrecond's M⁻¹ = Σ_c (2αE + M_c G)⁻¹ ⊗ P_c for a wide design, one
// with fewer rows than columns (sparse text: medical has 333 documents and 1,449 words), through
// the m×m Gram matrix of the rows instead of the k×k G, which is never formed. With
// Z = diag(√s) X̃ (m×k), G = ZᵀZ, and Woodbury's identity gives
//
//	B_c⁻¹ = (2αI + M_c ZᵀZ)⁻¹ = (I − Zᵀ C_c Z) / 2α,  C_c = (2α/M_c · I + Z Zᵀ)⁻¹ (m×m),
//
// and the unpenalised intercept, A_c = B_c − 2α e eᵀ, is the rank-one update of spectralPrecond:
//
//	A_c⁻¹ = B_c⁻¹ + γ_c b_c b_cᵀ,  b_c = B_c⁻¹ e,  γ_c = 2α / (1 − 2α eᵀb_c),
//
// left out, as there, on eigenspaces where M_c vanishes. So the CG fit of a wide sparse design gets
// the exact Kronecker part that a narrow one gets, where it used to get G's diagonal
// (diagGramPrecond): medical, 166 iterations with the diagonal, 20 with this. Applying it costs two
// passes over X and a product with C_c per eigenspace: O(nnz·d + K·m²·d) time, O(K·m² + m·d)
// memory.
type dualPrecond struct {
	op    space.Spectral
	des   design
	alpha float64
	sq    []float64    // √s_i
	c     []*mat.Dense // C_c (nil where M_c = 0: the block is 2αI, or zero where zero holds c)
	b     [][]float64  // b_c (nil without the intercept update)
	gamma []float64
	// scratch: proj and acc k×d, t and u m×d
	proj, acc, t, u *mat.Dense
	// zeroes lists the eigenspaces that are J's null directions, where the preconditioner is
	// zero, and zero removes them (nullspace.go)
	zeroes []int
	zero   nullDrop
}

func (pc *dualPrecond) nullDirections() nullDrop { return pc.zero }

// dualMaxRows bounds the rows m of a design that gets dualPrecond: its set-up factorises an m×m
// matrix per eigenspace of S, and it holds their inverses. A variable so that tests reach both
// preconditioners.
var dualMaxRows = 2048

// useDual reports whether the CG fit of des on p takes dualPrecond: a design with fewer rows than
// columns, at most dualMaxRows of them, and a Spectral covariance, or a held one (a reference
// measure's) through its eigendecomposition, in at most dualDenseSpaces eigenspaces (denseSpectrum:
// without it, such a fit got G's diagonal, and 150 rows of bibtex with empirical_weight=0.3 took
// 1,000 CG iterations without converging).
func useDual(p *Problem, des design) (space.Spectral, bool) {
	if linearPrecondMode != precondAuto {
		return nil, false
	}
	m, spaces := des.samples(), 3
	if m >= des.cols() || m > dualMaxRows {
		return nil, false
	}
	sp, ok := space.SpectralOf(p.Cov)
	if !ok && p.S != nil {
		spaces = min(p.S.SymmetricDim(), dualDenseSpaces)
	}
	// Its set-up holds the m×m Gram matrix, a factor and an inverse per eigenspace; a sparse X's
	// Gram matrix goes through its transpose, whose row pointers follow X's declared width.
	if budget.Check("", budget.Mul(int64(spaces+2), int64(m), int64(m), 8)) != nil {
		return nil, false
	}
	if des.sp != nil && des.sp.CheckTranspose("X", "the dual preconditioner") != nil {
		return nil, false
	}
	if !ok && p.S != nil {
		if ds, good := newDenseSpectrum(p.S, spaces); good {
			return ds, true
		}
	}
	return sp, ok
}

// dualDenseSpaces bounds the eigenspaces of a held covariance in dualPrecond (denseSpectrum).
var dualDenseSpaces = 16

func newDualPrecond(p *Problem, des design, op space.Spectral) (*dualPrecond, error) {
	m, k := des.samples(), des.cols()
	_, d := p.dims()
	es := op.Spectrum()
	M := make([]float64, len(es))
	for c, e := range es {
		M[c] = math.Max(0, e.Value)
	}
	op, M = mergeEqualValues(op, M)
	es = op.Spectrum()
	pc := &dualPrecond{op: op, des: des, alpha: p.Alpha, sq: make([]float64, m), c: make([]*mat.Dense, len(es)),
		b: make([][]float64, len(es)), gamma: make([]float64, len(es)),
		proj: mat.NewDense(k, d, nil), acc: mat.NewDense(k, d, nil), t: mat.NewDense(m, d, nil), u: mat.NewDense(m, d, nil)}
	for i, s := range p.Weight[:m] {
		pc.sq[i] = math.Sqrt(s)
	}
	K := des.rowGram(pc.sq)
	top := floats.Max(M)
	// B_c has the eigenvalue 2α on the k − m directions the rows leave flat and at most
	// 2α + M_c‖K‖₁ elsewhere: its condition number, which maxPrecondCondition bounds.
	if !(top*norm1(K.RawMatrix()) <= (maxPrecondCondition-1)*2*p.Alpha) {
		return nil, errIllConditioned
	}
	diag := make([]float64, m)
	for i := range diag {
		diag[i] = K.At(i, i)
	}
	cz := mat.NewDense(m, 1, nil)
	w := mat.NewDense(k, 1, nil)
	pc.zeroes = zeroSpaces(p, op, M, top)
	pc.zero = eigenspacesDrop(op, pc.zeroes)
	for c, mc := range M {
		if mc == 0 || slices.Contains(pc.zeroes, c) {
			continue
		}
		for i, v := range diag {
			K.Set(i, i, v+2*p.Alpha/mc)
		}
		inv, err := spdInverse(K.RawMatrix(), des.stop)
		if errors.Is(err, ErrCancelled) {
			return nil, err
		}
		if err != nil {
			return nil, errIllConditioned
		}
		pc.c[c] = inv
		if !des.intercept || mc <= nullRelTol*top {
			continue
		}
		// With z = Z e = √s: 1 − 2α eᵀB_c⁻¹e = zᵀC_c z, taken as it stands rather than as a
		// difference that cancels when the intercept's curvature is small, and
		// b_c = (e − Zᵀ C_c z) / 2α.
		gemm.Mul(cz.RawMatrix(), inv.RawMatrix(), mat.NewDense(m, 1, pc.sq).RawMatrix())
		denom := floats.Dot(pc.sq, cz.RawMatrix().Data)
		pc.scaleRows(cz)
		des.tmul(w, cz)
		b := make([]float64, k)
		for j, v := range w.RawMatrix().Data {
			b[j] = -v / (2 * p.Alpha)
		}
		b[k-1] = (1 - w.At(k-1, 0)) / (2 * p.Alpha)
		gamma := 2 * p.Alpha / denom
		if !(denom > 0) || math.IsInf(gamma, 0) {
			return nil, errIllConditioned
		}
		pc.b[c], pc.gamma[c] = b, gamma
	}
	return pc, nil
}

// applyB writes B_c⁻¹R into dst (k×cols), with t and u m×cols scratch.
func (pc *dualPrecond) applyB(c int, dst, R, t, u *mat.Dense) {
	f := 1 / (2 * pc.alpha)
	if slices.Contains(pc.zeroes, c) {
		dst.Zero()
		return
	}
	if pc.c[c] == nil {
		dst.Scale(f, R)
		return
	}
	pc.des.mul(t, R) // X̃R, then Z R = diag(√s) X̃R
	pc.scaleRows(t)
	gemm.MulPanel(u.RawMatrix(), pc.c[c].RawMatrix(), t.RawMatrix())
	pc.scaleRows(u)
	pc.des.tmul(dst, u) // Zᵀ C Z R
	dst.Sub(R, dst)
	dst.Scale(f, dst)
}

// scaleRows multiplies row i of a (m×cols) by √s_i.
func (pc *dualPrecond) scaleRows(a *mat.Dense) {
	m, _ := a.Dims()
	parallel.For(m, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			floats.Scale(pc.sq[i], a.RawRowView(i))
		}
	})
}

func (pc *dualPrecond) apply(dst, R *mat.Dense) {
	k, d := R.Dims()
	project := func(c int) {
		parallel.For(k, max(1, 4096/max(d, 1)), func(lo, hi int) {
			for j := lo; j < hi; j++ {
				pc.op.Project(c, pc.proj.RawRowView(j), R.RawRowView(j))
			}
		})
	}
	if len(pc.c) == 1 {
		pc.proj.Copy(R)
	}
	dst.Zero()
	s := make([]float64, d)
	for c := range pc.c {
		if len(pc.c) > 1 {
			project(c)
		}
		pc.applyB(c, pc.acc, pc.proj, pc.t, pc.u)
		if b := pc.b[c]; b != nil {
			clear(s) // s = b_cᵀ P_c R
			for j, v := range b {
				floats.AddScaled(s, v, pc.proj.RawRowView(j))
			}
			for j, v := range b {
				floats.AddScaled(pc.acc.RawRowView(j), pc.gamma[c]*v, s)
			}
		}
		dst.Add(dst, pc.acc)
	}
	if pc.zero != nil {
		pc.zero(dst)
	}
}

// rowGram is Z Zᵀ for Z = diag(sq) X̃: the inner products of the rows of [X 1], scaled by sq on
// both sides (m×m, symmetric).
func (d design) rowGram(sq []float64) *mat.Dense {
	m := d.samples()
	K := mat.NewDense(m, m, nil)
	if d.sp != nil {
		xmat.Products(K, d.sp, d.sp)
	} else {
		gemm.MulT(K.RawMatrix(), d.X.RawMatrix(), d.X.RawMatrix())
	}
	one := 0.0
	if d.intercept {
		one = 1
	}
	for i := 0; i < m; i++ {
		row := K.RawRowView(i)
		for j, v := range row {
			row[j] = sq[i] * (v + one) * sq[j]
		}
	}
	return K
}
