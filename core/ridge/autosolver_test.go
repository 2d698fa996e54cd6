package ridge

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// TestResolveSolver checks Auto's choice at shapes whose fits were timed both ways (the
// exact/CG times in each row's comment, 2 cores, through Python), and that an explicit solver
// and the limit of unknowns are obeyed.
func TestResolveSolver(t *testing.T) {
	for _, c := range []struct {
		name    string
		s       Solver
		m, k, d int
		z       float64
		want    Solver
	}{
		{"explicit exact", Exact, 100000, 30, 20, 10, Exact},
		{"explicit cg", CG, 10, 2, 1, 1, CG},
		{"Multilabel(20), 2 features", Auto, 5000, 3, 20, 10, Exact},         // 4.5 / 7.0 ms
		{"Multilabel(20), 5 features", Auto, 5000, 6, 20, 10, Exact},         // 6.8 / 9.6 ms
		{"Multilabel(20), 20 features", Auto, 5000, 21, 20, 10, CG},          // 27 / 12 ms
		{"Multilabel(20), 20 features, 200 rows", Auto, 200, 21, 20, 10, CG}, // 7.2 / 1.7 ms
		{"Multiclass(10), 40 features", Auto, 5000, 41, 10, 1, CG},           // 13.7 / 5.3 ms
		{"Multiclass(10), 5 features", Auto, 5000, 6, 10, 1, Exact},          // 1.7 / 2.6 ms
		{"Permutations(5), 2 features", Auto, 5000, 3, 10, 10, CG},           // 4.1 / 2.1 ms
		{"Permutations(5), 40 features", Auto, 5000, 41, 10, 10, CG},         // 68 / 5.7 ms
		{"at ExactLimit", Auto, 1 << 30, 2, ExactLimit / 2, 0, Exact},
		{"beyond ExactLimit", Auto, 1 << 30, 2, ExactLimit/2 + 1, 0, CG},
		{"scikit-learn's check of partial_fit after fit", Auto, 10, 4, 3, 1, Exact}, // CG's cost is lower
		{"a floor's worth", Auto, 60, 51, 3, 1.5, CG},
	} {
		// the rows of W with an intercept: n = k − 1 features
		if got := resolveSolver(c.s, c.m, c.k-1, c.k, c.d, func() float64 { return c.z }); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMeanNonzeros checks the mean count of non-zero coordinates of ψ = δ + p that Auto's cost
// model reads, with a label mostly on.
func TestMeanNonzeros(t *testing.T) {
	sp, err := space.NewMultilabel(4)
	if err != nil {
		t.Fatal(err)
	}
	// 1 + 3 + 0 + 3 ones
	ys := []int64{1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1}
	X := []float64{1, 2, 3, 4}
	opt := Options{Alpha: 1, Intercept: true, Solver: Auto, Tol: 1e-8, MaxIter: 100}
	if got := meanNonzeros(preparedProblem(t, sp, X, 4, 1, ys, nil, &opt)); math.Abs(got-7.0/4) > 1e-15 {
		t.Errorf("%v, want 7/4", got)
	}
}

// TestAutoFallsBackToCGWhereTheNormalEquationsFail: X + 1e8 without an intercept gives normal
// equations double precision cannot factor. solver=exact refuses them, naming the way out; auto,
// which resolves to exact at this size, refused them too where CG fits them (probe CG). It now
// runs CG, to CG's own coefficients.
func TestAutoFallsBackToCGWhereTheNormalEquationsFail(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 20, 4
	X, ys := synthetic(t, sp, m, n, 11)
	for i := range X {
		X[i] += 1e8
	}
	opt := Options{Alpha: 0.1, Tol: 1e-10, MaxIter: 1000}
	exact := opt
	exact.Solver = Exact
	if _, err := Fit(sp, X, m, n, ys, nil, exact); err == nil || !strings.Contains(err.Error(), "cannot be solved in double precision") {
		t.Fatalf("solver=exact: error %v, want the normal equations refused", err)
	}
	cg := opt
	cg.Solver = CG
	want, err := Fit(sp, X, m, n, ys, nil, cg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatalf("solver=auto: %v", err)
	}
	if got.Solver != CG || got.stats != nil || !mat.Equal(got.Coef, want.Coef) {
		t.Errorf("solver=auto ran %v (statistics kept: %v), coefficients equal to CG's: %v", got.Solver, got.stats != nil, mat.Equal(got.Coef, want.Coef))
	}
}

// TestFitErrorsCarryTheFitsWarnings: a fit that fails says what it would have warned of (an rbf
// Gram matrix made indefinite by cancellation was refused as "not positive semi-definite" alone,
// probe CH), except when it was cancelled.
func TestFitErrorsCarryTheFitsWarnings(t *testing.T) {
	md := &Model{Warnings: []string{"kernel='rbf' loses precision"}}
	err := md.withWarnings(errors.New("the kernel matrix is not positive semi-definite"))
	if want := "the kernel matrix is not positive semi-definite; the likely cause: kernel='rbf' loses precision"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if err := md.withWarnings(ErrCancelled); err != ErrCancelled {
		t.Errorf("a cancelled fit: got %v", err)
	}
	plain := errors.New("x")
	if err := (&Model{}).withWarnings(plain); err != plain {
		t.Errorf("no warnings: got %v", err)
	}
}
