package prob

import (
	"math"

	"github.com/combpred/combpred/core/xmat"
)

// rowScales returns the scale s_r of each row of W (the n features, then the intercept's) in
// which Fit's solvers work: they minimise J over W' = diag(s) W, so that a feature's
// coefficients move in units of that feature's spread, and they stop on the relative gradient
// in those coordinates, ‖diag(s)⁻¹ ∇J‖ ≤ Tol·‖diag(s)⁻¹ ∇J(0)‖ (J itself, and so its minimum, is
// unchanged). s_j is the power of two nearest √(v_j + 2λ), with v_j the weighted mean square of
// feature j about the centre the fit uses (about 0 without an intercept; featureSpread): J's
// curvature along row j is about κ·v_j + 2λ, κ the covariance of ψ under the model (≤ 1 for 0/1
// coordinates), so that every row, the intercept's (s = 1, curvature κ) among them, has a
// curvature between min(κ, 1)/2 and 2·max(κ, 1) in the new coordinates.
//
// Without it, a feature on a scale c far from 1 dominated the gradient: its coefficients' part
// grows like c and the intercept's does not, so at c = 10⁶ L-BFGS met Tol with the intercept
// and the unit-scale features unfitted (objective 0.33 where 2·10⁻⁴ is reachable, 93 % of the
// training structures reproduced), without a warning, and at c = 10⁻⁸ the other way round; Adam's
// steps, in coefficient units, overshot a model on X·10¹² by twelve orders of magnitude.
func (p *Problem) rowScales() []float64 {
	return rowScalesOf(p.spread(), p.lambda, p.intercept)
}

// spread is featureSpread about the centre the fit uses.
func (p *Problem) spread() []float64 {
	var centre []float64 // subtracted here; a centred copy of X is already centred
	if p.implicit {
		centre = p.centre
	}
	return p.featureSpread(centre)
}

// rowScalesOf is rowScales from the features' spreads (featureSpread's root mean squares),
// the penalty λ and whether W has an intercept's row (scale 1). A scale that is not positive
// and finite is 1.
func rowScalesOf(spread []float64, lambda float64, intercept bool) []float64 {
	rows := len(spread)
	if intercept {
		rows++
	}
	s := make([]float64, rows)
	for r := range s {
		s[r] = 1
	}
	root2Lambda := math.Sqrt(2) * math.Sqrt(lambda) // √(2λ) without overflowing 2λ
	for j, v := range spread {
		if sj := math.Hypot(v, root2Lambda); sj > 0 && !math.IsInf(sj, 0) && !math.IsNaN(sj) {
			s[j] = nearestPowerOfTwo(sj)
		}
	}
	return s
}

// nearestPowerOfTwo returns the power of two nearest to x > 0 in ratio. The solvers' scales are
// powers of two, so that W' = diag(s) W and the gradient's diag(s)⁻¹ ∇J are exact: spreads equal up
// to rounding (a sparse X's and its dense copy's, weights and repeated rows) then give the same
// coordinates and the same iterates, as identity scales did, where scales differing in the last bit
// moved a fit at tol 1e-10 by 1.4e-10.
func nearestPowerOfTwo(x float64) float64 {
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac in [½, 1)
	if frac < math.Sqrt2/2 {
		exp--
	}
	return math.Ldexp(1, exp)
}

// featureSpread returns, for each feature j, the weighted root mean square of x_ij − centre[j] (of
// x_ij when centre is nil), each positive weight counted as at least SpreadWeightFloor times the
// largest: with equal weights, the spread of the rows; with integer weights, that of the rows
// repeated. A dense X's squares are taken relative to the column's largest magnitude, so that
// values near 1e154 do not overflow; a sparse X's through its column sums (Σ s x² − 2c Σ s x +
// Σs c², its entries bounded by NewProblemCSR's magnitude check).
func (p *Problem) featureSpread(centre []float64) []float64 {
	n, m := p.n, p.m
	weights := spreadWeights(p.weights, m)
	var total float64
	for _, w := range weights {
		total += w
	}
	out := make([]float64, n)
	if !(total > 0) {
		return out
	}
	if p.X.Sparse != nil {
		p.X.Sparse.ColumnSquareSums(weights, out)
		var mean []float64
		if centre != nil {
			mean = xmat.WeightedMean(p.X, weights)
		}
		for j := range out {
			v := out[j] / total
			if mean != nil {
				v += centre[j] * (centre[j] - 2*mean[j])
			}
			out[j] = math.Sqrt(math.Max(0, v))
		}
		return out
	}
	X := p.X.Dense
	top := make([]float64, n)
	for i := 0; i < m; i++ {
		for j, v := range X.RawRowView(i) {
			if centre != nil {
				v -= centre[j]
			}
			top[j] = math.Max(top[j], math.Abs(v))
		}
	}
	for i, w := range weights {
		if w == 0 {
			continue
		}
		for j, v := range X.RawRowView(i) {
			if centre != nil {
				v -= centre[j]
			}
			if top[j] > 0 {
				q := v / top[j]
				out[j] += w * q * q
			}
		}
	}
	for j := range out {
		out[j] = top[j] * math.Sqrt(out[j]/total)
	}
	return out
}

// SpreadWeightFloor is the least share of the largest weight that a positive weight counts for in
// featureSpread (and in the spreads a distributed fit passes to FitSums, which Python reads from
// the schema). Counted as given, one weight 10³⁰⁸ times the others left a spread about the
// weighted mean of 10⁻¹⁵⁴, of rows whose terms of J are below its rounding, and the first L-BFGS
// step, of unit length in those coordinates, put 10¹⁵ into the coefficients.
const SpreadWeightFloor = 0x1p-20

// spreadWeights returns the weights featureSpread counts: nil's ones, or weights with every
// positive one raised to at least SpreadWeightFloor times the largest.
func spreadWeights(weights []float64, m int) []float64 {
	out := make([]float64, m)
	if weights == nil {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	var top float64
	for _, w := range weights {
		top = math.Max(top, w)
	}
	for i, w := range weights {
		if w > 0 {
			out[i] = math.Max(w, SpreadWeightFloor*top)
		}
	}
	return out
}

// scaleRows multiplies row r of x (rows of d values, row-major) by s[r], or divides it when
// inverse is set: W to W' = diag(s) W and back, or a gradient ∇J to diag(s)⁻¹ ∇J (inverse).
func scaleRows(x, s []float64, d int, inverse bool) {
	for r, sr := range s {
		f := sr
		if inverse {
			f = 1 / sr
		}
		row := x[r*d : (r+1)*d]
		for a := range row {
			row[a] *= f
		}
	}
}

// inScaledRows returns eval in the coordinates W' = diag(s) W: it evaluates eval at diag(s)⁻¹ x'
// and writes the gradient diag(s)⁻¹ ∇J, the gradient in those coordinates, into g.
func inScaledRows(eval func(x, g []float64) (float64, error), s []float64, d int) func(x, g []float64) (float64, error) {
	w := make([]float64, len(s)*d)
	return func(x, g []float64) (float64, error) {
		copy(w, x)
		scaleRows(w, s, d, true)
		f, err := eval(w, g)
		if err == nil {
			scaleRows(g, s, d, true)
		}
		return f, err
	}
}
