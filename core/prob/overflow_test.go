package prob

import (
	"strings"
	"testing"
)

// TestFitRefusesOverflowingInputs: with a value near 1e308 in X the gradient at W = 0 overflowed;
// both solvers stopped at once and returned W = 0 (uniform probabilities) with a warning that
// suggested more iterations.
func TestFitRefusesOverflowingInputs(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	const m, n = 20, 2
	X, ys := syntheticData(t, sp, m, n, 1, 17)
	X[0] = 1e308
	X[2] = 1e308
	for _, solver := range []Solver{SolverLBFGS, SolverAdam} {
		_, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 1, Tol: 1e-6, MaxIter: 50, Solver: solver})
		if err == nil || !strings.Contains(err.Error(), "X holds values too large") {
			t.Errorf("%v: want an overflow error naming X, got %v", solver, err)
		}
	}
}
