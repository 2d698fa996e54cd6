package ridge

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The direct solve reaches the optimum of the unpreconditioned CG reference on every kernel case:
// singular Gram matrices, zero weights, singular S (multiclass), extreme α.
func TestKernelExactReachesTheOptimum(t *testing.T) {
	for _, c := range kernelCases(t) {
		m, d := c.p.dims()
		calls := 0
		opt := Options{Alpha: c.p.Alpha, Tol: 1e-9, Progress: func(it int, j, rel float64) bool {
			calls++
			return it == 1
		}}
		Gamma := mat.NewDense(m, d, nil)
		res, err := solveKernelExact(c.p, c.K, maxAbs(c.K), Gamma, &opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		j, rel := kernelRelGrad(c.p, c.K, Gamma)
		if rel > 1e-9 || math.Abs(res.RelGrad-rel) > 1e-9 || res.Iterations != 1 || !res.Converged || calls != 1 {
			t.Errorf("%s: relative gradient %.3g (reported %.3g), %d iterations, converged %v, %d progress calls",
				c.name, rel, res.RelGrad, res.Iterations, res.Converged, calls)
		}
		if math.Abs(j-res.Objective) > 1e-12*math.Abs(j) {
			t.Errorf("%s: reported objective %.15g, recomputed %.15g", c.name, res.Objective, j)
		}
		checkReferenceOptimum(t, c, Gamma, 1e-10)
	}
}

// Through Fit: solver=exact solves a kernel model directly and Auto by CG, to the same optimum;
// exact beyond MaxExactUnknowns is an error naming the way out, and a verbose exact fit reports
// once and can be cancelled.
func TestKernelSolverChoice(t *testing.T) {
	sp, _ := space.NewPermutations(4) // d = 6
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	const m = 60
	X, ys := synthetic(t, sp, m, 3, 5)
	fit := func(s Solver) *Model {
		opt := baseOptions()
		opt.Kernel, opt.Solver, opt.Tol = rbf, s, 1e-10
		model, err := Fit(sp, X, m, 3, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		return model
	}
	auto, exact := fit(Auto), fit(Exact)
	if auto.Result.Iterations < 2 || exact.Result.Iterations != 1 {
		t.Errorf("iterations: Auto %d (want CG), exact %d (want 1)", auto.Result.Iterations, exact.Result.Iterations)
	}
	if j, je := auto.Result.Objective, exact.Result.Objective; math.Abs(j-je) > 1e-8*math.Abs(je) {
		t.Errorf("Auto J = %.15g, exact J = %.15g", j, je)
	}

	big := MaxExactUnknowns/6 + 1
	Xb, ysb := synthetic(t, sp, big, 2, 9)
	opt := baseOptions()
	opt.Kernel, opt.Solver = rbf, Exact
	if _, err := Fit(sp, Xb, big, 2, ysb, nil, opt); err == nil || !strings.Contains(err.Error(), `use solver="cg"`) {
		t.Errorf("exact kernel solve of %d×6 unknowns: error %v", big, err)
	}

	Xs, yss := synthetic(t, sp, 30, 2, 3)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, rbf} {
		opt := baseOptions()
		opt.Kernel, opt.Solver = k, Exact
		calls := 0
		opt.Progress = func(int, float64, float64) bool { calls++; return false }
		if _, err := Fit(sp, Xs, 30, 2, yss, nil, opt); !errors.Is(err, ErrCancelled) || calls != 1 {
			t.Errorf("%v exact: err = %v after %d progress calls, want ErrCancelled after 1", k.Kind, err, calls)
		}
	}
}

// BenchmarkKernelSolvers compares the direct solve with deflated CG (to 1e-8) on rbf kernel
// models of permutations of 4 labels (d = 6), the measurement behind Auto's choice of CG.
func BenchmarkKernelSolvers(b *testing.B) {
	sp, _ := space.NewPermutations(4)
	for _, m := range []int{100, 400} {
		X, ys := synthetic(b, sp, m, 5, 3)
		for _, s := range []Solver{Exact, CG} {
			b.Run(fmt.Sprintf("m=%d/%v", m, s), func(b *testing.B) {
				opt := baseOptions()
				opt.Kernel, opt.Solver, opt.Tol = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.2}, s, 1e-8
				for b.Loop() {
					if _, err := Fit(sp, X, m, 5, ys, nil, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The exact solver and SGD refuse an indefinite precomputed kernel as CG does (the objective is
// unbounded below), and accept singular and float32-rounded PSD ones. The exact solver fitted the
// stationary point without a word; SGD diverged for max_iter epochs into a NaN objective and
// warned to raise max_iter. Its two certificates are tried apart: a negative diagonal entry, and
// coefficients A with tr(AᵀKA) < 0 (K − 0.5·I, whose diagonal is positive), the latter with J
// evaluated every epoch (tol) and once at the end (Tol = 0).
func TestKernelSolversRefuseAnIndefiniteKernel(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m = 30
	X, ys := synthetic(t, sp, m, 2, 5)
	K := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			var dx float64
			for f := 0; f < 2; f++ {
				v := X[i*2+f] - X[j*2+f]
				dx += v * v
			}
			K.Set(i, j, math.Exp(-0.5*dx))
		}
	}
	negDiag, indef, linear, rounded := mat.DenseCopyOf(K), mat.DenseCopyOf(K), mat.NewDense(m, m, nil), mat.NewDense(m, m, nil)
	// a centred Gram matrix's row at the mean is zero up to rounding, its diagonal −1e-18 or so:
	// SGD's diagonal check refused it without CG's margin
	tiny := mat.DenseCopyOf(K)
	for i := 0; i < m; i++ {
		negDiag.Set(i, i, K.At(i, i)-1.01) // smallest eigenvalue about −1
		indef.Set(i, i, K.At(i, i)-0.5)
		for j := 0; j < m; j++ {
			linear.Set(i, j, X[i*2]*X[j*2]+X[i*2+1]*X[j*2+1])
			rounded.Set(i, j, float64(float32(K.At(i, j))))
		}
	}
	for j := 0; j < m; j++ {
		tiny.Set(3, j, 0)
		tiny.Set(j, 3, 0)
	}
	tiny.Set(3, 3, -1e-17)
	type solver struct {
		name   string
		solver Solver
		tol    float64
	}
	for _, s := range []solver{{"exact", Exact, 1e-10}, {"sgd", SGD, 1e-10}, {"sgd, J at the end", SGD, 0}} {
		for _, c := range []struct {
			name string
			K    *mat.Dense
			ok   bool
		}{{"rbf − 1.01·I", negDiag, false}, {"rbf − 0.5·I", indef, false}, {"linear, rank 2", linear, true},
			{"rbf in float32", rounded, true}, {"rbf with a zero row, diagonal −1e-17", tiny, true}} {
			opt := baseOptions()
			opt.Kernel, opt.Solver, opt.Tol, opt.MaxIter = kernel.Kernel{Kind: kernel.Precomputed}, s.solver, s.tol, 200
			opt.Intercept = false // the intercept's constant would lift the negative diagonal
			_, err := Fit(sp, c.K.RawMatrix().Data, m, m, ys, nil, opt)
			if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "not positive semi-definite")) {
				t.Errorf("%s, %s: err %v, want accepted %v", s.name, c.name, err, c.ok)
			}
		}
	}
}
