package prob

import (
	"errors"
	"math"
)

// lbfgsMemory is the number of curvature pairs L-BFGS keeps.
const lbfgsMemory = 10

// errLineSearch ends minimizeLBFGS when no step along the search direction decreases f any more,
// which near the optimum means rounding has taken over.
var errLineSearch = errors.New("line search found no decrease")

// minimizeLBFGS minimises a smooth function by limited-memory BFGS (two-loop recursion, initial
// inverse Hessian γP, P = precond (nil: the identity) and γ = sᵀy/yᵀPy, or the step of unit
// length at the start) with a backtracking line search accepting the Armijo condition
// f(x+αd) ≤ f + 10⁻⁴ α gᵀd, or, when rounding hides the decrease of f near the optimum, the
// approximate Wolfe conditions of Hager and Zhang (f(x+αd) ≤ f + 10⁻¹²|f| and
// 0.9 gᵀd ≤ g(x+αd)ᵀd ≤ −0.8 gᵀd). Curvature pairs with sᵀy ≤ 0 are skipped. x is updated in place.
// eval writes ∇f(x) into g and returns f(x). After every iteration record is called; a non-nil
// error stops the run and is returned. maxIter bounds the iterations.
//
// gonum/optimize's LBFGS would serve, but importing gonum/optimize pulls golang.org/x/tools into
// go.sum (through stat/distmv); this file keeps the module's dependencies as they are.
func minimizeLBFGS(x []float64, eval func(x, g []float64) (float64, error), maxIter int,
	record func(iter int, f float64, g []float64) error, precond func(dst, src []float64)) (int, error) {
	n := len(x)
	g := make([]float64, n)
	f, err := eval(x, g)
	if err != nil {
		return 0, err
	}
	S := make([][]float64, 0, lbfgsMemory)
	Y := make([][]float64, 0, lbfgsMemory)
	rho := make([]float64, 0, lbfgsMemory)
	alpha := make([]float64, lbfgsMemory)
	d := make([]float64, n)
	var pd, pyk []float64 // precond's outputs
	if precond != nil {
		pd, pyk = make([]float64, n), make([]float64, n)
	}
	xn := make([]float64, n)
	gn := make([]float64, n)
	for it := 1; it <= maxIter; it++ {
		// d = −H g by the two-loop recursion.
		for i := range d {
			d[i] = -g[i]
		}
		for k := len(S) - 1; k >= 0; k-- {
			alpha[k] = rho[k] * dot(S[k], d)
			for i := range d {
				d[i] -= alpha[k] * Y[k][i]
			}
		}
		if precond != nil {
			precond(pd, d)
			d, pd = pd, d
		}
		gamma := 1.0
		if k := len(S) - 1; k >= 0 {
			py := Y[k]
			if precond != nil {
				precond(pyk, Y[k])
				py = pyk
			}
			gamma = dot(S[k], Y[k]) / dot(Y[k], py)
		} else if dn2 := norm2(d); dn2 > 0 {
			gamma = 1 / dn2 // first step: unit length
		}
		for i := range d {
			d[i] *= gamma
		}
		for k := 0; k < len(S); k++ {
			beta := rho[k] * dot(Y[k], d)
			for i := range d {
				d[i] += (alpha[k] - beta) * S[k][i]
			}
		}
		gd := dot(g, d)
		if !(gd < 0) { // not a descent direction: restart from steepest descent
			S, Y, rho = S[:0], Y[:0], rho[:0]
			gamma = 1 / math.Max(norm2(g), math.SmallestNonzeroFloat64)
			for i := range d {
				d[i] = -gamma * g[i]
			}
			gd = dot(g, d)
			if !(gd < 0) {
				return it - 1, nil // g = 0
			}
		}
		step := 1.0
		var fn float64
		accepted := false
		for tries := 0; tries < 60; tries++ {
			for i := range x {
				xn[i] = x[i] + step*d[i]
			}
			if fn, err = eval(xn, gn); err != nil {
				if !errors.Is(err, errScoresNotFinite) && !errors.Is(err, errScoresOutOfRange) {
					return it, err
				}
				// A trial point whose scores overflow is a step too long, not an error of the
				// inputs, which gave finite scores at x: on X near 1e-300 without an intercept the
				// fit stopped at its first step with "row 0: score u[0] = NaN" (probe DJ).
				fn = math.Inf(1)
			}
			if fn <= f+1e-4*step*gd {
				accepted = true
				break
			}
			if gnd := dot(gn, d); fn <= f+1e-12*math.Abs(f) && gnd >= 0.9*gd && gnd <= -0.8*gd {
				accepted = true
				break
			}
			step = backtrack(step, f, fn, gd)
		}
		if !accepted {
			return it - 1, errLineSearch
		}
		s := make([]float64, n)
		y := make([]float64, n)
		for i := range s {
			s[i] = xn[i] - x[i]
			y[i] = gn[i] - g[i]
		}
		if sy := dot(s, y); sy > 1e-12*norm2(s)*norm2(y) {
			if len(S) == lbfgsMemory {
				S, Y, rho = S[1:], Y[1:], rho[1:]
			}
			S, Y, rho = append(S, s), append(Y, y), append(rho, 1/sy)
		}
		copy(x, xn)
		copy(g, gn)
		f = fn
		if err := record(it, f, g); err != nil {
			return it, err
		}
	}
	return maxIter, nil
}

// backtrack returns the next trial step after step failed the Armijo test with value fn (f and
// the slope gd at 0): the minimiser of the quadratic through f, gd and fn, kept within
// [step/10, step/2] (Nocedal & Wright's safeguard), or step/2 when fn is not finite. Halving
// alone took 60 tries to reach 1e-18 and failed the first step of a fit with alpha = 1e20, whose
// penalty needs steps near 1e-20: the fit stopped at its starting point.
func backtrack(step, f, fn, gd float64) float64 {
	curv := fn - f - gd*step
	if math.IsNaN(curv) || math.IsInf(curv, 0) || curv <= 0 {
		return step / 2
	}
	return math.Min(step/2, math.Max(step/10, -gd*step*step/(2*curv)))
}
