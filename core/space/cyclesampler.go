package space

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

// ScoreSampler prepares exact draws from p ∝ exp⟨u, ψ⟩ over the directed cycles by the backward
// half of cyclePartition's programme, in the log domain (cycleSampler). Up to cyclePartitionMax
// vertices (HasPartition).
func (s *DirectedCycles) ScoreSampler(u []float64) ScoreSampler {
	w := make([]float64, s.n*s.n)
	permGainMatrix(s.n, u, w)
	return newCycleSampler(s.n, w, false)
}

// ScoreSampler prepares exact draws from p ∝ exp⟨u, ψ⟩ over the undirected cycles: a directed
// cycle drawn under the symmetric arc weights w(a→b) = w(b→a) = u_ab, written in the orientation
// Decode writes. Both orientations of an undirected cycle have its score, so each undirected cycle
// is drawn with probability 2·exp(score)/(2·Z), as it should.
func (s *UndirectedCycles) ScoreSampler(u []float64) ScoreSampler {
	n := s.n
	w := make([]float64, n*n)
	k := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			w[a*n+b], w[b*n+a] = u[k], u[k]
			k++
		}
	}
	return newCycleSampler(n, w, true)
}

// cycleSampler draws cycles of length ≥ 3 with probability ∝ exp(Σ_arcs w). A cycle is drawn as
// cyclePartition counts it once: from its smallest vertex s, along a path through larger vertices,
// back to s. With B(mask, v) the log-sum of the continuations of a path from s (the smallest
// vertex of mask) that has visited exactly mask and ends at v (cycleBackwardLinear),
//
//	B(mask, v) = LSE([|mask| ≥ 3]·w(v→s), LSE_{t ∉ mask, t > s} w(v→t) + B(mask ∪ t, t)),
//
// a draw picks the first arc s→x with probability ∝ exp(w(s→x) + B({s, x}, x)), then at each
// (mask, v) closes or extends with probability exp(term − B(mask, v)). The table holds n·2^n
// floats (1.8 MB at n = 14), computed as cyclePartition computes it: in the linear domain with
// each level rescaled (about n²·2^n multiplications) where the arc scores and the span of each
// level's values allow, else in the log domain (an exponential per term, 5 times slower). A draw
// costs O(n²) logarithms.
type cycleSampler struct {
	n          int
	w          []float64 // arc scores, w[a·n+b] for a→b
	back       []float64 // B as cycleBackwardLinear (scale set) or cycleBackwardLog (scale nil) leaves it
	scale      []float64 // the levels' log scales of the linear table
	first      []float64 // the running sums of exp(w(s→x) + B({s, x}, x) − max) over (s, x), s < x
	undirected bool
}

func newCycleSampler(n int, w []float64, undirected bool) cycleSampler {
	d := cycleSampler{n: n, w: w, back: make([]float64, n<<n), undirected: undirected}
	var reach float64
	for _, x := range w {
		reach = max(reach, math.Abs(x))
	}
	if reach <= cycleLinearReach {
		e := make([]float64, n*n)
		for i, x := range w {
			e[i] = math.Exp(x)
		}
		d.scale = make([]float64, n+1)
		if !cycleBackwardLinear(n, e, d.back, d.scale) {
			d.scale = nil // a level's values spanned more than float64's range
		}
	}
	if d.scale == nil {
		cycleBackwardLog(n, w, d.back)
	}
	first := make([]float64, 0, n*(n-1)/2)
	top := math.Inf(-1)
	for s := 0; s < n; s++ {
		for x := s + 1; x < n; x++ {
			t := w[s*n+x] + d.logBack(1<<s|1<<x, x)
			first = append(first, t)
			top = max(top, t)
		}
	}
	var sum float64
	for i, t := range first {
		sum += math.Exp(t - top)
		first[i] = sum
	}
	d.first = first
	return d
}

// logBack is B(mask, v).
func (d cycleSampler) logBack(mask, v int) float64 {
	b := d.back[mask*d.n+v]
	if d.scale == nil {
		return b
	}
	return logmath.Log(b) + d.scale[bits.OnesCount(uint(mask))]
}

// Draw writes one cycle as a successor row (−1 off the cycle).
func (d cycleSampler) Draw(r *rand.Rand, y []int64) {
	n := d.n
	for v := range y[:n] {
		y[v] = -1
	}
	// the first arc s→x, pairs in the order newCycleSampler listed them
	i := pickCumulative(d.first, r.Float64()*d.first[len(d.first)-1])
	s, x := 0, 0
	for a, left := 0, i; ; a++ {
		if left < n-1-a {
			s, x = a, a+1+left
			break
		}
		left -= n - 1 - a
	}
	y[s] = int64(x)
	full := 1<<n - 1
	mask, v := 1<<s|1<<x, x
	var cum [cyclePartitionMax + 1]float64
	var next [cyclePartitionMax + 1]int
	for {
		here := d.logBack(mask, v)
		k := 0
		var sum float64
		if bits.OnesCount(uint(mask)) >= 3 {
			sum += math.Exp(d.w[v*n+s] - here)
			cum[k], next[k] = sum, s
			k++
		}
		for rest := full &^ mask &^ (1<<(s+1) - 1); rest != 0; rest &= rest - 1 {
			t := bits.TrailingZeros(uint(rest))
			sum += math.Exp(d.w[v*n+t] + d.logBack(mask|1<<t, t) - here)
			cum[k], next[k] = sum, t
			k++
		}
		t := next[pickCumulative(cum[:k], r.Float64()*sum)]
		y[v] = int64(t)
		if t == s {
			break
		}
		mask, v = mask|1<<t, t
	}
	if d.undirected {
		cycleCanonical(y[:n])
	}
}

// pickCumulative returns the first index whose running sum exceeds t (the last one when rounding
// put t at the total): a term of probability zero, its sum equal to the previous one, is never
// picked.
func pickCumulative(cum []float64, t float64) int {
	i := 0
	for i < len(cum)-1 && !(cum[i] > t) {
		i++
	}
	return i
}
