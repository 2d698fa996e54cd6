package space

import "gonum.org/v1/gonum/mat"

// MarginalMeasure is implemented by spaces with a measure on Y that is fixed by its mean p alone
// and whose covariance has a closed form: independent labels (Multilabel, a product of
// Bernoulli(p_j)), a branching process down the tree (Subtrees: a node's children join
// independently, child c with probability q_c = p_c/p_parent(c), so the measure is the
// exponential family of per-node fugacities whose node marginals are p), and the categorical
// measures of Multiclass and HierarchyPaths, the only measures with mean p there. StructuredRidge's
// "product" reference measure (core/ridge/reference.go) fits it to the mean of the training
// structures: it matches their marginals, where the empirical measure matches every moment and
// the uniform one none.
type MarginalMeasure interface {
	// MarginalCovariance writes the covariance of ψ under the measure with mean p into cov (d×d).
	// p must be a mean of structures (any mixture of them has one); it is not checked.
	MarginalCovariance(p []float64, cov *mat.SymDense)
}

// MarginalCovariance is diag(p(1 − p)): the labels are independent.
func (s *Multilabel) MarginalCovariance(p []float64, cov *mat.SymDense) {
	zero(cov)
	for a, v := range p {
		cov.SetSym(a, a, v*(1-v))
	}
}

// MarginalCovariance is diag(p) − ppᵀ, the categorical distribution's.
func (s *Multiclass) MarginalCovariance(p []float64, cov *mat.SymDense) {
	for a := range p {
		for b := a; b < len(p); b++ {
			v := -p[a] * p[b]
			if a == b {
				v += p[a]
			}
			cov.SetSym(a, b, v)
		}
	}
}

// MarginalCovariance is that of the distribution over nodes whose path marginals are p (z = v with
// probability p_v minus its children's p): u and v are both on the path iff z lies below the
// deeper of them when they are comparable, so E[ψ_u ψ_v] = p_deeper, and 0 otherwise.
func (s *HierarchyPaths) MarginalCovariance(p []float64, cov *mat.SymDense) {
	t := s.t
	for a := range p {
		for b := a; b < len(p); b++ {
			var both float64
			switch {
			case t.ancestorOrSelf(a, b):
				both = p[b]
			case t.ancestorOrSelf(b, a):
				both = p[a]
			}
			cov.SetSym(a, b, both-p[a]*p[b])
		}
	}
}

// MarginalCovariance is that of the branching measure with node marginals p: u and v are both in
// iff the union of their root paths is, and the children below w = lca(u, v) join independently,
// so P(u, v in) = p_u p_v / p_w (the uniform measure's formula with its own p, see Subtrees), and
// 0 when p_w = 0 (then p_u = p_v = 0).
func (s *Subtrees) MarginalCovariance(p []float64, cov *mat.SymDense) {
	t := s.t
	for a := range p {
		for b := a; b < len(p); b++ {
			var both float64
			if w := p[t.lca(a, b)]; w > 0 {
				both = p[a] * p[b] / w
			}
			cov.SetSym(a, b, both-p[a]*p[b])
		}
	}
}

// zero clears a symmetric matrix.
func zero(m *mat.SymDense) {
	raw := m.RawSymmetric()
	for i := 0; i < raw.N; i++ {
		clear(raw.Data[i*raw.Stride+i : i*raw.Stride+raw.N])
	}
}
