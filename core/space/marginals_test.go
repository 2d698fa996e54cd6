package space_test

import (
	"math"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// marginalSpaces are small instances of every registered kind, several shapes each where the
// rank of S or the spread of δᵀS⁺δ depends on the shape.
func marginalSpaces(t *testing.T) []space.Space {
	t.Helper()
	var out []space.Space
	add := func(sp space.Space, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	tree := []int{-1, 0, 0, 1, 1, 2, 5}
	add(space.NewMulticlass(2))
	add(space.NewMulticlass(5))
	add(space.NewMultilabel(1))
	add(space.NewMultilabel(4))
	add(space.NewKSubsets(6, 2))
	add(space.NewKSubsets(5, 5))
	add(space.NewOrdinal(2))
	add(space.NewOrdinal(6))
	add(space.NewHierarchyPaths(tree, false))
	add(space.NewHierarchyPaths(tree, true))
	add(space.NewSubtrees(tree))
	add(space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {1}}, false))
	add(space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {1}}, true))
	add(space.NewSubtrees([]int{-1}))
	add(space.NewSubtrees([]int{-1, 0, 1, 2}))
	add(space.NewPermutations(2))
	add(space.NewPermutations(5))
	add(space.NewTournaments(3))
	add(space.NewDirectedCycles(3))
	add(space.NewDirectedCycles(5))
	add(space.NewUndirectedCycles(4))
	add(space.NewUndirectedCycles(6))
	add(space.NewCliques(4))
	add(space.NewCliques(5))
	kinds := map[string]bool{}
	for _, sp := range out {
		kinds[sp.Kind()] = true
	}
	for _, k := range space.Kinds() {
		if k == "dag_subsets" {
			continue // uncounted: no uniform moments to compare (TestDAGSubsetsAreUncounted)
		}
		if !kinds[k] {
			t.Errorf("marginalSpaces has no instance of the registered kind %q: add one", k)
		}
	}
	return out
}

// CoordRange holds every coordinate of ψ over Y, and both of its ends are reached (when Y has more
// than one structure); CovRank is the
// numerical rank of the enumerated S and the mean of δᵀS⁺δ over Y.
func TestCoordRangeAndCovRankAgainstEnumeration(t *testing.T) {
	for _, sp := range marginalSpaces(t) {
		name := sp.Kind()
		b := spacetest.Enumerate(t, sp)
		d := sp.Dim()
		lo, hi := space.CoordRange(sp)
		seenLo, seenHi := false, false
		for _, psi := range b.Psis {
			for _, v := range psi {
				if v < lo || v > hi {
					t.Fatalf("%s%v: ψ coordinate %v outside CoordRange [%v, %v]", name, sp.Params(), v, lo, hi)
				}
				seenLo, seenHi = seenLo || v == lo, seenHi || v == hi
			}
		}
		if len(b.Ys) > 1 && (!seenLo || !seenHi) { // a space of one structure only has its ψ
			t.Errorf("%s%v: CoordRange [%v, %v] is not tight (ends reached: %v, %v)", name, sp.Params(), lo, hi, seenLo, seenHi)
		}

		vals, vecs := b.CovEigen(t)
		var top float64
		for _, v := range vals {
			top = math.Max(top, math.Abs(v))
		}
		rank := 0
		for _, v := range vals {
			if v > 1e-9*top {
				rank++
			}
		}
		if got := space.CovRank(sp); got != rank {
			t.Errorf("%s%v: CovRank = %d, numerical rank of S = %d", name, sp.Params(), got, rank)
		}
		// mean of δᵀS⁺δ over Y, S⁺ from the eigenpairs
		var meanT float64
		for _, psi := range b.Psis {
			for k, v := range vals {
				if v <= 1e-9*top {
					continue
				}
				var proj float64
				for j := 0; j < d; j++ {
					proj += vecs.At(j, k) * (psi[j] - b.Mean[j])
				}
				meanT += proj * proj / v
			}
		}
		meanT /= float64(len(b.Psis))
		if math.Abs(meanT-float64(rank)) > 1e-8*math.Max(1, float64(rank)) {
			t.Errorf("%s%v: mean δᵀS⁺δ = %.12g, rank = %d", name, sp.Params(), meanT, rank)
		}
	}
}
