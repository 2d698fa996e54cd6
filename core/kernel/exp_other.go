//go:build !amd64

package kernel

// haveRBFKernel is false where no vector kernel exists: rbfRow runs rbfRowGo.
const haveRBFKernel = false

func rbfRow4(v, nb *float64, n int, args *[3][4]float64, consts *[12][4]uint64, tab *[256]uint64) int {
	panic("kernel: rbfRow4 called without a vector kernel")
}

func setHaveRBFKernel(bool) bool { return false }
