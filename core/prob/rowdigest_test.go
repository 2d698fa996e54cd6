package prob

import (
	"math"
	"testing"

	"github.com/combpred/combpred/core/xmat"
)

// TestRowDigest: a row's digest depends on its values only — not on its index, on dense or
// sparse storage, on explicit zeros or on the sign of a zero — and differs between rows that differ in one value or in where a value stands.
func TestRowDigest(t *testing.T) {
	dense := xmat.DenseRows([]float64{
		0, 1.5, 0, -2, // row 0
		1.5, 0, 0, -2, // the values of row 0 in other columns
		0, 1.5, 0, -2.0000000000000004, // one ulp off row 0
		math.Copysign(0, -1), 1.5, 0, -2, // row 0 with −0
		0, 1.5, 0, -2, // row 0 again
	}, 5, 4)
	d := func(i int) uint64 { return rowDigest(dense, i) }
	if d(0) != d(4) || d(0) != d(3) {
		t.Errorf("equal rows have digests %x, %x, %x", d(0), d(4), d(3))
	}
	if d(0) == d(1) || d(0) == d(2) {
		t.Errorf("different rows share a digest: %x %x %x", d(0), d(1), d(2))
	}
	// row 0 stored sparse, with an explicit zero
	sparse, err := xmat.New[int64](1, 4, []int64{0, 3}, []int64{1, 2, 3}, []float64{1.5, 0, -2})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowDigest(xmat.SparseRows(sparse), 0); got != d(0) {
		t.Errorf("sparse row 0: digest %x, dense %x", got, d(0))
	}
	wider := xmat.DenseRows([]float64{0, 1.5, 0, -2, 0}, 1, 5)
	if rowDigest(wider, 0) == d(0) {
		t.Error("rows of different widths share a digest")
	}
}
