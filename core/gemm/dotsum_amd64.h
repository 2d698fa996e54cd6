// DOTZERO12 clears the twelve accumulators Y0–Y11 of dot2x6 and dot1x12.
#define DOTZERO12 \
	VXORPD Y0, Y0, Y0; \
	VXORPD Y1, Y1, Y1; \
	VXORPD Y2, Y2, Y2; \
	VXORPD Y3, Y3, Y3; \
	VXORPD Y4, Y4, Y4; \
	VXORPD Y5, Y5, Y5; \
	VXORPD Y6, Y6, Y6; \
	VXORPD Y7, Y7, Y7; \
	VXORPD Y8, Y8, Y8; \
	VXORPD Y9, Y9, Y9; \
	VXORPD Y10, Y10, Y10; \
	VXORPD Y11, Y11, Y11

// The end of the dot-product kernels (dot2x6, dot2x6z, dot1x12): each of twelve accumulators
// Y0–Y11 holds four partial sums of one product, added as (lane0 + lane2) + (lane1 + lane3) and
// stored at out + 8·index (out in AX); X12 and X13 are scratch. One definition, so that every
// kernel sums a product's lanes alike and a product does not depend on the kernel that took it.

#define DOTSUM(Y, X, off) \
	VEXTRACTF128 $1, Y, X12; \
	VADDPD X12, X, X; \
	VPERMILPD $1, X, X13; \
	VADDSD X13, X, X; \
	VMOVSD X, off(AX)

#define DOTSUM12 \
	DOTSUM(Y0, X0, 0); \
	DOTSUM(Y1, X1, 8); \
	DOTSUM(Y2, X2, 16); \
	DOTSUM(Y3, X3, 24); \
	DOTSUM(Y4, X4, 32); \
	DOTSUM(Y5, X5, 40); \
	DOTSUM(Y6, X6, 48); \
	DOTSUM(Y7, X7, 56); \
	DOTSUM(Y8, X8, 64); \
	DOTSUM(Y9, X9, 72); \
	DOTSUM(Y10, X10, 80); \
	DOTSUM(Y11, X11, 88)
