package space

import "math"

// StopWork is the work (in DecodeWork's units, about a nanosecond each) between two looks at a
// stop flag in a long loop of calls into a space: about a millisecond.
const StopWork = 1 << 20

// DecodeWork estimates the elementary operations (about a nanosecond each) of one Decode on sp,
// to the order of magnitude: callers use it to bound what runs without a way to cancel it (a
// query decoded on the caller's thread cannot be interrupted). The exact decoders of the NP-hard
// spaces visit vertex subsets, O(n²·2ⁿ) for orderings and cycles and O(2ⁿ) for cliques; their
// local searches are taken as O(n³); a DAG's subsets need a minimum cut, taken as O(d²), and its
// single paths sum the ancestor sets of every structure; every other space decodes in time linear
// in its dimension and width.
func DecodeWork(sp Space) float64 {
	var n int
	var exact bool
	switch s := sp.(type) {
	case *Permutations:
		n, exact = s.n, s.exact()
	case *DirectedCycles:
		n, exact = s.n, s.exact()
	case *UndirectedCycles:
		n, exact = s.n, s.exact()
	case *Cliques:
		if s.exact() {
			return math.Ldexp(float64(s.n), s.n)
		}
		n = s.n
	case *DAGSubsets:
		d := float64(s.Dim())
		return d * d
	case *DAGPaths:
		return float64(s.entries + len(s.cand))
	default:
		return float64(sp.Dim() + sp.Width())
	}
	if exact {
		return float64(n) * float64(n) * math.Ldexp(1, n)
	}
	return float64(n) * float64(n) * float64(n)
}
