#include "textflag.h"

// func dotRows4(x *[4]*float64, b *float64, n int, out *[4]float64)
//
// out[t] = Σ_j x_t[j]·b[j] for the four rows x_t and 0 ≤ j < n (a multiple of 4): b is read once
// for the four rows. Each row has two accumulators (even and odd vectors of 4), so that eight
// independent chains of fused multiply–adds cover the FMA latency; they are added, then the four
// rows' lanes are summed pairwise into one vector.
TEXT ·dotRows4(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), BX
	MOVQ 0(BX), SI
	MOVQ 8(BX), R8
	MOVQ 16(BX), R9
	MOVQ 24(BX), R10
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), DX
	SHLQ $3, DX
	MOVQ out+24(FP), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ CX, CX
	MOVQ DX, AX
	ANDQ $-64, AX

loop8:
	CMPQ CX, AX
	JGE  loop4
	VMOVUPD 0(DI)(CX*1), Y8
	VMOVUPD 32(DI)(CX*1), Y9
	VFMADD231PD 0(SI)(CX*1), Y8, Y0
	VFMADD231PD 32(SI)(CX*1), Y9, Y4
	VFMADD231PD 0(R8)(CX*1), Y8, Y1
	VFMADD231PD 32(R8)(CX*1), Y9, Y5
	VFMADD231PD 0(R9)(CX*1), Y8, Y2
	VFMADD231PD 32(R9)(CX*1), Y9, Y6
	VFMADD231PD 0(R10)(CX*1), Y8, Y3
	VFMADD231PD 32(R10)(CX*1), Y9, Y7
	ADDQ $64, CX
	JMP  loop8

loop4:
	CMPQ CX, DX
	JGE  sum
	VMOVUPD 0(DI)(CX*1), Y8
	VFMADD231PD 0(SI)(CX*1), Y8, Y0
	VFMADD231PD 0(R8)(CX*1), Y8, Y1
	VFMADD231PD 0(R9)(CX*1), Y8, Y2
	VFMADD231PD 0(R10)(CX*1), Y8, Y3
	ADDQ $32, CX
	JMP  loop4

sum:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	VHADDPD Y1, Y0, Y0          // [x0₀+x0₁, x1₀+x1₁, x0₂+x0₃, x1₂+x1₃]
	VHADDPD Y3, Y2, Y2          // the same for rows 2 and 3
	VPERM2F128 $0x21, Y2, Y0, Y1 // [Y0's high half, Y2's low half]
	VBLENDPD $0x0C, Y2, Y0, Y0   // [Y0's low half, Y2's high half]
	VADDPD Y1, Y0, Y0
	VMOVUPD Y0, 0(R11)
	VZEROUPPER
	RET
