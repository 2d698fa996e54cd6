package prob

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The model byte format (package binfmt: magic, version, little-endian fields, CRC-32C):
//
//	"CPPM" | version u16 = 2
//	space kind (u16 length + bytes) | space parameters (u32 count + int64 each)
//	intercept u8 | n_features u32
//	inference: method u8 | samples u32 | sampler u8 | chain u8 | burn-in u32 | thinning u32 |
//	           chains u32 | max steps u32
//	result: solver u8 | exact u8 | iterations u32 | objective f64 | relative gradient f64 |
//	        converged u8
//	W: rows u32 | cols u32 | rows·cols f64, row-major
//	version ≥ 2: relative gradient's standard error f64 | final samples per row u32
//	CRC-32C of everything before
//
// Version 1 bytes (no standard error or final samples) are read with RelGradSE NaN and
// FinalSamples 0 (unknown); they are written back as version 2.
//
// UnmarshalModel trusts nothing: it checks every flag and enumeration, bounds every count, rebuilds
// the space through space.New, requires W to be finite and of shape (n_features [+1]) × Dim(), and
// the inference options to be valid for the space. The objective and relative gradient are
// diagnostics and may hold any value (NaN when inference was sampled).
const (
	modelMagic   = "CPPM"
	modelVersion = 2
	maxKindLen   = 64
	maxDim       = 1 << 28       // bounds a dimension of W
	maxInt       = math.MaxInt32 // bounds the integer options and counters
)

// ErrCorrupt wraps every reason bytes are rejected by UnmarshalModel.
var ErrCorrupt = errors.New("corrupt probabilistic model bytes")

// MarshalBinary encodes the model.
func (md *Model) MarshalBinary() ([]byte, error) {
	inf := md.Inference
	for _, v := range []int{md.NFeatures, inf.Samples, inf.Sampler.BurnIn, inf.Sampler.Thin, inf.Sampler.Chains,
		inf.Sampler.MaxSteps, md.Result.Iterations, md.Result.FinalSamples} {
		if v < 0 || v > maxInt {
			return nil, fmt.Errorf("prob: cannot encode the model: a count (%d) is out of range", v)
		}
	}
	w := binfmt.NewWriter(modelMagic, modelVersion)
	w.String(md.Space.Kind())
	w.Int64s(md.Space.Params())
	w.Bool(md.Intercept)
	w.U32(uint32(md.NFeatures))
	w.U8(uint8(inf.Method))
	w.U32(uint32(inf.Samples))
	w.U8(uint8(inf.Sampler.Sampler))
	w.U8(uint8(inf.Sampler.Chain))
	for _, v := range []int{inf.Sampler.BurnIn, inf.Sampler.Thin, inf.Sampler.Chains, inf.Sampler.MaxSteps} {
		w.U32(uint32(v))
	}
	w.U8(uint8(md.Result.Solver))
	w.Bool(md.Result.Exact)
	w.U32(uint32(md.Result.Iterations))
	w.F64(md.Result.Objective)
	w.F64(md.Result.RelGrad)
	w.Bool(md.Result.Converged)
	r, c := md.Coef.Dims()
	w.Matrix(r, c, mat.DenseCopyOf(md.Coef).RawMatrix().Data)
	w.F64(md.Result.RelGradSE)
	w.U32(uint32(md.Result.FinalSamples))
	return w.Sign(), nil
}

// UnmarshalModel decodes and validates bytes written by MarshalBinary.
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
	md.Intercept = r.Bool("intercept")
	md.NFeatures = r.Int("n_features", 1, maxDim)
	inf := &md.Inference
	inf.Method = InferenceMethod(r.Enum("inference method", uint8(InferSampled)))
	inf.Samples = r.Int("samples", 0, maxInt)
	inf.Sampler.Sampler = SamplerKind(r.Enum("sampler", uint8(SamplerAuto)))
	inf.Sampler.Chain = ChainKind(r.Enum("chain", uint8(ChainMixed)))
	for _, p := range []*int{&inf.Sampler.BurnIn, &inf.Sampler.Thin, &inf.Sampler.Chains, &inf.Sampler.MaxSteps} {
		*p = r.Int("sampler setting", 0, maxInt)
	}
	md.Result.Solver = Solver(r.Enum("solver", uint8(SolverAdam)))
	md.Result.Exact = r.Bool("exact")
	md.Result.Iterations = r.Int("iterations", 0, maxInt)
	md.Result.Objective = r.F64()
	md.Result.RelGrad = r.F64()
	md.Result.Converged = r.Bool("converged")
	rows, cols, coef := r.Matrix("W", maxDim)
	md.Result.RelGradSE = math.NaN()
	if version >= 2 {
		md.Result.RelGradSE = r.F64()
		md.Result.FinalSamples = r.Int("final samples", 0, maxInt)
	}
	if err := r.Finish(); err != nil {
		return nil, err
	}
	sp, err := space.NewUntil(kind, params, stop)
	if errors.Is(err, cancel.ErrCancelled) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if !slices.Equal(sp.Params(), params) {
		return nil, fmt.Errorf("%w: space parameters %v are not in canonical form %v", ErrCorrupt, params, sp.Params())
	}
	if err := space.Counts(sp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	md.Space = sp
	want := md.NFeatures
	if md.Intercept {
		want++
	}
	if rows != want || cols != sp.Dim() {
		return nil, fmt.Errorf("%w: W is %d×%d, want %d×%d for %d feature(s) and the %s space", ErrCorrupt,
			rows, cols, want, sp.Dim(), md.NFeatures, kind)
	}
	md.Coef = mat.NewDense(rows, cols, coef)
	if err := inf.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if inf.Method == InferExact && !HasExact(sp) {
		return nil, fmt.Errorf("%w: exact inference on the %s space, which has none", ErrCorrupt, kind)
	}
	if (inf.Sampler.Chain == ChainLocal || inf.Sampler.Chain == ChainMixed) && !HasLocalChain(sp) {
		return nil, fmt.Errorf("%w: a %v chain on the %s space, which has no local chain", ErrCorrupt, inf.Sampler.Chain, kind)
	}
	return md, nil
}
