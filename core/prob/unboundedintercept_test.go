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
	if unboundedWarning(nil) != "" {
		t.Error("a warning without coordinates")
	}
	many := make([]int, 12)
	for i := range many {
		many[i] = i
	}
	if w := unboundedWarning(many); !strings.Contains(w, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (12 in all) of ψ") {
		t.Errorf("warning %q", w)
	}
}
