package space

import "math/bits"

// permBatchMax is the largest n whose rankings decodeBatch decodes: the batch's DP table holds
// batchLanes·2^n floats, 2 MiB at n = 16, where the row-by-row decoder takes over (DecoderExact
// up to permExactHardMax).
const permBatchMax = permExactMax

func (s *Permutations) batchable() bool { return s.exact() && s.n >= 2 && s.n <= permBatchMax }

// decodeBatch is permDecodeExact on batchLanes rows at once: the gain tables and the DP table
// hold the rows' values side by side (entry e of lane l at e·batchLanes + l), permDP4 fills the
// DP, and each lane walks back on its own.
func (s *Permutations) decodeBatch(us *[batchLanes][]float64, ys []int64) {
	const L = batchLanes
	n := s.n
	h := n / 2
	hb := n - h
	buf := s.pool.Get().(*permBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	lo := permGrow(&buf.lo, L*n<<h)
	hi := permGrow(&buf.hi, L*n<<hb)
	for lane, u := range us {
		permGainMatrix(n, u, w)
		permGainTablesLane(n, w, h, lo[lane:], hi[lane:])
	}
	dp := permGrow(&buf.dp, L<<n)
	clear(dp[:L])
	permDP4(&dp[0], &lo[0], &hi[0], n, h)
	order := permGrowInt(&buf.order, n)
	lowMask := 1<<h - 1
	full := 1<<n - 1
	for lane := range L {
		// Walk back as permDecodeExact does, on this lane's entries: the same sums in the same
		// order as permDP4 compared, so == finds the one it kept.
		set := full
		for pos := n - 1; pos >= 0; pos-- {
			v := 0
			for rest := set; rest != 0; rest &= rest - 1 {
				v = bits.TrailingZeros(uint(rest))
				prev := set &^ (1 << v)
				if dp[prev*L+lane]+lo[(v<<h|prev&lowMask)*L+lane]+hi[(v<<hb|prev>>h)*L+lane] == dp[set*L+lane] {
					break
				}
			}
			order[pos] = v
			set &^= 1 << v
		}
		y := ys[lane*n : (lane+1)*n]
		for pos, label := range order {
			y[label] = int64(pos + 1)
		}
	}
}

// permGainTablesLane is permGainTables writing one lane of a batch: the gain of the low subset
// sub for label v at lo[(v<<h | sub)·batchLanes], and likewise for hi.
func permGainTablesLane(n int, w []float64, h int, lo, hi []float64) {
	const L = batchLanes
	hb := n - h
	for v := 0; v < n; v++ {
		base := v << h
		lo[base*L] = 0
		for sub := 1; sub < 1<<h; sub++ {
			a := bits.TrailingZeros(uint(sub))
			lo[(base|sub)*L] = lo[(base|sub&(sub-1))*L] + w[a*n+v]
		}
		base = v << hb
		hi[base*L] = 0
		for sub := 1; sub < 1<<hb; sub++ {
			a := h + bits.TrailingZeros(uint(sub))
			hi[(base|sub)*L] = hi[(base|sub&(sub-1))*L] + w[a*n+v]
		}
	}
}
