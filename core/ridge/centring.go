package ridge

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// centred returns d with X replaced by its rows minus their s-weighted mean μ, held explicitly
// with the intercept's column ([X − 1μᵀ 1], so withOnes needs no second copy), and μ; or d itself
// and nil when X is sparse (centring would densify it), there is no intercept, or the budget
// refuses the copy of m·(n+1) values (refused then holds the budget's error). Centred, conjugate gradients and SGD fit X + c as they fit
// X (xmat.WeightedMean says why they need it); uncentred, conjugate gradients took 13 times the
// iterations at X + 100 on yeast and stopped 8·10⁻³ from the minimum at X + 10⁴.
//
// A sparse X is centred along the columns that store a value in every row, where shifting the
// stored values is X − 1μᵀ exactly (a dense column of a year or an amount among one-hot columns):
// held uncentred beside the intercept's column of ones, a column at 10⁷ ± 1 left CG's coefficients
// 2·10⁻² from the optimum at a relative gradient of 9·10⁻⁹ (probe AT). Columns with implicit zeros
// keep their values, and their μ_j is reported as 0.
func (d design) centred(s []float64) (c design, mu []float64, refused error) {
	if d.sp != nil && d.intercept {
		c, mu = d.centredSparse(s)
		return c, mu, nil
	}
	if d.sp != nil || !d.intercept || d.X == nil {
		return d, nil, nil
	}
	m, n := d.X.Dims()
	if m == 0 {
		return d, nil, nil
	}
	if err := budget.Check(fmt.Sprintf("a centred copy of X (%d samples × %d features)", m, n),
		budget.Mul(int64(m), int64(n+1), 8)); err != nil {
		return d, nil, err
	}
	mu = xmat.WeightedMean(xmat.Matrix{Dense: d.X}, s)
	if mu == nil {
		return d, nil, nil
	}
	ones := mat.NewDense(m, n+1, scratchFloats(m*(n+1))) // every entry written below; see releaseCentred
	xmat.CentreInto(ones, d.X, mu)
	for i := 0; i < m; i++ {
		ones.Set(i, n, 1)
	}
	if check.FiniteMagnitude("X", ones.RawMatrix().Data, n+1) != nil {
		releaseFloats(ones.RawMatrix().Data)
		return d, nil, nil // centred values up to twice X's: let X's own bounds hold
	}
	d.ones = ones
	d.X = ones.Slice(0, m, 0, n).(*mat.Dense)
	return d, mu, nil
}

// uncentredOffsetLimit is the distance from zero, in standard deviations of its column, beyond
// which a feature left uncentred is reported: the intercept's column of ones is then nearly
// parallel to it. At 10³ (1,333 × 50, 10 labels) CG took 149 iterations instead of 15 and ended
// 10⁻⁵ from the exact solver's scores instead of 10⁻⁸; at 10⁶ it changed 20 of 6,000 labels,
// without a sign in its relative gradient (probe FG).
const uncentredOffsetLimit = 1e3

// noInterceptOffsetLimit is uncentredOffsetLimit for a model without an intercept, whose
// uncentred X is its problem: CG's scores were 10⁻⁷ from the exact solver's at X + 10⁴ (300 × 3
// and 1,333 × 50, 4 labels), 2·10⁻⁵ to 3·10⁻⁴ at 10⁵, 4·10⁻³ to 2·10⁻² at 10⁶, and at 10¹⁰ its J
// was 37 % above the minimum (probe FN).
const noInterceptOffsetLimit = 1e5

// warnUncentred warns when a dense X is fitted as it is, uncentred — the budget refused centred's
// copy (refused, its error) or the model has no intercept to centre with — and a column of X lies
// more than uncentredOffsetLimit of its s-weighted standard deviations from zero (a constant
// column: of the largest column's). Without an intercept, X + 10¹⁰ left CG's J 37 % above the
// minimum at a relative gradient of 2.6·10⁻¹⁰, silently (probe FN).
func (md *Model) warnUncentred(d design, s []float64, refused error) {
	if d.X == nil || d.sp != nil || (refused == nil && d.intercept) {
		return
	}
	limit := uncentredOffsetLimit
	if !d.intercept {
		limit = noInterceptOffsetLimit
	}
	col, far := farthestColumn(d.X, s)
	if !(far > limit) {
		return
	}
	why, near, cure := fmt.Sprintf("not centred: the memory budget refused the copy (%v)", refused),
		"nearly parallel to the intercept's column of ones", "centre X beforehand (e.g. StandardScaler)"
	if !d.intercept {
		why, near, cure = "without an intercept to centre it with (fit_intercept=False)",
			"its mean direction curving far more than the others", "centre X beforehand (e.g. StandardScaler), fit an intercept,"
	}
	md.Warnings = append(md.Warnings, fmt.Sprintf("the %s solver fits X as it is, %s. X's column %d lies %.2g standard "+
		"deviations from zero, %s, where the solver may stop far from the optimum without its relative gradient "+
		"showing it: %s or use solver=\"exact\"", md.Solver, why, col, far, near, cure))
}

// farthestColumn returns the column of X farthest from zero in units of its s-weighted standard
// deviation (a constant column's: of the largest column's) and that distance; −1 and 0 where the
// weights say nothing.
func farthestColumn(X *mat.Dense, s []float64) (int, float64) {
	mu := xmat.WeightedMean(xmat.Matrix{Dense: X}, s)
	if mu == nil {
		return -1, 0
	}
	m, n := X.Dims()
	sd := make([]float64, n)
	var total float64
	for i := 0; i < m; i++ {
		w := 1.0
		if s != nil {
			w = s[i]
		}
		if !(w > 0) {
			continue
		}
		total += w
		for j, x := range X.RawRowView(i)[:n] {
			sd[j] += w * (x - mu[j]) * (x - mu[j])
		}
	}
	var widest float64
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / total)
		widest = max(widest, sd[j])
	}
	col, far := -1, 0.0
	for j, c := range mu {
		spread := sd[j]
		if !(spread > 0) {
			spread = widest
		}
		if r := math.Abs(c) / spread; spread > 0 && r > far {
			col, far = j, r
		}
	}
	return col, far
}

// releaseCentred hands the copy of X that centred made of d (c is its result; none when c holds
// d's own X) back to scratchPool: c must not be used after.
func (d design) releaseCentred(c design) {
	if c.ones != nil && c.ones != d.ones {
		releaseFloats(c.ones.RawMatrix().Data)
	}
}

// centredSparse is centred for a sparse X: its fully stored columns shifted by their s-weighted
// means in a copy (xmat.CSR.CentredDenseColumns; refused, X stays as it is).
func (d design) centredSparse(s []float64) (design, []float64) {
	mu := xmat.WeightedMean(d.input(), s)
	if mu == nil {
		return d, nil
	}
	sp, shift := d.sp.CentredDenseColumns(mu)
	if sp == nil {
		return d, nil
	}
	d.sp = sp
	return d, shift
}

// statsShift is the shift of an exact fit's statistics (linearStats.shift): with an intercept, the
// s-weighted mean of the first chunk's rows, dense or sparse (the statistics take every row
// densely anyway). Unshifted, the normal equations of X + 10⁵ on yeast gave scores 10⁻³ from the
// minimum's, and a J below it. Later chunks move it to the running mean (recentre).
func (d design) statsShift(s []float64) []float64 {
	if !d.intercept {
		return nil
	}
	return xmat.WeightedMean(d.input(), s)
}

// recentre moves the statistics' shift, before the chunk des with weights s is added, to the
// s-weighted mean of every row accumulated so far and of that chunk (with an intercept; a chunk
// without weight keeps it). Fixed at the first chunk's mean, the shift left later chunks as far
// from it as that chunk was from the rest: a first row at 10⁶ among rows near zero gave a
// partial fit 2.5·10⁻³ from the one-pass fit's scores, where unshifted sums had given 1.6·10⁻⁵.
// The running mean is the one-pass fit's shift once every chunk is in, as in the pairwise
// updates of Chan, Golub & LeVeque (1979) for a variance.
func (st *linearStats) recentre(des design, s []float64) {
	if !des.intercept {
		return
	}
	mu := xmat.WeightedMean(des.input(), s)
	if mu == nil {
		return
	}
	var added float64
	for _, w := range s {
		added += w
	}
	mean, total := st.mean()
	st.reshift(pooledMean(mean, total, mu, added))
}

// pooledMean returns the mean of two sets of rows, of means a and b and total weights wa and wb,
// in a's storage (a itself when neither has weight).
func pooledMean(a []float64, wa float64, b []float64, wb float64) []float64 {
	if wa+wb > 0 {
		for j := range a {
			a[j] += wb / (wa + wb) * (b[j] - a[j])
		}
	}
	return a
}

// mean returns the weighted mean of the rows accumulated (the shift when there are none) and
// their total weight, read off the moments of c(ψ) = 1: Σ s x̂x̂ᵀ.
func (st *linearStats) mean() ([]float64, float64) {
	n, k := st.n, st.n+1
	ones := st.M.RawRowView(st.d*(st.d+1)/2 + st.d)
	total := ones[triIndex(n, n, k)]
	mean := make([]float64, n)
	if st.shift != nil {
		copy(mean, st.shift)
	}
	if total > 0 {
		for j := range mean {
			mean[j] += ones[triIndex(j, n, k)] / total
		}
	}
	return mean, total
}

// reshift re-expresses the moments around the shift t in place of st.shift (nil: zero): with
// v = t − shift every x̂ becomes L x̂ = x̂ − v·x̂ₙ (x̂ₙ = 1), so each packed moment matrix P becomes
// L P Lᵀ. It keeps the shift where the new moments could overflow.
func (st *linearStats) reshift(t []float64) {
	n, k := st.n, st.n+1
	v := slices.Clone(t)
	if st.shift != nil {
		floats.Sub(v, st.shift)
	}
	vMax := floats.Norm(v, math.Inf(1))
	if vMax == 0 {
		st.shift = slices.Clone(t) // a nil shift is zero: MergeStats compares them
		return
	}
	// Each new entry is P_jl + v_j v_l P_nn − v_j P_ln − v_l P_jn, so its size is bounded by the
	// largest moment, vMax² times the largest weight total P_nn and 2·vMax times the largest first
	// moment P_jn; bounded by vMax² times the largest moment of all, a feature at 1e80 left
	// partitions' statistics unmerged (a +Inf "overflow" of sums of 1e163, probe FN).
	rows, _ := st.M.Dims()
	var pMax, firstMax, totalMax float64 // the builtin max keeps a NaN, as math.Max does, inline
	for q := 0; q < rows; q++ {
		P := st.M.RawRowView(q)
		for _, x := range P {
			pMax = max(pMax, math.Abs(x))
		}
		for j := 0; j < n; j++ {
			firstMax = max(firstMax, math.Abs(P[triIndex(j, n, k)]))
		}
		totalMax = max(totalMax, math.Abs(P[triIndex(n, n, k)]))
	}
	if !(pMax+vMax*vMax*totalMax+2*vMax*firstMax < math.MaxFloat64/4) {
		return
	}
	pn := make([]float64, n) // a row's first moments P_ln, read before the row changes
	for q := 0; q < rows; q++ {
		P := st.M.RawRowView(q)
		pnn := P[triIndex(n, n, k)]
		for l := range pn {
			pn[l] = P[triIndex(l, n, k)]
		}
		for j := 0; j < n; j++ {
			vj, pjn := v[j], pn[j]
			seg, vs, ps := P[triIndex(j, j, k):][:n-j], v[j:n], pn[j:n] // the pairs (j, l), l = j … n−1
			for t := range seg {
				seg[t] += vj*vs[t]*pnn - vj*ps[t] - vs[t]*pjn
			}
		}
		for j := 0; j < n; j++ {
			P[triIndex(j, n, k)] -= v[j] * pnn
		}
	}
	st.shift = slices.Clone(t)
}
