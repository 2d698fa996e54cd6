package check

import (
	"fmt"
	"math"
)

// ToUnitBinade returns a copy of x multiplied by 2⁻ᵉ and e, the binary exponent of top (math.Frexp),
// so that an entry equal to top lands in [½, 1). A product with a power of two is exact unless it
// leaves float64's normal range, so a scale-free quantity (sample weights, whose common factor a
// fit's minimiser ignores) moves into a range where the products made of it neither underflow nor
// overflow, and the result does not change. top must be positive and finite; otherwise x itself
// and 0 are returned.
func ToUnitBinade(x []float64, top float64) ([]float64, int) {
	if !(top > 0) || math.IsInf(top, 0) {
		return x, 0
	}
	_, e := math.Frexp(top)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Ldexp(v, -e)
	}
	return out, e
}

// MaxWeightExponent bounds the exponent e of weights taken in units of 2^e (ToUnitBinade's, which
// the parts of a distributed fit share): beyond it every sum of finite weights is 0 or +Inf in
// those units.
const MaxWeightExponent = 2200

// WeightExponent returns an error naming name unless e is in [−MaxWeightExponent, MaxWeightExponent].
func WeightExponent(name string, e int) error {
	if e < -MaxWeightExponent || e > MaxWeightExponent {
		return fmt.Errorf("%s must be in [%d, %d], got %d", name, -MaxWeightExponent, MaxWeightExponent, e)
	}
	return nil
}
