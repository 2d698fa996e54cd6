package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// Stochastic gradient descent in the RKHS (thesis §5.3.2, after Kivinen, Smola & Williamson).
//
// With m examples, J = α‖f‖² + Σ_i ℓ_i(f(x_i)) is the mean over i of J_i = α‖f‖² + m·ℓ_i(f(x_i)),
// whose gradient is 2αf + m·g_i k(x_i, ·), g_i = ∂ℓ_i/∂u = s_i (S u − (1 − δ_iᵀu) δ_i). Step t picks
// an example i_t (a fresh random order every epoch) and sets
//
//	f ← (1 − 2αη_t) f − η_t m g_{i_t} k(x_{i_t}, ·),
//
// which for a kernel expansion f = Σ_j c_j k(x_j, ·) shrinks every coefficient and adds to (or
// creates) that of x_{i_t}; a linear model is the same with k(x, ·) = x̃ (its intercept is not
// shrunk, being unpenalised). The step is the thesis' η_t = p/(αt) (p = Options.Eta0, default ½:
// η_t = 1/(μt) for the strong convexity μ = 2α of J_i), capped at 1/L, where L bounds the curvature
// of every J_i: 2α + m s_i λ_max(S + δ_iδ_iᵀ) k(x_i, x_i). The thesis leaves p to be tuned; without
// the cap, the first steps of a loss whose curvature grows with m overshoot and diverge. The cap
// also keeps 1 − 2αη_t in [0, 1), as the thesis requires.
//
// Truncation (Options.Tau = τ > 0): coefficients last updated τ or more steps ago are dropped, so
// the expansion never holds more than τ examples and a step costs O(τ(n + d)) instead of O(m(n+d)).
//
// Averaging: without truncation, Fit returns the mean of the iterates since the last epoch whose
// number is a power of two (2, 4, 8, …; suffix averaging), so that the mean always spans the last
// half of the run or more and forgets the early, far-off iterates. On small problems of every
// space it tested, it was as close to the optimum as the last iterate after 1000 epochs or closer,
// and up to a hundred times closer after 100 (whole-run averaging lagged behind both). With
// truncation the mean would hold more than τ examples, so the last iterate is returned.
//
// Truncation is the thesis' device for long streams seen once (PartialFit): an example's
// coefficient accumulates over its visits, and in a multi-epoch Fit with τ below 2m (the longest
// gap between two visits of an example) coefficients are dropped between visits, which keeps J far
// from the optimum (m = 100, τ = 50: J − J* about 0.9·(J(0) − J*)). Use it to bound the cost, not
// to approach the batch solution.
//
// Stopping: the fit stops when J, evaluated at the returned iterate after every epoch, fell by at
// most Tol·|J| over each of sgdCalmEpochs epochs in a row (a rise breaks the row; an epoch that
// restarted the mean is skipped), or after MaxIter epochs. Meeting the tolerance is not enough to
// count as converged when the steps were too small to move the model: a linear model must also
// have halved the gradient of its weights (sgdStallGradient), and a cold start's steps must sum to
// enough to halve the distance of its intercept (linear) or of its expansion (kernel) to the
// optimum (sgdRun.moved). Result.RelGrad holds
// the relative change of J over the last epoch: the full gradient of a kernel model would cost
// O(m²n). J costs about as much as an
// epoch, so with Tol = 0 (no tolerance stop) it is evaluated after every epoch only for
// Options.TraceObjective, and otherwise once at the end: Progress then gets NaN for J and its
// change, and Result.RelGrad is NaN.
//
// Cost: a kernel step computes the scores f(x_i), O(e(n + d)) for an expansion of e examples, and
// then changes the coefficients of one example; the shrink and the averaging of all the others are
// kept implicit (kernelSGD). Without truncation the scores of 128 consecutive steps are computed
// together, through matrix products, which makes an epoch of m = 20,000, n = 15, d = 45 take
// about 2.5 s instead of 20, and J about as long (BenchmarkKernelSGDEpoch, 2 cores).

// sgdSeedStream separates the example order from the other uses of Options.Seed.
const sgdSeedStream = 0x7367_6400

// sgdLearner is the function SGD updates: a linear model or a kernel expansion over one chunk of
// examples (the rows of the problem).
type sgdLearner interface {
	// scores writes f(x_i) into u.
	scores(i int, u []float64)
	// kappa is k(x_i, x_i) for the kernel in use (‖x̃_i‖² for a linear model).
	kappa(i int) float64
	// step sets f ← shrink·f + c·k(x_i, ·) at step t (c may be zero).
	step(i int, t int64, shrink float64, c []float64)
	// average starts averaging the iterates (including the current one).
	average()
	// objective returns J over the chunk at the returned iterate (the average, when averaging).
	objective() float64
}

// sgdIllPosed returns the refusal of a problem that the learner's objective has shown to be
// unbounded below (a kernel expansion on an indefinite kernel matrix), or nil.
func sgdIllPosed(ln sgdLearner) error {
	if ks, ok := ln.(*kernelSGD); ok {
		return ks.psd
	}
	return nil
}

// sgdPlanner is a learner that computes its scores faster knowing the order of the epoch's
// examples in advance.
type sgdPlanner interface {
	// plan announces that the next len(order) steps take the examples of order, in that order.
	plan(order []int)
}

// sgdRun is the step-size schedule and the example order of one call.
type sgdRun struct {
	p     *Problem
	mEff  float64 // m of J_i: the examples J sums over
	eta0  float64
	L     float64 // curvature bound: η_t ≤ 1/L
	steps int64   // steps taken before (PartialFit continues the schedule)
	// travel is Σ η_t over the steps of this call: with the curvature h of a coordinate,
	// travel·h bounds how far the steps can have contracted its distance to the optimum (moved).
	travel float64
	// the mean curvature of J along the intercept and along a kernel expansion (moved)
	interceptCurvature, expansionCurvature float64
	// negRow is the first example whose kappa is clearly negative (below −indefinite times the
	// largest |kappa|), −1 for none: a PSD kernel has none.
	negRow int
	rng    *rand.Rand
}

func newSGDRun(p *Problem, ln sgdLearner, mEff float64, steps int64, opt *Options) *sgdRun {
	m, d := p.dims()
	sNorm := p.sBound()
	var trS float64
	for a := 0; a < d; a++ {
		trS += p.S.At(a, a)
	}
	// L bounds every example's curvature; the mean curvatures of the intercept and of the
	// expansion come from the examples' s_i (tr S + ‖δ_i‖²)/d (see moved).
	L := 2 * p.Alpha
	var interceptSum, expansionSum, kScale float64
	kappas := make([]float64, m)
	for i := 0; i < m; i++ {
		di := p.Delta.RawRowView(i)
		dd, kappa := floats.Dot(di, di), ln.kappa(i)
		kappas[i], kScale = kappa, math.Max(kScale, math.Abs(kappa))
		L = math.Max(L, 2*p.Alpha+mEff*p.Weight[i]*(sNorm+dd)*kappa)
		c := p.Weight[i] * (trS + dd) / float64(d)
		interceptSum += c
		expansionSum += c * kappa
	}
	negRow := -1 // a diagonal entry below CG's margin: rounding leaves centred Gram matrices at −1e-18
	for i, kappa := range kappas {
		if kappa < -indefinite*kScale {
			negRow = i
			break
		}
	}
	r := &sgdRun{p: p, mEff: mEff, eta0: opt.eta0(), L: L, steps: steps, negRow: negRow,
		rng: rand.New(rand.NewPCG(opt.Seed, sgdSeedStream^uint64(steps)))}
	if m > 0 && d > 0 {
		r.interceptCurvature = mEff / float64(m) * interceptSum
		r.expansionCurvature = 2*p.Alpha + mEff/float64(m)*expansionSum/float64(m)
	}
	return r
}

// checkCurvature refuses a run whose curvature bound L overflowed: its steps, capped at 1/L, would
// all be zero, and the unchanged model would pass the tolerance stop as converged. Weights near
// the float64 limit make it overflow, or inputs whose squared norms approach it.
//
// It also refuses a kernel with a negative value k(x_i, x_i) on its diagonal, which proves it
// indefinite: SGD diverged on it until the coefficients overflowed.
func (r *sgdRun) checkCurvature(ln sgdLearner) error {
	if i := r.negRow; i >= 0 {
		return fmt.Errorf("the kernel matrix is not positive semi-definite: k(x_%d, x_%d) = %.3g < 0 on its diagonal "+
			"(counting the intercept's constant, with fit_intercept): %s", i, i, ln.kappa(i), needPSD)
	}
	if r.L <= math.MaxFloat64 {
		return nil
	}
	m, _ := r.p.dims()
	var kappa float64
	for i := 0; i < m; i++ {
		kappa = math.Max(kappa, ln.kappa(i))
	}
	return fmt.Errorf("solver sgd: the curvature bound of its steps overflows float64 (largest sample_weight %.3g, "+
		"largest squared norm of an input %.3g, %g examples): scale sample_weight or X down (multiplying every weight "+
		"and alpha by one factor leaves the model unchanged), or use another solver", floats.Max(r.p.Weight), kappa, r.mEff)
}

// stopEvery is how many SGD steps pass between two checks of Options.Stop: a kernel step costs
// up to a kernel row over the expansion, about a millisecond at 30,000 support vectors.
const stopEvery = 64

// epoch makes one pass over the examples in a random order, or stops early with ErrCancelled
// when stop is set (the learner then holds a partial epoch, which the caller discards).
func (r *sgdRun) epoch(ln sgdLearner, stop *cancel.Flag) error {
	m, d := r.p.dims()
	u, su, g := make([]float64, d), make([]float64, d), make([]float64, d)
	S := r.p.S.RawSymmetric()
	order := r.rng.Perm(m)
	if pl, ok := ln.(sgdPlanner); ok {
		pl.plan(order)
	}
	for k, i := range order {
		if k%stopEvery == 0 && stop.Yield() {
			return cancel.ErrCancelled
		}
		r.steps++
		eta := math.Min(r.eta0/(r.p.Alpha*float64(r.steps)), 1/r.L)
		r.travel += eta
		ln.scores(i, u)
		blas64.Symv(1, S, blas64.Vector{N: d, Inc: 1, Data: u}, 0, blas64.Vector{N: d, Inc: 1, Data: su})
		r.p.exampleLoss(i, u, su, g)
		floats.Scale(-eta*r.mEff, g)
		ln.step(i, r.steps, 1-2*r.p.Alpha*eta, g)
	}
	return nil
}

// fit runs up to opt.MaxIter epochs (Fit), suffix-averaging unless noAverage. J is evaluated
// after every epoch only when the tolerance stop or opt.TraceObjective needs it; otherwise
// Progress gets NaN for it and its change, and J is evaluated once at the end.
func (r *sgdRun) fit(ln sgdLearner, opt *Options, noAverage bool) (Result, error) {
	if err := r.checkCurvature(ln); err != nil {
		return Result{}, err
	}
	trace := opt.Tol > 0 || opt.TraceObjective
	prev := math.NaN()
	if trace {
		prev = ln.objective()
	}
	// Steps too small to move the model (eta0 = 1e-300; at alpha = 1e6–1e10 the unpenalised
	// intercept, whose steps are capped at 1/(2α) like the others') change J by less than the
	// tolerance per epoch and passed the stop far from the optimum. A linear model checks the
	// gradient of its weights at the end (sgdStallGradient); the intercept of a linear model and a
	// kernel expansion started cold check the sum of their steps instead (moved): the intercept's
	// gradient is swayed by the weights' remaining error (at tol = 1e-3 it stayed above half its
	// value at 0 in 11 of 20 fits whose intercepts were as close as any), and a kernel's costs O(m²n).
	cold := r.steps == 0
	r.travel = 0
	lin, linear := ln.(*linearSGD)
	res := Result{}
	calm := 0 // epochs in a row whose fall of J met tol, restarts of the mean skipped
	for ep := 1; ep <= opt.MaxIter; ep++ {
		restarted := ep >= 2 && ep&(ep-1) == 0 && !noAverage
		if restarted {
			ln.average()
		}
		if err := r.epoch(ln, opt.Stop); err != nil {
			return res, err
		}
		res = Result{Iterations: ep, Objective: math.NaN(), RelGrad: math.NaN()}
		if trace {
			j := ln.objective()
			if err := opt.Stop.Err(); err != nil {
				return res, err
			}
			if err := sgdIllPosed(ln); err != nil {
				return res, err
			}
			fall := relativeFall(prev, j)
			res.Objective, res.RelGrad = j, math.Abs(fall)
			// Only a fall of J within tol counts: a rise is noise, and an epoch that restarted
			// the mean compares two different averages (J rose by 1e-4 at epoch 4 on yeast, and
			// tol=1e-3 stopped there, 2.8e-2 above the minimum, as converged).
			switch {
			case restarted: // no evidence either way: the epoch compares two different means
			case fall >= 0 && fall <= opt.Tol:
				calm++
			default:
				calm = 0
			}
			res.Converged = calm >= sgdCalmEpochs && (linear || !cold || r.moved(false))
			prev = j
		}
		if opt.Progress != nil && !opt.Progress(ep, res.Objective, res.RelGrad) {
			return res, ErrCancelled
		}
		if res.Converged {
			break
		}
	}
	if !trace {
		res.Objective = ln.objective()
		if err := sgdIllPosed(ln); err != nil {
			return res, err
		}
	}
	if res.Converged && linear && (lin.weightGradient() > sgdStallGradient || cold && lin.des.intercept && !r.moved(true)) {
		res.Converged = false
	}
	return res, opt.Stop.Err()
}

// sgdCalmEpochs is how many epochs in a row must each lower J by at most Tol·|J| for a fit to
// stop as converged. One such epoch among epochs that fell by 1e-4 stopped a kernel fit 18 %
// above the minimum (subtrees, alpha = 1e-4, epoch 634 of a fit that otherwise ran to max_iter;
// probe AU), as scikit-learn's n_iter_no_change guards its SGD against.
const sgdCalmEpochs = 3

// relativeFall is SGD's measure of an epoch: how far J fell from before to after, relative to
// |after| (negative for a rise).
func relativeFall(before, after float64) float64 {
	return (before - after) / math.Max(math.Abs(after), math.SmallestNonzeroFloat64)
}

// sgdStallTravel is the least travel·h at which SGD counts as having moved a coordinate of
// curvature h: gradient steps η_t on a quadratic of curvature h contract the distance to its
// optimum by Π(1 − η_t h) ≈ exp(−h Σ η_t), which halves it at h Σ η_t = ln 2.
const sgdStallTravel = math.Ln2

// moved reports whether this call's steps can have halved the distance to the optimum of the
// intercept (intercept) or of the function (a kernel expansion): travel·h ≥ sgdStallTravel with
// h the mean curvature of J along that coordinate, from the examples' curvature in the scores
// s_i (tr S + ‖δ_i‖²)/d. Every step moves the intercept by its example's gradient, so its h sums
// the examples' curvatures; an expansion's coefficient of x_i moves on i's steps (1 in m), along
// k(x_i, ·) of squared norm κ_i, and every step shrinks it by 2αη_t. Both h are computed once,
// with L, by newSGDRun.
func (r *sgdRun) moved(intercept bool) bool {
	if m, d := r.p.dims(); m == 0 || d == 0 {
		return true
	}
	h := r.expansionCurvature
	if intercept {
		h = r.interceptCurvature
	}
	return r.travel*h >= sgdStallTravel
}

// sgdStallGradient is the largest ‖∇J‖/‖∇J(0)‖ of the weights at which a linear SGD fit that met
// its tolerance counts as converged: SGD's averaged iterate is not expected to reach a small gradient, but one
// that has not halved it has not moved (on the stalled fits above it stayed at 0.9–1).
const sgdStallGradient = 0.5

// pass makes the single epoch of PartialFit, reporting J over the chunk and its relative change.
func (r *sgdRun) pass(ln sgdLearner, opt *Options) (Result, error) {
	if err := r.checkCurvature(ln); err != nil {
		return Result{}, err
	}
	before := ln.objective()
	if err := r.epoch(ln, opt.Stop); err != nil {
		return Result{}, err
	}
	j := ln.objective()
	if err := opt.Stop.Err(); err != nil {
		return Result{}, err
	}
	if err := sgdIllPosed(ln); err != nil {
		return Result{}, err
	}
	fall := relativeFall(before, j)
	res := Result{Iterations: 1, Objective: j, RelGrad: math.Abs(fall)}
	res.Converged = fall >= 0 && fall <= opt.Tol // as fit's epochs: a rise does not count
	if opt.Progress != nil && !opt.Progress(1, j, res.RelGrad) {
		return res, ErrCancelled
	}
	return res, nil
}
