package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Axpy and Axpy4 equal their definitions at every length around the kernels' blocks of 4 and
// 16, with and without the vector kernels, and touch nothing past dst.
func TestAxpy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vec := func(n int) []float64 { return randVec(r, n) }
	for _, fma := range []bool{true, false} {
		old := setHaveFMA(fma)
		for n := 0; n <= 37; n++ {
			t.Run(fmt.Sprintf("fma=%v/n=%d", fma, n), func(t *testing.T) {
				x := [4][]float64{vec(n + 3), vec(n + 3), vec(n + 3), vec(n + 3)}
				a := [4]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
				base := vec(n + 2)
				got1, got4 := append([]float64(nil), base...), append([]float64(nil), base...)
				Axpy(got1[:n], a[0], x[0])
				Axpy4(got4[:n], &a, x[0], x[1], x[2], x[3])
				for j := 0; j < n+2; j++ {
					want1, want4 := base[j], base[j]
					if j < n {
						want1 += a[0] * x[0][j]
						want4 += a[0]*x[0][j] + a[1]*x[1][j] + a[2]*x[2][j] + a[3]*x[3][j]
					}
					if math.Abs(got1[j]-want1) > 1e-14*(1+math.Abs(want1)) {
						t.Errorf("Axpy entry %d: %v, want %v", j, got1[j], want1)
					}
					if math.Abs(got4[j]-want4) > 1e-13*(1+math.Abs(want4)) {
						t.Errorf("Axpy4 entry %d: %v, want %v", j, got4[j], want4)
					}
				}
			})
		}
		setHaveFMA(old)
	}
}

// randVec returns n standard normal values.
func randVec(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}
