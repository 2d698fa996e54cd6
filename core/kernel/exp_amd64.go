package kernel

import "golang.org/x/sys/cpu"

// haveRBFKernel reports whether rbfRow4 may run: it needs AVX2 (for the 64-bit integer lanes and
// the gather of exp2Frac) and the operating system's support for the YMM registers.
var haveRBFKernel = cpu.X86.HasAVX2

// rbfRow4 is rbfRowGo on v[0:n] four values at a time, up to the first block of four with an
// argument below −708 or NaN; it returns how many values it wrote (exp_amd64.s).
//
//go:noescape
func rbfRow4(v, nb *float64, n int, args *[3][4]float64, consts *[12][4]uint64, tab *[256]uint64) int

// setHaveRBFKernel sets haveRBFKernel for tests that compare the two paths and returns its
// previous value.
func setHaveRBFKernel(v bool) bool {
	old := haveRBFKernel
	haveRBFKernel = v && cpu.X86.HasAVX2
	return old
}
