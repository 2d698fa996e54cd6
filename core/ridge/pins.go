package ridge

import (
	"math"

	"github.com/combpred/combpred/core/space"
)

// A pin (space.Pin) is a coordinate a of ψ that the reference measure holds constant at one end
// of its range (Dir = +1: the top, −1: the bottom): a label on, or off, in every training
// structure under the empirical measure, a node that every training subtree holds, each pair of
// the one ranking a training set holds. J does not depend on the scores along such a coordinate
// (u_a = 0 up to rounding), so a decoder of u breaks the tie however its loops happen to: a label
// on in every training target was never predicted, and a single distinct training structure came
// back as another one. Predict decodes u with u_a replaced by Dir·M, M larger than anything the
// other coordinates can trade (ψ ∈ [−1, 1]: 1 + 2Σ_b |u_b|), which keeps the structure in the
// measure's support along a, where predict_marginals puts it; max-marginal margins range over
// that support too (space.MaxMarginalMargins with pins).

// pinVariance is how small a coordinate's variance under the reference measure must be, relative
// to the largest, for the coordinate to count as constant (the moments of identical values are
// exact in practice; a weighted mean may round).
const pinVariance = 1e-12

// pins returns the coordinates the model's reference measure holds at an end of their range, none
// under the uniform measure. The ends come from decoding ±e_a, so a value strictly inside the range
// (an absent arc of a directed cycle, ψ_a = 0 between −1 and +1) pins nothing.
func (md *Model) pins() []space.Pin {
	ref := md.ref
	if ref == nil {
		return nil
	}
	// Decoding ±e_a costs two decodes per constant coordinate (all 66 pairs of a single training
	// ranking of 12 labels: 132 exact decodes), once per reference rather than per prediction.
	ref.pinOnce.Do(func() { ref.pinned = pinsOf(md.Space, ref) })
	return ref.pinned
}

func pinsOf(sp space.Space, ref *reference) []space.Pin {
	d := sp.Dim()
	var pins []space.Pin
	u, y, psi := make([]float64, d), make([]int64, sp.Width()), make([]float64, d)
	end := func(a int, sign float64) float64 {
		clear(u)
		u[a] = sign
		sp.Decode(u, y)
		sp.Embed(y, psi)
		return psi[a]
	}
	for _, a := range constantCoords(ref.cov, d) {
		hi, lo := end(a, 1), end(a, -1)
		if !(hi > lo) {
			continue // the space itself holds it (a subtree's root)
		}
		switch p := ref.mean[a]; {
		case math.Abs(p-hi) <= 1e-9:
			pins = append(pins, space.Pin{A: a, Dir: 1})
		case math.Abs(p-lo) <= 1e-9:
			pins = append(pins, space.Pin{A: a, Dir: -1})
		}
	}
	return pins
}

// constantCoords returns the coordinates a covariance (d×d) holds constant: those whose variance
// is at most pinVariance of the largest.
func constantCoords(cov interface{ At(i, j int) float64 }, d int) []int {
	var top float64
	for a := 0; a < d; a++ {
		top = math.Max(top, cov.At(a, a))
	}
	var out []int
	for a := 0; a < d; a++ {
		if cov.At(a, a) <= pinVariance*top {
			out = append(out, a)
		}
	}
	return out
}

// pinScores sets the pinned coordinates of each row of U (rows of d scores) to dir·M.
func pinScores(U []float64, d int, pins []space.Pin) {
	if len(pins) == 0 || d == 0 {
		return
	}
	for lo := 0; lo+d <= len(U); lo += d {
		row := U[lo : lo+d]
		var sum float64
		for _, v := range row {
			sum += math.Abs(v)
		}
		m := math.Min(1+2*sum, 1e300) // finite, whatever the scores
		for _, p := range pins {
			row[p.A] = p.Dir * m
		}
	}
}
