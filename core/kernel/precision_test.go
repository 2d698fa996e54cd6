package kernel

import (
	"math"
	"strings"
	"testing"
)

func TestPrecisionWarning(t *testing.T) {
	for _, tc := range []struct {
		k     Kernel
		norm2 float64
		warns bool
	}{
		{Kernel{Kind: RBF, Gamma: 0.5}, 3 * 1e14, true}, // X + 1e7 in 3 features
		{Kernel{Kind: RBF, Gamma: 0.5}, 3 * 1e10, true}, // X + 1e5: scores off by 2e-5
		{Kernel{Kind: RBF, Gamma: 0.5}, 3 * 1e8, false}, // X + 1e4
		{Kernel{Kind: RBF, Gamma: 1e20}, 3, true},       // k(x, x) rounded to 0
		{Kernel{Kind: RBF, Gamma: 0.01}, 100, false},    // standardised, 100 features
		{Kernel{Kind: Poly, Gamma: 1e20, Degree: 3}, 1e300, false},
		{Kernel{Kind: Linear}, math.Inf(1), false},
		{Kernel{Kind: RBF, Gamma: 0.5}, math.NaN(), false},
	} {
		got := tc.k.PrecisionWarning(tc.norm2)
		if (got != "") != tc.warns || (tc.warns && !strings.Contains(got, "centre X")) {
			t.Errorf("%v gamma %g, norm2 %g: warning %q, want one: %v", tc.k.Kind, tc.k.Gamma, tc.norm2, got, tc.warns)
		}
	}
}
