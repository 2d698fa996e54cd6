//go:build !amd64

package gemm

// haveFMA is false where no vector kernel exists: mulTile then runs its portable loop.
const haveFMA = false

func fmaRows8(c, k *float64, stride, n int, a *[8]float64) {
	panic("gemm: fmaRows8 called without a vector kernel")
}

func setHaveFMA(bool) bool { return false }

func dot2x6(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64) {
	panic("gemm: dot2x6 called without a vector kernel")
}

func dot4x6z(x *float64, xStride int, b *float64, bStride, n, maskBits int, out *[24]float64) {
	panic("gemm: dot4x6z called without a vector kernel")
}

func dot4x6y(x *float64, xStride int, b *float64, bStride, n, maskBits int, out *[24]float64) {
	panic("gemm: dot4x6y called without a vector kernel")
}

func fma4x12(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64) {
	panic("gemm: fma4x12 called without a vector kernel")
}

func fma4x8(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64) {
	panic("gemm: fma4x8 called without a vector kernel")
}

func fma4x4(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64) {
	panic("gemm: fma4x4 called without a vector kernel")
}

func axpy4(c *float64, k *[4]*float64, a *[4]float64, n int) {
	panic("gemm: axpy4 called without a vector kernel")
}

func axpy1(c, k *float64, a float64, n int) {
	panic("gemm: axpy1 called without a vector kernel")
}

// haveAVX512 is false where no vector kernel exists.
const haveAVX512 = false

func setHaveAVX512(bool) bool { return false }

func fma4x24(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64) {
	panic("gemm: fma4x24 called without a vector kernel")
}

func fma4x16m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64) {
	panic("gemm: fma4x16m called without a vector kernel")
}

func fma4x8m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64) {
	panic("gemm: fma4x8m called without a vector kernel")
}

func fma8x16m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64) {
	panic("gemm: fma8x16m called without a vector kernel")
}

func fma8x8m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64) {
	panic("gemm: fma8x8m called without a vector kernel")
}

func fma4x24m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64) {
	panic("gemm: fma4x24m called without a vector kernel")
}

func dot2x6z(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64) {
	panic("gemm: dot2x6z called without a vector kernel")
}

func dot1x12(a, b *float64, stride, n int, mask *[4]uint64, out *[12]float64) {
	panic("gemm: dot1x12 called without a vector kernel")
}

func fmaRowsSpan(c, k *float64, stride, groups int, x *float64, masks *[4][4]uint64) {
	panic("gemm: fmaRowsSpan called without a vector kernel")
}

func dotRows4(x *[4]*float64, b *float64, n int, out *[4]float64) {
	panic("gemm: dotRows4 called without a vector kernel")
}

func fma1x64(a *float64, aStep int, b *float64, bStep, n int, c *float64, init *float64) {
	panic("gemm: fma1x64 called without a vector kernel")
}

func prefetchRows(p *float64, stride, rows, lines int) {}
