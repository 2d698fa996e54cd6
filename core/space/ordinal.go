package space

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("ordinal", func(p []int64) (Space, error) { return newFromOne("ordinal", p, NewOrdinal) })
}

// Ordinal is the space of n ordered levels 0 < 1 < … < n−1 (ordinal regression). A structure is
// one int64 level z in [0, n). ψ has one threshold coordinate per level above the lowest,
// d = n − 1: ψ_j(z) = 1 if z ≥ j+1, for j = 0..n−2 (the thesis' ψ_i(z) = [z ≥ i] for i = 1..n−1;
// the coordinate i = 0 would be constant 1 and is dropped). Level 0 embeds to the zero vector.
//
// Under the uniform distribution p_j = P(z > j) = (n−1−j)/n and
// P(z > i and z > j) = (n−1−max(i,j))/n, so S_ij = (n−1−max(i,j))/n − p_i p_j. In counts, with the
// thesis' levels Σ = {1..n}: Ψ_i = n−i+1 and C_ij = n−max(i,j)+1; the thesis prints n−i and
// n−max(i,j), which is right only for levels numbered from 0.
// Decoding scans the n levels with prefix sums of u (exact, O(n)).
type Ordinal struct {
	n int
	// levels is scratch for LogPartition's level scores (*[]float64 of n): a fit computes them for
	// every row at every step.
	levels sync.Pool
}

// NewOrdinal returns the space of n ordered levels, n ≥ 2.
func NewOrdinal(n int) (*Ordinal, error) {
	if n < 2 {
		return nil, fmt.Errorf("space: ordinal needs n_levels ≥ 2 (one level leaves nothing to predict and d = n−1 = 0), got %d", n)
	}
	if err := checkSize("ordinal", "n_levels", int64(n), int64(n-1), 1); err != nil {
		return nil, err
	}
	return &Ordinal{n: n}, nil
}

// Kind returns "ordinal".
func (s *Ordinal) Kind() string { return "ordinal" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *Ordinal) PsiZeroOne() bool { return true }

// Params returns (n).
func (s *Ordinal) Params() []int64 { return []int64{int64(s.n)} }

// Dim returns n − 1, one threshold per level above the lowest.
func (s *Ordinal) Dim() int { return s.n - 1 }

// Width returns 1: a structure is one level.
func (s *Ordinal) Width() int { return 1 }

// LogCount returns log n.
func (s *Ordinal) LogCount() float64 { return logmath.Log(float64(s.n)) }

// Guarantee returns 0: Decode is exact.
func (s *Ordinal) Guarantee() float64 { return 0 }

// Mean writes p_j = (n−1−j)/n.
func (s *Ordinal) Mean(p []float64) {
	for j := range p {
		p[j] = float64(s.n-1-j) / float64(s.n)
	}
}

// Covariance returns S_ij = (n−1−max(i,j))/n − p_i p_j, with O(d) products.
func (s *Ordinal) Covariance() Operator { return ordinalCov{n: s.n} }

// Validate checks that y is one level in [0, n).
func (s *Ordinal) Validate(y []int64) error {
	if len(y) != 1 {
		return fmt.Errorf("an ordinal label is one integer level, got %d values", len(y))
	}
	if y[0] < 0 || y[0] >= int64(s.n) {
		return fmt.Errorf("level %d outside [0, %d)", y[0], s.n)
	}
	return nil
}

// Embed writes ψ_j = 1 for j < z and 0 otherwise.
func (s *Ordinal) Embed(y []int64, psi []float64) {
	for j := range psi {
		if int64(j) < y[0] {
			psi[j] = 1
		} else {
			psi[j] = 0
		}
	}
}

// Sample draws a level uniformly.
func (s *Ordinal) Sample(r *rand.Rand, y []int64) { y[0] = int64(r.IntN(s.n)) }

// Decode picks the level z maximising u_0 + … + u_{z−1}, the lowest among ties.
func (s *Ordinal) Decode(u []float64, y []int64) {
	best, bestScore, score := 0, 0.0, 0.0
	for z := 1; z < s.n; z++ {
		score += u[z-1]
		if score > bestScore {
			best, bestScore = z, score
		}
	}
	y[0] = int64(best)
}

// Enumerate yields the levels in increasing order.
func (s *Ordinal) Enumerate(yield func(y []int64) bool) error {
	if s.n > MaxEnumerate {
		return ErrTooLarge
	}
	y := make([]int64, 1)
	for z := 0; z < s.n; z++ {
		y[0] = int64(z)
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// ordinalCov is the covariance of Ordinal.
type ordinalCov struct{ n int }

// Dim returns d.
func (o ordinalCov) Dim() int { return o.n - 1 }

func (o ordinalCov) p(j int) float64 { return float64(o.n-1-j) / float64(o.n) }

// At returns the entry S[i, j].
func (o ordinalCov) At(i, j int) float64 {
	return float64(o.n-1-max(i, j))/float64(o.n) - o.p(i)*o.p(j)
}

// MulVec uses Σ_k (n−1−max(j,k)) v_k = (n−1−j) Σ_{k≤j} v_k + Σ_{k>j} (n−1−k) v_k, O(d).
func (o ordinalCov) MulVec(dst, v []float64) {
	d := o.n - 1
	nf := float64(o.n)
	var pv, tail float64
	for k := d - 1; k >= 0; k-- { // dst[k] = Σ_{l>k} (n−1−l) v_l for now
		dst[k] = tail
		tail += float64(o.n-1-k) * v[k]
		pv += o.p(k) * v[k]
	}
	var head float64
	for j := 0; j < d; j++ {
		head += v[j]
		dst[j] = (float64(o.n-1-j)*head+dst[j])/nf - o.p(j)*pv
	}
}

// HasPartition is true: log Z and E[ψ] have a closed form.
func (s *Ordinal) HasPartition() bool { return true }

// LogPartition: level z scores s_z = u_0 + … + u_{z−1} (prefix sums, s_0 = 0) over the d+1 levels;
// E[ψ_j] = P(z > j) is a suffix sum of the level probabilities.
func (s *Ordinal) LogPartition(u, mean []float64) float64 {
	bp, _ := s.levels.Get().(*[]float64)
	if bp == nil || len(*bp) != len(u)+1 {
		b := make([]float64, len(u)+1)
		bp = &b
	}
	defer s.levels.Put(bp)
	sc := levelScoresInto(u, *bp)
	lz := logmath.SumExp(sc)
	if mean != nil {
		var tail float64
		for z := len(u); z >= 1; z-- {
			tail += math.Exp(sc[z] - lz)
			mean[z-1] = tail
		}
	}
	return lz
}

// ScoreSampler draws level z with probability ∝ exp(u_0 + … + u_{z−1}).
func (s *Ordinal) ScoreSampler(u []float64) ScoreSampler { return newCategorical(levelScores(u), nil) }

// levelScores returns the score of every level z, u_0 + … + u_{z−1} (prefix sums, 0 for z = 0).
func levelScores(u []float64) []float64 { return levelScoresInto(u, make([]float64, len(u)+1)) }

// levelScoresInto is levelScores into sc (len(u)+1 values).
func levelScoresInto(u, sc []float64) []float64 {
	sc[0] = 0
	for z := 1; z <= len(u); z++ {
		sc[z] = sc[z-1] + u[z-1]
	}
	return sc
}
