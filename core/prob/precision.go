package prob

import (
	"errors"
	"math"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/space"
)

// exactScoreLimit is the largest ‖u‖₁ for which a prediction reports exact marginals of a space
// without space.ScaleExactPartition, and log p(y | x) on any space. Both are differences of
// numbers as large as ‖u‖₁ (log-domain sums, or ⟨u, ψ(y)⟩ and log Z(u)), so their rounding grows
// with it: at ‖u‖₁ = 2³⁶ (6.9·10¹⁰) by about 2³⁶·2⁻⁵² ≈ 1.5·10⁻⁵, and at 10¹³ the marginals of
// Permutations(5) were off by 0.06 and log p(mode) was +0.03. Scores that large come from inputs
// far outside the scale of the training data, where the distribution is a point mass anyway.
const exactScoreLimit = 1 << 36

// rowAbove returns the first row of U (d columns) whose ‖u‖₁ exceeds limit and that norm, or
// −1 when there is none.
func rowAbove(U []float64, d int, limit float64) (int, float64) {
	for i := 0; i*d < len(U); i++ {
		if s := l1Norm(U[i*d : (i+1)*d]); s > limit {
			return i, s
		}
	}
	return -1, 0
}

// l1Norm returns ‖u‖₁.
func l1Norm(u []float64) float64 {
	var s float64
	for _, v := range u {
		s += math.Abs(v)
	}
	return s
}

// checkScoreScale names the first row of U (d columns; its first row is row first of X) whose ‖u‖₁
// exceeds exactScoreLimit; what says which result would lose its precision.
func checkScoreScale(U []float64, d, first int, what string) error {
	if i, s := rowAbove(U, d, exactScoreLimit); i >= 0 {
		return check.RowErrorf(first+i, "X row %d: its scores have ‖u‖₁ = %.3g, above %.3g, where %s loses its precision in float64 "+
			"(an error of about ‖u‖₁·2⁻⁵²); either X holds values far outside the scale the model was fitted on (scale X as "+
			"it was scaled for fit) or the coefficients are that large (an Adam fit that did not settle: lower learning_rate)",
			s, float64(exactScoreLimit), what)
	}
	return nil
}

// scoreRangeLimit is the largest ‖u‖₁ at which inference on a space of dimension d (log Z by any
// method, marginals, samples, and the fit's marginals) is computed: every ψ_j lies in [−1, 1], so
// a structure's score is at most ‖u‖₁, and the programmes, the chains' score differences and the
// FPRAS's products add at most (d + 1)² such numbers; beyond the limit they could overflow, and
// the decoders the chains start from clamp single scores at MaxFloat64/(4n²) for the n items of a
// ranking or a cycle (16(d + 1)² exceeds 4n² for every such space). Past about 10³⁰⁶ / (d + 1)²
// exact log Z of Permutations and DirectedCycles came out below the best structure's score, exact
// log Z of Cliques was NaN, and chains stayed at a structure far from the mode, all without an
// error. (Some closed forms, Multilabel's, would still be exact there; one limit for every space
// keeps the rule simple, at scores no model fitted on scaled data produces.)
func scoreRangeLimit(d int) float64 {
	return math.MaxFloat64 / (16 * float64(d+1) * float64(d+1))
}

// errScoresOutOfRange is wrapped by checkScores' refusal of a score vector beyond scoreRangeLimit.
var errScoresOutOfRange = errors.New("is beyond the range where sums of scores stay finite")

// checkScoreRange names the first row of U (d columns; its first row is row first of X) whose ‖u‖₁
// exceeds scoreRangeLimit(d),
// where what would be computed from sums that can overflow. (checkScores refuses such a vector
// too, without the row: this check runs first where rows are the user's inputs.)
func checkScoreRange(U []float64, d, first int, what string) error {
	limit := scoreRangeLimit(d)
	if i, s := rowAbove(U, d, limit); i >= 0 {
		return check.RowErrorf(first+i, "X row %d: its scores have ‖u‖₁ = %.3g, above %.3g, where %s would add numbers that overflow "+
			"float64; X holds values far outside the scale the model was fitted on (scale X as it was scaled for fit), "+
			"or the model's coefficients are that large", s, limit, what)
	}
	return nil
}

// scaleExact reports whether exact inference on sp keeps its marginals accurate at any scale of
// the scores: a closed form marked space.ScaleExactPartition. The brute force is not: its sums are
// relative to the best structure's score, but each structure's score ⟨u, ψ(y)⟩ is itself a sum,
// already rounded by about ‖u‖₁·2⁻⁵² (Cliques(3)'s marginals were 0.4 off at ‖u‖₁ = 2.7·10¹⁶).
func scaleExact(sp space.Space) bool {
	part, ok := space.PartitionOf(sp)
	if !ok {
		return false
	}
	_, exact := part.(space.ScaleExactPartition)
	return exact
}
