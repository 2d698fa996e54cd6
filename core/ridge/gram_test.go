package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The training Gram matrix built from its lower triangle, plus the intercept's shift, must equal,
// bit for bit, the one computed row against row plus the shift, for every kernel and for sizes
// around the block of rows, and the scale returned must be its largest |K_ij|; a non-finite
// entry makes the scale NaN.
func TestGramSymmetricBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	kernels := []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3},
		{Kind: kernel.Poly, Gamma: 0.5, Coef0: 1, Degree: 3}}
	for _, m := range []int{1, 2, 127, 128, 129, 300} {
		X := mat.NewDense(m, 7, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < 7; j++ {
				X.Set(i, j, r.NormFloat64())
			}
		}
		for _, k := range kernels {
			for _, shift := range []float64{0, 1} {
				want := mat.NewDense(m, m, nil)
				k.GramX(want, xmat.Matrix{Dense: X}, xmat.Matrix{Dense: X}, nil)
				var top float64
				for i, v := range want.RawMatrix().Data {
					want.RawMatrix().Data[i] = v + shift
					top = math.Max(top, math.Abs(v+shift))
				}
				got := mat.NewDense(m, m, nil)
				scale, err := gramCancellable(k, got, xmat.Matrix{Dense: X}, shift, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !mat.Equal(got, want) {
					t.Errorf("%v, m = %d, shift %v: the Gram matrix from its lower triangle differs from the full one", k.Kind, m, shift)
				}
				if scale != top {
					t.Errorf("%v, m = %d, shift %v: scale %v, want %v", k.Kind, m, shift, scale, top)
				}
			}
		}
		// An overflowing entry in the first block of rows or in the last: the scale is NaN (a later
		// block's finite maximum replaced an earlier block's NaN).
		for _, row := range []int{0, m - 1} {
			Y := mat.DenseCopyOf(X)
			Y.Set(row, 0, 1e300)
			if scale, err := gramCancellable(kernels[0], mat.NewDense(m, m, nil), xmat.Matrix{Dense: Y}, 1, nil); err != nil || !math.IsNaN(scale) {
				t.Errorf("m = %d, row %d overflowing: scale %v, %v; want NaN", m, row, scale, err)
			}
		}
	}
	var stop cancel.Flag
	stop.Stop()
	X := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	if _, err := gramCancellable(kernels[1], mat.NewDense(3, 3, nil), xmat.Matrix{Dense: X}, 0, &stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("a set stop flag: err = %v, want ErrCancelled", err)
	}
}
