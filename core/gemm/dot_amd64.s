#include "textflag.h"
#include "dotsum_amd64.h"

// func dot2x6(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64)
//
// out[6r+c] = Σ_j a_r[j]·b_c[j] for the rows a_0 = rows[0], a_1 = rows[1] and b_c = rows[2+c],
// over 0 ≤ j < n. Each of the twelve sums keeps four partial sums (lane j mod 4),
// accumulated by fused multiply–adds in order of j; the last n mod 4 terms are read through
// mask (all ones in its first n mod 4 lanes), and the four lanes are added as
// (lane0 + lane2) + (lane1 + lane3).
TEXT ·dot2x6(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), AX
	MOVQ 0(AX), SI
	MOVQ 8(AX), DI
	MOVQ 16(AX), R8
	MOVQ 24(AX), R9
	MOVQ 32(AX), R10
	MOVQ 40(AX), R11
	MOVQ 48(AX), R12
	MOVQ 56(AX), R13
	MOVQ n+8(FP), DX
	SHLQ $3, DX
	MOVQ DX, BX
	ANDQ $-32, BX
	XORQ CX, CX
	DOTZERO12

loop:
	CMPQ CX, BX
	JGE  tail
	VMOVUPD (SI)(CX*1), Y12
	VMOVUPD (DI)(CX*1), Y13
	VMOVUPD (R8)(CX*1), Y14
	VFMADD231PD Y14, Y12, Y0
	VFMADD231PD Y14, Y13, Y6
	VMOVUPD (R9)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y1
	VFMADD231PD Y15, Y13, Y7
	VMOVUPD (R10)(CX*1), Y14
	VFMADD231PD Y14, Y12, Y2
	VFMADD231PD Y14, Y13, Y8
	VMOVUPD (R11)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y3
	VFMADD231PD Y15, Y13, Y9
	VMOVUPD (R12)(CX*1), Y14
	VFMADD231PD Y14, Y12, Y4
	VFMADD231PD Y14, Y13, Y10
	VMOVUPD (R13)(CX*1), Y15
	VFMADD231PD Y15, Y12, Y5
	VFMADD231PD Y15, Y13, Y11
	ADDQ $32, CX
	JMP  loop

tail:
	CMPQ CX, DX
	JGE  reduce
	MOVQ mask+16(FP), AX
	VMOVDQU (AX), Y15
	VMASKMOVPD (SI)(CX*1), Y15, Y12
	VMASKMOVPD (DI)(CX*1), Y15, Y13
	VMASKMOVPD (R8)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y0
	VFMADD231PD Y14, Y13, Y6
	VMASKMOVPD (R9)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y1
	VFMADD231PD Y14, Y13, Y7
	VMASKMOVPD (R10)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y2
	VFMADD231PD Y14, Y13, Y8
	VMASKMOVPD (R11)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y3
	VFMADD231PD Y14, Y13, Y9
	VMASKMOVPD (R12)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y4
	VFMADD231PD Y14, Y13, Y10
	VMASKMOVPD (R13)(CX*1), Y15, Y14
	VFMADD231PD Y14, Y12, Y5
	VFMADD231PD Y14, Y13, Y11

reduce:
	MOVQ out+24(FP), AX
	DOTSUM12
	VZEROUPPER
	RET

// TAILFMA(B, A): the last n mod 4 terms of a row of B (at B, through the mask in Y15) times
// those of the row of X (Y12), added to the accumulator A.
#define TAILFMA(B, A) \
	VMASKMOVPD B, Y15, Y13; \
	VFMADD231PD Y13, Y12, A

// func dot1x12(a, b *float64, stride, n int, mask *[4]uint64, out *[12]float64)
//
// out[c] = Σ_j a[j]·b_c[j] for the twelve rows b_c = b + c·stride (stride in elements) of B,
// over 0 ≤ j < n: dot2x6's arithmetic for one row of X (four partial sums per dot product,
// fused multiply–adds in order of j, the last n mod 4 terms through mask, the lanes added as
// (lane0 + lane2) + (lane1 + lane3)), so that a row's products do not depend on the kernel.
// The rows of B are addressed from four base pointers, three rows apart, and the stride.
TEXT ·dot1x12(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), R8
	MOVQ stride+16(FP), DX
	SHLQ $3, DX
	LEAQ (R8)(DX*2), R9
	ADDQ DX, R9
	LEAQ (R9)(DX*2), R10
	ADDQ DX, R10
	LEAQ (R10)(DX*2), R11
	ADDQ DX, R11
	MOVQ n+24(FP), BX
	SHLQ $3, BX
	MOVQ BX, AX
	ANDQ $-32, AX
	XORQ CX, CX
	DOTZERO12

loop1:
	CMPQ CX, AX
	JGE  tail1
	VMOVUPD (SI), Y12
	VFMADD231PD (R8), Y12, Y0
	VFMADD231PD (R8)(DX*1), Y12, Y1
	VFMADD231PD (R8)(DX*2), Y12, Y2
	VFMADD231PD (R9), Y12, Y3
	VFMADD231PD (R9)(DX*1), Y12, Y4
	VFMADD231PD (R9)(DX*2), Y12, Y5
	VFMADD231PD (R10), Y12, Y6
	VFMADD231PD (R10)(DX*1), Y12, Y7
	VFMADD231PD (R10)(DX*2), Y12, Y8
	VFMADD231PD (R11), Y12, Y9
	VFMADD231PD (R11)(DX*1), Y12, Y10
	VFMADD231PD (R11)(DX*2), Y12, Y11
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, CX
	JMP  loop1

tail1:
	CMPQ CX, BX
	JGE  reduce1
	MOVQ mask+32(FP), AX
	VMOVDQU (AX), Y15
	VMASKMOVPD (SI), Y15, Y12
	TAILFMA((R8), Y0)
	TAILFMA((R8)(DX*1), Y1)
	TAILFMA((R8)(DX*2), Y2)
	TAILFMA((R9), Y3)
	TAILFMA((R9)(DX*1), Y4)
	TAILFMA((R9)(DX*2), Y5)
	TAILFMA((R10), Y6)
	TAILFMA((R10)(DX*1), Y7)
	TAILFMA((R10)(DX*2), Y8)
	TAILFMA((R11), Y9)
	TAILFMA((R11)(DX*1), Y10)
	TAILFMA((R11)(DX*2), Y11)

reduce1:
	MOVQ out+40(FP), AX
	DOTSUM12
	VZEROUPPER
	RET
