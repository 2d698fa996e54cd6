package ridge

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// marginalMap turns score rows u into estimates of the marginals E[ψ(y) | x] (docs/design.md §2a):
//
//	m̂ = clip(p + c(a)·S u),   a = uᵀS u,   c(a) = min(1 + t₊(a), 1 + r),
//
// where t₊(a) ≥ 1 is the root of t/(1+t)² = a (for a ≥ ¼: 1), so that 1 + t₊(a) =
// (1 + √(1 − 4a))/(2a), and r is the rank of S. At the optimum of J for a target without noise,
// S u = δ/(1 + t) with t = δᵀS⁺δ and a = t/(1+t)², so c(a)·S u = δ exactly whenever t ≤ r;
// clip keeps each coordinate in the range of ψ's coordinates.
type marginalMap struct {
	cov      space.Operator
	p        []float64
	lo, hi   float64
	maxScale float64 // 1 + r
	unit     bool    // ScaleUnit: c = 1
	factor   float64 // multiplies c (CheckMarginalQuery); 0 counts as 1
	// fixed are the coordinates the reference holds constant (a subtree's root; under the
	// empirical measure, the pins): S's rows and columns are 0 there, so m̂ = p exactly. Their
	// scores are set aside before S u: nothing constrains them (a fit left 1.2e149 on a root),
	// and S u's rounding, scaled back with them, had put m̂_root anywhere in [0, 1].
	fixed []int
}

// MarginalScale chooses the scale c of the marginal estimates m̂ = clip(p + c·S u).
type MarginalScale int

const (
	// ScaleNoiseFree is c(a) above: exact at the optimum for targets without noise, and
	// over-confident (estimates pushed to the ends of the range) where the scores are weak
	// because the targets are noisy.
	ScaleNoiseFree MarginalScale = iota
	// ScaleUnit is c = 1, the same for every input: m̂ = clip(p + S u). It keeps the order of the
	// estimates across inputs (what ranking metrics such as AU(PRC) compare) and shrinks a
	// noise-free target's δ by 1/(1 + t); S·u is the direction design.md §2a derives for any
	// noise.
	ScaleUnit
)

var marginalScaleNames = [...]string{"noise_free", "unit"}

// MarginalScaleNames returns the names of the scales, in the order of their values.
func MarginalScaleNames() []string { return slices.Clone(marginalScaleNames[:]) }

// ParseMarginalScale maps a scale's code to it, refusing unknown codes.
func ParseMarginalScale(code int64) (MarginalScale, error) {
	if code < 0 || code >= int64(len(marginalScaleNames)) {
		return 0, fmt.Errorf("marginal scale code %d is not one of 0 (noise_free) and 1 (unit)", code)
	}
	return MarginalScale(code), nil
}

// MaxScaleFactor bounds the factor of CheckMarginalQuery: c·S u stays finite for every score row
// (centre scales rows to a largest magnitude near 1 before S u).
const MaxScaleFactor = 1e100

// MinScaleFactor is the smallest factor of the marginals' scale, the smallest normal float64 (as
// check.MinAlpha): below about 1e-16 every estimate is p to the last digit, and a subnormal factor
// only hides that behind lost digits.
const MinScaleFactor = 0x1p-1022

// CheckMarginalQuery reports why no model takes the estimate est at the scale scale times factor:
// a factor, which multiplies the scale c of the marginal estimates (m̂ = clip(p + factor·c·S u),
// or θ = factor·u for the tilted one), that is not a number from MinScaleFactor to
// MaxScaleFactor, or the tilted estimate at the noise-free scale, which is the linear estimate's.
// A factor other than 1 calibrates the estimates: the scale that ranks or decodes best under
// noise is a property of the data, to be chosen by validation like the regularisation.
func CheckMarginalQuery(est MarginalEstimate, scale MarginalScale, factor float64) error {
	if !(factor >= MinScaleFactor && factor <= MaxScaleFactor) {
		return fmt.Errorf("scale=%v: the marginals' scale factor must be a positive number from %g (the smallest normal float64) to %g",
			factor, MinScaleFactor, MaxScaleFactor)
	}
	if est == EstimateTilted && scale != ScaleUnit {
		return fmt.Errorf("scale=%s is the linear estimate's; estimate='tilted' takes scale='unit' or a positive number "+
			"(θ = scale·u), chosen by validation like alpha", marginalScaleNames[scale])
	}
	return nil
}

// CheckFitMarginals reports why a model fitted over sp with opt would refuse the estimate est at
// the scale scale times factor whatever its data: CheckMarginalQuery's rules, and those of the
// tilted estimate that the space and the reference measure settle (tiltNeeds). A fit whose
// decision rule reads the estimates asks it before it starts.
func CheckFitMarginals(sp space.Space, opt Options, est MarginalEstimate, scale MarginalScale, factor float64) error {
	if err := CheckMarginalQuery(est, scale, factor); err != nil || est != EstimateTilted {
		return err
	}
	if opt.EmpiricalWeight > 0 && opt.Reference == Product {
		if _, err := productMeasure(sp); err != nil {
			return err
		}
	}
	return tiltNeeds(sp, opt.EmpiricalWeight) // Options.Validate keeps it in [0, 1]
}

// newMarginalMap is the map of a model over sp whose reference measure is ref (nil: uniform).
func newMarginalMap(sp space.Space, ref *reference) *marginalMap {
	var mm *marginalMap
	if ref != nil {
		mm = &marginalMap{cov: denseOperator{ref.cov}, p: ref.mean, maxScale: 1 + float64(ref.rank)}
	} else {
		mm = &marginalMap{cov: sp.Covariance(), p: make([]float64, sp.Dim()), maxScale: 1 + float64(space.CovRank(sp))}
		sp.Mean(mm.p)
	}
	mm.lo, mm.hi = space.CoordRange(sp)
	mm.fixed = constantCoords(mm.cov, len(mm.p))
	return mm
}

// marginalScale is c(a) = min((1 + √(1 − 4a))/(2a), maxScale) with a taken as ¼ when larger (the
// largest a of an exact fit, where the two roots of t/(1+t)² = a meet at t = 1); maxScale when
// a is not positive (then S u = 0, S being positive semi-definite, and the scale is moot).
func marginalScale(a, maxScale float64) float64 {
	if !(a > 0) {
		return maxScale
	}
	a = math.Min(a, 0.25)
	return math.Min((1+math.Sqrt(1-4*a))/(2*a), maxScale)
}

// centre overwrites the score row u with m̂ − p, the centred marginal estimate; su is scratch of
// the same length. The row is first scaled by a power of two (exact) that brings its largest
// magnitude near 1, so that S u and uᵀS u neither overflow nor lose their digits whatever the
// scale of the scores; the results are scaled back, saturating at the ends of the range.
func (mm *marginalMap) centre(u, su []float64) {
	for _, j := range mm.fixed {
		u[j] = 0
	}
	defer func() {
		for _, j := range mm.fixed {
			u[j] = 0
		}
	}()
	var top float64
	for _, v := range u {
		top = math.Max(top, math.Abs(v))
	}
	if top == 0 {
		return // m̂ = p
	}
	_, e := math.Frexp(top)
	for j, v := range u {
		u[j] = math.Ldexp(v, -e)
	}
	mm.cov.MulVec(su, u)
	var av float64
	for j, v := range u {
		av += v * su[j]
	}
	c := 1.0
	if !mm.unit {
		c = marginalScale(math.Ldexp(av, 2*e), mm.maxScale)
	}
	if mm.factor != 0 {
		c *= mm.factor
	}
	for j, s := range su {
		m := math.Ldexp(c*s, e)
		u[j] = math.Min(math.Max(m, mm.lo-mm.p[j]), mm.hi-mm.p[j])
	}
}

// centreRows applies centre to the rows of U (rows × d) on all threads.
func (mm *marginalMap) centreRows(U []float64, rows int) {
	d := len(mm.p)
	parallel.For(rows, 64, func(lo, hi int) {
		su := make([]float64, d)
		for i := lo; i < hi; i++ {
			mm.centre(U[i*d:(i+1)*d], su)
		}
	})
}

// addMean adds p to the rows of centred estimates M (rows × d).
func (mm *marginalMap) addMean(M []float64, rows int) {
	d := len(mm.p)
	for i := 0; i < rows; i++ {
		row := M[i*d : (i+1)*d]
		for j, v := range mm.p {
			row[j] += v
		}
	}
}

// Marginals estimates E[ψ(y) | x] from the scores of q inputs X (q×n, row-major), as
// docs/design.md §2a derives: it writes the estimates m̂(x) into M (q×d) when M is not nil, and
// the structures decoded from them, argmax_y ⟨m̂(x) − p, ψ(y)⟩ by the space's decoder, into ys
// (q × Width()) when ys is not nil. Rows are scored a chunk at a time (space.PredictRows), so
// that without M the memory stays bounded whatever q; it stops with ErrCancelled once stop is
// set (nil: never). est chooses the estimate: EstimateLinear, clip(p + c·S u), whose scale c
// scale chooses and factor (CheckMarginalQuery) multiplies (the decoded structures depend on neither
// unless the estimates are clipped); or EstimateTilted, the mean of ψ under the reference measure
// tilted by exp(factor·⟨u, ψ⟩) (tilt.go), which takes ScaleUnit only.
func (md *Model) Marginals(X []float64, q, n int, M []float64, ys []int64, est MarginalEstimate, scale MarginalScale, factor float64, stop *cancel.Flag) error {
	if len(X) != q*n {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features", q, n)
	}
	return md.MarginalsRows(xmat.DenseRows(X, q, n), M, ys, est, scale, factor, stop)
}

// MarginalsRows is Marginals on dense or sparse rows.
func (md *Model) MarginalsRows(X xmat.Rows, M []float64, ys []int64, est MarginalEstimate, scale MarginalScale, factor float64, stop *cancel.Flag) error {
	sp := md.Space
	q := X.Q
	d, w := sp.Dim(), sp.Width()
	if M == nil && ys == nil {
		return fmt.Errorf("marginals: neither marginals nor structures were asked for")
	}
	if M != nil && len(M) != q*d {
		return fmt.Errorf("marginals output has %d values, want %d×%d", len(M), q, d)
	}
	if ys != nil {
		if len(ys) != q*w {
			return fmt.Errorf("output has %d values, want %d×%d", len(ys), q, w)
		}
		if err := space.CheckDecode(sp, q); err != nil {
			return err
		}
	}
	if err := CheckMarginalQuery(est, scale, factor); err != nil {
		return err
	}
	mm := newMarginalMap(sp, md.ref)
	mm.unit = scale == ScaleUnit
	mm.factor = factor
	centreRows := func(U []float64, rows int) error {
		mm.centreRows(U, rows)
		return nil
	}
	if est == EstimateTilted {
		tm, err := newTiltMap(mm, sp, md.ref, factor)
		if err != nil {
			return err
		}
		tm.stop = stop
		centreRows = tm.centreRows
	}
	centred := func(lo, hi int, U []float64) error {
		if err := model.ScoreRows(md, X.Slice(lo, hi), U, stop); err != nil {
			return err
		}
		return centreRows(U, hi-lo)
	}
	// The decoder reads m̂ − p, which is 0 along the coordinates the reference holds constant:
	// those are pinned as Predict pins them (pins.go), in a copy when the estimates are returned.
	pins := md.pins()
	if M == nil {
		if err := space.CheckScores(sp, space.PredictChunk(sp, q)); err != nil {
			return err
		}
		pinned := func(lo, hi int, U []float64) error {
			if err := centred(lo, hi, U); err != nil {
				return err
			}
			pinScores(U, d, pins)
			return nil
		}
		return space.PredictRowsBy(sp, q, ys, pinned, stop)
	}
	var scratch []float64
	chunk := max(1, space.PredictChunk(sp, q))
	for lo := 0; lo < q; lo += chunk {
		if err := stop.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, q)
		Mc := M[lo*d : hi*d]
		if err := centred(lo, hi, Mc); err != nil {
			return check.AtRows(lo, err)
		}
		if ys != nil {
			src := Mc
			if len(pins) > 0 {
				scratch = append(scratch[:0], Mc...)
				pinScores(scratch, d, pins)
				src = scratch
			}
			if err := space.DecodeRows(sp, src, hi-lo, ys[lo*w:hi*w], stop); err != nil {
				return err
			}
		}
		mm.addMean(Mc, hi-lo)
	}
	return nil
}
