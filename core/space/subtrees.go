package space

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("subtrees", func(p []int64) (Space, error) { return newSubtrees(p) })
}

// Subtrees is the space of non-empty rooted subtrees of a rooted tree T on N nodes: node sets that
// contain the root and are closed under taking parents (v in ⇒ parent(v) in). A structure is a 0/1
// row of length N, ψ is that indicator, d = N. This is multi-category hierarchical classification
// where an example may sit on several (partial) paths.
//
// Counting. Let g(v) be the number of subtrees of T_v (the subtree below v) that contain v. The
// children of v are chosen independently, each either left out or grown into one of its own g(c)
// subtrees, so
//
//	g(v) = Π_{c child of v} (1 + g(c)),   |Y| = g(root).
//
// (The thesis' recursion f(v) = 1 + Π_c f(c) is f = 1 + g: it also counts the empty subtree, and
// the number of non-empty rooted subtrees is f(root) − 1 = g(root).) g overflows a float64 already
// for a star with 1024 leaves, so only log g is stored.
//
// Moments. Given that its parent is in, a child c is in for g(c) of the 1 + g(c) choices at c,
// independently of everything outside T_c: q(c) = g(c)/(1 + g(c)). Hence p_v = Π q(c) over the
// path from the root to v (root excluded), and u, v are both in iff the union of their root paths
// is in, so with w = lca(u, v): P(u, v in) = p_u p_v / p_w and S_uv = p_u p_v (1/p_w − 1).
// Every q ≥ (h+1)/(h+2) for a node with h levels below it, so p_v ≥ 1/(depth(v)+1) ≥ 1/N: the
// divisions never underflow. Covariance().MulVec runs in O(N) time and memory (see subtreesCov).
//
// Sampling is top-down: include the root, then each child of an included node independently with
// probability q(c). This is exactly uniform: a subtree T ∋ root has probability
//
//	Π_{c∈T∖root} q(c) · Π_{c∉T, parent(c)∈T} (1 − q(c))
//	  = Π_{c∈T∖root} g(c) / Π_{c: parent(c)∈T} (1 + g(c))       (1 − q(c) = 1/(1 + g(c)))
//	  = Π_{c∈T∖root} g(c) / Π_{v∈T} g(v)                          (Π over the children of v is g(v))
//	  = 1/g(root),
//
// the same for every T. Decoding is exact by the tree dynamic programme
// best(v) = u_v + Σ_c max(0, best(c)), keeping a child iff its best is positive.
type Subtrees struct {
	t    *rootedTree
	lg   []float64 // log g(v)
	q    []float64 // q(v) = g(v)/(1+g(v)); q(root) = 1
	p    []float64 // p_v = P(v in)
	pool sync.Pool // *[]float64 of length N, scratch for Decode
}

// NewSubtrees returns the space of non-empty rooted subtrees of the tree given by parent
// (parent[v] = −1 for exactly one node, the root; every other entry a node id; no cycles).
// A forest must be given a virtual root by the caller.
func NewSubtrees(parent []int) (*Subtrees, error) {
	p := make([]int64, len(parent))
	for i, v := range parent {
		p[i] = int64(v)
	}
	return newSubtrees(p)
}

func newSubtrees(parent []int64) (*Subtrees, error) {
	t, err := newRootedTree("subtrees", parent)
	if err != nil {
		return nil, err
	}
	n := t.n()
	s := &Subtrees{t: t, lg: make([]float64, n), q: make([]float64, n), p: make([]float64, n)}
	for i := n - 1; i >= 0; i-- { // children before parents: lg[v] is complete when v is reached
		v := t.pre[i]
		if v != t.root {
			s.lg[t.parent[v]] += logmath.Log1pExp(s.lg[v])
		}
	}
	for _, v := range t.pre {
		if v == t.root {
			s.q[v], s.p[v] = 1, 1
			continue
		}
		s.q[v] = logmath.Logistic(s.lg[v])
		s.p[v] = s.p[t.parent[v]] * s.q[v]
	}
	s.pool.New = func() any { b := make([]float64, n); return &b }
	return s, nil
}

// Kind returns "subtrees".
func (s *Subtrees) Kind() string { return "subtrees" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *Subtrees) PsiZeroOne() bool { return true }

// Params returns the parent array.
func (s *Subtrees) Params() []int64 { return s.t.params() }

// Dim returns N, the number of nodes.
func (s *Subtrees) Dim() int { return s.t.n() }

// Width returns N: a structure is a 0/1 row over the nodes.
func (s *Subtrees) Width() int { return s.t.n() }

// LogCount returns log g(root), the log of the number of non-empty rooted subtrees.
func (s *Subtrees) LogCount() float64 { return s.lg[s.t.root] }

// Guarantee returns 0: Decode is exact.
func (s *Subtrees) Guarantee() float64 { return 0 }

// Mean writes p_v, the probability that v is in a uniform subtree.
func (s *Subtrees) Mean(p []float64) { copy(p, s.p) }

// Covariance returns S with O(depth) entries and O(N) products, in O(N) memory.
func (s *Subtrees) Covariance() Operator { return subtreesCov{s} }

// Validate checks that y is a 0/1 row of length N that contains the root and, with every node,
// its parent.
func (s *Subtrees) Validate(y []int64) error {
	t := s.t
	if len(y) != t.n() {
		return fmt.Errorf("a subtree row has %d entries (one per node), got %d", t.n(), len(y))
	}
	for v, x := range y {
		if x != 0 && x != 1 {
			return fmt.Errorf("node %d has value %d, want 0 or 1", v, x)
		}
	}
	if y[t.root] != 1 {
		return fmt.Errorf("the root %d is not in the subtree (a rooted subtree contains the root)", t.root)
	}
	for v, x := range y {
		if x == 1 && v != t.root && y[t.parent[v]] != 1 {
			return fmt.Errorf("node %d is in the subtree but its parent %d is not", v, t.parent[v])
		}
	}
	return nil
}

// Embed writes the indicator row itself.
func (s *Subtrees) Embed(y []int64, psi []float64) {
	for v, x := range y {
		psi[v] = float64(x)
	}
}

// Sample draws a rooted subtree uniformly, top-down (see the type's documentation for the proof).
func (s *Subtrees) Sample(r *rand.Rand, y []int64) { subtreeSampler{t: s.t, q: s.q}.Draw(r, y) }

// Decode writes a subtree maximising Σ_{v in} u_v by dynamic programming over the tree, in O(N)
// time. Children whose best value is exactly 0 are left out. It is safe for concurrent use.
func (s *Subtrees) Decode(u []float64, y []int64) {
	bp := s.pool.Get().(*[]float64)
	best := *bp
	t := s.t
	n := t.n()
	copy(best, u)
	for i := n - 1; i > 0; i-- { // pre[0] is the root
		v := t.pre[i]
		if best[v] > 0 {
			best[t.parent[v]] += best[v]
		}
	}
	for _, v := range t.pre {
		switch {
		case v == t.root:
			y[v] = 1
		case y[t.parent[v]] == 1 && best[v] > 0:
			y[v] = 1
		default:
			y[v] = 0
		}
	}
	s.pool.Put(bp)
}

// Enumerate yields the subtrees in lexicographic order of their rows read in preorder.
func (s *Subtrees) Enumerate(yield func(y []int64) bool) error {
	if s.LogCount() > logmath.Log(MaxEnumerate)+1e-9 {
		return ErrTooLarge
	}
	t := s.t
	n := t.n()
	y := make([]int64, n)
	y[t.root] = 1
	for {
		if !yield(y) {
			return nil
		}
		// Lexicographic successor: the last preorder position that can be switched on (its parent,
		// earlier in preorder, is in), switched on, with everything after it switched off.
		i := n - 1
		for ; i > 0; i-- {
			v := t.pre[i]
			if y[v] == 0 && y[t.parent[v]] == 1 {
				break
			}
		}
		if i == 0 {
			return nil
		}
		y[t.pre[i]] = 1
		for j := i + 1; j < n; j++ {
			y[t.pre[j]] = 0
		}
	}
}

// subtreesCov is the covariance of Subtrees, S_uv = p_u p_v / p_lca(u,v) − p_u p_v.
type subtreesCov struct{ s *Subtrees }

// Dim returns d.
func (o subtreesCov) Dim() int { return o.s.t.n() }

// At returns the entry S[i, j].
func (o subtreesCov) At(i, j int) float64 {
	p := o.s.p
	w := o.s.t.lca(i, j)
	switch w {
	case i:
		return p[j] - p[i]*p[j]
	case j:
		return p[i] - p[i]*p[j]
	}
	return p[i]*p[j]/p[w] - p[i]*p[j]
}

// MulVec computes S v in O(N). With B(u) = Σ_{w in T_u} p_w v_w (bottom-up) and
// K(u) = Σ_{w strict ancestor of u} (p_u/p_w)(B(w) − B(child of w towards u)), which satisfies
// K(root) = 0, K(c) = q(c) (K(parent) + B(parent) − B(c)) (top-down), the second moment is
// Σ_v P(u, v in) v_v = B(u) + K(u): the v whose lowest common ancestor with u is u contribute
// B(u), those whose lca is a strict ancestor w contribute (p_u/p_w)(B(w) − B(c_w)).
func (o subtreesCov) MulVec(dst, v []float64) {
	s := o.s
	t := s.t
	n := t.n()
	b := make([]float64, n)
	var pv float64
	for i := n - 1; i >= 0; i-- {
		w := t.pre[i]
		b[w] += s.p[w] * v[w]
		pv += s.p[w] * v[w]
		if w != t.root {
			b[t.parent[w]] += b[w]
		}
	}
	for _, w := range t.pre { // dst holds K until the last step
		if w == t.root {
			dst[w] = 0
			continue
		}
		par := t.parent[w]
		dst[w] = s.q[w] * (dst[par] + b[par] - b[w])
	}
	for w := 0; w < n; w++ {
		dst[w] += b[w] - s.p[w]*pv
	}
}

// HasPartition is true: log Z and E[ψ] take one pass up and one down the tree.
func (s *Subtrees) HasPartition() bool { return true }

// LogPartition: with G(v) = Σ over the subtrees of T_v containing v of exp(Σ u), the children are
// chosen independently, G(v) = e^{u_v} Π_c (1 + G(c)), Z = G(root). Given its parent is in, child c
// is in with probability G(c)/(1 + G(c)) = σ(log G(c)), independently of everything outside T_c,
// so E[ψ_v] is the product of these along the root path.
func (s *Subtrees) LogPartition(u, mean []float64) float64 {
	t := s.t
	if mean == nil {
		return s.upwardMessages(u, make([]float64, len(u)))[t.root]
	}
	// The messages are computed in mean and turned into the marginals in place, parents first (a
	// fit computes this for every row at every step: a slice of d per row was its largest garbage).
	lg := s.upwardMessages(u, mean)
	logZ := lg[t.root]
	for _, v := range t.pre {
		if v == t.root {
			mean[v] = 1
		} else {
			mean[v] = mean[t.parent[v]] * logmath.Logistic(lg[v])
		}
	}
	return logZ
}

// ScoreSampler draws top-down: the root, then each child c of a node in the subtree
// independently with probability G(c)/(1 + G(c)), G from the upward messages of LogPartition.
func (s *Subtrees) ScoreSampler(u []float64) ScoreSampler {
	lg := s.upwardMessages(u, make([]float64, len(u)))
	for v := range lg {
		lg[v] = logmath.Logistic(lg[v])
	}
	return subtreeSampler{t: s.t, q: lg}
}

// upwardMessages writes log G(v) for every node (see LogPartition), children before parents, into
// lg (len(u) values) and returns it.
func (s *Subtrees) upwardMessages(u, lg []float64) []float64 {
	t := s.t
	copy(lg, u)
	for i := len(t.pre) - 1; i > 0; i-- { // pre[0] is the root
		v := t.pre[i]
		lg[t.parent[v]] += logmath.Log1pExp(lg[v])
	}
	return lg
}

// subtreeSampler draws rooted subtrees top-down, child v kept with probability q[v] when its
// parent is in: uniformly with Subtrees' q, from p ∝ exp⟨u, ψ⟩ with ScoreSampler's.
type subtreeSampler struct {
	t *rootedTree
	q []float64
}

// Draw writes one subtree.
func (d subtreeSampler) Draw(r *rand.Rand, y []int64) {
	t := d.t
	for _, v := range t.pre {
		switch {
		case v == t.root:
			y[v] = 1
		case y[t.parent[v]] == 1 && r.Float64() < d.q[v]:
			y[v] = 1
		default:
			y[v] = 0
		}
	}
}
