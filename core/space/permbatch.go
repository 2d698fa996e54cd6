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
	n := s.n
	buf := s.pool.Get().(*permBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	lo := permGrow(&buf.lo, batchLanes*n<<(n/2))
	hi := permGrow(&buf.hi, batchLanes*n<<(n-n/2))
	for lane, u := range us {
		permGainMatrix(n, u, w)
		permGainTablesStrided(n, w, lo[lane:], hi[lane:], batchLanes)
	}
	permDecodeVector(n, batchLanes, buf, ys)
}

// permDecodeVector is permDecodeExact on lanes rows (1, for Decode, or batchLanes) whose gain
// tables buf.lo and buf.hi hold entry e of lane l at e·lanes + l (permGainTablesStrided). The
// vector kernel fills the DP table, laid out likewise; lane l's ranks go to ys[l·n : (l+1)·n].
func permDecodeVector(n, lanes int, buf *permBuf, ys []int64) {
	L := lanes
	h := n / 2
	hb := n - h
	lo, hi := buf.lo, buf.hi
	dp := permGrow(&buf.dp, L<<n)
	clear(dp[:L])
	if L == 1 {
		permDP1(&dp[0], &lo[0], &hi[0], n, h)
	} else {
		permDP4(&dp[0], &lo[0], &hi[0], n, h)
	}
	order := permGrowInt(&buf.order, n)
	lowMask := 1<<h - 1
	full := 1<<n - 1
	for lane := range L {
		// Walk back as permDecodeExact does, on this lane's entries: the same sums in the same
		// order as the kernel compared, so == finds the one it kept.
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

// permGainTablesStrided fills the gain tables of permGainTables with a stride: the gain of the
// low subset sub for label v at lo[(v<<h | sub)·stride] (h = n/2), and likewise for hi, so that
// the lanes of a batch sit side by side.
func permGainTablesStrided(n int, w, lo, hi []float64, stride int) {
	h := n / 2
	hb := n - h
	for v := 0; v < n; v++ {
		base := v << h
		lo[base*stride] = 0
		for sub := 1; sub < 1<<h; sub++ {
			a := bits.TrailingZeros(uint(sub))
			lo[(base|sub)*stride] = lo[(base|sub&(sub-1))*stride] + w[a*n+v]
		}
		base = v << hb
		hi[base*stride] = 0
		for sub := 1; sub < 1<<hb; sub++ {
			a := h + bits.TrailingZeros(uint(sub))
			hi[(base|sub)*stride] = hi[(base|sub&(sub-1))*stride] + w[a*n+v]
		}
	}
}
