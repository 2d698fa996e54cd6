// Shared parts of the panel kernels (panel_amd64.s, panel512_amd64.s), whose arguments all begin
// (a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, …).

// PANEL_A loads what walks the terms: the four rows of A (SI, DI, R8, R9), their step in bytes
// (R10), B (R11) and its row step in bytes (R12).
#define PANEL_A \
	MOVQ a+0(FP), AX; \
	MOVQ 0(AX), SI; \
	MOVQ 8(AX), DI; \
	MOVQ 16(AX), R8; \
	MOVQ 24(AX), R9; \
	MOVQ aStep+8(FP), R10; \
	SHLQ $3, R10; \
	MOVQ b+16(FP), R11; \
	MOVQ bStep+24(FP), R12; \
	SHLQ $3, R12

// PANEL_C loads the four rows of the block of C (R13, BX, DX, AX).
#define PANEL_C \
	MOVQ c+40(FP), AX; \
	MOVQ 0(AX), R13; \
	MOVQ 8(AX), BX; \
	MOVQ 16(AX), DX; \
	MOVQ 24(AX), AX

// PANEL_NEXT moves the rows of A and B on to the next term and counts it down (CX).
#define PANEL_NEXT \
	ADDQ R10, SI; \
	ADDQ R10, DI; \
	ADDQ R10, R8; \
	ADDQ R10, R9; \
	ADDQ R12, R11; \
	DECQ CX
