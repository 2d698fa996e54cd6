#include "textflag.h"
#include "panel_amd64.h"

// TERM24 adds one term to a block of four rows by 24 columns (Z0–Z11, three registers a row):
// the term's row of B in Z12–Z14 times each row's value of A, broadcast.
#define TERM24 \
	VBROADCASTSD (SI), Z15; \
	VFMADD231PD Z12, Z15, Z0; \
	VFMADD231PD Z13, Z15, Z1; \
	VFMADD231PD Z14, Z15, Z2; \
	VBROADCASTSD (DI), Z16; \
	VFMADD231PD Z12, Z16, Z3; \
	VFMADD231PD Z13, Z16, Z4; \
	VFMADD231PD Z14, Z16, Z5; \
	VBROADCASTSD (R8), Z17; \
	VFMADD231PD Z12, Z17, Z6; \
	VFMADD231PD Z13, Z17, Z7; \
	VFMADD231PD Z14, Z17, Z8; \
	VBROADCASTSD (R9), Z18; \
	VFMADD231PD Z12, Z18, Z9; \
	VFMADD231PD Z13, Z18, Z10; \
	VFMADD231PD Z14, Z18, Z11

// INIT24 starts the rows 1–3 of a 24-column block from row 0's start (Z0–Z2, loaded from init).
#define INIT24 \
	VMOVAPD Z0, Z3; \
	VMOVAPD Z1, Z4; \
	VMOVAPD Z2, Z5; \
	VMOVAPD Z0, Z6; \
	VMOVAPD Z1, Z7; \
	VMOVAPD Z2, Z8; \
	VMOVAPD Z0, Z9; \
	VMOVAPD Z1, Z10; \
	VMOVAPD Z2, Z11

// func fma4x24(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64)
//
// fma4x12 on 512-bit registers: c_r[0:24] += Σ_l a_r[l·aStep]·b[l·bStep : l·bStep+24] for the four
// rows r and 0 ≤ l < n, each term a fused multiply–add in order of l (so every entry of C gets the
// same operations as under fma4x12), the block of c held in twelve registers throughout; init
// as in fma4x12.
TEXT ·fma4x24(SB), NOSPLIT, $0-56
	PANEL_A
	PANEL_C
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init24
	VMOVUPD 0(R13), Z0
	VMOVUPD 64(R13), Z1
	VMOVUPD 128(R13), Z2
	VMOVUPD 0(BX), Z3
	VMOVUPD 64(BX), Z4
	VMOVUPD 128(BX), Z5
	VMOVUPD 0(DX), Z6
	VMOVUPD 64(DX), Z7
	VMOVUPD 128(DX), Z8
	VMOVUPD 0(AX), Z9
	VMOVUPD 64(AX), Z10
	VMOVUPD 128(AX), Z11
	JMP  sum24

init24:
	VMOVUPD 0(CX), Z0
	VMOVUPD 64(CX), Z1
	VMOVUPD 128(CX), Z2
	INIT24

sum24:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store24

loop24:
	PANEL_PREFETCH
	VMOVUPD 0(R11), Z12
	VMOVUPD 64(R11), Z13
	VMOVUPD 128(R11), Z14
	TERM24
	PANEL_NEXT
	JNZ  loop24

store24:
	VMOVUPD Z0, 0(R13)
	VMOVUPD Z1, 64(R13)
	VMOVUPD Z2, 128(R13)
	VMOVUPD Z3, 0(BX)
	VMOVUPD Z4, 64(BX)
	VMOVUPD Z5, 128(BX)
	VMOVUPD Z6, 0(DX)
	VMOVUPD Z7, 64(DX)
	VMOVUPD Z8, 128(DX)
	VMOVUPD Z9, 0(AX)
	VMOVUPD Z10, 64(AX)
	VMOVUPD Z11, 128(AX)
	VZEROUPPER
	RET

// func fma4x16m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)
//
// fma4x24 on 9–16 columns: the block of c in eight registers, the second of each row's two
// holding the columns 8.. that mask selects (bit k: column 8 + k). The masked lanes of b, c and
// init are never read (zeroing loads: nothing past the block is touched) and never written.
TEXT ·fma4x16m(SB), NOSPLIT, $0-64
	PANEL_A
	PANEL_MASK
	PANEL_C
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init16
	VMOVUPD 0(R13), Z0
	VMOVUPD.Z 64(R13), K1, Z1
	VMOVUPD 0(BX), Z2
	VMOVUPD.Z 64(BX), K1, Z3
	VMOVUPD 0(DX), Z4
	VMOVUPD.Z 64(DX), K1, Z5
	VMOVUPD 0(AX), Z6
	VMOVUPD.Z 64(AX), K1, Z7
	JMP  sum16

init16:
	VMOVUPD 0(CX), Z0
	VMOVUPD.Z 64(CX), K1, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z1, Z3
	VMOVAPD Z0, Z4
	VMOVAPD Z1, Z5
	VMOVAPD Z0, Z6
	VMOVAPD Z1, Z7

sum16:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store16

loop16:
	PANEL_PREFETCH
	VMOVUPD 0(R11), Z12
	VMOVUPD.Z 64(R11), K1, Z13
	VBROADCASTSD (SI), Z15
	VFMADD231PD Z12, Z15, Z0
	VFMADD231PD Z13, Z15, Z1
	VBROADCASTSD (DI), Z16
	VFMADD231PD Z12, Z16, Z2
	VFMADD231PD Z13, Z16, Z3
	VBROADCASTSD (R8), Z17
	VFMADD231PD Z12, Z17, Z4
	VFMADD231PD Z13, Z17, Z5
	VBROADCASTSD (R9), Z18
	VFMADD231PD Z12, Z18, Z6
	VFMADD231PD Z13, Z18, Z7
	PANEL_NEXT
	JNZ  loop16

store16:
	VMOVUPD Z0, 0(R13)
	VMOVUPD Z1, K1, 64(R13)
	VMOVUPD Z2, 0(BX)
	VMOVUPD Z3, K1, 64(BX)
	VMOVUPD Z4, 0(DX)
	VMOVUPD Z5, K1, 64(DX)
	VMOVUPD Z6, 0(AX)
	VMOVUPD Z7, K1, 64(AX)
	VZEROUPPER
	RET

// func fma4x24m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)
//
// fma4x24 on 17–24 columns: the third register of each row holds the columns 16.. that mask
// selects (bit k: column 16 + k), read and written as fma4x16m's second.
TEXT ·fma4x24m(SB), NOSPLIT, $0-64
	PANEL_A
	PANEL_MASK
	PANEL_C
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init24m
	VMOVUPD 0(R13), Z0
	VMOVUPD 64(R13), Z1
	VMOVUPD.Z 128(R13), K1, Z2
	VMOVUPD 0(BX), Z3
	VMOVUPD 64(BX), Z4
	VMOVUPD.Z 128(BX), K1, Z5
	VMOVUPD 0(DX), Z6
	VMOVUPD 64(DX), Z7
	VMOVUPD.Z 128(DX), K1, Z8
	VMOVUPD 0(AX), Z9
	VMOVUPD 64(AX), Z10
	VMOVUPD.Z 128(AX), K1, Z11
	JMP  sum24m

init24m:
	VMOVUPD 0(CX), Z0
	VMOVUPD 64(CX), Z1
	VMOVUPD.Z 128(CX), K1, Z2
	INIT24

sum24m:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store24m

loop24m:
	PANEL_PREFETCH
	VMOVUPD 0(R11), Z12
	VMOVUPD 64(R11), Z13
	VMOVUPD.Z 128(R11), K1, Z14
	TERM24
	PANEL_NEXT
	JNZ  loop24m

store24m:
	VMOVUPD Z0, 0(R13)
	VMOVUPD Z1, 64(R13)
	VMOVUPD Z2, K1, 128(R13)
	VMOVUPD Z3, 0(BX)
	VMOVUPD Z4, 64(BX)
	VMOVUPD Z5, K1, 128(BX)
	VMOVUPD Z6, 0(DX)
	VMOVUPD Z7, 64(DX)
	VMOVUPD Z8, K1, 128(DX)
	VMOVUPD Z9, 0(AX)
	VMOVUPD Z10, 64(AX)
	VMOVUPD Z11, K1, 128(AX)
	VZEROUPPER
	RET

// func fma1x64(a *float64, aStep int, b *float64, bStep, n int, c *float64, init *float64)
//
// fma4x24 for a single row of A on 64 columns: c[0:64] += Σ_l a[l·aStep]·b[l·bStep : l·bStep+64],
// each term a fused multiply–add in order of l (the operations fma4x24 gives every entry), the
// block of c in eight registers; init as in fma4x24. A lone row (a single prediction's kernel
// row) ran fma4x24 with the row repeated four times, three quarters of its work thrown away,
// and twelve registers of one row would leave each sum waiting on its previous term's latency:
// eight independent sums keep both multiply–add units busy.
TEXT ·fma1x64(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ aStep+8(FP), R10
	SHLQ $3, R10
	MOVQ b+16(FP), R11
	MOVQ bStep+24(FP), R12
	SHLQ $3, R12
	MOVQ c+40(FP), R13
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init64
	MOVQ R13, CX

init64:
	VMOVUPD 0(CX), Z0
	VMOVUPD 64(CX), Z1
	VMOVUPD 128(CX), Z2
	VMOVUPD 192(CX), Z3
	VMOVUPD 256(CX), Z4
	VMOVUPD 320(CX), Z5
	VMOVUPD 384(CX), Z6
	VMOVUPD 448(CX), Z7
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store64

loop64:
	VBROADCASTSD (SI), Z15
	VFMADD231PD 0(R11), Z15, Z0
	VFMADD231PD 64(R11), Z15, Z1
	VFMADD231PD 128(R11), Z15, Z2
	VFMADD231PD 192(R11), Z15, Z3
	VFMADD231PD 256(R11), Z15, Z4
	VFMADD231PD 320(R11), Z15, Z5
	VFMADD231PD 384(R11), Z15, Z6
	VFMADD231PD 448(R11), Z15, Z7
	ADDQ R10, SI
	ADDQ R12, R11
	DECQ CX
	JNZ  loop64

store64:
	VMOVUPD Z0, 0(R13)
	VMOVUPD Z1, 64(R13)
	VMOVUPD Z2, 128(R13)
	VMOVUPD Z3, 192(R13)
	VMOVUPD Z4, 256(R13)
	VMOVUPD Z5, 320(R13)
	VMOVUPD Z6, 384(R13)
	VMOVUPD Z7, 448(R13)
	VZEROUPPER
	RET

// func fma4x8m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)
//
// fma4x24 on 1–8 columns, one register a row holding the columns that mask selects (a Nyström
// map's six outputs). Its rows of A are asked for once every eight terms where they are contiguous
// (aStep 1: a cache line of each), every term otherwise (R14 holds the test's mask).
TEXT ·fma4x8m(SB), NOSPLIT, $0-64
	PANEL_A
	PANEL_MASK
	PANEL_C
	XORQ R14, R14
	CMPQ R10, $8
	JNE  start8m
	MOVQ $7, R14

start8m:
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init8m
	VMOVUPD.Z 0(R13), K1, Z0
	VMOVUPD.Z 0(BX), K1, Z1
	VMOVUPD.Z 0(DX), K1, Z2
	VMOVUPD.Z 0(AX), K1, Z3
	JMP  sum8m

init8m:
	VMOVUPD.Z 0(CX), K1, Z0
	VMOVAPD Z0, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z0, Z3

sum8m:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store8m

loop8m:
	TESTQ R14, CX
	JNZ  terms8m
	PANEL_PREFETCH

terms8m:
	VMOVUPD.Z 0(R11), K1, Z12
	VBROADCASTSD (SI), Z15
	VFMADD231PD Z12, Z15, Z0
	VBROADCASTSD (DI), Z16
	VFMADD231PD Z12, Z16, Z1
	VBROADCASTSD (R8), Z17
	VFMADD231PD Z12, Z17, Z2
	VBROADCASTSD (R9), Z18
	VFMADD231PD Z12, Z18, Z3
	PANEL_NEXT
	JNZ  loop8m

store8m:
	VMOVUPD Z0, K1, 0(R13)
	VMOVUPD Z1, K1, 0(BX)
	VMOVUPD Z2, K1, 0(DX)
	VMOVUPD Z3, K1, 0(AX)
	VZEROUPPER
	RET
