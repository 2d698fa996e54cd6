package ridge

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/check"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// solveKernelCG minimises J over the expansion coefficients, stored transposed as Γ = Aᵀ (m×d) so
// that the scores are U = KΓ. With A(Γ) = 2αΓ + curvature(KΓ) and b = diag(s)Δ, the gradient is
// K(A(Γ) − b): A is self-adjoint and positive in the K-inner product ⟨X, Y⟩_K = tr(XᵀKY), so
// conjugate gradients in that inner product (equivalently, CG on the Hessian preconditioned by K⁻¹)
// converge at a rate set by the conditioning of A alone, not of K, and need a single product with K
// per iteration; the residual ρ = b − A(Γ) it keeps gives the exact gradient −Kρ.
//
// The spectrum of A = 2α + T K (T = blockdiag s_i M_i) still inherits K's largest eigenvalues: an
// intercept or an uncentred kernel puts one at about m·mean(K), times ‖M_i‖, far above the rest.
// These are deflated (see deflation): J is minimised exactly on a coarse space W = span(U) ⊗ R^d
// built from a few Ritz vectors of K, and CG runs on the K-orthogonal complement, with the search
// directions kept A-conjugate to W. The extra work per iteration is O(m r d), and products with K
// stay at one per iteration; the coarse space costs about two more, and E. Iterations to a relative
// gradient of 1e-8 at m = 1500, d = 14, rbf, α = 1: 46 → 14 on TestYeastSizedTiming's synthetic
// data (whose Gram matrix has a hundred eigenvalues well above the rest, which no cheap coarse
// space captures), 41 → 4 on the real yeast training set (γ = 0.01, intercept).
//
// All m×d iterates are held transposed (d×m) so that the products with K are (d×m)·(m×m), done by
// gemm.Mul.
func solveKernelCG(p *Problem, K, Gamma *mat.Dense, opt *Options) (Result, error) {
	return solveKernelCGScaled(p, K, check.MaxAbs(K.RawMatrix().Data), Gamma, opt)
}

// solveKernelCGScaled is solveKernelCG given kScale = max |K_ij| (check.AddMaxAbs), which the fit
// reads off K in the pass that adds the intercept's constant.
// Where S acts as σI on the δ_i (multi-label, multi-class, k-subsets under the uniform measure),
// the fit may take the dual over the examples (kernelCubeDual), first or after kernel CG has
// spent its share (planKernelDual); the dual's unfinished Γ continues in kernel CG.
func solveKernelCGScaled(p *Problem, K *mat.Dense, kScale float64, Gamma *mat.Dense, opt *Options) (Result, error) {
	sigma := unitWeights(p)
	p, opt, sigma = scaledWeights(p, opt, sigma)
	plan := planKernelDual(p, kScale, opt)
	if mat.Norm(Gamma, 1) != 0 {
		// A warm start keeps its progress in kernel CG (the dual has no starting point to take it
		// over), until its share: along a falling α path, warm fits at α = 1e-5 and 1e-6 on yeast
		// ran out of 1,000 iterations where the dual from zero takes 17 and 8.
		plan.first = false
	}
	res, err := solveKernelPlanned(p, newKernelSystem(p, K), K, kScale, Gamma, opt, plan)
	return scaledResult(res, err, sigma)
}

// solveKernelPlanned is solveKernelCGScaled following plan, its iterations numbered on across the
// solvers it runs.
func solveKernelPlanned(p *Problem, ks *kernelSystem, K *mat.Dense, kScale float64, Gamma *mat.Dense, opt *Options, plan kernelDualPlan) (Result, error) {
	m, d := Gamma.Dims()
	if !plan.use {
		return kernelCG(p, ks, kScale, Gamma, opt)
	}
	done := 0 // iterations spent
	// rest is opt for the iterations left, numbered after those done.
	rest := func() *Options {
		o := *opt
		o.MaxIter -= done
		if opt.Progress != nil && done > 0 {
			spent := done
			o.Progress = func(it int, objective, relGrad float64) bool {
				return opt.Progress(spent+it, objective, relGrad)
			}
		}
		return &o
	}
	if !plan.first && plan.primalIters < opt.MaxIter {
		short := rest()
		short.MaxIter = plan.primalIters
		res, err := kernelCG(p, ks, kScale, Gamma, short)
		if err != nil || res.Converged {
			return res, err
		}
		// Kernel CG has spent its share: the dual starts again from Γ = 0.
		done = res.Iterations
		Gamma.Zero()
	} else if !plan.first {
		return kernelCG(p, ks, kScale, Gamma, opt)
	}
	Kb := mat.NewDense(d, m, nil)
	ks.kmul(Kb, ks.bT)
	if kbNorm := norm(Kb.RawMatrix().Data); kbNorm > 0 {
		res, finished, err := solveKernelCubeDual(ks, p, K, Kb, kbNorm, plan.sigma, Gamma, rest())
		res.Iterations += done
		if err != nil || finished {
			return res, err
		}
		done = res.Iterations
	}
	res, err := kernelCG(p, ks, kScale, Gamma, rest())
	res.Iterations += done
	return res, err
}

// kernelCG is solveKernelCGScaled's conjugate gradients from Gamma.
func kernelCG(p *Problem, ks *kernelSystem, kScale float64, Gamma *mat.Dense, opt *Options) (Result, error) {
	m, d := Gamma.Dims()
	// One product gives Kb and starts the subspace iteration of the coarse space.
	r0 := deflationRank(m, d)
	Omega := drawOmega(r0, m)
	stack := mat.NewDense(d+r0, m, nil)
	stack.Slice(0, d, 0, m).(*mat.Dense).Copy(ks.bT)
	stack.Slice(d, d+r0, 0, m).(*mat.Dense).Copy(Omega)
	stackK := mat.NewDense(d+r0, m, nil)
	ks.kmul(stackK, stack)
	Kb := mat.DenseCopyOf(stackK.Slice(0, d, 0, m))
	kbNorm := norm(Kb.RawMatrix().Data)
	if kbNorm == 0 {
		Gamma.Zero()
		return Result{Objective: p.Constant(), Converged: true}, nil
	}
	df := newDeflation(ks, stackK.Slice(d, d+r0, 0, m).(*mat.Dense))

	G := mat.DenseCopyOf(Gamma.T()) // Γᵀ
	KG := mat.NewDense(d, m, nil)
	kgFresh := false // KG holds K·Γ already, for restart's next call
	R, KR := mat.NewDense(d, m, nil), mat.NewDense(d, m, nil)
	P, KP := mat.NewDense(d, m, nil), mat.NewDense(d, m, nil)
	AP, KAP := mat.NewDense(d, m, nil), mat.NewDense(d, m, nil)
	raw := func(x *mat.Dense) []float64 { return x.RawMatrix().Data }
	isZero := func(x *mat.Dense) bool {
		for _, v := range raw(x) {
			if v != 0 {
				return false
			}
		}
		return true
	}

	// direction sets P = R − W μ (and KP), where μ makes P A-conjugate to W: ⟨W, A P⟩_K = 0.
	direction := func(beta float64) {
		if beta == 0 {
			P.Copy(R)
			KP.Copy(KR)
		} else {
			axpby(raw(P), beta, raw(R))
			axpby(raw(KP), beta, raw(KR))
		}
		if df != nil {
			ks.applyA(AP, R, KR) // AP is scratch here
			df.solve(AP)
			df.subtract(P, df.UT)
			df.subtract(KP, df.KUT)
		}
	}
	// restart recomputes the residual from Γ, dropping the error the recurrences accumulate, after
	// solving exactly on W (Γ += W y with ⟨W, b − A(Γ + W y)⟩_K = 0, which only lowers J). It
	// costs two products with K (one when Γ = 0), the same as without the coarse correction.
	restart := func() float64 {
		switch {
		case isZero(G):
			KG.Zero()
		case !kgFresh:
			ks.kmul(KG, G)
		}
		kgFresh = false
		if df != nil {
			ks.applyA(AP, G, KG)
			R.Sub(ks.bT, AP)
			df.solve(R)
			df.add(G, df.UT)
			df.add(KG, df.KUT)
		}
		ks.applyA(AP, G, KG)
		R.Sub(ks.bT, AP)
		ks.kmul(KR, R)
		direction(0)
		return dot(raw(R), raw(KR))
	}
	// J = ½⟨Γ, K A Γ⟩ − ⟨Γ, K b⟩ + c with K A Γ = Kb − Kρ.
	objective := func() float64 { return kernelObjective(raw(G), raw(Kb), raw(KR), p.Constant()) }
	relGrad := func() float64 { return norm(raw(KR)) / kbNorm }
	// settled reports whether J is within about tol·|J| of its minimum, as estimated from CG's last
	// decreases: see settleIters.
	var history []float64 // J after the set-up and after each iteration
	settled := func() bool {
		n := len(history)
		if n < 2 {
			return false
		}
		j := history[n-1]
		last := history[max(n-1-settleIters, 0)] - j
		floor := objectiveRounding * (math.Abs(j) + math.Abs(p.Constant()))
		if last <= floor {
			return true // J is flat to rounding (a rate would be 0/0)
		}
		gap := last
		if n > 2*settleIters {
			// The decreases fall geometrically, at a rate r over settleIters iterations: the
			// decrease still to come is last·r/(1 − r), and a rate of 1 or more (a plateau) is
			// no sign of the end.
			r := last / (history[n-1-2*settleIters] - history[n-1-settleIters])
			if !(r < 1) {
				return false
			}
			gap = last / (1 - max(r, 0))
		}
		return gap <= opt.Tol*math.Abs(j)+floor
	}

	// A warm start out of scale continues from the minimum of J along its direction, as in the
	// linear CG (conjugateGradients): the model of a fit at weights 1 warm-starting one at weights
	// 1e-200, which the solver sees as α = 1e200, made A(Γ) overflow into a false overflow error.
	// K·Γ computed here serves restart's first call.
	if !isZero(G) {
		ks.kmul(KG, G)
		ks.applyA(AP, G, KG)
		descent, curvature := dot(raw(G), raw(Kb)), dot(raw(KG), raw(AP))
		if outOfScale(descent, curvature) {
			if !isFinite(norm(raw(AP))) { // the products overflowed
				warmDirection(raw(G))
				ks.kmul(KG, G)
				ks.applyA(AP, G, KG)
				descent, curvature = dot(raw(G), raw(Kb)), dot(raw(KG), raw(AP))
			}
			c := lineMinimum(descent, curvature)
			G.Scale(c, G)
			KG.Scale(c, KG)
		}
		kgFresh = true
	}

	const restartEvery = 50
	res := Result{}
	gamma := restart()
	history = append(history, objective())
	fresh := true    // R and KR were just recomputed from Γ
	stalled := false // rounding has taken over: no step can lower J further
	for it := 0; ; {
		if relGrad() <= opt.Tol && settled() {
			if fresh {
				break
			}
			// The recurrences say converged: confirm it on the recomputed residual.
			gamma = restart()
			fresh = true
			continue
		}
		if err := checkCurvature(gamma, raw(R), kScale); err != nil {
			if fresh {
				return res, err
			}
			// γ = ⟨R, KR⟩ from the recurrences: once R is down to rounding, KR's accumulated
			// error can make it negative for a positive semi-definite K (rbf at alpha 1e7 was
			// refused after its gradient had reached 2e-16). Judge K on the recomputed residual.
			gamma = restart()
			fresh = true
			continue
		}
		if !(gamma > 0) && !fresh {
			gamma = restart() // judge a stall on the recomputed residual
			fresh = true
			continue
		}
		if !(gamma > 0) {
			if err := checkNullResidual(gamma, raw(R), raw(KR), ks.K, kScale); err != nil {
				return res, err
			}
		}
		if it >= opt.MaxIter || !(gamma > 0) {
			stalled = !(gamma > 0)
			break
		}
		if opt.Stop.Yield() {
			Gamma.Copy(G.T())
			return res, ErrCancelled
		}
		it++
		ks.applyA(AP, P, KP)
		ks.kmul(KAP, AP)
		pap := dot(raw(P), raw(KAP))
		if math.IsNaN(pap) || math.IsInf(pap, 0) {
			return res, checkCurvature(pap, nil, kScale)
		}
		if !(pap > 0) {
			// Rounding (CG has stalled), or K curves down along P: an indefinite precomputed K
			// was taken for a stall and its fit returned with a warning to raise max_iter.
			ks.kmul(KAP, P)
			if err := checkCurvature(dot(raw(P), raw(KAP)), raw(P), kScale); err != nil {
				return res, err
			}
			stalled = true
			break
		}
		// The exact line search along P, ⟨P, Kρ⟩/⟨P, KAP⟩, where CG's recurrence gives γ/⟨P, KAP⟩:
		// the two agree while P stays conjugate to the coarse space, but an inaccurate coarse
		// solve (sample weights 1e9 apart make E ill-conditioned) broke that, and γ's step then
		// overshot: J rose to 1e66 against an optimum of 1e8. This step never raises J.
		step := dot(raw(P), raw(KR)) / pap
		axpy(raw(G), step, raw(P))
		axpy(raw(R), -step, raw(AP))
		axpy(raw(KR), -step, raw(KAP))
		fresh = false
		res.Iterations = it
		history = append(history, objective())
		if opt.Progress != nil && !opt.Progress(it, history[len(history)-1], relGrad()) {
			Gamma.Copy(G.T())
			return res, ErrCancelled
		}
		if it%restartEvery == 0 {
			gamma = restart()
			fresh = true
			continue
		}
		gammaNew := dot(raw(R), raw(KR))
		direction(gammaNew / gamma)
		gamma = gammaNew
	}
	if !fresh {
		restart()
	}
	Gamma.Copy(G.T())
	res.RelGrad = relGrad()
	res.Objective = objective()
	res.Converged = res.RelGrad <= opt.Tol && (settled() || stalled)
	return res, nil
}

// kernelObjective is J = ½⟨Γ, K A Γ⟩ − ⟨Γ, K b⟩ + constant = −½⟨Γ, Kb + Kρ⟩ + constant from Γ, Kb and
// Kρ, ρ = b − A(Γ) (all d×m, transposed), as kernel CG and the dual's check compute it.
func kernelObjective(g, kb, kr []float64, constant float64) float64 {
	var s float64
	for i, v := range g {
		s += v * (kb[i] + kr[i])
	}
	return -0.5*s + constant
}

// settleIters is the window of kernel CG's second test: besides ‖∇J‖ ≤ tol·‖∇J(0)‖ it stops only
// when J is within about tol·|J| of its minimum, as estimated from its decrease over the last
// settleIters iterations and the rate of that decrease against the window before. The gradient of
// the coefficients, K(A(Γ) − b), is dominated by K's largest eigenvalues, which the coarse space
// solves at once, so its relative norm drops by 1e3–1e4 in the first iteration: at tol=1e-3 an
// rbf fit on 500 yeast rows stopped after one iteration with scores 3.5× their size from the
// optimum's, at tol=1e-5 after ten with 0.19. J − J* bounds the scores' error instead
// (½‖U − U*‖²_T ≤ J − J*, T the per-example curvature) whatever K's conditioning: with the second
// test those fits end 0.093 and 0.019 from the optimum. The estimate errs low where CG's progress
// comes in steps (at α = 1e-4 a fit stopped 2.4·tol·J* above the minimum); a safety factor of 4
// would cover that but cost the yeast fit below 9 more iterations at the default tol. At the
// default tol the gradient test is nearly always the later: the yeast fits of BENCHMARKS.md
// (α = 0.01, 0.03 and 1) take 54, 40 and 13 iterations, against 54, 40 and 12 before.
const settleIters = 3

// objectiveRounding is the relative rounding of J as kernel CG computes it (−½⟨Γ, Kb + Kρ⟩ + c):
// a decrease below it is noise, so that a tol near machine precision still lets CG settle.
const objectiveRounding = 1e-13

// norm is the Euclidean norm of x, as the square root of dot(x, x) where that sum neither
// overflows nor underflows, and otherwise with floats.Norm's scaling: mat.Norm's scaled sum took
// twice a fit's dot products on yeast.
func norm(x []float64) float64 {
	if s := dot(x, x); s > 0x1p-900 && s < 0x1p900 {
		return math.Sqrt(s)
	}
	return floats.Norm(x, 2)
}

// axpy sets y += a·x.
func axpy(y []float64, a float64, x []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

// axpby sets y = b·y + x.
func axpby(y []float64, b float64, x []float64) {
	for i, v := range x {
		y[i] = b*y[i] + v
	}
}

// indefinite is how far below zero a Rayleigh quotient ⟨r, Kr⟩/⟨r, r⟩ may fall, relative to the
// largest |K_ij|, before it proves that K has a negative eigenvalue rather than rounding: a Gram
// matrix computed in float32 (as scikit-learn's checks do) has eigenvalues down to about
// −m·6e-8·max|K_ij|, while a kernel with its mean subtracted has them near −max|K_ij|.
const indefinite = 1e-3

// checkCurvature refuses a kernel matrix that CG has shown not to be positive semi-definite:
// c = ⟨x, Kx⟩ clearly below zero, or not finite. On an indefinite K the objective is unbounded
// below, and CG stopped after one step and returned a meaningless model.
func checkCurvature(c float64, x []float64, kScale float64) error {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		// The fit divides the weights by the largest (scaledWeights): the kernel values are to blame.
		return fmt.Errorf("the kernel computations overflowed (a curvature of %v): the kernel values are too large; "+
			"scale X, or reduce gamma, coef0 or degree", c)
	}
	if xx := dot(x, x); c >= -indefinite*kScale*xx {
		return nil
	}
	return fmt.Errorf("the kernel matrix is not positive semi-definite (CG met a direction of negative curvature, "+
		"⟨r, Kr⟩/⟨r, r⟩ = %.3g against max |K_ij| = %.3g): %s", c/dot(x, x), kScale, needPSD)
}

// checkNullResidual refuses a residual r with ⟨r, Kr⟩ = gamma ≤ 0 (Kr = kr, recomputed) whose Kr
// is too large for any K within CG's curvature margin η = indefinite·max |K_ij| of a positive
// semi-definite one: K = P + E with P ≽ 0 and ‖E‖ ≤ η gives ‖Pr‖² ≤ λ_max(P)⟨r, Pr⟩ ≤ λ_max η‖r‖²,
// so ‖Kr‖ ≤ (√(λ η) + η)‖r‖ with λ ≥ λ_max bounded by K's largest absolute row sum. Below that,
// CG has merely stalled (a float32 precomputed K stalls at ‖Kr‖/‖r‖ = 5e-7); above it, K is
// indefinite (one with an eigenvalue of −3.8 against entries up to 2 passed as a stall after
// one iteration, with a warning to raise max_iter).
func checkNullResidual(gamma float64, r, kr []float64, K blas64.General, kScale float64) error {
	// Judged on r/s, s = max |r_i|: a residual of 1e-300 (an example of weight 1e-300 beside one of
	// weight 1) squared to zero, and ⟨r, Kr⟩ = 0 with ‖r‖ = 0 read as an infinite ‖Kr‖/‖r‖, which
	// blamed the user's kernel (probe AU).
	var s float64
	for _, v := range r {
		s = max(s, math.Abs(v))
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return nil
	}
	var nr, nkr, g float64
	for i, v := range r {
		a, b := v/s, kr[i]/s
		nr, nkr, g = nr+a*a, nkr+b*b, g+a*b
	}
	if g > 0 {
		return nil // ⟨r, Kr⟩ had underflowed: rounding, not a direction K curves down along
	}
	nr, nkr = math.Sqrt(nr), math.Sqrt(nkr)
	eta := indefinite * kScale
	var lambda float64
	for i := 0; i < K.Rows; i++ {
		var row float64
		for _, v := range K.Data[i*K.Stride:][:K.Cols] {
			row += math.Abs(v)
		}
		lambda = max(lambda, row)
	}
	if !(nkr > (math.Sqrt(lambda*eta)+eta)*nr) {
		return nil
	}
	return fmt.Errorf("the kernel matrix is not positive semi-definite (CG met a residual r with ⟨r, Kr⟩ = %.3g ≤ 0 "+
		"but ‖Kr‖/‖r‖ = %.3g, against max |K_ij| = %.3g; a positive semi-definite K has Kr ≈ 0 there): %s",
		gamma, nkr/nr, kScale, needPSD)
}

// needPSD is the advice of both refusals of an indefinite kernel matrix (CG's and the direct solve's).
const needPSD = "StructuredRidge needs a PSD kernel; check a precomputed or callable kernel (or coef0 ≥ 0 for poly)"
