package gemm

// dot2x6 writes into out the twelve dot products of two rows of X (rows[0], rows[1]) with six rows
// of B (rows[2:8]), each of length n, in the order dot_amd64.s spells out; mask holds all ones in
// its first n mod 4 lanes. It needs AVX2 and FMA (haveFMA).
//
//go:noescape
func dot2x6(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64)

// dot2x6z is dot2x6 taking its terms eight at a time in 512-bit registers first (dot512_amd64.s);
// it needs AVX-512F (haveAVX512).
//
//go:noescape
func dot2x6z(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64)

// dot1x12 writes into out the twelve dot products of one row a of X with the rows b + c·stride
// (c = 0, …, 11) of B, each of length n, with dot2x6's arithmetic (dot_amd64.s): a product with
// one row of X, which dot2x6 would compute twice. It needs AVX2 and FMA (haveFMA).
//
//go:noescape
func dot1x12(a, b *float64, stride, n int, mask *[4]uint64, out *[12]float64)

// dot4x6z writes into out[6r + c] the dot product of row r of X (x + r·xStride, r = 0…3) with row c
// of B (b + c·bStride, c = 0…5), each of length n, with dot2x6z's arithmetic (dot4x6_amd64.s);
// maskBits has its low n mod 4 bits set. It needs AVX-512F and VL (haveAVX512).
//
//go:noescape
func dot4x6z(x *float64, xStride int, b *float64, bStride, n, maskBits int, out *[24]float64)

// dot4x6y is dot4x6z with dot2x6's arithmetic (four lanes from the first term): the same sums as
// dot2x6, for rows shorter than dotWideTerms. It needs AVX-512F and VL (haveAVX512).
//
//go:noescape
func dot4x6y(x *float64, xStride int, b *float64, bStride, n, maskBits int, out *[24]float64)
