package ridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sync"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The tilted marginal estimate (docs/design.md §2c): the reference measure μ tilted by the scores,
//
//	μ_θ(y) ∝ μ(y)·exp⟨θ, ψ(y)⟩,   θ = c·u(x),   m̂(x) = E_{μ_θ}[ψ].
//
// To first order in θ, E_{μ_θ}[ψ] = p + S θ: the linear estimate of marginals.go at the same c.
// Beyond first order the tilt is a mean of structures of μ's support, so it never needs clipping
// and it keeps their correlations: under the empirical measure it is a weighted mean of training
// structures (a taxonomy's co-occurring nodes move together; the linear estimate moves each
// coordinate alone and clips). For μ = (1 − w)·U + w·E, with Z_U(θ) = E_U[e^⟨θ,ψ⟩] =
// Z(θ)/|Y| and Z_E(θ) = Σ_k ω_k e^⟨θ,ψ_k⟩ (ω the structures' normalised weights),
//
//	E_{μ_θ}[ψ] = ((1 − w)·Z_U·E_{U_θ}[ψ] + w·Z_E·E_{E_θ}[ψ]) / ((1 − w)·Z_U + w·Z_E),
//
// where E_{U_θ} is the exponential family of ProbabilisticStructured (core/prob's exact
// inference), and E_{E_θ} the softmax of ⟨θ, ψ_k⟩ + log ω_k over the training structures.

// MarginalEstimate chooses how Marginals turns scores into marginal estimates.
type MarginalEstimate int

const (
	// EstimateLinear is clip(p + c·S u), marginals.go.
	EstimateLinear MarginalEstimate = iota
	// EstimateTilted is the mean of ψ under the reference measure tilted by exp(c⟨u, ψ⟩).
	EstimateTilted
)

var marginalEstimateNames = [...]string{"linear", "tilted"}

// MarginalEstimateNames returns the names of the estimates, in the order of their values.
func MarginalEstimateNames() []string { return slices.Clone(marginalEstimateNames[:]) }

// ParseMarginalEstimate maps an estimate's code to it, refusing unknown codes.
func ParseMarginalEstimate(code int64) (MarginalEstimate, error) {
	if code < 0 || code >= int64(len(marginalEstimateNames)) {
		return 0, fmt.Errorf("marginal estimate code %d is not one of 0 (linear) and 1 (tilted)", code)
	}
	return MarginalEstimate(code), nil
}

// empiricalTilt is what the tilted estimate needs of an empirical reference beyond its mean,
// covariance and weight: the distinct training structures, each with the sum of the sample weights
// of the examples that have it (so that partial_fit's union of chunks is the measure of all of them).
type empiricalTilt struct {
	psi    *xmat.CSR // k × d
	weight []float64 // k, positive
}

// structureSet collects distinct structures (as their non-zero coordinates) with summed weights.
// A structure is found by a seeded hash of its coordinates (first, then next along structures of
// the same hash) and compared in full: keyed by the coordinates' bytes themselves, every new
// structure allocated its key, and the map hashed and compared strings (0.17 s on 200,000 rows of
// 20 labels, 161,054 of them distinct).
type structureSet struct {
	d       int
	seed    maphash.Seed
	first   map[uint64]int
	next    []int // -1: the last of its hash
	indptr  []int64
	indices []int64
	data    []float64
	weight  []float64
	key     []byte
}

func newStructureSet(d int) *structureSet {
	return &structureSet{d: d, seed: maphash.MakeSeed(), first: map[uint64]int{}, indptr: []int64{0}}
}

// add counts weight s for the structure whose non-zero coordinates are each(fn) calls.
func (ss *structureSet) add(s float64, each func(fn func(col int, v float64))) {
	if s == 0 {
		return
	}
	start := len(ss.indices)
	ss.key = ss.key[:0]
	each(func(col int, v float64) {
		if v != 0 {
			ss.indices = append(ss.indices, int64(col))
			ss.data = append(ss.data, v)
			ss.key = binary.LittleEndian.AppendUint32(ss.key, uint32(col))
			ss.key = binary.LittleEndian.AppendUint64(ss.key, math.Float64bits(v))
		}
	})
	h := maphash.Bytes(ss.seed, ss.key)
	head, ok := ss.first[h]
	if !ok {
		head = -1
	}
	cols, vals := ss.indices[start:], ss.data[start:]
	for k := head; k >= 0; k = ss.next[k] {
		lo, hi := ss.indptr[k], ss.indptr[k+1]
		if slices.Equal(ss.indices[lo:hi], cols) && slices.Equal(ss.data[lo:hi], vals) {
			ss.indices, ss.data = ss.indices[:start], ss.data[:start]
			ss.weight[k] += s
			return
		}
	}
	ss.first[h] = len(ss.weight)
	ss.next = append(ss.next, head)
	ss.indptr = append(ss.indptr, int64(len(ss.indices)))
	ss.weight = append(ss.weight, s)
}

// tilt returns the collected structures; nil when there are none.
func (ss *structureSet) tilt() (*empiricalTilt, error) {
	if len(ss.weight) == 0 {
		return nil, nil
	}
	psi, err := xmat.New(len(ss.weight), ss.d, ss.indptr, ss.indices, ss.data)
	if err != nil {
		return nil, err
	}
	return &empiricalTilt{psi: psi, weight: ss.weight}, nil
}

// addTilt adds the structures of t.
func (ss *structureSet) addTilt(t *empiricalTilt) {
	k, _ := t.psi.Dims()
	for i := 0; i < k; i++ {
		ss.add(t.weight[i], func(fn func(int, float64)) { t.psi.RowEntries(i, fn) })
	}
}

// addProblem adds the training structures of p (ψ_i = δ_i + p.Mean: call it before
// setReference re-centres δ).
func (ss *structureSet) addProblem(p *Problem) {
	m, d := p.dims()
	buf := make([]float64, d)
	for i := 0; i < m; i++ {
		delta := p.deltaRow(i, buf)
		ss.add(p.Weight[i], func(fn func(int, float64)) {
			for a, v := range delta {
				fn(a, v+p.Mean[a])
			}
		})
	}
}

// tiltOf collects the training structures of p for an empirical reference (see addProblem).
func tiltOf(p *Problem) (*empiricalTilt, error) {
	_, d := p.dims()
	ss := newStructureSet(d)
	ss.addProblem(p)
	return ss.tilt()
}

// unionOf collects the structures of parts over d coordinates (a nil part holds none).
func unionOf(d int, parts ...*empiricalTilt) *structureSet {
	ss := newStructureSet(d)
	for _, t := range parts {
		if t != nil {
			ss.addTilt(t)
		}
	}
	return ss
}

// checkCoords reports the first of values outside the range of sp's coordinates, naming what
// they are.
func checkCoords(sp space.Space, what string, values []float64) error {
	lo, hi := space.CoordRange(sp)
	for _, v := range values {
		if !(v >= lo && v <= hi) {
			return fmt.Errorf("%s %v outside [%v, %v]", what, v, lo, hi)
		}
	}
	return nil
}

// checkTilt validates structures and weights read from bytes for the space sp: d columns of
// values in the range of ψ's coordinates, one positive finite weight each.
func checkTilt(sp space.Space, psi *xmat.CSR, weight *mat.Dense) (*empiricalTilt, error) {
	d := sp.Dim()
	k, dk := psi.Dims()
	if r, c := weight.Dims(); dk != d || r != 1 || c != k {
		return nil, fmt.Errorf("%d×%d reference structures with %d×%d weights, want %d columns and 1×%d", k, dk, r, c, d, k)
	}
	_, _, data := psi.Raw()
	if err := checkCoords(sp, "a reference structure's coordinate", data); err != nil {
		return nil, err
	}
	wt := weight.RawRowView(0)
	for _, s := range wt {
		if !(s > 0 && s <= math.MaxFloat64) {
			return nil, fmt.Errorf("a reference structure's weight %v is not positive and finite", s)
		}
	}
	return &empiricalTilt{psi: psi, weight: wt}, nil
}

// mergeTilts is the tilt data of the examples of a and b (partial_fit's chunks).
func mergeTilts(a, b *empiricalTilt) (*empiricalTilt, error) {
	if a == nil || b == nil {
		return nil, nil // a part without structures: the union is unknown
	}
	_, d := a.psi.Dims()
	return unionOf(d, a, b).tilt()
}

// errNoTilt explains why a model has no tilted estimate.
var errNoTilt = errors.New("estimate='tilted' needs the reference measure's structures")

// tiltMap turns score rows into centred tilted estimates m̂ − p, as marginalMap.centre does for
// the linear ones.
type tiltMap struct {
	sp          space.Space
	w           float64        // the data-driven part's weight (0: the uniform measure)
	t           *empiricalTilt // the empirical part (nil: none)
	productMean []float64      // the product part's mean (nil: none)
	p           []float64
	lo, hi      float64
	c           float64
	fixed       []int
	// logOmega are the logs of the structures' weights normalised to sum 1; logCount is log|Y|,
	// for Z_U.
	logOmega []float64
	logCount float64
	stop     *cancel.Flag // looked at before every row (nil: never stops)
}

// newTiltMap is the tilted estimate of a model over sp with reference ref (nil: uniform) at scale c,
// or the reason it has none; mm is the linear estimate's map of the same model, whose mean, range
// and constant coordinates it shares.
func newTiltMap(mm *marginalMap, sp space.Space, ref *reference, c float64) (*tiltMap, error) {
	tm := &tiltMap{sp: sp, p: mm.p, lo: mm.lo, hi: mm.hi, c: c, fixed: mm.fixed, logCount: sp.LogCount()}
	if ref != nil && ref.productMean != nil {
		if _, err := productMeasure(sp); err != nil {
			return nil, fmt.Errorf("%w: %w", errNoTilt, err)
		}
		tm.w, tm.productMean = ref.weight, ref.productMean
	} else if ref != nil {
		if ref.tilt == nil {
			return nil, fmt.Errorf("%w, which this model does not hold: it was continued by partial_fit from a model fitted "+
				"without an empirical reference (set_params between chunks), solved from statistics (combpred.dask) that did not "+
				"keep them (started without an empirical reference, past %d values of distinct structures, or written before "+
				"version 3), or read from model bytes written before version 7; use estimate='linear', or refit in memory",
				errNoTilt, maxStatsStructureValues)
		}
		tm.w, tm.t = ref.weight, ref.tilt
		var norm float64
		for _, s := range tm.t.weight {
			norm += s / float64(len(tm.t.weight)) // a mean first: a sum of large weights could overflow
		}
		logNorm := logmath.Log(norm) + logmath.Log(float64(len(tm.t.weight)))
		tm.logOmega = make([]float64, len(tm.t.weight))
		for k, s := range tm.t.weight {
			tm.logOmega[k] = logmath.Log(s) - logNorm
		}
	}
	if err := tiltNeeds(sp, tm.w); err != nil {
		return nil, err
	}
	return tm, nil
}

// tiltNeeds reports why the tilted estimate is out of reach on sp under a reference measure whose
// data-driven part has weight w (0: the uniform measure): a uniform part needs exact inference.
func tiltNeeds(sp space.Space, w float64) error {
	if w < 1 && !prob.HasExact(sp) {
		return fmt.Errorf("estimate='tilted' under a reference measure with a uniform part needs exact inference, "+
			"which the %s space of log|Y| = %.1f has not; use estimate='linear', or empirical_weight=1", sp.Kind(), sp.LogCount())
	}
	return nil
}

// centreRows overwrites the score rows of U (rows × d) with their centred estimates, on all
// threads; the first error stops it, and so does tm.stop (a row can cost a dynamic programme, or
// a pass over many training structures).
func (tm *tiltMap) centreRows(U []float64, rows int) error {
	d := len(tm.p)
	var mu sync.Mutex
	var first error
	parallel.For(rows, 16, func(lo, hi int) {
		scratch := tm.scratch()
		for i := lo; i < hi; i++ {
			err := tm.stop.Err()
			if err == nil {
				err = tm.centre(U[i*d:(i+1)*d], scratch)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
					if !errors.Is(err, cancel.ErrCancelled) {
						first = check.RowErrorf(i, "X row %d: %w", err) // moved to X's row by the caller's check.AtRows
					}
				}
				mu.Unlock()
				return
			}
		}
	})
	return first
}

type tiltScratch struct {
	s, e, uniform []float64
}

func (tm *tiltMap) scratch() *tiltScratch {
	sc := &tiltScratch{e: make([]float64, len(tm.p)), uniform: make([]float64, len(tm.p))}
	if tm.t != nil {
		k, _ := tm.t.psi.Dims()
		sc.s = make([]float64, k)
	}
	return sc
}

// centre overwrites the score row u with m̂ − p.
func (tm *tiltMap) centre(u []float64, sc *tiltScratch) error {
	for _, j := range tm.fixed {
		u[j] = 0 // constant over the measure's support: a shift of every ⟨θ, ψ⟩ alike
	}
	var top float64
	for _, v := range u {
		top = math.Max(top, math.Abs(v))
	}
	if top == 0 {
		clear(u) // m̂ = p
		return nil
	}
	mean := sc.e
	w := tm.w
	if tm.t != nil && w == 1 {
		tm.empirical(u, top, sc)
	} else {
		theta := u // overwritten in place: the estimate replaces it below
		for j, v := range u {
			theta[j] = tm.c * v
			if math.IsInf(theta[j], 0) {
				return fmt.Errorf("the tilt's scores c·u overflow at coordinate %d (scale %g times %g); use a smaller scale", j, tm.c, v)
			}
		}
		// log Z of the data-driven part, its tilted mean in sc.e
		var lzd float64
		switch {
		case tm.t != nil:
			lzd = tm.empiricalLogZ(theta, sc)
		case tm.productMean != nil:
			lzd = tm.sp.(space.MarginalMeasure).TiltedMarginals(tm.productMean, theta, sc.e)
		}
		if w < 1 {
			lzu, err := prob.ExactMarginals(tm.sp, theta, sc.uniform)
			if err != nil {
				return fmt.Errorf("estimate='tilted' (scale %g): %w; use a smaller scale", tm.c, err)
			}
			mean = sc.uniform
			if w > 0 { // the parts mixed by their partition functions
				a := math.Log1p(-w) + lzu - tm.logCount
				b := logmath.Log(w) + lzd
				lz := math.Max(a, b)
				ea, eb := math.Exp(a-lz), math.Exp(b-lz)
				for j := range mean {
					mean[j] = (ea*sc.uniform[j] + eb*sc.e[j]) / (ea + eb)
				}
			}
		}
		for _, v := range mean {
			if math.IsNaN(v) {
				return fmt.Errorf("estimate='tilted' (scale %g): the tilted measure's sums overflowed; use a smaller scale", tm.c)
			}
		}
	}
	for j, v := range mean {
		u[j] = math.Min(math.Max(v, tm.lo), tm.hi) - tm.p[j]
	}
	for _, j := range tm.fixed {
		u[j] = 0
	}
	return nil
}

// empirical writes the mean of ψ under E tilted by c·u into sc.e, for scores of any magnitude:
// u is scaled by a power of two to a largest magnitude near 1 (top is its largest before), and the
// weights ω_k exp(g·(s_k − max s)) have exponents at most 0, g = c·2^e possibly +Inf (then the
// best-scoring structures share the estimate).
func (tm *tiltMap) empirical(u []float64, top float64, sc *tiltScratch) {
	_, e := math.Frexp(top)
	for j, v := range u {
		u[j] = math.Ldexp(v, -e)
	}
	best := tm.scores(u, sc.s)
	g := math.Ldexp(tm.c, e)
	tm.average(sc.s, func(s float64) float64 {
		if s == best {
			return 0 // g may be +Inf: ∞·0 is the best structures' own exponent
		}
		return g * (s - best)
	}, sc.e)
}

// empiricalLogZ writes the mean of ψ under E tilted by θ into sc.e and returns log Z_E(θ) =
// log Σ_k ω_k e^⟨θ,ψ_k⟩ (θ finite).
func (tm *tiltMap) empiricalLogZ(theta []float64, sc *tiltScratch) float64 {
	best := tm.scores(theta, sc.s)
	return best + tm.average(sc.s, func(s float64) float64 { return s - best }, sc.e)
}

// scores writes ⟨v, ψ_k⟩ of every structure into s and returns the largest.
func (tm *tiltMap) scores(v, s []float64) float64 {
	best := math.Inf(-1)
	for k := range s {
		s[k] = tm.t.psi.RowDot(k, v)
		best = math.Max(best, s[k])
	}
	return best
}

// average writes Σ_k π_k ψ_k / Σ_k π_k into mean, π_k = ω_k exp(exponent(s_k)), and returns
// log Σ_k π_k. The terms are scaled by the largest, so that neither tiny weights nor large
// exponents leave the sum at 0 or +Inf.
func (tm *tiltMap) average(s []float64, exponent func(float64) float64, mean []float64) float64 {
	top := math.Inf(-1)
	for k, sk := range s {
		s[k] = tm.logOmega[k] + exponent(sk) // s becomes log π_k
		top = math.Max(top, s[k])
	}
	clear(mean)
	var total float64
	for k, l := range s {
		pk := math.Exp(l - top)
		if pk == 0 {
			continue
		}
		total += pk
		tm.t.psi.RowAxpy(k, pk, mean)
	}
	for j := range mean {
		mean[j] /= total
	}
	return top + logmath.Log(total)
}
