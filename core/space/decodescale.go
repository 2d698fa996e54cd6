package space

import (
	"math"

	"github.com/combpred/combpred/core/cancel"
)

// Scores whose largest magnitude lies outside [2^-scaleExp, 2^scaleExp] are rescaled before
// decoding. Decoders add up to d scores and compare sums: near 1e307 the sums overflow to ±Inf
// and every structure ties, so an exact decoder returned a structure that is not optimal; near
// the smallest normals the sums lose their digits.
const scaleExp = 256

// decodeScaled decodes u into y like s.Decode, first multiplying u by a power of two that brings
// its largest magnitude into the safe range when it lies outside it: near 1 for a row of tiny
// scores, to the top of the range for a row of huge ones, which keeps the most of its small
// entries' digits. argmax_y ⟨u, ψ(y)⟩ is invariant under positive scaling, so the structure is
// that of u itself wherever the scaled entries stay normal. Beside a score of 1e308 an entry
// below about 1e-92 falls under 2⁻¹⁰⁷⁴ even so (a row spanning 10⁶⁰⁸ was decoded with its small
// entries flushed to zero, probe EV): it keeps its sign as the smallest subnormal, so a 0/1
// coordinate's choice stays right, while such entries tie among themselves.
// scratch has len(u) values; it is used only when u is rescaled. A space whose decoding of one row
// can run long (stoppableDecoder) ends it early once stop is set, leaving some structure in y.
func decodeScaled(s Space, u []float64, y []int64, scratch []float64, stop *cancel.Flag) {
	DecodeUntil(s, scaledScores(u, scratch), y, stop)
}

// DecodeUntil decodes u into y like s.Decode, except that a space whose decoding of one row runs
// a local search that can take seconds (the cycle spaces beyond their exact range) ends it after
// the pass under way once stop is set (nil: never), leaving in y a structure it had not finished
// improving. Callers check stop afterwards.
func DecodeUntil(s Space, u []float64, y []int64, stop *cancel.Flag) {
	if sd, ok := s.(stoppableDecoder); ok {
		sd.decodeStop(u, y, stop)
		return
	}
	s.Decode(u, y)
}

// stoppableDecoder is a space whose Decode of one row runs a local search that can take seconds
// (the cycle spaces beyond their exact range): decodeStop is Decode, its search ended after the
// pass under way once stop is set (nil: never), so that a cancelled query stops within a pass.
type stoppableDecoder interface {
	decodeStop(u []float64, y []int64, stop *cancel.Flag)
}

// scaledScores is u, or u rescaled as decodeScaled describes into scratch (len(u) values) when
// its largest magnitude lies outside the safe range.
func scaledScores(u, scratch []float64) []float64 {
	// a comparison per entry, not math.Max, whose NaN and signed-zero cases cost 5 ns an entry:
	// twice what decoding a multi-label row takes (probe FS)
	var top float64
	nan := false
	for _, v := range u {
		if a := math.Abs(v); a > top {
			top = a
		} else if a != a {
			nan = true
		}
	}
	if top == 0 || math.IsInf(top, 0) || nan {
		return u
	}
	_, exp := math.Frexp(top)
	if exp >= -scaleExp && exp <= scaleExp {
		return u
	}
	shift := -exp // a tiny row: scaled up, no entry underflows
	if exp > scaleExp {
		shift = scaleExp - exp
	}
	for i, v := range u {
		x := math.Ldexp(v, shift)
		if x == 0 && v != 0 {
			x = math.Copysign(math.SmallestNonzeroFloat64, v)
		}
		scratch[i] = x
	}
	return scratch
}
