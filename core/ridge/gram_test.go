package ridge

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The training Gram matrix built from its lower triangle must equal, bit for bit, the one computed
// row against row, for every kernel and for sizes around the block of rows.
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
			want := mat.NewDense(m, m, nil)
			k.GramX(want, xmat.Matrix{Dense: X}, xmat.Matrix{Dense: X}, nil)
			got := mat.NewDense(m, m, nil)
			if err := gramCancellable(k, got, xmat.Matrix{Dense: X}, nil); err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(got, want) {
				t.Errorf("%v, m = %d: the Gram matrix from its lower triangle differs from the full one", k.Kind, m)
			}
		}
	}
	var stop cancel.Flag
	stop.Stop()
	X := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	if err := gramCancellable(kernels[1], mat.NewDense(3, 3, nil), xmat.Matrix{Dense: X}, &stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("a set stop flag: err = %v, want ErrCancelled", err)
	}
}
