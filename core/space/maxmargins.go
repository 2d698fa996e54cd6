package space

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
)

// Pin holds coordinate A of ψ at the end of its range that Dir points to (+1 the top, −1 the
// bottom): a restriction of the structures a maximisation ranges over (a model's reference
// measure that gives the coordinate one value).
type Pin struct {
	A   int
	Dir float64
}

// MaxMarginalMargins writes, for m score rows us (m × Dim()), the max-marginal margin of every
// coordinate of ψ into out (m × Dim()):
//
//	margin_j(u) = max_{y: ψ_j(y) = hi_j} ⟨u, ψ(y)⟩ − max_{y: ψ_j(y) = lo_j} ⟨u, ψ(y)⟩,
//
// hi_j and lo_j the largest and smallest values of ψ_j over Y: how much the best structure with
// coordinate j on (a label in, a node in the subtree, a before b, the arc a→b taken) beats the best
// with it off. Positive exactly when the decoded structure has it on (up to ties), it is a
// confidence per coordinate for ranking metrics (AU(PRC), ranking loss), derived from the same
// decoder as the prediction. A coordinate constant over Y gets +Inf when its value is positive and
// −Inf otherwise (the root of a taxonomy is always in).
//
// With pins (coordinates that some structure holds at the ends the pins name), the structures
// are those that hold every pinned coordinate at its end, hi_j and lo_j the extremes of ψ_j
// among them, and u's pinned entries are ignored: a pinned coordinate gets ±Inf, as does any
// coordinate those structures hold at one value.
//
// Each side is one exact decode of u (scaled to ‖u‖∞ = 1) with coordinate j pushed by ±M, M = 2‖u‖₁ + 1: every space's
// ψ has integer coordinates in [−1, 1], so moving ψ_j changes M·ψ_j by at least M, more than
// ⟨u, ψ⟩ can change (at most 2‖u‖₁), and the pushed decoder returns the best structure among those
// with ψ_j at its extreme. Pinned coordinates are pushed towards their ends by more than j and
// the rest can trade, so that every decode holds them. That costs 2·Dim() decodes per row; it needs an exact decoder
// (Guarantee() = 0) and refuses approximate ones. It checks stop before every row and coordinate.
// Spaces with a dynamic programme for all margins at once (labels, classes, taxonomy paths and
// subtrees; DAG paths at the cost of one decode) take that instead, pins as constraints.
func MaxMarginalMargins(s Space, us []float64, m int, pins []Pin, out []float64, stop *cancel.Flag) error {
	dp, _ := s.(maxMarginer)
	return maxMarginalMargins(s, dp, us, m, pins, out, stop)
}

// maxMarginalMargins is MaxMarginalMargins by dp's programme, or by decoding when dp is nil.
func maxMarginalMargins(s Space, dp maxMarginer, us []float64, m int, pins []Pin, out []float64, stop *cancel.Flag) error {
	if g := s.Guarantee(); g != 0 {
		instead := "use predict_marginals"
		if _, modes := s.(interface{ setMode(DecoderMode) }); modes {
			// the one quantity asked for is there at a size that auto decodes approximately (probe DS)
			instead += `, or build the space with decoder="exact" (slower, up to its exact limit)`
		}
		return fmt.Errorf("max-marginal margins need an exact decoder; the %s space of dimension %d decodes approximately "+
			"(z-approximation factor %.3g): %s", s.Kind(), s.Dim(), g, instead)
	}
	d, w := s.Dim(), s.Width()
	pinned := make([]bool, d)
	dir := make([]int8, d)
	for _, p := range pins {
		pinned[p.A] = true
		dir[p.A] = int8(math.Copysign(1, p.Dir))
	}
	parallel.For(m, 1, func(lo, hi int) {
		var sc marginScratch
		pushed := make([]float64, d)
		scratch := make([]float64, d)
		psiHi, psiLo := make([]float64, d), make([]float64, d)
		yHi, yLo := make([]int64, w), make([]int64, w)
		for i := lo; i < hi && !stop.Stopped(); i++ {
			u := us[i*d : (i+1)*d]
			// Decoding is invariant to positive scaling: decode u/‖u‖∞, whose push 2‖u‖₁/‖u‖∞ + 1 ≤ 2d + 1
			// neither overflows for huge rows nor swamps the scores of tiny ones.
			var top float64
			for c, v := range u {
				if !pinned[c] {
					top = math.Max(top, math.Abs(v))
				}
			}
			if top == 0 {
				top = 1
			}
			var l1 float64 // of the scaled row: on u itself it overflowed for rows of ±1e308
			for c, v := range u {
				if pinned[c] {
					pushed[c] = 0
					continue
				}
				pushed[c] = v / top
				l1 += math.Abs(pushed[c])
			}
			row := out[i*d : (i+1)*d]
			if dp != nil {
				dp.maxMargins(pushed, dir, row, &sc)
				for j := range row {
					row[j] *= top
				}
				continue
			}
			push := 2*l1 + 1
			held := 2*(l1+push) + 1 // what a pinned coordinate is pushed by: more than j and the rest can trade
			for _, p := range pins {
				pushed[p.A] = p.Dir * held
			}
			for j := 0; j < d && !stop.Stopped(); j++ {
				uj := pushed[j]
				pushed[j] = uj + push
				decodeScaled(s, pushed, yHi, scratch, stop)
				pushed[j] = uj - push
				decodeScaled(s, pushed, yLo, scratch, stop)
				pushed[j] = uj
				s.Embed(yHi, psiHi)
				s.Embed(yLo, psiLo)
				row[j] = top * margin(pushed, psiHi, psiLo, j, pinned)
			}
		}
	})
	return stop.Err()
}

// margin is the margin of coordinate j between the best structures with ψ_j at its top (psiHi)
// and at its bottom (psiLo), in the units of the scores u without its pinned entries: ±Inf when
// ψ_j is the same in both (constant over the structures that hold the pins).
func margin(u, psiHi, psiLo []float64, j int, pinned []bool) float64 {
	if psiHi[j] == psiLo[j] {
		if psiHi[j] > 0 {
			return math.Inf(1)
		}
		return math.Inf(-1)
	}
	var f float64
	for c, v := range u {
		if !pinned[c] {
			f += v * (psiHi[c] - psiLo[c])
		}
	}
	return f
}
