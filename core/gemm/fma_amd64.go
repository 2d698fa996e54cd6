package gemm

import "golang.org/x/sys/cpu"

// haveFMA reports whether fmaRows8 may run: it needs AVX2 and FMA3 (and the operating system's
// support for the YMM registers, which package cpu checks).
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// fmaRows8 adds to c[0:n] the combination Σ_t a[t]·k[t·stride : t·stride+n] of eight rows of B,
// in the order fma_amd64.s spells out; n must be a multiple of 4.
//
//go:noescape
func fmaRows8(c, k *float64, stride, n int, a *[8]float64)

// haveAVX512 reports whether the 512-bit kernels may run (with haveFMA): AVX-512F and VL (dot4x6z
// keeps 256-bit sums in the upper sixteen registers), with the operating system's support for its
// registers, which package cpu checks. Zen 5 executes them at twice the AVX2 rate (175 against 88
// GFLOP/s per core, measured in issue 18's audit).
var haveAVX512 = haveFMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// setHaveAVX512 sets haveAVX512 for tests that compare the two paths and returns its previous value.
func setHaveAVX512(v bool) bool {
	old := haveAVX512
	haveAVX512 = v && haveFMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL
	return old
}

// setHaveFMA sets haveFMA for tests that compare the two paths and returns its previous value.
func setHaveFMA(v bool) bool {
	old := haveFMA
	haveFMA = v && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	return old
}

// axpy4 and axpy1 are Axpy4's and Axpy's kernels (axpy_amd64.s); n must be a multiple of 4.
//
//go:noescape
func axpy4(c *float64, k *[4]*float64, a *[4]float64, n int)

//go:noescape
func axpy1(c, k *float64, a float64, n int)

// fmaRowsSpan does fmaRows8's arithmetic for groups consecutive groups of eight rows of B on one
// row c of C, 16 columns wide (those masks selects), keeping c in registers (fma_amd64.s).
//
//go:noescape
func fmaRowsSpan(c, k *float64, stride, groups int, x *float64, masks *[4][4]uint64)

// dotRows4 is DotRows4's kernel (dotrows_amd64.s); n must be a multiple of 4.
//
//go:noescape
func dotRows4(x *[4]*float64, b *float64, n int, out *[4]float64)
