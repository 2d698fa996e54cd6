package prob

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Fit trains ProbabilisticStructured on inputs X (m×n, row-major, not retained) and structures ys
// (m × Width()), with optional sample weights, by minimising J (see Problem).
//
// With exact inference (closed forms or enumeration) J is smooth and strictly convex and Fit runs
// L-BFGS (minimizeLBFGS) to ‖∇J‖ ≤ Tol·‖∇J(0)‖, both solvers in the coordinates of rowScales
// (each feature's coefficients times its spread). With sampled inference the gradient is a Monte Carlo estimate,
// unbiased when samples are exact, and Fit runs Adam with steps η/√t on (minibatch) sampled
// gradients and returns the polynomial-decay average W̄_t = (1 − ρ_t) W̄_{t−1} + ρ_t W_t,
// ρ_t = 4/(t + 3), which forgets the early iterates and averages out the sampling noise. Chains
// persist from one gradient to the next (unless opt.FreshChains), the samples per row may grow
// by the norm test (opt.MaxSampleGrowth), and the result reports the relative gradient at W̄
// with its Monte Carlo standard error. Everything is determined by opt.Seed.
func Fit(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*Model, error) {
	mu := centring(X, m, n, weights, opt.Intercept)
	in, implicit := centredPart(X, m, n, opt.Intercept, mu)
	return fit(sp, m, n, weights, opt, func(alpha float64) (*Problem, error) {
		p, err := NewProblem(sp, in, m, n, ys, unitWeights(weights), alpha, opt.Intercept)
		if err == nil {
			p.centre, p.implicit = mu, implicit
		}
		return p, err
	})
}

// centring returns the weighted mean of X's rows, at which Fit centres X when the model has an
// (unpenalised) intercept, or nil: without one, or for inputs the fit's validation refuses. The
// model is the same (xmat.WeightedMean); L-BFGS's probabilities were 0.085 away from the
// minimum's at X + 10³ (yeast, 4 labels), without a warning, and are now those of X. Where the
// budget refuses the centred copy, the products take the mean out (centredPart): X was fitted as
// it was, and L-BFGS ran to max_iter 0.03 in probability from the minimum at X + 100 and 0.45 at
// X + 10⁴ (probe FG).
func centring(X []float64, m, n int, weights []float64, intercept bool) []float64 {
	if !intercept || m < 1 || n < 1 || len(X) != m*n || (weights != nil && len(weights) != m) {
		return nil
	}
	return xmat.WeightedMean(xmat.Matrix{Dense: mat.NewDense(m, n, X)}, weights)
}

// unitWeights returns a copy of weights multiplied by the power of two that brings the largest
// into [½, 1), or weights itself when nil, when one is negative or NaN, or when none is positive
// and finite (NewProblem names the fault). J's data term is a weighted mean, so the model does not change, and the product is
// exact; but weights of 1e-310 each made the products s_i·x_i subnormal and the gradient at W = 0
// NaN, refused as an overflow of X. (Only after the default alpha, which depends on Σ s, is set.)
func unitWeights(weights []float64) []float64 {
	var top float64
	for _, w := range weights {
		if !(w >= 0) { // NewProblem names it, as the caller gave it
			return weights
		}
		top = max(top, w)
	}
	scaled, _ := check.ToUnitBinade(weights, top)
	return scaled
}

// FitCSR is Fit on a sparse X (m×n CSR, viewed and not retained): the scores and the gradient
// are products with X's entries, never with a dense copy. The model is the one Fit gives on the
// dense X with the same entries, up to rounding.
func FitCSR(sp space.Space, X *xmat.CSR, ys []int64, weights []float64, opt Options) (*Model, error) {
	m, n := X.Dims()
	return fit(sp, m, n, weights, opt, func(alpha float64) (*Problem, error) {
		p, err := NewProblemCSR(sp, X, ys, unitWeights(weights), alpha, opt.Intercept)
		if err == nil && opt.Intercept {
			// centred as Fit centres a dense X, without densifying it: the products take the
			// mean out (implicit), so that the sparse and dense fits follow the same path
			p.centre, p.implicit = xmat.WeightedMean(p.X, p.weights), true
			p.shiftDenseColumns()
		}
		return p, err
	})
}

// fit is Fit with the Problem built by problem for the regularisation in effect; when the Problem
// works on X centred, the coefficients are taken to and from those coordinates.
func fit(sp space.Space, m, n int, weights []float64, opt Options, problem func(alpha float64) (*Problem, error)) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := Modelable(sp); err != nil {
		return nil, err
	}
	if err := checkFitMemory(sp, m, n, &opt); err != nil {
		return nil, err
	}
	alpha := opt.Alpha
	if alpha == 0 {
		// The default is read off the data: no rows, or weights that are not weights, are named
		// as such first (they were reported as a default alpha of NaN or +Inf).
		if m < 1 || n < 1 {
			return nil, fmt.Errorf("prob: X must have at least one sample and one feature, got %d×%d", m, n)
		}
		if weights != nil { // an overflowing or subnormal sum, defaultAlpha names with a way out
			if sum, err := checkWeightValues(weights, m); err != nil || sum == 0 {
				_, err = checkWeights(weights, m)
				return nil, err
			}
		}
		var err error
		if alpha, err = defaultAlpha(sp, weights, m); err != nil {
			return nil, err
		}
	}
	p, err := problem(alpha)
	if err != nil {
		return nil, err
	}
	exact := opt.Inference.exact(sp)
	if exact && !HasExact(sp) {
		return nil, fmt.Errorf("%w for the %s space (log|Y| = %.1f): use sampled inference", ErrNoExact, sp.Kind(), sp.LogCount())
	}
	solver := opt.Solver
	if solver == SolverAuto {
		solver = SolverAdam
		if exact {
			solver = SolverLBFGS
		}
	}
	if solver == SolverLBFGS && !exact {
		return nil, errors.New("prob: L-BFGS needs exact inference (noisy gradients break its line search); use the adam solver")
	}
	W := warmStart(opt.Init, sp, n, opt.Intercept)
	dropConstantDirections(sp, W) // a warm start from an older Adam fit (fitAdam)
	mu := p.coordinates()
	xmat.ShiftIntercept(W, mu, 1)
	var res Result
	switch {
	case solver == SolverLBFGS && separable(sp, opt.Inference) && separableFits:
		res, err = fitSeparable(p, W, &opt)
	case solver == SolverLBFGS:
		res, err = fitLBFGS(p, W, &opt)
	default:
		res, err = fitAdam(p, W, &opt, exact)
	}
	xmat.ShiftIntercept(W, mu, -1)
	if err == nil {
		err = check.Fitted("coefficients", W.RawMatrix().Data)
	}
	if err != nil {
		return nil, err
	}
	res.Solver, res.Exact = solver, exact
	md := &Model{Space: sp, Coef: W, Intercept: opt.Intercept, NFeatures: n, Inference: opt.Inference, Result: res}
	if opt.Intercept {
		counts := make([]float64, BoundaryLen(sp))
		AddBoundaryCounts(sp, counts, p.ys, p.m, p.weights)
		if w := unboundedWarning(sp, counts); w != "" {
			md.Warnings = append(md.Warnings, w)
		}
	}
	return md, nil
}

// warmStart returns a copy of init's coefficients when init is a model of sp on n features with
// the same intercept, else zeros of that shape.
func warmStart(init *Model, sp space.Space, n int, intercept bool) *mat.Dense {
	rows := n
	if intercept {
		rows++
	}
	if init != nil && init.Coef != nil && init.NFeatures == n && init.Intercept == intercept &&
		init.Space.Kind() == sp.Kind() && slices.Equal(init.Space.Params(), sp.Params()) {
		if r, c := init.Coef.Dims(); r == rows && c == sp.Dim() {
			return mat.DenseCopyOf(init.Coef)
		}
	}
	return mat.NewDense(rows, sp.Dim(), nil)
}

// separableFits lets fit solve separable problems column by column (tests compare with the joint
// run by switching it off).
var separableFits = true

// overflowAtZero refuses a fit whose gradient at its starting point is not finite: the sum
// Σ x_i (E[ψ] − ψ(y_i)) overflowed because X holds values too large (check.Magnitude catches
// single rows; this, sums over many). Minimising from there would stop at once and return W = 0,
// uniform probabilities and an "increase max_iter" warning that misleads.
func overflowAtZero(gradNorm float64) error {
	if math.IsNaN(gradNorm) || math.IsInf(gradNorm, 0) {
		return fmt.Errorf("the gradient overflows at W = 0 (‖∇J‖ = %v): X holds values too large; "+
			"scale X (e.g. with StandardScaler)", gradNorm)
	}
	return nil
}

// checkFitMemory checks the working set of a fit against the memory budget before any of it is
// allocated: ψ(y_i), the scores and their gradient (m×d each), and W, ∇J and the solver's history
// (L-BFGS: 2·lbfgsMemory pairs; Adam: four moments and averages) of (n+1)×d each (a separable fit:
// a history per thread, of one column each); with sampled
// inference, the sampler's per-block sums of each row in flight.
func checkFitMemory(sp space.Space, m, n int, opt *Options) error {
	if opt.Inference.exact(sp) {
		if err := checkClosedFormMemory(sp); err != nil {
			return err
		}
	} else {
		// the per-block sums at the first sample size (a doubling that does not fit the budget is
		// not made)
		if err := checkSampleMemory(opt.Inference.samples(), opt.Inference.Sampler, sampleBlockBytes(sp, opt.Inference), parallel.Threads()); err != nil {
			return err
		}
	}
	k, d := int64(n), int64(sp.Dim())
	if opt.Intercept {
		k++
	}
	threads := int64(parallel.Threads())
	need := budget.Add(budget.Mul(3, int64(m), d, 8), budget.Mul(2*lbfgsMemory+8, k, d, 8), budget.Mul(2, threads, d, 8))
	if separableFits && separable(sp, opt.Inference) && opt.Solver != SolverAdam {
		// one L-BFGS run per column, a column per thread at a time: W, its start, the columns and
		// the model's copy (4 of k×d), and each thread's history and scratch. Charged as a joint
		// run, 2,000 × 10⁵ sparse rows with 100 labels were refused as 2.2 GB where the fit grows
		// 0.6 GB (probe DP).
		need = budget.Add(budget.Mul(3, int64(m), d, 8), budget.Mul(4, k, d, 8),
			budget.Mul(threads, budget.Add(budget.Mul(2*lbfgsMemory+8, k), budget.Mul(2, int64(m))), 8))
	}
	if !opt.Inference.exact(sp) { // the rows' norms and persistent chain states
		need = budget.Add(need, budget.Mul(int64(m), budget.Add(1, budget.Mul(int64(max(1, opt.Inference.Sampler.Chains)), int64(sp.Width()))), 8))
	}
	return budget.Check(fmt.Sprintf("fitting X of %d samples × %d features on the %s space of dimension d = %d", m, n, sp.Kind(), d), need)
}

// errConverged stops minimizeLBFGS once the relative gradient is below Tol.
var errConverged = errors.New("converged")

func fitLBFGS(p *Problem, W *mat.Dense, opt *Options) (Result, error) {
	rows, d := W.Dims()
	inf := opt.Inference
	eval := func(x, g []float64) (float64, error) {
		return p.Objective(mat.NewDense(rows, d, x), inf, opt.Seed, mat.NewDense(rows, d, g))
	}
	spread := p.spread() // one pass over X for the scales, the preconditioner and the rounding bound
	s, x := rowScalesOf(spread, p.lambda, p.intercept), W.RawMatrix().Data
	scaleRows(x, s, d, false)
	res, err := minimizeRelative(x, inScaledRows(eval, s, d), opt, p.curvaturePrecond(s, spread), p.roundingAtZero(s, spread))
	scaleRows(x, s, d, true)
	return res, err
}

// minimizeRelative minimises J by L-BFGS from x (zero, or a warm start; updated in place) to
// ‖∇J‖ ≤ opt.Tol·‖∇J(0)‖, eval writing ∇J into g and returning J, with opt's progress reports and
// iteration bound, and L-BFGS's preconditioner (nil: none; curvature.go). W = 0 is the optimum
// where ‖∇J(0)‖ is at most rounding, the bound on its rounding error (roundingAtZero; 0: unknown).
func minimizeRelative(x []float64, eval func(x, g []float64) (float64, error), opt *Options, precond func(dst, src []float64),
	rounding float64) (Result, error) {
	eval = memoized(eval)
	g := make([]float64, len(x))
	// The stopping rule is relative to the gradient at W = 0, wherever the run starts.
	f, err := eval(make([]float64, len(x)), g)
	if err != nil {
		return Result{}, err
	}
	g0 := floats.Norm(g, 2)
	if err := overflowAtZero(g0); err != nil {
		return Result{}, err
	}
	if g0 <= rounding { // W = 0 is optimal (rounding ≥ 0)
		clear(x)
		return Result{Objective: f, Converged: true}, nil
	}
	if floats.Norm(x, 2) > 0 { // a warm start that already meets the tolerance runs no iteration
		if f, err = eval(x, g); err != nil {
			return Result{}, err
		}
		if rel := floats.Norm(g, 2) / g0; rel <= opt.Tol {
			return Result{Objective: f, RelGrad: rel, Converged: true}, nil
		}
	}
	record := func(it int, f float64, g []float64) error {
		rel := floats.Norm(g, 2) / g0
		if opt.Progress != nil && !opt.Progress(it, f, rel) {
			return ErrCancelled
		}
		if rel <= opt.Tol {
			return errConverged
		}
		return nil
	}
	iters, err := minimizeLBFGS(x, eval, opt.MaxIter, record, precond)
	switch {
	case errors.Is(err, ErrCancelled):
		return Result{}, ErrCancelled
	case err != nil && !errors.Is(err, errConverged) && !errors.Is(err, errLineSearch):
		return Result{}, err
	}
	// A line search that cannot improve any more (rounding near the optimum) ends the run without
	// an error: the result says whether the tolerance was met.
	if f, err = eval(x, g); err != nil {
		return Result{}, err
	}
	rel := floats.Norm(g, 2) / g0
	return Result{Iterations: iters, Objective: f, RelGrad: rel, Converged: rel <= opt.Tol}, nil
}

func fitAdam(p *Problem, W *mat.Dense, opt *Options, exact bool) (Result, error) {
	const (
		beta1, beta2, epsAdam = 0.9, 0.999, 1e-8
		gamma                 = 3.0 // averaging ρ_t = (1+γ)/(t+γ)
		window                = 10  // iterations between convergence checks
	)
	rows, d := W.Dims()
	// Adam steps in W' = diag(s) W (rowScales): its step sizes are in each feature's units
	scales := p.rowScales()
	unscaled := make([]float64, rows*d)
	eta := opt.LearningRate
	if eta == 0 {
		eta = DefaultLearningRate
	}
	batch := opt.BatchSize
	if batch == 0 || batch > p.m {
		batch = p.m
	}
	inf := opt.Inference
	w := W.RawMatrix().Data
	scaleRows(w, scales, d, false)
	g := mat.NewDense(rows, d, nil)
	gd := g.RawMatrix().Data
	m1 := make([]float64, len(w))
	m2 := make([]float64, len(w))
	avg := make([]float64, len(w))
	prevAvg := make([]float64, len(w))
	perm := make([]int, p.m)
	for i := range perm {
		perm[i] = i
	}
	var sg *sampledGradient
	growth := 1
	if !exact {
		growth = max(1, opt.MaxSampleGrowth)
		sg = newSampledGradient(p, inf.Sampler, !opt.FreshChains, growth > 1)
	}
	inf.Samples = inf.samples()
	maxSamples := inf.Samples * growth
	// The stopping rule and the reported gradient are relative to ∇J(0), computed exactly.
	p.gradientAtZero(g)
	scaleRows(gd, scales, d, true)
	g0 := floats.Norm(gd, 2)
	if err := overflowAtZero(g0); err != nil {
		return Result{}, err
	}
	g0 = math.Max(g0, math.SmallestNonzeroFloat64)
	res := Result{Objective: math.NaN(), RelGrad: math.NaN()}
	var b1t, b2t float64 = 1, 1
	for t := 1; t <= opt.MaxIter; t++ {
		var batchRows []int
		if batch < p.m {
			r := newRand(opt.Seed, 1, uint64(t))
			for k := 0; k < batch; k++ { // partial Fisher–Yates: a uniform batch without replacement
				j := k + r.IntN(p.m-k)
				perm[k], perm[j] = perm[j], perm[k]
			}
			batchRows = slices.Clone(perm[:batch])
		}
		copy(unscaled, w)
		scaleRows(unscaled, scales, d, true)
		J, err := p.objectiveRows(mat.NewDense(rows, d, unscaled), batchRows, inf, deriveSeed(opt.Seed, 2, uint64(t)), g, sg)
		if err != nil && t > 1 && (errors.Is(err, errScoresNotFinite) || errors.Is(err, errScoresOutOfRange)) {
			// the inputs gave finite scores at the start: the steps made them overflow, and the
			// error named an input row as if it were at fault
			return Result{}, fmt.Errorf("prob: Adam diverged at iteration %d with learning_rate = %g: the coefficients "+
				"grew until the scores overflowed (%w); lower learning_rate", t, eta, err)
		}
		if err != nil {
			return Result{}, err
		}
		scaleRows(gd, scales, d, true)
		gn := floats.Norm(gd, 2)
		if sg != nil && sg.noise > normTestTheta*gn && inf.Samples < maxSamples {
			inf.Samples = grownSamples(p.sp, inf, maxSamples)
		}
		b1t *= beta1
		b2t *= beta2
		step := eta / math.Sqrt(float64(t))
		for k, gk := range gd {
			m1[k] = beta1*m1[k] + (1-beta1)*gk
			m2[k] = beta2*m2[k] + (1-beta2)*gk*gk
			w[k] -= step * (m1[k] / (1 - b1t)) / (math.Sqrt(m2[k]/(1-b2t)) + epsAdam)
		}
		rho := (1 + gamma) / (float64(t) + gamma)
		for k := range avg {
			avg[k] += rho * (w[k] - avg[k])
		}
		res.Iterations = t
		if opt.Progress != nil && !opt.Progress(t, J, gn/g0) {
			return Result{}, ErrCancelled
		}
		if t%window == 0 {
			diff := 0.0
			for k := range avg {
				diff += (avg[k] - prevAvg[k]) * (avg[k] - prevAvg[k])
			}
			if math.Sqrt(diff) <= opt.Tol*math.Max(floats.Norm(avg, 2), 1e-12) {
				res.Converged = true
				break
			}
			copy(prevAvg, avg)
		}
	}
	copy(w, avg)
	scaleRows(w, scales, d, true)
	dropConstantDirections(p.sp, W)
	if !exact {
		se, err := reportGradient(p, W, inf, deriveSeed(opt.Seed, 3), scales, g)
		if err != nil {
			return Result{}, err
		}
		res.RelGrad, res.RelGradSE, res.FinalSamples = floats.Norm(gd, 2)/g0, se/g0, inf.Samples
		return res, nil
	}
	J, err := p.Objective(W, inf, deriveSeed(opt.Seed, 3), g)
	if err != nil {
		return Result{}, err
	}
	scaleRows(gd, scales, d, true)
	res.RelGrad = floats.Norm(gd, 2) / g0
	res.Objective = J
	return res, nil
}

// memoized returns eval with a memory of its last point: asking again for the point it just
// evaluated (L-BFGS's first step from a warm start, the final report after convergence) returns the
// remembered value and gradient instead of another pass over the data, or another round through a
// cluster for FitSums.
func memoized(eval func(x, g []float64) (float64, error)) func(x, g []float64) (float64, error) {
	var lastX, lastG []float64
	var lastF float64
	valid := false
	return func(x, g []float64) (float64, error) {
		if valid && slices.Equal(x, lastX) {
			copy(g, lastG)
			return lastF, nil
		}
		f, err := eval(x, g)
		if valid = err == nil; valid {
			lastX, lastG, lastF = append(lastX[:0], x...), append(lastG[:0], g...), f
		}
		return f, err
	}
}
