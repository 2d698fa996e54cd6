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
