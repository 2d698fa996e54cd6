package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// AddRow and ColumnSums on strided views, against plain loops, whatever the number of threads
// (the sums in row order, bit for bit).
func TestAddRowAndColumnSums(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(27, 28))
	none := []float64{1, 2, 3}
	ColumnSums(none, blas64.General{Rows: 0, Cols: 3, Stride: 3})
	if none[0] != 0 || none[1] != 0 || none[2] != 0 {
		t.Errorf("the column sums of no rows are %v, want zeros", none)
	}
	for _, c := range []struct{ rows, cols int }{{1, 1}, {7, 5}, {700, 5}, {3000, 130}, {8200, 130}} {
		big := randDense(r, c.rows+1, c.cols+2)
		G := big.Slice(1, c.rows+1, 1, c.cols+1).(*mat.Dense)
		b := make([]float64, c.cols)
		want := make([]float64, c.cols)
		for a := range b {
			b[a] = r.NormFloat64()
			for i := 0; i < c.rows; i++ {
				want[a] += G.At(i, a)
			}
		}
		for _, threads := range []int{1, 2, 7} {
			parallel.SetThreads(threads)
			got := make([]float64, c.cols)
			ColumnSums(got, G.RawMatrix())
			for a := range got {
				if got[a] != want[a] {
					t.Fatalf("%v, %d threads: column %d sums to %v, want %v", c, threads, a, got[a], want[a])
				}
			}
		}
		before := mat.DenseCopyOf(big)
		AddRow(G.RawMatrix(), b)
		for i := 0; i <= c.rows; i++ {
			for j := 0; j < c.cols+2; j++ {
				want := before.At(i, j)
				if i > 0 && j > 0 && j <= c.cols {
					want += b[j-1]
				}
				if big.At(i, j) != want {
					t.Fatalf("%v: entry (%d, %d) of the view's parent is %v, want %v", c, i, j, big.At(i, j), want)
				}
			}
		}
	}
}
