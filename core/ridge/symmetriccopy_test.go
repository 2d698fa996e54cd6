package ridge

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// denseOfSymmetric is mat.DenseCopyOf, bit for bit, for sizes around its tile, whatever lies in
// the unused lower triangle of the storage.
func TestDenseOfSymmetric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 5, 63, 64, 65, 130} {
		data := make([]float64, n*n)
		for i := range data {
			data[i] = r.NormFloat64()
		}
		a := mat.NewSymDense(n, data)
		if got, want := denseOfSymmetric(a), mat.DenseCopyOf(a); !mat.Equal(got, want) {
			t.Fatalf("n = %d: the copy differs from mat.DenseCopyOf", n)
		}
	}
}
