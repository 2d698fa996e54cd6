package space

import "math"

// NormBounded is implemented by spaces that know R = max_y ‖ψ(y)‖ in closed form: the bound
// |⟨u, ψ(y)⟩| ≤ R‖u‖ of the probabilistic model's partition-function estimates and the FPRAS's
// cooling schedule. Spaces without it are measured by enumeration where they are small enough.
type NormBounded interface {
	MaxNorm() float64
}

// MaxNorm is 1: ψ is one-hot.
func (s *Multiclass) MaxNorm() float64 { return 1 }

// MaxNorm is √d: the set of all labels.
func (s *Multilabel) MaxNorm() float64 { return math.Sqrt(float64(s.d)) }

// MaxNorm is √k: every set has k labels.
func (s *KSubsets) MaxNorm() float64 { return math.Sqrt(float64(s.k)) }

// MaxNorm is √Dim(): the top level has every coordinate at 1.
func (s *Ordinal) MaxNorm() float64 { return math.Sqrt(float64(s.Dim())) }

// MaxNorm is √Dim(): every ranking has every pair at ±1.
func (s *Permutations) MaxNorm() float64 { return math.Sqrt(float64(s.Dim())) }

// MaxNorm is √Dim(): a full tournament orients every pair.
func (s *Tournaments) MaxNorm() float64 { return math.Sqrt(float64(s.Dim())) }

// MaxNorm is √Dim(): the full clique holds every pair.
func (s *Cliques) MaxNorm() float64 { return math.Sqrt(float64(s.Dim())) }

// MaxNorm is √N: the whole tree.
func (s *Subtrees) MaxNorm() float64 { return math.Sqrt(float64(s.Dim())) }

// MaxNorm is √n: a Hamiltonian cycle has n arcs.
func (s *DirectedCycles) MaxNorm() float64 { return math.Sqrt(float64(s.n)) }

// MaxNorm is √n: a Hamiltonian cycle has n edges.
func (s *UndirectedCycles) MaxNorm() float64 { return math.Sqrt(float64(s.n)) }

// MaxNorm is the square root of the longest path's node count (depth + 1 of the deepest structure).
func (s *HierarchyPaths) MaxNorm() float64 {
	best := 0
	for v, ok := range s.isCand {
		if ok {
			best = max(best, s.t.depth[v]+1)
		}
	}
	return math.Sqrt(float64(best))
}

// SupportBounded is implemented by spaces whose ψ(y) has at most k nonzero coordinates, each ±1
// when signed, else 1: then ⟨u, ψ(y)⟩ is at most the sum of the k largest |u_j| (signed) or
// max(u_j, 0). The probabilistic model bounds the scores of spaces that decode approximately by
// it, where it is tighter than R‖u‖.
type SupportBounded interface {
	ActiveBound() (k int, signed bool)
}

// ActiveBound: every pair, ±1.
func (s *Permutations) ActiveBound() (int, bool) { return s.Dim(), true }

// ActiveBound: every pair, ±1 or 0.
func (s *Tournaments) ActiveBound() (int, bool) { return s.Dim(), true }

// ActiveBound: at most n arcs, ±1.
func (s *DirectedCycles) ActiveBound() (int, bool) { return s.n, true }

// ActiveBound: at most n edges.
func (s *UndirectedCycles) ActiveBound() (int, bool) { return s.n, false }

// ActiveBound: any of the pairs.
func (s *Cliques) ActiveBound() (int, bool) { return s.Dim(), false }
