package xmat

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/check"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Centring a dense X before a fit with an unpenalised intercept changes the coordinates of the
// model and nothing else: W·x + b = W·(x − μ) + (b + Wᵀμ), and the penalty reads W alone. The
// iterative solvers need it: a constant added to the features (a year, an amount in cents) makes
// the intercept's column nearly parallel to X's and the problem badly conditioned, and they met
// their relative-gradient tolerance far from the minimum, without a warning (StructuredRidge's
// conjugate gradients 0.1 away on yeast at X + 10⁵, ProbabilisticStructured's L-BFGS 0.085 in
// probability at X + 10³).

// WeightedMean returns the mean of X's rows (dense or sparse) weighted by s (nil: unit weights),
// or nil when a weight is not finite and ≥ 0 or they sum to no positive finite number (the fit's
// validation then names them). The weights count in units of their largest's binade, exactly: the
// mean does not depend on their scale, and weights summing below 1e-308 made 1/Σs overflow, which
// left X uncentred (ProbabilisticStructured then ran to max_iter where weights of 1 took 16
// iterations; probe BZ).
func WeightedMean(X Matrix, s []float64) []float64 {
	m, n := X.Dims()
	var top float64
	for _, w := range s {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil
		}
		top = max(top, w)
	}
	s, _ = check.ToUnitBinade(s, top)
	mu := make([]float64, n)
	var total float64
	for i := 0; i < m; i++ {
		w := 1.0
		if s != nil {
			w = s[i]
		}
		if w == 0 {
			continue
		}
		if X.Sparse != nil {
			X.Sparse.RowAxpy(i, w, mu)
		} else {
			floats.AddScaled(mu, w, X.Dense.RawRowView(i)[:n])
		}
		total += w
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return nil
	}
	floats.Scale(1/total, mu)
	for _, v := range mu {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	return mu
}

// CheckCentre refuses a centre given for n features that is not n finite values (nil: none).
func CheckCentre(centre []float64, n int) error {
	if centre == nil {
		return nil
	}
	if len(centre) != n {
		return fmt.Errorf("the centre has %d values for %d features", len(centre), n)
	}
	return check.FiniteVector("centre", centre)
}

// CentreInto writes X's rows minus mu into the first n columns of dst's rows (dst has X's rows
// and at least its n columns).
func CentreInto(dst, X *mat.Dense, mu []float64) {
	m, n := X.Dims()
	parallel.For(m, parallel.RowsPerChunk(n), func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			floats.SubTo(dst.RawRowView(i)[:n], X.RawRowView(i)[:n], mu)
		}
	})
}

// ShiftIntercept adds sign·Wᵀmu to W's intercept row, the row after its len(mu) feature rows:
// sign +1 takes coefficients on X to coefficients on X centred at mu, −1 takes them back. A nil
// mu or W changes nothing.
func ShiftIntercept(W *mat.Dense, mu []float64, sign float64) {
	if mu == nil || W == nil {
		return
	}
	b := W.RawRowView(len(mu))
	for j, v := range mu {
		if v != 0 {
			floats.AddScaled(b, sign*v, W.RawRowView(j))
		}
	}
}

// CentreTMul turns P = [X 1]ᵀG (n rows for X's columns, then the intercept's: the column sums of G)
// into [X − 1μᵀ 1]ᵀG, the product with X centred at mu that was never formed (a sparse X stays
// sparse): row j loses mu_j times the intercept's row.
func CentreTMul(P *mat.Dense, mu []float64) {
	sums := P.RawRowView(len(mu))
	for j, v := range mu {
		if v != 0 {
			floats.AddScaled(P.RawRowView(j), -v, sums)
		}
	}
}
