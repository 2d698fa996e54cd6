package ridge

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Stats are the mergeable sufficient statistics of an exact linear fit (stats.go), with what
// they were computed for: the space, the kernel (linear, or rbf/poly through a Nyström map fixed
// beforehand), the intercept and the input width. Every term of the normal equations is a sum
// over examples, so statistics computed on disjoint chunks of the data — on different machines —
// add up to those of the concatenation, and Solve gives Fit(solver=exact) on all of it. α, the
// empirical weight and the reference measure enter only at the solve: both data-driven references
// are functions of the weighted moments Σs, Σsψ, Σsψψᵀ of the training structures (the product
// one of their mean only), which the statistics hold as sums, so they merge exactly too. A Stats value is never modified after it is returned:
// Add and MergeStats return new ones, so a value may be shared between goroutines.
type Stats struct {
	Space     space.Space
	Kernel    kernel.Kernel
	Intercept bool
	NFeatures int // columns of the inputs (before the Nyström map)

	ny *nystrom     // the Nyström map of an rbf or poly kernel, nil for the linear one
	st *linearStats // the moments, over the design (X itself or its map)
	// structures are the distinct training structures with their summed weights (nil: none
	// yet), which the empirical reference's tilted marginal estimate needs (tilt.go), kept while
	// keepStructures is set: from NewStats for an empirical reference (empirical_weight > 0,
	// reference empirical; other fits pay nothing for them) until, growing with the data unlike
	// the moments, they hold more than maxStatsStructureValues values. Models solved from
	// statistics without them have no tilted estimate (they say so); nor do version-2 bytes.
	structures     *empiricalTilt
	keepStructures bool
}

// maxStatsStructureValues bounds the non-zero coordinates of the structures statistics keep
// (about 16 bytes each, plus their index: some 100 MB at the bound); a variable for the tests.
var maxStatsStructureValues = 1 << 22

// withStructures returns the union of the structures of a, b (either nil: none) and p (nil:
// none), or keep false when it would exceed maxStatsStructureValues values.
func withStructures(d int, a, b *empiricalTilt, p *Problem) (t *empiricalTilt, keep bool, err error) {
	ss := unionOf(d, a, b)
	if p != nil {
		ss.addProblem(p)
	}
	if len(ss.data) > maxStatsStructureValues {
		return nil, false, nil
	}
	t, err = ss.tilt()
	return t, true, err
}

// NewStats returns empty statistics for fits with the kernel, intercept, Nyström components and
// seed of opt on inputs of n features in sp. A Nyström model (opt.NComponents > 0) builds its
// map here from the ms×n rows of sample exactly as Fit builds it from its X (the same landmarks
// for the same rows and seed); every chunk is then mapped by it, and the model is linear on the
// map. A linear model takes no sample: with an intercept its statistics follow the running mean
// of the rows added (linearStats.recentre), as Fit's exact solver centres its X (statsShift), and
// MergeStats moves both operands to their common mean.
func NewStats(sp space.Space, n int, sample []float64, ms int, opt Options) (*Stats, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("statistics need at least one feature, got %d", n)
	}
	if sp.Dim() > denseMaxDim {
		return nil, largeDistributedDimError(sp)
	}
	s := &Stats{Space: sp, Kernel: opt.Kernel, Intercept: opt.Intercept, NFeatures: n,
		keepStructures: opt.EmpiricalWeight > 0 && opt.Reference == Empirical}
	switch {
	case opt.Kernel.Kind == kernel.Linear:
		if sample != nil || ms != 0 {
			return nil, fmt.Errorf("the statistics of a linear model take no sample (they follow the mean of the rows added), got %d rows", ms)
		}
	case opt.Kernel.Kind == kernel.Precomputed:
		return nil, fmt.Errorf("statistics need a linear model: kernel=precomputed is a kernel expansion over the training samples")
	case opt.NComponents == 0:
		return nil, fmt.Errorf("statistics of a %v kernel need a Nyström map (n_components > 0): the exact kernel model is an expansion over all training samples",
			opt.Kernel.Kind)
	default:
		if ms < 1 || len(sample) != ms*n {
			return nil, fmt.Errorf("the Nyström map needs a landmark sample of at least one row of %d features, got %d values for %d rows",
				n, len(sample), ms)
		}
		if err := check.FiniteMagnitude("landmark sample", sample, n); err != nil {
			return nil, err
		}
		ny, err := buildNystrom(opt.Kernel, opt.Intercept, xmat.Matrix{Dense: mat.NewDense(ms, n, slices.Clone(sample))}, opt.NComponents, opt.Seed, nil, opt.Stop)
		if err != nil {
			return nil, err
		}
		s.ny = ny
	}
	nf := s.designWidth()
	if err := s.checkSize(nf); err != nil {
		return nil, err
	}
	s.st = newLinearStats(nf, sp.Dim())
	return s, nil
}

// checkSize refuses statistics over nf columns (features, or a map's components) of more than
// MaxExactUnknowns unknowns, or above the memory budget.
func (s *Stats) checkSize(nf int) error {
	if s.Space.Dim() > denseMaxDim {
		// before the unknowns: their advice (distributed CG, partial_fit with SGD) is refused here
		// too, and a Dask user was sent to both (probe FD)
		return largeDistributedDimError(s.Space)
	}
	if u := s.unknowns(nf); u > MaxExactUnknowns {
		if s.ny != nil {
			// the map holds the intercept's constant, and distributed CG refuses maps: the count
			// and the advice were the linear model's (probe FN)
			return fmt.Errorf("statistics of %d unknowns (the map's %d components × output dimension %d > %d) would hold "+
				"(%d)²/4 values; use fewer components (n_components), or StructuredRidge.partial_fit with solver=\"sgd\"",
				u, nf, s.Space.Dim(), MaxExactUnknowns, u)
		}
		return fmt.Errorf("statistics of %d unknowns (%s > %d) would hold (%d)²/4 values; "+
			"a linear model is solved by distributed conjugate gradients instead (solver=\"cg\"); otherwise use fewer "+
			"features (n_components) or StructuredRidge.partial_fit with solver=\"sgd\"", u, unknownsOf(s.Intercept), MaxExactUnknowns, u)
	}
	r, c := statsDims(nf, s.Space.Dim())
	return budget.Check(fmt.Sprintf("sufficient statistics of %d features on the %s space of dimension d = %d", nf, s.Space.Kind(), s.Space.Dim()),
		budget.Mul(8, int64(r), int64(c)))
}

// designWidth is the number of columns the moments are over: n, or the map's components.
func (s *Stats) designWidth() int {
	if s.ny != nil {
		return s.ny.components()
	}
	return s.NFeatures
}

// unknowns is the size of the normal equations solved from statistics over nf design columns.
func (s *Stats) unknowns(nf int) int {
	if s.Intercept && s.ny == nil {
		nf++
	}
	return nf * s.Space.Dim()
}

// Count is the number of examples accumulated (zero weights included).
func (s *Stats) Count() int64 { return s.st.count }

// Components is the dimension of the Nyström map, 0 without one.
func (s *Stats) Components() int {
	if s.ny == nil {
		return 0
	}
	return s.ny.components()
}

// Add returns s plus the examples of a chunk: inputs X (m×n, row-major, not retained), structures
// ys (m × Width) and optional weights. s is left unchanged. An empty chunk (m = 0) returns a copy.
func (s *Stats) Add(X []float64, m, n int, ys []int64, weights []float64, stop *cancel.Flag) (*Stats, error) {
	if n != s.NFeatures {
		return nil, fmt.Errorf("X has %d features, the statistics were started with %d", n, s.NFeatures)
	}
	if m < 0 || len(X) != m*n {
		return nil, fmt.Errorf("X has %d values, want %d×%d", len(X), m, n)
	}
	out := *s
	out.st = s.st.clone()
	if m == 0 {
		return &out, nil
	}
	if err := check.FiniteMagnitude("X", X, n); err != nil {
		return nil, err
	}
	if zeroWeights(weights) {
		// A chunk whose weights are all zero adds nothing (newProblem would refuse it: a fit
		// needs some weight, which Solve checks over all the chunks).
		if err := space.ValidateTargets(s.Space, ys, m); err != nil {
			return nil, err
		}
		if len(weights) != m {
			return nil, fmt.Errorf("sample_weight has %d entries for %d samples", len(weights), m)
		}
		out.st.count += int64(m)
		return &out, nil
	}
	// α does not enter the statistics; the Problem only carries ψ (as δ + p) and the weights.
	p, err := newProblem(s.Space, ys, m, weights, 1, partOfData, stop)
	if err != nil {
		return nil, err
	}
	// The statistics append the constant column themselves (the intercept is Stats'). A linear
	// model's follow the running mean of the rows, as PartialFit's do.
	des := design{X: mat.NewDense(m, n, X)}
	if s.ny != nil {
		Phi, err := s.ny.apply(xmat.Matrix{Dense: des.X}, stop)
		if err != nil {
			return nil, err
		}
		des = design{X: Phi}
	} else {
		out.st.recentre(design{X: des.X, intercept: s.Intercept}, p.Weight)
	}
	if err := out.st.add(p, des, stop); err != nil {
		return nil, err
	}
	if err := out.st.checkFinite(); err != nil {
		return nil, err
	}
	if out.keepStructures {
		if out.structures, out.keepStructures, err = withStructures(s.Space.Dim(), s.structures, nil, p); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// zeroWeights reports whether weights are given and all exactly zero.
func zeroWeights(w []float64) bool {
	if w == nil {
		return false
	}
	for _, v := range w {
		if v != 0 {
			return false
		}
	}
	return true
}

// checkFinite refuses moments that overflowed (with the exact solver's advice), so that what is
// kept, merged and serialised is always finite.
func (st *linearStats) checkFinite() error {
	for _, v := range st.M.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return sumsOverflow("the sufficient statistics'", v)
		}
	}
	return nil
}

// compatible reports why statistics a and b cannot be merged.
func (s *Stats) compatible(o *Stats) error {
	switch {
	case s.Space.Kind() != o.Space.Kind() || !slices.Equal(s.Space.Params(), o.Space.Params()):
		return fmt.Errorf("merging statistics of different spaces: %s%v and %s%v", s.Space.Kind(), s.Space.Params(), o.Space.Kind(), o.Space.Params())
	case s.NFeatures != o.NFeatures:
		return fmt.Errorf("merging statistics of %d and %d features", s.NFeatures, o.NFeatures)
	case !s.Kernel.Same(o.Kernel) || s.Intercept != o.Intercept:
		return fmt.Errorf("merging statistics of different models (kernel %v and %v, fit_intercept %v and %v)",
			s.Kernel.Kind, o.Kernel.Kind, s.Intercept, o.Intercept)
	case (s.ny == nil) != (o.ny == nil) || s.ny != nil && !s.ny.sameMap(o.ny):
		return fmt.Errorf("merging statistics computed with different Nyström maps: compute every chunk's statistics " +
			"from the same starting statistics (the same landmarks)")
	}
	return nil
}

// MergeStats returns the statistics of the examples of a and of b together; a and b must have
// been computed for the same space, features, kernel, intercept and Nyström map.
func MergeStats(a, b *Stats) (*Stats, error) {
	if err := a.compatible(b); err != nil {
		return nil, err
	}
	out := *a
	out.st = a.st.clone()
	out.structures, out.keepStructures = nil, a.keepStructures && b.keepStructures
	if out.keepStructures {
		var err error
		if out.structures, out.keepStructures, err = withStructures(a.Space.Dim(), a.structures, b.structures, nil); err != nil {
			return nil, err
		}
	}
	if !slices.Equal(a.st.shift, b.st.shift) {
		// Both move to the mean of all their rows, where Add would have taken them one chunk at
		// a time, so that each partition's statistics can follow its own mean.
		bst := b.st.clone()
		ma, wa := a.st.mean()
		mb, wb := bst.mean()
		common := pooledMean(ma, wa, mb, wb)
		out.st.reshift(common)
		bst.reshift(common)
		if !slices.Equal(out.st.shift, bst.shift) {
			return nil, sumsOverflow("the sufficient statistics'", math.Inf(1))
		}
		b = &Stats{st: bst}
	}
	out.st.M.Add(out.st.M, b.st.M)
	out.st.count += b.st.count
	if err := out.st.checkFinite(); err != nil {
		return nil, err
	}
	return &out, nil
}

// Solve returns the model that Fit with the exact solver gives on all the examples accumulated
// in s, with opt's alpha, empirical weight and reference measure; opt's kernel, intercept and presence of
// n_components must be those of s, and its solver auto or exact. The model keeps the statistics,
// so PartialFit continues it exactly.
func (s *Stats) Solve(opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if !opt.Kernel.Same(s.Kernel) || opt.Intercept != s.Intercept || (opt.NComponents > 0) != (s.ny != nil) {
		return nil, fmt.Errorf("solving statistics of kernel=%v, fit_intercept=%v, n_components=%d with kernel=%v, fit_intercept=%v, n_components=%d: "+
			"they must be those the statistics were computed for", s.Kernel.Kind, s.Intercept, s.Components(), opt.Kernel.Kind, opt.Intercept, opt.NComponents)
	}
	opt.Kernel = s.Kernel
	if opt.Solver != Auto && opt.Solver != Exact {
		return nil, fmt.Errorf("statistics are solved exactly (solver auto or exact), not by %v", opt.Solver)
	}
	if s.st.count == 0 {
		return nil, fmt.Errorf("the statistics hold no examples")
	}
	if err := checkCounts(s.Space, &opt); err != nil {
		return nil, err
	}
	if err := checkWeightTotal(s.st.moments().sum); err != nil {
		return nil, err
	}
	mean, S, err := uniformReference(s.Space, opt.Stop)
	if err != nil {
		return nil, err
	}
	md := &Model{Space: s.Space, Kernel: s.Kernel, Intercept: s.Intercept, NFeatures: s.NFeatures, Seen: s.st.count, ny: s.ny,
		stats: s.st.clone()}
	if s.ny != nil { // judged on the landmarks, the sample of X the map was built from (probe CH)
		md.warnPrecision(s.ny.landmarks)
	}
	if opt.EmpiricalWeight > 0 {
		ref, err := mixtureReference(s.Space, opt.Reference, mean, S, s.st.moments(), opt.EmpiricalWeight)
		if err != nil {
			return nil, err
		}
		ref.setRank(s.Space, nil, opt.EmpiricalWeight)
		if opt.Reference == Empirical && s.keepStructures {
			ref.tilt = s.structures
		}
		md.ref, mean, S = ref, ref.mean, ref.cov
	} else if mo := s.st.moments(); !(mo.sum > 0) {
		return nil, fmt.Errorf("sample_weight: the statistics' examples have zero total weight (every weight is 0)")
	}
	md.Solver = Exact
	// A Nyström map carries the intercept itself (the kernel k + 1): the design has no constant.
	if md.Coef, md.Result, err = md.stats.solve(S, mean, opt.Alpha, s.Intercept && s.ny == nil, opt.Stop); err != nil {
		return nil, err
	}
	md.warnCondition()
	if err := progressOnce(&opt, md.Result); err != nil {
		return nil, err
	}
	if err := md.checkFinite(); err != nil {
		return nil, err
	}
	return md, nil
}

// Equal reports whether two statistics are for the same model and their moments agree to within
// tol relative to the largest moment (for tests and callers checking a reduction).
func (s *Stats) Equal(o *Stats, tol float64) bool {
	if s.compatible(o) != nil || s.st.count != o.st.count {
		return false
	}
	a, b := s.st.M.RawMatrix().Data, o.st.M.RawMatrix().Data
	scale := math.Max(floats.Norm(a, math.Inf(1)), 1e-300)
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*scale {
			return false
		}
	}
	return true
}
