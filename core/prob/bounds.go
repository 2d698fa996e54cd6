package prob

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/space"
)

// psiNorm returns R = max_y ‖ψ(y)‖, the constant of the thesis' bound |⟨u, ψ(y)⟩| ≤ R‖u‖, for the
// spaces of package space (exact values); other spaces are measured by enumeration when small.
func psiNorm(sp space.Space) (float64, error) {
	d := float64(sp.Dim())
	switch s := sp.(type) {
	case *space.Multiclass:
		return 1, nil
	case *space.Multilabel, *space.Ordinal, *space.Subtrees, *space.Permutations,
		*space.Tournaments, *space.Cliques:
		// Some structure has every coordinate at ±1: all labels, the top level, the whole tree,
		// every ranking, a full tournament, the full clique.
		return math.Sqrt(d), nil
	case *space.KSubsets:
		return math.Sqrt(float64(s.Params()[1])), nil
	case *space.DirectedCycles, *space.UndirectedCycles:
		return math.Sqrt(float64(s.Params()[0])), nil // a Hamiltonian cycle has n arcs
	case *space.HierarchyPaths:
		par := s.Params()[1:]
		depth, err := treeDepths(par)
		if err != nil {
			return 0, err
		}
		flag := s.Params()[0] == 1
		leaf := make([]bool, len(par))
		for v := range leaf {
			leaf[v] = true
		}
		for _, q := range par {
			if q >= 0 {
				leaf[q] = false
			}
		}
		best := 0
		for v, dv := range depth {
			if !flag || leaf[v] {
				best = max(best, dv+1)
			}
		}
		return math.Sqrt(float64(best)), nil
	}
	var r2 float64
	psi := make([]float64, sp.Dim())
	err := sp.Enumerate(func(y []int64) bool {
		sp.Embed(y, psi)
		r2 = math.Max(r2, dot(psi, psi))
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("prob: no bound on ‖ψ‖ is known for the %s space and it is too large to enumerate", sp.Kind())
	}
	return math.Sqrt(r2), nil
}

// treeDepths returns the depth of every node of the tree given by its parent array (root −1).
func treeDepths(parent []int64) ([]int, error) {
	n := len(parent)
	depth := make([]int, n)
	for v := range depth {
		depth[v] = -1
	}
	var stack []int
	for v := 0; v < n; v++ {
		w := v
		for depth[w] < 0 && parent[w] >= 0 {
			stack = append(stack, w)
			w = int(parent[w])
			if len(stack) > n {
				return nil, fmt.Errorf("prob: the parent array has a cycle")
			}
		}
		if depth[w] < 0 {
			depth[w] = 0 // a root
		}
		for i := len(stack) - 1; i >= 0; i-- {
			depth[stack[i]] = depth[int(parent[stack[i]])] + 1
		}
		stack = stack[:0]
	}
	return depth, nil
}

// scoreMax returns an upper bound on max_y ⟨u, ψ(y)⟩, with exact = true when it is the maximum
// itself (the space decodes exactly), attained by the structure written into y (length Width()).
// Otherwise y is the decoder's structure and the bound is the smaller of R‖u‖ and a bound
// particular to the space.
func scoreMax(sp space.Space, u []float64, y []int64) (hi float64, exact bool, err error) {
	sp.Decode(u, y)
	f := newScorer(sp, u).score(y)
	if sp.Guarantee() == 0 {
		return f, true, nil
	}
	r, err := psiNorm(sp)
	if err != nil {
		return 0, false, err
	}
	hi = r * norm2(u)
	topSum := func(vals []float64, k int) float64 {
		slices.Sort(vals)
		var s float64
		for i := len(vals) - 1; i >= 0 && i >= len(vals)-k; i-- {
			s += math.Max(vals[i], 0)
		}
		return s
	}
	abs := make([]float64, len(u))
	pos := make([]float64, len(u))
	for j, x := range u {
		abs[j], pos[j] = math.Abs(x), math.Max(x, 0)
	}
	switch s := sp.(type) {
	case *space.Permutations, *space.Tournaments:
		hi = math.Min(hi, topSum(abs, len(u))) // every ψ_j ∈ {−1, +1} (or 0)
	case *space.DirectedCycles:
		hi = math.Min(hi, topSum(abs, int(s.Params()[0]))) // at most n arcs, each ±u_j
	case *space.UndirectedCycles:
		hi = math.Min(hi, topSum(pos, int(s.Params()[0]))) // at most n edges
	case *space.Cliques:
		hi = math.Min(hi, topSum(pos, len(u)))
	}
	return math.Max(hi, f), false, nil
}

// scoreRange returns lo ≤ min_y ⟨u, ψ(y)⟩ and hi ≥ max_y ⟨u, ψ(y)⟩, exact when both are.
func scoreRange(sp space.Space, u []float64) (lo, hi float64, exact bool, err error) {
	y := make([]int64, sp.Width())
	hi, e1, err := scoreMax(sp, u, y)
	if err != nil {
		return 0, 0, false, err
	}
	neg := scaled(u, -1)
	nlo, e2, err := scoreMax(sp, neg, y)
	if err != nil {
		return 0, 0, false, err
	}
	return -nlo, hi, e1 && e2, nil
}
