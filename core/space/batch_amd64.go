package space

import "golang.org/x/sys/cpu"

// haveBatch reports whether the batched exact decoders may run: their kernels need AVX2 and the
// bit-manipulation instructions TZCNT, BLSR, BZHI and SHLX (BMI1, BMI2).
var haveBatch = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// setHaveBatch sets haveBatch (true only where the machine has the instructions), for tests of
// the portable decoders, and returns its previous value.
func setHaveBatch(v bool) bool {
	old := haveBatch
	haveBatch = v && cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2
	return old
}

// permDP4 fills the subset DP of permDecodeBatch for four rows (batch_amd64.s).
//
//go:noescape
func permDP4(dp, lo, hi *float64, n, h int)

// cycleDP4 fills the Held–Karp paths from start vertex s of cycleDecodeBatch for four rows and
// raises their best closed cycles (batch_amd64.s).
//
//go:noescape
func cycleDP4(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64)

// permDP1 is permDP4 on a single row (Decode).
//
//go:noescape
func permDP1(dp, lo, hi *float64, n, h int)

// cycleDP1 is cycleDP4 on a single row (Decode); it reads and raises only best[0] and at[0].
//
//go:noescape
func cycleDP1(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64)
