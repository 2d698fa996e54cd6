package ridge

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// sgdGapTol bounds (J_sgd − J*)/(J(0) − J*) after sgdTestEpochs epochs on the small problems of
// TestSGDApproachesOptimum (measured: at most 4e-4, poly on permutations, whose large k(x, x)
// makes the steps small; most are near 1e-5).
const (
	sgdGapTol     = 1e-3
	sgdTestEpochs = 400
)

// SGD comes within sgdGapTol of the exact optimum, for linear and kernel models in every space,
// with sample weights (some zero).
func TestSGDApproachesOptimum(t *testing.T) {
	for _, sp := range testSpaces(t) {
		const m, n = 60, 4
		X, ys := synthetic(t, sp, m, n, 23)
		w := weights(rand.New(rand.NewPCG(7, 8)), m)
		w[3], w[10] = 0, 0
		p, _ := NewProblem(sp, ys, m, w, 0.5)
		for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3}, {Kind: kernel.Poly, Gamma: 0.3, Degree: 2, Coef0: 1}} {
			opt := baseOptions()
			opt.Kernel = k
			exact := mustFit(t, sp, X, m, n, ys, w, opt)
			opt.Solver, opt.MaxIter, opt.Tol = SGD, sgdTestEpochs, 1e-14
			t0 := time.Now()
			md := mustFit(t, sp, X, m, n, ys, w, opt)
			elapsed := time.Since(t0)
			jStar, j0 := exact.Result.Objective, p.Constant()
			gap := (md.Result.Objective - jStar) / (j0 - jStar)
			t.Logf("%s %v: J* = %.8g, SGD J = %.8g after %d epochs (%v), gap %.3g", sp.Kind(), k.Kind, jStar, md.Result.Objective,
				md.Result.Iterations, elapsed, gap)
			if !(gap >= -1e-12 && gap <= sgdGapTol) {
				t.Errorf("%s %v: SGD gap %.3g, want ≤ %g", sp.Kind(), k.Kind, gap, sgdGapTol)
			}
			// The reported objective is J at the returned model.
			var j float64
			if k.Kind == kernel.Linear {
				j = p.LinearObjective(mat.NewDense(m, n, X), true, md.Coef, nil)
			} else {
				j = kernelObjectiveOf(md, p, X)
			}
			if diff := md.Result.Objective - j; diff > 1e-9*j || diff < -1e-9*j {
				t.Errorf("%s %v: reported J %.12g, recomputed %.12g", sp.Kind(), k.Kind, md.Result.Objective, j)
			}
			if md.Steps != int64(md.Result.Iterations*m) {
				t.Errorf("%s %v: %d steps after %d epochs", sp.Kind(), k.Kind, md.Steps, md.Result.Iterations)
			}
		}
	}
}

// kernelObjectiveOf recomputes J of a kernel model over its training set (support = the samples
// with nonzero coefficients) with KernelObjective on the full Gram matrix.
func kernelObjectiveOf(md *Model, p *Problem, X []float64) float64 {
	m, d := p.Delta.Dims()
	n := len(X) / m
	Xm := mat.NewDense(m, n, X)
	K := mat.NewDense(m, m, nil)
	md.Kernel.Gram(K, Xm, Xm)
	if md.Intercept {
		addConstant(K, 1)
	}
	// Γ over the samples: match support rows to training rows.
	A := mat.NewDense(d, m, nil)
	r, _ := md.Support.Dims()
	for s := 0; s < r; s++ {
		for i := 0; i < m; i++ {
			if mat.Equal(md.Support.RowView(s), Xm.RowView(i)) {
				for a := 0; a < d; a++ {
					A.Set(a, i, md.Dual.At(s, a))
				}
				break
			}
		}
	}
	return p.KernelObjective(K, A, nil)
}

// Truncation keeps at most τ examples in the expansion, in Fit and along a PartialFit stream.
func TestSGDTruncation(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n, tau = 90, 3, 17
	X, ys := synthetic(t, sp, m, n, 4)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	opt.Solver, opt.MaxIter, opt.Tau = SGD, 5, tau
	md := mustFit(t, sp, X, m, n, ys, nil, opt)
	if r, _ := md.Dual.Dims(); r > tau {
		t.Errorf("Fit: %d examples in the expansion, τ = %d", r, tau)
	}
	var prev *Model
	for _, c := range chunks(m, 4) {
		prev = streamFit(t, prev, sp, X, n, ys, nil, [][2]int{c}, opt)
		if r, _ := prev.Dual.Dims(); r > tau {
			t.Errorf("PartialFit: %d examples in the expansion after %d seen, τ = %d", r, prev.Seen, tau)
		}
	}
	// Without truncation a stream keeps every example it has seen (all weights are positive).
	opt.Tau = 0
	prev = nil
	for _, c := range chunks(m, 3) {
		prev = streamFit(t, prev, sp, X, n, ys, nil, [][2]int{c}, opt)
		if r, _ := prev.Dual.Dims(); int64(r) != prev.Seen || prev.Steps != prev.Seen {
			t.Errorf("PartialFit: %d examples in the expansion, %d steps after %d seen", r, prev.Steps, prev.Seen)
		}
	}
}

// The same seed gives the same model bit for bit; another seed another order, hence another model.
func TestSGDDeterministic(t *testing.T) {
	sp, _ := space.NewMulticlass(4)
	X, ys := synthetic(t, sp, 50, 3, 6)
	params := func(md *Model) *mat.Dense {
		if md.Coef != nil {
			return md.Coef
		}
		return md.Dual
	}
	const m, n = 50, 3
	opt := baseOptions()
	opt.Solver, opt.MaxIter = SGD, 7
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.5}} {
		opt.Kernel, opt.Seed = k, 42
		a, _ := Fit(sp, X, m, n, ys, nil, opt)
		b, _ := Fit(sp, X, m, n, ys, nil, opt)
		opt.Seed = 43
		c, _ := Fit(sp, X, m, n, ys, nil, opt)
		if !mat.Equal(params(a), params(b)) {
			t.Errorf("%v: two fits with the same seed differ", k.Kind)
		}
		if mat.Equal(params(a), params(c)) {
			t.Errorf("%v: fits with seeds 42 and 43 are identical", k.Kind)
		}
	}
}

// Progress is called once per epoch, and returning false cancels; Tol stops early.
func TestSGDProgressAndTol(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	opt := baseOptions()
	opt.Solver, opt.MaxIter = SGD, 30
	var epochs []int
	opt.Progress = func(it int, _, _ float64) bool { epochs = append(epochs, it); return true }
	md, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil || md.Result.Iterations != 30 || len(epochs) != 30 || epochs[29] != 30 {
		t.Errorf("progress calls %v, %d epochs, err %v", epochs, md.Result.Iterations, err)
	}
	opt.Progress = func(it int, _, _ float64) bool { return it < 3 }
	if _, err := Fit(sp, X, m, n, ys, nil, opt); !errors.Is(err, ErrCancelled) {
		t.Errorf("cancel: err %v", err)
	}
	opt.Progress, opt.Tol, opt.MaxIter = nil, 1e-3, 1000
	md, _ = Fit(sp, X, m, n, ys, nil, opt)
	if !md.Result.Converged || md.Result.Iterations >= 1000 || md.Result.RelGrad > 1e-3 {
		t.Errorf("tol 1e-3: %d epochs, relative change %.3g, converged %v", md.Result.Iterations, md.Result.RelGrad, md.Result.Converged)
	}
}

// A precomputed kernel works with SGD too, and gives the rbf model's scores when it is that
// kernel's Gram matrix.
func TestSGDPrecomputed(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 10)
	Xm := mat.NewDense(m, n, X)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.4}
	K := mat.NewDense(m, m, nil)
	rbf.Gram(K, Xm, Xm)
	opt := baseOptions()
	opt.Solver, opt.MaxIter, opt.Kernel = SGD, 20, rbf
	a := mustFit(t, sp, X, m, n, ys, nil, opt)
	opt.Kernel = kernel.Kernel{Kind: kernel.Precomputed}
	b := mustFit(t, sp, K.RawMatrix().Data, m, m, ys, nil, opt)
	ua, ub := make([]float64, m*3), make([]float64, m*3)
	_ = a.Decision(X, m, n, ua)
	_ = b.Decision(K.RawMatrix().Data, m, m, ub)
	if diff := maxAbsDiff(mat.NewDense(m, 3, ua), mat.NewDense(m, 3, ub)); diff > 1e-9 {
		t.Errorf("precomputed and rbf SGD scores differ by %.3g", diff)
	}
}

// A kernel stream with SGD lowers J over all the data below J(0) = ½Σs, and an epoch of SGD
// warm-started from a converged SGD fit stays near the optimum.
func TestSGDStreamAndWarmStart(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n = 200, 3
	X, ys := synthetic(t, sp, m, n, 12)
	p, _ := NewProblem(sp, ys, m, nil, 0.5)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	md := streamFit(t, nil, sp, X, n, ys, nil, chunks(m, 5), opt)
	exact, _ := Fit(sp, X, m, n, ys, nil, opt)
	j := kernelObjectiveOf(md, p, X)
	t.Logf("one SGD pass in 5 chunks: J = %.6g, J(0) = %.6g, J* = %.6g", j, p.Constant(), exact.Result.Objective)
	if !(j < p.Constant()) {
		t.Errorf("the stream did not lower J: %.6g ≥ J(0) = %.6g", j, p.Constant())
	}
	opt.Solver, opt.MaxIter = SGD, 1
	cold, _ := Fit(sp, X, m, n, ys, nil, opt)
	opt.MaxIter = 100
	conv, _ := Fit(sp, X, m, n, ys, nil, opt)
	opt.Init, opt.MaxIter = conv, 1
	warm, _ := Fit(sp, X, m, n, ys, nil, opt)
	gap := func(md *Model) float64 {
		return (md.Result.Objective - exact.Result.Objective) / (p.Constant() - exact.Result.Objective)
	}
	t.Logf("gap after one epoch %.3g, after 100 epochs %.3g, after one more warm-started epoch %.3g", gap(cold), gap(conv), gap(warm))
	if gap(warm) > 1e-2 || gap(warm) > gap(cold)/10 || warm.Steps != conv.Steps+m {
		t.Errorf("one epoch warm-started near the optimum: gap %.3g (cold epoch %.3g), %d steps", gap(warm), gap(cold), warm.Steps)
	}
}
