#include "textflag.h"

// The kernels below run the exact decoders' dynamic programmes on batchLanes = 4 score rows at
// once: every table entry is a YMM vector of the four rows' values, at entry·32 bytes, so that
// the control flow (which depends only on subset masks) is shared and one VADDPD/VMAXPD serves
// four rows. Each value is the sum of the same operands in the same order as the Go walk-back
// recomputes it, so that its == comparisons stay exact per lane. Scores reaching them are finite
// (permFiniteScore maps NaN to 0 and clamps ±Inf), so VMAXPD's NaN and ±0 rules never matter.

// func permDP4(dp, lo, hi *float64, n, h int)
//
// dp[set] = max_{v ∈ set} (dp[set∖v] + lo[v<<h | (set∖v) mod 2^h]) + hi[v<<(n−h) | (set∖v)>>h]
// for 1 ≤ set < 2^n, in increasing order (dp[0] is the caller's). Two accumulators, so that the
// latency of VMAXPD does not chain through every candidate.
TEXT ·permDP4(SB), NOSPLIT, $0-40
	MOVQ dp+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ h+32(FP), R8
	MOVQ CX, R9
	SUBQ R8, R9 // n − h
	MOVQ $1, R11
	SHLXQ CX, R11, R11 // 2^n
	MOVQ $0xFFF0000000000000, AX
	VMOVQ AX, X15
	VBROADCASTSD X15, Y15 // −Inf
	MOVQ $1, BX

permSet:
	VMOVAPD Y15, Y0
	VMOVAPD Y15, Y1
	MOVQ    BX, R12 // members not yet tried

permMember:
	TZCNTQ  R12, AX // v
	BLSRQ   R12, R12
	MOVQ    BX, R13
	BTCQ    AX, R13 // set∖v
	MOVQ    R13, CX
	SHLQ    $5, CX
	VMOVUPD (DI)(CX*1), Y2
	BZHIQ   R8, R13, CX
	SHLXQ   R8, AX, R10
	ORQ     R10, CX
	SHLQ    $5, CX
	VADDPD  (SI)(CX*1), Y2, Y2
	SHRXQ   R8, R13, CX
	SHLXQ   R9, AX, R10
	ORQ     R10, CX
	SHLQ    $5, CX
	VADDPD  (DX)(CX*1), Y2, Y2
	VMAXPD  Y2, Y0, Y0
	TESTQ   R12, R12
	JZ      permSetDone
	TZCNTQ  R12, AX
	BLSRQ   R12, R12
	MOVQ    BX, R13
	BTCQ    AX, R13
	MOVQ    R13, CX
	SHLQ    $5, CX
	VMOVUPD (DI)(CX*1), Y3
	BZHIQ   R8, R13, CX
	SHLXQ   R8, AX, R10
	ORQ     R10, CX
	SHLQ    $5, CX
	VADDPD  (SI)(CX*1), Y3, Y3
	SHRXQ   R8, R13, CX
	SHLXQ   R9, AX, R10
	ORQ     R10, CX
	SHLQ    $5, CX
	VADDPD  (DX)(CX*1), Y3, Y3
	VMAXPD  Y3, Y1, Y1
	TESTQ   R12, R12
	JNZ     permMember

permSetDone:
	VMAXPD  Y1, Y0, Y0
	MOVQ    BX, CX
	SHLQ    $5, CX
	VMOVUPD Y0, (DI)(CX*1)
	INCQ    BX
	CMPQ    BX, R11
	JLT     permSet
	VZEROUPPER
	RET

// func cycleDP4(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64)
//
// The Held–Karp paths that start at vertex s and visit s and a nonempty set T of the m = n−1−s
// vertices above it (T a mask of m bits, bit i for vertex s+1+i), ending at v ∈ T:
//
//	P(T, v) = wt[V·n + s]                                         when T = {v},
//	P(T, v) = max_{l ∈ T∖v} P(T∖v, l) + wt[V·n + s+1+l]           otherwise, V = s+1+v,
//
// with wt[b·n+a] the weight of the arc a→b. P(T, ·) is stored at dp[off[T] + rank of v in T]
// (off[T] = Σ_{T' < T} |T'|), so the candidates P(T∖v, ·) are read in order from one run of
// entries and the table holds m·2^(m−1) entries instead of n·2^n. Closing the cycle, for |T| ≥ 2,
// scores P(T, v) + wt[s·n + V]; best and at (T<<5 | v) are raised where a lane's closing beats
// best strictly.
TEXT ·cycleDP4(SB), NOSPLIT, $16-56
	MOVQ dp+0(FP), DI
	MOVQ off+8(FP), SI
	MOVQ wt+16(FP), DX
	MOVQ n+24(FP), R8
	MOVQ s+32(FP), CX
	MOVQ R8, AX
	SUBQ CX, AX
	DECQ AX // m
	MOVQ $1, BX
	SHLXQ AX, BX, BX
	MOVQ BX, 0(SP) // 2^m
	MOVQ CX, AX
	IMULQ R8, AX
	ADDQ CX, AX
	INCQ AX
	SHLQ $5, AX
	ADDQ DX, AX
	MOVQ AX, 8(SP) // &wt[s·n + s+1]: closing weights, one entry per v
	MOVQ CX, AX
	INCQ AX
	IMULQ R8, AX
	ADDQ CX, AX
	SHLQ $5, AX
	ADDQ AX, DX // &wt[(s+1)·n + s]: start weights, n entries per v; the next entry begins into[]
	SHLQ $5, R8 // n·32
	MOVQ $0xFFF0000000000000, AX
	VMOVQ AX, X15
	VBROADCASTSD X15, Y15 // −Inf
	MOVQ best+40(FP), AX
	VMOVUPD (AX), Y14
	MOVQ at+48(FP), AX
	VMOVDQU (AX), Y13
	MOVQ $1, BX

cycleSet:
	MOVLQSX (SI)(BX*4), R9
	SHLQ    $5, R9
	ADDQ    DI, R9 // &P(T, first member)
	BLSRQ   BX, AX
	JNZ     cycleMany
	TZCNTQ  BX, AX
	IMULQ   R8, AX
	VMOVUPD (DX)(AX*1), Y0
	VMOVUPD Y0, (R9)
	JMP     cycleNext

cycleMany:
	MOVQ BX, R10 // members not yet ended at

cycleEnd:
	TZCNTQ  R10, AX // v
	BLSRQ   R10, R10
	MOVQ    BX, R11
	BTCQ    AX, R11 // T∖v
	MOVLQSX (SI)(R11*4), R12
	SHLQ    $5, R12
	ADDQ    DI, R12 // &P(T∖v, first member)
	MOVQ    AX, R13
	IMULQ   R8, R13
	LEAQ    32(DX)(R13*1), R13 // &wt[V·n + s+1]
	VMOVAPD Y15, Y0
	VMOVAPD Y15, Y1

cycleCand:
	TZCNTQ  R11, CX // l
	BLSRQ   R11, R11
	SHLQ    $5, CX
	VMOVUPD (R12), Y2
	VADDPD  (R13)(CX*1), Y2, Y2
	VMAXPD  Y2, Y0, Y0
	ADDQ    $32, R12
	TESTQ   R11, R11
	JZ      cycleCandDone
	TZCNTQ  R11, CX
	BLSRQ   R11, R11
	SHLQ    $5, CX
	VMOVUPD (R12), Y3
	VADDPD  (R13)(CX*1), Y3, Y3
	VMAXPD  Y3, Y1, Y1
	ADDQ    $32, R12
	TESTQ   R11, R11
	JNZ     cycleCand

cycleCandDone:
	VMAXPD    Y1, Y0, Y0
	VMOVUPD   Y0, (R9)
	ADDQ      $32, R9
	MOVQ      8(SP), CX
	MOVQ      AX, R11
	SHLQ      $5, R11
	VADDPD    (CX)(R11*1), Y0, Y0 // the closed cycle
	VCMPPD    $0x1e, Y14, Y0, Y1  // greater than best (ordered, quiet)
	VBLENDVPD Y1, Y0, Y14, Y14
	MOVQ      BX, CX
	SHLQ      $5, CX
	ORQ       AX, CX
	VMOVQ     CX, X2
	VPBROADCASTQ X2, Y2
	VBLENDVPD Y1, Y2, Y13, Y13
	TESTQ     R10, R10
	JNZ       cycleEnd

cycleNext:
	INCQ BX
	CMPQ BX, 0(SP)
	JLT  cycleSet
	MOVQ best+40(FP), AX
	VMOVUPD Y14, (AX)
	MOVQ at+48(FP), AX
	VMOVDQU Y13, (AX)
	VZEROUPPER
	RET

// The one-lane kernels below are permDP4 and cycleDP4 on a single row, for Decode: the same
// programmes with scalar VADDSD/VMAXSD on 8-byte entries (the cycle codes T<<5 | v unchanged).

// func permDP1(dp, lo, hi *float64, n, h int)
TEXT ·permDP1(SB), NOSPLIT, $0-40
	MOVQ dp+0(FP), DI
	MOVQ lo+8(FP), SI
	MOVQ hi+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ h+32(FP), R8
	MOVQ CX, R9
	SUBQ R8, R9 // n − h
	MOVQ $1, R11
	SHLXQ CX, R11, R11 // 2^n
	MOVQ $0xFFF0000000000000, AX
	VMOVQ AX, X15
	MOVQ $1, BX

permOneSet:
	VMOVAPD X15, X0
	VMOVAPD X15, X1
	MOVQ    BX, R12 // members not yet tried

permOneMember:
	TZCNTQ  R12, AX // v
	BLSRQ   R12, R12
	MOVQ    BX, R13
	BTCQ    AX, R13 // set∖v
	MOVQ    R13, CX
	SHLQ    $3, CX
	VMOVSD  (DI)(CX*1), X2
	BZHIQ   R8, R13, CX
	SHLXQ   R8, AX, R10
	ORQ     R10, CX
	SHLQ    $3, CX
	VADDSD  (SI)(CX*1), X2, X2
	SHRXQ   R8, R13, CX
	SHLXQ   R9, AX, R10
	ORQ     R10, CX
	SHLQ    $3, CX
	VADDSD  (DX)(CX*1), X2, X2
	VMAXSD  X2, X0, X0
	TESTQ   R12, R12
	JZ      permOneSetDone
	TZCNTQ  R12, AX
	BLSRQ   R12, R12
	MOVQ    BX, R13
	BTCQ    AX, R13
	MOVQ    R13, CX
	SHLQ    $3, CX
	VMOVSD  (DI)(CX*1), X3
	BZHIQ   R8, R13, CX
	SHLXQ   R8, AX, R10
	ORQ     R10, CX
	SHLQ    $3, CX
	VADDSD  (SI)(CX*1), X3, X3
	SHRXQ   R8, R13, CX
	SHLXQ   R9, AX, R10
	ORQ     R10, CX
	SHLQ    $3, CX
	VADDSD  (DX)(CX*1), X3, X3
	VMAXSD  X3, X1, X1
	TESTQ   R12, R12
	JNZ     permOneMember

permOneSetDone:
	VMAXSD  X1, X0, X0
	MOVQ    BX, CX
	SHLQ    $3, CX
	VMOVSD  X0, (DI)(CX*1)
	INCQ    BX
	CMPQ    BX, R11
	JLT     permOneSet
	VZEROUPPER
	RET

// func cycleDP1(dp *float64, off *int32, wt *float64, n, s int, best *[4]float64, at *[4]int64)
//
// Only best[0] and at[0] are read and raised.
TEXT ·cycleDP1(SB), NOSPLIT, $16-56
	MOVQ dp+0(FP), DI
	MOVQ off+8(FP), SI
	MOVQ wt+16(FP), DX
	MOVQ n+24(FP), R8
	MOVQ s+32(FP), CX
	MOVQ R8, AX
	SUBQ CX, AX
	DECQ AX // m
	MOVQ $1, BX
	SHLXQ AX, BX, BX
	MOVQ BX, 0(SP) // 2^m
	MOVQ CX, AX
	IMULQ R8, AX
	ADDQ CX, AX
	INCQ AX
	SHLQ $3, AX
	ADDQ DX, AX
	MOVQ AX, 8(SP) // &wt[s·n + s+1]: closing weights, one entry per v
	MOVQ CX, AX
	INCQ AX
	IMULQ R8, AX
	ADDQ CX, AX
	SHLQ $3, AX
	ADDQ AX, DX // &wt[(s+1)·n + s]: start weights, n entries per v; the next entry begins into[]
	SHLQ $3, R8 // n·8
	MOVQ $0xFFF0000000000000, AX
	VMOVQ AX, X15
	MOVQ best+40(FP), AX
	VMOVSD  (AX), X14
	MOVQ at+48(FP), AX
	VMOVQ (AX), X13
	MOVQ $1, BX

cycleOneSet:
	MOVLQSX (SI)(BX*4), R9
	SHLQ    $3, R9
	ADDQ    DI, R9 // &P(T, first member)
	BLSRQ   BX, AX
	JNZ     cycleOneMany
	TZCNTQ  BX, AX
	IMULQ   R8, AX
	VMOVSD  (DX)(AX*1), X0
	VMOVSD  X0, (R9)
	JMP     cycleOneNext

cycleOneMany:
	MOVQ BX, R10 // members not yet ended at

cycleOneEnd:
	TZCNTQ  R10, AX // v
	BLSRQ   R10, R10
	MOVQ    BX, R11
	BTCQ    AX, R11 // T∖v
	MOVLQSX (SI)(R11*4), R12
	SHLQ    $3, R12
	ADDQ    DI, R12 // &P(T∖v, first member)
	MOVQ    AX, R13
	IMULQ   R8, R13
	LEAQ    8(DX)(R13*1), R13 // &wt[V·n + s+1]
	VMOVAPD X15, X0
	VMOVAPD X15, X1

cycleOneCand:
	TZCNTQ  R11, CX // l
	BLSRQ   R11, R11
	SHLQ    $3, CX
	VMOVSD  (R12), X2
	VADDSD  (R13)(CX*1), X2, X2
	VMAXSD  X2, X0, X0
	ADDQ    $8, R12
	TESTQ   R11, R11
	JZ      cycleOneCandDone
	TZCNTQ  R11, CX
	BLSRQ   R11, R11
	SHLQ    $3, CX
	VMOVSD  (R12), X3
	VADDSD  (R13)(CX*1), X3, X3
	VMAXSD  X3, X1, X1
	ADDQ    $8, R12
	TESTQ   R11, R11
	JNZ     cycleOneCand

cycleOneCandDone:
	VMAXSD    X1, X0, X0
	VMOVSD    X0, (R9)
	ADDQ      $8, R9
	MOVQ      8(SP), CX
	MOVQ      AX, R11
	SHLQ      $3, R11
	VADDSD    (CX)(R11*1), X0, X0 // the closed cycle
	VCMPPD    $0x1e, X14, X0, X1  // greater than best (ordered, quiet)
	VBLENDVPD X1, X0, X14, X14
	MOVQ      BX, CX
	SHLQ      $5, CX
	ORQ       AX, CX
	VMOVQ     CX, X2
	VBLENDVPD X1, X2, X13, X13
	TESTQ     R10, R10
	JNZ       cycleOneEnd

cycleOneNext:
	INCQ BX
	CMPQ BX, 0(SP)
	JLT  cycleOneSet
	MOVQ best+40(FP), AX
	VMOVSD X14, (AX)
	MOVQ at+48(FP), AX
	VMOVQ X13, (AX)
	VZEROUPPER
	RET
