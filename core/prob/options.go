package prob

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/enum"
	"github.com/combpred/combpred/core/space"
	"slices"
)

// Solver chooses how J is minimised.
type Solver int

// The solvers.
const (
	// SolverAuto is SolverLBFGS when inference is exact and SolverAdam otherwise.
	SolverAuto Solver = iota
	// SolverLBFGS is L-BFGS on the exact objective and gradient, to high precision.
	SolverLBFGS
	// SolverAdam is Adam with decreasing steps η/√t and polynomial-decay iterate averaging, for
	// noisy (sampled) gradients.
	SolverAdam
)

var solverNames = [...]string{"auto", "lbfgs", "adam"}

// String returns the name of the solver.
func (s Solver) String() string { return enum.Name(solverNames[:], s, "Solver") }

// ParseSolver maps a name (auto, lbfgs, adam) to its Solver.
func ParseSolver(name string) (Solver, error) {
	s, err := enum.Parse[Solver](solverNames[:], "solver", name)
	if err != nil {
		return 0, fmt.Errorf("prob: %w", err)
	}
	return s, nil
}

// ErrCancelled is returned when the Progress callback asks the solver to stop.
var ErrCancelled = cancel.ErrCancelled

// DefaultLearningRate is Adam's default base step η.
const DefaultLearningRate = 0.2

// Options configure Fit.
type Options struct {
	// Alpha is λ ≥ 0, the weight of ‖W‖² (the intercept row is not penalised); 0 chooses
	// DefaultAlpha.
	Alpha     float64
	Intercept bool
	Solver    Solver
	Inference InferenceOptions
	// Tol stops L-BFGS when ‖∇J‖ ≤ Tol·‖∇J(0)‖, and Adam when the averaged iterate moves by at
	// most Tol·‖W̄‖ over 10 iterations. It must be in (0, 1).
	Tol     float64
	MaxIter int
	Seed    uint64 // seeds sampled inference and minibatches
	// LearningRate is Adam's base step η (0 means DefaultLearningRate); step t uses η/√t.
	LearningRate float64
	// BatchSize is Adam's minibatch size (0 means all rows).
	BatchSize int
	// FreshChains makes every sampled gradient start its chains from uniform structures with the
	// full burn-in, as fits did before persistent chains (chainStates): for comparisons.
	FreshChains bool
	// MaxSampleGrowth, above 1, lets Adam double the samples per row whenever the gradient's
	// Monte Carlo error exceeds half its norm (the norm test, normTestTheta), up to
	// MaxSampleGrowth times Inference.Samples. 0 and 1 keep the sample size fixed, the default:
	// on label ranking (BENCHMARKS.md, sampled fits) the extra samples cost more time than the
	// same time spent on iterations saved.
	MaxSampleGrowth int
	// Progress, when set, is called after every iteration with the objective (NaN when inference
	// is sampled: it would need log Z) and the relative gradient norm ‖∇J‖/‖∇J(0)‖ (a noisy
	// estimate when sampled); returning false stops the fit with ErrCancelled.
	Progress func(iter int, objective, relGrad float64) bool
	// Init, when set, is a model to start from: the fit starts at its coefficients when it is a
	// model of the same space with the same features and intercept, and ignores it otherwise. The
	// stopping rule stays relative to ‖∇J(0)‖, so a warm start stops where a cold one would.
	Init *Model
	// Centre, when not nil (n values), is where FitSums and DataSumsOf, with an intercept,
	// centre every part's X (the caller's estimate of X's mean, the same for every part), as Fit
	// centres its X at its mean. Ignored without an intercept and by Fit.
	Centre []float64
	// Spread, when not nil (n values), is the spread of each feature for FitSums' solver
	// coordinates (rowScales): its weighted root mean square about Centre (about 0 without an
	// intercept), which Fit reads off X itself. Nil: FitSums works in W's own coordinates.
	// Ignored by Fit.
	Spread []float64
	// Variances, when not nil (the space's dimension d values), are the weighted variances of ψ's
	// coordinates over the training structures, with which FitSums preconditions L-BFGS as Fit
	// does (curvature.go; Fit reads them off its Problem): the two then follow the same path. Nil,
	// or without Spread: FitSums runs plain L-BFGS. Ignored by Fit.
	Variances []float64
	// Boundary, when not nil, are the boundary counts of the training structures (BoundaryLen
	// values: the parts' BoundaryCountsInto added up), from which FitSums warns of intercepts
	// without a finite optimum as Fit does (Model.Warnings). Nil: no such warning. Ignored by Fit.
	Boundary []float64
}

// DefaultAlpha is the λ of Options.Alpha = 0 on the space sp for sample weights w (nil: m ones):
// 1/(2·Σw), the objective scikit-learn's LogisticRegression minimises at its default C = 1
// (C·Σ w_i NLL_i + ½‖W‖² divided by C·Σw), and 1/Σw on a multiclass space of two classes. There
// the model scores each class with its own weights, and at the optimum w₀ = −w₁ = −w/2 for the
// weights w of the log-odds: λ(‖w₀‖² + ‖w₁‖²) = (λ/2)‖w‖², half the penalty LogisticRegression's
// single binary w pays at the same λ. Held-out log-likelihoods on the shared data sets
// (BENCHMARKS.md, prob_default_alpha) put it at or near the best of the fixed values tried on
// small sets, and it makes multiclass probabilities those of LogisticRegression's defaults; the
// former default λ = 1 was the worst choice on every set.
func DefaultAlpha(sp space.Space, weights []float64, m int) float64 {
	c, _ := defaultAlphaScale(sp)
	if weights == nil {
		return c / float64(m)
	}
	var sum float64
	for _, w := range weights {
		sum += w
	}
	return c / sum // not 1/(2·sum): 2·sum overflows for sums above 9e307
}

// defaultAlphaScale is the c of DefaultAlpha = c/Σw on sp, and the formula as errors name it.
func defaultAlphaScale(sp space.Space) (c float64, formula string) {
	if space.IsBinaryChoice(sp) {
		return 1, "1/Σ sample_weight"
	}
	return 0.5, "1/(2·Σ sample_weight)"
}

// defaultAlpha is DefaultAlpha, refused naming the sample weights when it leaves the range of
// check.ScaledAlpha (weights summing to less than about 1e-308): the error used to blame alpha, which
// the user never set.
func defaultAlpha(sp space.Space, weights []float64, m int) (float64, error) {
	alpha := DefaultAlpha(sp, weights, m)
	if err := check.ScaledAlpha(alpha); err != nil {
		way := "up" // a sum below about 1e-308
		if alpha == 0 {
			way = "down" // the sum overflowed
		}
		_, formula := defaultAlphaScale(sp)
		return 0, fmt.Errorf("prob: the default alpha, %s, is %v for these sample weights, "+
			"outside its range; scale sample_weight %s or set alpha", formula, alpha, way)
	}
	return alpha, nil
}

// Validate reports the first option out of range.
func (o *Options) Validate() error {
	if o.Alpha != 0 {
		if err := check.Alpha(o.Alpha); err != nil {
			return err
		}
	}
	if o.Solver < SolverAuto || o.Solver > SolverAdam {
		return fmt.Errorf("prob: unknown solver %d", int(o.Solver))
	}
	if !(o.Tol > 0) || o.Tol >= 1 {
		return fmt.Errorf("prob: tol must be in (0, 1), got %v", o.Tol)
	}
	if o.MaxIter < 1 {
		return fmt.Errorf("prob: max_iter must be ≥ 1, got %d", o.MaxIter)
	}
	if o.LearningRate < 0 || math.IsNaN(o.LearningRate) || math.IsInf(o.LearningRate, 0) {
		return fmt.Errorf("prob: learning_rate must be ≥ 0 and finite, got %v", o.LearningRate)
	}
	if o.BatchSize < 0 {
		return fmt.Errorf("prob: batch_size must be ≥ 0, got %d", o.BatchSize)
	}
	if o.MaxSampleGrowth < 0 {
		return fmt.Errorf("prob: the sample growth bound must be ≥ 0, got %d", o.MaxSampleGrowth)
	}
	if o.Inference.DispersedCheck {
		// The fit's marginals could not use the verdict, and the model would keep the option.
		return errors.New("prob: the mixing check (InferenceOptions.DispersedCheck) is an option of marginals queries, not of fits")
	}
	return o.Inference.validate()
}

// Result reports how a fit ended.
type Result struct {
	Solver     Solver // the solver used (never SolverAuto)
	Exact      bool   // inference was exact
	Iterations int
	Objective  float64 // J at the solution; NaN when inference is sampled
	RelGrad    float64 // ‖∇J‖/‖∇J(0)‖ at the solution in the solver's coordinates (rowScales; a sampled estimate when inference is sampled)
	// RelGradSE is the Monte Carlo standard error of RelGrad, the noise of the sampled gradient
	// relative to ‖∇J(0)‖ (0 when inference is exact): a RelGrad within about two of it is
	// indistinguishable from zero.
	RelGradSE float64
	// FinalSamples is the number of samples per row of the last sampled gradient, after the
	// norm test's doublings (0 when inference is exact).
	FinalSamples int
	Converged    bool
}

// SolverNames returns the names of the solvers, in the order of their values.
func SolverNames() []string { return slices.Clone(solverNames[:]) }
