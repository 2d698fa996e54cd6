package ridge

import (
	"math"
	"sync"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// TestRecycledCopiesChangeNothing: a linear CG fit whose copies of X (centred, grouped) come from
// buffers a previous user left full of NaN gives the model of a fit on fresh memory, bit for bit:
// every entry it reads, the grouped copy's padding included, is written first.
func TestRecycledCopiesChangeNothing(t *testing.T) {
	const m, n, d = 300, 10, 3 // 8 label sets: the grouped form
	sp, X, ys := largeMultilabel(m, n, d, 4)
	opt := baseOptions()
	opt.Solver = CG
	fit := func() *mat.Dense {
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		return md.Coef
	}
	want := fit()
	for range 4 {
		b := make([]float64, 1<<16)
		for i := range b {
			b[i] = math.NaN()
		}
		releaseFloats(b)
	}
	got := fit()
	if !mat.Equal(got, want) {
		t.Errorf("coefficients after recycled buffers differ: %v vs %v", mat.Formatted(got), mat.Formatted(want))
	}
}

// poisonScratch leaves buffers of at least n float64s full of NaN for the next scratchFloats.
func poisonScratch(n int) {
	for range 4 {
		b := make([]float64, n)
		for i := range b {
			b[i] = math.NaN()
		}
		releaseFloats(b)
	}
}

// TestRecycledKernelMatricesChangeNothing: the kernel fits' m×m matrices (the Gram matrix, the
// dual's factor) come from recycled buffers; fits after buffers full of NaN were left in the pool
// give the dual coefficients of fits on fresh memory, bit for bit, on dense and sparse inputs,
// through kernel CG and through the dual over the examples.
func TestRecycledKernelMatricesChangeNothing(t *testing.T) {
	defer func(old int) { cubeDualMode = old }(cubeDualMode)
	sp, _ := space.NewMultilabel(4)
	const m, n = 150, 6
	X, ys := synthetic(t, sp, m, n, 7)
	iters := map[int]int{}
	for _, kind := range []kernel.Kind{kernel.RBF, kernel.Poly} {
		for _, sparse := range []bool{false, true} {
			for _, mode := range []int{cubeDualNever, cubeDualAlways} {
				cubeDualMode = mode
				opt := baseOptions()
				opt.Alpha, opt.Solver = 0.01, CG
				opt.Kernel = kernel.Kernel{Kind: kind, Gamma: 0.3, Degree: 2, Coef0: 1}
				fit := func() *mat.Dense {
					var md *Model
					var err error
					if sparse {
						md, err = FitCSR(sp, xmat.FromDense(m, n, X), ys, nil, opt)
					} else {
						md, err = Fit(sp, X, m, n, ys, nil, opt)
					}
					if err != nil {
						t.Fatal(err)
					}
					iters[mode] = md.Result.Iterations
					return md.Dual
				}
				scratchPool = sync.Pool{}
				want := fit()
				poisonScratch(m * m)
				if got := fit(); !mat.Equal(got, want) {
					t.Errorf("mode %d, %v, sparse %v: dual coefficients after recycled buffers differ", mode, kind, sparse)
				}
				if mode == cubeDualAlways && kind == kernel.RBF && iters[cubeDualAlways] >= iters[cubeDualNever] {
					t.Errorf("%v, sparse %v: the dual took %d iterations, kernel CG %d: the dual's factor was not used",
						kind, sparse, iters[cubeDualAlways], iters[cubeDualNever])
				}
			}
		}
	}
}

// The exact solver's normal equations H and their scaled copy come from scratchFloats unzeroed
// (72 MB each at 3,010 unknowns, per partial_fit call): the solution, J and the condition estimate
// after NaN-filled buffers are left in the pool are bit-identical to those from fresh ones, with
// and without an intercept, and for a second chunk of partial_fit.
func TestRecycledNormalEquationsChangeNothing(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 80, 5
	X, ys := synthetic(t, sp, m, n, 8)
	for _, intercept := range []bool{false, true} {
		opt := baseOptions()
		opt.Solver, opt.Intercept = Exact, intercept
		fit := func() *Model {
			first, err := PartialFit(nil, sp, X[:40*n], 40, n, ys[:40*sp.Dim()], nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			md, err := PartialFit(first, sp, X[40*n:], 40, n, ys[40*sp.Dim():], nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			return md
		}
		unknowns := (n + 1) * sp.Dim()
		scratchPool = sync.Pool{}
		want := fit()
		poisonScratch(unknowns * unknowns)
		got := fit()
		if !mat.Equal(got.Coef, want.Coef) || got.Result != want.Result {
			t.Errorf("intercept %v: after recycled buffers %v, %+v; want %v, %+v", intercept,
				mat.Formatted(got.Coef), got.Result, mat.Formatted(want.Coef), want.Result)
		}
	}
}
