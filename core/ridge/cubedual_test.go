package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// cubeDualCase builds a multi-label problem with its dense linear system and Gram matrix.
func cubeDualCase(t testing.TB, m, n, d int, intercept bool, w []float64, alpha float64, seed uint64) (*Problem, *linearSystem, *mat.SymDense) {
	t.Helper()
	sp, err := space.NewMultilabel(d)
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, m, n, seed)
	p, err := NewProblem(sp, ys, m, w, alpha)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, n, X), intercept: intercept}
	return p, newLinearSystem(p, des), des.gram(p.Weight)
}

// The dual's solution is the primal's: on wide and tall designs, with and without the intercept,
// with unit weights and with weights of which one is zero, at a strong and a weak penalty. Its
// reported objective is J at the returned W, and its relative gradient is ‖∇J(W)‖/‖∇J(0)‖, both
// recomputed here from their definitions.
func TestCubeDualMatchesPrimal(t *testing.T) {
	defer func(old int) { cubeDualMode = old }(cubeDualMode)
	for _, c := range []struct{ m, n, d int }{{120, 4, 70}, {40, 12, 90}, {300, 9, 65}} {
		for _, intercept := range []bool{false, true} {
			for _, weighted := range []bool{false, true} {
				for _, alpha := range []float64{1e-3, 2} {
					name := fmt.Sprintf("m=%d/n=%d/d=%d/intercept=%v/weighted=%v/alpha=%g", c.m, c.n, c.d, intercept, weighted, alpha)
					t.Run(name, func(t *testing.T) {
						var w []float64
						if weighted {
							w = weights(rand.New(rand.NewPCG(3, uint64(c.m))), c.m)
							w[1] = 0
						}
						p, ls, G := cubeDualCase(t, c.m, c.n, c.d, intercept, w, alpha, uint64(c.d))
						sigma, ok := cubeDualSigma(p)
						if !ok || sigma != 0.25 {
							t.Fatalf("cubeDualSigma = %v, %v; want 0.25, true", sigma, ok)
						}
						opt := baseOptions()
						opt.Tol = 1e-11
						k := ls.des.cols()
						W := mat.NewDense(k, c.d, nil)
						res, done, err := solveCubeDual(ls, G, sigma, W, &opt)
						if err != nil || !done {
							t.Fatalf("solveCubeDual: done=%v, err=%v", done, err)
						}
						cubeDualMode = cubeDualNever
						want := mat.NewDense(k, c.d, nil)
						if _, err := solveLinearCG(p, ls.des, want, &opt); err != nil {
							t.Fatal(err)
						}
						cubeDualMode = cubeDualAuto
						var diff mat.Dense
						diff.Sub(W, want)
						if e := mat.Norm(&diff, 2) / mat.Norm(want, 2); e > 1e-8 {
							t.Errorf("W differs from the primal's by %.3g (relative)", e)
						}
						grad := mat.NewDense(k, c.d, nil)
						J := p.linearObjective(ls.des, W, grad)
						if math.Abs(res.Objective-J) > 1e-10*math.Abs(J) {
							t.Errorf("objective %.15g, J(W) = %.15g", res.Objective, J)
						}
						rel := mat.Norm(grad, 2) / mat.Norm(ls.B, 2)
						if !res.Converged || res.RelGrad > opt.Tol || math.Abs(res.RelGrad-rel) > 1e-12 {
							t.Errorf("relative gradient reported %.3g (converged %v), recomputed %.3g, tol %g", res.RelGrad, res.Converged, rel, opt.Tol)
						}
					})
				}
			}
		}
	}
}

// The dual solves exactly where the cost model sends it: the many-label benchmark's shape goes to
// the dual, and the problems without its structure or where it does not pay stay primal.
func TestUseCubeDual(t *testing.T) {
	many := func(t *testing.T) *linearSystem {
		_, ls, _ := cubeDualCase(t, 2000, 100, 1000, true, nil, 1, 5)
		return ls
	}
	for _, c := range []struct {
		name string
		ls   func(t *testing.T) *linearSystem
		want bool
	}{
		{"many labels", many, true},
		{"few labels (yeast's shape)", func(t *testing.T) *linearSystem {
			_, ls, _ := cubeDualCase(t, 1500, 103, 14, true, nil, 1, 5)
			return ls
		}, false},
		{"k-subsets", func(t *testing.T) *linearSystem {
			sp, _ := space.New("ksubsets", []int64{300, 3})
			X, ys := synthetic(t, sp, 500, 40, 1)
			p, err := NewProblem(sp, ys, 500, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			return newLinearSystem(p, design{X: mat.NewDense(500, 40, X), intercept: true})
		}, false},
		{"empirical reference", func(t *testing.T) *linearSystem {
			ls := many(t)
			sp, _ := space.NewMultilabel(1000)
			if err := ls.p.useReference(sp, Empirical, 0.5); err != nil {
				t.Fatal(err)
			}
			return ls
		}, false},
		{"sparse X", func(t *testing.T) *linearSystem {
			ls := many(t)
			m, n := ls.des.X.Dims()
			ls.des = design{sp: sparsify(t, ls.des.X.RawMatrix().Data, m, n, 1, false), intercept: true}
			return ls
		}, false},
		{"weights of 1e-200", func(t *testing.T) *linearSystem {
			ls := many(t)
			ls.p.Weight[3] = 1e-200
			return ls
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls := c.ls(t)
			m, d := ls.p.dims()
			opt := baseOptions()
			opt.Tol = 1e-8
			if _, got := useCubeDual(ls, 4*float64(m*ls.des.cols()*d), &opt); got != c.want {
				t.Errorf("useCubeDual = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("forbidden", func(t *testing.T) {
		defer func(old int) { cubeDualMode = old }(cubeDualMode)
		cubeDualMode = cubeDualNever
		ls := many(t)
		m, d := ls.p.dims()
		opt := baseOptions()
		if _, got := useCubeDual(ls, 4*float64(m*ls.des.cols()*d), &opt); got {
			t.Error("useCubeDual = true under cubeDualNever")
		}
	})
}

// The dual's W does not depend on the number of threads, bit for bit: K's rows are summed in fixed
// slabs, not per thread.
func TestCubeDualThreadIndependent(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	var first []float64
	for _, threads := range []int{1, 2, 3} {
		parallel.SetThreads(threads)
		_, ls, G := cubeDualCase(t, 150, 6, 80, true, nil, 0.5, 2)
		opt := baseOptions()
		W := mat.NewDense(ls.des.cols(), 80, nil)
		if _, _, err := solveCubeDual(ls, G, 0.25, W, &opt); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = W.RawMatrix().Data
			continue
		}
		for i, v := range W.RawMatrix().Data {
			if v != first[i] {
				t.Fatalf("%d threads: W[%d] = %v, one thread %v", threads, i, v, first[i])
			}
		}
	}
}

// A stop request ends the dual's fit with ErrCancelled, MaxIter bounds its iterations (reported as
// not converged), and Progress sees every iteration, the last with the reported objective.
func TestCubeDualStopsAndReports(t *testing.T) {
	_, ls, G := cubeDualCase(t, 150, 6, 80, true, nil, 0.5, 4)
	W := mat.NewDense(ls.des.cols(), 80, nil)
	opt := baseOptions()
	opt.Stop = new(cancel.Flag)
	opt.Stop.Stop()
	if _, _, err := solveCubeDual(ls, G, 0.25, W, &opt); !errors.Is(err, ErrCancelled) {
		t.Errorf("stopped fit: err = %v", err)
	}
	opt = baseOptions()
	opt.MaxIter = 2
	res, _, err := solveCubeDual(ls, G, 0.25, W, &opt)
	if err != nil || res.Iterations != 2 || res.Converged {
		t.Errorf("MaxIter 2: %+v, %v", res, err)
	}
	opt = baseOptions()
	var calls int
	var last float64
	opt.Progress = func(it int, objective, _ float64) bool {
		calls++
		if it != calls {
			t.Errorf("progress: iteration %d at call %d", it, calls)
		}
		last = objective
		return true
	}
	res, _, err = solveCubeDual(ls, G, 0.25, W, &opt)
	if err != nil || calls != res.Iterations || math.Abs(last-res.Objective) > 1e-9*math.Abs(res.Objective) {
		t.Errorf("progress: %d calls for %d iterations, last objective %v, result %v (err %v)", calls, res.Iterations, last, res.Objective, err)
	}
}

// A warm start continues in the primal, where the iterate carries over: fits of three iterations
// each, every one from the last, converge to the dual's answer; the dual's start at zero could not
// continue them (mapping W to the dual, t_i = s_i^½ (1 − x̃_iᵀWδ_i), multiplies the error by DKD).
func TestCubeDualWarmStartStaysPrimal(t *testing.T) {
	p, ls, G := cubeDualCase(t, 150, 6, 80, true, nil, 0.5, 6)
	opt := baseOptions()
	want := mat.NewDense(ls.des.cols(), 80, nil)
	if _, _, err := solveCubeDual(ls, G, 0.25, want, &opt); err != nil {
		t.Fatal(err)
	}
	defer func(old int) { cubeDualMode = old }(cubeDualMode)
	cubeDualMode = cubeDualAlways
	W := mat.NewDense(ls.des.cols(), 80, nil)
	opt.MaxIter = 3
	var res Result
	var err error
	fits := 0
	for ; fits < 100 && !res.Converged; fits++ {
		if res, err = solveLinearCG(p, ls.des, W, &opt); err != nil {
			t.Fatal(err)
		}
	}
	if !res.Converged {
		t.Fatalf("%d warm-started fits of 3 iterations did not converge", fits)
	}
	var diff mat.Dense
	diff.Sub(W, want)
	if e := mat.Norm(&diff, 2) / mat.Norm(want, 2); e > 1e-7 {
		t.Errorf("warm-started W differs from the dual's by %.3g", e)
	}
}

// The dual stands in for the sparse-target form too (few labels on, where that form is the
// primal's choice): the same solution as that form's iterations.
func TestCubeDualStandsInForSparseTargets(t *testing.T) {
	defer func(old int) { sparseTargetMode = old }(sparseTargetMode)
	defer func(old int) { cubeDualMode = old }(cubeDualMode)
	sparseTargetMode = sparseTargetAlways
	sp, _ := space.NewMultilabel(300)
	const m, n = 120, 4
	r := rand.New(rand.NewPCG(8, 9))
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	ys := make([]int64, m*300)
	for i := range ys {
		if r.Float64() < 0.02 {
			ys[i] = 1
		}
	}
	p, err := NewProblem(sp, ys, m, nil, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, n, X), intercept: true}
	G := des.gram(p.Weight)
	h, B := linearHessian(p, des, G)
	if _, ok := h.(*sparseTargetSystem); !ok {
		t.Fatalf("linearHessian gave %T, want the sparse-target form", h)
	}
	if ls, perIter := cubeDualCandidate(p, des, h, B); ls == nil || !(perIter > 0) {
		t.Fatalf("no dual candidate for the sparse-target form (%v, %v)", ls, perIter)
	}
	opt := baseOptions()
	opt.Tol = 1e-11
	solve := func(mode int) *mat.Dense {
		cubeDualMode = mode
		W := mat.NewDense(n+1, 300, nil)
		if _, err := solveLinearCG(p, des, W, &opt); err != nil {
			t.Fatal(err)
		}
		return W
	}
	dual, primal := solve(cubeDualAlways), solve(cubeDualNever)
	var diff mat.Dense
	diff.Sub(dual, primal)
	if e := mat.Norm(&diff, 2) / mat.Norm(primal, 2); e > 1e-8 || mat.Equal(dual, primal) {
		t.Errorf("dual and sparse-target solutions differ by %.3g (relative; equal bit for bit: %v)", e, mat.Equal(dual, primal))
	}
}

// Where A is ill-conditioned (a near-duplicate column, a tiny penalty) rounding spoils the dual's
// own convergence check: the fit is judged by the true gradient and finished by the primal, so
// that its reported relative gradient and objective are those of the W it returns and meet Tol.
// (A review found 8.7e-10 reported where the gradient was 2e-6, and J below the minimum.)
func TestCubeDualIllConditionedIsCheckedAndFinished(t *testing.T) {
	defer func(old int) { cubeDualMode = old }(cubeDualMode)
	cubeDualMode = cubeDualAlways
	for _, alpha := range []float64{1e-8, 1e-9, 1e-10} {
		t.Run(fmt.Sprint(alpha), func(t *testing.T) {
			p, ls, _ := cubeDualCase(t, 400, 10, 80, true, nil, alpha, 11)
			r := rand.New(rand.NewPCG(1, 2))
			X := ls.des.X
			for i := 0; i < 400; i++ {
				X.Set(i, 1, X.At(i, 0)+1e-7*r.NormFloat64())
			}
			opt := baseOptions()
			opt.Tol = 1e-8
			W := mat.NewDense(11, 80, nil)
			res, err := solveLinearCG(p, ls.des, W, &opt)
			if err != nil {
				t.Fatal(err)
			}
			grad := mat.NewDense(11, 80, nil)
			J := p.linearObjective(ls.des, W, grad)
			B := newLinearSystem(p, ls.des).B
			rel := mat.Norm(grad, 2) / mat.Norm(B, 2)
			if !res.Converged || rel > 2*opt.Tol || math.Abs(res.RelGrad-rel) > 1e-3*rel+1e-12 {
				t.Errorf("reported relative gradient %.3g (converged %v), true %.3g", res.RelGrad, res.Converged, rel)
			}
			if math.Abs(res.Objective-J) > 1e-12*math.Abs(J) {
				t.Errorf("reported J %.15g, J(W) %.15g", res.Objective, J)
			}
		})
	}
}

// The cost model counts the iterations the tolerance and MaxIter ask for: at a loose tolerance or
// a few iterations the dual's set-up does not pay, at the default tolerance it does.
func TestUseCubeDualWeighsTheTolerance(t *testing.T) {
	_, ls, _ := cubeDualCase(t, 2000, 100, 1000, true, nil, 1, 5)
	m, d := ls.p.dims()
	perIter := 4 * float64(m*ls.des.cols()*d)
	for _, c := range []struct {
		tol     float64
		maxIter int
		want    bool
	}{{1e-8, 1000, true}, {1e-12, 1000, true}, {1e-1, 1000, false}, {1e-8, 2, false}} {
		opt := baseOptions()
		opt.Tol, opt.MaxIter = c.tol, c.maxIter
		if _, got := useCubeDual(ls, perIter, &opt); got != c.want {
			t.Errorf("tol %g, max_iter %d: useCubeDual = %v, want %v", c.tol, c.maxIter, got, c.want)
		}
	}
}

// A stop request ends the popcount pass over K between tiles.
func TestCubeDualTargetsPassStops(t *testing.T) {
	_, ls, _ := cubeDualCase(t, 300, 4, 70, true, nil, 1, 3)
	cd := &cubeDual{ls: ls, m: 300, dkd: make([]float64, 300*300), sq: make([]float64, 300)}
	stop := new(cancel.Flag)
	stop.Stop()
	if err := cd.scaleByTargets(stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("scaleByTargets with a stop request: %v", err)
	}
}
