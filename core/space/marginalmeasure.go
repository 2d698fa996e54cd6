package space

import (
	"math"

	"github.com/combpred/combpred/core/logmath"
	"gonum.org/v1/gonum/mat"
)

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
	// TiltedMarginals writes into mean E[ψ] under the measure with mean p tilted by exp⟨θ, ψ⟩ and
	// returns log E[exp⟨θ, ψ⟩] under the measure itself (θ finite; a coordinate p holds at 0
	// stays at 0 whatever θ). It is safe for concurrent use.
	TiltedMarginals(p, theta, mean []float64) float64
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

// TiltedMarginals of independent labels: label j is on with probability p_j e^θ_j/(1 − p_j + p_j e^θ_j).
func (s *Multilabel) TiltedMarginals(p, theta, mean []float64) float64 {
	var lz float64
	for j, v := range p {
		on := logmath.Log(v) + theta[j]
		la := logmath.AddExp(logmath.Log(1-v), on)
		mean[j] = math.Exp(on - la)
		lz += la
	}
	return lz
}

// TiltedMarginals of the categorical measure: class k with probability ∝ p_k e^θ_k.
func (s *Multiclass) TiltedMarginals(p, theta, mean []float64) float64 {
	for k, v := range p {
		mean[k] = logmath.Log(v) + theta[k]
	}
	lz := logmath.SumExp(mean)
	for k, l := range mean {
		mean[k] = math.Exp(l - lz)
	}
	return lz
}

// TiltedMarginals of the distribution over paths: the path ends at z with probability r_z = p_z
// minus its children's p (0 where rounding leaves it below), tilted by e^(θ summed over the path);
// a node's marginal sums the ends in its subtree.
func (s *HierarchyPaths) TiltedMarginals(p, theta, mean []float64) float64 {
	t := s.t
	t.rootPathSums(theta, mean) // mean[z]: θ summed over the root path of z
	for z := range mean {
		r := p[z]
		for _, c := range t.children(z) {
			r -= p[c]
		}
		mean[z] = logmath.Log(max(r, 0)) + mean[z]
	}
	lz := logmath.SumExp(mean)
	for k := len(t.pre) - 1; k >= 0; k-- { // children before their parents
		v := t.pre[k]
		e := math.Exp(mean[v] - lz)
		for _, c := range t.children(v) {
			e += mean[c]
		}
		mean[v] = e
	}
	return lz
}

// TiltedMarginals of the branching measure: a child c of an included node joins with
// q_c = p_c/p_parent(c); tilted, with q_c e^(θ_c) A_c/(1 − q_c + q_c e^(θ_c) A_c), A_c the product of
// the same sums over c's children, computed upwards in the log domain, then the node marginals
// downwards. The root is in every structure.
func (s *Subtrees) TiltedMarginals(p, theta, mean []float64) float64 {
	t := s.t
	// in_v = θ_v + Σ_c log(1 − q_c + q_c e^(in_c)) over v's children lives in mean until the
	// downward pass, parents before children, replaces it by v's marginal
	in := mean
	la := make([]float64, len(p)) // log(1 − q_v + q_v e^(in_v))
	logQ := func(v int) (lq, lnot float64) {
		var q float64
		if pp := p[t.parent[v]]; pp > 0 {
			q = min(max(p[v]/pp, 0), 1)
		}
		return logmath.Log(q), math.Log1p(-q)
	}
	for k := len(t.pre) - 1; k >= 0; k-- {
		v := t.pre[k]
		in[v] = theta[v]
		for _, c := range t.children(v) {
			in[v] += la[c]
		}
		if v != t.root {
			lq, lnot := logQ(v)
			la[v] = logmath.AddExp(lnot, lq+in[v])
		}
	}
	lz := in[t.root]
	for _, v := range t.pre {
		if v == t.root {
			mean[v] = 1
			continue
		}
		lq, _ := logQ(v)
		mean[v] = mean[t.parent[v]] * math.Exp(lq+in[v]-la[v])
	}
	return lz
}

// zero clears a symmetric matrix.
func zero(m *mat.SymDense) {
	raw := m.RawSymmetric()
	for i := 0; i < raw.N; i++ {
		clear(raw.Data[i*raw.Stride+i : i*raw.Stride+raw.N])
	}
}
