package prob

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
)

// psiNorm returns R = max_y ‖ψ(y)‖, the constant of the thesis' bound |⟨u, ψ(y)⟩| ≤ R‖u‖: the
// space's own closed form (space.NormBounded), else by enumeration when the space is small.
func psiNorm(sp space.Space) (float64, error) {
	if nb, ok := sp.(space.NormBounded); ok {
		return nb.MaxNorm(), nil
	}
	var r2 float64
	psi := make([]float64, sp.Dim())
	err := sp.Enumerate(func(y []int64) bool {
		sp.Embed(y, psi)
		r2 = math.Max(r2, dot(psi, psi))
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("prob: no bound on ‖ψ‖ is known for the %s space and it is too large to enumerate", sp.Kind())
	}
	return math.Sqrt(r2), nil
}

// scoreMax returns an upper bound on max_y ⟨u, ψ(y)⟩, with exact = true when it is the maximum
// itself (the space decodes exactly), attained by the structure written into y (length Width()).
// Otherwise y is the decoder's structure and the bound is the smaller of R‖u‖ and a bound
// particular to the space. A set stop ends a long decode early (space.DecodeUntil) with
// cancel.ErrCancelled.
func scoreMax(sp space.Space, u []float64, y []int64, stop *cancel.Flag) (hi float64, exact bool, err error) {
	space.DecodeUntil(sp, u, y, stop)
	if err := stop.Err(); err != nil {
		return 0, false, err
	}
	f := newScorer(sp, u).score(y)
	if sp.Guarantee() == 0 {
		return f, true, nil
	}
	r, err := psiNorm(sp)
	if err != nil {
		return 0, false, err
	}
	hi = r * norm2(u)
	topSum := func(vals []float64, k int) float64 {
		slices.Sort(vals)
		var s float64
		for i := len(vals) - 1; i >= 0 && i >= len(vals)-k; i-- {
			s += math.Max(vals[i], 0)
		}
		return s
	}
	if sb, ok := sp.(space.SupportBounded); ok {
		k, signed := sb.ActiveBound()
		vals := make([]float64, len(u))
		for j, x := range u {
			vals[j] = math.Max(x, 0)
			if signed {
				vals[j] = math.Abs(x)
			}
		}
		hi = math.Min(hi, topSum(vals, k))
	}
	return math.Max(hi, f), false, nil
}

// scoreRange returns lo ≤ min_y ⟨u, ψ(y)⟩ and hi ≥ max_y ⟨u, ψ(y)⟩, exact when both are, or
// cancel.ErrCancelled once stop is set (scoreMax).
func scoreRange(sp space.Space, u []float64, stop *cancel.Flag) (lo, hi float64, exact bool, err error) {
	y := make([]int64, sp.Width())
	hi, e1, err := scoreMax(sp, u, y, stop)
	if err != nil {
		return 0, 0, false, err
	}
	neg := scaled(u, -1)
	nlo, e2, err := scoreMax(sp, neg, y, stop)
	if err != nil {
		return 0, 0, false, err
	}
	return -nlo, hi, e1 && e2, nil
}
