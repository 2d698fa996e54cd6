//go:build !amd64

package gemm

// haveFMA is false where no vector kernel exists: mulTile then runs its portable loop.
const haveFMA = false

func fmaRows8(c, k *float64, stride, n int, a *[8]float64) {
	panic("gemm: fmaRows8 called without a vector kernel")
}

func setHaveFMA(bool) bool { return false }
