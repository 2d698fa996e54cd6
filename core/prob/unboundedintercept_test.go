package prob

import (
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// TestUnboundedIntercepts: the coordinates whose intercept has no finite optimum are those that
// vary over Y yet take one extreme value in every row of positive weight; a coordinate constant
// over Y (a subtree's root) and rows of weight 0 do not count.
func TestUnboundedIntercepts(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		params  []int64
		psi     [][]float64
		weights []float64
		want    []int
	}{
		{"multilabel", []int64{3}, [][]float64{{1, 0, 1}, {1, 1, 1}}, nil, []int{0, 2}},
		{"multilabel", []int64{3}, [][]float64{{1, 0, 1}, {0, 1, 1}}, []float64{1, 0}, []int{0, 1, 2}},
		{"multilabel", []int64{2}, [][]float64{{1, 0}, {0, 1}}, nil, nil},
		{"multiclass", []int64{3}, [][]float64{{1, 0, 0}, {0, 1, 0}}, nil, []int{2}}, // a class never seen
		{"permutations", []int64{3}, [][]float64{{1, 1, -1}, {1, -1, -1}}, nil, []int{0, 2}},
		{"subtrees", []int64{-1, 0, 0}, [][]float64{{1, 1, 0}, {1, 1, 1}}, nil, []int{1}}, // the root is constant over Y
	} {
		sp, err := space.New(tc.kind, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		psi := mat.NewDense(len(tc.psi), sp.Dim(), nil)
		for i, row := range tc.psi {
			psi.SetRow(i, row)
		}
		if got := unboundedIntercepts(sp, psi, tc.weights); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: got %v, want %v", tc.kind, tc.psi, got, tc.want)
		}
	}
	ml, _ := space.New("multilabel", []int64{12})
	all := mat.NewDense(2, 12, nil)
	if w := unboundedWarning(ml, all, nil); !strings.Contains(w, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (12 in all) of ψ") {
		t.Errorf("warning %q", w)
	}
	all.Set(1, 0, 1)
	if w := unboundedWarning(ml, all, []float64{1, 0}); !strings.Contains(w, "(12 in all)") {
		t.Errorf("a row of weight 0 counted: %q", w)
	}
}

// TestUnseenStructures: on the spaces whose ψ(Y) is a simplex's vertices, a structure never seen
// (with positive weight) is warned of, though no coordinate is constant (Ordinal(4) without its
// level 1, HierarchyPaths without one of its nodes, probe CH).
func TestUnseenStructures(t *testing.T) {
	ord, _ := space.New("ordinal", []int64{4})
	rows := func(sp space.Space, ys ...int64) *mat.Dense {
		psi := mat.NewDense(len(ys), sp.Dim(), nil)
		for i, y := range ys {
			row := psi.RawRowView(i)
			sp.Embed([]int64{y}, row)
		}
		return psi
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
		w := unboundedWarning(ord, rows(ord, tc.ys...), tc.weights)
		if (w != "") != tc.warns || (tc.warns && !strings.Contains(w, "1 of the space's 4 structures never occur")) {
			t.Errorf("ordinal %v weights %v: warning %q, want one: %v", tc.ys, tc.weights, w, tc.warns)
		}
	}
	hp, _ := space.New("hierarchy_paths", []int64{0, -1, 0, 0, 1})
	if w := unboundedWarning(hp, rows(hp, 0, 2, 3), nil); !strings.Contains(w, "1 of the space's 4 structures") {
		t.Errorf("hierarchy paths: warning %q", w)
	}
}
