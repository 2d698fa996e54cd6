package ridge

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The statistics byte format, in the framing of the model bytes (core/binfmt: magic, version,
// little-endian fields, CRC-32C): the space (kind, parameters), the kernel (kind, gamma, degree,
// coef0), the intercept, the input width, the Nyström landmarks and projection (optional
// matrices, both or neither), the moment matrix and the count of examples; version 2 appends the
// shift the moments were accumulated around (an optional 1×n matrix; version 1 has none); version
// 3 appends the distinct training structures (an optional CSR matrix as in the model bytes, and
// their weights, an optional 1×k matrix) and whether they are kept (a bool; statistics of
// earlier versions read as not keeping them). The
// bytes travel between the workers of a cluster and may be stored: UnmarshalStats trusts nothing —
// the shapes must agree with the space, kernel and map, and every moment must be finite.
const (
	statsMagic   = "CPRS"
	statsVersion = 3
)

// ErrCorruptStats wraps every reason bytes are rejected by UnmarshalStats.
var ErrCorruptStats = errors.New("corrupt statistics bytes")

// MarshalBinary encodes the statistics in the current format version.
func (s *Stats) MarshalBinary() ([]byte, error) {
	w := binfmt.NewWriter(statsMagic, statsVersion)
	w.String(s.Space.Kind())
	w.Int64s(s.Space.Params())
	w.U8(uint8(s.Kernel.Kind))
	w.F64(s.Kernel.Gamma)
	w.U32(uint32(int32(s.Kernel.Degree)))
	w.F64(s.Kernel.Coef0)
	w.Bool(s.Intercept)
	w.U32(uint32(s.NFeatures))
	matrix := func(m *mat.Dense) {
		if m == nil {
			w.U8(0)
			return
		}
		w.U8(1)
		r, c := m.Dims()
		w.Matrix(r, c, mat.DenseCopyOf(m).RawMatrix().Data)
	}
	var landmarks, proj *mat.Dense
	if s.ny != nil {
		landmarks, proj = s.ny.landmarks.Dense, s.ny.projection() // statistics draw landmarks from dense samples
	}
	matrix(landmarks)
	matrix(proj)
	r, c := s.st.M.Dims()
	w.Matrix(r, c, s.st.M.RawMatrix().Data)
	w.U64(uint64(s.st.count))
	var shift *mat.Dense
	if s.st.shift != nil {
		shift = mat.NewDense(1, len(s.st.shift), s.st.shift)
	}
	matrix(shift)
	var psi *xmat.CSR
	var weight *mat.Dense
	if t := s.structures; t != nil {
		psi, weight = t.psi, mat.NewDense(1, len(t.weight), t.weight)
	}
	writeCSR(w, psi)
	matrix(weight)
	w.Bool(s.keepStructures)
	return w.Sign(), nil
}

// UnmarshalStats decodes and validates bytes written by Stats.MarshalBinary.
func UnmarshalStats(data []byte) (*Stats, error) { return UnmarshalStatsUntil(data, nil) }

// UnmarshalStatsUntil is UnmarshalStats, returning cancel.ErrCancelled once stop is set while it
// builds the statistics' space (a nil stop never stops).
func UnmarshalStatsUntil(data []byte, stop *cancel.Flag) (*Stats, error) {
	r, version, err := binfmt.Open(data, statsMagic, statsVersion, ErrCorruptStats)
	if err != nil {
		return nil, err
	}
	kind := r.String("space kind", maxKindLen)
	params := r.Int64s("space parameters")
	s := &Stats{}
	s.Kernel.Kind = kernel.Kind(r.U8())
	s.Kernel.Gamma = r.F64()
	s.Kernel.Degree = int(int32(r.U32()))
	s.Kernel.Coef0 = r.F64()
	s.Intercept = r.Bool("intercept")
	s.NFeatures = int(r.U32())
	landmarks, proj := optionalMatrix(r, "Nyström landmarks"), optionalMatrix(r, "Nyström projection")
	rows, cols, moments := r.Matrix("moments", maxDim)
	n := count(r, "examples in the statistics")
	var shift *mat.Dense
	if version >= 2 {
		shift = optionalMatrix(r, "statistics shift")
	}
	var psi *xmat.CSR
	var weight *mat.Dense
	if version >= 3 {
		psi = readCSR(r, "training structures")
		weight = optionalMatrix(r, "training structures' weights")
		s.keepStructures = r.Bool("structures kept")
	}
	if err := r.Finish(); err != nil {
		return nil, err
	}
	corrupt := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrCorruptStats, fmt.Sprintf(format, a...))
	}
	sp, err := space.NewUntil(kind, params, stop)
	if err != nil {
		return nil, corruptUnlessCancelled(ErrCorruptStats, err)
	}
	s.Space = sp
	if err := s.Kernel.Validate(); err != nil {
		return nil, corrupt("%v", err)
	}
	if s.NFeatures < 1 || s.NFeatures > maxDim {
		return nil, corrupt("%d features", s.NFeatures)
	}
	if sp.Dim() > denseMaxDim {
		return nil, corrupt("space of dimension %d above %d", sp.Dim(), denseMaxDim)
	}
	switch {
	case (landmarks == nil) != (proj == nil):
		return nil, corrupt("Nyström landmarks without projection or the reverse")
	case s.Kernel.Kind == kernel.Precomputed:
		return nil, corrupt("statistics of a precomputed kernel")
	case s.Kernel.Kind == kernel.Linear && landmarks != nil:
		return nil, corrupt("a linear model with a Nyström map")
	case s.Kernel.Kind != kernel.Linear && landmarks == nil:
		return nil, corrupt("a %v kernel without a Nyström map", s.Kernel.Kind)
	}
	if landmarks != nil {
		lr, lc := landmarks.Dims()
		pr, pc := proj.Dims()
		if lr > MaxComponents || lc != s.NFeatures || pr != lr || pc > pr {
			return nil, corrupt("Nyström map with landmarks %d×%d and projection %d×%d", lr, lc, pr, pc)
		}
		for _, m := range []*mat.Dense{landmarks, proj} {
			for _, v := range m.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, corrupt("Nyström map holds %v", v)
				}
			}
		}
		s.ny = newNystromMap(s.Kernel, s.Intercept, xmat.Matrix{Dense: landmarks}, proj)
	}
	nf := s.designWidth()
	if u := s.unknowns(nf); u > MaxExactUnknowns {
		return nil, corrupt("%d unknowns above %d", u, MaxExactUnknowns)
	}
	if wr, wc := statsDims(nf, sp.Dim()); rows != wr || cols != wc {
		return nil, corrupt("moments %d×%d, want %d×%d", rows, cols, wr, wc)
	}
	s.st = &linearStats{n: nf, d: sp.Dim(), M: mat.NewDense(rows, cols, moments), count: n}
	if err := s.st.checkFinite(); err != nil {
		return nil, corrupt("%v", err)
	}
	if shift != nil {
		if s.st.shift, err = checkedShift(shift, s.Kernel, s.Intercept, s.NFeatures); err != nil {
			return nil, corrupt("%v", err)
		}
	}
	switch {
	case (psi == nil) != (weight == nil):
		return nil, corrupt("training structures without weights or the reverse")
	case psi != nil && !s.keepStructures:
		return nil, corrupt("training structures marked as not kept")
	case psi != nil:
		if s.structures, err = checkTilt(sp, psi, weight); err != nil {
			return nil, corrupt("%v", err)
		}
		if _, _, data := psi.Raw(); len(data) > maxStatsStructureValues {
			return nil, corrupt("%d values of training structures above %d", len(data), maxStatsStructureValues)
		}
	}
	return s, nil
}
