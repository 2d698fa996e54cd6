package space

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("permutations", func(p []int64) (Space, error) {
		return newWithMode("permutations", "n_labels", p, permExactHardMax, NewPermutations)
	})
}

// permExactMax is the largest n decoded exactly: the subset DP costs n·2^(n−1) steps and 2^n
// floats, about a millisecond and half a megabyte at n = 16.
const permExactMax = 16

// permExactHardMax is the largest n decoded exactly on demand (DecoderExact): 2^22 floats (32 MiB)
// per concurrent decoding and about a tenth of a second per row.
const permExactHardMax = 22

// Permutations is the space of the n! rankings of n labels (label ranking, thesis §4.3.1).
//
// A ranking is one row of n ranks, as in scikit-lr: y[j] is the position of label j, 1 for the best,
// so y is a permutation of 1..n. ψ has one coordinate per unordered pair u < v in lexicographic
// order (0,1), (0,2), …, (0,n−1), (1,2), …: ψ_uv = +1 when u is ranked before v (y[u] < y[v]) and
// −1 otherwise. The thesis uses ordered pairs; ψ_vu = −ψ_uv, so unordered pairs carry the same
// information at half the dimension.
type Permutations struct {
	n    int
	mode DecoderMode // DecoderApprox forces the approximate decoder at every n
	pool sync.Pool   // *permBuf, so that concurrent Decode calls do not share scratch space
}

// NewPermutations returns the space of rankings of n labels (n ≥ 2).
func NewPermutations(n int) (*Permutations, error) {
	if n < 2 {
		// One label has one ranking and no pairs: ψ would have no coordinates, nothing could be
		// learnt, and a fit on it ended in gonum's panic on a zero-length matrix.
		return nil, fmt.Errorf("space: permutations needs n_labels ≥ 2, got %d", n)
	}
	if err := checkSize("permutations", "n_labels", int64(n), pairDim(n), int64(n)); err != nil {
		return nil, err
	}
	s := &Permutations{n: n}
	s.pool.New = func() any { return &permBuf{} }
	return s, nil
}

// Kind is "permutations".
func (s *Permutations) Kind() string { return "permutations" }

// Params is [n], or [n, decoder mode] when the mode is not auto.
func (s *Permutations) Params() []int64 { return modeParams(s.n, s.mode) }

func (s *Permutations) setMode(m DecoderMode) { s.mode = m }

// Dim is n(n−1)/2, one coordinate per unordered pair of labels.
func (s *Permutations) Dim() int { return s.n * (s.n - 1) / 2 }

// PsiConstantNorm reports true: every ψ(y) is in {−1, 1}^Dim(), so ‖ψ(y)‖² = Dim().
func (s *Permutations) PsiConstantNorm() bool { return true }

// Width is n, one rank per label.
func (s *Permutations) Width() int { return s.n }

// LogCount is log n!.
func (s *Permutations) LogCount() float64 { return permLogFactorial(s.n) }

// Guarantee is 0 up to 16 labels, where Decode is exact, and ½ beyond: the approximate decoder
// starts from the better of a ranking and its reverse, whose scores are opposite (a sibling system,
// thesis §5.4), so its score is at least 0 = (max + min)/2, and local search only raises it.
func (s *Permutations) Guarantee() float64 {
	if s.exact() {
		return 0
	}
	return 0.5
}

func (s *Permutations) exact() bool { return s.mode.exact(s.n, permExactMax) }

// Mean is zero: reversing a ranking negates ψ.
func (s *Permutations) Mean(p []float64) { clear(p) }

// Covariance is C/n!: 1 on the diagonal; for pairs sharing one label, +⅓ when the label is the
// smaller of both pairs or the larger of both (E[ψ_uv ψ_uw] = P(u is first or last of three) −
// P(u is in the middle) = ⅔ − ⅓), −⅓ when it is the larger of one and the smaller of the other;
// 0 for disjoint pairs, which are independent.
func (s *Permutations) Covariance() Operator {
	return orientedPairCov{n: s.n, diag: 1, beta: -1.0 / 3}
}

// Validate checks that y holds each rank 1..n exactly once.
func (s *Permutations) Validate(y []int64) error {
	n := s.n
	if len(y) != n {
		return fmt.Errorf("a ranking of %d labels has %d ranks, got %d values", n, n, len(y))
	}
	holder := make([]int32, n+1) // 1 + the label holding each rank, 0 when none yet
	for j, r := range y {
		if r < 1 || r > int64(n) {
			return fmt.Errorf("label %d has rank %d, outside [1, %d]", j, r, n)
		}
		if holder[r] != 0 {
			return fmt.Errorf("rank %d appears twice (labels %d and %d)", r, holder[r]-1, j)
		}
		holder[r] = int32(j + 1)
	}
	return nil
}

// Embed writes ψ_uv = +1 when y[u] < y[v] and −1 otherwise.
func (s *Permutations) Embed(y []int64, psi []float64) {
	k := 0
	for u := 0; u < s.n; u++ {
		yu := y[u]
		for _, yv := range y[u+1 : s.n] {
			psi[k] = pairSign(yu, yv)
			k++
		}
	}
}

// Score returns ⟨u, ψ(y)⟩ without writing ψ (Scorer), the terms in Embed's order.
func (s *Permutations) Score(u []float64, y []int64) float64 {
	var f float64
	k := 0
	for a := 0; a < s.n; a++ {
		ya := y[a]
		for _, yb := range y[a+1 : s.n] {
			f += u[k] * pairSign(ya, yb)
			k++
		}
	}
	return f
}

// pairSign is ψ_uv of ranks ya, yb of distinct labels: +1 when u comes first (ya < yb), else −1.
// It is computed from the sign bit of the difference, without a branch: on uniform proposals
// the branch went either way at random and its mispredictions dominated Embed.
func pairSign(ya, yb int64) float64 {
	return float64(((yb - ya) >> 63) | 1)
}

// Sample draws a uniform ranking by a Fisher–Yates shuffle of the ranks.
func (s *Permutations) Sample(r *rand.Rand, y []int64) {
	for j := range y {
		y[j] = int64(j + 1)
	}
	for j := s.n - 1; j > 0; j-- {
		k := r.IntN(j + 1)
		y[j], y[k] = y[k], y[j]
	}
}

// Decode solves the linear ordering problem max Σ_{u<v} u_uv ψ_uv. Up to 16 labels it is exact, by
// dynamic programming over the set of labels placed first; beyond, it is the ½-approximation of
// Guarantee improved by insertion moves until none improves. It is safe for concurrent use.
func (s *Permutations) Decode(u []float64, y []int64) {
	n := s.n
	if n == 1 {
		y[0] = 1
		return
	}
	buf := s.pool.Get().(*permBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	scale := permGainMatrix(n, u, w)
	if s.exact() && haveBatch && n <= permBatchMax {
		permGainTables(n, w, buf)
		permDecodeVector(n, 1, buf, y)
		return
	}
	order := permGrowInt(&buf.order, n)
	if s.exact() {
		permDecodeExact(n, w, buf, order)
	} else {
		permDecodeApprox(n, w, scale, order)
	}
	for pos, label := range order {
		y[label] = int64(pos + 1)
	}
}

// Enumerate lists the rankings in lexicographic order of their rank rows.
func (s *Permutations) Enumerate(yield func(y []int64) bool) error {
	if s.n > 12 || permFactorial(s.n) > MaxEnumerate {
		return ErrTooLarge
	}
	y := make([]int64, s.n)
	for j := range y {
		y[j] = int64(j + 1)
	}
	for {
		if !yield(y) {
			return nil
		}
		if !permNext(y) {
			return nil
		}
	}
}

// permBuf is the scratch space of one Decode call.
type permBuf struct {
	w      []float64 // w[a·n+b]: the score of ranking a before b
	lo, hi []float64 // per label, its gain after each subset of the low and of the high labels
	dp     []float64 // best score (LogPartition: log-sum) of the subsets placed first
	back   []float64 // LogPartition: (log-)sum over the orders of the labels after each subset
	before []float64 // LogPartition: P(a before b) at [a·n+b]
	rows   []float64 // LogPartition: step probabilities summed by low and by high half (permBeforeAcc)
	cols   []float64
	elo    []float64 // LogPartition: exp of lo and hi
	ehi    []float64
	scaleF []float64 // LogPartition: the log rescalings of each level, forward and backward
	scaleB []float64
	order  []int
}

// permGainMatrix fills w[a·n+b] with what ranking a before b (or the arc a→b) adds to ⟨u, ψ⟩;
// w is antisymmetric. It returns max |w|, the scale of rounding tolerances.
func permGainMatrix(n int, u, w []float64) float64 {
	var m float64
	k := 0
	for a := 0; a < n; a++ {
		w[a*n+a] = 0
		for b := a + 1; b < n; b++ {
			x := permFiniteScore(n, u[k])
			w[a*n+b], w[b*n+a] = x, -x
			m = max(m, math.Abs(x))
			k++
		}
	}
	return m
}

// permFiniteScore maps a score to one that keeps every sum of n² scores finite: NaN counts as 0
// and ±Inf as a value that still dominates. Without it a NaN or Inf would defeat every
// comparison of the decoders, which must still return a valid structure.
func permFiniteScore(n int, x float64) float64 {
	if x != x {
		return 0
	}
	lim := math.MaxFloat64 / float64(4*n*n)
	return max(-lim, min(lim, x))
}

// permDecodeExact writes an optimal order (labels, best first) into order.
//
// dp[T] is the best score of placing the labels of T first; appending v after T\{v} adds
// c(v, T\{v}) = Σ_{a ∈ T\{v}} w[a][v]. Splitting the subset into its low h and high n−h labels,
// c(v, S) = lo_v[S_low] + hi_v[S_high] with tables of 2^h + 2^(n−h) entries per label, a few
// kilobytes at n = 16 instead of the n·2^n entries of a full table, and both stay in cache.
//
// It is the portable decoder: where the vector kernels run (haveBatch), Decode takes
// permDecodeVector up to permBatchMax labels.
func permDecodeExact(n int, w []float64, buf *permBuf, order []int) {
	h := n / 2
	hb := n - h
	lowMask := 1<<h - 1
	lo, hi := permGainTables(n, w, buf)
	full := 1<<n - 1
	dp := permGrow(&buf.dp, full+1)
	dp[0] = 0
	for set := 1; set <= full; set++ {
		// Two running maxima, so that the latency of max does not chain through every candidate.
		b0, b1 := math.Inf(-1), math.Inf(-1)
		for rest := set; rest != 0; {
			v := bits.TrailingZeros(uint(rest))
			rest &= rest - 1
			prev := set &^ (1 << v)
			b0 = max(b0, dp[prev]+lo[v<<h|prev&lowMask]+hi[v<<hb|prev>>h])
			if rest == 0 {
				break
			}
			v = bits.TrailingZeros(uint(rest))
			rest &= rest - 1
			prev = set &^ (1 << v)
			b1 = max(b1, dp[prev]+lo[v<<h|prev&lowMask]+hi[v<<hb|prev>>h])
		}
		dp[set] = max(b0, b1)
	}
	// Walk back: the max picked one of the sums it compared, so recomputing them finds it exactly.
	set := full
	for pos := n - 1; pos >= 0; pos-- {
		v := 0
		for rest := set; rest != 0; rest &= rest - 1 {
			v = bits.TrailingZeros(uint(rest))
			prev := set &^ (1 << v)
			if dp[prev]+lo[v<<h|prev&lowMask]+hi[v<<hb|prev>>h] == dp[set] {
				break
			}
		}
		order[pos] = v
		set &^= 1 << v
	}
}

// permDecodeApprox writes a locally optimal order into order, starting from the better of the
// Borda order (labels by their total gain Σ_b w[a][b]) and its reverse.
func permDecodeApprox(n int, w []float64, scale float64, order []int) {
	borda := make([]float64, n)
	for a := 0; a < n; a++ {
		var t float64
		for _, x := range w[a*n : (a+1)*n] {
			t += x
		}
		borda[a] = t
		order[a] = a
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case borda[a] > borda[b]:
			return -1
		case borda[a] < borda[b]:
			return 1
		}
		return 0
	})
	if permOrderScore(n, w, order) < 0 {
		slices.Reverse(order)
	}
	permInsertionSearch(n, w, order, 1e-12*scale)
}

// permOrderScore is Σ_{i<j} w[order[i]][order[j]].
func permOrderScore(n int, w []float64, order []int) float64 {
	var f float64
	for i, a := range order {
		row := w[a*n : (a+1)*n]
		for _, b := range order[i+1:] {
			f += row[b]
		}
	}
	return f
}

// permInsertionSearch moves single labels to their best position until no move gains more than
// tol. Moving x past z flips the pair, changing the score by ∓2·w[x][z]; adjacent swaps are the
// shortest such moves. Each accepted move gains more than tol, so the search ends.
func permInsertionSearch(n int, w []float64, order []int, tol float64) {
	for sweep := 0; sweep < 100*n+100; sweep++ {
		moved := false
		for i := 0; i < n; i++ {
			x := order[i]
			row := w[x*n : (x+1)*n]
			best, to := tol, i
			var acc float64
			for j := i + 1; j < n; j++ {
				acc -= 2 * row[order[j]]
				if acc > best {
					best, to = acc, j
				}
			}
			acc = 0
			for j := i - 1; j >= 0; j-- {
				acc += 2 * row[order[j]]
				if acc > best {
					best, to = acc, j
				}
			}
			if to > i {
				copy(order[i:to], order[i+1:to+1])
				order[to] = x
				moved = true
			} else if to < i {
				copy(order[to+1:i+1], order[to:i])
				order[to] = x
				moved = true
			}
		}
		if !moved {
			return
		}
	}
}

// orientedPairCov is the covariance shape shared by permutations and directed cycles, whose
// features are oriented pairs (ψ_vu = −ψ_uv): diag on the diagonal; for pairs sharing one vertex,
// −beta when the vertex is at the same end of both pairs (the smaller or the larger of both) and
// +beta when it is the larger of one and the smaller of the other; 0 for disjoint pairs.
//
// MulVec uses the row sums R[a] = Σ_w x_aw of the antisymmetric matrix x_vu = −x_uv:
// (S·x)_uv = (diag + 2·beta)·x_uv − beta·R[u] + beta·R[v], in O(d) time and O(n) memory.
type orientedPairCov struct {
	n          int
	diag, beta float64
}

func (o orientedPairCov) Dim() int { return o.n * (o.n - 1) / 2 }

func (o orientedPairCov) MulVec(dst, x []float64) {
	n := o.n
	r := make([]float64, n)
	k := 0
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			r[u] += x[k]
			r[v] -= x[k]
			k++
		}
	}
	c := o.diag + 2*o.beta
	k = 0
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			dst[k] = c*x[k] - o.beta*r[u] + o.beta*r[v]
			k++
		}
	}
}

func (o orientedPairCov) At(i, j int) float64 {
	if i == j {
		return o.diag
	}
	u, v := lexPair(o.n, i)
	a, b := lexPair(o.n, j)
	switch {
	case u == a || v == b:
		return -o.beta
	case v == a || u == b:
		return o.beta
	}
	return 0
}

// lexPairIndex is the position of the pair u < v among the pairs of n vertices in lexicographic
// order.
func lexPairIndex(n, u, v int) int { return u*(2*n-u-1)/2 + v - u - 1 }

// lexPair inverts lexPairIndex in O(1): the pairs starting with u begin at u(2n−u−1)/2, so u is the
// smaller root of a quadratic, corrected for rounding.
func lexPair(n, k int) (u, v int) {
	b := float64(2*n - 1)
	u = int((b - math.Sqrt(b*b-8*float64(k))) / 2)
	u = max(0, min(u, n-2))
	for u > 0 && lexPairIndex(n, u, u+1) > k {
		u--
	}
	for u < n-2 && lexPairIndex(n, u+1, u+2) <= k {
		u++
	}
	return u, k - lexPairIndex(n, u, u+1) + u + 1
}

// permLogFactorial is log k!, exact to rounding for small k where Lgamma's absolute error would
// show in relative terms.
func permLogFactorial(k int) float64 {
	if k <= 20 {
		return logmath.Log(permFactorial(k))
	}
	l, _ := math.Lgamma(float64(k) + 1)
	return l
}

// permFactorial is k! as a float64 (exact up to k = 18).
func permFactorial(k int) float64 {
	f := 1.0
	for i := 2; i <= k; i++ {
		f *= float64(i)
	}
	return f
}

// permNext advances y to the next permutation in lexicographic order, or reports false
// after the last.
func permNext(y []int64) bool {
	i := len(y) - 2
	for i >= 0 && y[i] >= y[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(y) - 1
	for y[j] <= y[i] {
		j--
	}
	y[i], y[j] = y[j], y[i]
	slices.Reverse(y[i+1:])
	return true
}

func permGrow(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	return (*b)[:n]
}

func permGrowInt(b *[]int, n int) []int {
	if cap(*b) < n {
		*b = make([]int, n)
	}
	return (*b)[:n]
}
