package ridge

import (
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
)

// TestFitNeverReturnsNonFiniteParameters covers fits that returned NaN coefficients and constant
// predictions without a word: CG asked for a tolerance far below machine precision (the residual
// underflowed and a 0/0 step followed), and a poly kernel whose values overflow.
func TestFitNeverReturnsNonFiniteParameters(t *testing.T) {
	sp, err := space.NewMultilabel(3)
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 60, 5, 1)
	t.Run("cg tol 1e-300", func(t *testing.T) {
		md, err := Fit(sp, X, 60, 5, ys, nil, Options{Alpha: 1, Intercept: true, Solver: CG, Tol: 1e-300, MaxIter: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range md.Coef.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("coefficient %d is %v", i, v)
			}
		}
		if md.Result.Converged || !(md.Result.RelGrad < 1e-8) {
			t.Fatalf("want an unconverged fit at machine precision, got %+v", md.Result)
		}
	})
	t.Run("poly coef0 1e300", func(t *testing.T) {
		kern := kernel.Kernel{Kind: kernel.Poly, Gamma: 0.2, Degree: 3, Coef0: 1e300}
		_, err := Fit(sp, X, 60, 5, ys, nil, Options{Alpha: 1, Kernel: kern, Intercept: true, Tol: 1e-8, MaxIter: 100})
		if err == nil || !strings.Contains(err.Error(), "coef0") {
			t.Fatalf("want an overflow error naming coef0, got %v", err)
		}
	})
}

// TestKernelCGRefusesAnIndefiniteKernel: on a negative-definite precomputed kernel the objective
// is unbounded below; CG stopped after one step and a model was returned.
func TestKernelCGRefusesAnIndefiniteKernel(t *testing.T) {
	sp, err := space.NewMultilabel(3)
	if err != nil {
		t.Fatal(err)
	}
	m, n := 40, 5
	X, ys := synthetic(t, sp, m, n, 2)
	K := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += X[i*n+k] * X[j*n+k]
			}
			K[i*m+j] = -s
		}
	}
	_, err = Fit(sp, K, m, m, ys, nil, Options{Alpha: 1, Kernel: kernel.Kernel{Kind: kernel.Precomputed}, Tol: 1e-8, MaxIter: 100})
	if err == nil || !strings.Contains(err.Error(), "positive semi-definite") {
		t.Fatalf("want a not-PSD error, got %v", err)
	}
}

// TestDecisionRefusesOverflowingScores: inputs far larger than the training inputs overflow the
// scores, which decoded into an arbitrary structure.
func TestDecisionRefusesOverflowingScores(t *testing.T) {
	sp, err := space.NewMultilabel(3)
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 60, 5, 3)
	md, err := Fit(sp, X, 60, 5, ys, nil, Options{Alpha: 1, Intercept: true, Tol: 1e-8, MaxIter: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range md.Coef.RawMatrix().Data {
		md.Coef.RawMatrix().Data[i] = 2 // so that 1e308 overflows whatever the fit gave
	}
	q := []float64{1, 2, 3, 4, 5, 1e308, 1e308, 1e308, 1e308, 1e308}
	err = md.Predict(q, 2, 5, make([]int64, 2*sp.Width()), nil)
	if err == nil || !strings.Contains(err.Error(), "X row 1") {
		t.Fatalf("want an overflow error naming X row 1, got %v", err)
	}
}
