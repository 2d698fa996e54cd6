package ridge

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/enum"
	"github.com/combpred/combpred/core/kernel"
	"slices"
)

// Solver chooses how J is minimised.
type Solver int

// The solvers. Auto picks Exact for small linear problems and CG otherwise, always CG for kernel
// expansions and when d > MaxDim (and SGD for PartialFit of kernel models without a Nyström map).
// Exact is Cholesky of the normal equations for linear models and LU of the expansion
// coefficients' system for kernel models (kernelexact.go). SGD is the thesis' online stochastic
// gradient (sgd.go).
const (
	Auto Solver = iota
	Exact
	CG
	SGD
)

var solverNames = [...]string{"auto", "exact", "cg", "sgd"}

func (s Solver) String() string { return enum.Name(solverNames[:], s, "Solver") }

// ParseSolver maps a solver name to its Solver.
func ParseSolver(name string) (Solver, error) {
	return enum.Parse[Solver](solverNames[:], "solver", name)
}

// Reference names the data-driven measure that Options.EmpiricalWeight mixes with the uniform
// one (reference.go).
type Reference int

// The data-driven reference measures. Empirical is the training structures themselves (weighted by
// the sample weights), available for every space. Product is the space's measure fixed by the
// training structures' mean (space.MarginalMeasure: independent labels for multi-label, per-node
// fugacities for subtrees), which matches their marginals only.
const (
	Empirical Reference = iota
	Product
)

var referenceNames = [...]string{"empirical", "product"}

func (r Reference) String() string { return enum.Name(referenceNames[:], r, "Reference") }

// ParseReference maps a reference measure's name to its Reference.
func ParseReference(name string) (Reference, error) {
	return enum.Parse[Reference](referenceNames[:], "reference", name)
}

// ReferenceNames returns the names of the data-driven reference measures, in the order of their
// values.
func ReferenceNames() []string { return slices.Clone(referenceNames[:]) }

// ErrCancelled is returned when the Progress callback asks the solver to stop.
var ErrCancelled = cancel.ErrCancelled

// stopRows is how many examples a pass over the targets (their validation and embedding, the
// label sets' grouping, the sparse-target set-up and products) takes between two looks at the
// stop flag: a few milliseconds at 60 labels. Without them, Ctrl-C waited up to 1.3 s at
// 1,000,000 × 60 (probe CO).
const stopRows = 1 << 14

// progressOnce gives Progress the single iteration of a direct solve, so that a verbose exact fit
// reports its objective and relative gradient as the iterative solvers do after each iteration.
func progressOnce(opt *Options, res Result) error {
	if opt.Progress != nil && !opt.Progress(1, res.Objective, res.RelGrad) {
		return ErrCancelled
	}
	return nil
}

// ExactLimit is the largest number of unknowns of a linear model (rows of W, the intercept's
// included, times d) that Auto may solve by Cholesky of the normal equations; below it Auto
// compares the exact solve's cost with CG's (autoExact).
const ExactLimit = 600

// Memory bounds, checked before allocating, so that a large problem gets an error naming the
// way out instead of exhausting the machine.
const (
	// MaxKernelSamples bounds m for kernel models, which hold the m×m Gram matrix (8m² bytes).
	MaxKernelSamples = 30000
	// MaxExactUnknowns bounds (rows of W)·d for the exact solver, which factors a square matrix of
	// that size.
	MaxExactUnknowns = 8000
	// MaxComponents bounds Options.NComponents: the Nyström map factors the landmarks' Gram
	// matrix, O(NComponents³) time and 16·NComponents² bytes (10,000 landmarks: 48 s beside a CI run).
	MaxComponents = 10000
	// MaxDim bounds the output dimension d for the solvers that hold the space covariance S as a
	// dense d×d matrix (8d² bytes): solver exact and sgd, kernel models without a Nyström map and
	// PartialFit. Pair spaces reach it at about 90 labels or vertices. Beyond it, the linear model
	// (on X or on a Nyström map) is fitted by CG (solver cg, or auto) with S applied as an operator
	// in O(d) and a preconditioner built from the closed-form spectrum of S (space.Spectral), in
	// O((m + k)·d) memory for m examples and k rows of W.
	MaxDim = 4096
)

// DefaultEta0 is the step-size parameter p of solver=sgd when Options.Eta0 is zero.
const DefaultEta0 = 0.5

// Options configure a fit.
type Options struct {
	Alpha     float64
	Kernel    kernel.Kernel
	Intercept bool
	Solver    Solver
	// Tol stops the iterative solvers: CG when ‖∇J‖ ≤ Tol·‖∇J(0)‖, SGD when J changes by at most
	// Tol·|J| over an epoch. SGD also takes Tol = 0, no tolerance stop: it then runs MaxIter epochs
	// without evaluating J after each (see TraceObjective).
	Tol float64
	// MaxIter bounds the iterations of CG and the epochs (passes over the data) of SGD.
	MaxIter int
	// Progress, when set, is called after every iteration (CG) or epoch (SGD) with the objective
	// and the relative gradient norm (SGD: the relative change of J over the epoch, both NaN when
	// neither Tol nor TraceObjective needs them); returning false stops the fit with ErrCancelled.
	Progress func(iter int, objective, relGrad float64) bool
	// TraceObjective makes SGD evaluate J after every epoch for Progress even when its tolerance
	// stop does not need it (Tol = 0); set it when the user asked for verbose output. The
	// evaluation costs about as much as an epoch, and without it Progress gets NaN for the
	// objective and its change (J is then evaluated once, at the end).
	TraceObjective bool
	// Stop, when not nil, cancels the fit: it is checked between the steps that build the
	// problem, at every iteration, and inside the loops that can run long (the Gram matrices, an
	// SGD epoch, the panels of the exact kernel solve), and a fit that sees it set returns
	// ErrCancelled within a fraction of a second.
	Stop *cancel.Flag

	// Init, when not nil, is a fitted model to start the iterative solvers from (warm start):
	// CG and SGD on a linear model start from Init.Coef when Init is a linear model (or a Nyström
	// model with the same kernel and landmarks) with the same number of features, intercept and
	// output dimension. Kernel models start from Init.Dual when Init is a model of the same
	// kernel whose expansion is over the same training inputs (its Support equals X; an alpha
	// path, say). A precomputed kernel has no inputs to compare: Init.Dual is used when it has
	// as many rows as X, which assumes the same training samples. SGD on other inputs starts from
	// Init's expansion, which the new examples join. SGD also continues Init's step-size
	// schedule (Init.Steps; see warmSteps). An incompatible Init is ignored, and the exact solver
	// ignores Init.
	Init *Model
	// Centre, when not nil (n values), is where a distributed conjugate-gradient fit with an
	// intercept centres every part's X (CGSetupOf, CGProductOf, FitCGSums), as Fit centres its
	// own X at its mean (centring.go): every part must be given the same. Ignored without an
	// intercept and by the other fits.
	Centre []float64
	// WeightExponent e makes a distributed conjugate-gradient fit (CGSetupOf, CGProductOf,
	// FitCGSums) count every sample weight s as s·2^−e, exactly, the same e for every part, as
	// the sums of the distributed ProbabilisticStructured do (prob.DataSumsOf): the parts' sums
	// of weights near 1e305 overflowed, of subnormal ones lost their digits, where Fit scales its
	// weights before summing (scaledWeights). FitCGSums fits with α·2^−e, the same minimiser,
	// and reports J at the weights' own scale. 0 elsewhere.
	WeightExponent int
	// NComponents > 0 replaces the rbf or poly kernel by its Nyström map into R^NComponents
	// (nystrom.go) and fits the linear model there; 0 keeps the kernel expansion.
	NComponents int
	// Seed drives the random choices: the Nyström landmarks and the SGD example order.
	Seed uint64
	// Eta0 is the thesis' step-size parameter p of solver=sgd, η_t = p/(α·t) (capped, see
	// sgd.go); 0 means DefaultEta0.
	Eta0 float64
	// Tau > 0 truncates the kernel expansion of solver=sgd to the examples updated within the
	// last Tau steps (thesis §5.3.2); 0 keeps every example.
	Tau int
	// EmpiricalWeight w ∈ [0, 1] chooses the reference measure of the objective (reference.go):
	// (1 − w)·uniform + w·D, D the data-driven measure named by Reference (the training structures
	// weighted by the sample weights, or the space's measure with their mean). 0 is the thesis'
	// uniform measure over Y.
	EmpiricalWeight float64
	// Reference is the data-driven measure D of EmpiricalWeight.
	Reference Reference
}

// Validate reports the first option out of range.
func (o *Options) Validate() error {
	if err := check.Alpha(o.Alpha); err != nil {
		return err
	}
	if err := o.Kernel.Validate(); err != nil {
		return err
	}
	if o.Solver < Auto || o.Solver > SGD {
		return fmt.Errorf("unknown solver %d", int(o.Solver))
	}
	if !(o.EmpiricalWeight >= 0 && o.EmpiricalWeight <= 1) {
		return fmt.Errorf("empirical_weight must be in [0, 1], got %v", o.EmpiricalWeight)
	}
	if o.Reference < Empirical || o.Reference > Product {
		return fmt.Errorf("unknown reference measure %d", int(o.Reference))
	}
	if !(o.Tol > 0 || o.Tol == 0 && o.Solver == SGD) || o.Tol >= 1 {
		if o.Tol == 0 { // Python's None
			return fmt.Errorf("tol=None (no tolerance stop) needs solver sgd, got solver %s", o.Solver)
		}
		return fmt.Errorf("tol must be in (0, 1), or None (0: no tolerance stop) with solver sgd, got %v", o.Tol)
	}
	if o.MaxIter < 1 {
		return fmt.Errorf("max_iter must be ≥ 1, got %d", o.MaxIter)
	}
	if o.NComponents < 0 || o.NComponents > MaxComponents {
		return fmt.Errorf("n_components must be in [0, %d], got %d", MaxComponents, o.NComponents)
	}
	if o.NComponents > 0 && o.Kernel.Kind != kernel.RBF && o.Kernel.Kind != kernel.Poly {
		return fmt.Errorf("n_components applies to the rbf and poly kernels, not to %v", o.Kernel.Kind)
	}
	if !(o.Eta0 >= 0) || math.IsInf(o.Eta0, 0) {
		return fmt.Errorf("eta0 must be a non-negative finite number (0 for the default), got %v", o.Eta0)
	}
	if o.Tau < 0 {
		return fmt.Errorf("tau must be ≥ 0 (0: no truncation), got %d", o.Tau)
	}
	return nil
}

// eta0 is the step-size parameter p in effect.
func (o *Options) eta0() float64 {
	if o.Eta0 == 0 {
		return DefaultEta0
	}
	return o.Eta0
}

// Result reports how a fit ended.
type Result struct {
	Iterations int     // solver iterations (0 for Exact; epochs for SGD)
	Objective  float64 // J at the solution (PartialFit: see there)
	// RelGrad is ‖∇J‖ / ‖∇J(0)‖ at the solution; for SGD, which never forms the full gradient
	// of a kernel model, it is the relative change |ΔJ|/|J| over the last epoch instead.
	RelGrad   float64
	Converged bool // RelGrad ≤ Tol, or an exact solve
	// Condition is the exact solve's estimate of the condition number of its scaled normal
	// equations (0 for the iterative solvers), which bounds the digits its coefficients keep.
	Condition float64
}

// SolverNames returns the names of the solvers, in the order of their values.
func SolverNames() []string { return slices.Clone(solverNames[:]) }

// unknownsOf says what a count of unknowns of the linear model is made of: a row of W per feature,
// one more with an intercept, times the output dimension (an error message that named the
// intercept of a model without one misled, probe CD).
func unknownsOf(intercept bool) string {
	if intercept {
		return "features, plus one for the intercept, × output dimension"
	}
	return "features × output dimension"
}
