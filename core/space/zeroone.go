package space

// ZeroOne is implemented by spaces whose feature map is an indicator: ψ(y) ∈ {0, 1}^Dim() for
// every structure (label sets, classes, node sets, the edges of undirected cycles and cliques).
// The Hamming distance between two structures is then a linear function of their ψ, which is what
// the Hamming decision rule minimises; permutations, tournaments and directed cycles, whose ψ holds
// −1 for a pair in the other order, do not implement it.
type ZeroOne interface {
	// PsiZeroOne reports whether every ψ(y) is in {0, 1}^Dim().
	PsiZeroOne() bool
}

// IsZeroOne reports whether every ψ(y) of sp is in {0, 1}^Dim().
func IsZeroOne(sp Space) bool {
	z, ok := sp.(ZeroOne)
	return ok && z.PsiZeroOne()
}

// ConstantNorm is implemented by spaces whose ‖ψ(y)‖² is the same for every structure
// (permutations: ψ ∈ {−1, 1}^Dim()). A loss ‖ψ(y) − ψ(z)‖² is then linear in ψ(z), which exact
// loss-augmented decoding needs where ψ is not an indicator.
type ConstantNorm interface {
	// PsiConstantNorm reports whether ‖ψ(y)‖² is the same for every y.
	PsiConstantNorm() bool
}

// IsConstantNorm reports whether ‖ψ(y)‖² is the same for every structure of sp.
func IsConstantNorm(sp Space) bool {
	c, ok := sp.(ConstantNorm)
	return ok && c.PsiConstantNorm()
}
