package gemm

// fma4x12, fma4x8 and fma4x4 add to a 4×w block of C (rows c[0..3], w = 12, 8, 4 columns) the
// products of four rows of A, whose element l is at a[r] + l·aStep, with n rows of B, whose row l
// starts at b + l·bStep, in the order panel_amd64.s spells out; fma4x8 and fma4x4 read and write
// the lanes of their last vector that mask selects; with init not nil, each row's sums start from
// init's values instead of the block's, which is then never read. They need AVX2 and FMA (haveFMA).
//
//go:noescape
func fma4x12(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64)

//go:noescape
func fma4x8(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64)

//go:noescape
func fma4x4(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, mask *[4]uint64, init *float64)

// fma4x24 is fma4x12 on 24 columns in 512-bit registers (panel512_amd64.s); it needs AVX-512F
// (haveAVX512).
//
//go:noescape
func fma4x24(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64)

// fma4x16m and fma4x24m are fma4x24 on 9–16 and 17–24 columns (panel512_amd64.s): the last
// 512-bit register of each row holds the columns that mask selects (bit k: the k-th column of that
// register), and its other lanes of b, c and init are neither read nor written. A thin product
// (14 or 20 outputs) ran the 256-bit kernels on them, at about half of what the 512-bit ones reach
// (yeast's 14 labels: fma4x12 and a masked fma4x4). They need AVX-512F (haveAVX512).
//
//go:noescape
func fma4x16m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)

//go:noescape
func fma4x24m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)

// fma4x8m is fma4x24 on 1–8 columns, one 512-bit register a row (panel512_amd64.s, which says
// how often it prefetches); it needs AVX-512F (haveAVX512). Against fma4x8's two 256-bit registers
// and four prefetches every term, alternated, a Nyström map's X·W (12,384 × 1,501 by 6) went from
// 23.9 to 27.3 GFLOP/s on one thread and from 37.5 to 40 on two (medians of 10; prefetching at
// every term, 24.5 and 41).
//
//go:noescape
func fma4x8m(a *[4]*float64, aStep int, b *float64, bStep, n int, c *[4]*float64, init *float64, mask uint64)

// fma8x16m and fma8x8m are fma4x16m and fma4x8m on eight rows of A and C (panel8_amd64.s, which
// says why): each entry of C gets the same operations as under the four-row kernels. They need
// AVX-512F (haveAVX512).
//
//go:noescape
func fma8x16m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64)

//go:noescape
func fma8x8m(a *[8]*float64, aStep int, b *float64, bStep, n int, c *[8]*float64, init *float64, mask uint64)

// fma1x64 is fma4x24 for one row of A (a, c: the row's first element and block) on 64 columns
// (panel512_amd64.s); it needs AVX-512F (haveAVX512).
//
//go:noescape
func fma1x64(a *float64, aStep int, b *float64, bStep, n int, c *float64, init *float64)

// prefetchRows asks for the first lines cache lines of rows rows, stride values apart from p
// (prefetch_amd64.s): a hint, which reads nothing and cannot fault.
//
//go:noescape
func prefetchRows(p *float64, stride, rows, lines int)
