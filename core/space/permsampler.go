package space

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

// ScoreSampler prepares exact draws from p ∝ exp⟨u, ψ⟩ over the rankings by LogPartition's
// backward programme, in the log domain: B(T), the log-sum over the orders of the labels after
// the set T, for every T; a draw then appends labels one at a time, v after T with probability
// exp(c(v, T) + B(T ∪ v) − B(T)). Up to permPartitionMax labels (HasPartition): the table holds
// 2^n floats (512 KiB at n = 16) and costs about n·2^n exponentials; a draw costs O(n²).
func (s *Permutations) ScoreSampler(u []float64) ScoreSampler {
	n := s.n
	w := make([]float64, n*n)
	permGainMatrix(n, u, w)
	h := n / 2
	d := permSampler{n: n, h: h, lo: make([]float64, n<<h), hi: make([]float64, n<<(n-h)), back: make([]float64, 1<<n)}
	permGainTablesStrided(n, w, d.lo, d.hi, 1)
	full := 1<<n - 1
	var terms [permPartitionMax]float64
	for set := full - 1; set >= 0; set-- {
		k, top := 0, math.Inf(-1)
		for rest := full &^ set; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			t := d.gain(v, set) + d.back[set|1<<v]
			terms[k] = t
			top = max(top, t)
			k++
		}
		d.back[set] = top + logmath.Log(sumExpShifted(terms[:k], top))
	}
	return d
}

// permSampler draws rankings from the backward table of Permutations.ScoreSampler.
type permSampler struct {
	n, h   int
	lo, hi []float64 // the gains c(v, T) in halves, as permGainTables lays them out
	back   []float64 // B(T) by the bit set T
}

// gain is c(v, set) = Σ_{a ∈ set} w[a][v].
func (d permSampler) gain(v, set int) float64 {
	return d.lo[v<<d.h|set&(1<<d.h-1)] + d.hi[v<<(d.n-d.h)|set>>d.h]
}

// Draw writes one ranking (y[label] = its position, 1 = first).
func (d permSampler) Draw(r *rand.Rand, y []int64) {
	full := 1<<d.n - 1
	var cum [permPartitionMax]float64
	var labels [permPartitionMax]int
	set := 0
	for pos := 1; pos <= d.n; pos++ {
		k := 0
		var sum float64
		for rest := full &^ set; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			// a probability, at most 1 up to rounding: no overflow whatever the scores
			sum += math.Exp(d.gain(v, set) + d.back[set|1<<v] - d.back[set])
			cum[k], labels[k] = sum, v
			k++
		}
		// the total, not 1, scales the uniform (as in categorical)
		v := labels[pickCumulative(cum[:k], r.Float64()*sum)]
		y[v] = int64(pos)
		set |= 1 << v
	}
}
