package prob

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/space"
)

// scorer computes f(y) = ⟨u, ψ(y)⟩ with its own scratch space. It is not safe for concurrent use.
type scorer struct {
	sp  space.Space
	u   []float64
	psi []float64
}

func newScorer(sp space.Space, u []float64) *scorer {
	return &scorer{sp: sp, u: u, psi: make([]float64, sp.Dim())}
}

// score returns ⟨u, ψ(y)⟩.
func (s *scorer) score(y []int64) float64 {
	return space.Score(s.sp, s.u, y, s.psi)
}

func dot(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func norm2(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// errScoresNotFinite is wrapped by checkScores' refusal of a non-finite score.
var errScoresNotFinite = errors.New("is not finite")

// checkScores reports why u cannot be a score vector of sp.
func checkScores(sp space.Space, u []float64) error {
	if len(u) != sp.Dim() {
		return fmt.Errorf("prob: the score vector has length %d, the %s space has dimension %d", len(u), sp.Kind(), sp.Dim())
	}
	for j, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("prob: score u[%d] = %v %w", j, v, errScoresNotFinite)
		}
	}
	if s, limit := l1Norm(u), scoreRangeLimit(len(u)); s > limit {
		return fmt.Errorf("prob: a score vector with ‖u‖₁ = %.3g, above %.3g, %w", s, limit, errScoresOutOfRange)
	}
	return nil
}

// scaled returns β·u in a new slice.
func scaled(u []float64, beta float64) []float64 {
	v := make([]float64, len(u))
	for i, x := range u {
		v[i] = beta * x
	}
	return v
}

// pairIndex is the coordinate of the unordered pair a < b among the n(n−1)/2 pairs in
// lexicographic order (0,1), (0,2), …, (0,n−1), (1,2), …, the order of the pair spaces.
func pairIndex(n, a, b int) int { return a*(2*n-a-1)/2 + (b - a - 1) }

// orientedWeights returns the n×n matrix w[a·n+b] = what "a before b" (permutations) or the arc
// a→b (directed cycles) adds to ⟨u, ψ⟩: u_ab for a < b and −u_ba for a > b.
func orientedWeights(n int, u []float64) []float64 {
	w := make([]float64, n*n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			x := u[pairIndex(n, a, b)]
			w[a*n+b], w[b*n+a] = x, -x
		}
	}
	return w
}

// edgeWeights returns the symmetric n×n matrix w[a·n+b] = u_{min(a,b), max(a,b)}, what the edge
// ab adds to ⟨u, ψ⟩ for undirected cycles.
func edgeWeights(n int, u []float64) []float64 {
	w := make([]float64, n*n)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			x := u[pairIndex(n, a, b)]
			w[a*n+b], w[b*n+a] = x, x
		}
	}
	return w
}
