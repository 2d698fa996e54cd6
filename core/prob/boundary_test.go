package prob

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// countsOf returns the boundary counts of the structures ys (one row each) with weights.
func countsOf(t *testing.T, sp space.Space, ys [][]int64, weights []float64) []float64 {
	t.Helper()
	counts := make([]float64, BoundaryLen(sp))
	if err := BoundaryCountsInto(sp, counts, slices.Concat(ys...), len(ys), weights); err != nil {
		t.Fatal(err)
	}
	return counts
}

// TestUnboundedIntercepts: the coordinates whose intercept has no finite optimum are those that
// vary over Y yet take one extreme value in every row of positive weight; a coordinate constant
// over Y (a subtree's root) and rows of weight 0 do not count.
func TestUnboundedIntercepts(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		params  []int64
		ys      [][]int64
		weights []float64
		want    []int
	}{
		{"multilabel", []int64{3}, [][]int64{{1, 0, 1}, {1, 1, 1}}, nil, []int{0, 2}},
		{"multilabel", []int64{3}, [][]int64{{1, 0, 1}, {0, 1, 1}}, []float64{1, 0}, []int{0, 1, 2}},
		{"multilabel", []int64{2}, [][]int64{{1, 0}, {0, 1}}, nil, nil},
		{"multiclass", []int64{3}, [][]int64{{0}, {1}}, nil, []int{2}}, // a class never seen
		{"permutations", []int64{3}, [][]int64{{1, 2, 3}, {1, 3, 2}}, nil, []int{0, 1}},
		{"subtrees", []int64{-1, 0, 0}, [][]int64{{1, 1, 0}, {1, 1, 1}}, nil, []int{1}}, // the root is constant over Y
	} {
		sp, err := space.New(tc.kind, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if got := unboundedIntercepts(sp, countsOf(t, sp, tc.ys, tc.weights)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: got %v, want %v", tc.kind, tc.ys, got, tc.want)
		}
	}
	ml, _ := space.New("multilabel", []int64{12})
	zeros, first := make([]int64, 12), make([]int64, 12)
	first[0] = 1
	if w := unboundedWarning(ml, countsOf(t, ml, [][]int64{zeros, zeros}, nil)); !strings.Contains(w, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (12 in all) of ψ") {
		t.Errorf("warning %q", w)
	}
	if w := unboundedWarning(ml, countsOf(t, ml, [][]int64{zeros, first}, []float64{1, 0})); !strings.Contains(w, "(12 in all)") {
		t.Errorf("a row of weight 0 counted: %q", w)
	}
	if w := unboundedWarning(ml, countsOf(t, ml, [][]int64{zeros, first}, []float64{0, 0})); w != "" {
		t.Errorf("no row of positive weight: warning %q", w)
	}
}

// TestUnseenStructures: on the spaces whose ψ(Y) is a simplex's vertices, a structure never seen
// (with positive weight) is warned of, though no coordinate is constant (Ordinal(4) without its
// level 1, HierarchyPaths without one of its nodes, probe CH).
func TestUnseenStructures(t *testing.T) {
	ord, _ := space.New("ordinal", []int64{4})
	ids := func(ys ...int64) [][]int64 {
		out := make([][]int64, len(ys))
		for i, y := range ys {
			out[i] = []int64{y}
		}
		return out
	}
	for _, tc := range []struct {
		ys      []int64
		weights []float64
		warns   bool
	}{
		{[]int64{0, 2, 3, 0, 2}, nil, true},
		{[]int64{0, 1, 2, 3}, nil, false},
		{[]int64{0, 1, 2, 3}, []float64{1, 0, 1, 1}, true},
	} {
		w := unboundedWarning(ord, countsOf(t, ord, ids(tc.ys...), tc.weights))
		if (w != "") != tc.warns || (tc.warns && !strings.Contains(w, "1 of the space's 4 structures never occur")) {
			t.Errorf("ordinal %v weights %v: warning %q, want one: %v", tc.ys, tc.weights, w, tc.warns)
		}
	}
	hp, _ := space.New("hierarchy_paths", []int64{0, -1, 0, 0, 1})
	if w := unboundedWarning(hp, countsOf(t, hp, ids(0, 2, 3), nil)); !strings.Contains(w, "1 of the space's 4 structures") {
		t.Errorf("hierarchy paths: warning %q", w)
	}
	// simplices whose structures are not ids, numbered by SimplexIDs (probe CL): UndirectedCycles(4)
	// without its first cycle, the subtrees of a chain without {0, 1}
	uc, _ := space.New("ucycles", []int64{4})
	var cycles [][]int64
	_ = uc.Enumerate(func(y []int64) bool { cycles = append(cycles, slices.Clone(y)); return true })
	chain, _ := space.New("subtrees", []int64{-1, 0, 1, 2})
	for _, tc := range []struct {
		sp    space.Space
		rows  [][]int64
		total int
	}{
		{uc, cycles[1:], 7},
		{chain, [][]int64{{1, 0, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}}, 4},
	} {
		w := unboundedWarning(tc.sp, countsOf(t, tc.sp, tc.rows, nil))
		if !strings.Contains(w, fmt.Sprintf("1 of the space's %d structures never occur", tc.total)) {
			t.Errorf("%s%v without one structure: warning %q", tc.sp.Kind(), tc.sp.Params(), w)
		}
		if w := unboundedWarning(tc.sp, countsOf(t, tc.sp, append(slices.Clone(tc.rows), tc.rows[0]), nil)); !strings.Contains(w, "never occur") {
			t.Errorf("%s%v: a repeated structure counted as another: %q", tc.sp.Kind(), tc.sp.Params(), w)
		}
	}
}

// TestBoundaryCountsAddUp: the counts of parts of a data set (an empty one, one weighing nothing)
// add up to the counts of the whole, so FitSums warns exactly where Fit does, with the same words,
// on every family with exact inference.
func TestBoundaryCountsAddUp(t *testing.T) {
	for _, tc := range append(exactFamilies(), family{"hierarchy_paths", []int64{0, -1, 0, 0, 1, 1}}) {
		for _, clamp := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/clamped=%v", tc.kind, clamp), func(t *testing.T) {
				sp := mustSpace(t, tc.kind, tc.params...)
				const m, n = 60, 3
				X, ys := syntheticData(t, sp, m, n, 0.8, 7)
				w := sp.Width()
				if clamp { // every row takes the first row's structure: every intercept unbounded
					for i := 1; i < m; i++ {
						copy(ys[i*w:(i+1)*w], ys[:w])
					}
				}
				weights := make([]float64, m)
				for i := range weights {
					weights[i] = 1
				}
				for i := 10; i < 30; i++ {
					weights[i] = 0
				}
				cuts := parts(m, 10, 0, 20)
				total := make([]float64, BoundaryLen(sp))
				for _, c := range cuts {
					part := make([]float64, BoundaryLen(sp))
					if err := BoundaryCountsInto(sp, part, ys[c[0]*w:c[1]*w], c[1]-c[0], weights[c[0]:c[1]]); err != nil {
						t.Fatal(err)
					}
					for i, v := range part {
						total[i] += v
					}
				}
				whole := countsOf(t, sp, split(ys, w), weights)
				if !slices.Equal(total, whole) {
					t.Fatalf("parts' counts %v, the whole's %v", total, whole)
				}
				opt := Options{Tol: 1e-8, MaxIter: 300, Intercept: true}
				want, err := Fit(sp, X, m, n, ys, weights, opt)
				if err != nil {
					t.Fatal(err)
				}
				opt.Boundary = total
				got, err := FitSums(sp, n, opt, partSums(sp, X, n, ys, weights, true, nil, cuts))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Warnings, want.Warnings) {
					t.Errorf("FitSums warns %q, Fit %q", got.Warnings, want.Warnings)
				}
				if clamp && len(want.Warnings) == 0 {
					t.Errorf("one structure in every row: no warning")
				}
			})
		}
	}
}

// split cuts m rows of width w into one slice each.
func split(ys []int64, w int) [][]int64 {
	out := make([][]int64, 0, len(ys)/w)
	for i := 0; i+w <= len(ys); i += w {
		out = append(out, ys[i:i+w])
	}
	return out
}

// TestBoundaryCountsRefusals: counts of another length, or that are not whole numbers of rows no
// larger than the rows counted, are refused by FitSums before its first sums; bad structures or
// weights of a part are refused by BoundaryCountsInto as NewProblem refuses them.
func TestBoundaryCountsRefusals(t *testing.T) {
	sp := mustSpace(t, "multilabel", 2)
	good := []float64{3, 1, 2, 2, 1}
	for _, bad := range [][]float64{good[:4], {3, 4, 2, 2, 1}, {3, 1.5, 2, 2, 1}, {3, -1, 2, 2, 1}, {math.NaN(), 1, 2, 2, 1}} {
		called := false
		opt := Options{Tol: 1e-6, MaxIter: 10, Intercept: true, Boundary: bad}
		_, err := FitSums(sp, 2, opt, func(_, _ *mat.Dense, _ int) (float64, float64, error) {
			called = true
			return 0, 1, nil
		})
		if err == nil || !strings.Contains(err.Error(), "boundary counts") || called {
			t.Errorf("counts %v: err %v, sums called %v", bad, err, called)
		}
	}
	counts := make([]float64, BoundaryLen(sp))
	if err := BoundaryCountsInto(sp, counts, []int64{0, 2}, 1, nil); err == nil || !strings.Contains(err.Error(), "y: row 0") {
		t.Errorf("a bad label: %v", err)
	}
	if err := BoundaryCountsInto(sp, counts[:4], []int64{0, 1}, 1, nil); err == nil || !strings.Contains(err.Error(), "expected 5 values") {
		t.Errorf("a short buffer: %v", err)
	}
	if err := BoundaryCountsInto(sp, counts, []int64{0, 1}, 1, []float64{-1}); err == nil || !strings.Contains(err.Error(), "sample_weight[0]") {
		t.Errorf("a negative weight: %v", err)
	}
}
