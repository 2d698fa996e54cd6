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
