package space

import (
	"math"
	"math/bits"
)

func (s *DirectedCycles) batchable() bool { return s.exact() && s.n <= cycleExactMax }

// decodeBatch decodes batchLanes rows as Decode does when exact.
func (s *DirectedCycles) decodeBatch(us *[batchLanes][]float64, ys []int64) {
	s.decodeBatchWith(us, ys, permGainMatrix)
}

func (s *UndirectedCycles) batchable() bool { return s.exact() && s.n <= cycleExactMax }

// decodeBatch decodes batchLanes rows as Decode does when exact, in the canonical orientation.
func (s *UndirectedCycles) decodeBatch(us *[batchLanes][]float64, ys []int64) {
	s.decodeBatchWith(us, ys, ucycleWeights)
	for lane := range batchLanes {
		cycleCanonical(ys[lane*s.n : (lane+1)*s.n])
	}
}

// cycleLaneWeights writes one lane of the transposed arc weights: w[a·n+b], the arc a→b, at
// wt[(b·n+a)·stride], so that the weights into a vertex are one run of entries and the lanes of
// a batch sit side by side.
func cycleLaneWeights(n int, w, wt []float64, stride int) {
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			wt[(b*n+a)*stride] = w[a*n+b]
		}
	}
}

// cycleDecodeVector is cycleDecodeExact on lanes rows (1, for Decode, or batchLanes) under the
// lanes' transposed arc weights in buf.wt (cycleLaneWeights with stride lanes); it writes lane
// l's cycle into ys[l·n : (l+1)·n].
//
// The Held–Karp paths are split by their start s, the smallest vertex of the cycle: those from s
// only pass through vertices above s, and the vector kernel stores them compacted by the rank of
// their end within the set they visit. The table of the largest start (s = 0) then holds
// (n−1)·2^(n−2) entries per lane instead of n·2^n, 360 KiB for four lanes at n = 12, and is the
// only one in use while it is filled; each start gets its own region, so that the best cycle's
// table is still there for the walk back.
func cycleDecodeVector(n, lanes int, buf *cycleBuf, ys []int64) {
	L := lanes
	off := cycleRankOffsets()
	wt := buf.wt
	var region [cycleExactMax]int // first entry of each start's paths
	total := 0
	for s := 0; s+2 < n; s++ {
		m := n - 1 - s
		region[s] = total
		total += m << (m - 1)
	}
	dp := permGrow(&buf.dp, total*L)
	var best [batchLanes]float64
	var bestStart [batchLanes]int
	var bestAt [batchLanes]int64
	for lane := range best {
		best[lane] = math.Inf(-1)
	}
	for s := 0; s+2 < n; s++ {
		startBest := [batchLanes]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		var startAt [batchLanes]int64
		if L == 1 {
			cycleDP1(&dp[region[s]], &off[0], &wt[0], n, s, &startBest, &startAt)
		} else {
			cycleDP4(&dp[region[s]*L], &off[0], &wt[0], n, s, &startBest, &startAt)
		}
		for lane := range L {
			if startBest[lane] > best[lane] {
				best[lane], bestStart[lane], bestAt[lane] = startBest[lane], s, startAt[lane]
			}
		}
	}
	for lane := range L {
		// Walk back as cycleDecodeExact does: the same sums in the same order as the kernel
		// compared, so == finds the one it kept. Path ends are numbered from s+1.
		y := ys[lane*n : (lane+1)*n]
		for v := range y {
			y[v] = -1
		}
		s := bestStart[lane]
		tab := dp[region[s]*L+lane:]
		set, last := int(bestAt[lane]>>5), int(bestAt[lane]&31)
		y[s+1+last] = int64(s)
		for {
			prevSet := set &^ (1 << last)
			if prevSet == 0 {
				y[s] = int64(s + 1 + last)
				break
			}
			target := tab[(int(off[set])+bits.OnesCount(uint(set&(1<<last-1))))*L]
			into := wt[((s+1+last)*n+s+1)*L+lane:]
			first := int(off[prevSet])
			prev := 0
			for p, r := prevSet, 0; p != 0; p, r = p&(p-1), r+1 {
				l := bits.TrailingZeros(uint(p))
				if tab[(first+r)*L]+into[l*L] == target {
					prev = l
					break
				}
			}
			y[s+1+prev] = int64(s + 1 + last)
			set, last = prevSet, prev
		}
	}
}

// decodeBatchWith decodes batchLanes rows of a cycle space whose arc weights weights writes (n×n,
// row-major) from a row of scores.
func (b *cycleBase) decodeBatchWith(us *[batchLanes][]float64, ys []int64, weights func(n int, u, w []float64) float64) {
	n := b.n
	buf := b.pool.Get().(*cycleBuf)
	defer b.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	wt := permGrow(&buf.wt, batchLanes*n*n)
	for lane, u := range us {
		weights(n, u, w)
		cycleLaneWeights(n, w, wt[lane:], batchLanes)
	}
	cycleDecodeVector(n, batchLanes, buf, ys)
}
