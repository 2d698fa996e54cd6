#include "textflag.h"
#include "panel_amd64.h"

// The eight-row panel kernels: fma4x16m and fma4x8m on eight rows of A at once. A block of four
// rows by at most 16 columns holds eight or four accumulators, fewer than the two FMA pipes need
// in flight over the instruction's latency (eight), so those kernels waited on their own sums:
// 54 GFLOP/s in cache at 14 columns on a Zen 5 core against fma4x24's 81. Eight rows double the
// independent sums for the same loads of B.

// PANEL8_A loads what walks the terms: the eight rows of A (SI, DI, R8, R9, R13, BX, DX, AX),
// their step in bytes (R10), B (R11) and its row step in bytes (R12). AX, which points at a, is
// loaded last.
#define PANEL8_A \
	MOVQ a+0(FP), AX; \
	MOVQ 0(AX), SI; \
	MOVQ 8(AX), DI; \
	MOVQ 16(AX), R8; \
	MOVQ 24(AX), R9; \
	MOVQ 32(AX), R13; \
	MOVQ 40(AX), BX; \
	MOVQ 48(AX), DX; \
	MOVQ 56(AX), AX; \
	MOVQ aStep+8(FP), R10; \
	SHLQ $3, R10; \
	MOVQ b+16(FP), R11; \
	MOVQ bStep+24(FP), R12; \
	SHLQ $3, R12

// PANEL8_CADENCE sets R14 to 7 where A's rows are contiguous (aStep 1), so that they are asked
// for once every eight terms, a cache line of each; to 0 otherwise (a transposed operand, read in
// place or packed, whose rows' values of a term are neighbours: four prefetches every term cover
// both groups of four).
#define PANEL8_CADENCE \
	XORQ R14, R14; \
	CMPQ R10, $8; \
	JNE  2(PC); \
	MOVQ $7, R14

// PANEL8_PREFETCH asks for A's rows 4096 bytes ahead (PANEL_PREFETCH), as PANEL8_CADENCE says.
#define PANEL8_PREFETCH(skip, four) \
	TESTQ R14, CX; \
	JNZ  skip; \
	TESTQ R14, R14; \
	JZ   four; \
	PREFETCHT0 4096(SI); \
	PREFETCHT0 4096(DI); \
	PREFETCHT0 4096(R8); \
	PREFETCHT0 4096(R9); \
	PREFETCHT0 4096(R13); \
	PREFETCHT0 4096(BX); \
	PREFETCHT0 4096(DX); \
	PREFETCHT0 4096(AX); \
	JMP  skip; \
four: \
	PREFETCHT0 4096(SI); \
	PREFETCHT0 4096(R9); \
	PREFETCHT0 4096(R13); \
	PREFETCHT0 4096(AX); \
skip:

// PANEL8_NEXT moves the rows of A and B on to the next term and counts it down (CX).
#define PANEL8_NEXT \
	ADDQ R10, SI; \
	ADDQ R10, DI; \
	ADDQ R10, R8; \
	ADDQ R10, R9; \
	ADDQ R10, R13; \
	ADDQ R10, BX; \
	ADDQ R10, DX; \
	ADDQ R10, AX; \
	ADDQ R12, R11; \
	DECQ CX

// LOAD16M(k, lo, hi) loads row k of the block of C (c[k]) into lo and, masked, hi.
#define LOAD16M(k, lo, hi) \
	MOVQ (8*k)(CX), R10; \
	VMOVUPD 0(R10), lo; \
	VMOVUPD.Z 64(R10), K1, hi

// STORE16M(k, lo, hi) stores lo and, masked, hi into row k of the block of C.
#define STORE16M(k, lo, hi) \
	MOVQ (8*k)(CX), R10; \
	VMOVUPD lo, 0(R10); \
	VMOVUPD hi, K1, 64(R10)

// TERM16M(row, t, lo, hi) adds the term to one row: its value of A, broadcast into t, times B's
// row in Z16 and Z17.
#define TERM16M(row, t, lo, hi) \
	VBROADCASTSD (row), t; \
	VFMADD231PD Z16, t, lo; \
	VFMADD231PD Z17, t, hi

// func fma8x16m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64)
//
// fma4x16m on eight rows: c_r[0:16] += Σ_l a_r[l·aStep]·b[l·bStep : l·bStep+16] for the eight rows
// r and 0 ≤ l < n, each term a fused multiply–add in order of l (every entry of C gets the same
// operations as under fma4x16m and fma4x24), the block in sixteen registers throughout; the second
// register of each row holds the columns 8.. that mask selects, whose other lanes of b, c and
// init are neither read nor written; init as in fma4x24.
TEXT ·fma8x16m(SB), NOSPLIT, $0-64
	PANEL_MASK
	MOVQ c+40(FP), CX
	MOVQ init+48(FP), R14
	TESTQ R14, R14
	JNZ  init816
	LOAD16M(0, Z0, Z1)
	LOAD16M(1, Z2, Z3)
	LOAD16M(2, Z4, Z5)
	LOAD16M(3, Z6, Z7)
	LOAD16M(4, Z8, Z9)
	LOAD16M(5, Z10, Z11)
	LOAD16M(6, Z12, Z13)
	LOAD16M(7, Z14, Z15)
	JMP  sum816

init816:
	VMOVUPD 0(R14), Z0
	VMOVUPD.Z 64(R14), K1, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z1, Z3
	VMOVAPD Z0, Z4
	VMOVAPD Z1, Z5
	VMOVAPD Z0, Z6
	VMOVAPD Z1, Z7
	VMOVAPD Z0, Z8
	VMOVAPD Z1, Z9
	VMOVAPD Z0, Z10
	VMOVAPD Z1, Z11
	VMOVAPD Z0, Z12
	VMOVAPD Z1, Z13
	VMOVAPD Z0, Z14
	VMOVAPD Z1, Z15

sum816:
	PANEL8_A
	PANEL8_CADENCE
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store816

loop816:
	PANEL8_PREFETCH(terms816, four816)
	VMOVUPD 0(R11), Z16
	VMOVUPD.Z 64(R11), K1, Z17
	TERM16M(SI, Z18, Z0, Z1)
	TERM16M(DI, Z19, Z2, Z3)
	TERM16M(R8, Z20, Z4, Z5)
	TERM16M(R9, Z21, Z6, Z7)
	TERM16M(R13, Z22, Z8, Z9)
	TERM16M(BX, Z23, Z10, Z11)
	TERM16M(DX, Z24, Z12, Z13)
	TERM16M(AX, Z25, Z14, Z15)
	PANEL8_NEXT
	JNZ  loop816

store816:
	MOVQ c+40(FP), CX
	STORE16M(0, Z0, Z1)
	STORE16M(1, Z2, Z3)
	STORE16M(2, Z4, Z5)
	STORE16M(3, Z6, Z7)
	STORE16M(4, Z8, Z9)
	STORE16M(5, Z10, Z11)
	STORE16M(6, Z12, Z13)
	STORE16M(7, Z14, Z15)
	VZEROUPPER
	RET

// LOAD8M(k, z) loads row k of the block of C (c[k]), masked, into z.
#define LOAD8M(k, z) \
	MOVQ (8*k)(CX), R10; \
	VMOVUPD.Z 0(R10), K1, z

// STORE8M(k, z) stores z, masked, into row k of the block of C.
#define STORE8M(k, z) \
	MOVQ (8*k)(CX), R10; \
	VMOVUPD z, K1, 0(R10)

// TERM8M(row, t, acc) adds the term to one row: its value of A, broadcast into t, times B's row
// in Z16.
#define TERM8M(row, t, acc) \
	VBROADCASTSD (row), t; \
	VFMADD231PD Z16, t, acc

// func fma8x8m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64)
//
// fma4x8m on eight rows: one register a row holding the columns that mask selects (bit k: column
// k), the other lanes of b, c and init neither read nor written; the sums as fma8x16m's.
TEXT ·fma8x8m(SB), NOSPLIT, $0-64
	PANEL_MASK
	MOVQ c+40(FP), CX
	MOVQ init+48(FP), R14
	TESTQ R14, R14
	JNZ  init88
	LOAD8M(0, Z0)
	LOAD8M(1, Z1)
	LOAD8M(2, Z2)
	LOAD8M(3, Z3)
	LOAD8M(4, Z4)
	LOAD8M(5, Z5)
	LOAD8M(6, Z6)
	LOAD8M(7, Z7)
	JMP  sum88

init88:
	VMOVUPD.Z 0(R14), K1, Z0
	VMOVAPD Z0, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z0, Z3
	VMOVAPD Z0, Z4
	VMOVAPD Z0, Z5
	VMOVAPD Z0, Z6
	VMOVAPD Z0, Z7

sum88:
	PANEL8_A
	PANEL8_CADENCE
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store88

loop88:
	PANEL8_PREFETCH(terms88, four88)
	VMOVUPD.Z 0(R11), K1, Z16
	TERM8M(SI, Z18, Z0)
	TERM8M(DI, Z19, Z1)
	TERM8M(R8, Z20, Z2)
	TERM8M(R9, Z21, Z3)
	TERM8M(R13, Z22, Z4)
	TERM8M(BX, Z23, Z5)
	TERM8M(DX, Z24, Z6)
	TERM8M(AX, Z25, Z7)
	PANEL8_NEXT
	JNZ  loop88

store88:
	MOVQ c+40(FP), CX
	STORE8M(0, Z0)
	STORE8M(1, Z1)
	STORE8M(2, Z2)
	STORE8M(3, Z3)
	STORE8M(4, Z4)
	STORE8M(5, Z5)
	STORE8M(6, Z6)
	STORE8M(7, Z7)
	VZEROUPPER
	RET
