package logmath

import (
	"math"
	"testing"
)

func TestAgainstDirectFormulas(t *testing.T) {
	for _, x := range []float64{-50, -30, -1, 0, 0.5, 20, 35, 37, 60} {
		if got, want := Log1pExp(x), math.Log1p(math.Exp(x)); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("Log1pExp(%v) = %v, want %v", x, got, want)
		}
		if got, want := Logistic(x), 1/(1+math.Exp(-x)); math.Abs(got-want) > 1e-15 {
			t.Errorf("Logistic(%v) = %v, want %v", x, got, want)
		}
	}
	if got := Log1pExp(1000); got != 1000 {
		t.Errorf("Log1pExp(1000) = %v, want 1000 (no overflow)", got)
	}
	if got := SumExp([]float64{1000, 1000}); math.Abs(got-(1000+math.Ln2)) > 1e-12 {
		t.Errorf("SumExp overflowed: %v", got)
	}
	if got, want := SumExp([]float64{0.1, -2, 3}), math.Log(math.Exp(0.1)+math.Exp(-2)+math.Exp(3)); math.Abs(got-want) > 1e-14 {
		t.Errorf("SumExp = %v, want %v", got, want)
	}
	if !math.IsInf(SumExp(nil), -1) {
		t.Error("SumExp(nil) is not −Inf")
	}
}
