package ridge

import (
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
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
	err = md.Predict(X, 30, 3, make([]int64, 30*6), nil)
	if !budget.Is(err) || !strings.Contains(err.Error(), "30 rows") {
		t.Fatalf("Predict = %v, want a budget error naming the rows", err)
	}
}

// The exact solver at extreme alpha: the coefficients' diagonal (2α) and the unpenalised
// intercept's lie 10³⁰⁰ apart, which Cholesky reported as "not positive definite" (naming only a
// condition number); with the system scaled to a unit diagonal it returns the limit, W ≈ 0 and
// the intercept-only optimum. Beyond check.MaxAlpha, 2α overflows: an error names alpha.
func TestExtremeAlphaSolves(t *testing.T) {
	sp, err := space.New("permutations", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 20, 3, 2)
	var intercept []float64
	for _, alpha := range []float64{1e200, 1e300, check.MaxAlpha} {
		opt := baseOptions()
		opt.Alpha, opt.Solver = alpha, Exact
		md, err := Fit(sp, X, 20, 3, ys, nil, opt)
		if err != nil {
			t.Fatalf("alpha = %g: %v", alpha, err)
		}
		rows, _ := md.Coef.Dims()
		for j := 0; j < rows-1; j++ {
			for _, v := range md.Coef.RawRowView(j) {
				if math.Abs(v) > 1e-150 {
					t.Fatalf("alpha = %g: coefficient %v, want ≈ 0", alpha, v)
				}
			}
		}
		b := md.Coef.RawRowView(rows - 1)
		if intercept == nil {
			intercept = append([]float64(nil), b...)
		}
		for a := range b {
			if math.Abs(b[a]-intercept[a]) > 1e-12*math.Max(1, math.Abs(intercept[a])) {
				t.Fatalf("alpha = %g: intercept %v, at alpha = 1e200 %v", alpha, b, intercept)
			}
		}
	}
	// Below check.MinAlpha alpha is subnormal: linear CG at 1e-310 on inputs near 1e-155 returned an
	// intercept-only model (probe DJ). Both ends are refused naming alpha, by every solver.
	for _, alpha := range []float64{1e308, 1e-310, math.SmallestNonzeroFloat64, math.Nextafter(check.MinAlpha, 0)} {
		for _, solver := range []Solver{Exact, CG, SGD} {
			opt := baseOptions()
			opt.Alpha, opt.Solver = alpha, solver
			if _, err := Fit(sp, X, 20, 3, ys, nil, opt); err == nil || !strings.Contains(err.Error(), "alpha must be a positive number from") {
				t.Fatalf("alpha = %g, %v: %v, want an error naming alpha", alpha, solver, err)
			}
		}
	}
	opt := baseOptions()
	opt.Alpha, opt.Solver = check.MinAlpha, CG
	if _, err := Fit(sp, X, 20, 3, ys, nil, opt); err != nil {
		t.Fatalf("alpha = check.MinAlpha: %v", err)
	}
}

// A part's CG set-up sums hold a k×k Gram matrix: one with 60,000 features (29 GB) is refused
// by the budget, naming the features, before it is allocated.
func TestCGSetupIsBudgeted(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	if err := budget.Set(1 << 30); err != nil {
		t.Fatal(err)
	}
	const m, n = 2, 60000
	X := make([]float64, m*n)
	ys := []int64{1, 0, 1, 0, 1, 1}
	opt := baseOptions()
	opt.Solver = CG
	_, err = CGSetupOf(sp, X, m, n, ys, nil, opt)
	if !budget.Is(err) || !strings.Contains(err.Error(), "60000 features") {
		t.Fatalf("CGSetupOf = %v, want a budget error naming the features", err)
	}
}
