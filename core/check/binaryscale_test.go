package check

import (
	"math"
	"testing"
)

func TestToUnitBinade(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    []float64
		top  float64
		e    int
		same bool // x returned itself: top is not positive and finite
	}{
		{"ones", []float64{1, 0.5, 0}, 1, 1, false},
		{"tiny", []float64{1e-310, 3e-310}, 3e-310, -1028, false},
		{"huge", []float64{1e308, 2}, 1e308, 1024, false},
		{"power of two", []float64{0.5, 0.25}, 0.5, 0, false},
		{"zero top", []float64{0, 0}, 0, 0, true},
		{"infinite top", []float64{math.Inf(1), 1}, math.Inf(1), 0, true},
		{"NaN top", []float64{math.NaN()}, math.NaN(), 0, true},
	} {
		got, e := ToUnitBinade(tc.x, tc.top)
		if e != tc.e {
			t.Errorf("%s: exponent %d, want %d", tc.name, e, tc.e)
		}
		if tc.same {
			if &got[0] != &tc.x[0] {
				t.Errorf("%s: a copy, want x itself", tc.name)
			}
			continue
		}
		if &got[0] == &tc.x[0] {
			t.Errorf("%s: x modified in place", tc.name)
		}
		for i, v := range got {
			if math.Ldexp(v, e) != tc.x[i] { // exact: scaling back gives the entry
				t.Errorf("%s: entry %d scaled to %g, not exactly x·2^-%d", tc.name, i, v, e)
			}
		}
		if m := MaxAbs(got); m < 0.5 || m >= 1 {
			t.Errorf("%s: largest scaled entry %g outside [½, 1)", tc.name, m)
		}
	}
}
