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

// SimplexIDs numbers exactly the spaces whose ψ(Y) is affinely independent (the rank of S is
// |Y| − 1): every structure gets an id in [0, k), distinct structures distinct ids. Among them are
// small instances of other kinds (a chain's subtrees, UndirectedCycles(4), DirectedCycles(3)); the
// first two have facets no coordinate of ψ shows, so a fit whose rows never hold one of their
// structures is warned of only through the ids (probe CL).
func TestSimplexIDsAgainstEnumeration(t *testing.T) {
	facetsHidden := 0
	for _, sp := range marginalSpaces(t) {
		b := spacetest.Enumerate(t, sp)
		k, id, ok := space.SimplexIDs(sp)
		simplex := len(b.Ys) > 1 && space.CovRank(sp) == len(b.Ys)-1
		if ok != simplex {
			t.Errorf("%s%v: SimplexIDs ok = %v, ψ(Y) affinely independent = %v", sp.Kind(), sp.Params(), ok, simplex)
		}
		if !ok {
			continue
		}
		if !everyFacetAtAnExtreme(sp, b.Psis) {
			facetsHidden++
		}
		seen := make(map[int]bool)
		for i, y := range b.Ys {
			got := id(y, b.Psis[i])
			if got < 0 || got >= k {
				t.Fatalf("%s%v: structure %v has id %d outside [0, %d)", sp.Kind(), sp.Params(), y, got, k)
			}
			if seen[got] {
				t.Fatalf("%s%v: two structures share the id %d", sp.Kind(), sp.Params(), got)
			}
			seen[got] = true
		}
	}
	if facetsHidden == 0 {
		t.Errorf("no simplex among the test spaces hides a facet from the coordinates: the ids are untested there")
	}
}

// everyFacetAtAnExtreme reports whether, for every structure left out of psis, some coordinate
// that varies over all of them takes one extreme value of CoordRange on all the others.
func everyFacetAtAnExtreme(sp space.Space, psis [][]float64) bool {
	lo, hi := space.CoordRange(sp)
	for out := range psis {
		found := false
		for a := range psis[0] {
			varies, atLo, atHi := false, true, true
			for i, psi := range psis {
				varies = varies || psi[a] != psis[0][a]
				if i != out {
					atLo, atHi = atLo && psi[a] == lo, atHi && psi[a] == hi
				}
			}
			found = found || (varies && (atLo || atHi))
		}
		if !found {
			return false
		}
	}
	return true
}
