package prob

import (
	"math"
	"testing"
)

// TestLBFGSStiffFirstStep: on f(x) = c·x² + 2x the first step (unit length, along the gradient)
// overshoots the minimiser −1/c by a factor of about c. Halving it 60 times reached 1e-18, too
// long a step for c = 1e20 (the run stopped at its start with errLineSearch, as a fit with
// alpha = 1e20 did); the quadratic backtrack finds a short enough step, and the run reaches −1/c.
func TestLBFGSStiffFirstStep(t *testing.T) {
	for _, c := range []float64{1, 1e6, 1e20, 1e40} {
		x := []float64{0}
		f := func(x, g []float64) (float64, error) {
			g[0] = 2*c*x[0] + 2
			return c*x[0]*x[0] + 2*x[0], nil
		}
		_, err := minimizeLBFGS(x, f, 100, func(_ int, _ float64, g []float64) error {
			if math.Abs(g[0]) < 1e-9 {
				return errConverged
			}
			return nil
		}, nil)
		if err != errConverged || math.Abs(x[0]*c+1) > 1e-9 {
			t.Errorf("c = %g: %v, stopped at %v, want %v", c, err, x[0], -1/c)
		}
	}
}

// TestBacktrack: the quadratic's minimiser, within [step/10, step/2]; halving for a value that is
// not finite or a model without positive curvature.
func TestBacktrack(t *testing.T) {
	for _, c := range []struct{ step, f, fn, gd, want float64 }{
		{1, 0, 1e20, -1, 0.1},        // the minimiser 5e-21 is clamped to step/10
		{1, 0, 0.5, -1, 1.0 / 3},     // the minimiser -gd/(2(fn - f - gd)) = 1/3
		{1, 0, 2, -1, 1.0 / 6},       // the minimiser -gd/(2(fn - f - gd)) = 1/6
		{1, 0, math.Inf(1), -1, 0.5}, // overflow: halve
		{1, 0, math.NaN(), -1, 0.5},  // NaN: halve
		{0.2, 1, 0.7, -1, 0.1},       // no positive curvature: halve
	} {
		if got := backtrack(c.step, c.f, c.fn, c.gd); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("backtrack(%v, %v, %v, %v) = %v, want %v", c.step, c.f, c.fn, c.gd, got, c.want)
		}
	}
}

// TestMinimizeRelativeStopsWhereJStopsFalling: on a J whose gradient is far below the rounding of
// J itself (J ≡ 1, ∇J ≡ 1e-20: every step is accepted, as its gain rounds away, and the relative
// gradient stays at 1, as on X + 10⁶ without an intercept), the run stops stallWindow iterations
// after J last fell, unconverged, instead of running to its iteration bound; on a smooth J it
// converges.
func TestMinimizeRelativeStopsWhereJStopsFalling(t *testing.T) {
	for _, flat := range []bool{false, true} {
		x := []float64{0}
		f := func(x, g []float64) (float64, error) {
			if flat {
				g[0] = 1e-20
				return 1, nil
			}
			if x[0] <= -1 {
				return math.Inf(1), nil
			}
			g[0] = -1/(1+x[0]) + 0.01 // minimum at x = 99
			return -math.Log1p(x[0]) + 0.01*x[0], nil
		}
		opt := Options{Tol: 1e-10, MaxIter: 100000}
		res, err := minimizeRelative(x, f, &opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		if flat && (res.Converged || res.Iterations > 2*stallWindow) {
			t.Errorf("flat J: %+v, want a stop after about %d iterations", res, stallWindow)
		}
		if !flat && (!res.Converged || math.Abs(x[0]-99) > 1e-6) {
			t.Errorf("smooth J: %+v at x = %v", res, x[0])
		}
	}
}
