#include "textflag.h"

// func fmaRows8(c, k *float64, stride, n int, a *[8]float64)
//
// c[j] += (((c[j] + a0·k0[j]) + a1·k1[j]) + a2·k2[j]) + a3·k3[j]
//         + (((a4·k4[j]) + a5·k5[j]) + a6·k6[j]) + a7·k7[j]
//
// for 0 ≤ j < n (a multiple of 4), each sum a fused multiply–add, with kt = k + t·stride.
// Rows 0–3 and 4–7 accumulate in separate registers so that eight FMA chains are in flight.
TEXT ·fmaRows8(SB), NOSPLIT, $0-40
	MOVQ c+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ stride+16(FP), AX
	SHLQ $3, AX
	MOVQ n+24(FP), DX
	SHLQ $3, DX
	MOVQ a+32(FP), BX
	VBROADCASTSD 0(BX), Y0
	VBROADCASTSD 8(BX), Y1
	VBROADCASTSD 16(BX), Y2
	VBROADCASTSD 24(BX), Y3
	VBROADCASTSD 32(BX), Y4
	VBROADCASTSD 40(BX), Y5
	VBROADCASTSD 48(BX), Y6
	VBROADCASTSD 56(BX), Y7
	LEAQ (SI)(AX*1), R8
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R11)(AX*1), R12
	LEAQ (R12)(AX*1), R13
	LEAQ (R13)(AX*1), BX
	XORQ CX, CX
	MOVQ DX, AX
	ANDQ $-128, AX

loop16:
	CMPQ CX, AX
	JGE  loop4
	VMOVUPD 0(DI)(CX*1), Y8
	VMOVUPD 32(DI)(CX*1), Y9
	VMOVUPD 64(DI)(CX*1), Y10
	VMOVUPD 96(DI)(CX*1), Y11
	VMULPD  0(R11)(CX*1), Y4, Y12
	VMULPD  32(R11)(CX*1), Y4, Y13
	VMULPD  64(R11)(CX*1), Y4, Y14
	VMULPD  96(R11)(CX*1), Y4, Y15
	VFMADD231PD 0(SI)(CX*1), Y0, Y8
	VFMADD231PD 32(SI)(CX*1), Y0, Y9
	VFMADD231PD 64(SI)(CX*1), Y0, Y10
	VFMADD231PD 96(SI)(CX*1), Y0, Y11
	VFMADD231PD 0(R12)(CX*1), Y5, Y12
	VFMADD231PD 32(R12)(CX*1), Y5, Y13
	VFMADD231PD 64(R12)(CX*1), Y5, Y14
	VFMADD231PD 96(R12)(CX*1), Y5, Y15
	VFMADD231PD 0(R8)(CX*1), Y1, Y8
	VFMADD231PD 32(R8)(CX*1), Y1, Y9
	VFMADD231PD 64(R8)(CX*1), Y1, Y10
	VFMADD231PD 96(R8)(CX*1), Y1, Y11
	VFMADD231PD 0(R13)(CX*1), Y6, Y12
	VFMADD231PD 32(R13)(CX*1), Y6, Y13
	VFMADD231PD 64(R13)(CX*1), Y6, Y14
	VFMADD231PD 96(R13)(CX*1), Y6, Y15
	VFMADD231PD 0(R9)(CX*1), Y2, Y8
	VFMADD231PD 32(R9)(CX*1), Y2, Y9
	VFMADD231PD 64(R9)(CX*1), Y2, Y10
	VFMADD231PD 96(R9)(CX*1), Y2, Y11
	VFMADD231PD 0(BX)(CX*1), Y7, Y12
	VFMADD231PD 32(BX)(CX*1), Y7, Y13
	VFMADD231PD 64(BX)(CX*1), Y7, Y14
	VFMADD231PD 96(BX)(CX*1), Y7, Y15
	VFMADD231PD 0(R10)(CX*1), Y3, Y8
	VFMADD231PD 32(R10)(CX*1), Y3, Y9
	VFMADD231PD 64(R10)(CX*1), Y3, Y10
	VFMADD231PD 96(R10)(CX*1), Y3, Y11
	VADDPD Y12, Y8, Y8
	VADDPD Y13, Y9, Y9
	VADDPD Y14, Y10, Y10
	VADDPD Y15, Y11, Y11
	VMOVUPD Y8, 0(DI)(CX*1)
	VMOVUPD Y9, 32(DI)(CX*1)
	VMOVUPD Y10, 64(DI)(CX*1)
	VMOVUPD Y11, 96(DI)(CX*1)
	ADDQ $128, CX
	JMP  loop16

loop4:
	CMPQ CX, DX
	JGE  done
	VMOVUPD 0(DI)(CX*1), Y8
	VMULPD  0(R11)(CX*1), Y4, Y12
	VFMADD231PD 0(SI)(CX*1), Y0, Y8
	VFMADD231PD 0(R12)(CX*1), Y5, Y12
	VFMADD231PD 0(R8)(CX*1), Y1, Y8
	VFMADD231PD 0(R13)(CX*1), Y6, Y12
	VFMADD231PD 0(R9)(CX*1), Y2, Y8
	VFMADD231PD 0(BX)(CX*1), Y7, Y12
	VFMADD231PD 0(R10)(CX*1), Y3, Y8
	VADDPD Y12, Y8, Y8
	VMOVUPD Y8, 0(DI)(CX*1)
	ADDQ $32, CX
	JMP  loop4

done:
	VZEROUPPER
	RET

// SPANROW(x, B, OP, A0, A1, A2, A3): one row of B (at B, 16 columns, the lanes masks selects)
// times the coefficient at x(BX), into the accumulators A0–A3 by OP (VFMADD231PD adds,
// VMULPD starts a chain).
#define SPANROW(x, B, OP, A0, A1, A2, A3) \
	VBROADCASTSD x(BX), Y8; \
	VMASKMOVPD B, Y10, Y9; \
	OP Y9, Y8, A0; \
	VMASKMOVPD 32 B, Y11, Y9; \
	OP Y9, Y8, A1; \
	VMASKMOVPD 64 B, Y12, Y9; \
	OP Y9, Y8, A2; \
	VMASKMOVPD 96 B, Y13, Y9; \
	OP Y9, Y8, A3

// func fmaRowsSpan(c, k *float64, stride, groups int, x *float64, masks *[4][4]uint64)
//
// fmaRows8's arithmetic on one row of C, 16 columns wide, over groups·8 rows of B at once:
// for each group g of eight rows k_t = k + (8g + t)·stride with coefficients a_t = x[8g + t],
//
//	c[j] = (((c[j] + a0·k0[j]) + a1·k1[j]) + a2·k2[j]) + a3·k3[j]
//	     + (((a4·k4[j]) + a5·k5[j]) + a6·k6[j]) + a7·k7[j],
//
// for the columns 0 ≤ j < 16 whose lanes masks selects (masks[v] covers columns 4v..4v+3; the
// others are neither read nor written). c stays in registers from the first group to the last:
// one row of C otherwise waits for its own store and reload between every two groups.
TEXT ·fmaRowsSpan(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ stride+16(FP), DX
	SHLQ $3, DX
	MOVQ groups+24(FP), CX
	MOVQ x+32(FP), BX
	MOVQ masks+40(FP), AX
	VMOVDQU 0(AX), Y10
	VMOVDQU 32(AX), Y11
	VMOVDQU 64(AX), Y12
	VMOVDQU 96(AX), Y13
	LEAQ (SI)(DX*2), R8
	ADDQ DX, R8
	LEAQ (R8)(DX*2), R9
	ADDQ DX, R9
	LEAQ (R9)(DX*2), R10
	SUBQ SI, R10
	VMASKMOVPD 0(DI), Y10, Y0
	VMASKMOVPD 32(DI), Y11, Y1
	VMASKMOVPD 64(DI), Y12, Y2
	VMASKMOVPD 96(DI), Y13, Y3

span:
	TESTQ CX, CX
	JEQ   spandone
	SPANROW(0, (SI), VFMADD231PD, Y0, Y1, Y2, Y3)
	SPANROW(8, (SI)(DX*1), VFMADD231PD, Y0, Y1, Y2, Y3)
	SPANROW(16, (SI)(DX*2), VFMADD231PD, Y0, Y1, Y2, Y3)
	SPANROW(24, (R8), VFMADD231PD, Y0, Y1, Y2, Y3)
	SPANROW(32, (R8)(DX*1), VMULPD, Y4, Y5, Y6, Y7)
	SPANROW(40, (R8)(DX*2), VFMADD231PD, Y4, Y5, Y6, Y7)
	SPANROW(48, (R9), VFMADD231PD, Y4, Y5, Y6, Y7)
	SPANROW(56, (R9)(DX*1), VFMADD231PD, Y4, Y5, Y6, Y7)
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ R10, SI
	ADDQ R10, R8
	ADDQ R10, R9
	ADDQ $64, BX
	DECQ CX
	JMP  span

spandone:
	VMASKMOVPD Y0, Y10, 0(DI)
	VMASKMOVPD Y1, Y11, 32(DI)
	VMASKMOVPD Y2, Y12, 64(DI)
	VMASKMOVPD Y3, Y13, 96(DI)
	VZEROUPPER
	RET
