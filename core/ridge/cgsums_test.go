package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// cgParts cuts m rows into parts ending at the given rows (the last part takes the rest) and
// returns the summed setup and the summed product a distributed CG fit runs on.
func cgParts(t testing.TB, sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options, ends []int) (*CGSetup, func(V, dst *mat.Dense) error) {
	t.Helper()
	w := sp.Width()
	bounds := append(append([]int{0}, ends...), m)
	part := func(a int) ([]float64, int, []int64, []float64) {
		lo, hi := bounds[a], bounds[a+1]
		var pw []float64
		if weights != nil {
			pw = weights[lo:hi]
		}
		return X[lo*n : hi*n], hi - lo, ys[lo*w : hi*w], pw
	}
	var total *CGSetup
	for a := 0; a+1 < len(bounds); a++ {
		px, pm, py, pw := part(a)
		st, err := CGSetupOf(sp, px, pm, n, py, pw, opt)
		if err != nil {
			t.Fatal(err)
		}
		if total == nil {
			total = st
			continue
		}
		total.B.Add(total.B, st.B)
		total.G.AddSym(total.G, st.G)
		total.M.AddSym(total.M, st.M)
		total.Weight += st.Weight
		total.Count += st.Count
	}
	products := func(V, dst *mat.Dense) error {
		dst.Zero()
		tmp := mat.DenseCopyOf(dst)
		for a := 0; a+1 < len(bounds); a++ {
			px, pm, py, pw := part(a)
			if err := CGProductOf(sp, px, pm, n, py, pw, opt, V, tmp); err != nil {
				return err
			}
			dst.Add(dst, tmp)
		}
		return nil
	}
	return total, products
}

// TestFitCGSumsEqualsFit: distributed CG over uneven parts (one empty, one of zero weights)
// reaches the coefficients of Fit's exact solve, for several families, with and without
// intercept and weights; the summed products plus the penalty are linearSystem's H V.
func TestFitCGSumsEqualsFit(t *testing.T) {
	tree := []int64{-1, 0, 0, 1, 1, 2, 5}
	for _, tc := range []struct {
		kind   string
		params []int64
	}{
		{"multilabel", []int64{5}}, {"multiclass", []int64{4}}, {"permutations", []int64{4}},
		{"subtrees", tree}, {"dicycles", []int64{5}}, {"ordinal", []int64{5}},
	} {
		for _, intercept := range []bool{true, false} {
			for _, weighted := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/intercept=%v/weights=%v", tc.kind, intercept, weighted), func(t *testing.T) {
					sp, err := space.New(tc.kind, tc.params)
					if err != nil {
						t.Fatal(err)
					}
					const m, n = 120, 4
					X, ys := synthetic(t, sp, m, n, 3)
					var weights []float64
					if weighted {
						r := rand.New(rand.NewPCG(4, 5))
						weights = make([]float64, m)
						for i := range weights {
							weights[i] = 0.2 + 2*r.Float64()
						}
						for i := 30; i < 70; i++ { // the second part weighs nothing
							weights[i] = 0
						}
					}
					opt := Options{Alpha: 0.3, Intercept: intercept, Solver: CG, Tol: 1e-12, MaxIter: 10000}
					exact := opt
					exact.Solver = Exact
					want, err := Fit(sp, X, m, n, ys, weights, exact)
					if err != nil {
						t.Fatal(err)
					}
					setup, products := cgParts(t, sp, X, m, n, ys, weights, opt, []int{30, 70, 70})
					got, err := FitCGSums(sp, n, opt, setup, products)
					if err != nil {
						t.Fatal(err)
					}
					diff := mat.NewDense(want.Coef.RawMatrix().Rows, sp.Dim(), nil)
					diff.Sub(got.Coef, want.Coef)
					if rel := mat.Norm(diff, 2) / mat.Norm(want.Coef, 2); rel > 1e-9 {
						t.Errorf("coefficients differ from the exact solve by %.2e relative", rel)
					}
					if !got.Result.Converged || got.Seen != m {
						t.Errorf("result %+v, seen %d", got.Result, got.Seen)
					}
					// The summed products are H V of the whole data set, the penalty aside.
					p, err := NewProblem(sp, ys, m, weights, opt.Alpha)
					if err != nil {
						t.Fatal(err)
					}
					des := design{X: mat.NewDense(m, n, X), intercept: intercept}
					V := mat.DenseCopyOf(want.Coef)
					whole, parts := mat.NewDense(des.cols(), sp.Dim(), nil), mat.NewDense(des.cols(), sp.Dim(), nil)
					newLinearSystem(p, des).apply(whole, V)
					des.addPenaltyGrad(whole, V, -2*opt.Alpha)
					if err := products(V, parts); err != nil {
						t.Fatal(err)
					}
					if !mat.EqualApprox(whole, parts, 1e-10*mat.Norm(whole, 2)) {
						t.Errorf("the summed products differ from H V")
					}
				})
			}
		}
	}
}

// TestFitCGSumsRefusals: what distributed CG does not fit is refused with the reason, and a
// failing product ends the fit with its error.
func TestFitCGSumsRefusals(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	opt := Options{Alpha: 1, Intercept: true, Solver: CG, Tol: 1e-8, MaxIter: 100}
	setup, products := cgParts(t, sp, X, m, n, ys, nil, opt, []int{20})
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"nystrom", func(o *Options) { o.Kernel, o.NComponents = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}, 5 }, "linear kernel"},
		{"sgd", func(o *Options) { o.Solver = SGD }, "solver=cg"},
		{"empirical", func(o *Options) { o.EmpiricalWeight = 0.5 }, "uniform reference"},
	} {
		o := opt
		tc.edit(&o)
		if _, err := FitCGSums(sp, n, o, setup, products); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if _, err := CGSetupOf(sp, X, m, n, ys, nil, o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s (setup): %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	calls := 0
	failing := func(V, dst *mat.Dense) error {
		if calls++; calls == 3 {
			return errors.New("worker lost")
		}
		return products(V, dst)
	}
	if _, err := FitCGSums(sp, n, opt, setup, failing); err == nil || !strings.Contains(err.Error(), "worker lost") {
		t.Errorf("failing products: %v", err)
	}
	zero := *setup
	zero.Weight = 0
	if _, err := FitCGSums(sp, n, opt, &zero, products); err == nil || !strings.Contains(err.Error(), "positive finite sum") {
		t.Errorf("zero weight: %v", err)
	}
	tiny := *setup
	tiny.Weight = 5e-324
	if _, err := FitCGSums(sp, n, opt, &tiny, products); err == nil || !strings.Contains(err.Error(), "subnormal") {
		t.Errorf("a subnormal weight: %v (it was an eigendecomposition's failure)", err)
	}
	for _, count := range []int64{-1, math.MinInt64, math.MaxInt64} {
		bad := *setup
		bad.Count = count
		if _, err := FitCGSums(sp, n, opt, &bad, products); err == nil || !strings.Contains(err.Error(), "number of examples") {
			t.Errorf("count %d: %v (the model's bytes did not read back)", count, err)
		}
	}
	if _, err := FitCGSums(sp, n+1, opt, setup, products); err == nil || !strings.Contains(err.Error(), "B is") {
		t.Errorf("wrong n: %v", err)
	}
	if err := CGProductOf(sp, X, m, n, ys, nil, opt, mat.NewDense(n, 3, nil), mat.NewDense(n+1, 3, nil)); err == nil || !strings.Contains(err.Error(), "V is") {
		t.Errorf("V of the wrong shape: %v", err)
	}
}

// TestFitCGSumsProducts: a cold start costs one summed product per iteration and one for the
// final gradient, none for H·0.
func TestFitCGSumsProducts(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{4})
	const m, n = 50, 3
	X, ys := synthetic(t, sp, m, n, 12)
	opt := Options{Alpha: 0.5, Intercept: true, Solver: CG, Tol: 1e-10, MaxIter: 100}
	setup, products := cgParts(t, sp, X, m, n, ys, nil, opt, []int{20})
	calls := 0
	counting := func(V, dst *mat.Dense) error { calls++; return products(V, dst) }
	md, err := FitCGSums(sp, n, opt, setup, counting)
	if err != nil {
		t.Fatal(err)
	}
	if calls != md.Result.Iterations+1 {
		t.Errorf("%d products for %d iterations", calls, md.Result.Iterations)
	}
}

// Parts centred at a common point (Options.Centre, the caller's estimate of X's mean) give
// distributed CG the fit of the unshifted X on X + 10⁵, as Fit's own centring does; uncentred,
// it stopped at its tolerance far from there. A centre of the wrong length is refused.
func TestFitCGSumsCentred(t *testing.T) {
	sp, _ := space.NewMultilabel(5)
	const m, n, shift = 160, 6, 1e5
	X, ys := synthetic(t, sp, m, n, 21)
	w := weights(rand.New(rand.NewPCG(2, 3)), m)
	opt := baseOptions()
	opt.Solver = Exact
	base, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	Xs := shifted(X, shift)
	opt.Solver, opt.Tol = CG, 1e-10
	opt.Centre = make([]float64, n)
	for i := 0; i < 40; i++ { // the mean of the first rows, as the Dask fit takes it
		for j := 0; j < n; j++ {
			opt.Centre[j] += Xs[i*n+j] / 40
		}
	}
	setup, products := cgParts(t, sp, Xs, m, n, ys, w, opt, []int{50, 50, 120})
	md, err := FitCGSums(sp, n, opt, setup, products)
	if err != nil {
		t.Fatal(err)
	}
	if dist := relDist(scoresOf(t, md, Xs, m, n), scoresOf(t, base, X, m, n)); dist > 1e-7 {
		t.Errorf("scores %.3g from the unshifted fit's", dist)
	}
	opt.Centre = opt.Centre[:2]
	if _, err := CGSetupOf(sp, Xs, m, n, ys, w, opt); err == nil || !strings.Contains(err.Error(), "centre") {
		t.Errorf("a centre of 2 values for 6 features: %v", err)
	}
}

// TestDistributedSolver: Auto resolves by the model and its unknowns, and the fits that are not
// reductions of per-partition sums are refused here, not in each caller (Python refused them
// itself while the core returned "sgd" as a solver to run).
func TestDistributedSolver(t *testing.T) {
	ml, _ := space.NewMultilabel(8)
	big, _ := space.NewMultilabel(5000)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	for _, c := range []struct {
		name   string
		sp     space.Space
		n      int
		edit   func(*Options)
		want   Solver
		refuse string
	}{
		{"linear, few unknowns", ml, 100, func(o *Options) {}, Exact, ""},
		{"linear, 1001·8 unknowns", ml, 1000, func(o *Options) {}, CG, ""},
		{"linear, 1000·8 unknowns without intercept", ml, 1000, func(o *Options) { o.Intercept = false }, Exact, ""},
		{"linear, d above the dense limit", big, 1, func(o *Options) {}, CG, "> 4096"},
		{"Nyström", ml, 1000, func(o *Options) { o.Kernel, o.NComponents = rbf, 50 }, Exact, ""},
		{"cg stays", ml, 10, func(o *Options) { o.Solver = CG }, CG, ""},
		{"exact stays", ml, 100, func(o *Options) { o.Solver = Exact }, Exact, ""},
		{"exact, 1001·8 unknowns", ml, 1000, func(o *Options) { o.Solver = Exact }, Exact, "statistics of 8008 unknowns"},
		{"sgd", ml, 10, func(o *Options) { o.Solver = SGD }, SGD, "not solver='sgd'"},
		{"rbf expansion", ml, 10, func(o *Options) { o.Kernel = rbf }, Auto, "expansion over every training sample"},
		{"precomputed", ml, 10, func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.Precomputed} }, Auto, "kernel=precomputed is an expansion"},
	} {
		opt := baseOptions()
		opt.Intercept = true
		c.edit(&opt)
		got, err := DistributedSolver(c.sp, c.n, opt)
		switch {
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.refuse)
		case c.refuse == "" && (err != nil || got != c.want):
			t.Errorf("%s: DistributedSolver = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// statistics of 1001·4 unknowns hold 60 MB: above a 40 MB budget, auto takes CG (it refused
	// the fit, which CG and the in-memory auto take) and exact is refused before any data are read
	defer budget.Set(budget.Setting())
	if err := budget.Set(40_000_000); err != nil {
		t.Fatal(err)
	}
	four, _ := space.NewMultilabel(4)
	opt := baseOptions()
	opt.Intercept = true
	if got, err := DistributedSolver(four, 1000, opt); err != nil || got != CG {
		t.Errorf("auto above the budget: %v, %v; want cg", got, err)
	}
	opt.Solver = Exact
	if _, err := DistributedSolver(four, 1000, opt); err == nil || !strings.Contains(err.Error(), "sufficient statistics") {
		t.Errorf("exact above the budget: %v, want the budget's refusal", err)
	}
}

// TestFitCGSumsCountsWeightsInUnits: with Options.WeightExponent e the parts count every weight
// as s·2^−e and FitCGSums fits α·2^−e, so weights and α both near 1e305, whose raw sums
// overflowed, fit the model of weights and α 2^1016 times smaller (exactly: a power of two), and J
// comes back at the weights' own scale. The exponent's range and an α that leaves float64's
// range in the weights' units are refused.
func TestFitCGSumsCountsWeightsInUnits(t *testing.T) {
	sp, err := space.New("multiclass", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 90, 3
	X, ys := synthetic(t, sp, m, n, 7)
	for i := range X { // Σ s·x² beyond float64 at these weights, whose total stays finite
		X[i] *= 4
	}
	r := rand.New(rand.NewPCG(8, 9))
	small, large := make([]float64, m), make([]float64, m)
	for i := range small {
		small[i] = 0.5 + r.Float64()
		large[i] = math.Ldexp(small[i], 1016)
	}
	opt := Options{Alpha: 0.7, Intercept: true, Solver: CG, Tol: 1e-10, MaxIter: 1000, Centre: make([]float64, n)}
	setup, products := cgParts(t, sp, X, m, n, ys, small, opt, []int{40})
	want, err := FitCGSums(sp, n, opt, setup, products)
	if err != nil {
		t.Fatal(err)
	}
	raw := opt
	raw.Alpha = math.Ldexp(opt.Alpha, 1016)
	setup, products = cgParts(t, sp, X, m, n, ys, large, raw, []int{40})
	if _, err := FitCGSums(sp, n, raw, setup, products); err == nil || !strings.Contains(err.Error(), "summed moments") {
		t.Fatalf("weights near 1e305 summed raw: error %v, want the overflow refused", err)
	}
	for _, e := range []int{1017, 1018} { // in the weights' binade, and one beyond
		scaled := raw
		scaled.WeightExponent = e
		setup, products = cgParts(t, sp, X, m, n, ys, large, scaled, []int{40})
		got, err := FitCGSums(sp, n, scaled, setup, products)
		if err != nil {
			t.Fatalf("e = %d: %v", e, err)
		}
		if !mat.EqualApprox(got.Coef, want.Coef, 1e-12*mat.Norm(want.Coef, 2)) {
			t.Errorf("e = %d: the coefficients differ from those of the weights 2^1016 times smaller", e)
		}
		if ratio := got.Result.Objective / math.Ldexp(want.Result.Objective, 1016); math.Abs(ratio-1) > 1e-12 {
			t.Errorf("e = %d: J = %v, want 2^1016 × %v", e, got.Result.Objective, want.Result.Objective)
		}
	}
	for _, tc := range []struct {
		e     int
		alpha float64
		want  string
	}{
		{2201, 1, "the weights' exponent must be in [-2200, 2200]"},
		{1017, 1e-30, "leaves float64's range"},
	} {
		o := opt
		o.WeightExponent, o.Alpha = tc.e, tc.alpha
		if _, err := FitCGSums(sp, n, o, setup, products); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("e = %d, alpha = %g: error %v, want %q", tc.e, tc.alpha, err, tc.want)
		}
	}
	// an exponent that takes weights of 1 (none given) beyond float64 names itself, not the weights (probe CH)
	o := opt
	o.WeightExponent = -1075
	if _, err := CGSetupOf(sp, X, m, n, ys, nil, o); err == nil || !strings.Contains(err.Error(), "the weights' exponent -1075 takes sample weight 1 of row 0") {
		t.Errorf("e = -1075: error %v", err)
	}
}
