#include "textflag.h"

// func rbfRow4(v, nb *float64, n int, args *[3][4]float64, consts *[12][4]uint64, tab *[256]uint64) int
//
// rbfRow's arithmetic (exp.go), four values at a time, for v[0:n] (n a multiple of 4): args
// holds na, −γ and plus in every lane; consts the constants rbfConsts lists. It stops before the
// first block of four with an argument x = −γ·d2 below −708 or NaN, which rbfRow's math.Exp
// takes, and returns how many values it wrote. Each operation is rbfRow's own, unfused, so the
// values are bit for bit those of the loop in Go.
TEXT ·rbfRow4(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), DI
	MOVQ nb+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ args+24(FP), BX
	MOVQ consts+32(FP), R8
	MOVQ tab+40(FP), R9
	VMOVUPD 0(BX), Y0
	VMOVUPD 32(BX), Y1
	VMOVUPD 64(BX), Y2
	VMOVUPD 288(R8), Y12
	VXORPD Y11, Y11, Y11
	XORQ AX, AX

loop:
	CMPQ AX, CX
	JGE  done
	// d2 = max(0, (na + nb_j) − 2·dot_j), NaN kept; x = −γ·d2
	VMOVUPD (DI)(AX*8), Y14
	VADDPD (SI)(AX*8), Y0, Y13
	VMULPD 0(R8), Y14, Y14
	VSUBPD Y14, Y13, Y13
	VMAXPD Y13, Y11, Y13
	VMULPD Y1, Y13, Y13
	// every lane x ≥ −708 (false for NaN), else stop
	VCMPPD $29, Y12, Y13, Y14
	VMOVMSKPD Y14, DX
	CMPQ DX, $15
	JNE  done
	// qf = (x·scale + round) − round, and q = bits(x·scale + round) − bits(round)
	VMULPD 32(R8), Y13, Y14
	VADDPD 64(R8), Y14, Y14
	VSUBPD 64(R8), Y14, Y15
	VPSUBQ 64(R8), Y14, Y14
	// r = (x − qf·hi) − qf·lo
	VMULPD 96(R8), Y15, Y10
	VSUBPD Y10, Y13, Y13
	VMULPD 128(R8), Y15, Y10
	VSUBPD Y10, Y13, Y13
	// p = 1 + r·(1 + r·(1/2 + r·(1/6 + r·(1/24))))
	VMULPD 256(R8), Y13, Y15
	VADDPD 224(R8), Y15, Y15
	VMULPD Y13, Y15, Y15
	VADDPD 192(R8), Y15, Y15
	VMULPD Y13, Y15, Y15
	VADDPD 160(R8), Y15, Y15
	VMULPD Y13, Y15, Y15
	VADDPD 160(R8), Y15, Y15
	// 2^(q/256) = bits(tab[q & 255] + (q >> 8) << 52), (q >> 8) << 52 = (q &^ 255) << 44
	VPAND 320(R8), Y14, Y13
	VPCMPEQQ Y10, Y10, Y10
	VXORPD Y9, Y9, Y9
	VGATHERQPD Y10, (R9)(Y13*8), Y9
	VPAND 352(R8), Y14, Y14
	VPSLLQ $44, Y14, Y14
	VPADDQ Y14, Y9, Y9
	VMULPD Y15, Y9, Y9
	VADDPD Y2, Y9, Y9
	VMOVUPD Y9, (DI)(AX*8)
	ADDQ $4, AX
	JMP  loop

done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET
