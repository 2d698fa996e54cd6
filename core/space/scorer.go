package space

// Scorer is implemented by spaces that compute ⟨u, ψ(y)⟩ without writing ψ. The Markov chains
// score every uniform proposal (and the cycle chains every local move), and through Embed and a
// dot product that was most of a sampled fit's time: on Permutations(20) ψ's sign of each pair
// was a branch taken at random, on the cycle spaces ψ has n(n−1)/2 coordinates for n arcs.
//
// Score sums the non-zero terms of the dot product of u with Embed(y), in an order of the space's
// choosing (Permutations keeps ψ's, bit for bit). It is safe for concurrent use.
type Scorer interface {
	Score(u []float64, y []int64) float64
}

// Score returns ⟨u, ψ(y)⟩ through sp's Scorer, or by embedding y into psi (of length Dim) and
// taking the dot product.
func Score(sp Space, u []float64, y []int64, psi []float64) float64 {
	if s, ok := sp.(Scorer); ok {
		return s.Score(u, y)
	}
	sp.Embed(y, psi)
	var f float64
	for i, x := range u {
		f += x * psi[i]
	}
	return f
}
