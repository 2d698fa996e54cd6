package space_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestScoreSamplersByEnumeration checks every exact sampler of scores against p ∝ exp⟨u, ψ⟩ over
// the enumerated space (spacetest.CheckScoreSampler), on the shapes each recursion distinguishes:
// a one-structure space, both hierarchy restrictions, DAGs whose paths share nodes, subtrees of a
// path and of a star, k-subsets with k = 1 and k = n.
func TestScoreSamplersByEnumeration(t *testing.T) {
	dag, err := space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {1}, {3, 4}, {2, 5}}, false)
	if err != nil {
		t.Fatal(err)
	}
	dagLeaves, err := space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {1}, {3, 4}, {2, 5}}, true)
	if err != nil {
		t.Fatal(err)
	}
	spaces := []space.Space{
		must(t, "multiclass", 1), must(t, "multiclass", 6),
		must(t, "ordinal", 2), must(t, "ordinal", 7),
		must(t, "multilabel", 1), must(t, "multilabel", 5),
		must(t, "ksubsets", 6, 1), must(t, "ksubsets", 6, 3), must(t, "ksubsets", 5, 5),
		must(t, "tournaments", 2), must(t, "tournaments", 4),
		must(t, "hierarchy_paths", 0, -1, 0, 0, 1, 1, 2, 4), must(t, "hierarchy_paths", 1, -1, 0, 0, 1, 1, 2, 4),
		must(t, "subtrees", -1, 0, 0, 1, 1, 2, 4), must(t, "subtrees", -1, 0, 1, 2, 3), must(t, "subtrees", -1, 0, 0, 0, 0),
		dag, dagLeaves,
		must(t, "permutations", 2), must(t, "permutations", 3), must(t, "permutations", 5),
		must(t, "dicycles", 3), must(t, "dicycles", 5), must(t, "ucycles", 3), must(t, "ucycles", 4), must(t, "ucycles", 6),
	}
	for i, s := range spaces {
		t.Run(fmt.Sprintf("%s%v", s.Kind(), s.Params()), func(t *testing.T) {
			b := spacetest.Enumerate(t, s)
			spacetest.CheckScoreSampler(t, s, b, 60*len(b.Ys)+2000, uint64(900+i), 1e-4)
		})
	}
}

// TestScoreSamplersAtExtremeScores: scores of ±700(j+1), whose runners-up are e^{−700} or less
// as likely as the mode (below float64's smallest normal), draw the mode every time.
func TestScoreSamplersAtExtremeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range []space.Space{must(t, "multiclass", 4), must(t, "ordinal", 4), must(t, "multilabel", 4),
		must(t, "ksubsets", 4, 2), must(t, "tournaments", 3), must(t, "subtrees", -1, 0, 0, 1),
		must(t, "hierarchy_paths", 0, -1, 0, 0, 1), must(t, "permutations", 5),
		must(t, "dicycles", 5), must(t, "ucycles", 5)} {
		u := make([]float64, s.Dim())
		for j := range u {
			u[j] = 700 * float64((j+1)*(1-2*(j%2)))
		}
		mode := make([]int64, s.Width())
		s.Decode(u, mode)
		ss, _ := space.ScoreSamplingOf(s)
		sm := ss.ScoreSampler(u)
		y := make([]int64, s.Width())
		for k := 0; k < 200; k++ {
			sm.Draw(r, y)
			if fmt.Sprint(y) != fmt.Sprint(mode) {
				t.Fatalf("%s%v: drew %v, the mode is %v", s.Kind(), s.Params(), y, mode)
			}
		}
	}
}

// TestScoreSamplingSpaces lists the spaces with an exact sampler of scores: those whose Partition
// is a product, a one-of sum, a tree, a k-subset recursion or the rankings' subset programme (up
// to permPartitionMax labels) or the cycles' Held–Karp programme (up to cyclePartitionMax vertices).
func TestScoreSamplingSpaces(t *testing.T) {
	for _, c := range []struct {
		s    space.Space
		want bool
	}{
		{must(t, "multiclass", 3), true}, {must(t, "ordinal", 3), true}, {must(t, "multilabel", 3), true},
		{must(t, "ksubsets", 4, 2), true}, {must(t, "tournaments", 3), true}, {must(t, "subtrees", -1, 0), true},
		{must(t, "hierarchy_paths", 0, -1, 0), true},
		{must(t, "permutations", 4), true}, {must(t, "permutations", 17), false},
		{must(t, "dicycles", 4), true}, {must(t, "dicycles", 15), false}, {must(t, "ucycles", 4), true}, {must(t, "ucycles", 15), false},
	} {
		if _, ok := space.ScoreSamplingOf(c.s); ok != c.want {
			t.Errorf("%s%v: ScoreSamplingOf = %v, want %v", c.s.Kind(), c.s.Params(), ok, c.want)
		}
	}
}

// must builds a registered space or fails the test.
func must(t *testing.T, kind string, params ...int64) space.Space {
	t.Helper()
	s, err := space.New(kind, params)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
