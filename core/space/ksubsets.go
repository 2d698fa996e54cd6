package space

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/logmath"
	"math"
)

func init() {
	Register("ksubsets", func(p []int64) (Space, error) {
		if err := wantParams("ksubsets", p, 2); err != nil {
			return nil, err
		}
		return NewKSubsets(int(p[0]), int(p[1]))
	})
}

// KSubsets is the space of the label sets with exactly k of n labels (the thesis' ℓ-label
// prediction; k = 1 is multiclass). A structure is a 0/1 row of length n with k ones; ψ is that
// indicator, d = n.
//
// Under the uniform distribution each label is in with probability p = k/n and two different
// labels are both in with probability k(k−1)/(n(n−1)), so S_ii = (k/n)(1 − k/n) and, off the
// diagonal, S_ij = k(k−1)/(n(n−1)) − (k/n)² = −k(n−k)/(n²(n−1)): a diagonal plus a constant.
// In counts: |Y| = C(n,k), Ψ = C(n−1,k−1) 1 and C = C(n−2,k−2) 11ᵀ + C(n−2,k−1) I; the thesis
// prints C(n−1,k−1) as the coefficient of I, which overstates the diagonal by C(n−2,k−2).
// Decoding is exact: the k largest scores.
type KSubsets struct {
	n, k int
	pool sync.Pool // *[]int32 of length n, scratch for Decode
	// tables is scratch for LogPartition: *[]float64 of 2(n+1)(k+1), its two tables. Made at each
	// call, they were the largest garbage of a fit, which computes them for every row at every
	// step: 576 bytes a row at n = 8, k = 3, against the row's 64 bytes of scores.
	tables sync.Pool
}

// NewKSubsets returns the space of k-subsets of n labels, 1 ≤ k ≤ n.
func NewKSubsets(n, k int) (*KSubsets, error) {
	if n < 1 {
		return nil, fmt.Errorf("space: ksubsets needs n_labels ≥ 1, got %d", n)
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("space: ksubsets needs 1 ≤ k ≤ n_labels = %d, got k = %d", n, k)
	}
	if err := checkSize("ksubsets", "n_labels", int64(n), int64(n), int64(n)); err != nil {
		return nil, err
	}
	s := &KSubsets{n: n, k: k}
	s.pool.New = func() any { b := make([]int32, n); return &b }
	return s, nil
}

// Kind returns "ksubsets".
func (s *KSubsets) Kind() string { return "ksubsets" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *KSubsets) PsiZeroOne() bool { return true }

// Params returns (n, k).
func (s *KSubsets) Params() []int64 { return []int64{int64(s.n), int64(s.k)} }

// Dim returns n.
func (s *KSubsets) Dim() int { return s.n }

// Width returns n: a structure is a 0/1 row over the labels.
func (s *KSubsets) Width() int { return s.n }

// LogCount returns log C(n, k).
func (s *KSubsets) LogCount() float64 { return logBinomial(s.n, s.k) }

// Guarantee returns 0: Decode is exact.
func (s *KSubsets) Guarantee() float64 { return 0 }

// Mean writes k/n in every coordinate.
func (s *KSubsets) Mean(p []float64) {
	for i := range p {
		p[i] = float64(s.k) / float64(s.n)
	}
}

// Covariance returns S = diag(k/n − k²/n² − c) + c 11ᵀ with c = k(k−1)/(n(n−1)) − k²/n².
func (s *KSubsets) Covariance() Operator {
	n, k := float64(s.n), float64(s.k)
	p := k / n
	var c float64
	if s.n > 1 {
		// k(k−1)/(n(n−1)) − k²/n² = −k(n−k)/(n²(n−1)), written without cancellation.
		c = -k * (n - k) / (n * n * (n - 1))
	}
	diag := make([]float64, s.n)
	for i := range diag {
		diag[i] = p*(1-p) - c
	}
	return diagPlusConst{diag: diag, c: c}
}

// Validate checks that y is a 0/1 row of length n with exactly k ones.
func (s *KSubsets) Validate(y []int64) error {
	if len(y) != s.n {
		return fmt.Errorf("a k-subset row has %d entries (one per label), got %d", s.n, len(y))
	}
	ones := 0
	for j, v := range y {
		if v != 0 && v != 1 {
			return fmt.Errorf("label %d has value %d, want 0 or 1", j, v)
		}
		ones += int(v)
	}
	if ones != s.k {
		return fmt.Errorf("k-subset has %d labels, want %d", ones, s.k)
	}
	return nil
}

// Embed writes the indicator row itself.
func (s *KSubsets) Embed(y []int64, psi []float64) {
	for j, v := range y {
		psi[j] = float64(v)
	}
}

// Sample draws a k-subset uniformly by selection sampling (Knuth's algorithm S): label j is taken
// with probability (labels still needed)/(labels left), with exact integer draws.
func (s *KSubsets) Sample(r *rand.Rand, y []int64) {
	need := s.k
	for j := 0; j < s.n; j++ {
		if need > 0 && r.IntN(s.n-j) < need {
			y[j] = 1
			need--
		} else {
			y[j] = 0
		}
	}
}

// Decode keeps the k labels with the largest scores (the lower index among ties), in
// O(n log n) time. It is exact and safe for concurrent use.
func (s *KSubsets) Decode(u []float64, y []int64) {
	bp := s.pool.Get().(*[]int32)
	idx := *bp
	for j := range idx {
		idx[j] = int32(j)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := cmp.Compare(u[b], u[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	clear(y)
	for _, j := range idx[:s.k] {
		y[j] = 1
	}
	s.pool.Put(bp)
}

// Enumerate yields the k-subsets in lexicographic order of their label lists.
func (s *KSubsets) Enumerate(yield func(y []int64) bool) error {
	if !binomialAtMost(s.n, s.k, MaxEnumerate) {
		return ErrTooLarge
	}
	c := make([]int, s.k) // the chosen labels, increasing
	for i := range c {
		c[i] = i
	}
	y := make([]int64, s.n)
	for {
		clear(y)
		for _, j := range c {
			y[j] = 1
		}
		if !yield(y) {
			return nil
		}
		i := s.k - 1
		for i >= 0 && c[i] == s.n-s.k+i {
			i--
		}
		if i < 0 {
			return nil
		}
		c[i]++
		for j := i + 1; j < s.k; j++ {
			c[j] = c[j-1] + 1
		}
	}
}

// binomialAtMost reports whether C(n, k) ≤ limit, with exact integer arithmetic.
func binomialAtMost(n, k, limit int) bool {
	k = min(k, n-k)
	c := uint64(1)
	for i := 1; i <= k; i++ {
		c = c * uint64(n-k+i) / uint64(i) // exact: c becomes C(n−k+i, i)
		if c > uint64(limit) {
			return false
		}
	}
	return true
}

// HasPartition is true: log Z and E[ψ] have an O(nk) recursion.
func (s *KSubsets) HasPartition() bool { return true }

// PartitionBytes is what LogPartition allocates beyond O(d) vectors: its forward and backward
// tables, (n+1) rows of k+1 floats (and a slice header) each.
func (s *KSubsets) PartitionBytes() int64 {
	return budget.Mul(2, int64(s.n)+1, int64(s.k+1)*8+24)
}

// LogPartition: Z = e_k(e^{u_1}, …, e^{u_n}), the elementary symmetric polynomial, by the
// recursion e_i(x_1..x_j) = e_i(x_1..x_{j−1}) + x_j e_{i−1}(x_1..x_{j−1}) in log space, O(nk).
// E[ψ_j] = x_j e_{k−1}(all but x_j)/Z, with e_{k−1}(all but x_j) = Σ_{a+b=k−1} e_a(x_<j) e_b(x_>j)
// from forward and backward tables.
func (s *KSubsets) LogPartition(u, mean []float64) float64 {
	n, k := len(u), s.k
	w := (n + 1) * (k + 1)
	buf, _ := s.tables.Get().(*[]float64)
	if buf == nil || len(*buf) != 2*w {
		b := make([]float64, 2*w)
		buf = &b
	}
	defer s.tables.Put(buf)
	fwd := logSymmetricInto(u, k, func(j int) int { return j - 1 }, (*buf)[:w]) // row j: the first j items
	lz := fwd[n*(k+1)+k]
	if mean == nil {
		return lz
	}
	bwd := logSymmetricInto(u, k, func(j int) int { return n - j }, (*buf)[w:]) // row j: the last j items
	neg := math.Inf(-1)
	for j := 0; j < n; j++ {
		acc := neg
		for a := 0; a <= k-1; a++ {
			acc = logmath.AddExp(acc, fwd[j*(k+1)+a]+bwd[(n-1-j)*(k+1)+k-1-a])
		}
		mean[j] = math.Exp(u[j] + acc - lz)
	}
	return lz
}

// logSymmetric returns the table t[j][i] = log e_i of the first j items in the order idx gives
// (item idx(j) is the j-th, j = 1 … n), for i ≤ k: e_i(x_1..x_j) = e_i(x_1..x_{j−1}) + x_j e_{i−1}(x_1..x_{j−1}).
func (s *KSubsets) logSymmetric(u []float64, idx func(j int) int) [][]float64 {
	n, k := len(u), s.k
	flat := logSymmetricInto(u, k, idx, make([]float64, (n+1)*(k+1)))
	t := make([][]float64, n+1)
	for j := range t {
		t[j] = flat[j*(k+1) : (j+1)*(k+1)]
	}
	return t
}

// logSymmetricInto writes logSymmetric's table into t, (len(u)+1) rows of k+1, and returns it.
func logSymmetricInto(u []float64, k int, idx func(j int) int, t []float64) []float64 {
	t[0] = 0
	for i := 1; i <= k; i++ {
		t[i] = math.Inf(-1)
	}
	for j := 1; j <= len(u); j++ {
		x := u[idx(j)]
		prev, row := t[(j-1)*(k+1):j*(k+1)], t[j*(k+1):(j+1)*(k+1)]
		row[0] = 0
		for i := 1; i <= k; i++ {
			row[i] = logmath.AddExp(prev[i], prev[i-1]+x)
		}
	}
	return t
}

// ScoreSampler draws the labels in order from LogPartition's backward table, bwd[n−j][i] =
// log e_i(x_j, …, x_{n−1}), x = e^u: with i labels still needed, label j is taken with probability
// x_j e_{i−1}(x_{j+1}, …)/e_i(x_j, …) (1 exactly when every remaining label is needed). The table
// holds (n+1)(k+1) floats.
func (s *KSubsets) ScoreSampler(u []float64) ScoreSampler {
	n := len(u)
	return subsetSampler{u: append([]float64(nil), u...), bwd: s.logSymmetric(u, func(j int) int { return n - j }), k: s.k}
}

// subsetSampler draws k-subsets from the backward table bwd of KSubsets.ScoreSampler.
type subsetSampler struct {
	u   []float64
	bwd [][]float64
	k   int
}

// Draw writes one k-subset.
func (d subsetSampler) Draw(r *rand.Rand, y []int64) {
	n, need := len(d.u), d.k
	for j, x := range d.u {
		y[j] = 0
		if need > 0 && r.Float64() < math.Exp(x+d.bwd[n-j-1][need-1]-d.bwd[n-j][need]) {
			y[j] = 1
			need--
		}
	}
}
