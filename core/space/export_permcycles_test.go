package space

// This file lets the external tests (package space_test) force the approximate decoders of
// permutations and cycles on sizes small enough to enumerate, where their realised z-factor can be
// measured against brute force.

// NewPermutationsApprox is NewPermutations with Decode always taking the approximate path.
func NewPermutationsApprox(n int) (*Permutations, error) {
	s, err := NewPermutations(n)
	if err == nil {
		s.setMode(DecoderApprox)
	}
	return s, err
}

// NewDirectedCyclesApprox is NewDirectedCycles with Decode always taking the approximate path.
func NewDirectedCyclesApprox(n int) (*DirectedCycles, error) {
	s, err := NewDirectedCycles(n)
	if err == nil {
		s.setMode(DecoderApprox)
	}
	return s, err
}

// NewUndirectedCyclesApprox is NewUndirectedCycles with Decode always taking the approximate path.
func NewUndirectedCyclesApprox(n int) (*UndirectedCycles, error) {
	s, err := NewUndirectedCycles(n)
	if err == nil {
		s.setMode(DecoderApprox)
	}
	return s, err
}
