// Package ridge implements StructuredRidge, the thesis' counting-assumption learner: a
// Taylor-expanded ranking loss over all structures of an output space, which reduces to an
// unconstrained quadratic problem needing only the mean p and covariance S of ψ under the uniform
// distribution (docs/design.md §2). With u_i the scores of example i in ψ-coordinates,
//
//	J = α·‖W‖² + ½ Σ_i s_i [ u_iᵀ S u_i + (1 − δ_iᵀ u_i)² ],   δ_i = ψ(y_i) − p,
//
// where s_i are sample weights and ‖W‖² is ‖W‖²_F (linear model, intercept unpenalised) or
// tr(A K Aᵀ) (kernel model, u_i = A k_i).
package ridge

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Problem is a training problem reduced to what J needs: S, the centred targets δ_i and weights.
//
// S is held densely only up to MaxDim; beyond, the Problem is operator-only (S is nil), which only
// the linear model's conjugate-gradient solver accepts (see NewProblem). Memory is then
// O(m·d) for Delta, never O(d²).
type Problem struct {
	Alpha  float64        // regularisation α > 0
	S      *mat.SymDense  // d×d covariance of ψ under the uniform distribution; nil when d > MaxDim
	Cov    space.Operator // the same covariance as an operator (O(d) products for every space); always set
	Delta  *mat.Dense     // m×d, row i is δ_i = ψ(y_i) − p
	Weight []float64      // m sample weights s_i ≥ 0
	Mean   []float64      // p, the mean of ψ under the uniform distribution (ψ(y_i) = δ_i + p)
	// ref, when not nil, is the reference measure that replaced the uniform one (reference.go):
	// S, Cov and Mean are then its covariance and mean.
	ref *reference
	// targets, when not nil, holds Δ sparsely and Delta is nil (a cube space's targets given by
	// the positions of their ones: newCubeProblem); only the sparse-target linear CG fit reads it.
	targets *sparseTargets
}

// dims returns m and d, the shape of Δ.
// sBound is the ∞-norm of S (p.S must be held), which bounds its largest eigenvalue: the
// curvature bounds of SGD's steps and of kernel CG's precision warning use it.
func (p *Problem) sBound() float64 {
	_, d := p.S.Dims()
	var norm float64
	for a := 0; a < d; a++ {
		var row float64
		for b := 0; b < d; b++ {
			row += math.Abs(p.S.At(a, b))
		}
		norm = math.Max(norm, row)
	}
	return norm
}

func (p *Problem) dims() (m, d int) {
	if p.Delta == nil {
		return p.targets.m, p.targets.d
	}
	return p.Delta.Dims()
}

// psiNonzeros is the number of non-zero coordinates of ψ(y_i) = δ_i + p, from Δ held densely.
func (p *Problem) psiNonzeros(i int) int {
	z := 0
	for a, v := range p.Delta.RawRowView(i) {
		if v+p.Mean[a] != 0 {
			z++
		}
	}
	return z
}

// deltaRow returns δ_i: a view of Delta's row, or the row written into buf (length d) from the
// sparse targets.
func (p *Problem) deltaRow(i int, buf []float64) []float64 {
	if p.Delta == nil {
		return p.targets.row(i, buf)
	}
	return p.Delta.RawRowView(i)
}

// denseMaxDim is the largest d for which a Problem holds S densely: MaxDim, lowered by tests to
// exercise the operator-only path on small spaces.
var denseMaxDim = MaxDim

// largeDistributedDimError explains that a fit of data spread over machines needs d ≤ denseMaxDim
// whatever its solver: its parts sum the d×d moments M (and merged statistics hold more), where
// largeDimError's "cg or auto are supported" told a Dask user the refused call was supported
// (probe EY).
func largeDistributedDimError(sp space.Space) error {
	return fmt.Errorf("the %s space has dimension %d > %d: a distributed fit (combpred.dask) sums d×d moments over its "+
		"partitions with every solver, so it needs d ≤ %d; fit StructuredRidge in memory (its linear CG takes d > %d), "+
		"or compute the Dask array first", sp.Kind(), sp.Dim(), denseMaxDim, denseMaxDim, denseMaxDim)
}

// largeDimError explains that a space of dimension d > denseMaxDim only supports the linear model
// solved by conjugate gradients.
func largeDimError(sp space.Space) error {
	return fmt.Errorf("the %s space has dimension %d > %d: beyond that, StructuredRidge does not hold the d×d covariance of ψ, "+
		"so only the linear kernel (or a Nyström map, n_components) fitted with solver=\"cg\" or \"auto\" is supported; "+
		"solver=\"exact\", solver=\"sgd\", kernel models without n_components and partial_fit need d ≤ %d",
		sp.Kind(), sp.Dim(), denseMaxDim, denseMaxDim)
}

// NewProblem embeds m validated structures ys of sp, centres them and pairs them with weights
// (nil means all ones). It refuses spaces with d > MaxDim, for which S would be dense d×d: the
// linear CG solver reaches those through Fit, which builds an operator-only Problem.
func NewProblem(sp space.Space, ys []int64, m int, weights []float64, alpha float64) (*Problem, error) {
	return newProblem(sp, ys, m, weights, alpha, 0, nil)
}

// problemFlags relax newProblem's checks.
type problemFlags uint8

const (
	// operatorOK: a space with d > denseMaxDim gets an operator-only Problem (S nil) instead of an
	// error.
	operatorOK problemFlags = 1 << iota
	// partOfData: the examples are a part of the data (a partition of a distributed fit, a chunk
	// of partial_fit), whose largest weight may be subnormal: the fit's solve checks the total.
	partOfData
)

// J = α‖W‖² + ½Σ s_i ℓ_i: multiplying every weight by c is the fit of alpha / c, so the weights'
// scale is the user's to choose. The advice of every weight-scale error, in its two directions.
const (
	growWeights   = "multiplying them all by c fits as alpha / c does"
	shrinkWeights = "dividing them all by c fits as alpha·c does"
)

// weightHint is growWeights where the weights are too small, shrinkWeights where too large.
func weightHint(tooSmall bool) string {
	if tooSmall {
		return growWeights
	}
	return shrinkWeights
}

// checkWeightTotal refuses a positive total weight below the smallest normal number. Each part of
// the data (a partition of a distributed fit, a chunk of partial_fit) may hold subnormal weights
// only, a part of small importance; together they must weigh as a normal number, as the in-memory
// fit's largest weight must.
func checkWeightTotal(sum float64) error {
	if sum > 0 && sum < minLargestWeight {
		return fmt.Errorf("the examples' weights sum to %.3g, a subnormal number, whose products lose their digits: "+
			"rescale the weights (%s)", sum, growWeights)
	}
	return nil
}

// newProblem is NewProblem with its checks relaxed by flags, returning ErrCancelled once stop is
// seen set (nil never stops).
func newProblem(sp space.Space, ys []int64, m int, weights []float64, alpha float64, flags problemFlags, stop *cancel.Flag) (*Problem, error) {
	if err := check.Alpha(alpha); err != nil {
		return nil, err
	}
	dense := sp.Dim() <= denseMaxDim
	if !dense && flags&operatorOK == 0 {
		return nil, largeDimError(sp)
	}
	width, d := sp.Width(), sp.Dim()
	if len(ys) != m*width {
		return nil, space.ValidateTargets(sp, ys, m) // names the lengths
	}
	// in blocks of stopRows examples, each counting its rows from the first example
	for lo := 0; lo < m; lo += stopRows {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		hi := min(lo+stopRows, m)
		if err := space.ValidateTargetRows(sp, ys[lo*width:hi*width], hi-lo, lo); err != nil {
			return nil, err
		}
	}
	w, err := sampleWeights(weights, m, flags&partOfData != 0)
	if err != nil {
		return nil, err
	}
	delta := mat.NewDense(m, d, nil)
	counted := space.Counts(sp) == nil
	p := make([]float64, d)
	if counted {
		sp.Mean(p)
	}
	raw := delta.RawMatrix().Data
	for lo := 0; lo < m; lo += stopRows {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		hi := min(lo+stopRows, m)
		space.EmbedRows(sp, ys[lo*width:hi*width], hi-lo, raw[lo*d:hi*d])
		for i := lo; i < hi; i++ {
			for a := 0; a < d; a++ {
				raw[i*d+a] -= p[a]
			}
		}
	}
	prob := &Problem{Alpha: alpha, Cov: sp.Covariance(), Delta: delta, Weight: w, Mean: p}
	if dense && counted {
		if prob.S, err = space.DenseUntil(prob.Cov, stop); err != nil {
			return nil, err
		}
	} else if dense {
		// No uniform measure: a placeholder of weight 0 that useReference replaces (checkCounts).
		prob.S = mat.NewSymDense(d, nil)
	}
	return prob, nil
}

// scaledWeights returns p with its sample weights and α divided by sigma, opt with a Progress that
// reports J at the scale of p, and the σ it divided by: J(W; α, s) = σ·J(W; α/σ, s/σ), the same
// minimiser. The conjugate gradients' dot products carry the scales of α and the weights to a
// power, and each solver picks the σ that puts its problem where its arithmetic is safe
// (unitWeights, unitAlpha): weights and α both 1e105 overflowed kernel CG's curvatures and were
// refused, both 1e-120 underflowed them to zero, which stopped it after one step 26 % from the
// optimum, and linear CG at 1e300 ran 1,000 iterations where it takes 48 at 1 (probe BA). It
// returns p, opt and 1 where sigma is 1 or would take α out of its range.
func scaledWeights(p *Problem, opt *Options, sigma float64) (*Problem, *Options, float64) {
	if sigma == 1 || !(sigma > 0) || math.IsInf(sigma, 0) || check.ScaledAlpha(p.Alpha/sigma) != nil {
		return p, opt, 1
	}
	q := *p
	q.Alpha = p.Alpha / sigma
	q.Weight = make([]float64, len(p.Weight))
	for i, w := range p.Weight {
		q.Weight[i] = w / sigma
	}
	if opt.Progress != nil {
		o, progress := *opt, opt.Progress
		o.Progress = func(it int, objective, relGrad float64) bool { return progress(it, sigma*objective, relGrad) }
		opt = &o
	}
	return &q, opt, sigma
}

// unitWeights is the σ that makes p's largest weight 1 for kernel CG, whose curvatures scale as
// s²(α + s): a weight scale of 1 keeps them in range for any α (at weights of 1e-300 they underflowed
// to 0 and the fit was refused as an indefinite kernel; fit refuses the α that would leave alpha's
// range, checkKernelWeightScale). Within 1e±50 the weights are left as they are (σ = 1), so that the
// fits users run keep their arithmetic bit for bit.
func unitWeights(p *Problem) float64 {
	if len(p.Weight) == 0 {
		return 1
	}
	if top := floats.Max(p.Weight); top < 1e-50 || top > 1e50 {
		return top
	}
	return 1
}

// unitAlpha is the σ for linear CG: α's own where α > 1e100, whose preconditioners square 2α (at
// α = 1e200 CG diverged where the same problem at α = 1, weights 1e-200, converges), as far as the
// weights allow (none above 1e300 or, positive, below 1e-300 after the division); the largest
// weight's where that is above 1e100 (weights of 2.5e306 overflowed H's products); otherwise 1, as
// for unitWeights: unit weights keep the products' fast paths (design.gram's).
func unitAlpha(p *Problem) float64 {
	lo, hi, top := 0.0, math.Inf(1), 0.0
	for _, w := range p.Weight {
		if w > 0 {
			lo, hi, top = max(lo, w*1e-300), min(hi, w*1e300), max(top, w)
		}
	}
	switch {
	case p.Alpha > 1e100:
		return max(min(p.Alpha, hi), lo)
	case top > 1e100:
		return top
	}
	return 1
}

// scaledResult is a solver's result on scaledWeights' problem at the scale σ of the original: J·σ
// (finite: J is at most half the weights' sum, which sampleWeights keeps finite).
func scaledResult(res Result, err error, sigma float64) (Result, error) {
	res.Objective *= sigma
	return res, err
}

// minLargestWeight is the smallest largest sample weight a fit takes: the smallest normal float64.
const minLargestWeight = 0x1p-1022

// sampleWeights checks the sample weights of m examples (nil means all ones: finite,
// non-negative, with a positive finite sum and, unless they are a part of the data, a largest
// that is a normal number) and returns a copy.
func sampleWeights(weights []float64, m int, part bool) ([]float64, error) {
	w := make([]float64, m)
	if weights == nil {
		for i := range w {
			w[i] = 1
		}
	} else {
		if len(weights) != m {
			return nil, fmt.Errorf("sample_weight has %d entries for %d samples", len(weights), m)
		}
		var total, top float64
		for i, v := range weights {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("sample_weight[%d] = %v: weights must be finite and non-negative", i, v)
			}
			total += v
			top = max(top, v)
		}
		if total == 0 {
			return nil, fmt.Errorf("sample_weight sums to zero")
		}
		if top < minLargestWeight && !part {
			// Products with subnormal weights lose their digits or vanish: a linear CG fit at
			// 5e-324 returned W = 0, the intercept unfitted, without a warning.
			return nil, fmt.Errorf("sample_weight's largest value is %.3g, a subnormal number, whose products lose their "+
				"digits: rescale the weights (%s)", top, growWeights)
		}
		if math.IsInf(total, 0) {
			// J weighs the loss by s_i: a sum beyond float64 overflows it (scaling every weight
			// by c is the same fit as alpha / c, so the weights' scale is free to choose).
			return nil, fmt.Errorf("sample_weight sums to more than %.3g: rescale the weights (%s)", math.MaxFloat64, shrinkWeights)
		}
		copy(w, weights)
	}
	return w, nil
}

// mulS writes V·S into dst (m×d), row i being S v_i, through the covariance operator row by row:
// O(d) per row for every space, where the dense product would cost O(d²).
func (p *Problem) mulS(dst, V *mat.Dense) {
	if p.ref != nil && p.ref.op == nil {
		// A reference measure's S is dense: one matrix product instead of m matrix-vector ones
		// (cellcycle_FUN, d = 500: the difference between minutes and seconds per fit), unless
		// the sparse training structures apply it faster (empiricalOperator).
		gemm.Mul(dst.RawMatrix(), V.RawMatrix(), p.ref.full.RawMatrix())
		return
	}
	if p.ref != nil {
		p.ref.op.mulRows(dst, V)
		return
	}
	m, _ := V.Dims()
	parallel.For(m, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p.Cov.MulVec(dst.RawRowView(i), V.RawRowView(i))
		}
	})
}

// lossGrad computes ½ Σ s_i [u_iᵀ S u_i + (1 − δ_iᵀu_i)²] at scores U (m×d) and, when g is not nil,
// writes its derivative with respect to U into g: row i is s_i (S u_i − (1 − δ_iᵀu_i) δ_i).
func (p *Problem) lossGrad(U *mat.Dense, g *mat.Dense) float64 {
	m, d := U.Dims()
	su := mat.NewDense(m, d, nil)
	p.mulS(su, U)
	var loss float64
	for i := 0; i < m; i++ {
		var gi []float64
		if g != nil {
			gi = g.RawRowView(i)
		}
		loss += p.exampleLoss(i, U.RawRowView(i), su.RawRowView(i)[:d], gi)
	}
	return loss
}

// exampleLoss returns ½ s_i [uᵀSu + (1 − δ_iᵀu)²] given u and su = S u, and writes its gradient
// s_i (S u − (1 − δ_iᵀu) δ_i) into g when g is not nil.
func (p *Problem) exampleLoss(i int, u, su, g []float64) float64 {
	di := p.Delta.RawRowView(i)
	var quad, du float64
	for a, v := range u {
		quad += v * su[a]
		du += di[a] * v
	}
	r := 1 - du
	if g != nil {
		for a := range g {
			g[a] = p.Weight[i] * (su[a] - r*di[a])
		}
	}
	return 0.5 * p.Weight[i] * (quad + r*r)
}

// curvature writes row i = s_i (S + δ_iδ_iᵀ) v_i into dst for V (m×d): the Hessian of the loss in
// the scores, applied row by row. dst may be V where curvatureInPlace says so.
func (p *Problem) curvature(dst, V *mat.Dense) {
	m, d := V.Dims()
	// Without a reference measure S is applied row by row in the same pass (a separate pass of
	// mulS read and wrote m×d values once more, a tenth of a tall linear fit).
	fused := p.ref == nil
	if !fused {
		p.mulS(dst, V)
	} else if dc, ok := p.Cov.(space.DiagonalPlusConstant); ok {
		p.diagonalCurvature(dst, V, dc)
		return
	}
	parallel.For(m, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v, di, out := V.RawRowView(i)[:d], p.Delta.RawRowView(i)[:d], dst.RawRowView(i)[:d]
			if fused {
				p.Cov.MulVec(out, v)
			}
			dv, w := floats.Dot(di, v), p.Weight[i]
			for a, x := range di {
				out[a] = w * (out[a] + dv*x)
			}
		}
	})
}

// curvatureInPlace reports whether curvature may write over its input: for S = diag(a) + c·11ᵀ
// without a reference measure (multi-label, multi-class), diagonalCurvature reads each row whole
// before it writes it. In place, an application of H on 1,000 labels moves one m×d matrix less
// through memory.
func (p *Problem) curvatureInPlace() bool {
	_, ok := p.Cov.(space.DiagonalPlusConstant)
	return ok && p.ref == nil
}

// diagonalCurvature is curvature for S = diag(a) + c·11ᵀ: each row's two sums (δ_iᵀv_i and 1ᵀv_i)
// on gonum's assembly kernels, then one pass that writes the output, with the arithmetic of
// MulVec and curvature's general loop, so that the results are bit-identical to theirs. On the
// many-label benchmark's problem (5,000 × 1,000, in place) one application took 4.4 ms with the
// two sums in one scalar loop of dependent additions and takes 3.6 ms so, near the floor its
// memory traffic sets (three m×d passes, 33 GB/s). dst may be V.
func (p *Problem) diagonalCurvature(dst, V *mat.Dense, dc space.DiagonalPlusConstant) {
	m, d := V.Dims()
	diag, c := dc.DiagonalPlusConstant()
	diag = diag[:d]
	parallel.For(m, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v, di, out := V.RawRowView(i)[:d], p.Delta.RawRowView(i)[:d], dst.RawRowView(i)[:d]
			dv, cs, w := floats.Dot(di, v), c*floats.Sum(v), p.Weight[i]
			for a, x := range v {
				out[a] = w * (diag[a]*x + cs + dv*di[a])
			}
		}
	})
}

// LinearObjective returns J at W ((n+1)×d when intercept, else n×d) for inputs X (m×n) and writes
// ∇J into grad when it is not nil. The intercept row, W's last, is not penalised.
func (p *Problem) LinearObjective(X *mat.Dense, intercept bool, W, grad *mat.Dense) float64 {
	return p.linearObjective(design{X: X, intercept: intercept}, W, grad)
}

// linearObjective is LinearObjective on the rows of des, dense or sparse.
func (p *Problem) linearObjective(des design, W, grad *mat.Dense) float64 {
	m := des.samples()
	_, d := W.Dims()
	U := mat.NewDense(m, d, nil)
	des.mul(U, W)
	var g *mat.Dense
	if grad != nil {
		g = mat.NewDense(m, d, nil)
	}
	j := p.lossGrad(U, g) + p.Alpha*des.penalty(W)
	if grad != nil {
		des.tmul(grad, g)
		des.addPenaltyGrad(grad, W, 2*p.Alpha)
	}
	return j
}

// KernelObjective returns J at the expansion coefficients A (d×m) for the Gram matrix K (m×m)
// and writes ∇J (d×m) into grad when it is not nil: ∇J = (2αA + Gᵀ)K with G = ∂loss/∂U.
func (p *Problem) KernelObjective(K, A, grad *mat.Dense) float64 {
	d, m := A.Dims()
	var AK mat.Dense
	AK.Mul(A, K)
	U := mat.DenseCopyOf(AK.T())
	var g *mat.Dense
	if grad != nil {
		g = mat.NewDense(m, d, nil)
	}
	j := p.lossGrad(U, g) + p.Alpha*mat.Dot(vecOf(A), vecOf(&AK))
	if grad != nil {
		inner := mat.DenseCopyOf(g.T())
		inner.Add(inner, scaled(2*p.Alpha, A))
		grad.Mul(inner, K)
	}
	return j
}

// Constant is ½ Σ s_i. The loss part of J equals the thesis' Taylor-expanded loss
// Σ_i s_i E_z[a + a²/2] plus Constant, where a = f(z) − f(y_i) and z is uniform over Y.
func (p *Problem) Constant() float64 {
	var c float64
	for _, w := range p.Weight {
		c += w
	}
	return c / 2
}

func vecOf(a *mat.Dense) *mat.VecDense {
	r, c := a.Dims()
	return mat.NewVecDense(r*c, mat.DenseCopyOf(a).RawMatrix().Data)
}

func scaled(f float64, a mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Scale(f, a)
	return &out
}
