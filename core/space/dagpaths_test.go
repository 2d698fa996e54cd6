package space_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// dagRandom is a random rooted DAG on n nodes: node labels permuted, every non-root node given
// between 1 and maxParents distinct parents among the nodes before it.
func dagRandom(r *rand.Rand, n, maxParents int) [][]int {
	label := r.Perm(n)
	parents := make([][]int, n)
	parents[label[0]] = nil
	for v := 1; v < n; v++ {
		k := 1 + r.IntN(min(maxParents, v))
		for _, i := range r.Perm(v)[:k] {
			parents[label[v]] = append(parents[label[v]], label[i])
		}
	}
	return parents
}

// dagShapes are small DAGs with the shapes that break tree formulas: a diamond (one node below two
// incomparable ones, whose descendant sets overlap), a node whose parents are ancestor and
// descendant of each other, and a tree given as a DAG.
func dagShapes(r *rand.Rand) map[string][][]int {
	shapes := map[string][][]int{
		"single node":            {nil},
		"diamond":                {nil, {0}, {0}, {1, 2}},
		"shortcut":               {nil, {0}, {0, 1}},
		"two diamonds":           {nil, {0}, {0}, {1, 2}, {1}, {3, 4}, {2, 5}},
		"tree":                   {nil, {0}, {0}, {1}, {1}, {2}},
		"root not first, shared": {{2}, {2}, nil, {0, 1}, {0, 1, 3}},
	}
	for i := 0; i < 4; i++ {
		shapes["random 12 #"+string(rune('a'+i))] = dagRandom(r, 12, 3)
	}
	return shapes
}

func TestDAGPathsByEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	i := 0
	for name, parents := range dagShapes(r) {
		for _, leaves := range []bool{false, true} {
			s, err := space.NewDAGPaths(parents, leaves)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkRoundTrip(t, s)
			b := spacetest.CheckCounts(t, s, 1e-12)
			spacetest.CheckDecoder(t, s, b, 300, uint64(i))
			spacetest.CheckSampler(t, s, b, 200*len(b.Ys), uint64(600+i), 1e-4)
			spacetest.CheckPartition(t, s, b, 20, uint64(700+i), 1e-9)
			var top float64
			for _, psi := range b.Psis {
				var n2 float64
				for _, v := range psi {
					n2 += v * v
				}
				top = math.Max(top, math.Sqrt(n2))
			}
			if s.MaxNorm() != top {
				t.Errorf("%s: MaxNorm %v, largest ‖ψ‖ %v", name, s.MaxNorm(), top)
			}
			i++
		}
	}
}

// A tree given as parent sets is the same space as HierarchyPaths over it.
func TestDAGPathsOfATreeEqualHierarchyPaths(t *testing.T) {
	parent := []int{-1, 0, 0, 1, 1, 2, 5, 5}
	parents := make([][]int, len(parent))
	for v, p := range parent {
		if p >= 0 {
			parents[v] = []int{p}
		}
	}
	for _, leaves := range []bool{false, true} {
		dag, err := space.NewDAGPaths(parents, leaves)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := space.NewHierarchyPaths(parent, leaves)
		if err != nil {
			t.Fatal(err)
		}
		d := dag.Dim()
		pd, pt := make([]float64, d), make([]float64, d)
		dag.Mean(pd)
		tree.Mean(pt)
		for i := 0; i < d; i++ {
			if math.Abs(pd[i]-pt[i]) > 1e-15 {
				t.Fatalf("mean %v, tree %v", pd, pt)
			}
			for j := 0; j < d; j++ {
				if a, b := dag.Covariance().At(i, j), tree.Covariance().At(i, j); math.Abs(a-b) > 1e-15 {
					t.Fatalf("S[%d,%d] = %v, tree %v", i, j, a, b)
				}
			}
		}
	}
}

func TestDAGPathsRefuseBadParents(t *testing.T) {
	for _, c := range []struct {
		params []int64
		want   string
	}{
		{[]int64{0, 0}, "at least one"},
		{[]int64{0, 2, 0, 0}, "two roots"},
		{[]int64{0, 2, 1, 1, 1, 0}, "no root"},
		{[]int64{0, 3, 0, 1, 2, 1, 1}, "cycle"},
		{[]int64{0, 2, 0, 1, 5}, "out of range"},
		{[]int64{0, 2, 0, 1, -1}, "out of range"},
		{[]int64{0, 2, 0, 1, 1}, "its own parent; node ids are 0-based"},
		{[]int64{0, 3, 0, 1, 0, 2, 0, 0}, "twice"},
		{[]int64{0, 2, 0, 1, 0, 7}, "left over"},
		{[]int64{0, 2, 0}, "cannot hold"},
		{[]int64{0, 2, 0, 9, 0}, "parent count of 9"},
		{[]int64{2, 1, 0}, "leaves_only flag"},
		{[]int64{0, 1 << 40}, "out of range"},
	} {
		_, err := space.New("dag_paths", c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error mentioning %q", c.params, err, c.want)
		}
	}
}

func TestDAGPathsValidate(t *testing.T) {
	s, err := space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		y    []int64
		want string
	}{
		{[]int64{4}, "outside"},
		{[]int64{-1}, "outside"},
		{[]int64{1}, "not a leaf"},
		{[]int64{3, 3}, "one node id"},
	} {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want %q", c.y, err, c.want)
		}
	}
	if err := s.Validate([]int64{3}); err != nil {
		t.Error(err)
	}
}

func BenchmarkDAGPathsDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s, err := space.NewDAGPaths(dagRandom(r, 4000, 3), false)
	if err != nil {
		b.Fatal(err)
	}
	u := make([]float64, s.Dim())
	for i := range u {
		u[i] = r.NormFloat64()
	}
	y := make([]int64, 1)
	for b.Loop() {
		s.Decode(u, y)
	}
}

// TestDAGAncestryFollowsTheBudget builds a chain of 4,000 nodes (8 million ancestor entries, about
// 100 MB with the descendant sets): refused under a 16 MiB budget with an error naming the DAG,
// built under the default one, with anc*(v) = {0, …, v} and desc*(v) = {v, …, N−1}.
func TestDAGAncestryFollowsTheBudget(t *testing.T) {
	const n = 4000
	parents := make([][]int, n)
	for v := 1; v < n; v++ {
		parents[v] = []int{v - 1}
	}
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	if err := budget.Set(16 << 20); err != nil {
		t.Fatal(err)
	}
	_, err := space.NewDAGSubsets(parents)
	if !budget.Is(err) || !strings.Contains(err.Error(), "ancestor sets of the dag_subsets space's DAG (4000 nodes") {
		t.Fatalf("under a 16 MiB budget: %v, want a budget error naming the ancestor sets", err)
	}
	if err := budget.Set(0); err != nil {
		t.Fatal(err)
	}
	s, err := space.NewDAGSubsets(parents)
	if err != nil {
		t.Fatal(err)
	}
	// Decoding all-positive scores picks every node: the closure of the deepest one.
	u := make([]float64, n)
	for i := range u {
		u[i] = 1
	}
	y := make([]int64, n)
	s.Decode(u, y)
	for v, b := range y {
		if b != 1 {
			t.Fatalf("node %d left out of the decoded chain", v)
		}
	}
	// A set closed under parents is a prefix of the chain: with −1 on every node but the root (0)
	// and the last (n), the whole chain (gain 2) beats every shorter prefix (gain ≤ 0).
	for i := range u {
		u[i] = -1
	}
	u[0], u[n-1] = 0, float64(n) // taking node n−1 takes the whole chain: gain n − (n−2) > 0
	s.Decode(u, y)
	for v, b := range y {
		if b != 1 {
			t.Fatalf("node %d left out of the chain closed under node %d", v, n-1)
		}
	}
}

// ladder is the DAG whose node v has the parents v−1 and v−2: anc*(v) holds every node up to v, so
// a decode sums about n²/2 ancestor entries.
func ladder(n int) [][]int {
	parents := make([][]int, n)
	for v := 1; v < n; v++ {
		parents[v] = []int{v - 1}
		if v > 1 {
			parents[v] = append(parents[v], v-2)
		}
	}
	return parents
}

// A decode of one row on a deep DAG sums millions of ancestor entries (0.6 s on a ladder of 23,000
// nodes): it looks at its stop flag as it goes, and DecodeWork counts those entries, so that a query
// of such rows is never run where Ctrl-C cannot reach it (probe CV: 40 rows ran 24 s deaf to it).
func TestDAGPathsDecodeStopsWithinARow(t *testing.T) {
	const n = 3000 // 4.5 million entries: a row takes several stop intervals
	s, err := space.NewDAGPaths(ladder(n), false)
	if err != nil {
		t.Fatal(err)
	}
	if work, want := space.DecodeWork(s), float64(n*(n+1)/2); work < want {
		t.Errorf("DecodeWork = %.3g, want at least the %.3g ancestor entries a decode sums", work, want)
	}
	u := make([]float64, n)
	for i := range u {
		u[i] = 1 // the deepest node scores highest: a decode that runs to its end returns it
	}
	y := make([]int64, 1)
	space.DecodeUntil(s, u, y, nil)
	if y[0] != n-1 {
		t.Fatalf("full decode: node %d, want %d", y[0], n-1)
	}
	stop := new(cancel.Flag)
	stop.Stop()
	space.DecodeUntil(s, u, y, stop)
	if y[0] == n-1 || y[0] < 0 || y[0] >= n {
		t.Errorf("decode with stop set: node %d, want one scored before the stop, short of %d", y[0], n-1)
	}
}

// Building a DAG space merges every node's parents' ancestor sets, in-degree × entries (30 s for
// 22,000 nodes of 100 parents each): NewUntil ends it once stop is set (probe CV).
func TestDAGSpacesStopBuildingTheirAncestry(t *testing.T) {
	dag := space.DAGParams(ladder(200))
	stop := new(cancel.Flag)
	stop.Stop()
	for kind, params := range map[string][]int64{"dag_paths": append([]int64{0}, dag...), "dag_subsets": dag} {
		if _, err := space.NewUntil(kind, params, stop); !errors.Is(err, cancel.ErrCancelled) {
			t.Errorf("%s with stop set: err = %v, want cancel.ErrCancelled", kind, err)
		}
		if sp, err := space.NewUntil(kind, params, nil); err != nil || sp.Dim() != 200 {
			t.Errorf("%s without stop: %v", kind, err)
		}
	}
}

// DAGSubsets decodes by a maximum flow, 0.7 s a row on a DAG of 23,000 nodes: it looks at its stop
// flag between augmenting paths and then writes the closure of the flow so far, a valid structure
// (probe CV).
func TestDAGSubsetsDecodeStopsWithAClosure(t *testing.T) {
	const n = 300
	s, err := space.NewDAGSubsets(ladder(n))
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, n)
	for i := range u {
		u[i] = -1
	}
	u[n-1] = 1 // the deepest node pulls in every other node: the optimum is the root alone
	y := make([]int64, n)
	space.DecodeUntil(s, u, y, nil)
	if on := countOn(y); on != 1 || y[0] != 1 {
		t.Fatalf("full decode: %d nodes on, want the root alone", on)
	}
	stop := new(cancel.Flag)
	stop.Stop()
	space.DecodeUntil(s, u, y, stop)
	if err := s.Validate(y); err != nil {
		t.Errorf("decode with stop set: not a closed set: %v", err)
	}
	if countOn(y) == 1 {
		t.Errorf("decode with stop set ran its flow to the optimum")
	}
}

func countOn(y []int64) (on int) {
	for _, v := range y {
		on += int(v)
	}
	return on
}

// A dense covariance of DAG paths walks a descendant set per entry (6 s for 1,000 nodes of 100
// parents each): DenseUntil looks at its stop flag before every row (probe CW).
func TestDenseUntilStops(t *testing.T) {
	s, err := space.NewDAGPaths(ladder(50), false)
	if err != nil {
		t.Fatal(err)
	}
	stop := new(cancel.Flag)
	stop.Stop()
	if _, err := space.DenseUntil(s.Covariance(), stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("with stop set: err = %v, want cancel.ErrCancelled", err)
	}
	S, err := space.DenseUntil(s.Covariance(), nil)
	if err != nil || S.At(3, 7) != s.Covariance().At(3, 7) {
		t.Errorf("without stop: %v", err)
	}
}
