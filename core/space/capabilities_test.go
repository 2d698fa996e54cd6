package space

import "testing"

// TestCapabilities lists, for a small instance of every space, the optional interfaces it
// implements: a space that loses one (or a new space) fails here until the table says so.
func TestCapabilities(t *testing.T) {
	mk := func(s Space, err error) Space {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type caps struct{ partition, logZ, local, rooted, canonical, norm, support, marginal, uncounted, binary bool }
	for _, c := range []struct {
		sp   Space
		want caps
	}{
		{mk(NewMulticlass(3)), caps{partition: true, norm: true, marginal: true}},
		{mk(NewMulticlass(2)), caps{partition: true, norm: true, marginal: true, binary: true}},
		{mk(NewMultilabel(3)), caps{partition: true, local: true, norm: true, marginal: true}},
		{mk(NewKSubsets(4, 2)), caps{partition: true, norm: true}},
		{mk(NewOrdinal(3)), caps{partition: true, norm: true}},
		{mk(NewHierarchyPaths([]int{-1, 0, 0}, false)), caps{partition: true, norm: true, marginal: true}},
		{mk(NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}}, false)), caps{partition: true, norm: true}},
		{mk(NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}})), caps{norm: true, uncounted: true}},
		{mk(NewSubtrees([]int{-1, 0, 0})), caps{partition: true, local: true, rooted: true, norm: true, marginal: true}},
		{mk(NewTournaments(4)), caps{partition: true, norm: true, support: true}},
		{mk(NewPermutations(4)), caps{partition: true, logZ: true, local: true, norm: true, support: true}},
		{mk(NewDirectedCycles(5)), caps{partition: true, logZ: true, local: true, norm: true, support: true}},
		{mk(NewUndirectedCycles(5)), caps{partition: true, logZ: true, local: true, canonical: true, norm: true, support: true}},
		{mk(NewCliques(4)), caps{norm: true, support: true}},
	} {
		_, partition := PartitionOf(c.sp)
		_, logZ := LogZOf(c.sp)
		_, local := c.sp.(Local)
		_, rooted := c.sp.(Rooted)
		_, canonical := c.sp.(Canonical)
		_, norm := c.sp.(NormBounded)
		_, support := c.sp.(SupportBounded)
		_, marginal := c.sp.(MarginalMeasure)
		_, uncounted := c.sp.(Uncounted)
		binary := IsBinaryChoice(c.sp)
		if got := (caps{partition, logZ, local, rooted, canonical, norm, support, marginal, uncounted, binary}); got != c.want {
			t.Errorf("%s: capabilities %+v, want %+v", c.sp.Kind(), got, c.want)
		}
	}
}
