package space

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/logmath"
)

func init() {
	registerStoppable("dag_paths", func(p []int64, stop *cancel.Flag) (Space, error) {
		if len(p) < 2 {
			return nil, fmt.Errorf("space: dag_paths takes the leaves_only flag (0 or 1) followed by the DAG (N, then per node its parent count and parents), got %d parameter(s)", len(p))
		}
		if p[0] != 0 && p[0] != 1 {
			return nil, fmt.Errorf("space: dag_paths: the leaves_only flag is %d, want 0 or 1", p[0])
		}
		return newDAGPaths(p[1:], p[0] == 1, stop)
	})
}

// DAGPaths is HierarchyPaths for a taxonomy whose nodes may have several parents (a rooted DAG,
// such as the Gene Ontology): a structure is one node z, encoded as one int64 in [0, N), and ψ(z)
// is the indicator of anc*(z), z with all its ancestors through every parent (single-path
// classification where a category implies all its ancestors), d = N. With leavesOnly only the
// nodes without children are structures.
//
// Counting is as easy as on a tree: |Y| is the number of structures, p_v = |desc*(v) ∩ Y|/|Y|, and
// u, v are both in ψ(z) iff z ∈ desc*(u) ∩ desc*(v), so S_uv = |desc*(u) ∩ desc*(v) ∩ Y|/|Y| − p_u p_v.
// Unlike on a tree, the intersection need not be one of the two sets (a node below both of two
// incomparable nodes), and prefix sums over a path no longer give ⟨u, ψ(z)⟩ (shared ancestors
// would count twice): the space holds every node's ancestor set, and decoding, S·v and the
// partition function cost O(Σ_z |anc*(z)|).
type DAGPaths struct {
	g          *rootedDAG
	leavesOnly bool
	cand       []int
	isCand     []bool
	p          []float64
	// entries is Σ |anc*(z)| over the structures z: a decode's additions (DecodeWork).
	entries int
}

// NewDAGPaths returns the space of single paths of the DAG whose node v has the parents
// parents[v] (exactly one node, the root, has none), restricted to the leaves with leavesOnly.
func NewDAGPaths(parents [][]int, leavesOnly bool) (*DAGPaths, error) {
	return newDAGPaths(DAGParams(parents), leavesOnly, nil)
}

// DAGParams encodes parent sets as the parameters of the DAG spaces: N, then per node its number
// of parents followed by their ids.
func DAGParams(parents [][]int) []int64 {
	out := []int64{int64(len(parents))}
	for _, ps := range parents {
		out = append(out, int64(len(ps)))
		for _, p := range ps {
			out = append(out, int64(p))
		}
	}
	return out
}

func newDAGPaths(params []int64, leavesOnly bool, stop *cancel.Flag) (*DAGPaths, error) {
	g, err := parseDAG("dag_paths", params, stop)
	if err != nil {
		return nil, err
	}
	n := g.n()
	s := &DAGPaths{g: g, leavesOnly: leavesOnly, isCand: make([]bool, n), p: make([]float64, n)}
	for v := 0; v < n; v++ {
		if !leavesOnly || g.isLeaf(v) {
			s.isCand[v] = true
			s.cand = append(s.cand, v)
		}
	}
	total := float64(len(s.cand))
	for _, z := range s.cand {
		s.entries += len(g.ancestors(z))
		for _, a := range g.ancestors(z) {
			s.p[a]++
		}
	}
	for v := range s.p {
		s.p[v] /= total
	}
	return s, nil
}

// Kind returns "dag_paths".
func (s *DAGPaths) Kind() string { return "dag_paths" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *DAGPaths) PsiZeroOne() bool { return true }

// Params returns the leaves_only flag (0 or 1) followed by the DAG's encoding (DAGParams).
func (s *DAGPaths) Params() []int64 {
	flag := int64(0)
	if s.leavesOnly {
		flag = 1
	}
	return append([]int64{flag}, s.g.encoding...)
}

// Dim returns N, the number of nodes.
func (s *DAGPaths) Dim() int { return s.g.n() }

// Width returns 1: a structure is one node id.
func (s *DAGPaths) Width() int { return 1 }

// LogCount returns log N, or log(number of leaves) with leavesOnly.
func (s *DAGPaths) LogCount() float64 { return logmath.Log(float64(len(s.cand))) }

// Guarantee returns 0: Decode is exact.
func (s *DAGPaths) Guarantee() float64 { return 0 }

// Mean writes p_v = |desc*(v) ∩ Y|/|Y|.
func (s *DAGPaths) Mean(p []float64) { copy(p, s.p) }

// Covariance returns S with products in O(Σ_z |anc*(z)|).
func (s *DAGPaths) Covariance() Operator { return dagPathsCov{s} }

// MaxNorm is the square root of the largest ancestor set of a structure.
func (s *DAGPaths) MaxNorm() float64 {
	m := 0
	for _, z := range s.cand {
		m = max(m, len(s.g.ancestors(z)))
	}
	return math.Sqrt(float64(m))
}

// Validate checks that y is one node id in [0, N), and a leaf when leavesOnly is set.
func (s *DAGPaths) Validate(y []int64) error {
	if len(y) != 1 {
		return fmt.Errorf("a DAG path is given by one node id, got %d values", len(y))
	}
	n := s.g.n()
	if y[0] < 0 || y[0] >= int64(n) {
		return fmt.Errorf("node %d outside [0, %d)", y[0], n)
	}
	if !s.isCand[y[0]] {
		return fmt.Errorf("node %d is not a leaf, and only leaves are structures (leaves_only = 1)", y[0])
	}
	return nil
}

// Embed writes the indicator of anc*(y[0]).
func (s *DAGPaths) Embed(y []int64, psi []float64) {
	clear(psi)
	for _, a := range s.g.ancestors(int(y[0])) {
		psi[a] = 1
	}
}

// Sample draws a structure uniformly.
func (s *DAGPaths) Sample(r *rand.Rand, y []int64) { y[0] = int64(s.cand[r.IntN(len(s.cand))]) }

// score is ⟨u, ψ(z)⟩.
func (s *DAGPaths) score(u []float64, z int) float64 {
	var f float64
	for _, a := range s.g.ancestors(z) {
		f += u[a]
	}
	return f
}

// Decode writes the structure z maximising ⟨u, ψ(z)⟩, the lowest id among ties. It is exact and
// safe for concurrent use.
func (s *DAGPaths) Decode(u []float64, y []int64) { s.decodeStop(u, y, nil) }

// decodeStop is Decode, ended once stop is set (stoppableDecoder) with the best structure of those
// scored so far: one row sums Σ |anc*(z)| scores, 0.6 s on a ladder DAG of 23,000 nodes, which a
// Ctrl-C waited for row after row (probe CV).
func (s *DAGPaths) decodeStop(u []float64, y []int64, stop *cancel.Flag) {
	best, bestF := s.cand[0], s.score(u, s.cand[0])
	summed := 0
	for _, z := range s.cand[1:] {
		if f := s.score(u, z); f > bestF {
			best, bestF = z, f
		}
		if summed += len(s.g.ancestors(z)); summed >= StopWork {
			if stop.Stopped() {
				break
			}
			summed = 0
		}
	}
	y[0] = int64(best)
}

// Enumerate yields the structures in increasing node order.
func (s *DAGPaths) Enumerate(yield func(y []int64) bool) error {
	if len(s.cand) > MaxEnumerate {
		return ErrTooLarge
	}
	y := make([]int64, 1)
	for _, z := range s.cand {
		y[0] = int64(z)
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// HasPartition is true: log Z and E[ψ] take one pass over the ancestor sets.
func (s *DAGPaths) HasPartition() bool { return true }

// LogPartition: log Z is the log-sum-exp of ⟨u, ψ(z)⟩ over the structures, and E[ψ_v] sums the
// probabilities of the structures below v.
func (s *DAGPaths) LogPartition(u, mean []float64) float64 {
	f := s.candScores(u)
	lz := logmath.SumExp(f)
	if mean != nil {
		clear(mean)
		for i, z := range s.cand {
			pz := math.Exp(f[i] - lz)
			for _, a := range s.g.ancestors(z) {
				mean[a] += pz
			}
		}
	}
	return lz
}

// dagPathsCov is the covariance of DAGPaths.
type dagPathsCov struct{ s *DAGPaths }

// Dim returns d.
func (o dagPathsCov) Dim() int { return o.s.g.n() }

// At returns S[i, j] = |desc*(i) ∩ desc*(j) ∩ Y|/|Y| − p_i p_j, walking the smaller descendant set.
func (o dagPathsCov) At(i, j int) float64 {
	s, g := o.s, o.s.g
	if len(g.descendants(i)) > len(g.descendants(j)) {
		i, j = j, i
	}
	var both int
	for _, z := range g.descendants(i) {
		if s.isCand[z] && g.ancestorOrSelf(j, int(z)) {
			both++
		}
	}
	return float64(both)/float64(len(s.cand)) - s.p[i]*s.p[j]
}

// MulVec computes S v = (1/|Y|) Σ_z ψ(z) ⟨ψ(z), v⟩ − p ⟨p, v⟩.
func (o dagPathsCov) MulVec(dst, v []float64) {
	s := o.s
	var pv float64
	for w, x := range v {
		pv += s.p[w] * x
	}
	clear(dst)
	inv := 1 / float64(len(s.cand))
	for _, z := range s.cand {
		a := s.score(v, z) * inv
		for _, w := range s.g.ancestors(z) {
			dst[w] += a
		}
	}
	for w := range dst {
		dst[w] -= s.p[w] * pv
	}
}

// ScoreSampler draws structure z with probability ∝ exp⟨u, ψ(z)⟩, one pass over the ancestor sets.
func (s *DAGPaths) ScoreSampler(u []float64) ScoreSampler {
	return newCategorical(s.candScores(u), s.cand)
}

// candScores returns ⟨u, ψ(z)⟩ for every structure z, in the order of cand.
func (s *DAGPaths) candScores(u []float64) []float64 {
	f := make([]float64, len(s.cand))
	for i, z := range s.cand {
		f[i] = s.score(u, z)
	}
	return f
}
