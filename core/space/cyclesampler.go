package space

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

// ScoreSampler prepares exact draws from p ∝ exp⟨u, ψ⟩ over the directed cycles by the backward
// half of cyclePartition's programme (cycleSampler). Up to cyclePartitionMax vertices
// (HasPartition).
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
	w := make([]float64, s.n*s.n)
	undirectedArcs(s.n, u, w)
	return newCycleSampler(s.n, w, true)
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
	w          []float64   // arc scores, w[a·n+b] for a→b
	back       []float64   // B as cycleBackwardLinear (scale set) or cycleBackwardLog (scale nil) leaves it
	scale      []float64   // the levels' log scales of the linear table
	first      categorical // the first arc s→x, s < x, as s·n + x: ∝ exp(w(s→x) + B({s, x}, x))
	undirected bool
}

func newCycleSampler(n int, w []float64, undirected bool) cycleSampler {
	d := cycleSampler{n: n, w: w, back: make([]float64, n<<n), undirected: undirected}
	if arcReach(w) <= cycleLinearReach {
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
	var f []float64
	var arcs []int
	for s := 0; s < n; s++ {
		for x := s + 1; x < n; x++ {
			f = append(f, w[s*n+x]+d.logBack(1<<s|1<<x, x))
			arcs = append(arcs, s*n+x)
		}
	}
	d.first = newCategorical(f, arcs)
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
	arc := d.first.pick(r)
	s, x := arc/n, arc%n
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
