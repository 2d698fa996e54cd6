package ridge

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRecycledCopiesChangeNothing: a linear CG fit whose copies of X (centred, grouped) come from
// buffers a previous user left full of NaN gives the model of a fit on fresh memory, bit for bit:
// every entry it reads, the grouped copy's padding included, is written first.
func TestRecycledCopiesChangeNothing(t *testing.T) {
	const m, n, d = 300, 10, 3 // 8 label sets: the grouped form
	sp, X, ys := largeMultilabel(m, n, d, 4)
	opt := baseOptions()
	opt.Solver = CG
	fit := func() *mat.Dense {
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		return md.Coef
	}
	want := fit()
	for range 4 {
		b := make([]float64, 1<<16)
		for i := range b {
			b[i] = math.NaN()
		}
		releaseFloats(b)
	}
	got := fit()
	if !mat.Equal(got, want) {
		t.Errorf("coefficients after recycled buffers differ: %v vs %v", mat.Formatted(got), mat.Formatted(want))
	}
}
