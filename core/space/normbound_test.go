package space

import (
	"math"
	"testing"
)

// TestMaxNormByEnumeration: every closed-form R = max_y ‖ψ(y)‖ equals the maximum over all
// structures of small spaces.
func TestMaxNormByEnumeration(t *testing.T) {
	mk := func(s Space, err error) Space {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	spaces := []Space{
		mk(NewMulticlass(4)), mk(NewMultilabel(4)), mk(NewKSubsets(5, 2)), mk(NewOrdinal(4)),
		mk(NewPermutations(4)), mk(NewTournaments(4)), mk(NewCliques(4)),
		mk(NewSubtrees([]int{-1, 0, 0, 1, 1})), mk(NewDirectedCycles(5)), mk(NewUndirectedCycles(5)),
		mk(NewHierarchyPaths([]int{-1, 0, 0, 1, 3}, false)), mk(NewHierarchyPaths([]int{-1, 0, 0, 1, 3}, true)),
	}
	for _, sp := range spaces {
		nb, ok := sp.(NormBounded)
		if !ok {
			t.Errorf("%s: no MaxNorm", sp.Kind())
			continue
		}
		psi := make([]float64, sp.Dim())
		var r2 float64
		if err := sp.Enumerate(func(y []int64) bool {
			sp.Embed(y, psi)
			var s float64
			for _, v := range psi {
				s += v * v
			}
			r2 = math.Max(r2, s)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if got, want := nb.MaxNorm(), math.Sqrt(r2); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s %v: MaxNorm %v, enumeration %v", sp.Kind(), sp.Params(), got, want)
		}
	}
}

// TestActiveBoundByEnumeration: the structures of small spaces have at most k nonzero
// coordinates, in {±1} when signed and {1} otherwise.
func TestActiveBoundByEnumeration(t *testing.T) {
	mk := func(s Space, err error) Space {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, sp := range []Space{mk(NewPermutations(4)), mk(NewTournaments(4)), mk(NewDirectedCycles(5)), mk(NewUndirectedCycles(5)), mk(NewCliques(4))} {
		k, signed := sp.(SupportBounded).ActiveBound()
		psi := make([]float64, sp.Dim())
		if err := sp.Enumerate(func(y []int64) bool {
			sp.Embed(y, psi)
			nz := 0
			for _, v := range psi {
				if v != 0 {
					nz++
					if v != 1 && !(signed && v == -1) {
						t.Errorf("%s: coordinate %v outside the declared values", sp.Kind(), v)
						return false
					}
				}
			}
			if nz > k {
				t.Errorf("%s: %d nonzero coordinates, bound %d", sp.Kind(), nz, k)
				return false
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
}
