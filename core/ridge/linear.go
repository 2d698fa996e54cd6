package ridge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// linearSystem is J for the linear model written as ½⟨W, H W⟩ − ⟨B, W⟩ + c with
// H V = 2α V (intercept row excepted) + X̃ᵀ curvature(X̃ V).
type linearSystem struct {
	p   *Problem
	des design
	B   *mat.Dense // X̃ᵀ diag(s) Δ, = −∇J(0)
	// U and C are m×d scratch, allocated by the first apply: when the narrow or grouped form of
	// H does the iterations, linearSystem only provides B, and they would be memory for nothing.
	// C is U where the curvature can be applied in place.
	U, C *mat.Dense
}

func newLinearSystem(p *Problem, des design) *linearSystem {
	m, d := p.dims()
	// Unit weights (no sample_weight) need no weighted copy of Δ: 1·δ is δ, and on 1,000 labels the
	// copy was an m×d allocation and pass, a tenth of the set-up.
	sd := p.Delta
	if slices.ContainsFunc(p.Weight[:m], func(s float64) bool { return s != 1 }) {
		sd = mat.NewDense(m, d, nil)
		for i := 0; i < m; i++ {
			src, dst := p.Delta.RawRowView(i), sd.RawRowView(i)
			for a := range src {
				dst[a] = p.Weight[i] * src[a]
			}
		}
	}
	B := mat.NewDense(des.cols(), d, nil)
	des.tmul(B, sd)
	return &linearSystem{p: p, des: des, B: B}
}

func (ls *linearSystem) apply(dst, V *mat.Dense) {
	if ls.U == nil {
		m, d := ls.p.dims()
		ls.U = mat.NewDense(m, d, nil)
		if ls.C = ls.U; !ls.p.curvatureInPlace() {
			ls.C = mat.NewDense(m, d, nil)
		}
	}
	ls.des.mul(ls.U, V)
	ls.p.curvature(ls.C, ls.U)
	ls.des.tmul(dst, ls.C)
	ls.des.addPenaltyGrad(dst, V, 2*ls.p.Alpha)
}

// linearPrecond approximates the inverse of the linear model's Hessian H: apply writes M⁻¹R into
// dst, both k×d (rows of W × d).
type linearPrecond interface {
	apply(dst, R *mat.Dense)
}

// newLinearPrecond picks the preconditioner: spectralPrecond when the covariance operator knows
// its spectral decomposition (the pair spaces, multiclass, multilabel, k-subsets), at any d;
// otherwise kronPrecond when S is held densely and d ≤ kronMaxDim, spectralPrecond on S's partial
// spectrum when it is held densely beyond (for k ≤ spectralEigenMax), and the weaker
// newDiagPrecond for the rest (operator-only Problems, d > MaxDim, among them). spectralPrecond
// and newDiagPrecond need O(k² + k·d) memory, never d×d (the partial spectrum's set-up takes a
// d×d copy of S, checked against the budget).
func newLinearPrecond(p *Problem, des design, G *mat.SymDense) (linearPrecond, error) {
	switch linearPrecondMode {
	case precondNone:
		return identityPrecond{}, nil
	case precondDiag:
		return newDiagPrecond(p, des, G)
	case precondKron:
		if p.S != nil {
			return newKronPrecond(p, des, G)
		}
	}
	if sp, ok := space.SpectralOf(p.Cov); ok {
		return newSpectralPrecond(p, des, G, sp, linearPrecondMode == precondSpectralMean)
	}
	_, d := p.dims()
	if p.S != nil && d <= kronMaxDim {
		return newKronPrecond(p, des, G)
	}
	// Beyond it, S's largest eigenpairs and the rest at their mean: the diagonal preconditioner
	// never mixes coordinates, and a reference's covariance mixes them strongly (all 3,698 terms
	// of gasch2_GO: 3,562 iterations to 1e-8). One k×k block inverse per eigenspace: for few
	// features only.
	if p.S != nil && G != nil && des.cols() <= spectralEigenMax && linearPrecondMode == precondAuto {
		// the block inverses take 8k² bytes each: at most 64 MB of them, but 16 blocks at any k
		spaces := min(partialSpectrumSpaces, max(16, (1<<23)/(des.cols()*des.cols())))
		if ps, ok := newPartialSpectrum(p.S, spaces, uint64(d)); ok {
			pc, err := newSpectralPrecond(p, des, G, ps, false)
			if err == nil || errors.Is(err, ErrCancelled) {
				return pc, err
			}
		}
	}
	return newDiagPrecond(p, des, G)
}

// partialSpectrumSpaces is the number of eigenspaces of newLinearPrecond's partial spectrum of S
// (the largest eigenvalues and their mean of the rest). On gasch2_GO at d = 698, 16 took 506
// CG iterations, 64 took 279 and 256 took 92; the diagonal preconditioner 751.
const partialSpectrumSpaces = 256

// kronMaxDim is the largest d for which auto picks kronPrecond over the diagonal one. Its set-up,
// gonum's eigendecomposition of the d×d M̄, leaves the cache between d = 640 and 768. Measured
// beside other work: 0.57 s at 564, 0.79 s at 640, 3.2 s at 768, 17 s at 1,024, and 218 s at
// 3,698. On gasch2_GO with the empirical reference, at d = 564 it beats the diagonal one
// (18 iterations against 407: 0.7 s against 2.5 s in all); beyond it S's partial spectrum
// stands in (newPartialSpectrum).
const kronMaxDim = 640

// linearHessian returns the cheapest form of H for des with its Gram matrix G (nil when not
// formed), and B = −∇J(0); or nil, nil once des.stop is seen set while the forms are tried.
func linearHessian(p *Problem, des design, G *mat.SymDense) (hessian, *mat.Dense) {
	k := des.cols()
	if p.targets != nil { // Δ only held sparsely (newCubeProblem): G was computed for it
		ts := newSparseTargetSystem(p, des, G)
		return ts, ts.rhs()
	}
	// The grouped form costs k²·d per application, a sparse X's own products 2·nnz·d.
	if G != nil && (des.sp == nil || 2*float64(des.sp.NNZ()) > float64(k)*float64(k)) {
		if gs := newGroupedSystem(p, des, G); gs != nil {
			return gs, gs.rhs()
		}
		if des.stop.Stopped() {
			return nil, nil // newGroupedSystem gave up on it; the caller returns ErrCancelled
		}
		if ns := newNarrowSystem(p, des); ns != nil {
			return ns, newLinearSystem(p, des).B
		}
	}
	// Sparse targets (one-hot classes, few labels on) apply S to k rows as referenceSystem does,
	// and skip its products of m·k·d besides: on multiclass(500) under a reference, 1.5 ms per
	// application against 9.9.
	if ts := newSparseTargetSystem(p, des, G); ts != nil {
		return ts, ts.rhs()
	}
	if rs := newReferenceSystem(p, des, G); rs != nil {
		return rs, newLinearSystem(p, des).B
	}
	if _, d := p.dims(); d >= wideCols && des.features() < d {
		// Wide outputs: the copy [X 1] is smaller than either m×d scratch of linearSystem and saves
		// a pass over each per application.
		des = des.withOnes()
	}
	ls := newLinearSystem(p, des)
	return ls, ls.B
}

// wideCols is the narrowest output for which linearHessian holds [X 1] explicitly (when X has
// fewer columns than the output).
const wideCols = 64

// solveLinearCG minimises J by conjugate gradients preconditioned with newLinearPrecond, starting
// at W (updated in place).
func solveLinearCG(p *Problem, des design, W *mat.Dense, opt *Options) (Result, error) {
	sigma := unitAlpha(p)
	p, opt, sigma = scaledWeights(p, opt, sigma)
	res, err := solveLinearCGUnit(p, des, W, opt)
	return scaledResult(res, err, sigma)
}

// solveLinearCGUnit is solveLinearCG on the problem scaledWeights leaves.
func solveLinearCGUnit(p *Problem, des design, W *mat.Dense, opt *Options) (Result, error) {
	// Each step of the set-up is one pass over X at most (a tenth of a second at 200,000 × 60):
	// Stop is checked between them, and every iteration.
	_, d := W.Dims()
	// A sparse X with many features gets no k×k Gram matrix (useGram): memory stays O(nnz + k·d),
	// and the preconditioner uses G's diagonal instead. Neither does a wide design preconditioned
	// through its rows (dualPrecond), nor one whose Gram matrix and preconditioner blocks would
	// exceed the memory budget: a dense X of 10 × 60,000 would have asked for 6 × 29 GB.
	sp, dual := useDual(p, des)
	var G *mat.SymDense
	if p.targets != nil || !dual && des.useGram(d) {
		if err := gramBudget(des); err == nil {
			G = des.gram(p.Weight)
		} else if p.targets != nil { // sparse targets are applied through G
			return Result{}, err
		}
	}
	if err := opt.Stop.Err(); err != nil {
		return Result{}, err
	}
	h, B := linearHessian(p, des, G)
	if gs, ok := h.(*groupedSystem); ok {
		defer gs.release()
	}
	if roundingOnly(p, des, B) { // W = 0 is the optimum, to rounding
		W.Zero()
		return Result{Objective: p.Constant(), Converged: true}, nil
	}
	if err := opt.Stop.Err(); err != nil {
		return Result{}, err
	}
	// A cold start may take the dual; a warm one continues in the primal, where the iterate carries
	// over (fits of a few iterations each, continued, must progress).
	var dualIters int
	if ls, perIter := cubeDualCandidate(p, des, h, B); ls != nil && G != nil && mat.Norm(W, 1) == 0 {
		if sigma, ok := useCubeDual(ls, perIter, opt); ok {
			res, done, err := solveCubeDual(ls, G, sigma, W, opt)
			if err != nil {
				return res, err
			}
			if done {
				if res, ok := checkedDual(h, B, W, p.Constant(), res, opt); ok {
					return res, nil
				}
				dualIters = res.Iterations
			}
		}
	}
	var pc linearPrecond = identityPrecond{}
	var err error
	switch {
	case dual:
		pc, err = newDualPrecond(p, des, sp)
	case G != nil:
		pc, err = newLinearPrecond(p, des, G)
	case linearPrecondMode != precondNone:
		pc = newDiagGramPrecond(p, des)
	}
	if errors.Is(err, errIllConditioned) {
		pc, err = newDiagGramPrecond(p, des), nil
	}
	if err != nil {
		return Result{}, err
	}
	pc = withNullIntercept(pc, p, des.intercept)
	if dualIters == 0 {
		return conjugateGradients(h, B, pc, W, p.Constant(), opt)
	}
	// The dual's W falls short: the primal finishes from it, within the iterations left, its
	// iterations numbered after the dual's.
	rest := *opt
	rest.MaxIter -= dualIters
	if opt.Progress != nil {
		rest.Progress = func(it int, objective, relGrad float64) bool {
			return opt.Progress(dualIters+it, objective, relGrad)
		}
	}
	res, err := conjugateGradients(h, B, pc, W, p.Constant(), &rest)
	res.Iterations += dualIters
	return res, err
}

// roundingOnly reports whether B = Σ s_i x̃_i δ_iᵀ is no larger than the rounding of its terms,
// m·2⁻⁵² Σ s_i ‖x̃_i‖‖δ_i‖: its exact value is then 0 as far as float64 can tell, and so is the
// optimum W. On X = 0 with balanced classes B came out at 1e-16, CG could not lower a gradient that
// was rounding, and the fit warned of a relative gradient of 1 (probe DJ).
func roundingOnly(p *Problem, des design, B *mat.Dense) bool {
	if p.Delta == nil {
		return false
	}
	m, _ := p.dims()
	var terms float64
	for i := 0; i < m; i++ {
		x := des.rowSqNorm(i)
		if des.intercept {
			x++
		}
		di := p.Delta.RawRowView(i)
		terms += p.Weight[i] * math.Sqrt(x*floats.Dot(di, di))
	}
	return mat.Norm(B, 2) <= float64(m)*0x1p-52*terms
}

// checkedDual judges the dual's W (its Result res) by the true gradient B − H W, one application
// of h: the dual's own check rests on A⁻¹, which rounding spoils when A is ill-conditioned (a
// duplicated column at alpha 1e-9 reported 8.7e-10 where the gradient was 2e-6). It returns
// res with the true relative gradient and objective, and false when W misses Tol with
// iterations left or is not finite, for the primal to finish (or to report the overflow).
func checkedDual(h hessian, B, W *mat.Dense, constant float64, res Result, opt *Options) (Result, bool) {
	k, d := W.Dims()
	HW := mat.NewDense(k, d, nil)
	h.apply(HW, W)
	var R mat.Dense
	R.Sub(B, HW)
	res.RelGrad = mat.Norm(&R, 2) / mat.Norm(B, 2)
	// J(W) = ½⟨W, H W⟩ − ⟨B, W⟩ + c = −½⟨W, B + R⟩ + c.
	var dot float64
	for j := 0; j < k; j++ {
		w, b, r := W.RawRowView(j), B.RawRowView(j), R.RawRowView(j)
		for a := range w {
			dot += w[a] * (b[a] + r[a])
		}
	}
	res.Objective = -0.5*dot + constant
	res.Converged = res.RelGrad <= opt.Tol
	finite := res.RelGrad < math.Inf(1) && !math.IsNaN(res.Objective) && !math.IsInf(res.Objective, 0)
	return res, finite && (res.Converged || res.Iterations >= opt.MaxIter)
}

// gramBudget checks the k×k matrices of the CG set-up against the memory budget: G and, in the
// preconditioner, a block, its factor and up to three inverses (spectralPrecond with Cholesky).
func gramBudget(des design) error {
	k := int64(des.cols())
	m, n := des.samples(), des.features()
	return budget.Check(fmt.Sprintf("the %d×%d Gram matrix of X (%d samples × %d features) and its preconditioner", k, k, m, n),
		budget.Mul(6, k, k, 8))
}

// warmScaleBand bounds the factor by which the best multiple of a warm start may differ from the
// start before CG takes the multiple instead (conjugateGradients, kernelCG).
const warmScaleBand = 1e6

// outOfScale reports whether a warm start w is out of scale: its products overflowed (descent
// ⟨b, w⟩ or curvature ⟨w, H w⟩ not finite), or the minimum of J along it, at c·w with
// c = descent/curvature (positive or negative), is further than warmScaleBand from w.
func outOfScale(descent, curvature float64) bool {
	if !isFinite(descent) || !isFinite(curvature) {
		return true
	}
	c := math.Abs(descent / curvature)
	return c != 0 && (c < 1/warmScaleBand || c > warmScaleBand)
}

// lineMinimum is the c that minimises J along a warm start w, descent/curvature, or 0 (a cold
// start) where w has no curvature or the ratio is not finite.
func lineMinimum(descent, curvature float64) float64 {
	if c := descent / curvature; curvature > 0 && isFinite(c) {
		return c
	}
	return 0
}

// isFinite reports whether x is neither infinite nor NaN.
func isFinite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// warmDirection scales the warm start w (updated in place) to unit norm and reports whether it is
// one: false for zero, and for a start that is not finite (set to zero, a cold start).
func warmDirection(w []float64) bool {
	scale := 0.0
	for _, v := range w {
		scale = max(scale, math.Abs(v))
	}
	if scale == 0 || math.IsInf(scale, 0) || math.IsNaN(scale) { // Go's max is NaN when one of them is
		clear(w)
		return false
	}
	floats.Scale(1/scale, w) // by the largest first, so that the norm's squares neither overflow nor vanish
	floats.Scale(1/floats.Norm(w, 2), w)
	return true
}

// conjugateGradients minimises J(W) = ½⟨W, H W⟩ − ⟨B, W⟩ + constant by conjugate gradients
// preconditioned with pc, from W (updated in place) to ‖B − H W‖ ≤ Tol·‖B‖, with opt's progress
// reports, iteration bound and cancellation.
func conjugateGradients(h hessian, B *mat.Dense, pc linearPrecond, W *mat.Dense, constant float64, opt *Options) (Result, error) {
	k, d := W.Dims()
	if W.RawMatrix().Stride != d { // the iteration works on W's backing slice
		work := mat.DenseCopyOf(W)
		defer W.Copy(work)
		W = work
	}
	bnorm := mat.Norm(B, 2)
	if !(bnorm <= math.MaxFloat64) {
		return Result{}, sumsOverflow("the cg solver's", bnorm)
	}
	if bnorm == 0 {
		W.Zero()
		return Result{Objective: constant, Converged: true}, nil
	}
	R, Z, P, HP := mat.NewDense(k, d, nil), mat.NewDense(k, d, nil), mat.NewDense(k, d, nil), mat.NewDense(k, d, nil)
	w, r, z, pp, hp := W.RawMatrix().Data, R.RawMatrix().Data, Z.RawMatrix().Data, P.RawMatrix().Data, HP.RawMatrix().Data
	// The iteration solves H (W/‖B‖) = B/‖B‖, H being linear, so that its dot products stay near 1
	// whatever the scale of the data: with sample weights of 1e-300 they underflowed (‖W‖² ≈
	// 1e-600) and CG stopped a few steps from the start, far from the optimum. W is scaled back on
	// return.
	b := make([]float64, len(w))
	for i, v := range B.RawMatrix().Data {
		b[i] = v / bnorm
	}
	top := 0.0
	for _, v := range w {
		top = max(top, math.Abs(v)) // NaN when one is: Go's max
	}
	warm, finite := top > 0, isFinite(top/bnorm)
	switch {
	case math.IsNaN(top):
		clear(w) // not a start: start cold
	case finite:
		for i := range w {
			w[i] /= bnorm
		}
	case warm: // beyond float64 in these units: only its direction is kept, scaled below
		warm = warmDirection(w)
	}
	defer floats.Scale(bnorm, w)
	if drop := warmNullDrop(pc); drop != nil && warm {
		drop(W) // the optimum has no component along the directions pc is zero on, and CG cannot move there
	}
	if warm { // H·0 = 0: a cold start needs no product (a pass over the data)
		h.apply(HP, W)
		// A start out of scale (the model of a fit at weights 1 warm-starting one at weights
		// 1e-200 is 1e200 too large in these units: its products overflowed into a false overflow
		// error) continues from the minimum of J along its direction, which is never above J there
		// nor at 0. A start in scale is kept as it is: the minimum along a dual's unfinished W
		// scaled it by 0.045, its good part too (TestCubeDualIllConditionedIsCheckedAndFinished).
		descent, curvature := floats.Dot(b, w), floats.Dot(w, hp)
		if !finite || outOfScale(descent, curvature) {
			if !isFinite(floats.Norm(hp, 2)) { // the products overflowed
				warmDirection(w)
				h.apply(HP, W)
				descent, curvature = floats.Dot(b, w), floats.Dot(w, hp)
			}
			c := lineMinimum(descent, curvature)
			floats.Scale(c, w)
			floats.Scale(c, hp)
		}
	}
	floats.SubTo(r, b, hp)
	// J(W) = −½⟨W, B + R⟩ + c, R = B − H W being the negative gradient, here in the scaled units.
	objective := func() float64 { return -0.5*bnorm*(bnorm*(floats.Dot(w, b)+floats.Dot(w, r))) + constant }
	res := Result{}
	pc.apply(Z, R)
	rz := floats.Dot(r, z)
	if rn := floats.Dot(r, r); rz <= -1e-10*rn || math.IsNaN(rz) {
		// A preconditioner must be positive definite: ⟨r, M⁻¹r⟩ < 0 means one of its set-ups is
		// wrong, and CG would stop here, at W's start, with a warning that blames max_iter (a
		// partial spectrum built from rounding noise did: TestCGOnFewTrainingStructures). Plain
		// CG is slower but converges.
		pc = identityPrecond{}
		pc.apply(Z, R)
		rz = rn
	}
	copy(pp, z)
	restarts, trueResidual := 0, false
	for it := 1; ; it++ {
		rel := floats.Norm(r, 2)
		if rel <= opt.Tol {
			// The recurrence's residual drifts from the true one B − H W by rounding, by far more
			// when the curvatures span many orders of magnitude (an intercept under sample weights
			// of 1e-60 against α = 1: 0.25 of ‖B‖ where the recurrence saw 1e-8). CG restarts
			// from the true residual, twice at most, and converges only when that meets Tol.
			h.apply(HP, W)
			floats.SubTo(r, b, hp)
			trueResidual = true
			if floats.Norm(r, 2) <= opt.Tol || restarts == 2 || it > opt.MaxIter {
				res.Converged = floats.Norm(r, 2) <= opt.Tol
				break
			}
			restarts++
			pc.apply(Z, R)
			rz = floats.Dot(r, z)
			copy(pp, z)
			it-- // no step taken
			continue
		}
		trueResidual = false
		// rz = 0 (the residual underflowed) or a curvature that is not positive means rounding
		// has taken over: a further step would divide by zero and fill W with NaN, as a tol far
		// below machine precision (1e-300) did. Stop at the last finite iterate; the true gradient
		// below says how far it is.
		if it > opt.MaxIter || !(rz > 0) {
			break
		}
		if opt.Stop.Yield() {
			return res, ErrCancelled
		}
		h.apply(HP, P)
		curvature := floats.Dot(pp, hp)
		if !(curvature > 0) || math.IsInf(curvature, 0) {
			break
		}
		step := rz / curvature
		floats.AddScaled(w, step, pp)
		floats.AddScaled(r, -step, hp)
		res.Iterations = it
		if opt.Progress != nil && !opt.Progress(it, objective(), floats.Norm(r, 2)) {
			return res, ErrCancelled
		}
		pc.apply(Z, R)
		rzNew := floats.Dot(r, z)
		floats.AddScaledTo(pp, z, rzNew/rz, pp)
		rz = rzNew
	}
	// A stop request may have cut a product short (the Hessian forms return at it): nothing
	// computed since can be trusted. It also skips the true gradient's product, as long as an
	// iteration (0.4 s at 1,000,000 × 60 with as many label sets).
	if opt.Stop.Yield() {
		return res, ErrCancelled
	}
	// Report the true gradient, not the recursively updated residual.
	if !trueResidual {
		h.apply(HP, W)
		floats.SubTo(r, b, hp)
	}
	res.RelGrad = floats.Norm(r, 2)
	res.Objective = objective()
	if math.IsNaN(res.RelGrad) || math.IsInf(res.RelGrad, 0) || math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) {
		// H's products overflowed (weights whose sum is near the float64 limit): the iterate is garbage.
		bad := res.RelGrad // the value that is not finite: the residual's norm, or else J
		if !math.IsNaN(bad) && !math.IsInf(bad, 0) {
			bad = res.Objective
		}
		return res, sumsOverflow("the cg solver's", bad)
	}
	return res, nil
}

func elemMul(a, b *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.MulElem(a, b)
	return &out
}
