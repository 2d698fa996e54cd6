package prob

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
)

// Fit's L-BFGS starts each two-loop recursion from H₀ = γP instead of γI, P a diagonal estimate
// of the inverse curvature of J in the solver's coordinates x = diag(s) W (rowScales). J's
// Hessian is Σ_i w_i x̃_i x̃_iᵀ ⊗ Cov_{p(·|x_i)}(ψ) / Σw plus 2λ on the penalised rows; P takes the
// variances σ_a of ψ's coordinates over the training structures for the model's, and X's Gram
// matrix by its diagonal (the features' mean squares v_j): row j and coordinate a then have the
// curvature
//
//	c_ja = (σ_a v_j + 2λ) / s_j²   (a feature's row),   c_a = σ_a + ε·σ̄   (the intercept's),
//
// and P divides by it. The intercept's row is not penalised, so that its curvature along a
// coordinate is about the coordinate's variance: for a taxonomy node on for one gene in 1,628
// (cellcycle_FUN), a thousandth of a common one's, and plain L-BFGS spent its iterations there
// (at α = 0.1 a relative gradient of 2.4e-5 after 3,000 iterations, 200 s, short of the default
// tol of 1e-6). ε·σ̄ (curvatureFloor times the mean σ) keeps the nodes never on, whose variance is
// 0 and whose intercepts have no finite optimum, from infinite steps. With P the fit met tol in
// 684 iterations (27 s), at a lower objective (15.9179059 against 15.9179153). On the label-ranking
// sets (Permutations, α = 10⁻³ and 0.1) the iterations were about as many with P as without
// (1,183 against 1,215 over twelve fits; authorship at α = 10⁻³ converged in 189 where it had
// stopped at the bound of 200). The full covariance of ψ in place of its diagonal took cellcycle
// to 299 iterations but the label-ranking fits to up to twice theirs: the training structures'
// covariance mixes in the variation of E[ψ | x] across the inputs, which is not curvature. The
// stopping rule, J and the optimum the fit reaches are unchanged: only the path.
const curvatureFloor = 1e-2

// curvaturePreconditioning switches P on (tests compare with plain L-BFGS).
var curvaturePreconditioning = true

// curvaturePrecond returns P for the rows of W (len(s) × d, the solver's coordinates with the
// row scales s; spread, p.spread()), applied as dst = P(src); nil where the training structures
// carry no variance.
func (p *Problem) curvaturePrecond(s, spread []float64) func(dst, src []float64) {
	if !curvaturePreconditioning {
		return nil
	}
	return curvaturePrecondOf(p.sp, p.structureVariances(), spread, p.lambda, s)
}

// curvaturePrecondOf is P from the variances sigma of ψ's coordinates over the training
// structures (overwritten), the features' spreads v (their root mean squares), λ and the row
// scales s: what Fit reads off its Problem, and FitSums is given (Options.Variances, Spread).
func curvaturePrecondOf(sp space.Space, sigma, v []float64, lambda float64, s []float64) func(dst, src []float64) {
	d := len(sigma)
	var mean float64
	for _, v := range sigma {
		mean += v / float64(d)
	}
	if !(mean > 0) {
		return nil // one distinct training structure: nothing to estimate the curvature from
	}
	drop := constantDirections(sp)
	if drop == nil && !constantsAreCoordinates(sp) {
		// Directions along which ψ is constant but which are no coordinates (HierarchyPaths and
		// DAGPaths of leaves only: a node's indicator minus its children's), and no projector
		// onto them: a coordinate-wise P would turn gradients orthogonal to them into steps along
		// them, which J's gradient there (2λW, nothing on the intercept's row) hardly removes: a
		// fit stopped at tol with 6.6 % of coef_'s norm there, off the minimum-norm optimum
		// (probe AT). Each row then takes one curvature, the mean over the coordinates.
		for a := range sigma {
			sigma[a] = mean
		}
	}
	factor := make([]float64, len(s)*d)
	for j := range s {
		f := factor[j*d : (j+1)*d]
		for a, sg := range sigma {
			c := sg + curvatureFloor*mean // the intercept's row
			if j < len(v) {
				c = (sg*v[j]*v[j] + 2*lambda) / (s[j] * s[j])
			}
			f[a] = 1
			if c > 0 && !math.IsInf(c, 0) {
				f[a] = 1 / c
			}
		}
	}
	// P keeps the iterates off the directions along which ψ is constant (multiclass' span(1), the
	// potentials of directed cycles), where L-BFGS from zero, its gradients orthogonal to them,
	// stays: the minimum-norm optimum (constantdirections.go). A diagonal scaling would leave them.
	return func(dst, src []float64) {
		for i, f := range factor {
			dst[i] = f * src[i]
		}
		for r := 0; drop != nil && r < len(s); r++ {
			drop(dst[r*d : (r+1)*d])
		}
	}
}

// VariancesOfMoments returns the weighted variance of each of ψ's d coordinates over structures
// spread over parts, from their moments added up over the parts: the weighted sums Σ s·ψ (the
// first d values), Σ s·ψ² (the next d) and the weight Σ s (the last). This is what FitSums takes
// as Options.Variances, as Fit reads the variances off its Problem (structureVariances). It
// returns nil, no preconditioning, where they do not exist in floating point (no weight, sums
// that overflowed); a negative or NaN weight, or moments of another length, are errors.
func VariancesOfMoments(moments []float64, d int) ([]float64, error) {
	if len(moments) != 2*d+1 {
		return nil, fmt.Errorf("the moments of ψ have %d values, want 2·d + 1 = %d", len(moments), 2*d+1)
	}
	total := moments[2*d]
	if !(total >= 0) {
		return nil, fmt.Errorf("the moments of ψ weigh %v in all; the weights' sum cannot be negative", total)
	}
	if total == 0 {
		return nil, nil
	}
	for _, v := range moments {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, nil
		}
	}
	out := make([]float64, d)
	for a := range out {
		mean := moments[a] / total
		out[a] = max(moments[d+a]/total-mean*mean, 0) // E[ψ²] − E[ψ]² rounds below 0 for a constant ψ
	}
	return out, nil
}

// structureVariances returns the weighted variance of each coordinate of ψ over the training
// structures.
func (p *Problem) structureVariances() []float64 {
	m, d := p.psiY.Dims()
	out := make([]float64, d)
	mean := xmat.WeightedMean(xmat.Matrix{Dense: p.psiY}, p.weights)
	if mean == nil {
		return out
	}
	var total float64
	for i := 0; i < m; i++ {
		w := 1.0
		if p.weights != nil {
			w = p.weights[i]
		}
		total += w
		for a, y := range p.psiY.RawRowView(i) {
			out[a] += w * (y - mean[a]) * (y - mean[a])
		}
	}
	floats.Scale(1/total, out)
	return out
}
