package space

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("tournaments", func(p []int64) (Space, error) { return newFromOne("tournaments", p, NewTournaments) })
}

// Tournaments is the space of partial tournaments on n items: every unordered pair u < v is
// independently oriented u→v (+1), v→u (−1) or left open (0). A structure is a row in {−1, 0, 1}
// of length d = n(n−1)/2 over the pairs in lexicographic order (0,1), (0,2), …, (0,n−1), (1,2), …,
// (n−2,n−1); ψ is that row. The thesis uses ordered pairs with ψ_vu = −ψ_uv; the unordered form
// carries the same information at half the dimension.
//
// |Y| = 3^d, p = 0, and since the pairs are independent, centred and uniform on {−1, 0, 1},
// S = (2/3) I. In the thesis' ordered-pair counts this is C̃_(uv),(uv) = 2·3^{η−1},
// C̃_(uv),(vu) = −2·3^{η−1} and C̃ = 0 for two different pairs; the thesis' ±2·3^{η−2} entries for
// pairs sharing one endpoint are wrong. Covariance products cost O(d) time and O(1) memory.
// Decoding is exact and separates over the pairs: the sign of each score.
type Tournaments struct{ n, d int }

// NewTournaments returns the space of partial tournaments on n items, n ≥ 2.
func NewTournaments(n int) (*Tournaments, error) {
	if n < 2 {
		return nil, fmt.Errorf("space: tournaments needs n_items ≥ 2, got %d", n)
	}
	if err := checkSize("tournaments", "n_items", int64(n), pairDim(n), pairDim(n)); err != nil {
		return nil, err
	}
	return &Tournaments{n: n, d: n * (n - 1) / 2}, nil
}

// Kind returns "tournaments".
func (s *Tournaments) Kind() string { return "tournaments" }

// Params returns (n).
func (s *Tournaments) Params() []int64 { return []int64{int64(s.n)} }

// Dim returns d = n(n−1)/2.
func (s *Tournaments) Dim() int { return s.d }

// Width returns d: a structure is one value per pair.
func (s *Tournaments) Width() int { return s.d }

// LogCount returns d log 3.
func (s *Tournaments) LogCount() float64 { return float64(s.d) * logmath.Log(3) }

// Guarantee returns 0: Decode is exact.
func (s *Tournaments) Guarantee() float64 { return 0 }

// Mean writes zeros: each pair is +1 and −1 equally often.
func (s *Tournaments) Mean(p []float64) { clear(p) }

// Covariance returns (2/3) I.
func (s *Tournaments) Covariance() Operator { return scaledIdentityOp{d: s.d, c: 2.0 / 3} }

// Validate checks that y has one value in {−1, 0, 1} per pair.
func (s *Tournaments) Validate(y []int64) error {
	if len(y) != s.d {
		return fmt.Errorf("a partial tournament on %d items has %d pair entries, got %d", s.n, s.d, len(y))
	}
	for e, v := range y {
		if v < -1 || v > 1 {
			a, b := pairAt(s.n, e)
			return fmt.Errorf("value %d at pair (%d,%d), want −1, 0 or 1", v, a, b)
		}
	}
	return nil
}

// Embed writes the row itself.
func (s *Tournaments) Embed(y []int64, psi []float64) {
	for e, v := range y {
		psi[e] = float64(v)
	}
}

// Sample draws every pair uniformly from {−1, 0, 1}.
func (s *Tournaments) Sample(r *rand.Rand, y []int64) {
	for e := range y {
		y[e] = int64(r.IntN(3)) - 1
	}
}

// Decode writes the sign of each pair's score (0 for a zero score).
func (s *Tournaments) Decode(u []float64, y []int64) {
	for e, x := range u {
		switch {
		case x > 0:
			y[e] = 1
		case x < 0:
			y[e] = -1
		default:
			y[e] = 0
		}
	}
}

// Enumerate yields the 3^d tournaments in lexicographic order of their rows (−1 < 0 < 1).
func (s *Tournaments) Enumerate(yield func(y []int64) bool) error {
	if s.LogCount() > logmath.Log(MaxEnumerate)+1e-9 {
		return ErrTooLarge
	}
	y := make([]int64, s.d)
	for e := range y {
		y[e] = -1
	}
	for {
		if !yield(y) {
			return nil
		}
		e := s.d - 1
		for e >= 0 && y[e] == 1 {
			y[e] = -1
			e--
		}
		if e < 0 {
			return nil
		}
		y[e]++
	}
}

// scaledIdentityOp is the operator c·I on R^d.
type scaledIdentityOp struct {
	d int
	c float64
}

// Dim returns d.
func (o scaledIdentityOp) Dim() int { return o.d }

// MulVec writes S·v into dst.
func (o scaledIdentityOp) MulVec(dst, v []float64) {
	for i, x := range v {
		dst[i] = o.c * x
	}
}

// At returns the entry S[i, j].
func (o scaledIdentityOp) At(i, j int) float64 {
	if i == j {
		return o.c
	}
	return 0
}

// pairAt returns the pair (a, b), a < b, at index e of the lexicographic list of the unordered
// pairs of n items, (0,1), (0,2), …, (0,n−1), (1,2), …, in O(n).
func pairAt(n, e int) (a, b int) {
	for a = 0; e >= n-1-a; a++ {
		e -= n - 1 - a
	}
	return a, a + 1 + e
}

// HasPartition is true: log Z and E[ψ] have a closed form.
func (s *Tournaments) HasPartition() bool { return true }

// LogPartition: pairs are independent with ψ ∈ {−1, 0, 1}: Z = Π_j (e^{u_j} + 1 + e^{−u_j}),
// E[ψ_j] = (e^{u_j} − e^{−u_j})/(e^{u_j} + 1 + e^{−u_j}), written with m = |u_j| to avoid overflow.
func (s *Tournaments) LogPartition(u, mean []float64) float64 {
	var lz float64
	for j, x := range u {
		m, _, e2, den := pairWeights(x)
		lz += m + logmath.Log(den)
		if mean != nil {
			mean[j] = math.Copysign((1-e2)/den, x)
			if x == 0 {
				mean[j] = 0
			}
		}
	}
	return lz
}

// PartitionScaleExact marks LogPartition as accurate at any scale of the scores
// (ScaleExactPartition).
func (s *Tournaments) PartitionScaleExact() {}

// ScoreSampler draws each pair independently: −1, 0 or 1 with probabilities ∝ e^{−u_j}, 1,
// e^{u_j}, written with m = |u_j| so that nothing overflows.
func (s *Tournaments) ScoreSampler(u []float64) ScoreSampler {
	cut := make([]float64, 2*len(u))
	for j, x := range u {
		_, e1, e2, den := pairWeights(x)
		low := e2 // the weight of the sign opposite to u_j's
		if x < 0 {
			low = 1
		}
		cut[2*j], cut[2*j+1] = low/den, (low+e1)/den
	}
	return pairSampler{cut: cut}
}

// pairWeights returns m = |x| and the weights of a pair's values relative to e^m, the largest:
// e1 = e^{−m} (value 0), e2 = e^{−2m} (the sign opposite to x's), and their sum with 1, den.
func pairWeights(x float64) (m, e1, e2, den float64) {
	m = math.Abs(x)
	e1, e2 = math.Exp(-m), math.Exp(-2*m)
	return m, e1, e2, 1 + e1 + e2
}

// pairSampler draws one value per pair: −1 below cut[2j], 0 below cut[2j+1], else 1.
type pairSampler struct{ cut []float64 }

// Draw writes one partial tournament.
func (p pairSampler) Draw(r *rand.Rand, y []int64) {
	for j := range y {
		switch x := r.Float64(); {
		case x < p.cut[2*j]:
			y[j] = -1
		case x < p.cut[2*j+1]:
			y[j] = 0
		default:
			y[j] = 1
		}
	}
}
