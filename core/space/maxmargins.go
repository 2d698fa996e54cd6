package space

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
)

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
// Each side is one exact decode of u (scaled to ‖u‖∞ = 1) with coordinate j pushed by ±M, M = 2‖u‖₁ + 1: every space's
// ψ has integer coordinates in [−1, 1], so moving ψ_j changes M·ψ_j by at least M, more than
// ⟨u, ψ⟩ can change (at most 2‖u‖₁), and the pushed decoder returns the best structure among those
// with ψ_j at its extreme. That costs 2·Dim() decodes per row; it needs an exact decoder
// (Guarantee() = 0) and refuses approximate ones. It checks stop before every row and coordinate.
func MaxMarginalMargins(s Space, us []float64, m int, out []float64, stop *cancel.Flag) error {
	if g := s.Guarantee(); g != 0 {
		return fmt.Errorf("max-marginal margins need an exact decoder; the %s space of dimension %d decodes approximately "+
			"(z-approximation factor %.3g): use predict_marginals", s.Kind(), s.Dim(), g)
	}
	d, w := s.Dim(), s.Width()
	parallel.For(m, 1, func(lo, hi int) {
		pushed := make([]float64, d)
		scratch := make([]float64, d)
		psi := make([]float64, d)
		yHi, yLo := make([]int64, w), make([]int64, w)
		for i := lo; i < hi && !stop.Stopped(); i++ {
			u := us[i*d : (i+1)*d]
			// Decoding is invariant to positive scaling: decode u/‖u‖∞, whose push 2‖u‖₁/‖u‖∞ + 1 ≤ 2d + 1
			// neither overflows for huge rows nor swamps the scores of tiny ones.
			var top float64
			for _, v := range u {
				top = math.Max(top, math.Abs(v))
			}
			if top == 0 {
				top = 1
			}
			var l1 float64 // of the scaled row: on u itself it overflowed for rows of ±1e308
			for c, v := range u {
				pushed[c] = v / top
				l1 += math.Abs(pushed[c])
			}
			push := 2*l1 + 1
			row := out[i*d : (i+1)*d]
			for j := 0; j < d && !stop.Stopped(); j++ {
				uj := pushed[j]
				pushed[j] = uj + push
				decodeScaled(s, pushed, yHi, scratch)
				pushed[j] = uj - push
				decodeScaled(s, pushed, yLo, scratch)
				pushed[j] = uj
				// The scores of the scaled row, the margin scaled back: on u itself two sums of
				// ±1e308 scores overflowed, and their difference was NaN.
				fHi, hiJ := embedScore(s, pushed, yHi, psi, j)
				fLo, loJ := embedScore(s, pushed, yLo, psi, j)
				switch {
				case hiJ != loJ:
					row[j] = top * (fHi - fLo)
				case hiJ > 0:
					row[j] = math.Inf(1)
				default:
					row[j] = math.Inf(-1)
				}
			}
		}
	})
	return stop.Err()
}

// embedScore returns ⟨u, ψ(y)⟩ and ψ_j(y), with psi as scratch.
func embedScore(s Space, u []float64, y []int64, psi []float64, j int) (f, psiJ float64) {
	s.Embed(y, psi)
	for c, v := range psi {
		f += u[c] * v
	}
	return f, psi[j]
}
