package space

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/logmath"
)

// ScoreSampling is implemented by spaces that draw exact, independent samples from
// p(y) ∝ exp⟨u, ψ(y)⟩ by the recursion of their Partition, read backwards: a categorical draw
// over the structures of the one-of spaces, one independent draw per coordinate of the product
// spaces (multilabel, partial tournaments), top-down draws from the upward messages of subtrees,
// sequential draws from the suffix tables of k-subsets, and labels or vertices appended one at a
// time from the backward tables of the subset programmes of rankings (up to permPartitionMax
// labels) and cycles (up to cyclePartitionMax vertices). A draw costs O(Width()) (a binary
// search for the one-of spaces) after O(Dim()) preparation, whatever the scores: unlike coupling
// from the past and the Metropolis chain, whose uniform proposals almost never hit a peaked
// distribution's mass on a large space, it neither slows down nor loses exactness as p peaks.
type ScoreSampling interface {
	Partition
	// ScoreSampler prepares sampling from p ∝ exp⟨u, ψ⟩ for Dim() finite scores u; it keeps no
	// reference to u. Its memory is at most PartitionBytes (PartitionMemory) beyond O(Dim()).
	ScoreSampler(u []float64) ScoreSampler
}

// ScoreSampler draws from the distribution it was prepared for. It is safe for concurrent use.
type ScoreSampler interface {
	// Draw writes a structure drawn from p into y, using r alone for its randomness.
	Draw(r *rand.Rand, y []int64)
}

// ScoreSamplingOf returns s's exact sampler of scores when it has one at its size.
func ScoreSamplingOf(s Space) (ScoreSampling, bool) {
	p, ok := s.(ScoreSampling)
	if !ok || !p.HasPartition() {
		return nil, false
	}
	return p, true
}

// categorical draws one of a list of structures, each a single integer, with probabilities
// ∝ exp(f): cum holds the running sums of exp(f − max f), so that draws scale a uniform by the
// total rather than trust the sums to reach 1, and a structure of probability zero (its sum equal
// to the previous one) is never drawn.
type categorical struct {
	cum    []float64
	values []int // the structures; nil: the index itself
}

// newCategorical returns the categorical distribution ∝ exp(f) over values (nil: 0, 1, …). It
// keeps f as its table of sums.
func newCategorical(f []float64, values []int) categorical {
	top := math.Inf(-1)
	for _, x := range f {
		top = math.Max(top, x)
	}
	var sum float64
	for i, x := range f {
		sum += math.Exp(x - top)
		f[i] = sum
	}
	return categorical{cum: f, values: values}
}

// Draw writes the structure whose running sum first exceeds a uniform draw scaled by the total.
func (c categorical) Draw(r *rand.Rand, y []int64) { y[0] = int64(c.pick(r)) }

// pick returns the structure whose running sum first exceeds a uniform draw scaled by the total.
func (c categorical) pick(r *rand.Rand) int {
	i := pickCumulative(c.cum, r.Float64()*c.cum[len(c.cum)-1])
	if c.values != nil {
		return c.values[i]
	}
	return i
}

// pickCumulative returns the first index whose running sum in cum exceeds t (the last one when
// rounding put t at the total): a term of probability zero, its sum equal to the previous one, is
// never picked.
func pickCumulative(cum []float64, t float64) int {
	i := sort.Search(len(cum), func(i int) bool { return cum[i] > t })
	return min(i, len(cum)-1)
}

// bernoulliRow draws each coordinate of a 0/1 row independently, 1 with probability p[j].
type bernoulliRow struct{ p []float64 }

// Draw writes one row.
func (b bernoulliRow) Draw(r *rand.Rand, y []int64) {
	for j, p := range b.p {
		y[j] = 0
		if r.Float64() < p {
			y[j] = 1
		}
	}
}

// logisticRow returns the probabilities σ(u_j).
func logisticRow(u []float64) []float64 {
	p := make([]float64, len(u))
	for j, x := range u {
		p[j] = logmath.Logistic(x)
	}
	return p
}
