package ridge

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// centred returns d with X replaced by its rows minus their s-weighted mean μ, held explicitly
// with the intercept's column ([X − 1μᵀ 1], so withOnes needs no second copy), and μ; or d itself
// and nil when X is sparse (centring would densify it), there is no intercept, or the budget
// refuses the copy of m·(n+1) values. Centred, conjugate gradients and SGD fit X + c as they fit
// X (xmat.WeightedMean says why they need it); uncentred, conjugate gradients took 13 times the
// iterations at X + 100 on yeast and stopped 8·10⁻³ from the minimum at X + 10⁴.
func (d design) centred(s []float64) (design, []float64) {
	if d.sp != nil || !d.intercept || d.X == nil {
		return d, nil
	}
	m, n := d.X.Dims()
	if m == 0 || budget.Check(fmt.Sprintf("a centred copy of X (%d samples × %d features)", m, n),
		budget.Mul(int64(m), int64(n+1), 8)) != nil {
		return d, nil
	}
	mu := xmat.WeightedMean(xmat.Matrix{Dense: d.X}, s)
	if mu == nil {
		return d, nil
	}
	ones := mat.NewDense(m, n+1, nil)
	xmat.CentreInto(ones, d.X, mu)
	for i := 0; i < m; i++ {
		ones.Set(i, n, 1)
	}
	if check.FiniteMagnitude("X", ones.RawMatrix().Data, n+1) != nil {
		return d, nil // centred values up to twice X's: let X's own bounds hold
	}
	d.ones = ones
	d.X = ones.Slice(0, m, 0, n).(*mat.Dense)
	return d, mu
}

// statsShift is the shift of an exact fit's statistics (linearStats.shift): with an intercept, the
// s-weighted mean of the first chunk's rows, dense or sparse (the statistics take every row
// densely anyway). Unshifted, the normal equations of X + 10⁵ on yeast gave scores 10⁻³ from the
// minimum's, and a J below it; the mean of every later chunk is near enough.
func (d design) statsShift(s []float64) []float64 {
	if !d.intercept {
		return nil
	}
	return xmat.WeightedMean(d.input(), s)
}
