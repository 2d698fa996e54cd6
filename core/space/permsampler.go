package space

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

// ScoreSampler prepares exact draws from p ∝ exp⟨u, ψ⟩ over the rankings by LogPartition's
// backward programme: B(T), the log-sum over the orders of the labels after the set T, for every
// T; a draw then appends labels one at a time, v after T with probability
// exp(c(v, T) + B(T ∪ v) − B(T)). Up to permPartitionMax labels (HasPartition): the table holds
// 2^n floats (512 KiB at n = 16), computed as LogPartition computes it, in the linear domain with
// each level rescaled (about n·2^n multiplications) where the gains and the span of each level's
// values allow, else in the log domain (an exponential per term, several times slower); a draw
// costs O(n²) logarithms.
func (s *Permutations) ScoreSampler(u []float64) ScoreSampler {
	n := s.n
	w := make([]float64, n*n)
	permGainMatrix(n, u, w)
	h := n / 2
	d := permSampler{n: n, h: h, lo: make([]float64, n<<h), hi: make([]float64, n<<(n-h)), back: make([]float64, 1<<n)}
	permGainTablesStrided(n, w, d.lo, d.hi, 1)
	if permReach(n, w) <= permLinearReach {
		d.scale = make([]float64, n+1)
		if permBackwardLinear(n, d.lo, d.hi, d.back, d.scale) {
			return d
		}
		d.scale = nil // a level's values spanned more than float64's range
	}
	full := 1<<n - 1
	d.back[full] = 0 // log 1 (a linear attempt may have left 1 there)
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

// permBackwardLinear fills b (2^n) with the backward programme of permPartitionLinear from the
// gains in halves (lo, hi, as permGainTables lays them out): b[T] = e^{B(T) − M_|T|}, M_k =
// scale[k] rescaling level k to a largest value of 1. permPartitionLinear runs the same recursion
// with the marginals' sums inside its loop, which a shared pass would have to repeat. It reports
// false, b unfinished, when a value fell below linearFloor (see permPartitionLinear).
func permBackwardLinear(n int, lo, hi, b, scale []float64) bool {
	h := n / 2
	hb := n - h
	lowMask := 1<<h - 1
	full := 1<<n - 1
	elo, ehi := make([]float64, len(lo)), make([]float64, len(hi))
	for i, x := range lo {
		elo[i] = math.Exp(x)
	}
	for i, x := range hi {
		ehi[i] = math.Exp(x)
	}
	sets, start := permLevelsOf(n)
	b[full], scale[n] = 1, 0
	for k := n - 1; k >= 0; k-- {
		level := sets[start[k]:start[k+1]]
		var top float64
		for _, s32 := range level {
			set := int(s32)
			low, high := set&lowMask, set>>h
			var z float64
			for rest := full &^ set; rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				z += elo[v<<h|low] * ehi[v<<hb|high] * b[set|1<<v]
			}
			b[set] = z
			top = max(top, z)
		}
		for _, s32 := range level {
			if b[s32] /= top; !(b[s32] >= linearFloor) {
				return false
			}
		}
		scale[k] = scale[k+1] + logmath.Log(top)
	}
	return true
}

// permSampler draws rankings from the backward table of Permutations.ScoreSampler.
type permSampler struct {
	n, h   int
	lo, hi []float64 // the gains c(v, T) in halves, as permGainTables lays them out
	back   []float64 // B by the bit set T: as permBackwardLinear leaves it (scale set), or B itself
	scale  []float64 // the levels' log scales of the linear table
}

// gain is c(v, set) = Σ_{a ∈ set} w[a][v].
func (d permSampler) gain(v, set int) float64 {
	return d.lo[v<<d.h|set&(1<<d.h-1)] + d.hi[v<<(d.n-d.h)|set>>d.h]
}

// logBack is B(set).
func (d permSampler) logBack(set int) float64 {
	if d.scale == nil {
		return d.back[set]
	}
	return logmath.Log(d.back[set]) + d.scale[bits.OnesCount(uint(set))]
}

// Draw writes one ranking (y[label] = its position, 1 = first).
func (d permSampler) Draw(r *rand.Rand, y []int64) {
	full := 1<<d.n - 1
	var cum [permPartitionMax]float64
	var labels [permPartitionMax]int
	set := 0
	for pos := 1; pos <= d.n; pos++ {
		here := d.logBack(set)
		k := 0
		var sum float64
		for rest := full &^ set; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			// a probability, at most 1 up to rounding: no overflow whatever the scores
			sum += math.Exp(d.gain(v, set) + d.logBack(set|1<<v) - here)
			cum[k], labels[k] = sum, v
			k++
		}
		// the total, not 1, scales the uniform (as in categorical)
		v := labels[pickCumulative(cum[:k], r.Float64()*sum)]
		y[v] = int64(pos)
		set |= 1 << v
	}
}
