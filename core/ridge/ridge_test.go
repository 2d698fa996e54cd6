package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
	"gonum.org/v1/gonum/mat"
)

// synthetic draws inputs and structures that depend on them through a random linear model, so the
// fitted scores are far from trivial.
func synthetic(t testing.TB, sp space.Space, m, n int, seed uint64) ([]float64, []int64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	d := sp.Dim()
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	W := make([]float64, n*d)
	for i := range W {
		W[i] = r.NormFloat64()
	}
	ys := make([]int64, m*sp.Width())
	u := make([]float64, d)
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			u[a] = r.NormFloat64()
			for j := 0; j < n; j++ {
				u[a] += X[i*n+j] * W[j*d+a]
			}
		}
		sp.Decode(u, ys[i*sp.Width():(i+1)*sp.Width()])
	}
	return X, ys
}

func randDense(r *rand.Rand, rows, cols int) *mat.Dense {
	a := mat.NewDense(rows, cols, nil)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			a.Set(i, j, r.NormFloat64())
		}
	}
	return a
}

func weights(r *rand.Rand, m int) []float64 {
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.2 + 2*r.Float64()
	}
	return w
}

// The objective must equal the thesis' loss computed by brute force over every structure z:
// Σ_i s_i mean_z[a + a²/2], a = f(x_i, z) − f(x_i, y_i), plus ½Σ s_i, plus α‖W‖².
func TestObjectiveEqualsBruteForceThesisLoss(t *testing.T) {
	for _, kind := range []string{"multiclass", "multilabel"} {
		for _, d := range []int{2, 5, 8} {
			sp, _ := space.New(kind, []int64{int64(d)})
			b := spacetest.Enumerate(t, sp)
			const m, n = 7, 3
			X, ys := synthetic(t, sp, m, n, uint64(d))
			r := rand.New(rand.NewPCG(5, uint64(d)))
			w := weights(r, m)
			p, err := NewProblem(sp, ys, m, w, 0.7)
			if err != nil {
				t.Fatal(err)
			}
			Xm := mat.NewDense(m, n, X)
			for _, intercept := range []bool{false, true} {
				k := n
				if intercept {
					k++
				}
				W := randDense(r, k, d)
				got := p.LinearObjective(Xm, intercept, W, nil)
				var want float64
				psi := make([]float64, d)
				for i := 0; i < m; i++ {
					u := make([]float64, d)
					for a := 0; a < d; a++ {
						for j := 0; j < n; j++ {
							u[a] += X[i*n+j] * W.At(j, a)
						}
						if intercept {
							u[a] += W.At(n, a)
						}
					}
					sp.Embed(ys[i*sp.Width():(i+1)*sp.Width()], psi)
					fy := mat.Dot(mat.NewVecDense(d, u), mat.NewVecDense(d, psi))
					var mean float64
					for _, pz := range b.Psis {
						a := mat.Dot(mat.NewVecDense(d, u), mat.NewVecDense(d, pz)) - fy
						mean += (a + a*a/2) / float64(len(b.Psis))
					}
					want += w[i] * (mean + 0.5)
				}
				for j := 0; j < n; j++ {
					for a := 0; a < d; a++ {
						want += 0.7 * W.At(j, a) * W.At(j, a)
					}
				}
				if math.Abs(got-want) > 1e-10*math.Abs(want) {
					t.Errorf("%s(%d) intercept=%v: J = %.15g, brute force %.15g", kind, d, intercept, got, want)
				}
			}
		}
	}
}

func finiteDiff(f func() float64, x *mat.Dense, i, j int) float64 {
	const h = 1e-6
	v := x.At(i, j)
	x.Set(i, j, v+h)
	fp := f()
	x.Set(i, j, v-h)
	fm := f()
	x.Set(i, j, v)
	return (fp - fm) / (2 * h)
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, kind := range []string{"multiclass", "multilabel"} {
		sp, _ := space.New(kind, []int64{4})
		const m, n = 9, 3
		X, ys := synthetic(t, sp, m, n, 3)
		p, _ := NewProblem(sp, ys, m, weights(r, m), 0.3)
		Xm := mat.NewDense(m, n, X)
		W := randDense(r, n+1, 4)
		grad := mat.NewDense(n+1, 4, nil)
		p.LinearObjective(Xm, true, W, grad)
		for i := 0; i <= n; i++ {
			for a := 0; a < 4; a++ {
				fd := finiteDiff(func() float64 { return p.LinearObjective(Xm, true, W, nil) }, W, i, a)
				if math.Abs(fd-grad.At(i, a)) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s linear ∂J/∂W[%d,%d] = %v, finite difference %v", kind, i, a, grad.At(i, a), fd)
				}
			}
		}
		K := mat.NewDense(m, m, nil)
		kernel.Kernel{Kind: kernel.RBF, Gamma: 0.4}.Gram(K, Xm, Xm)
		A := randDense(r, 4, m)
		gk := mat.NewDense(4, m, nil)
		p.KernelObjective(K, A, gk)
		for a := 0; a < 4; a++ {
			for i := 0; i < m; i++ {
				fd := finiteDiff(func() float64 { return p.KernelObjective(K, A, nil) }, A, a, i)
				if math.Abs(fd-gk.At(a, i)) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s kernel ∂J/∂A[%d,%d] = %v, finite difference %v", kind, a, i, gk.At(a, i), fd)
				}
			}
		}
	}
}

func baseOptions() Options {
	return Options{Alpha: 0.5, Kernel: kernel.Kernel{Kind: kernel.Linear}, Intercept: true, Tol: 1e-10, MaxIter: 1000}
}

// Every solver must return a point where the gradient vanishes, and the solvers must agree.
func TestSolversReachTheOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, kind := range []string{"multiclass", "multilabel"} {
		for _, d := range []int{2, 6} {
			sp, _ := space.New(kind, []int64{int64(d)})
			const m, n = 60, 5
			X, ys := synthetic(t, sp, m, n, uint64(d))
			w := weights(r, m)
			p, _ := NewProblem(sp, ys, m, w, 0.5)
			Xm := mat.NewDense(m, n, X)
			var objectives []float64
			for _, solver := range []Solver{Exact, CG} {
				opt := baseOptions()
				opt.Solver = solver
				model, err := Fit(sp, X, m, n, ys, w, opt)
				if err != nil {
					t.Fatal(err)
				}
				grad := mat.NewDense(n+1, d, nil)
				j := p.LinearObjective(Xm, true, model.Coef, grad)
				g0 := mat.NewDense(n+1, d, nil)
				p.LinearObjective(Xm, true, mat.NewDense(n+1, d, nil), g0)
				if rel := mat.Norm(grad, 2) / mat.Norm(g0, 2); rel > 1e-8 {
					t.Errorf("%s(%d) %v: relative gradient %.3g at the solution", kind, d, solver, rel)
				}
				if math.Abs(j-model.Result.Objective) > 1e-9*j {
					t.Errorf("%s(%d) %v: reported objective %v, recomputed %v", kind, d, solver, model.Result.Objective, j)
				}
				objectives = append(objectives, j)
			}
			if math.Abs(objectives[0]-objectives[1]) > 1e-8*objectives[0] {
				t.Errorf("%s(%d): exact J = %.15g, CG J = %.15g", kind, d, objectives[0], objectives[1])
			}
			for _, kk := range []kernel.Kernel{{Kind: kernel.RBF, Gamma: 0.2}, {Kind: kernel.Poly, Gamma: 0.3, Degree: 3, Coef0: 1}} {
				opt := baseOptions()
				opt.Kernel = kk
				opt.Tol = 1e-8
				model, err := Fit(sp, X, m, n, ys, w, opt)
				if err != nil {
					t.Fatal(err)
				}
				K := mat.NewDense(m, m, nil)
				kk.Gram(K, Xm, Xm)
				addConstant(K, 1)
				A := mat.DenseCopyOf(model.Dual.T())
				grad := mat.NewDense(d, m, nil)
				p.KernelObjective(K, A, grad)
				g0 := mat.NewDense(d, m, nil)
				p.KernelObjective(K, mat.NewDense(d, m, nil), g0)
				if rel := mat.Norm(grad, 2) / mat.Norm(g0, 2); rel > 1e-8 || !model.Result.Converged {
					t.Errorf("%s(%d) %v kernel: relative gradient %.3g after %d iterations (converged %v)",
						kind, d, kk.Kind, rel, model.Result.Iterations, model.Result.Converged)
				}
			}
		}
	}
}

// A precomputed linear Gram matrix without intercept is the same model as the primal linear one.
func TestKernelFormMatchesPrimal(t *testing.T) {
	sp, _ := space.NewMultilabel(5)
	const m, n = 40, 4
	X, ys := synthetic(t, sp, m, n, 8)
	opt := baseOptions()
	opt.Intercept = false
	lin, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	Xm := mat.NewDense(m, n, X)
	var K mat.Dense
	K.Mul(Xm, Xm.T())
	opt.Kernel = kernel.Kernel{Kind: kernel.Precomputed}
	ker, err := Fit(sp, K.RawMatrix().Data, m, m, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	U1, U2 := make([]float64, m*5), make([]float64, m*5)
	if err := lin.Decision(X, m, n, U1); err != nil {
		t.Fatal(err)
	}
	if err := ker.Decision(K.RawMatrix().Data, m, m, U2); err != nil {
		t.Fatal(err)
	}
	for i := range U1 {
		if math.Abs(U1[i]-U2[i]) > 1e-7 {
			t.Fatalf("score %d: primal %v, kernel %v", i, U1[i], U2[i])
		}
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	X := []float64{1, 2, 3, 4}
	ys := []int64{0, 1, 0, 1, 1, 0}
	cases := []struct {
		name string
		mut  func(o *Options, X []float64, ys []int64, w *[]float64)
		want string
	}{
		{"negative alpha", func(o *Options, _ []float64, _ []int64, _ *[]float64) { o.Alpha = -1 }, "alpha"},
		{"nan in X", func(_ *Options, X []float64, _ []int64, _ *[]float64) { X[3] = math.NaN() }, "X[1, 1]"},
		{"bad label", func(_ *Options, _ []float64, ys []int64, _ *[]float64) { ys[4] = 2 }, "row 1"},
		{"negative weight", func(_ *Options, _ []float64, _ []int64, w *[]float64) { *w = []float64{1, -1} }, "sample_weight[1]"},
		{"zero weights", func(_ *Options, _ []float64, _ []int64, w *[]float64) { *w = []float64{0, 0} }, "sums to zero"},
		{"bad tol", func(o *Options, _ []float64, _ []int64, _ *[]float64) { o.Tol = 0 }, "tol"},
		{"bad gamma", func(o *Options, _ []float64, _ []int64, _ *[]float64) { o.Kernel = kernel.Kernel{Kind: kernel.RBF} }, "gamma"},
		{"non-square precomputed", func(o *Options, _ []float64, _ []int64, _ *[]float64) {
			o.Kernel = kernel.Kernel{Kind: kernel.Precomputed}
		}, ""},
	}
	for _, c := range cases {
		opt := baseOptions()
		x := append([]float64(nil), X...)
		y := append([]int64(nil), ys...)
		var w []float64
		c.mut(&opt, x, y, &w)
		_, err := Fit(sp, x, 2, 2, y, w, opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestMemoryBoundsAreErrors(t *testing.T) {
	sp, _ := space.NewMultilabel(100)
	opt := baseOptions()
	opt.Solver = Exact
	const m, n = 2, 100
	_, err := Fit(sp, make([]float64, m*n), m, n, make([]int64, m*100), nil, opt)
	if err == nil || !strings.Contains(err.Error(), "use solver=\"cg\"") {
		t.Errorf("exact solver on 101×100 unknowns: error %v", err)
	}
	small, _ := space.NewMultilabel(2)
	opt = baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}
	mk := MaxKernelSamples + 1
	_, err = Fit(small, make([]float64, mk), mk, 1, make([]int64, 2*mk), nil, opt)
	if err == nil || !strings.Contains(err.Error(), "Gram matrix") {
		t.Errorf("kernel model on %d samples: error %v", mk, err)
	}
}

func TestLargeOutputDimensionIsAnError(t *testing.T) {
	sp, _ := space.NewPermutations(300) // d = 44,850: a dense S would take 16 GB
	opt := baseOptions()
	opt.Solver = Exact // the linear CG solver handles it as an operator (operator_test.go)
	_, err := Fit(sp, []float64{1}, 1, 1, make([]int64, 300), nil, opt)
	if err == nil || !strings.Contains(err.Error(), "dimension 44850") {
		t.Fatalf("Fit on Permutations(300): error %v, want the dimension refused", err)
	}
}

func TestProgressCanCancel(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	X, ys := synthetic(t, sp, 50, 3, 1)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 1}} {
		opt := baseOptions()
		opt.Solver = CG
		opt.Kernel = k
		calls := 0
		opt.Progress = func(int, float64, float64) bool { calls++; return calls < 2 }
		_, err := Fit(sp, X, 50, 3, ys, nil, opt)
		if !errors.Is(err, ErrCancelled) || calls != 2 {
			t.Errorf("%v: err = %v after %d calls, want ErrCancelled after 2", k.Kind, err, calls)
		}
	}
}

// TestYeastSizedTiming logs the cost of each solver at the size of the yeast benchmark; the
// numbers that count are measured against scikit-learn in benchmarks/.
func TestYeastSizedTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing log only")
	}
	sp, _ := space.NewMultilabel(14)
	const m, n = 1500, 103
	X, ys := synthetic(t, sp, m, n, 4)
	for _, c := range []struct {
		k kernel.Kernel
		s Solver
	}{{kernel.Kernel{Kind: kernel.Linear}, Exact}, {kernel.Kernel{Kind: kernel.Linear}, CG}, {kernel.Kernel{Kind: kernel.RBF, Gamma: 0.01}, CG}} {
		opt := baseOptions()
		opt.Alpha = 1
		opt.Kernel, opt.Solver, opt.Tol = c.k, c.s, 1e-8
		t0 := time.Now()
		model, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v/%v: %v, %d iterations, relative gradient %.2g", c.k.Kind, c.s, time.Since(t0), model.Result.Iterations, model.Result.RelGrad)
	}
}
