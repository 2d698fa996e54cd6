package space_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestHierarchyPathsByEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	shapes := treeShapes()
	shapes = append(shapes, struct {
		name   string
		parent []int
	}{"random 40", treeRandom(r, 40)})
	for i, sh := range shapes {
		for _, leaves := range []bool{false, true} {
			s, err := space.NewHierarchyPaths(sh.parent, leaves)
			if err != nil {
				t.Fatalf("%s: %v", sh.name, err)
			}
			checkRoundTrip(t, s)
			b := spacetest.CheckCounts(t, s, 1e-12)
			spacetest.CheckDecoder(t, s, b, 1000, uint64(i))
			spacetest.CheckSampler(t, s, b, 50*len(b.Ys), uint64(300+i), 1e-4)
		}
	}
}

func TestHierarchyPathsValidate(t *testing.T) {
	// 0 is the root; 1 and 2 are its children; 3 and 4 are the children of 1.
	parent := []int64{-1, 0, 0, 1, 1}
	all, err := space.New("hierarchy_paths", append([]int64{0}, parent...))
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := space.New("hierarchy_paths", append([]int64{1}, parent...))
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Validate([]int64{1}); err != nil {
		t.Errorf("all nodes: node 1 rejected: %v", err)
	}
	cases := []struct {
		s    space.Space
		y    []int64
		want string
	}{
		{all, []int64{5}, "node 5 outside [0, 5)"},
		{all, []int64{-1}, "node -1 outside [0, 5)"},
		{all, []int64{1, 2}, "one node id, got 2 values"},
		{leaves, []int64{1}, "node 1 is not a leaf"},
		{leaves, []int64{0}, "node 0 is not a leaf"},
	}
	for _, c := range cases {
		if err := c.s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
	for _, p := range [][]int64{{2, -1, 0}, {-1, -1}, {1}} {
		if _, err := space.New("hierarchy_paths", p); err == nil {
			t.Errorf("New(hierarchy_paths, %v) accepted", p)
		}
	}
	if _, err := space.New("hierarchy_paths", []int64{2, -1, 0}); err == nil || !strings.Contains(err.Error(), "leaves_only flag is 2") {
		t.Errorf("bad flag: error %v", err)
	}
}

// A forest is modelled with a virtual root: the paths of two trees {0 ← 1} and {2 ← 3} hang below
// the extra node 4.
func TestHierarchyPathsForestNeedsVirtualRoot(t *testing.T) {
	if _, err := space.NewHierarchyPaths([]int{-1, 0, -1, 2}, false); err == nil || !strings.Contains(err.Error(), "two roots: 0 and 2") {
		t.Fatalf("forest accepted or unclear error: %v", err)
	}
	s, err := space.NewHierarchyPaths([]int{4, 0, 4, 2, -1}, true)
	if err != nil {
		t.Fatal(err)
	}
	spacetest.CheckCounts(t, s, 1e-12)
}

func TestHierarchyPathsLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, leaves := range []bool{false, true} {
		s, err := space.NewHierarchyPaths(treeRandom(r, 3000), leaves)
		if err != nil {
			t.Fatal(err)
		}
		checkLargeFinite(t, s)
		checkLinearMoments(t, s, 4000, 45, testDirections(s.Dim(), []int{1, 2}, 2, 46))
	}
	// A path of 3000 nodes: p_v = (N − depth(v))/N, and the deepest node wins when u > 0.
	s, _ := space.NewHierarchyPaths(treePath(3000), false)
	p := make([]float64, 3000)
	s.Mean(p)
	for v := range p {
		if want := float64(3000-v) / 3000; math.Abs(p[v]-want) > 1e-15 {
			t.Fatalf("path: p[%d] = %v, want %v", v, p[v], want)
		}
	}
	u := make([]float64, 3000)
	for v := range u {
		u[v] = 1
	}
	y := []int64{0}
	s.Decode(u, y)
	if y[0] != 2999 {
		t.Errorf("path with positive scores decoded to node %d, want 2999", y[0])
	}
}
