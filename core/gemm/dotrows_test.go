package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// DotRows4 equals the four dot products at every length around the kernel's blocks of 4 and 8,
// with and without the vector kernel, and reads nothing past b's length in the rows.
func TestDotRows4(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, fma := range []bool{true, false} {
		old := setHaveFMA(fma)
		for n := 0; n <= 37; n++ {
			t.Run(fmt.Sprintf("fma=%v/n=%d", fma, n), func(t *testing.T) {
				b := randVec(r, n)
				var x [4][]float64
				for i := range x {
					// A NaN past the end would poison the sum if the kernel read it.
					x[i] = append(randVec(r, n), math.NaN())
				}
				got := DotRows4(x[0], x[1], x[2], x[3], b)
				for i := range x {
					var want, scale float64
					for j := range b {
						want += x[i][j] * b[j]
						scale += math.Abs(x[i][j] * b[j])
					}
					if math.Abs(got[i]-want) > 1e-14*(1+scale) {
						t.Errorf("row %d: %v, want %v", i, got[i], want)
					}
				}
			})
		}
		setHaveFMA(old)
	}
}

func BenchmarkDotRows4(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 104
	x := [4][]float64{randVec(r, n), randVec(r, n), randVec(r, n), randVec(r, n)}
	v := x[3]
	var sink float64
	for range b.N {
		out := DotRows4(x[0], x[1], x[2], x[3], v)
		sink += out[0]
	}
	b.ReportMetric(8*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	_ = sink
}
