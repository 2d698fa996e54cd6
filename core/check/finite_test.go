package check

import (
	"fmt"
	"math"
	"testing"
)

// FiniteMagnitude answers as Finite and then Magnitude do, message for message, on clean inputs,
// on every kind of bad entry at every position of a row (the four partial sums and the
// remainder), and on rows that overflow only in their total.
func TestFiniteMagnitudeMatchesTheTwoChecks(t *testing.T) {
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300}
	for _, cols := range []int{1, 3, 4, 5, 9} {
		for _, rows := range []int{1, 2, 5000} { // 5000: more than one chunk of rows per thread
			base := make([]float64, rows*cols)
			for i := range base {
				base[i] = float64(i%7) - 3
			}
			cases := map[string][]float64{"clean": base}
			for _, v := range bad {
				for j := 0; j < cols; j++ {
					x := append([]float64(nil), base...)
					x[(rows-1)*cols+j] = v
					cases["bad "+fmt.Sprint(v)+" at column "+fmt.Sprint(float64(j))] = x
				}
			}
			spread := append([]float64(nil), base...)
			for j := 0; j < cols; j++ {
				spread[j] = 1e154 * math.Sqrt(2/float64(cols)) // each square finite, their sum 2e308
			}
			cases["total overflows"] = spread
			for name, x := range cases {
				want := Finite("X", x, cols)
				if want == nil {
					want = Magnitude("X", x, cols)
				}
				got := FiniteMagnitude("X", x, cols)
				if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
					t.Errorf("cols %d rows %d %s: %v, want %v", cols, rows, name, got, want)
				}
			}
		}
	}
}
