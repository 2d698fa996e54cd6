package ridge

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
)

// maxPrecondCondition bounds the condition number of the blocks that the exact Kronecker
// preconditioners (spectralPrecond, kronPrecond, dualPrecond) invert. Beyond it the penalty is
// negligible against the data's curvature (α = 1e-300, or sample weights of 1e300), and an exact
// inverse amplifies rounding along the directions the data leave flat by up to 1/2α: CG then
// stopped at its first step with the model at zero. Such fits take the diagonal preconditioner
// (diagGramPrecond), which never mixes coordinates, so that a direction without data keeps a
// residual of exactly zero.
const maxPrecondCondition = 1e12

// errIllConditioned reports a preconditioner whose blocks exceed maxPrecondCondition; the
// callers fall back to the diagonal one.
var errIllConditioned = errors.New("ridge: the preconditioner's blocks are too ill-conditioned")

// wellConditioned reports whether the symmetric a (its upper triangle read) and its inverse inv
// (held whole) have a 1-norm condition number ‖a‖₁‖inv‖₁ within maxPrecondCondition.
func wellConditioned(a, inv blas64.General) bool {
	c := upperNorm1(a) * norm1(inv)
	return c <= maxPrecondCondition // false for NaN too
}

// norm1 is the largest absolute row sum of a (its 1-norm when a is symmetric).
func norm1(a blas64.General) float64 {
	var top float64
	for i := 0; i < a.Rows; i++ {
		var s float64
		for _, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			s += math.Abs(v)
		}
		if math.IsNaN(s) {
			return s
		}
		top = math.Max(top, s)
	}
	return top
}

// upperNorm1 is the 1-norm of the symmetric matrix whose upper triangle a holds.
func upperNorm1(a blas64.General) float64 {
	n := a.Rows
	sums := make([]float64, n)
	for i := 0; i < n; i++ {
		for j, v := range a.Data[i*a.Stride+i : i*a.Stride+n] {
			sums[i] += math.Abs(v)
			if j > 0 {
				sums[i+j] += math.Abs(v)
			}
		}
	}
	var top float64
	for _, s := range sums {
		if math.IsNaN(s) {
			return s
		}
		top = math.Max(top, s)
	}
	return top
}

// spreadWithin reports whether the positive values v (the diagonal blocks of a preconditioner in
// an eigenbasis) span at most maxPrecondCondition: max v / min v.
func spreadWithin(v []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo > 0 && hi <= maxPrecondCondition*lo
}
