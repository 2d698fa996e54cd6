package ridge

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// centred returns d with X replaced by its rows minus their s-weighted mean μ, held explicitly
// with the intercept's column ([X − 1μᵀ 1], so withOnes needs no second copy), and μ; or d itself
// and nil when X is sparse (centring would densify it), there is no intercept, or the budget
// refuses the copy of m·(n+1) values.
//
// With an unpenalised intercept, centring changes nothing but the coordinates: W·x + b equals
// W·(x − μ) + (b + Wᵀμ) and the penalty reads W alone, so J has the same minimum at the same
// predictions (fromCentred maps it back). The iterative solvers need it: a constant added to
// the features (a year, an amount in cents) makes the intercept's column nearly parallel to X's,
// H badly conditioned and ∇J(0) large along that one direction, so that ‖∇J‖ ≤ tol·‖∇J(0)‖ was
// met far from the minimum: conjugate gradients stopped with scores 8·10⁻³ (shift 10⁴) and
// 10⁻¹ (shift 10⁵) from the exact ones' on yeast, without a warning, and took 13 times as many
// iterations at shift 100. Centred, the fit is the unshifted one's.
func (d design) centred(s []float64) (design, []float64) {
	if d.sp != nil || !d.intercept || d.X == nil {
		return d, nil
	}
	m, n := d.X.Dims()
	if m == 0 || budget.Check(fmt.Sprintf("a centred copy of X (%d samples × %d features)", m, n),
		budget.Mul(int64(m), int64(n+1), 8)) != nil {
		return d, nil
	}
	mu := make([]float64, n)
	var total float64
	for i := 0; i < m; i++ {
		if s[i] != 0 {
			floats.AddScaled(mu, s[i], d.X.RawRowView(i)[:n])
			total += s[i]
		}
	}
	if !(total > 0) {
		return d, nil
	}
	floats.Scale(1/total, mu)
	ones := mat.NewDense(m, n+1, nil)
	parallel.For(m, 1024, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			row := ones.RawRowView(i)
			floats.SubTo(row[:n], d.X.RawRowView(i)[:n], mu)
			row[n] = 1
		}
	})
	d.ones = ones
	d.X = ones.Slice(0, m, 0, n).(*mat.Dense)
	return d, mu
}

// toCentred rewrites W (rows: n features, then the intercept) for features centred at mu:
// b ← b + Wᵀμ. A nil mu leaves W as it is.
func toCentred(W *mat.Dense, mu []float64) { shiftIntercept(W, mu, 1) }

// fromCentred undoes toCentred: b ← b − Wᵀμ, the intercept of the same scores on X itself.
func fromCentred(W *mat.Dense, mu []float64) { shiftIntercept(W, mu, -1) }

func shiftIntercept(W *mat.Dense, mu []float64, sign float64) {
	if mu == nil || W == nil {
		return
	}
	n := len(mu)
	b := W.RawRowView(n)
	for j, v := range mu {
		if v != 0 {
			floats.AddScaled(b, sign*v, W.RawRowView(j))
		}
	}
}
