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
