package xmat

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Transpose copies every entry across its tiles, for shapes around the tile's side.
func TestTranspose(t *testing.T) {
	for _, s := range [][2]int{{1, 1}, {1, 70}, {31, 33}, {64, 65}, {100, 3}} {
		x := mat.NewDense(s[0], s[1], nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = float64(i)
		}
		if got := Transpose(x); !mat.Equal(got, x.T()) {
			t.Errorf("%v: Transpose differs from xᵀ", s)
		}
	}
}

// TransposeInto takes the first rows and columns of a larger x (a V without its intercept row),
// and refuses an x too small for dst.
func TestTransposeIntoCorner(t *testing.T) {
	x := mat.NewDense(40, 37, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = float64(i)
	}
	dst := mat.NewDense(35, 33, nil)
	TransposeInto(dst, x)
	if !mat.Equal(dst, x.Slice(0, 33, 0, 35).T()) {
		t.Error("TransposeInto differs from the transpose of x's corner")
	}
	defer func() {
		if recover() == nil {
			t.Error("TransposeInto into a dst larger than x transposed did not panic")
		}
	}()
	TransposeInto(mat.NewDense(38, 41, nil), x)
}
