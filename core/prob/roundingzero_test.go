package prob

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// Where ∇J(0) is zero but for rounding, W = 0 is the optimum and the fit stops there at once: on
// X = 0 with balanced classes (and on rows repeated once with every class) L-BFGS ran max_iter
// along the scores' constant direction, every intercept at −17, and reported a relative gradient
// of 5 (probe FC). A gradient that is small but real (one row tips the balance) is still fitted.
func TestFitStopsAtZeroWhereItsGradientIsRounding(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	const n = 3
	for _, c := range []struct {
		name   string
		m      int
		x      func(i int) float64
		label  func(i int) int64
		atZero bool
	}{
		{"X = 0, balanced", 12, func(int) float64 { return 0 }, func(i int) int64 { return int64(i % 3) }, true},
		{"each row with every class", 36, func(i int) float64 { return float64((i/3)%5) - 1.7 }, func(i int) int64 { return int64(i % 3) }, true},
		{"one row tips it", 301, func(int) float64 { return 0 }, func(i int) int64 { return int64(i % 3) }, false},
	} {
		X := make([]float64, c.m*n)
		ys := make([]int64, c.m)
		for i := range ys {
			ys[i] = c.label(i)
			for j := 0; j < n; j++ {
				X[i*n+j] = c.x(i) * float64(j+1)
			}
		}
		md, err := Fit(sp, X, c.m, n, ys, nil, Options{Alpha: 1e-3, Intercept: true, Tol: 1e-6, MaxIter: 200})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		zero := floats.Norm(md.Coef.RawMatrix().Data, 2) == 0
		name := fmt.Sprintf("%s: %d iterations, relative gradient %.3g", c.name, md.Result.Iterations, md.Result.RelGrad)
		if !md.Result.Converged {
			t.Errorf("%s: not converged", name)
		}
		if zero != c.atZero {
			t.Errorf("%s: W = 0 is %v, want %v", name, zero, c.atZero)
		}
	}
}
