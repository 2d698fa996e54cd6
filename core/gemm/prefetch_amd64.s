#include "textflag.h"

// func prefetchRows(p *float64, stride, rows, lines int)
//
// Asks for the first lines cache lines (64 bytes each) of rows rows that start stride values
// apart from p, to be brought into the first level of cache.
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ stride+8(FP), R8
	SHLQ $3, R8
	MOVQ rows+16(FP), CX
	MOVQ lines+24(FP), DX
	TESTQ CX, CX
	JLE  done
	TESTQ DX, DX
	JLE  done

row:
	MOVQ SI, DI
	MOVQ DX, BX

line:
	PREFETCHT0 (DI)
	ADDQ $64, DI
	DECQ BX
	JNZ  line
	ADDQ R8, SI
	DECQ CX
	JNZ  row

done:
	RET
