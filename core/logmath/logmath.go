// Package logmath holds the log-domain arithmetic that keeps counts and probabilities of
// exponentially large output spaces finite.
package logmath

import "math"

// Log returns the natural logarithm of x, as math.Log does, but correct for subnormal x: on amd64
// (and s390x) math.Log runs an assembly routine that does not normalise them, and returns about
// −709.09 for every x below 2⁻¹⁰²² (ln 5e-324 is −744.44; golang/go#56600). Subnormal values
// reach the logarithms of this module from products and ratios of tiny probabilities, and
// from parameters such as a user's delta.
func Log(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p52) - 52*math.Ln2
	}
	return math.Log(x)
}

// Log1pExp returns log(1 + eˣ) without overflow for large x and without loss for very negative x.
func Log1pExp(x float64) float64 {
	switch {
	case x > 36:
		return x + math.Exp(-x)
	case x < -36:
		return math.Exp(x)
	default:
		return math.Log1p(math.Exp(x))
	}
}

// Logistic returns eˣ/(1 + eˣ) = 1/(1 + e⁻ˣ) without overflow.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// SumExp returns log Σ exp(a_i) without overflow; −Inf for an empty slice.
func SumExp(a []float64) float64 {
	m := math.Inf(-1)
	for _, x := range a {
		m = math.Max(m, x)
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, x := range a {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// AddExp returns log(eᵃ + eᵇ) without overflow; −Inf when both are −Inf.
func AddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
