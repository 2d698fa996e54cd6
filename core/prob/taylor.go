package prob

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
)

// TaylorMaxScore is the validity condition of the Taylor approximation: every |⟨u, ψ(y)⟩| ≤ 1
// (thesis §6.4: "constrain the scoring function to lie in [−1, 1]", guaranteed by
// λ ≥ R² ln|Y|).
const TaylorMaxScore = 1.0

// ErrTaylorRange is wrapped by the error Taylor returns, together with its estimate, when some
// |⟨u, ψ(y)⟩| may exceed TaylorMaxScore.
var ErrTaylorRange = errors.New("prob: scores outside the Taylor approximation's range")

// taylorRatio returns log g(a) for g(a) = eᵃ/(1 + a + a²/2): the log of the ratio between eᵃ and
// its second-order Taylor polynomial, increasing in a with g(0) = 1.
func taylorRatio(a float64) float64 { return a - logTaylorPoly(a) }

// logTaylorPoly returns log(1 + a + a²/2) without overflow: beyond |a| = 1e100, where a² would
// overflow from about 1e154 on, it is 2·log|a| − log 2 to within 2/|a|.
func logTaylorPoly(a float64) float64 {
	if math.Abs(a) > 1e100 {
		return 2*logmath.Log(math.Abs(a)) - math.Ln2
	}
	return logmath.Log(1 + a + a*a/2)
}

// Taylor approximates log Z(u) from the counting formulae (thesis §6.4), with the ½ the printed
// derivation loses (docs/errata.md):
//
//	Z ≈ Σ_y (1 + f(y) + f(y)²/2) = |Y| + ⟨u, Ψ⟩ + ½ uᵀCu,
//
// in normalised form, with p = Ψ/|Y| and C = |Y|(S + ppᵀ):
//
//	log Z ≈ log|Y| + log(1 + ⟨u, p⟩ + ½ (uᵀSu + ⟨u, p⟩²)).
//
// The argument of the log is the uniform mean of 1 + a + a²/2 ≥ ½, so the formula is always
// defined.
//
// Bound. With t(a) = 1 + a + a²/2 > 0 and g(a) = eᵃ/t(a),
// Z/Z_T = Σ_y g(f(y)) t(f(y)) / Σ_y t(f(y)) is a t-weighted mean of g(f(y)), and g is increasing
// (g'/g = (a²/2)/t(a) ≥ 0), so for f ∈ [lo, hi]:
//
//	log g(lo) ≤ log Z − log Z_T ≤ log g(hi),
//
// and Bound = max(|log g(lo)|, |log g(hi)|) ≈ max(|lo|, |hi|)³/6 for small scores. lo and hi are
// the exact minimum and maximum scores when the space decodes exactly, bounds otherwise. At the
// thesis' condition max|f| ≤ 1 the bound is at most 1 + log ½ ≈ 0.307 (from a = −1). Taylor
// returns the estimate with Valid set when max(|lo|, |hi|) ≤ TaylorMaxScore, and otherwise the
// estimate and bound together with an error wrapping ErrTaylorRange.
func Taylor(sp space.Space, u []float64) (LogZResult, error) { return taylor(sp, u, nil) }

// taylor is Taylor whose decodes of the score range stop with cancel.ErrCancelled once stop is set.
func taylor(sp space.Space, u []float64, stop *cancel.Flag) (LogZResult, error) {
	if err := checkScores(sp, u); err != nil {
		return LogZResult{}, err
	}
	lo, hi, _, err := scoreRange(sp, u, stop)
	if err != nil {
		return LogZResult{}, err
	}
	res := LogZResult{
		LogZ:   sp.LogCount() + logTaylorMean(sp, u),
		Method: LogZTaylor,
		Bound:  math.Max(math.Abs(taylorRatio(lo)), math.Abs(taylorRatio(hi))),
		Valid:  math.Max(math.Abs(lo), math.Abs(hi)) <= TaylorMaxScore,
	}
	if !res.Valid {
		return res, fmt.Errorf("%w: scores span [%.3g, %.3g], beyond ±%g; |log Z − estimate| ≤ %.3g",
			ErrTaylorRange, lo, hi, TaylorMaxScore, res.Bound)
	}
	return res, nil
}

// logTaylorMean returns log t, t = 1 + ⟨u, p⟩ + ½(uᵀSu + ⟨u, p⟩²) the uniform mean of the Taylor
// polynomial. Scores far outside the approximation's range (|u| of 1e160) overflowed t to +Inf,
// or to NaN as −Inf + Inf, where the estimate is only reported with its bound: the products are
// taken of u/σ, σ = max|u_a|, and t = σ²·(1/σ² + ⟨u', p⟩/σ + ½(u'ᵀSu' + ⟨u', p⟩²)) is summed in
// logs, finite for every finite u (t ≥ ½).
func logTaylorMean(sp space.Space, u []float64) float64 {
	d := sp.Dim()
	var sigma float64
	for _, v := range u {
		sigma = math.Max(sigma, math.Abs(v))
	}
	if sigma <= 1 {
		sigma = 1 // the direct formula: nothing can overflow
	}
	us := make([]float64, d)
	for a, v := range u {
		us[a] = v / sigma
	}
	p := make([]float64, d)
	sp.Mean(p)
	su := make([]float64, d)
	sp.Covariance().MulVec(su, us)
	up := dot(us, p)
	q := math.Max(dot(us, su), 0) // S is positive semi-definite; clip rounding
	if sigma == 1 {
		return logmath.Log(1 + up + (q+up*up)/2)
	}
	second := (q + up*up) / 2
	if second == 0 { // f(y) = 0 on every y: t = 1
		return 0
	}
	// t/σ² = second + up/σ + 1/σ², whose last terms only matter while σ is moderate.
	return 2*logmath.Log(sigma) + logmath.Log(second+up/sigma+1/sigma/sigma)
}
