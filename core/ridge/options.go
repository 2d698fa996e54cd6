package ridge

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/kernel"
)

// Solver chooses how J is minimised.
type Solver int

// The solvers. Auto picks Exact for small linear problems and CG otherwise.
const (
	Auto Solver = iota
	Exact
	CG
)

var solverNames = [...]string{"auto", "exact", "cg"}

func (s Solver) String() string {
	if s >= 0 && int(s) < len(solverNames) {
		return solverNames[s]
	}
	return fmt.Sprintf("Solver(%d)", int(s))
}

// ParseSolver maps a solver name to its Solver.
func ParseSolver(name string) (Solver, error) {
	for i, n := range solverNames {
		if n == name {
			return Solver(i), nil
		}
	}
	return 0, fmt.Errorf("unknown solver %q (want auto, exact or cg)", name)
}

// ErrCancelled is returned when the Progress callback asks the solver to stop.
var ErrCancelled = errors.New("fit cancelled")

// exactLimit is the largest number of unknowns (rows of W times d) that Auto solves by Cholesky
// of the normal equations; beyond it preconditioned CG is cheaper.
const exactLimit = 600

// Memory bounds, checked before allocating, so that a large problem gets an error naming the
// way out instead of exhausting the machine.
const (
	// MaxKernelSamples bounds m for kernel models, which hold the m×m Gram matrix (8m² bytes).
	MaxKernelSamples = 30000
	// MaxExactUnknowns bounds (rows of W)·d for the exact solver, which factors a square matrix of
	// that size.
	MaxExactUnknowns = 8000
)

// Options configure a fit.
type Options struct {
	Alpha     float64
	Kernel    kernel.Kernel
	Intercept bool
	Solver    Solver
	Tol       float64 // stop when ‖∇J‖ ≤ Tol·‖∇J(0)‖ (iterative solvers)
	MaxIter   int
	// Progress, when set, is called after every iteration with the objective and the relative
	// gradient norm; returning false stops the fit with ErrCancelled.
	Progress func(iter int, objective, relGrad float64) bool
}

// Validate reports the first option out of range.
func (o *Options) Validate() error {
	if !(o.Alpha > 0) || math.IsInf(o.Alpha, 0) {
		return fmt.Errorf("alpha must be a positive finite number, got %v", o.Alpha)
	}
	if err := o.Kernel.Validate(); err != nil {
		return err
	}
	if o.Solver < Auto || o.Solver > CG {
		return fmt.Errorf("unknown solver %d", int(o.Solver))
	}
	if !(o.Tol > 0) || o.Tol >= 1 {
		return fmt.Errorf("tol must be in (0, 1), got %v", o.Tol)
	}
	if o.MaxIter < 1 {
		return fmt.Errorf("max_iter must be ≥ 1, got %d", o.MaxIter)
	}
	return nil
}

// Result reports how a fit ended.
type Result struct {
	Iterations int     // solver iterations (0 for Exact)
	Objective  float64 // J at the solution
	RelGrad    float64 // ‖∇J‖ / ‖∇J(0)‖ at the solution
	Converged  bool    // RelGrad ≤ Tol, or an exact solve
}
