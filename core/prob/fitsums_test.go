package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// parts cuts m rows into parts of the given sizes (the last takes the rest).
func parts(m int, sizes ...int) [][2]int {
	var out [][2]int
	lo := 0
	for _, s := range sizes {
		out = append(out, [2]int{lo, lo + s})
		lo += s
	}
	return append(out, [2]int{lo, m})
}

// partSums is the SumsFunc of a data set cut into parts, each summed by DataSumsOf as a worker
// would.
func partSums(sp space.Space, X []float64, n int, ys []int64, weights []float64, intercept bool, centre []float64, cuts [][2]int) SumsFunc {
	w := sp.Width()
	return func(W, grad *mat.Dense, exponent int) (float64, float64, error) {
		grad.Zero()
		g := mat.DenseCopyOf(grad)
		var loss, weight float64
		for _, c := range cuts {
			var pw []float64
			if weights != nil {
				pw = weights[c[0]:c[1]]
			}
			l, s, err := DataSumsOf(sp, X[c[0]*n:c[1]*n], c[1]-c[0], n, ys[c[0]*w:c[1]*w], pw, exponent, intercept, centre,
				InferenceOptions{Method: InferExact}, W, g)
			if err != nil {
				return 0, 0, err
			}
			loss, weight = loss+l, weight+s
			grad.Add(grad, g)
		}
		return loss, weight, nil
	}
}

// family is a space kind and its parameters.
type family struct {
	kind   string
	params []int64
}

// exactFamilies are small spaces of every family with exact inference.
func exactFamilies() []family {
	return []family{
		{"multiclass", []int64{4}}, {"multilabel", []int64{5}}, {"permutations", []int64{4}},
		{"subtrees", slices.Clone(smallTree)}, {"dicycles", []int64{5}}, {"ordinal", []int64{5}}, {"ucycles", []int64{5}},
	}
}

// TestFitSumsEqualsFit: the fit from sums over uneven parts (one empty, one with only zero
// weights) equals Fit on the rows taken together, for every family with exact inference, with
// and without intercept and weights; and the summed data term, penalised, is Objective exactly.
func TestFitSumsEqualsFit(t *testing.T) {
	for _, tc := range exactFamilies() {
		for _, intercept := range []bool{true, false} {
			for _, weighted := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/intercept=%v/weights=%v", tc.kind, intercept, weighted), func(t *testing.T) {
					sp := mustSpace(t, tc.kind, tc.params...)
					const m, n = 90, 3
					X, ys := syntheticData(t, sp, m, n, 0.8, 5)
					var weights []float64
					cuts := parts(m, 17, 0, 40)
					if weighted {
						r := rand.New(rand.NewPCG(2, 3))
						weights = make([]float64, m)
						for i := range weights {
							weights[i] = 0.2 + 2*r.Float64()
						}
						for i := 17; i < 57; i++ { // the third part weighs nothing
							weights[i] = 0
						}
					}
					opt := Options{Tol: 1e-10, MaxIter: 1000, Intercept: intercept}
					want, err := Fit(sp, X, m, n, ys, weights, opt)
					if err != nil {
						t.Fatal(err)
					}
					sums := partSums(sp, X, n, ys, weights, intercept, nil, cuts)
					got, err := FitSums(sp, n, opt, sums)
					if err != nil {
						t.Fatal(err)
					}
					diff := mat.NewDense(want.Coef.RawMatrix().Rows, sp.Dim(), nil)
					diff.Sub(got.Coef, want.Coef)
					if rel := mat.Norm(diff, 2) / mat.Norm(want.Coef, 2); rel > 1e-7 {
						t.Errorf("coefficients differ by %.2e relative", rel)
					}
					if !got.Result.Converged || got.Result.Solver != SolverLBFGS || !got.Result.Exact {
						t.Errorf("result %+v", got.Result)
					}
					if math.Abs(got.Result.Objective-want.Result.Objective) > 1e-10*math.Abs(want.Result.Objective) {
						t.Errorf("objective %.15g, Fit's %.15g", got.Result.Objective, want.Result.Objective)
					}
					// The penalised sums are the Problem's objective and gradient at any W.
					p, err := NewProblem(sp, X, m, n, ys, weights, DefaultAlpha(sp, weights, m), intercept)
					if err != nil {
						t.Fatal(err)
					}
					W := mat.DenseCopyOf(want.Coef)
					W.Scale(0.7, W)
					g1, g2 := mat.NewDense(p.Cols(), sp.Dim(), nil), mat.NewDense(p.Cols(), sp.Dim(), nil)
					J1, _ := p.Objective(W, InferenceOptions{Method: InferExact}, 0, g1)
					loss, weight, err := sums(W, g2, 0)
					if err != nil {
						t.Fatal(err)
					}
					J2 := penalized(W, n, DefaultAlpha(sp, weights, m), loss, weight, g2)
					if math.Abs(J1-J2) > 1e-12*math.Abs(J1) || !floats.EqualApprox(g1.RawMatrix().Data, g2.RawMatrix().Data, 1e-12) {
						t.Errorf("sums: J %.15g vs Objective %.15g", J2, J1)
					}
				})
			}
		}
	}
}

// TestFitSumsWeightsAtTheEdgesOfFloat64: weights whose sum nears or passes the largest float (the
// data term's sum, or the weights', overflowed where Fit took them) or is subnormal (the parts'
// sums lost their digits) give Fit's model; FitSums asks its sums in units of 2^exponent.
func TestFitSumsWeightsAtTheEdgesOfFloat64(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	const m, n = 90, 3
	X, ys := syntheticData(t, sp, m, n, 0.8, 5)
	r := rand.New(rand.NewPCG(4, 5))
	base := make([]float64, m)
	for i := range base {
		base[i] = 0.2 + 2*r.Float64()
	}
	for _, tc := range []struct {
		name  string
		power int
		alpha float64
	}{
		{"sum near the largest float", 1016, 0},      // Σ s ≈ 8e307: Σ s·loss overflows at W = 0
		{"sum beyond the largest float", 1020, 0.05}, // whose default alpha both refuse
		{"subnormal", -1040, 0.05},                   // the default alpha, 1/(2·Σ s), overflows
	} {
		t.Run(tc.name, func(t *testing.T) {
			weights := make([]float64, m)
			for i, b := range base {
				weights[i] = math.Ldexp(b, tc.power)
			}
			opt := Options{Tol: 1e-10, MaxIter: 1000, Intercept: true, Alpha: tc.alpha}
			want, err := Fit(sp, X, m, n, ys, weights, opt)
			if err != nil {
				t.Fatal(err)
			}
			var exponents []int
			sums := partSums(sp, X, n, ys, weights, true, nil, parts(m, 30, 30))
			got, err := FitSums(sp, n, opt, func(W, g *mat.Dense, e int) (float64, float64, error) {
				exponents = append(exponents, e)
				return sums(W, g, e)
			})
			if err != nil {
				t.Fatal(err)
			}
			diff := mat.NewDense(n+1, sp.Dim(), nil)
			diff.Sub(got.Coef, want.Coef)
			if rel := mat.Norm(diff, 2) / mat.Norm(want.Coef, 2); rel > 1e-7 {
				t.Errorf("coefficients differ by %.2e relative", rel)
			}
			if exponents[0] != 0 || exponents[1] == 0 || exponents[len(exponents)-1] != exponents[1] {
				t.Errorf("exponents asked: %v, want 0 then one other throughout", exponents)
			}
		})
	}
}

// TestDataSumsOfExponent: the sums in units of 2^exponent are the sums in units of 1 times
// 2^−exponent, exactly, and an exponent beyond MaxWeightExponent is refused.
func TestDataSumsOfExponent(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	const m, n = 20, 2
	X, ys := syntheticData(t, sp, m, n, 0.8, 6)
	weights := make([]float64, m)
	for i := range weights {
		weights[i] = 1 + float64(i%5)
	}
	W := mat.NewDense(n+1, sp.Dim(), []float64{0.3, -0.2, 0.1, 0.5, 0.4, -0.6, 0.2, 0.1, -0.3})
	inf := InferenceOptions{Method: InferExact}
	g0, g := mat.NewDense(n+1, sp.Dim(), nil), mat.NewDense(n+1, sp.Dim(), nil)
	l0, s0, err := DataSumsOf(sp, X, m, n, ys, weights, 0, true, nil, inf, W, g0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []int{7, -300, 1030} {
		l, s, err := DataSumsOf(sp, X, m, n, ys, weights, e, true, nil, inf, W, g)
		if err != nil {
			t.Fatal(err)
		}
		if l != math.Ldexp(l0, -e) || s != math.Ldexp(s0, -e) {
			t.Errorf("exponent %d: loss %v weight %v, want %v and %v", e, l, s, math.Ldexp(l0, -e), math.Ldexp(s0, -e))
		}
		for i, v := range g.RawMatrix().Data {
			if want := math.Ldexp(g0.RawMatrix().Data[i], -e); v != want {
				t.Fatalf("exponent %d: grad[%d] = %v, want %v", e, i, v, want)
			}
		}
	}
	if _, _, err := DataSumsOf(sp, X, m, n, ys, weights, check.MaxWeightExponent+1, true, nil, inf, W, g); err == nil ||
		!strings.Contains(err.Error(), "exponent") {
		t.Errorf("exponent beyond the bound: %v", err)
	}
}

// TestFitSumsRefusals: sampled inference, Adam, data that change between evaluations, a zero
// total weight and a failing sum are refused with the reason; a warm start that is already
// optimal runs no iteration.
func TestFitSumsRefusals(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	const m, n = 30, 2
	X, ys := syntheticData(t, sp, m, n, 0.8, 7)
	good := partSums(sp, X, n, ys, nil, true, nil, parts(m, 10))
	calls := 0
	for _, tc := range []struct {
		name string
		opt  Options
		sums SumsFunc
		want string
	}{
		{"sampled", Options{Inference: InferenceOptions{Method: InferSampled}}, good, "exact inference"},
		{"adam", Options{Solver: SolverAdam}, good, "not Adam"},
		{"changing", Options{}, func(W, g *mat.Dense, e int) (float64, float64, error) {
			calls++
			l, w, err := good(W, g, e)
			return l, w + float64(calls), err
		}, "data changed"},
		{"no weight", Options{}, func(W, g *mat.Dense, e int) (float64, float64, error) { return 0, 0, nil }, "positive finite sum"},
		{"nan", Options{}, func(W, g *mat.Dense, e int) (float64, float64, error) { return math.NaN(), 1, nil }, "NaN"},
		{"failing", Options{}, func(W, g *mat.Dense, e int) (float64, float64, error) { return 0, 0, errors.New("worker lost") }, "worker lost"},
	} {
		tc.opt.Intercept, tc.opt.Tol, tc.opt.MaxIter = true, 1e-6, 100
		if _, err := FitSums(sp, n, tc.opt, tc.sums); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	md, err := FitSums(sp, n, Options{Intercept: true, Tol: 1e-8, MaxIter: 100}, good)
	if err != nil {
		t.Fatal(err)
	}
	again, err := FitSums(sp, n, Options{Intercept: true, Tol: 1e-6, MaxIter: 100, Init: md}, good)
	if err != nil || again.Result.Iterations != 0 || !again.Result.Converged {
		t.Fatalf("warm start: %v, %+v", err, again.Result)
	}
	if _, _, err := DataSumsOf(sp, X, m, n, ys, nil, 0, true, nil, InferenceOptions{Method: InferExact},
		mat.NewDense(n, sp.Dim(), nil), mat.NewDense(n+1, sp.Dim(), nil)); err == nil || !strings.Contains(err.Error(), "W is") {
		t.Errorf("W of the wrong shape: %v", err)
	}
}

// TestFitSumsEvaluatesEachPointOnce: no coefficient vector is summed twice in a row, from a warm
// start that still has iterations to run (L-BFGS's first step starts where the warm start was
// evaluated) through the report after convergence; each such repeat is a pass over every part.
func TestFitSumsEvaluatesEachPointOnce(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	const m, n = 60, 3
	X, ys := syntheticData(t, sp, m, n, 0.8, 9)
	good := partSums(sp, X, n, ys, nil, true, nil, parts(m, 25))
	var points [][]float64
	counting := func(W, g *mat.Dense, e int) (float64, float64, error) {
		points = append(points, append([]float64(nil), W.RawMatrix().Data...))
		return good(W, g, e)
	}
	rough, err := FitSums(sp, n, Options{Intercept: true, Tol: 1e-2, MaxIter: 100}, good)
	if err != nil {
		t.Fatal(err)
	}
	for _, init := range []*Model{nil, rough} {
		points = nil
		md, err := FitSums(sp, n, Options{Intercept: true, Tol: 1e-9, MaxIter: 500, Init: init}, counting)
		if err != nil || !md.Result.Converged || md.Result.Iterations == 0 {
			t.Fatalf("warm start %v: %v, %+v", init != nil, err, md.Result)
		}
		for i := 1; i < len(points); i++ {
			if floats.Equal(points[i], points[i-1]) {
				t.Fatalf("warm start %v: evaluation %d repeats the point of evaluation %d", init != nil, i, i-1)
			}
		}
	}
}

// Parts centred at a common point (Options.Centre, the caller's estimate of X's mean) give the
// fit from sums on X + 10³ and X + 10⁸ the model Fit gives on X, in as many iterations as Fit on
// the shifted X: uncentred, the distributed L-BFGS stopped at its tolerance with probabilities
// 0.07 from the in-memory fit's; centred implicitly (xᵀW − cᵀW), it ran 200 iterations at 10⁸
// without converging. A centre of the wrong length is refused.
func TestFitSumsCentred(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	const m, n = 120, 4
	X, ys := syntheticData(t, sp, m, n, 1, 17)
	opt := Options{Alpha: 0.01, Intercept: true, Tol: 1e-10, MaxIter: 1000}
	base, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, m*sp.Dim())
	if err := base.Marginals(X, m, n, 0, want); err != nil {
		t.Fatal(err)
	}
	for _, shift := range []float64{1e3, 1e8} {
		Xs := shifted(X, shift)
		local, err := Fit(sp, Xs, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt := opt
		opt.Centre = make([]float64, n)
		for i := 0; i < 30; i++ {
			for j := 0; j < n; j++ {
				opt.Centre[j] += Xs[i*n+j] / 30
			}
		}
		md, err := FitSums(sp, n, opt, partSums(sp, Xs, n, ys, nil, true, opt.Centre, parts(m, 40)))
		if err != nil {
			t.Fatal(err)
		}
		if !md.Result.Converged || md.Result.Iterations > 2*local.Result.Iterations+5 {
			t.Errorf("X + %g: %d iterations (converged %v), Fit on it %d", shift, md.Result.Iterations, md.Result.Converged,
				local.Result.Iterations)
		}
		// the scores of the model's own (centred) coordinates, as the fit sees them
		got := make([]float64, m*sp.Dim())
		if err := md.Marginals(Xs, m, n, 0, got); err != nil {
			t.Fatal(err)
		}
		dist := floats.Distance(got, want, math.Inf(1))
		// at 10⁸ predicting itself rounds xᵀW to about 1e-8 (the implicit centring was 5e-6 off)
		if tol := map[bool]float64{false: 1e-7, true: 1e-6}[shift > 1e3]; dist > tol {
			t.Errorf("X + %g: marginals %.3g from Fit's on the unshifted X (%d iterations)", shift, dist, md.Result.Iterations)
		}
		t.Logf("X + %g: %d iterations (Fit %d), marginals %.3g from Fit's on X", shift, md.Result.Iterations, local.Result.Iterations, dist)
		if shift > 1e3 {
			continue
		}
		if _, _, err := DataSumsOf(sp, Xs, m, n, ys, nil, 0, true, opt.Centre[:2], InferenceOptions{Method: InferExact},
			mat.NewDense(n+1, sp.Dim(), nil), mat.NewDense(n+1, sp.Dim(), nil)); err == nil || !strings.Contains(err.Error(), "centre") {
			t.Errorf("a centre of 2 values for 4 features: %v", err)
		}
	}
}

// With the features' spreads (Options.Spread) FitSums works in Fit's coordinates: on features
// scaled by 1e-4, 1 and 1e5 it stops where Fit stops at the same tolerance. Without them it
// stopped with the unit-scale feature's coefficients far from the optimum.
func TestFitSumsWithSpreadsStopsWhereFitDoes(t *testing.T) {
	for _, kind := range []string{"multiclass", "permutations"} {
		sp := mustSpace(t, kind, 4)
		const m, n = 120, 3
		X, ys := syntheticData(t, sp, m, n, 1, 23)
		for i := 0; i < m; i++ {
			X[i*n] *= 1e-4
			X[i*n+2] *= 1e5
		}
		opt := Options{Intercept: true, Tol: 1e-6, MaxIter: 1000}
		want, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Centre, opt.Spread = columnMoments(X, m, n)
		sqrtAll(opt.Spread)
		got, err := FitSums(sp, n, opt, partSums(sp, X, n, ys, nil, true, opt.Centre, parts(m, 50)))
		if err != nil {
			t.Fatal(err)
		}
		if r := got.Result.Objective/want.Result.Objective - 1; math.Abs(r) > 1e-9 {
			t.Errorf("%s: objective %.15g, Fit's %.15g", kind, got.Result.Objective, want.Result.Objective)
		}
		for a := 0; a < sp.Dim(); a++ { // the unit-scale feature's coefficients
			if g, w := got.Coef.At(1, a), want.Coef.At(1, a); math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
				t.Errorf("%s: coefficient (1, %d) is %v, Fit's %v", kind, a, g, w)
			}
		}
		opt.Spread = []float64{1, -1, 1}
		if _, err := FitSums(sp, n, opt, partSums(sp, X, n, ys, nil, true, opt.Centre, parts(m, 50))); err == nil ||
			!strings.Contains(err.Error(), "spread[1] = -1") {
			t.Errorf("a negative spread: %v", err)
		}
	}
}

// TestFitSumsWithVariancesFollowsFitsPath: given the variances of ψ over the training structures
// besides the spreads, FitSums preconditions L-BFGS as Fit does, and the two take the same steps:
// a fit stopped after a few iterations is the same model (without them its coefficients were
// 1–10 % off Fit's, probe BC).
func TestFitSumsWithVariancesFollowsFitsPath(t *testing.T) {
	for _, kind := range []string{"multiclass", "permutations", "subtrees"} {
		var sp space.Space
		if kind == "subtrees" {
			var err error
			if sp, err = space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2}); err != nil {
				t.Fatal(err)
			}
		} else {
			sp = mustSpace(t, kind, 4)
		}
		const m, n = 120, 3
		X, ys := syntheticData(t, sp, m, n, 1, 29)
		centre, spread := columnMoments(X, m, n)
		sqrtAll(spread)
		d := sp.Dim()
		psi := make([]float64, m*d)
		space.EmbedRows(sp, ys, m, psi)
		_, variances := columnMoments(psi, m, d)
		for _, iters := range []int{3, 1000} {
			opt := Options{Intercept: true, Tol: 1e-8, MaxIter: iters}
			want, err := Fit(sp, X, m, n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Centre, opt.Spread, opt.Variances = centre, spread, variances
			got, err := FitSums(sp, n, opt, partSums(sp, X, n, ys, nil, true, centre, parts(m, 50)))
			if err != nil {
				t.Fatal(err)
			}
			if got.Result.Iterations != want.Result.Iterations {
				t.Errorf("%s, max_iter %d: %d iterations, Fit's %d", kind, iters, got.Result.Iterations, want.Result.Iterations)
			}
			scale := mat.Norm(want.Coef, math.Inf(1))
			var diff mat.Dense
			diff.Sub(got.Coef, want.Coef)
			if e := mat.Norm(&diff, math.Inf(1)); e > 1e-8*scale {
				t.Errorf("%s, max_iter %d: coefficients %.3g from Fit's (scale %.3g)", kind, iters, e, scale)
			}
		}
		opt := Options{Intercept: true, Tol: 1e-6, MaxIter: 10, Centre: centre, Spread: spread, Variances: []float64{-1}}
		if _, err := FitSums(sp, n, opt, partSums(sp, X, n, ys, nil, true, centre, parts(m, 50))); err == nil ||
			!strings.Contains(err.Error(), "variances of ψ") {
			t.Errorf("variances of the wrong length: %v", err)
		}
	}
}

// columnMoments returns the means and variances of the columns of X (m×n, row-major).
func columnMoments(X []float64, m, n int) (mean, variance []float64) {
	mean, variance = make([]float64, n), make([]float64, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			mean[j] += X[i*n+j] / float64(m)
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := X[i*n+j] - mean[j]
			variance[j] += v * v / float64(m)
		}
	}
	return mean, variance
}

// sqrtAll replaces each value by its square root.
func sqrtAll(x []float64) {
	for i, v := range x {
		x[i] = math.Sqrt(v)
	}
}

// TestVariancesOfMomentsAreFitsVariances: the variances FitSums takes from the parts' moments
// (each part's Σ s·ψ, Σ s·ψ² and Σ s, added up) are those Fit reads off its Problem, on every
// weighting; where they do not exist in floating point there is no preconditioning, and a
// negative weight or a wrong length is an error.
func TestVariancesOfMomentsAreFitsVariances(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sp := range []space.Space{mustSpace(t, "multilabel", 4), mustSpace(t, "permutations", 4), mustSpace(t, "multiclass", 3)} {
		const m, n = 30, 2
		X, ys := syntheticData(t, sp, m, n, 1, 7)
		d := sp.Dim()
		weights := make([]float64, m)
		for i := range weights {
			weights[i] = rng.ExpFloat64()
		}
		for _, w := range [][]float64{nil, weights} {
			p, err := NewProblem(sp, X, m, n, ys, w, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			moments := make([]float64, 2*d+1)
			psi := make([]float64, d)
			for i := 0; i < m; i++ {
				s := 1.0
				if w != nil {
					s = w[i]
				}
				sp.Embed(ys[i*sp.Width():(i+1)*sp.Width()], psi)
				for a, v := range psi {
					moments[a] += s * v
					moments[d+a] += s * v * v
				}
				moments[2*d] += s
			}
			got, err := VariancesOfMoments(moments, d)
			if err != nil {
				t.Fatal(err)
			}
			want := p.structureVariances()
			for a := range want {
				if math.Abs(got[a]-want[a]) > 1e-12 {
					t.Errorf("%s weights=%v: variance %d is %v from the moments, %v from the Problem", sp.Kind(), w != nil, a, got[a], want[a])
				}
			}
		}
		overflowed := make([]float64, 2*d+1) // a square sum beyond float64, of unit weight
		overflowed[d], overflowed[2*d] = math.Inf(1), 1
		for _, c := range []struct {
			name    string
			moments []float64
			nilOK   bool
		}{
			{"no weight", make([]float64, 2*d+1), true},
			{"overflowed", overflowed, true},
			{"negative weight", append(make([]float64, 2*d), -1), false},
			{"wrong length", make([]float64, 2*d), false},
		} {
			got, err := VariancesOfMoments(c.moments, d)
			if c.nilOK && (got != nil || err != nil) {
				t.Errorf("%s %s: got %v, %v; want no variances and no error", sp.Kind(), c.name, got, err)
			}
			if !c.nilOK && err == nil {
				t.Errorf("%s %s: got %v, want an error", sp.Kind(), c.name, got)
			}
		}
	}
}
