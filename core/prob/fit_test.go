package prob

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// newtonMultinomial minimises λ‖W‖² + (1/m) Σ_i [lse(Wᵀx_i) − (Wᵀx_i)_{y_i}] (no intercept) by
// Newton's method with the Hessian 2λI + (1/m) Σ_i (diag π_i − π_i π_iᵀ) ⊗ x_i x_iᵀ: the textbook
// multinomial logistic regression, written independently of the package.
func newtonMultinomial(t *testing.T, X []float64, m, n int, y []int64, d int, lambda float64) *mat.Dense {
	t.Helper()
	N := n * d
	w := make([]float64, N) // w[j·d + a] = W[j, a]
	for it := 0; it < 50; it++ {
		g := make([]float64, N)
		H := mat.NewSymDense(N, nil)
		for k := 0; k < N; k++ {
			g[k] = 2 * lambda * w[k]
			H.SetSym(k, k, 2*lambda)
		}
		pi := make([]float64, d)
		for i := 0; i < m; i++ {
			x := X[i*n : (i+1)*n]
			mx := math.Inf(-1)
			for a := 0; a < d; a++ {
				pi[a] = 0
				for j := 0; j < n; j++ {
					pi[a] += x[j] * w[j*d+a]
				}
				mx = math.Max(mx, pi[a])
			}
			var s float64
			for a := range pi {
				pi[a] = math.Exp(pi[a] - mx)
				s += pi[a]
			}
			for a := range pi {
				pi[a] /= s
			}
			for j := 0; j < n; j++ {
				for a := 0; a < d; a++ {
					ind := 0.0
					if int64(a) == y[i] {
						ind = 1
					}
					g[j*d+a] += x[j] * (pi[a] - ind) / float64(m)
					for k := 0; k < n; k++ {
						for b := 0; b < d; b++ {
							c := -pi[a] * pi[b]
							if a == b {
								c += pi[a]
							}
							r, col := j*d+a, k*d+b
							if r <= col {
								H.SetSym(r, col, H.At(r, col)+x[j]*x[k]*c/float64(m))
							}
						}
					}
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(H) {
			t.Fatal("Newton: Hessian not positive definite")
		}
		step := mat.NewVecDense(N, nil)
		if err := ch.SolveVecTo(step, mat.NewVecDense(N, g)); err != nil {
			t.Fatal(err)
		}
		for k := range w {
			w[k] -= step.AtVec(k)
		}
	}
	return mat.NewDense(n, d, w)
}

// newtonLogistic minimises λ‖w‖² + (1/m) Σ_i [log(1 + e^{u_i}) − y_i u_i] over w (and an
// unpenalised bias b when intercept), u_i = wᵀx_i (+ b), by Newton's method: one label of
// independent logistic regression.
func newtonLogistic(t *testing.T, X []float64, m, n int, y []float64, lambda float64, intercept bool) []float64 {
	t.Helper()
	N := n
	if intercept {
		N++
	}
	w := make([]float64, N)
	xt := func(i, j int) float64 {
		if j == n {
			return 1
		}
		return X[i*n+j]
	}
	for it := 0; it < 50; it++ {
		g := make([]float64, N)
		H := mat.NewSymDense(N, nil)
		for j := 0; j < n; j++ {
			g[j] = 2 * lambda * w[j]
			H.SetSym(j, j, 2*lambda)
		}
		for i := 0; i < m; i++ {
			var u float64
			for j := 0; j < N; j++ {
				u += xt(i, j) * w[j]
			}
			s := 1 / (1 + math.Exp(-u))
			for j := 0; j < N; j++ {
				g[j] += xt(i, j) * (s - y[i]) / float64(m)
				for k := j; k < N; k++ {
					H.SetSym(j, k, H.At(j, k)+xt(i, j)*xt(i, k)*s*(1-s)/float64(m))
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(H) {
			t.Fatal("Newton: Hessian not positive definite")
		}
		step := mat.NewVecDense(N, nil)
		if err := ch.SolveVecTo(step, mat.NewVecDense(N, g)); err != nil {
			t.Fatal(err)
		}
		for k := range w {
			w[k] -= step.AtVec(k)
		}
	}
	return w
}

func relDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / math.Max(mat.Norm(b, 2), 1e-300)
}

// TestFitMulticlassIsMultinomialLR: with exact inference Fit on multiclass converges (relative
// gradient ≤ 1e-10) to the multinomial logistic regression optimum found by an independent Newton
// solver (relative difference ≤ 1e-7).
func TestFitMulticlassIsMultinomialLR(t *testing.T) {
	sp := mustSpace(t, "multiclass", 4)
	const m, n, lambda = 80, 3, 0.01
	X, ys := syntheticData(t, sp, m, n, 1.5, 11)
	md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: lambda, Tol: 1e-10, MaxIter: 500})
	if err != nil {
		t.Fatal(err)
	}
	if md.Result.Solver != SolverLBFGS || !md.Result.Exact || !md.Result.Converged || md.Result.RelGrad > 1e-10 {
		t.Fatalf("result %+v", md.Result)
	}
	want := newtonMultinomial(t, X, m, n, ys, sp.Dim(), lambda)
	if rd := relDiff(md.Coef, want); rd > 1e-7 {
		t.Errorf("Fit W differs from Newton's by %.2g (relative)\nfit %v\nnewton %v", rd, mat.Formatted(md.Coef), mat.Formatted(want))
	}
	t.Logf("multiclass: %d L-BFGS iterations, relative gradient %.2g", md.Result.Iterations, md.Result.RelGrad)
}

// TestFitMultilabelIsIndependentLR: multilabel with exact inference is one logistic regression per
// label: with an intercept (unpenalised), Fit's W and bias match per-label Newton solves.
func TestFitMultilabelIsIndependentLR(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	const m, n, lambda = 70, 2, 0.02
	X, ys := syntheticData(t, sp, m, n, 1.5, 12)
	md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: lambda, Intercept: true, Tol: 1e-10, MaxIter: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !md.Result.Converged {
		t.Fatalf("result %+v", md.Result)
	}
	for a := 0; a < sp.Dim(); a++ {
		y := make([]float64, m)
		for i := range y {
			y[i] = float64(ys[i*sp.Width()+a])
		}
		w := newtonLogistic(t, X, m, n, y, lambda, true)
		for j := range w {
			if math.Abs(md.Coef.At(j, a)-w[j]) > 1e-7*math.Max(1, math.Abs(w[j])) {
				t.Errorf("label %d, coefficient %d: Fit %.10g, Newton %.10g", a, j, md.Coef.At(j, a), w[j])
			}
		}
	}
}

// TestFitBruteForceSpace: on a space without a closed form (permutations of 4 labels, exact by
// enumeration) L-BFGS reaches a point where the exact gradient vanishes and the objective is below
// its value at W = 0 (log|Y|) and at a perturbed solution.
func TestFitBruteForceSpace(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	const m, n = 40, 3
	X, ys := syntheticData(t, sp, m, n, 0.7, 13)
	md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 0.05, Intercept: true, Tol: 1e-9, MaxIter: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !md.Result.Converged || !(md.Result.Objective < sp.LogCount()) {
		t.Fatalf("result %+v (log|Y| = %.4f)", md.Result, sp.LogCount())
	}
	p, _ := NewProblem(sp, X, m, n, ys, nil, 0.05, true)
	W := mat.DenseCopyOf(md.Coef)
	r := rand.New(rand.NewPCG(1, 1))
	for k := 0; k < 5; k++ {
		W2 := mat.DenseCopyOf(W)
		W2.Add(W2, randW(r, p.Cols(), sp.Dim(), 1e-3))
		if J2, _ := p.Objective(W2, InferenceOptions{}, 0, nil); !(J2 > md.Result.Objective) {
			t.Errorf("a perturbed W has J = %.12g ≤ J* = %.12g", J2, md.Result.Objective)
		}
	}
}

// TestFitSampledAdam: Adam on CFTP-sampled gradients (10 samples per row; multiclass with forced
// sampled inference, and permutations of 5 labels), 120 iterations at the default step, lands near
// the exact optimum found by L-BFGS: ‖W − W*‖/‖W*‖ ≤ 0.05 and J(W) − J* ≤ 10⁻³ (measured: 0.019 and
// 0.013, J − J* ≈ 10⁻⁴ and 2.5·10⁻⁴).
func TestFitSampledAdam(t *testing.T) {
	for _, sp := range []space.Space{mustSpace(t, "multiclass", 4), mustSpace(t, "permutations", 5)} {
		const m, n, lambda = 60, 3, 0.02
		X, ys := syntheticData(t, sp, m, n, 0.8, 14)
		exact, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: lambda, Tol: 1e-10, MaxIter: 500})
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Alpha: lambda, Tol: 1e-6, MaxIter: 120, Seed: 3,
			Inference: InferenceOptions{Method: InferSampled, Samples: 10}}
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if md.Result.Solver != SolverAdam || md.Result.Exact || !math.IsNaN(md.Result.Objective) {
			t.Fatalf("result %+v", md.Result)
		}
		p, _ := NewProblem(sp, X, m, n, ys, nil, lambda, false)
		J, _ := p.Objective(md.Coef, InferenceOptions{Method: InferExact}, 0, nil)
		rd := relDiff(md.Coef, exact.Coef)
		t.Logf("%s: Adam %d iterations (converged %v): ‖W − W*‖/‖W*‖ = %.4f, J − J* = %.2e (J* = %.5f)",
			sp.Kind(), md.Result.Iterations, md.Result.Converged, rd, J-exact.Result.Objective, exact.Result.Objective)
		if rd > 0.05 || J-exact.Result.Objective > 1e-3 {
			t.Errorf("%s: Adam ended %.3f away from W* (relative), J − J* = %.3g", sp.Kind(), rd, J-exact.Result.Objective)
		}
		// Deterministic given the seed.
		md2, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil || relDiff(md2.Coef, md.Coef) != 0 {
			t.Errorf("%s: two fits with the same seed differ (%v)", sp.Kind(), err)
		}
	}
}

// TestFitProgressCancels: returning false from Progress stops both solvers with ErrCancelled;
// Progress sees increasing iteration numbers.
func TestFitProgressCancels(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	X, ys := syntheticData(t, sp, 30, 2, 1, 15)
	for _, solver := range []Solver{SolverLBFGS, SolverAdam} {
		last := 0
		_, err := Fit(sp, X, 30, 2, ys, nil, Options{Alpha: 0.1, Tol: 1e-12, MaxIter: 100, Solver: solver,
			Progress: func(it int, obj, rel float64) bool {
				if it != last+1 || math.IsNaN(obj) {
					t.Errorf("%v: progress %d after %d, objective %v", solver, it, last, obj)
				}
				last = it
				return it < 3
			}})
		if !errors.Is(err, ErrCancelled) || last != 3 {
			t.Errorf("%v: got %v after %d iterations", solver, err, last)
		}
	}
}

// TestFitBadInput: options out of range and impossible combinations are errors.
func TestFitBadInput(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	X, ys := syntheticData(t, sp, 10, 2, 1, 16)
	big := mustSpace(t, "permutations", 17)
	bigYs := make([]int64, 10*17)
	for i := 0; i < 10; i++ {
		for j := 0; j < 17; j++ {
			bigYs[i*17+j] = int64(j + 1)
		}
	}
	good := Options{Alpha: 1, Tol: 1e-6, MaxIter: 10}
	for name, c := range map[string]struct {
		sp  space.Space
		ys  []int64
		opt func(o *Options)
	}{
		"alpha":        {sp, ys, func(o *Options) { o.Alpha = -1 }},
		"tol":          {sp, ys, func(o *Options) { o.Tol = 0 }},
		"max_iter":     {sp, ys, func(o *Options) { o.MaxIter = 0 }},
		"lr":           {sp, ys, func(o *Options) { o.LearningRate = math.Inf(1) }},
		"samples":      {sp, ys, func(o *Options) { o.Inference.Samples = -5 }},
		"lbfgs+sample": {sp, ys, func(o *Options) { o.Solver = SolverLBFGS; o.Inference.Method = InferSampled }},
		"exact big":    {big, bigYs, func(o *Options) { o.Inference.Method = InferExact }},
	} {
		o := good
		c.opt(&o)
		if _, err := Fit(c.sp, X, 10, 2, c.ys, nil, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A fit warm-started from a converged model of the same problem stops before any iteration (jointly
// and label by label) at the same optimum, and an
// incompatible Init (another space, other features) is ignored: the fit is the cold one.
func TestFitWarmStart(t *testing.T) {
	for _, c := range []struct{ kind string }{{"multiclass"}, {"multilabel"}} {
		sp := mustSpace(t, c.kind, 4)
		const m, n = 120, 3
		X, ys := syntheticData(t, sp, m, n, 1.5, 41)
		opt := Options{Alpha: 0.01, Intercept: true, Tol: 1e-8, MaxIter: 500}
		cold, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Init = cold
		warm, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !warm.Result.Converged || warm.Result.Iterations != 0 || relDiff(warm.Coef, cold.Coef) > 1e-6 {
			t.Errorf("%s: warm start %+v, coefficients differ by %.3g", c.kind, warm.Result, relDiff(warm.Coef, cold.Coef))
		}
		other := mustSpace(t, c.kind, 5)
		Xo, yo := syntheticData(t, other, m, n, 1.5, 42)
		if opt.Init, err = Fit(other, Xo, m, n, yo, nil, Options{Alpha: 0.01, Intercept: true, Tol: 1e-8, MaxIter: 500}); err != nil {
			t.Fatal(err)
		}
		ignored, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if ignored.Result.Iterations != cold.Result.Iterations || relDiff(ignored.Coef, cold.Coef) != 0 {
			t.Errorf("%s: an Init of another space changed the fit: %+v", c.kind, ignored.Result)
		}
	}
}

// TestObjectiveStopsBetweenRows: a set stop flag ends an objective evaluation between rows with
// ErrCancelled (Ctrl-C waited for whole evaluations of exact inference: seconds each on
// Permutations(15) over 2,000 rows, several per line search).
func TestObjectiveStopsBetweenRows(t *testing.T) {
	sp := mustSpace(t, "permutations", 6)
	X, ys := syntheticData(t, sp, 40, 3, 1, 17)
	p, err := NewProblem(sp, X, 40, 3, ys, nil, 0.1, true)
	if err != nil {
		t.Fatal(err)
	}
	W := mat.NewDense(p.Cols(), sp.Dim(), nil)
	inf := InferenceOptions{Method: InferExact}
	if _, err := p.Objective(W, inf, 1, nil); err != nil {
		t.Fatal(err)
	}
	inf.Sampler.Stop = new(cancel.Flag)
	inf.Sampler.Stop.Stop()
	if _, err := p.Objective(W, inf, 1, nil); !errors.Is(err, ErrCancelled) {
		t.Errorf("stopped: want ErrCancelled, got %v", err)
	}
}

// The data term is a weighted mean: uniform weights of any positive size give the unweighted
// model. Weights of 1e-310 each were refused as an overflow of X.
func TestFitIgnoresTheWeightsScale(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	const m, n = 40, 3
	X, ys := syntheticData(t, sp, m, n, 1, 3)
	opt := Options{Alpha: 0.01, Intercept: true, Tol: 1e-10, MaxIter: 1000}
	base, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []float64{1e-310, math.SmallestNonzeroFloat64, 1e300} {
		weights := make([]float64, m)
		for i := range weights {
			weights[i] = w
		}
		md, err := Fit(sp, X, m, n, ys, weights, opt)
		if err != nil {
			t.Fatalf("weights %g: %v", w, err)
		}
		if dist := floats.Distance(md.Coef.RawMatrix().Data, base.Coef.RawMatrix().Data, math.Inf(1)); dist > 1e-8 {
			t.Errorf("weights %g: coefficients %.3g from the unweighted fit's", w, dist)
		}
	}
}

// Bad weights and empty data are named as such, with the values the caller gave: a weight of −1
// was reported as −0.5 (after scaling), a NaN weight and m = 0 as a default alpha of NaN or +Inf.
func TestFitNamesBadWeightsAndEmptyData(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	const m, n = 10, 2
	X, ys := syntheticData(t, sp, m, n, 1, 3)
	for _, tc := range []struct {
		bad  float64
		want string
	}{{-1, "sample_weight[0] = -1: weights must be finite and non-negative"}, {math.NaN(), "sample_weight[0] = NaN:"}, {math.Inf(1), "sample_weight[0] = +Inf:"}} {
		w := make([]float64, m)
		for i := range w {
			w[i] = 2
		}
		w[0] = tc.bad
		if _, err := Fit(sp, X, m, n, ys, w, Options{Intercept: true, Tol: 1e-6, MaxIter: 10}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("weight %v: %v, want %q", tc.bad, err, tc.want)
		}
	}
	if _, err := Fit(sp, nil, 0, n, nil, nil, Options{Intercept: true, Tol: 1e-6, MaxIter: 10}); err == nil || !strings.Contains(err.Error(), "at least one sample") {
		t.Errorf("no rows: %v", err)
	}
}

// A trial step whose scores overflow is a step too long: on X near 1e-300 without an intercept
// (W* ≈ 1e-300) L-BFGS's first step of unit length stopped the fit with "row 0: score u[0] = NaN",
// an error that blamed the inputs (probe DJ). The fits now end near W = 0.
func TestLBFGSTrialStepsThatOverflowBacktrack(t *testing.T) {
	for _, sp := range []space.Space{mustSpace(t, "multiclass", 3), mustSpace(t, "permutations", 4)} {
		X, ys := syntheticData(t, sp, 12, 3, 1, 5)
		for i := range X {
			X[i] *= 1e-300
		}
		opt := Options{Tol: 1e-6, MaxIter: 200, Alpha: 1, Solver: SolverLBFGS}
		md, err := Fit(sp, X, 12, 3, ys, nil, opt)
		if err != nil {
			t.Fatalf("%s: %v", sp.Kind(), err)
		}
		if top := floats.Max(md.Coef.RawMatrix().Data); !(math.Abs(top) < 1e-250) {
			t.Errorf("%s: coefficients up to %g, want about 1e-300", sp.Kind(), top)
		}
	}
}
