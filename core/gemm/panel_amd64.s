#include "textflag.h"
#include "panel_amd64.h"

// func fma4x12(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64)
//
// c_r[0:12] += Σ_l a_r[l·aStep]·b[l·bStep : l·bStep+12] for the four rows r and 0 ≤ l < n, each
// term a fused multiply–add in order of l, the block of c held in registers throughout. With init
// not nil, each row's sums start from init[0:12] instead of c_r's values, which are then never
// read: a product that sets C (from zeros, or from an intercept row) needs no pass of its own.
TEXT ·fma4x12(SB), NOSPLIT, $0-56
	PANEL_A
	PANEL_C
	MOVQ init+48(FP), CX
	TESTQ CX, CX
	JNZ  init12
	VMOVUPD 0(R13), Y0
	VMOVUPD 32(R13), Y1
	VMOVUPD 64(R13), Y2
	VMOVUPD 0(BX), Y3
	VMOVUPD 32(BX), Y4
	VMOVUPD 64(BX), Y5
	VMOVUPD 0(DX), Y6
	VMOVUPD 32(DX), Y7
	VMOVUPD 64(DX), Y8
	VMOVUPD 0(AX), Y9
	VMOVUPD 32(AX), Y10
	VMOVUPD 64(AX), Y11
	JMP  sum12

init12:
	VMOVUPD 0(CX), Y0
	VMOVUPD 32(CX), Y1
	VMOVUPD 64(CX), Y2
	VMOVAPD Y0, Y3
	VMOVAPD Y1, Y4
	VMOVAPD Y2, Y5
	VMOVAPD Y0, Y6
	VMOVAPD Y1, Y7
	VMOVAPD Y2, Y8
	VMOVAPD Y0, Y9
	VMOVAPD Y1, Y10
	VMOVAPD Y2, Y11

sum12:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store12

loop12:
	PANEL_PREFETCH
	VMOVUPD 0(R11), Y12
	VMOVUPD 32(R11), Y13
	VMOVUPD 64(R11), Y14
	VBROADCASTSD (SI), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VBROADCASTSD (DI), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VBROADCASTSD (R8), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VBROADCASTSD (R9), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	PANEL_NEXT
	JNZ  loop12

store12:
	VMOVUPD Y0, 0(R13)
	VMOVUPD Y1, 32(R13)
	VMOVUPD Y2, 64(R13)
	VMOVUPD Y3, 0(BX)
	VMOVUPD Y4, 32(BX)
	VMOVUPD Y5, 64(BX)
	VMOVUPD Y6, 0(DX)
	VMOVUPD Y7, 32(DX)
	VMOVUPD Y8, 64(DX)
	VMOVUPD Y9, 0(AX)
	VMOVUPD Y10, 32(AX)
	VMOVUPD Y11, 64(AX)
	VZEROUPPER
	RET

// func fma4x8(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64)
//
// c_r[0:8] += Σ_l a_r[l·aStep]·b[l·bStep : l·bStep+8] for the four rows r and 0 ≤ l < n, each
// term a fused multiply–add in order of l, the block of c held in registers throughout.
// The last vector of b and of each c_r is read and written through mask, so that the block
// may end anywhere in it. init as in fma4x12, its last vector read through mask too.
TEXT ·fma4x8(SB), NOSPLIT, $0-64
	PANEL_A
	MOVQ mask+48(FP), DX
	VMOVDQU (DX), Y15
	PANEL_C
	MOVQ init+56(FP), CX
	TESTQ CX, CX
	JNZ  init8
	VMOVUPD 0(R13), Y0
	VMASKMOVPD 32(R13), Y15, Y1
	VMOVUPD 0(BX), Y2
	VMASKMOVPD 32(BX), Y15, Y3
	VMOVUPD 0(DX), Y4
	VMASKMOVPD 32(DX), Y15, Y5
	VMOVUPD 0(AX), Y6
	VMASKMOVPD 32(AX), Y15, Y7
	JMP  sum8

init8:
	VMOVUPD 0(CX), Y0
	VMASKMOVPD 32(CX), Y15, Y1
	VMOVAPD Y0, Y2
	VMOVAPD Y1, Y3
	VMOVAPD Y0, Y4
	VMOVAPD Y1, Y5
	VMOVAPD Y0, Y6
	VMOVAPD Y1, Y7

sum8:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store8

loop8:
	PANEL_PREFETCH
	VMOVUPD 0(R11), Y12
	VMASKMOVPD 32(R11), Y15, Y13
	VBROADCASTSD (SI), Y14
	VFMADD231PD Y12, Y14, Y0
	VFMADD231PD Y13, Y14, Y1
	VBROADCASTSD (DI), Y14
	VFMADD231PD Y12, Y14, Y2
	VFMADD231PD Y13, Y14, Y3
	VBROADCASTSD (R8), Y14
	VFMADD231PD Y12, Y14, Y4
	VFMADD231PD Y13, Y14, Y5
	VBROADCASTSD (R9), Y14
	VFMADD231PD Y12, Y14, Y6
	VFMADD231PD Y13, Y14, Y7
	PANEL_NEXT
	JNZ  loop8

store8:
	VMOVUPD Y0, 0(R13)
	VMASKMOVPD Y1, Y15, 32(R13)
	VMOVUPD Y2, 0(BX)
	VMASKMOVPD Y3, Y15, 32(BX)
	VMOVUPD Y4, 0(DX)
	VMASKMOVPD Y5, Y15, 32(DX)
	VMOVUPD Y6, 0(AX)
	VMASKMOVPD Y7, Y15, 32(AX)
	VZEROUPPER
	RET

// func fma4x4(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64)
//
// c_r[0:4] += Σ_l a_r[l·aStep]·b[l·bStep : l·bStep+4] for the four rows r and 0 ≤ l < n, each
// term a fused multiply–add in order of l, the block of c held in registers throughout.
// The last vector of b and of each c_r is read and written through mask, so that the block
// may end anywhere in it. init as in fma4x12, its last vector read through mask too.
TEXT ·fma4x4(SB), NOSPLIT, $0-64
	PANEL_A
	MOVQ mask+48(FP), DX
	VMOVDQU (DX), Y15
	PANEL_C
	MOVQ init+56(FP), CX
	TESTQ CX, CX
	JNZ  init4
	VMASKMOVPD 0(R13), Y15, Y0
	VMASKMOVPD 0(BX), Y15, Y1
	VMASKMOVPD 0(DX), Y15, Y2
	VMASKMOVPD 0(AX), Y15, Y3
	JMP  sum4

init4:
	VMASKMOVPD 0(CX), Y15, Y0
	VMOVAPD Y0, Y1
	VMOVAPD Y0, Y2
	VMOVAPD Y0, Y3

sum4:
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JLE  store4

loop4:
	PANEL_PREFETCH
	VMASKMOVPD 0(R11), Y15, Y12
	VBROADCASTSD (SI), Y14
	VFMADD231PD Y12, Y14, Y0
	VBROADCASTSD (DI), Y14
	VFMADD231PD Y12, Y14, Y1
	VBROADCASTSD (R8), Y14
	VFMADD231PD Y12, Y14, Y2
	VBROADCASTSD (R9), Y14
	VFMADD231PD Y12, Y14, Y3
	PANEL_NEXT
	JNZ  loop4

store4:
	VMASKMOVPD Y0, Y15, 0(R13)
	VMASKMOVPD Y1, Y15, 0(BX)
	VMASKMOVPD Y2, Y15, 0(DX)
	VMASKMOVPD Y3, Y15, 0(AX)
	VZEROUPPER
	RET
