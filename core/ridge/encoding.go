package ridge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The model byte format: magic, version, little-endian fields, then a CRC-32C of everything before.
// Bytes come from pickles, which users may load from anywhere: UnmarshalModel trusts nothing.
//
// Version 2 appends to the fields of version 1: the examples seen and SGD steps taken (uint64
// each), the Nyström landmarks and projection and the sufficient statistics of PartialFit (three
// optional matrices) and the count of examples in those statistics (uint64). Version 1 bytes are
// still read (as models with none of these). Version 3 appends the reference measure when it is not
// the uniform one (Options.EmpiricalWeight): its mean (1×d) and covariance (d×d) as optional
// matrices and the covariance's rank (uint64); version 1 and 2 models have the uniform reference.
// Version 4 appends the support inputs and the Nyström landmarks of a model fitted on sparse X, as
// optional CSR matrices (their dense slots are then absent); older models have dense ones.
// Version 5 appends the n_components a Nyström map was built for (uint64, 0 without a map), which
// PartialFit holds the next chunks to; older models hold it as unknown (0) and accept any.
// Version 6 appends the shift of the sufficient statistics (an optional 1×n matrix: the inputs'
// mean they were accumulated around, with an intercept); older models' statistics have none.
// Version 7 appends what the tilted estimate (tilt.go) needs of a data-driven reference: the
// empirical reference's training structures as an optional CSR matrix (distinct structures × d)
// and an optional 1×k matrix of their weights, the product reference's mean as an optional 1×d
// matrix, and the weight w of that part (float64); older models have none.
const (
	modelMagic   = "CPRM"
	modelVersion = 7
	maxKindLen   = 64
	maxDim       = 1 << 28 // bounds a single matrix dimension read from bytes
	maxCount     = 1 << 62 // bounds the example and step counters
)

// ErrCorrupt wraps every reason bytes are rejected by UnmarshalModel.
var ErrCorrupt = errors.New("corrupt model bytes")

// MarshalBinary encodes the model in the current format version.
func (md *Model) MarshalBinary() ([]byte, error) {
	return md.marshal(modelVersion)
}

// marshal encodes the model in format version 1 to 7; an older version cannot hold what a newer
// one added (except the requested n_components of version 5, which older versions leave unknown,
// and the structures of version 7, without which a model has no tilted estimate).
func (md *Model) marshal(version int) ([]byte, error) {
	sparseLandmarks := md.ny != nil && md.ny.landmarks.Sparse != nil
	if version == 1 && (md.Seen != 0 || md.Steps != 0 || md.ny != nil || md.stats != nil) || version < 3 && md.ref != nil ||
		version < 4 && (md.supportCSR != nil || sparseLandmarks) || version < 6 && md.statsShift() != nil {
		return nil, fmt.Errorf("format version %d cannot hold this model", version)
	}
	w := binfmt.NewWriter(modelMagic, uint16(version))
	w.String(md.Space.Kind())
	w.Int64s(md.Space.Params())
	w.U8(uint8(md.Kernel.Kind))
	w.F64(md.Kernel.Gamma)
	w.U32(uint32(int32(md.Kernel.Degree)))
	w.F64(md.Kernel.Coef0)
	w.Bool(md.Intercept)
	w.U32(uint32(md.NFeatures))
	w.U32(uint32(md.Result.Iterations))
	w.F64(md.Result.Objective)
	w.F64(md.Result.RelGrad)
	w.Bool(md.Result.Converged)
	matrix := func(m *mat.Dense) { // a presence byte, then the matrix
		if m == nil {
			w.U8(0)
			return
		}
		w.U8(1)
		r, c := m.Dims()
		w.Matrix(r, c, mat.DenseCopyOf(m).RawMatrix().Data)
	}
	matrix(md.Coef)
	matrix(md.Dual)
	matrix(md.Support)
	if version >= 2 {
		w.U64(uint64(md.Seen))
		w.U64(uint64(md.Steps))
		var landmarks, proj, stats *mat.Dense
		if md.ny != nil {
			landmarks, proj = md.ny.landmarks.Dense, md.ny.projection()
		}
		if md.stats != nil {
			stats = md.stats.M
		}
		matrix(landmarks)
		matrix(proj)
		matrix(stats)
		w.U64(uint64(md.statsCount()))
	}
	if version >= 3 {
		var mean, cov *mat.Dense
		var rank int
		if md.ref != nil {
			mean, cov, rank = mat.NewDense(1, len(md.ref.mean), md.ref.mean), mat.DenseCopyOf(md.ref.cov), md.ref.rank
		}
		matrix(mean)
		matrix(cov)
		w.U64(uint64(rank))
	}
	if version >= 4 {
		writeCSR(w, md.supportCSR)
		var lm *xmat.CSR
		if md.ny != nil {
			lm = md.ny.landmarks.Sparse
		}
		writeCSR(w, lm)
	}
	if version >= 5 {
		w.U64(uint64(md.components))
	}
	if version >= 6 {
		var shift *mat.Dense
		if s := md.statsShift(); s != nil {
			shift = mat.NewDense(1, len(s), s)
		}
		matrix(shift)
	}
	if version >= 7 {
		var psi *xmat.CSR
		var weight, product *mat.Dense
		var tw float64
		if r := md.ref; r != nil && (r.tilt != nil || r.productMean != nil) {
			tw = r.weight
			if r.tilt != nil {
				psi, weight = r.tilt.psi, mat.NewDense(1, len(r.tilt.weight), r.tilt.weight)
			} else {
				product = mat.NewDense(1, len(r.productMean), r.productMean)
			}
		}
		writeCSR(w, psi)
		matrix(weight)
		matrix(product)
		w.F64(tw)
	}
	return w.Sign(), nil
}

// writeCSR writes a presence byte and, when a is not nil, its shape (uint64 each), indptr and
// indices (binfmt.Int64s) and data (uint32 count, then the values).
func writeCSR(w *binfmt.Writer, a *xmat.CSR) {
	if a == nil {
		w.U8(0)
		return
	}
	w.U8(1)
	r, c := a.Dims()
	w.U64(uint64(r))
	w.U64(uint64(c))
	indptr, indices, data := a.Raw()
	w.Int64s(indptr)
	w.Int64s(indices)
	w.U32(uint32(len(data)))
	for _, v := range data {
		w.F64(v)
	}
}

// present reads the presence byte of the optional value name: whether the value follows (1) or
// not (0); any other byte fails r.
func present(r *binfmt.Reader, name string) bool {
	switch v := r.U8(); v {
	case 0, 1:
		return v == 1
	}
	r.Fail("bad presence flag for %s", name)
	return false
}

// readCSR reads what writeCSR wrote and validates it as a CSR matrix (xmat.New).
func readCSR(r *binfmt.Reader, name string) *xmat.CSR {
	if !present(r, name) {
		return nil
	}
	rows, cols := r.U64(), r.U64()
	indptr := r.Int64s(name + " indptr")
	indices := r.Int64s(name + " indices")
	nnz := int(r.U32())
	if r.Err() != nil {
		return nil
	}
	if rows < 1 || rows > maxDim || cols < 1 || cols > maxDim || nnz != len(indices) {
		r.Fail("%s: shape %d×%d with %d values for %d indices", name, rows, cols, nnz, len(indices))
		return nil
	}
	data := make([]float64, nnz)
	for k := range data {
		data[k] = r.F64()
	}
	if r.Err() != nil {
		return nil
	}
	a, err := xmat.New(int(rows), int(cols), indptr, indices, data)
	if err != nil {
		r.Fail("%s: %v", name, err)
		return nil
	}
	return a
}

func (md *Model) statsShift() []float64 {
	if md.stats == nil {
		return nil
	}
	return md.stats.shift
}

func (md *Model) statsCount() int64 {
	if md.stats == nil {
		return 0
	}
	return md.stats.count
}

// optionalMatrix reads a presence byte and, when it is 1, a matrix.
func optionalMatrix(r *binfmt.Reader, name string) *mat.Dense {
	if !present(r, name) {
		return nil
	}
	rows, cols, data := r.Matrix(name, maxDim)
	if r.Err() != nil {
		return nil
	}
	return mat.NewDense(rows, cols, data)
}

// count reads a non-negative counter.
func count(r *binfmt.Reader, name string) int64 {
	v := r.U64()
	if v > maxCount {
		r.Fail("%s: %d out of range", name, v)
		return 0
	}
	return int64(v)
}

// corruptUnlessCancelled wraps a failure to build a decoded space in corrupt, but for a
// cancellation, which says nothing about the bytes.
func corruptUnlessCancelled(corrupt, err error) error {
	if errors.Is(err, cancel.ErrCancelled) {
		return err
	}
	return fmt.Errorf("%w: %v", corrupt, err)
}

// UnmarshalModel decodes and validates bytes written by MarshalBinary (either format version).
func UnmarshalModel(data []byte) (*Model, error) { return UnmarshalModelUntil(data, nil) }

// UnmarshalModelUntil is UnmarshalModel, returning cancel.ErrCancelled once stop is set while it
// builds the model's space (a DAG's ancestor sets can take seconds; a nil stop never stops).
func UnmarshalModelUntil(data []byte, stop *cancel.Flag) (*Model, error) {
	r, version, err := binfmt.Open(data, modelMagic, modelVersion, ErrCorrupt)
	if err != nil {
		return nil, err
	}
	kind := r.String("space kind", maxKindLen)
	params := r.Int64s("space parameters")
	md := &Model{}
	var landmarks, proj *mat.Dense
	md.Kernel.Kind = kernel.Kind(r.U8())
	md.Kernel.Gamma = r.F64()
	md.Kernel.Degree = int(int32(r.U32()))
	md.Kernel.Coef0 = r.F64()
	md.Intercept = r.Bool("intercept")
	md.NFeatures = int(r.U32())
	md.Result.Iterations = int(r.U32())
	md.Result.Objective = r.F64()
	md.Result.RelGrad = r.F64()
	md.Result.Converged = r.Bool("converged")
	md.Coef = optionalMatrix(r, "coefficients")
	md.Dual = optionalMatrix(r, "dual coefficients")
	if support := optionalMatrix(r, "support inputs"); support != nil {
		md.setSupport(xmat.Matrix{Dense: support})
	}
	if version >= 2 {
		md.Seen, md.Steps = count(r, "examples seen"), count(r, "SGD steps")
		landmarks, proj = optionalMatrix(r, "Nyström landmarks"), optionalMatrix(r, "Nyström projection")
		if stats := optionalMatrix(r, "sufficient statistics"); stats != nil {
			md.stats = &linearStats{M: stats}
		}
		if n := count(r, "examples in the statistics"); md.stats != nil {
			md.stats.count = n
		} else if n != 0 {
			r.Fail("an example count without statistics")
		}
	}
	var refMean, refCov *mat.Dense
	var refRank int64
	if version >= 3 {
		refMean, refCov = optionalMatrix(r, "reference mean"), optionalMatrix(r, "reference covariance")
		refRank = count(r, "reference rank")
	}
	var sparseLandmarks *xmat.CSR
	if version >= 4 {
		if support := readCSR(r, "sparse support inputs"); support != nil {
			if md.Support != nil {
				r.Fail("both dense and sparse support inputs")
			}
			md.setSupport(xmat.Matrix{Sparse: support})
		}
		sparseLandmarks = readCSR(r, "sparse Nyström landmarks")
	}
	if version >= 5 {
		md.components = int(count(r, "n_components"))
	}
	var shift *mat.Dense
	if version >= 6 {
		shift = optionalMatrix(r, "statistics shift")
	}
	var tiltPsi *xmat.CSR
	var tiltWeight, productMean *mat.Dense
	var tiltW float64
	if version >= 7 {
		tiltPsi, tiltWeight = readCSR(r, "reference structures"), optionalMatrix(r, "reference structure weights")
		productMean = optionalMatrix(r, "product reference mean")
		tiltW = r.F64()
	}
	switch {
	case landmarks != nil && sparseLandmarks != nil:
		r.Fail("both dense and sparse Nyström landmarks")
	case (landmarks == nil && sparseLandmarks == nil) != (proj == nil):
		r.Fail("Nyström landmarks without projection or the reverse")
	case proj != nil:
		// checked before the map is built: 224 bytes declaring sparse landmarks of 2²⁸ columns
		// for a model of 5 features had their transposes allocated, 4 GiB, before the shape
		// checks refused them (probe DD)
		if _, n := (xmat.Matrix{Dense: landmarks, Sparse: sparseLandmarks}).Dims(); n != md.NFeatures {
			r.Fail("Nyström landmarks of %d columns for a model of %d features", n, md.NFeatures)
		}
	}
	if err := r.Finish(); err != nil {
		return nil, err
	}
	if proj != nil { // every field read and sound: the map's transposes are worth their memory
		if sparseLandmarks != nil { // the map holds their transpose: a refusal of the budget, not corrupt bytes
			if err := sparseLandmarks.CheckTranspose("the model's sparse Nyström landmarks", "its map"); err != nil {
				return nil, err
			}
		}
		md.ny = newNystromMap(md.Kernel, md.Intercept, xmat.Matrix{Dense: landmarks, Sparse: sparseLandmarks}, proj)
	}
	sp, err := space.NewUntil(kind, params, stop)
	if err != nil {
		return nil, corruptUnlessCancelled(ErrCorrupt, err)
	}
	md.Space = sp
	if err := md.Kernel.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := md.checkShapes(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := md.setReference(refMean, refCov, refRank); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := md.setStatsShift(shift); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := md.setTilt(tiltPsi, tiltWeight, productMean, tiltW); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return md, nil
}

// setTilt restores what the tilted estimate needs of the reference (tilt.go), read from bytes,
// checking it: a reference to hold it, a weight w in (0, 1], and either the empirical structures
// (d columns of values in the range of ψ's coordinates, one positive finite weight each) or the
// product measure's mean (1×d, in that range, on a space with a product measure); or nothing.
func (md *Model) setTilt(psi *xmat.CSR, weight, product *mat.Dense, w float64) error {
	if psi == nil && weight == nil && product == nil {
		if w != 0 {
			return fmt.Errorf("a reference weight %v without reference structures or product mean", w)
		}
		return nil
	}
	if (psi == nil) != (weight == nil) || (product != nil && psi != nil) {
		return fmt.Errorf("reference structures without weights, or with a product mean too")
	}
	if md.ref == nil {
		return fmt.Errorf("reference structures or product mean without a reference measure")
	}
	if !(w > 0 && w <= 1) {
		return fmt.Errorf("reference weight %v outside (0, 1]", w)
	}
	if product != nil {
		if _, ok := md.Space.(space.MarginalMeasure); !ok {
			return fmt.Errorf("a product reference mean on the %s space, which has no product measure", md.Space.Kind())
		}
		if r, c := product.Dims(); r != 1 || c != md.Space.Dim() {
			return fmt.Errorf("product reference mean %d×%d, want 1×%d", r, c, md.Space.Dim())
		}
		p := product.RawRowView(0)
		if err := checkCoords(md.Space, "a product reference mean's coordinate", p); err != nil {
			return err
		}
		md.ref.weight, md.ref.productMean = w, p
		return nil
	}
	t, err := checkTilt(md.Space, psi, weight)
	if err != nil {
		return err
	}
	md.ref.weight, md.ref.tilt = w, t
	return nil
}

// setReference restores a reference measure read from bytes, checking that it is one: a finite
// mean of length d with a symmetric d×d covariance and a rank of at most d, or none of them.
func (md *Model) setReference(mean, cov *mat.Dense, rank int64) error {
	d := md.Space.Dim()
	if mean == nil && cov == nil {
		if rank != 0 {
			return fmt.Errorf("a reference rank without a reference measure")
		}
		return nil
	}
	if mean == nil || cov == nil {
		return fmt.Errorf("a reference mean without covariance or the reverse")
	}
	if r, c := mean.Dims(); r != 1 || c != d {
		return fmt.Errorf("reference mean %d×%d, want 1×%d", r, c, d)
	}
	if r, c := cov.Dims(); r != d || c != d {
		return fmt.Errorf("reference covariance %d×%d, want %d×%d", r, c, d, d)
	}
	if rank > int64(d) {
		return fmt.Errorf("reference rank %d above the dimension %d", rank, d)
	}
	ref := &reference{mean: mean.RawRowView(0), cov: mat.NewSymDense(d, nil), rank: int(rank)}
	for a := 0; a < d; a++ {
		if math.IsNaN(ref.mean[a]) || math.IsInf(ref.mean[a], 0) {
			return fmt.Errorf("reference mean[%d] = %v", a, ref.mean[a])
		}
		for b := a; b < d; b++ {
			v := cov.At(a, b)
			if v != cov.At(b, a) || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("reference covariance is not a finite symmetric matrix at (%d, %d)", a, b)
			}
			ref.cov.SetSym(a, b, v)
		}
	}
	md.ref = newReference(ref.mean, ref.cov, ref.rank)
	return nil
}

// checkShapes verifies that the matrices agree with the kernel, the space and NFeatures.
func (md *Model) checkShapes() error {
	d := md.Space.Dim()
	if md.NFeatures < 1 {
		return fmt.Errorf("no features")
	}
	dims := func(m *mat.Dense) (int, int) {
		if m == nil {
			return -1, -1
		}
		return m.Dims()
	}
	cr, cc := dims(md.Coef)
	dr, dc := dims(md.Dual)
	sr, sc := dims(md.Support)
	if md.supportCSR != nil {
		sr, sc = md.supportCSR.Dims()
	}
	switch md.Kernel.Kind {
	case kernel.Linear:
		want := md.NFeatures
		if md.Intercept {
			want++
		}
		if cr != want || cc != d || md.Dual != nil || md.hasSupport() {
			return fmt.Errorf("linear model with coefficients %d×%d, want %d×%d", cr, cc, want, d)
		}
	case kernel.Precomputed:
		if md.Coef != nil || md.hasSupport() || dr != md.NFeatures || dc != d {
			return fmt.Errorf("precomputed-kernel model with dual %d×%d, want %d×%d", dr, dc, md.NFeatures, d)
		}
	default:
		if md.ny != nil {
			return md.checkNystrom()
		}
		if md.Coef != nil || dc != d || sr != dr || sc != md.NFeatures {
			return fmt.Errorf("kernel model with dual %d×%d and support %d×%d", dr, dc, sr, sc)
		}
	}
	if md.ny != nil {
		return fmt.Errorf("a %v model with a Nyström map", md.Kernel.Kind)
	}
	if md.components != 0 {
		return fmt.Errorf("n_components = %d without a Nyström map", md.components)
	}
	return md.checkStats(md.NFeatures)
}

// checkNystrom verifies the shapes of a model linear on its Nyström map.
func (md *Model) checkNystrom() error {
	lr, lc := md.ny.landmarks.Dims()
	pr, pc := md.ny.dims()
	if lr > MaxComponents || lc != md.NFeatures || pr != lr || pc > pr || md.Dual != nil || md.hasSupport() || md.Coef == nil {
		return fmt.Errorf("Nyström model with landmarks %d×%d and projection %d×%d", lr, lc, pr, pc)
	}
	if md.components != 0 && (md.components < lr || md.components > MaxComponents) {
		return fmt.Errorf("Nyström model with %d landmarks built for n_components = %d", lr, md.components)
	}
	if cr, cc := md.Coef.Dims(); cr != pc || cc != md.Space.Dim() {
		return fmt.Errorf("Nyström model with %d components and coefficients %d×%d", pc, cr, cc)
	}
	return md.checkStats(pc)
}

// setStatsShift restores the statistics' shift read from bytes (checkedShift).
func (md *Model) setStatsShift(shift *mat.Dense) error {
	if shift == nil {
		return nil
	}
	if md.stats == nil {
		return fmt.Errorf("a statistics shift without statistics")
	}
	s, err := checkedShift(shift, md.Kernel, md.Intercept, md.NFeatures)
	md.stats.shift = s
	return err
}

// checkedShift returns the shift of statistics read from bytes as a row, or why it is not one:
// finite, one value per feature, of a linear model with an intercept (the others have none).
func checkedShift(shift *mat.Dense, k kernel.Kernel, intercept bool, n int) ([]float64, error) {
	r, c := shift.Dims()
	if k.Kind != kernel.Linear || !intercept || r != 1 || c != n {
		return nil, fmt.Errorf("a statistics shift of %d×%d for a %v model on %d features (intercept: %v)", r, c, k.Kind, n, intercept)
	}
	s := shift.RawRowView(0)
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("the statistics shift holds %v", v)
		}
	}
	return slices.Clone(s), nil
}

// checkStats verifies the shape of the sufficient statistics of a model linear on nf features.
func (md *Model) checkStats(nf int) error {
	if md.stats == nil {
		return nil
	}
	d := md.Space.Dim()
	r, c := md.stats.M.Dims()
	if wr, wc := statsDims(nf, d); md.Coef == nil || r != wr || c != wc {
		return fmt.Errorf("sufficient statistics %d×%d, want %d×%d", r, c, wr, wc)
	}
	md.stats.n, md.stats.d = nf, d
	return nil
}
