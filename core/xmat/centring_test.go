package xmat

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestWeightedMeanIgnoresTheWeightsScale: weights multiplied by a power of two give the same mean
// bit for bit, down to subnormal weights (1/Σs overflowed, and the mean was refused) and up to
// weights whose sum overflows; a negative, NaN or infinite weight, or a zero sum, is refused.
func TestWeightedMeanIgnoresTheWeightsScale(t *testing.T) {
	X := Matrix{Dense: mat.NewDense(4, 2, []float64{1, 2, 3, -1, 0.5, 7, 1e3, 4})}
	s := []float64{0.25, 1.75, 0, 2.25} // few digits: exact as subnormals too
	want := WeightedMean(X, s)
	if want == nil {
		t.Fatal("nil mean")
	}
	for _, e := range []int{-1060, -1030, -600, 600, 1022} {
		scaled := make([]float64, len(s))
		for i, w := range s {
			scaled[i] = math.Ldexp(w, e)
		}
		got := WeightedMean(X, scaled)
		if got == nil || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("weights × 2^%d: mean %v, want %v", e, got, want)
		}
	}
	for _, bad := range [][]float64{{1, -1, 1, 1}, {1, math.NaN(), 1, 1}, {1, math.Inf(1), 1, 1}, {0, 0, 0, 0}} {
		if got := WeightedMean(X, bad); got != nil {
			t.Errorf("weights %v: mean %v, want nil", bad, got)
		}
	}
}
