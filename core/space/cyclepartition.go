package space

import (
	"math"
	"math/bits"

	"github.com/combpred/combpred/core/logmath"
)

// cyclePartitionMax is the largest n for which the cycle spaces compute log Z and the pairwise
// marginals exactly: the sum-product Held–Karp programme costs about n²·2^n multiplications per
// score vector and holds 2·n·2^n floats (3.7 MB at n = 14), the exact decoder's limit.
const cyclePartitionMax = cycleExactMax

// HasPartition is true up to cyclePartitionMax vertices.
func (s *DirectedCycles) HasPartition() bool { return s.n <= cyclePartitionMax }

// cycleLogZMax is the largest n for which the cycle spaces compute log Z alone (LogZ), for the
// log-partition function and log-likelihoods of models too large for exact marginals and fits:
// the forward half of the programme, n²·2^n steps and n·2^n floats per score vector (8 MiB at
// n = 16). A row takes up to 0.07 s (BenchmarkCyclesLogZ; in the log domain, at large scores), which
// Ctrl-C waits for: the programme has no stop.
const cycleLogZMax = 16

// HasLogZ is true up to cycleLogZMax vertices.
func (s *DirectedCycles) HasLogZ() bool { return s.n <= cycleLogZMax }

// LogZ returns log Z(u), LogPartition without the marginals, at any size up to cycleLogZMax.
func (s *DirectedCycles) LogZ(u []float64) float64 { return s.LogPartition(u, nil) }

// HasLogZ is true up to cycleLogZMax vertices.
func (s *UndirectedCycles) HasLogZ() bool { return s.n <= cycleLogZMax }

// LogZ returns log Z(u), LogPartition without the marginals, at any size up to cycleLogZMax.
func (s *UndirectedCycles) LogZ(u []float64) float64 { return s.LogPartition(u, nil) }

// PartitionBytes bounds what LogPartition and ScoreSampler allocate beyond O(Dim()) vectors.
func (s *DirectedCycles) PartitionBytes() int64 { return cyclePartitionBytes(s.n) }

// PartitionBytes bounds what LogPartition and ScoreSampler allocate beyond O(Dim()) vectors.
func (s *UndirectedCycles) PartitionBytes() int64 { return cyclePartitionBytes(s.n) }

// cyclePartitionBytes is the cycle spaces' PartitionBytes: the forward and backward tables of n·2^n
// floats and a few n×n matrices (3.7 MB at n = 14; at n = 16, 17 MB, of which log Z alone holds
// the forward table only).
func cyclePartitionBytes(n int) int64 {
	if n > cycleLogZMax {
		return 0 // no partition: nothing is allocated
	}
	return 8 * int64(2*n<<n+4*n*n)
}

// LogPartition sums over the directed cycles by cyclePartition; E[ψ_uv] = P(u→v) − P(v→u).
func (s *DirectedCycles) LogPartition(u, mean []float64) float64 {
	n := s.n
	buf := s.pool.Get().(*cycleBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	permGainMatrix(n, u, w)
	logZ, arcs := cyclePartition(n, w, buf, mean != nil)
	if mean != nil {
		k := 0
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				mean[k] = max(-1, min(1, arcs[a*n+b]-arcs[b*n+a]))
				k++
			}
		}
	}
	return logZ
}

// HasPartition is true up to cyclePartitionMax vertices.
func (s *UndirectedCycles) HasPartition() bool { return s.n <= cyclePartitionMax }

// LogPartition sums over the undirected cycles through the directed ones under symmetric arc
// weights: each undirected cycle (of length ≥ 3) has exactly two orientations of the same score,
// so Z is half the directed sum and P(edge uv) = P(u→v) + P(v→u).
func (s *UndirectedCycles) LogPartition(u, mean []float64) float64 {
	n := s.n
	buf := s.pool.Get().(*cycleBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	undirectedArcs(n, u, w)
	logZ, arcs := cyclePartition(n, w, buf, mean != nil)
	if mean != nil {
		k := 0
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				mean[k] = max(0, min(1, arcs[a*n+b]+arcs[b*n+a]))
				k++
			}
		}
	}
	return logZ - math.Ln2
}

// cyclePartition returns log Σ exp(Σ_arcs w) over the directed cycles of length ≥ 3 and, when
// marginals is set, P(a→b) at arcs[a·n+b].
//
// It is cycleDecodeExact's programme with (+, ×) for (max, +): f[mask·n+v] sums the paths that
// start at the smallest vertex s of mask, visit exactly mask and end at v, and
//
//	h[mask·n+v] = [|mask| ≥ 3]·e^{w(v→s)} + Σ_{x ∉ mask, x > s} e^{w(v→x)}·h[(mask ∪ x)·n+x]
//
// sums their continuations back to s. An arc's probability is the sum, over the path prefixes
// that end in its tail, of prefix × arc × continuation, over Z. Values are kept as
// e^{score − L_k} for the paths over k vertices, with L_k rescaling each level to a largest value
// of 1 (and likewise for h): arc factors within exp(±300) then neither overflow nor lose what
// matters, unless a level's values span more than float64's range (structured scores of a few
// hundred: a path that carries the mass can sit e^{−800} below its level's largest), which shows
// as a value under linearFloor. Larger arc scores, and such spans, are summed in the log domain
// (cyclePartitionLog), at the cost of an exponential per term. Unlike the rankings' programme
// (permMassKept), this one does not check for lost mass instead: under the symmetric weights of
// undirected cycles the forward and backward tables can lose the two orientations of one cycle,
// mirror images that every level's sums still balance (a review: UndirectedCycles(4) with one
// edge at 200 and the rest at −300 gave log Z off by ln 2 and NaN marginals through such a check).
func cyclePartition(n int, w []float64, buf *cycleBuf, marginals bool) (logZ float64, arcs []float64) {
	if arcReach(w) > cycleLinearReach {
		return cyclePartitionLog(n, w, buf, marginals)
	}
	e := permGrow(&buf.wt, n*n)
	for i, x := range w {
		e[i] = math.Exp(x)
	}
	size := n << n
	if cap(buf.dp) < size {
		buf.dp = make([]float64, size)
	}
	f := buf.dp[:size]
	full := 1<<n - 1
	// Level k holds the masks of k vertices; scaleF[k] = L_k, and closed[k] the cycles of k
	// vertices, Σ f·e^{w(v→s)} at that level's scale.
	scaleF := permGrow(&buf.scaleF, n+1)
	closed := permGrow(&buf.closed, n+1)
	clear(closed)
	sets, start := permLevelsOf(n)
	scaleF[1] = 0
	for k := 2; k <= n; k++ {
		var top float64
		for _, m32 := range sets[start[k]:start[k+1]] {
			mask := int(m32)
			s := bits.TrailingZeros(uint(mask))
			inner := mask &^ (1 << s)
			row := f[mask*n : mask*n+n]
			for rest := inner; rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				prev := inner &^ (1 << v)
				var z float64
				if prev == 0 {
					z = e[s*n+v]
				} else {
					prow := f[(mask&^(1<<v))*n:]
					for p := prev; p != 0; p &= p - 1 {
						l := bits.TrailingZeros(uint(p))
						z += prow[l] * e[l*n+v]
					}
				}
				row[v] = z
				top = max(top, z)
			}
		}
		for _, m32 := range sets[start[k]:start[k+1]] {
			mask := int(m32)
			s := bits.TrailingZeros(uint(mask))
			for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				f[mask*n+v] /= top
				if !(f[mask*n+v] >= linearFloor) { // every such path has a positive sum
					return cyclePartitionLog(n, w, buf, marginals)
				}
				if k >= 3 {
					closed[k] += f[mask*n+v] * e[v*n+s]
				}
			}
		}
		scaleF[k] = scaleF[k-1] + logmath.Log(top)
	}
	logZ = math.Inf(-1)
	for k := 3; k <= n; k++ {
		if closed[k] > 0 {
			logZ = logmath.AddExp(logZ, scaleF[k]+logmath.Log(closed[k]))
		}
	}
	if !marginals {
		return logZ, nil
	}
	if cap(buf.back) < size {
		buf.back = make([]float64, size)
	}
	h := buf.back[:size]
	scaleB := permGrow(&buf.scaleB, n+1)
	if !cycleBackwardLinear(n, e, h, scaleB) {
		return cyclePartitionLog(n, w, buf, marginals)
	}
	arcs = permGrow(&buf.arcs, n*n)
	clear(arcs)
	for k := 1; k < n; k++ {
		for _, m32 := range sets[start[k]:start[k+1]] {
			mask := int(m32)
			s := bits.TrailingZeros(uint(mask))
			ext := full &^ mask &^ (1<<(s+1) - 1)
			if k == 1 {
				// the first arc s→x of every path
				for x := ext; x != 0; x &= x - 1 {
					t := bits.TrailingZeros(uint(x))
					arcs[s*n+t] += math.Exp(logmath.Log(e[s*n+t]*h[(mask|1<<t)*n+t]) + scaleB[2] - logZ)
				}
				continue
			}
			norm := math.Exp(scaleF[k] + scaleB[k+1] - logZ)
			closeNorm := math.Exp(scaleF[k] - logZ)
			for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				fv := f[mask*n+v]
				if k >= 3 {
					arcs[v*n+s] += fv * e[v*n+s] * closeNorm
				}
				for x := ext; x != 0; x &= x - 1 {
					t := bits.TrailingZeros(uint(x))
					arcs[v*n+t] += fv * e[v*n+t] * h[(mask|1<<t)*n+t] * norm
				}
			}
		}
	}
	// the closing arcs of the cycles over all n vertices
	for v := 1; v < n; v++ {
		arcs[v*n] += f[full*n+v] * e[v*n] * math.Exp(scaleF[n]-logZ)
	}
	return logZ, arcs
}

// cycleLinearReach bounds the arc scores that cyclePartition sums in the linear domain.
const cycleLinearReach = 300

// cyclePartitionLog is cyclePartition's programme in the log domain.
func cyclePartitionLog(n int, w []float64, buf *cycleBuf, marginals bool) (logZ float64, arcs []float64) {
	size := n << n
	if cap(buf.dp) < size {
		buf.dp = make([]float64, size)
	}
	f := buf.dp[:size]
	full := 1<<n - 1
	var terms []float64
	lse := func() float64 {
		top := math.Inf(-1)
		for _, t := range terms {
			top = max(top, t)
		}
		if math.IsInf(top, -1) {
			return top
		}
		return top + logmath.Log(sumExpShifted(terms, top))
	}
	logZ = math.Inf(-1)
	for mask := 1; mask <= full; mask++ {
		s := bits.TrailingZeros(uint(mask))
		inner := mask &^ (1 << s)
		for rest := inner; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			prev := inner &^ (1 << v)
			if prev == 0 {
				f[mask*n+v] = w[s*n+v]
			} else {
				terms = terms[:0]
				for p := prev; p != 0; p &= p - 1 {
					l := bits.TrailingZeros(uint(p))
					terms = append(terms, f[(mask&^(1<<v))*n+l]+w[l*n+v])
				}
				f[mask*n+v] = lse()
			}
			if bits.OnesCount(uint(mask)) >= 3 {
				logZ = logmath.AddExp(logZ, f[mask*n+v]+w[v*n+s])
			}
		}
	}
	if !marginals {
		return logZ, nil
	}
	if cap(buf.back) < size {
		buf.back = make([]float64, size)
	}
	h := buf.back[:size]
	cycleBackwardLog(n, w, h)
	arcs = permGrow(&buf.arcs, n*n)
	clear(arcs)
	for mask := 1; mask <= full; mask++ {
		s := bits.TrailingZeros(uint(mask))
		k := bits.OnesCount(uint(mask))
		ext := full &^ mask &^ (1<<(s+1) - 1)
		if k == 1 {
			for x := ext; x != 0; x &= x - 1 {
				t := bits.TrailingZeros(uint(x))
				arcs[s*n+t] += math.Exp(w[s*n+t] + h[(mask|1<<t)*n+t] - logZ)
			}
			continue
		}
		for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			fv := f[mask*n+v]
			if k >= 3 {
				arcs[v*n+s] += math.Exp(fv + w[v*n+s] - logZ)
			}
			for x := ext; x != 0; x &= x - 1 {
				t := bits.TrailingZeros(uint(x))
				arcs[v*n+t] += math.Exp(fv + w[v*n+t] + h[(mask|1<<t)*n+t] - logZ)
			}
		}
	}
	return logZ, arcs
}

// undirectedArcs writes into w (n×n) the arc scores of the undirected cycles' scores u (one per
// pair a < b): w(a→b) = w(b→a) = u_ab, and 0 on the diagonal.
func undirectedArcs(n int, u, w []float64) {
	k := 0
	for a := 0; a < n; a++ {
		w[a*n+a] = 0
		for b := a + 1; b < n; b++ {
			w[a*n+b], w[b*n+a] = u[k], u[k]
			k++
		}
	}
}

// arcReach is the largest magnitude of the arc scores w, which decides between the linear and the
// log domain (cycleLinearReach).
func arcReach(w []float64) float64 {
	var reach float64
	for _, x := range w {
		reach = max(reach, math.Abs(x))
	}
	return reach
}

// linearFloor is the smallest value the linear-domain programmes (cyclePartition,
// permPartitionLinear and their backward tables) accept after rescaling a level to a largest value
// of 1: below it a value is subnormal, or underflowed to 0, and has lost what it carried; they
// then give way to the log domain. A term lost below it in a sum that stays above it changes the
// sum by less than 1e-290 relative.
const linearFloor = 1e-290

// cycleBackwardLinear fills h (n·2^n) with cyclePartition's continuations from e = exp(w): h at
// mask·n + v, for the paths from the smallest vertex s of mask that visited exactly mask and end
// at v, sums their ways back to s (closing at once when |mask| ≥ 3, or through a larger vertex
// outside mask), as e^{log-sum − M_k} with M_k = scaleB[k] for |mask| = k (scaleB has n + 1
// values; levels 0 and 1 are not set). h at level k is scaled by M_k; the closing term of level k
// is e^{w(v→s)} at scale 1, and continuations at level k + 1 at scale M_{k+1}: M_k is the larger
// of the two contributions' scales, the other term enters through exp(its scale − M_k), as two
// factors of half the exponent each, so that a term within range is not lost to the underflow of
// its factor alone. It reports false when a value that must be positive fell below
// linearFloor: the caller then sums in logs (cycleBackwardLog).
func cycleBackwardLinear(n int, e, h, scaleB []float64) bool {
	sets, start := permLevelsOf(n)
	full := 1<<n - 1
	scaleB[n] = 0
	thin := false
	for k := n; k >= 2; k-- {
		up := 0.0
		if k < n {
			up = scaleB[k+1]
		}
		base := max(0, up)
		if k < 3 {
			base = up
		}
		closeHalf, upHalf := math.Exp(-base/2), math.Exp((up-base)/2)
		var top float64
		for _, m32 := range sets[start[k]:start[k+1]] {
			mask := int(m32)
			s := bits.TrailingZeros(uint(mask))
			// vertices that can extend the path: above s and outside mask
			ext := full &^ mask &^ (1<<(s+1) - 1)
			for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				var z float64
				if k >= 3 {
					z = e[v*n+s] * closeHalf * closeHalf
				}
				var c float64
				for x := ext; x != 0; x &= x - 1 {
					t := bits.TrailingZeros(uint(x))
					c += e[v*n+t] * h[(mask|1<<t)*n+t]
				}
				z += c * upHalf * upHalf
				h[mask*n+v] = z
				top = max(top, z)
			}
		}
		if top == 0 {
			top = 1
		}
		for _, m32 := range sets[start[k]:start[k+1]] {
			mask := int(m32)
			s := bits.TrailingZeros(uint(mask))
			// a path of two vertices that no larger vertex can extend has no continuation: 0
			open := k >= 3 || full&^mask&^(1<<(s+1)-1) != 0
			for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				h[mask*n+v] /= top
				if open && !(h[mask*n+v] >= linearFloor) {
					thin = true
				}
			}
		}
		scaleB[k] = base + logmath.Log(top)
	}
	return !thin
}

// cycleBackwardLog is cycleBackwardLinear in the log domain, for arc scores too large for it: h
// holds the log-sums themselves (−Inf where no cycle continues the path).
func cycleBackwardLog(n int, w, h []float64) {
	full := 1<<n - 1
	var terms [cyclePartitionMax + 1]float64
	for mask := full; mask >= 1; mask-- {
		s := bits.TrailingZeros(uint(mask))
		k := bits.OnesCount(uint(mask))
		ext := full &^ mask &^ (1<<(s+1) - 1)
		for rest := mask &^ (1 << s); rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			c, top := 0, math.Inf(-1)
			if k >= 3 {
				terms[c] = w[v*n+s]
				top = terms[c]
				c++
			}
			for x := ext; x != 0; x &= x - 1 {
				t := bits.TrailingZeros(uint(x))
				terms[c] = w[v*n+t] + h[(mask|1<<t)*n+t]
				top = max(top, terms[c])
				c++
			}
			if math.IsInf(top, -1) {
				h[mask*n+v] = top
				continue
			}
			h[mask*n+v] = top + logmath.Log(sumExpShifted(terms[:c], top))
		}
	}
}
