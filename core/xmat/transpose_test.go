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
