package space

// DecodeCliquesApprox runs the approximate clique decoder whatever n is, so that the external
// tests can measure it against enumeration on small spaces.
func DecodeCliquesApprox(s *Cliques, u []float64, y []int64) { s.decodeApprox(u, y) }
