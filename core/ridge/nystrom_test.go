package ridge

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// With every training input as a landmark, the Nyström model is the kernel model: same scores on
// new inputs, to the accuracy of the solvers and the factorisation's floor.
func TestNystromAllLandmarksEqualsKernelModel(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n, q = 70, 3, 25
	X, ys := synthetic(t, sp, m, n, 14)
	Xt, _ := synthetic(t, sp, q, n, 15)
	for _, k := range []kernel.Kernel{{Kind: kernel.RBF, Gamma: 0.4}, {Kind: kernel.Poly, Gamma: 0.3, Degree: 2, Coef0: 1}} {
		for _, intercept := range []bool{true, false} {
			opt := baseOptions()
			opt.Kernel, opt.Intercept, opt.Tol = k, intercept, 1e-12
			full := mustFit(t, sp, X, m, n, ys, nil, opt)
			opt.NComponents = m
			ny := mustFit(t, sp, X, m, n, ys, nil, opt)
			// a row's scoring work counts the triangle's k² as well as its kernel row: chunks of a
			// map of 3,000 components ran 0.8 s between two looks at Ctrl-C (probe DH)
			if c := float64(ny.Components()); ny.ScoreWork() != c*(n+4+c/16) {
				t.Errorf("ScoreWork %g, want k·(n + d + k/16) = %g", ny.ScoreWork(), c*(n+4+c/16))
			}
			u1, u2 := make([]float64, q*4), make([]float64, q*4)
			_ = full.Decision(Xt, q, n, u1)
			_ = ny.Decision(Xt, q, n, u2)
			a, b := mat.NewDense(q, 4, u1), mat.NewDense(q, 4, u2)
			diff := maxAbsDiff(a, b) / math.Max(1, maxAbs(a))
			t.Logf("%v intercept=%v: %d components, scores differ by %.3g, J %.12g and %.12g", k.Kind, intercept,
				ny.Components(), diff, full.Result.Objective, ny.Result.Objective)
			if diff > 1e-6 || math.Abs(full.Result.Objective-ny.Result.Objective) > 1e-8*full.Result.Objective {
				t.Errorf("%v intercept=%v: Nyström scores differ from the kernel model's by %.3g", k.Kind, intercept, diff)
			}
		}
	}
}

// A kernel that overflows at the landmarks is named as the exact kernel model names it, with the
// entry and the parameters, not reported as a Gram matrix the factorisation cannot take.
func TestNystromKernelOverflow(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 30, 2
	X, ys := synthetic(t, sp, m, n, 16)
	for i := range X {
		X[i] *= 1e100
	}
	for _, nc := range []int{0, 10} {
		opt := baseOptions()
		opt.Kernel, opt.NComponents = kernel.Kernel{Kind: kernel.Poly, Gamma: 0.5, Degree: 3, Coef0: 1}, nc
		_, err := Fit(sp, X, m, n, ys, nil, opt)
		if err == nil || !strings.Contains(err.Error(), "kernel=poly overflows: K[") {
			t.Errorf("n_components=%d: err = %v, want the kernel's overflow named", nc, err)
		}
	}
}

// Landmarks are drawn without replacement with the seed; a warm start on the same data reuses the
// map of Init.
func TestNystromLandmarks(t *testing.T) {
	idx := NystromLandmarks(100, 30, 7)
	seen := map[int]bool{}
	for i, v := range idx {
		if v < 0 || v >= 100 || seen[v] || (i > 0 && v <= idx[i-1]) {
			t.Fatalf("landmarks %v are not distinct sorted rows", idx)
		}
		seen[v] = true
	}
	if other := NystromLandmarks(100, 30, 8); slices.Equal(idx, other) {
		t.Errorf("seeds 7 and 8 drew the same landmarks")
	}
	if all := NystromLandmarks(10, 30, 7); len(all) != 10 {
		t.Errorf("30 landmarks of 10 rows: got %d", len(all))
	}
	sp, _ := space.NewMultilabel(3)
	X, ys := synthetic(t, sp, 80, 3, 2)
	opt := baseOptions()
	opt.Kernel, opt.NComponents, opt.Solver, opt.Seed = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}, 20, CG, 3
	a, _ := Fit(sp, X, 80, 3, ys, nil, opt)
	opt.Init = a
	b, _ := Fit(sp, X, 80, 3, ys, nil, opt)
	if b.ny != a.ny || b.Result.Iterations > 1 {
		t.Errorf("warm start: map reused %v, %d iterations", b.ny == a.ny, b.Result.Iterations)
	}
}

// TestNystromLarge fits an rbf model on 100,000 examples through a 300-component map, which the
// kernel expansion could not (its Gram matrix would take 80 GB).
func TestNystromLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large fit")
	}
	const m, n = 100000, 20
	sp, X, ys := largeMultilabel(m, n, 5, 31)
	opt := baseOptions()
	opt.Alpha, opt.Tol = 1, 1e-6
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 1.0 / n}
	opt.NComponents = 300
	runtime.GC()
	t0 := time.Now()
	md := mustFit(t, sp, X, m, n, ys, nil, opt)
	elapsed := time.Since(t0)
	U := make([]float64, 1000*5)
	t1 := time.Now()
	if err := md.Decision(X[:1000*n], 1000, n, U); err != nil {
		t.Fatal(err)
	}
	t.Logf("rbf, %d×%d, %d components on %d threads: fit %v (%d CG iterations, relative gradient %.2g), 1000 predictions %v",
		m, n, md.Components(), runtime.GOMAXPROCS(0), elapsed, md.Result.Iterations, md.Result.RelGrad, time.Since(t1))
	if !md.Result.Converged {
		t.Errorf("did not converge")
	}
}
