// Shared parts of the panel kernels (panel_amd64.s, panel512_amd64.s; panel8_amd64.s takes
// PANEL_MASK), whose arguments all begin (a *[4]*float64, aStep int, b *float64, bStep, n int,
// c *[4]*float64, …), the eight-row kernels' with *[8]*float64 in place of *[4]*float64.

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

// PANEL_MASK loads the masked kernels' mask of the last register's columns into K1 (the
// argument after init, in the four- and eight-row kernels alike).
#define PANEL_MASK \
	MOVQ mask+56(FP), R14; \
	KMOVW R14, K1

// PANEL_PREFETCH asks for the rows of A 4096 bytes ahead of the term being added: rows of a tall X
// go by in groups of four, a few hundred bytes each, too short for the processor's own prefetchers
// to run ahead of them. X·W at 200,000 × 50 by 20 on a Zen 5, one thread: 45 GFLOP/s without, 58
// with 1 KB ahead, 72 with 2 KB, 84 with 4 KB, 86 with 6 KB (two threads 84 → 145; the 256-bit
// kernels 31 → 55); a Nyström map's X·W (12,384 × 1,501 by 6) 21 → 26; products in cache alike.
// A's rows are contiguous (X), a packed buffer (packGroups) or a narrow transposed operand read in
// place (packNarrow, whose four rows share a line a term), so the addresses ahead are the next
// rows' or the next terms'. B streams in MulTN's slabs, but asking for it too cost the products
// whose B stays in cache (1,000 outputs: 15 %).
#define PANEL_PREFETCH \
	PREFETCHT0 4096(SI); \
	PREFETCHT0 4096(DI); \
	PREFETCHT0 4096(R8); \
	PREFETCHT0 4096(R9)

// PANEL_NEXT moves the rows of A and B on to the next term and counts it down (CX).
#define PANEL_NEXT \
	ADDQ R10, SI; \
	ADDQ R10, DI; \
	ADDQ R10, R8; \
	ADDQ R10, R9; \
	ADDQ R12, R11; \
	DECQ CX
