package ridge

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
)

// A fit's working set is estimated and checked before any of it is allocated:
// Permutations(20000) (d ≈ 2·10⁸) on 2 rows used to abort the process with "out of memory".
func TestFitWorkingSetIsBudgeted(t *testing.T) {
	sp, err := space.New("permutations", []int64{20000})
	if err != nil {
		t.Fatal(err)
	}
	ys := make([]int64, 2*20000)
	for i := range ys {
		ys[i] = int64(i%20000 + 1)
	}
	_, err = Fit(sp, []float64{1, 2, 3, 4, 5, 6}, 2, 3, ys, nil, baseOptions())
	if !budget.Is(err) || !strings.Contains(err.Error(), "dimension d = 199990000") || !strings.Contains(err.Error(), "2 samples × 3 features") {
		t.Fatalf("Fit = %v, want a budget error naming the rows, features and d", err)
	}
}

func TestPredictIsBudgeted(t *testing.T) {
	defer func() { _ = budget.Set(0) }()
	sp, err := space.New("permutations", []int64{6})
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 30, 3, 1)
	md, err := Fit(sp, X, 30, 3, ys, nil, baseOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(1000); err != nil {
		t.Fatal(err)
	}
	err = md.Predict(X, 30, 3, make([]int64, 30*6))
	if !budget.Is(err) || !strings.Contains(err.Error(), "30 rows") {
		t.Fatalf("Predict = %v, want a budget error naming the rows", err)
	}
}

// A solve that fails for an extreme alpha says so, and which alpha would work: it used to report
// only a condition number.
func TestExtremeAlphaIsNamed(t *testing.T) {
	sp, err := space.New("permutations", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 20, 3, 2)
	opt := baseOptions()
	opt.Alpha, opt.Solver = 1e300, Exact
	_, err = Fit(sp, X, 20, 3, ys, nil, opt)
	if err == nil || !strings.HasPrefix(err.Error(), "alpha = 1e+300") || !strings.Contains(err.Error(), "alpha at most about") {
		t.Fatalf("Fit = %v, want an error naming alpha and the range that works", err)
	}
}
