package space

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

// permPartitionMax is the largest n for which Permutations computes log Z and the pairwise
// marginals exactly. The subset programme costs about n·2^n multiplications and n²·2^(n−2)
// additions per score vector and holds 2·2^n floats: about 15 ms of one core and 1 MiB at n = 16
// (BenchmarkPermutationsPartition), against microseconds per chain step of the samplers.
const permPartitionMax = 16

// HasPartition is true up to permPartitionMax labels.
func (s *Permutations) HasPartition() bool { return s.n <= permPartitionMax }

// permLogZMax is the largest n for which Permutations computes log Z alone (LogZ), for the
// log-partition function and log-likelihoods of models too large for exact marginals and fits:
// the forward half of the programme, n·2^(n−1) steps and 2^n floats per score vector (4 MiB at
// n = 19). A row takes up to 0.1 s (BenchmarkPermutationsLogZ; in the log domain, at large scores,
// 88 ms at 19 labels and 0.21 s at 20), which Ctrl-C waits for: the programme has no stop.
const permLogZMax = 19

// HasLogZ is true up to permLogZMax labels.
func (s *Permutations) HasLogZ() bool { return s.n <= permLogZMax }

// LogZ returns log Z(u), LogPartition without the marginals, at any size up to permLogZMax.
func (s *Permutations) LogZ(u []float64) float64 { return s.LogPartition(u, nil) }

// PartitionBytes bounds what LogPartition, LogZ and ScoreSampler allocate beyond O(Dim())
// vectors: the forward and backward tables over the 2^n label sets, the gain tables over the
// halves, and the 2^n subsets in level order (permLevelsOf, kept for later calls at this size):
// about 1.5 MB at n = 16 and 11 MB at n = 19.
func (s *Permutations) PartitionBytes() int64 {
	n := int64(s.n)
	if s.n > permLogZMax {
		return 0 // no partition: nothing is allocated
	}
	halves := n<<(n/2) + n<<(n-n/2)
	return 8*(2<<n+3*halves+2*n*n) + 4<<n
}

// LogPartition sums over the n! rankings by the subset programme of Decode with (+, ×) in place
// of (max, +) (in the log domain when the scores are too large for exp). A ranking is built by appending labels; appending v after the set T of
// labels placed so far adds c(v, T) = Σ_{a ∈ T} w[a][v] to ⟨u, ψ⟩, so with
//
//	F(T) = log Σ_{orders of T} exp(score),  F(T) = LSE_{v ∈ T} F(T∖v) + c(v, T∖v),
//	B(T) = log Σ_{orders of the rest after T} exp(score),  B(T) = LSE_{v ∉ T} c(v, T) + B(T ∪ v),
//
// log Z = F(all) = B(∅), and the probability that the ranking passes through T and then places v
// is q(T, v) = exp(F(T) + c(v, T) + B(T ∪ v) − log Z). Label a precedes v exactly when a ∈ T at
// the step that places v, so P(a before v) = Σ_{T ∋ a, v ∉ T} q(T, v), and E[ψ_uv] = 2P(u before
// v) − 1 for u < v.
func (s *Permutations) LogPartition(u, mean []float64) float64 {
	n := s.n
	if n == 1 {
		return 0
	}
	buf := s.pool.Get().(*permBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	permGainMatrix(n, u, w)
	lo, hi := permGainTables(n, w, buf)
	// Every gain c(v, T) lies within ±reach. Within permLinearReach the programme runs on
	// exp(c) = exp(lo)·exp(hi), with products where the log domain needs an exponential per
	// term, and rescales each level of subsets to keep its values near 1.
	if permReach(n, w) <= permLinearReach {
		if logZ, ok := permPartitionLinear(n, lo, hi, buf, mean); ok {
			return logZ
		}
	}
	return permPartitionLog(n, lo, hi, buf, mean)
}

// permReach bounds the gains |c(v, T)| of the gain matrix w: max_v Σ_a |w[a][v]|.
func permReach(n int, w []float64) float64 {
	var reach float64
	for v := 0; v < n; v++ {
		var r float64
		for a := 0; a < n; a++ {
			r += math.Abs(w[a*n+v])
		}
		reach = max(reach, r)
	}
	return reach
}

// permLinearReach bounds the gains |c(v, T)| with which permPartitionLinear works: products of a
// level's values (at most 1 after rescaling) with exp(±300) neither overflow nor lose any term
// that matters against the level's largest (the smallest normal float64 is e^−708).
const permLinearReach = 300

// permLevels returns the 2^n subsets of n labels ordered by size (the levels of the programme),
// and where each level starts: subsets of size k are sets[start[k]:start[k+1]].
func permLevels(n int) (sets []int32, start []int) {
	start = make([]int, n+2)
	for set := 0; set < 1<<n; set++ {
		start[bits.OnesCount(uint(set))+1]++
	}
	for k := 1; k <= n+1; k++ {
		start[k] += start[k-1]
	}
	sets = make([]int32, 1<<n)
	next := slices.Clone(start)
	for set := 0; set < 1<<n; set++ {
		k := bits.OnesCount(uint(set))
		sets[next[k]] = int32(set)
		next[k]++
	}
	return sets, start
}

// permPartitionLinear is LogPartition's programme on Z(T) = exp(F(T) − L_|T|) and
// R(T) = exp(B(T) − M_|T|), where L_k and M_k are the logs of the rescalings of level k. When a
// value fell below linearFloor, a level's values spanned more than float64's range: for the
// marginals the backward programme checks that nothing that mattered was lost (permMassKept), and
// for log Z alone it reports false at once; it reports false too when something was lost
// (structured gains of a few hundred: a block of 6 labels at 60 per pair among 12 gave log Z 0.34
// off and NaN marginals), and LogPartition sums in logs instead.
func permPartitionLinear(n int, lo, hi []float64, buf *permBuf, mean []float64) (float64, bool) {
	h := n / 2
	hb := n - h
	lowMask := 1<<h - 1
	full := 1<<n - 1
	elo, ehi := permGrow(&buf.elo, len(lo)), permGrow(&buf.ehi, len(hi))
	for i, x := range lo {
		elo[i] = math.Exp(x)
	}
	for i, x := range hi {
		ehi[i] = math.Exp(x)
	}
	gain := func(v, set int) float64 { return elo[v<<h|set&lowMask] * ehi[v<<hb|set>>h] }
	sets, start := permLevelsOf(n)
	scaleF := permGrow(&buf.scaleF, n+1) // L_k
	scaleB := permGrow(&buf.scaleB, n+1) // M_k

	f := permGrow(&buf.dp, full+1)
	f[0], scaleF[0] = 1, 0
	thin := false // a value fell below linearFloor
	for k := 1; k <= n; k++ {
		level := sets[start[k]:start[k+1]]
		var top float64
		for _, s32 := range level {
			set := int(s32)
			var z float64
			for rest := set; rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				prev := set &^ (1 << v)
				z += f[prev] * gain(v, prev)
			}
			f[set] = z
			top = max(top, z)
		}
		for _, s32 := range level {
			if f[s32] /= top; !(f[s32] >= linearFloor) {
				thin = true
			}
		}
		scaleF[k] = scaleF[k-1] + logmath.Log(top)
	}
	logZ := scaleF[n] + logmath.Log(f[full])
	if mean == nil {
		// log Z alone: after a thin value the log domain costs less than the backward programme
		// and the mass check, which may send it there anyway (at 19 labels and structured scores,
		// 0.14 s instead of 0.1 s, which Ctrl-C would wait for)
		return logZ, !thin
	}
	// The backward programme's terms gain(v, T)·R(T ∪ v) are, times Z(T) and the level's
	// normalisation, the step probabilities q(T, v): one pass computes both.
	b := permGrow(&buf.back, full+1)
	b[full], scaleB[n] = 1, 0
	acc := newPermBeforeAcc(n, buf)
	for k := n - 1; k >= 0; k-- {
		// q(T, v) = Z(T)·exp(c(v, T))·R(T ∪ v) · exp(L_k + M_{k+1} − log Z) for |T| = k.
		norm := math.Exp(scaleF[k] + scaleB[k+1] - logZ)
		level := sets[start[k]:start[k+1]]
		var top float64
		for _, s32 := range level {
			set := int(s32)
			low, high := set&lowMask, set>>h
			fs := f[set] * norm
			var z float64
			for rest := full &^ set; rest != 0; rest &= rest - 1 {
				v := bits.TrailingZeros(uint(rest))
				t := elo[v<<h|low] * ehi[v<<hb|high] * b[set|1<<v]
				z += t
				q := t * fs
				acc.rows[v<<h|low] += q
				acc.cols[v<<hb|high] += q
			}
			b[set] = z
			top = max(top, z)
		}
		for _, s32 := range level {
			if b[s32] /= top; !(b[s32] >= linearFloor) {
				thin = true
			}
		}
		scaleB[k] = scaleB[k+1] + logmath.Log(top)
	}
	if thin && !permMassKept(n, f, b, scaleF, scaleB, logZ) {
		return 0, false
	}
	permMarginals(n, acc.before(buf), mean)
	return logZ, true
}

// permMassKept checks, after a linear programme in which some value fell below linearFloor,
// that no mass was lost with it: every ranking passes through exactly one set of each size, so
// at each level k, Σ_{|T| = k} Z(T)·R(T)·e^{L_k + M_k} is Z, from the forward (log Z) and the
// backward programme alike (to 1e-9). Random scores lose nothing that matters (at 14 labels and
// gains of scale 20 most runs have such values, and agree with the log domain to 3e-13);
// structured ones can (TestRankingsBlockAtStructuredScores).
func permMassKept(n int, f, b, scaleF, scaleB []float64, logZ float64) bool {
	sets, start := permLevelsOf(n)
	for k := 0; k <= n; k++ {
		var sum float64
		for _, s32 := range sets[start[k]:start[k+1]] {
			sum += f[s32] * b[s32]
		}
		// in logs: the mass-carrying sets of a thin run can sit far below both levels' largest
		// values, where the scale factor alone overflows (a review)
		if !(math.Abs(logmath.Log(sum)+scaleF[k]+scaleB[k]-logZ) <= 1e-9) {
			return false
		}
	}
	return true
}

// permPartitionLog is LogPartition's programme in the log domain, for gains too large for
// permPartitionLinear.
func permPartitionLog(n int, lo, hi []float64, buf *permBuf, mean []float64) float64 {
	h := n / 2
	hb := n - h
	lowMask := 1<<h - 1
	gain := func(v, set int) float64 { return lo[v<<h|set&lowMask] + hi[v<<hb|set>>h] }
	full := 1<<n - 1
	f := permGrow(&buf.dp, full+1)
	f[0] = 0
	var terms [permLogZMax]float64
	for set := 1; set <= full; set++ {
		k, top := 0, math.Inf(-1)
		for rest := set; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			prev := set &^ (1 << v)
			t := f[prev] + gain(v, prev)
			terms[k] = t
			top = max(top, t)
			k++
		}
		f[set] = top + logmath.Log(sumExpShifted(terms[:k], top))
	}
	logZ := f[full]
	if mean == nil {
		return logZ
	}
	// As in permPartitionLinear, the backward terms give the step probabilities in the same pass.
	b := permGrow(&buf.back, full+1)
	b[full] = 0
	acc := newPermBeforeAcc(n, buf)
	for set := full - 1; set >= 0; set-- {
		low, high := set&lowMask, set>>h
		k, top := 0, math.Inf(-1)
		for rest := full &^ set; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			t := gain(v, set) + b[set|1<<v]
			terms[k] = t
			top = max(top, t)
			k++
			q := math.Exp(f[set] + t - logZ)
			acc.rows[v<<h|low] += q
			acc.cols[v<<hb|high] += q
		}
		b[set] = top + logmath.Log(sumExpShifted(terms[:k], top))
	}
	permMarginals(n, acc.before(buf), mean)
	return logZ
}

// permBeforeAcc sums the step probabilities q(T, v) into P(a before v) = Σ_{T ∋ a, v ∉ T} q(T, v)
// without visiting the members of every T: q is added to rows[v][T_low] and cols[v][T_high]
// (the halves of T as in permGainTables), and P(a before v) is then the sum of rows[v] over the
// low halves that hold a (a low label) or of cols[v] over the high halves that hold a. That is two
// additions per (T, v) instead of |T|: the n²/4 factor of the marginals becomes 2.
type permBeforeAcc struct {
	n, h       int
	rows, cols []float64
}

func newPermBeforeAcc(n int, buf *permBuf) permBeforeAcc {
	h := n / 2
	rows := permGrow(&buf.rows, n<<h)
	cols := permGrow(&buf.cols, n<<(n-h))
	clear(rows)
	clear(cols)
	return permBeforeAcc{n: n, h: h, rows: rows, cols: cols}
}

// before returns P(a before v) at [a·n+v] from the accumulated halves.
func (acc permBeforeAcc) before(buf *permBuf) []float64 {
	n, h := acc.n, acc.h
	hb := n - h
	before := permGrow(&buf.before, n*n)
	clear(before)
	for v := 0; v < n; v++ {
		for low, q := range acc.rows[v<<h : (v+1)<<h] {
			for in := low; in != 0; in &= in - 1 {
				before[bits.TrailingZeros(uint(in))*n+v] += q
			}
		}
		for high, q := range acc.cols[v<<hb : (v+1)<<hb] {
			for in := high; in != 0; in &= in - 1 {
				before[(h+bits.TrailingZeros(uint(in)))*n+v] += q
			}
		}
	}
	return before
}

// permMarginals writes E[ψ_av] = P(a before v) − P(v before a) for the pairs a < v from
// before[a·n+v] = P(a before v). The two probabilities add up to 1 up to rounding; their
// difference is the better-conditioned estimate when both are near ½.
func permMarginals(n int, before, mean []float64) {
	k := 0
	for a := 0; a < n; a++ {
		for v := a + 1; v < n; v++ {
			mean[k] = max(-1, min(1, before[a*n+v]-before[v*n+a]))
			k++
		}
	}
}

// sumExpShifted returns Σ exp(t − top) for top = max t.
func sumExpShifted(terms []float64, top float64) float64 {
	var s float64
	for _, t := range terms {
		s += math.Exp(t - top)
	}
	return s
}

// permGainTables fills, for each label v, the gains c(v, S) = Σ_{a ∈ S} w[a][v] of the subsets S of
// the low n/2 labels (lo) and of the high labels (hi), so that c(v, T) = lo_v[T_low] + hi_v[T_high]
// (see permDecodeExact).
func permGainTables(n int, w []float64, buf *permBuf) (lo, hi []float64) {
	lo = permGrow(&buf.lo, n<<(n/2))
	hi = permGrow(&buf.hi, n<<(n-n/2))
	permGainTablesStrided(n, w, lo, hi, 1)
	return lo, hi
}

// permLevelTables caches permLevels by n: the orders are shared by every call at that size.
var permLevelTables sync.Map // int → *permLevelTable

type permLevelTable struct {
	once  sync.Once
	sets  []int32
	start []int
}

// permLevelsOf returns permLevels(n), computed once per n.
func permLevelsOf(n int) ([]int32, []int) {
	t, ok := permLevelTables.Load(n)
	if !ok { // LoadOrStore alone would allocate a table at every call, for each row of a batch
		t, _ = permLevelTables.LoadOrStore(n, &permLevelTable{})
	}
	tab := t.(*permLevelTable)
	tab.once.Do(func() { tab.sets, tab.start = permLevels(n) })
	return tab.sets, tab.start
}
