//go:build !amd64

package gemm

func dot2x6(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64) {
	panic("gemm: dot2x6 called without a vector kernel")
}
