package space

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("hierarchy_paths", func(p []int64) (Space, error) {
		if len(p) < 2 {
			return nil, fmt.Errorf("space: hierarchy_paths takes the leaves_only flag (0 or 1) followed by the parent array of at least one node, got %d parameter(s)", len(p))
		}
		if p[0] != 0 && p[0] != 1 {
			return nil, fmt.Errorf("space: hierarchy_paths: the leaves_only flag is %d, want 0 or 1", p[0])
		}
		return newHierarchyPaths(p[1:], p[0] == 1)
	})
}

// HierarchyPaths is the space of root-to-node paths of a rooted tree (a hierarchy, taxonomy): a
// structure is one node z, encoded as one int64 in [0, N), and ψ(z) ∈ {0,1}^N is the indicator of
// the ancestors of z and z itself (the root included), so d = N. With leavesOnly only the leaves
// are structures (every example belongs to exactly one leaf category).
//
// Under the uniform distribution on the structures, with cnt(v) the number of structures in the
// subtree of v: |Y| = cnt(root), p_v = cnt(v)/|Y|, and u, v are both on the path of z iff z lies
// in the subtree of the deeper of the two when one is an ancestor of the other (never otherwise),
// so S_uv = cnt(deeper)/|Y| − p_u p_v for comparable u, v and −p_u p_v for incomparable ones.
// This is the thesis' poset-regression formula Ψ_i = |{k ⪰ i}|, C_ij = |{k ⪰ i, k ⪰ j}| for the
// tree order. The root coordinate is constant (ψ_root ≡ 1, S's root row is zero); the ridge
// penalty keeps the problem well posed regardless.
//
// Decoding is exact: the score of z is the sum of u over the path to z, computed for every node by
// prefix sums from the root in O(N). A forest must be given a virtual root by the caller (one
// extra node with parent −1 that is the parent of every tree's root).
type HierarchyPaths struct {
	t          *rootedTree
	leavesOnly bool
	cand       []int     // the structures (node ids) in increasing order
	isCand     []bool    // isCand[v]: v is a structure
	p          []float64 // p_v = cnt(v)/|Y|
	pool       sync.Pool // *[]float64 of length N, scratch for Decode
}

// NewHierarchyPaths returns the space of paths of the tree given by parent (parent[v] = −1 for
// exactly one node, the root; every other entry a node id; no cycles), restricted to the leaves
// when leavesOnly is set.
func NewHierarchyPaths(parent []int, leavesOnly bool) (*HierarchyPaths, error) {
	p := make([]int64, len(parent))
	for i, v := range parent {
		p[i] = int64(v)
	}
	return newHierarchyPaths(p, leavesOnly)
}

func newHierarchyPaths(parent []int64, leavesOnly bool) (*HierarchyPaths, error) {
	t, err := newRootedTree("hierarchy_paths", parent)
	if err != nil {
		return nil, err
	}
	n := t.n()
	s := &HierarchyPaths{t: t, leavesOnly: leavesOnly, isCand: make([]bool, n), p: make([]float64, n)}
	cnt := make([]float64, n)
	for v := 0; v < n; v++ {
		if !leavesOnly || t.isLeaf(v) {
			s.isCand[v] = true
			s.cand = append(s.cand, v)
		}
	}
	for i := n - 1; i >= 0; i-- { // children before parents
		v := t.pre[i]
		if s.isCand[v] {
			cnt[v]++
		}
		if v != t.root {
			cnt[t.parent[v]] += cnt[v]
		}
	}
	total := float64(len(s.cand))
	for v := range s.p {
		s.p[v] = cnt[v] / total
	}
	s.pool.New = func() any { b := make([]float64, n); return &b }
	return s, nil
}

// Kind returns "hierarchy_paths".
func (s *HierarchyPaths) Kind() string { return "hierarchy_paths" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *HierarchyPaths) PsiZeroOne() bool { return true }

// Params returns the leaves_only flag (0 or 1) followed by the parent array.
func (s *HierarchyPaths) Params() []int64 {
	flag := int64(0)
	if s.leavesOnly {
		flag = 1
	}
	return append([]int64{flag}, s.t.params()...)
}

// Dim returns N, the number of nodes.
func (s *HierarchyPaths) Dim() int { return s.t.n() }

// Width returns 1: a structure is one node id.
func (s *HierarchyPaths) Width() int { return 1 }

// LogCount returns log N, or log(number of leaves) with leavesOnly.
func (s *HierarchyPaths) LogCount() float64 { return logmath.Log(float64(len(s.cand))) }

// Guarantee returns 0: Decode is exact.
func (s *HierarchyPaths) Guarantee() float64 { return 0 }

// Mean writes p_v = (number of structures in the subtree of v)/|Y|.
func (s *HierarchyPaths) Mean(p []float64) { copy(p, s.p) }

// Covariance returns S with O(1) entries and O(N) products.
func (s *HierarchyPaths) Covariance() Operator { return hierarchyCov{s} }

// Validate checks that y is one node id in [0, N), and a leaf when leavesOnly is set.
func (s *HierarchyPaths) Validate(y []int64) error {
	if len(y) != 1 {
		return fmt.Errorf("a hierarchy path is given by one node id, got %d values", len(y))
	}
	n := s.t.n()
	if y[0] < 0 || y[0] >= int64(n) {
		return fmt.Errorf("node %d outside [0, %d)", y[0], n)
	}
	if !s.isCand[y[0]] {
		return fmt.Errorf("node %d is not a leaf, and only leaves are structures (leaves_only = 1)", y[0])
	}
	return nil
}

// Embed writes the indicator of the ancestors of y[0] and y[0] itself.
func (s *HierarchyPaths) Embed(y []int64, psi []float64) {
	clear(psi)
	for v := int(y[0]); v >= 0; v = s.t.parent[v] {
		psi[v] = 1
	}
}

// Sample draws a structure (a node, or a leaf) uniformly.
func (s *HierarchyPaths) Sample(r *rand.Rand, y []int64) { y[0] = int64(s.cand[r.IntN(len(s.cand))]) }

// Decode writes the structure z maximising the sum of u over the path from the root to z, the
// lowest id among ties, in O(N) time. It is exact and safe for concurrent use.
func (s *HierarchyPaths) Decode(u []float64, y []int64) {
	bp := s.pool.Get().(*[]float64)
	a := *bp
	s.t.rootPathSums(u, a)
	best := s.cand[0]
	for _, v := range s.cand[1:] {
		if a[v] > a[best] {
			best = v
		}
	}
	s.pool.Put(bp)
	y[0] = int64(best)
}

// Enumerate yields the structures in increasing node order.
func (s *HierarchyPaths) Enumerate(yield func(y []int64) bool) error {
	if len(s.cand) > MaxEnumerate {
		return ErrTooLarge
	}
	y := make([]int64, 1)
	for _, v := range s.cand {
		y[0] = int64(v)
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// hierarchyCov is the covariance of HierarchyPaths: P(u and v on the path) = p_deeper when one of
// u, v is an ancestor of the other, 0 otherwise.
type hierarchyCov struct{ s *HierarchyPaths }

// Dim returns d.
func (o hierarchyCov) Dim() int { return o.s.t.n() }

// At returns the entry S[i, j].
func (o hierarchyCov) At(i, j int) float64 {
	t, p := o.s.t, o.s.p
	var both float64
	switch {
	case t.ancestorOrSelf(i, j):
		both = p[j]
	case t.ancestorOrSelf(j, i):
		both = p[i]
	}
	return both - p[i]*p[j]
}

// MulVec computes (S v)_u = p_u A_u + D_u − p_u ⟨p, v⟩ in O(N), where A_u sums v over the
// ancestors of u and u itself and D_u sums p_w v_w over the strict descendants w of u.
func (o hierarchyCov) MulVec(dst, v []float64) {
	t, p := o.s.t, o.s.p
	n := t.n()
	a := make([]float64, n)
	var pv float64
	for _, w := range t.pre {
		a[w] = v[w]
		if w != t.root {
			a[w] += a[t.parent[w]]
		}
		pv += p[w] * v[w]
	}
	clear(dst) // dst accumulates D bottom-up
	for i := n - 1; i >= 0; i-- {
		w := t.pre[i]
		if w != t.root {
			dst[t.parent[w]] += p[w]*v[w] + dst[w]
		}
	}
	for w := 0; w < n; w++ {
		dst[w] += p[w] * (a[w] - pv)
	}
}

// HasPartition is true: log Z and E[ψ] take one pass down and one up the tree.
func (s *HierarchyPaths) HasPartition() bool { return true }

// LogPartition: the structure z scores the sum of u over its root path (computed top-down); log Z
// is the log-sum-exp over the structures, and E[ψ_v] sums the probabilities of the structures in
// the subtree of v (bottom-up).
func (s *HierarchyPaths) LogPartition(u, mean []float64) float64 {
	t := s.t
	// scratch from the decoder's pool (N values each): a fit computes this for every row at every
	// step, and two slices of N per row were its largest garbage
	ap, cp := s.pool.Get().(*[]float64), s.pool.Get().(*[]float64)
	defer s.pool.Put(ap)
	defer s.pool.Put(cp)
	a := (*ap)[:len(t.parent)]
	t.rootPathSums(u, a)
	cand := (*cp)[:0]
	for _, v := range t.pre { // the order of the sum as before
		if s.isCand[v] {
			cand = append(cand, a[v])
		}
	}
	lz := logmath.SumExp(cand)
	if mean != nil {
		clear(mean)
		for i := len(t.pre) - 1; i >= 0; i-- {
			v := t.pre[i]
			if s.isCand[v] {
				mean[v] += math.Exp(a[v] - lz)
			}
			if p := t.parent[v]; p >= 0 {
				mean[p] += mean[v]
			}
		}
	}
	return lz
}

// ScoreSampler draws structure z with probability ∝ exp of the sum of u over the path to z.
func (s *HierarchyPaths) ScoreSampler(u []float64) ScoreSampler {
	a := make([]float64, s.t.n())
	s.t.rootPathSums(u, a)
	f := make([]float64, len(s.cand))
	for i, v := range s.cand {
		f[i] = a[v]
	}
	return newCategorical(f, s.cand)
}
