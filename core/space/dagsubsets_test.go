package space_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// closedSets lists every node set of the DAG that holds the root and the parents of its nodes, by
// brute force over all subsets (n ≤ 16).
func closedSets(parents [][]int) [][]int64 {
	n := len(parents)
	var out [][]int64
	for mask := 0; mask < 1<<n; mask++ {
		ok := true
		for v := 0; v < n && ok; v++ {
			if len(parents[v]) == 0 && mask>>v&1 == 0 {
				ok = false // the root
			}
			if mask>>v&1 == 1 {
				for _, p := range parents[v] {
					if mask>>p&1 == 0 {
						ok = false
					}
				}
			}
		}
		if ok {
			y := make([]int64, n)
			for v := range y {
				y[v] = int64(mask >> v & 1)
			}
			out = append(out, y)
		}
	}
	return out
}

// The minimum-cut decoder returns a closed set of the largest score, by brute force over every
// closed set, on DAGs of every shape in dagShapes and for scores of scale 1e-200 to 1e200, with
// ties (integer scores) and all-negative and all-positive rows.
func TestDAGSubsetsDecodeEqualsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	shapes := dagShapes(r)
	for i := 0; i < 6; i++ {
		shapes["random 14 dense"+string(rune('a'+i))] = dagRandom(r, 14, 4)
	}
	for name, parents := range shapes {
		s, err := space.NewDAGSubsets(parents)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRoundTrip(t, s)
		ys := closedSets(parents)
		n := len(parents)
		u := make([]float64, n)
		y := make([]int64, n)
		for trial := 0; trial < 200; trial++ {
			scale := []float64{1e-200, 1, 1e200}[trial%3]
			for v := range u {
				switch trial % 5 {
				case 0:
					u[v] = float64(r.IntN(5) - 2) // ties
				case 1:
					u[v] = -scale * r.Float64()
				case 2:
					u[v] = scale * r.Float64()
				default:
					u[v] = scale * r.NormFloat64()
				}
			}
			s.Decode(u, y)
			if err := s.Validate(y); err != nil {
				t.Fatalf("%s: decoded an invalid set %v: %v", name, y, err)
			}
			best := math.Inf(-1)
			for _, z := range ys {
				best = math.Max(best, score(u, z))
			}
			if got := score(u, y); got < best-1e-9*math.Abs(best) {
				t.Fatalf("%s trial %d: decoded score %v, the best closed set scores %v (u = %v)", name, trial, got, best, u)
			}
		}
	}
}

func score(u []float64, y []int64) float64 {
	var f float64
	for v, x := range y {
		f += u[v] * float64(x)
	}
	return f
}

// The space has no counts and says so: Counts wraps ErrUncounted and reads as the reason, the uniform
// moments are NaN (never a plausible number), LogCount is +Inf, Enumerate refuses.
func TestDAGSubsetsAreUncounted(t *testing.T) {
	s, err := space.NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	err = space.Counts(s)
	if !errors.Is(err, space.ErrUncounted) || !strings.Contains(err.Error(), "#P-hard") || !strings.Contains(err.Error(), "empirical_weight=1") {
		t.Fatalf("Counts = %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || strings.HasPrefix(msg, "space:") { // users read the reason alone
		t.Errorf("Counts = %q: the reason, on one line, without ErrUncounted's own text before it", msg)
	}
	p := make([]float64, 4)
	s.Mean(p)
	if !math.IsNaN(p[0]) || !math.IsNaN(s.Covariance().At(0, 1)) || !math.IsInf(s.LogCount(), 1) {
		t.Fatal("uniform moments of an uncounted space must be NaN, LogCount +Inf")
	}
	if s.Enumerate(func([]int64) bool { return true }) != space.ErrTooLarge || space.Enumerable(s) == nil {
		t.Fatal("an uncounted space must refuse enumeration")
	}
	for _, kind := range []string{"multilabel", "subtrees", "dag_paths"} {
		sp, _ := space.New(kind, map[string][]int64{"multilabel": {3}, "subtrees": {-1, 0}, "dag_paths": {0, 2, 0, 1, 0}}[kind])
		if space.Counts(sp) != nil {
			t.Errorf("%s: counted spaces have no Counts error", kind)
		}
	}
}

func TestDAGSubsetsValidate(t *testing.T) {
	s, err := space.NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		y    []int64
		want string
	}{
		{[]int64{1, 1, 0, 1}, "node 3 is in the node set but its parent 2 is not"},
		{[]int64{0, 0, 0, 0}, "the root 0 is not"},
		{[]int64{1, 2, 0, 0}, "node 1 has value 2"},
		{[]int64{1, 1}, "has 4 entries"},
	} {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want %q", c.y, err, c.want)
		}
	}
}

func BenchmarkDAGSubsetsDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s, err := space.NewDAGSubsets(dagRandom(r, 4000, 3))
	if err != nil {
		b.Fatal(err)
	}
	u := make([]float64, s.Dim())
	for i := range u {
		u[i] = r.NormFloat64() - 0.5
	}
	y := make([]int64, s.Dim())
	for b.Loop() {
		s.Decode(u, y)
	}
}
