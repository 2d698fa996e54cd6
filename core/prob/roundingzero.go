package prob

import (
	"math"

	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// roundingAtZero bounds the rounding of ∇J(0) in the solvers' coordinates W' = diag(s) W
// (rowScales): its data term (1/m) Σ_i w_i x̃_i (E₀[ψ] − ψ(y_i))ᵀ, E₀ the uniform mean (the model at
// W = 0), sums m terms, and a sum of m terms is exact to m·2⁻⁵² times the sum of their norms,
// which Cauchy–Schwarz bounds by the features' spreads (featureSpread, about the fit's centre):
// Σ_i w_i ‖x̃_i'‖‖δ_i‖ ≤ (Σ_i w_i ‖x̃_i'‖²)^½ (Σ_i w_i ‖δ_i‖²)^½ (spread: p.spread()). A gradient at W = 0 no larger is 0
// as far as float64 can tell, and so is the optimum: on X = 0 with balanced classes it came out at
// 1e-17, L-BFGS could not lower it, ran max_iter along the scores' constant direction (every
// intercept at −17) and advised more iterations (probe FC).
func (p *Problem) roundingAtZero(s, spread []float64) float64 {
	if p.m == 0 {
		return 0
	}
	weights := spreadWeights(p.weights, p.m)
	var features float64 // Σ_j (spread_j / s_j)² + the intercept's 1, per unit of weight
	for j, v := range spread {
		features += (v / s[j]) * (v / s[j])
	}
	if p.intercept {
		features += 1 / (s[len(s)-1] * s[len(s)-1])
	}
	d := p.sp.Dim()
	mean, delta := make([]float64, d), make([]float64, d)
	p.sp.Mean(mean)
	var total, deltas float64
	for i, w := range weights {
		floats.SubTo(delta, mean, p.psiY.RawRowView(i))
		total += w
		deltas += w * floats.Dot(delta, delta)
	}
	return 0x1p-52 * math.Sqrt(total*features) * math.Sqrt(deltas) // m·2⁻⁵² times the mean's (1/m)·Σ
}

// gradientAtZero writes ∇J(0) (Cols()×Dim()) into grad exactly, whatever the inference: at W = 0
// every row's model is the uniform measure, whose mean E₀[ψ] the space knows. A sampled fit took
// it from its first gradient, at the warm start's W (a relative gradient 20–170 times too large
// after a warm start, with advice to lower learning_rate, probe FK) and from one minibatch's
// samples.
func (p *Problem) gradientAtZero(grad *mat.Dense) {
	d := p.sp.Dim()
	sc := p.takeScratch(p.m, d)
	defer p.scratch.Store(sc)
	G := mat.NewDense(p.m, d, sc.g[:p.m*d])
	mean := make([]float64, d)
	p.sp.Mean(mean)
	for i := 0; i < p.m; i++ {
		w := 1.0
		if p.weights != nil {
			w = p.weights[i]
		}
		g, py := G.RawRowView(i), p.psiY.RawRowView(i)
		for j := range g {
			g[j] = w * (mean[j] - py[j])
		}
	}
	gradientProductX(grad, p.X, G, p.intercept)
	if p.implicit && p.centre != nil {
		xmat.CentreTMul(grad, p.centre)
	}
	grad.Scale(1/float64(p.m), grad)
}
