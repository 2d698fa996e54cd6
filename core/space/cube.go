package space

// Cube is implemented by spaces whose structures are every 0/1 vector of length Dim(), with
// ψ(y) = y. The coordinates of p(y) ∝ exp⟨u, ψ(y)⟩ are then independent, log Z(u) is
// Σ_a log(1 + e^{u_a}), and a model with scores linear in its parameters is one binary logistic
// regression per coordinate (the probabilistic model fits them column by column).
type Cube interface {
	// IsCube reports whether the space is the whole cube {0, 1}^Dim() with ψ(y) = y.
	IsCube() bool
}

// IsCube reports whether s is the whole cube {0, 1}^Dim() with ψ(y) = y.
func IsCube(s Space) bool {
	c, ok := s.(Cube)
	return ok && c.IsCube()
}

// IsCube is true: a multi-label structure is any subset of the labels, ψ its indicator vector.
func (s *Multilabel) IsCube() bool { return true }
