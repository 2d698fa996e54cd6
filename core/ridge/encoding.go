package ridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The model byte format: magic, version, little-endian fields, then a CRC-32C of everything before.
// Bytes come from pickles, which users may load from anywhere: UnmarshalModel trusts nothing.
//
// Version 2 appends to the fields of version 1: the examples seen and SGD steps taken (uint64
// each), the Nyström landmarks and projection and the sufficient statistics of PartialFit (three
// optional matrices) and the count of examples in those statistics (uint64). Version 1 bytes are
// still read (as models with none of these).
const (
	modelMagic   = "CPRM"
	modelVersion = 2
	maxKindLen   = 64
	maxDim       = 1 << 28 // bounds a single matrix dimension read from bytes
	maxCount     = 1 << 62 // bounds the example and step counters
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt wraps every reason bytes are rejected by UnmarshalModel.
var ErrCorrupt = errors.New("corrupt model bytes")

// MarshalBinary encodes the model in the current format version.
func (md *Model) MarshalBinary() ([]byte, error) {
	return md.marshal(modelVersion)
}

// marshal encodes the model in format version 1 or 2; version 1 cannot hold what version 2 added.
func (md *Model) marshal(version int) ([]byte, error) {
	if version == 1 && (md.Seen != 0 || md.Steps != 0 || md.ny != nil || md.stats != nil) {
		return nil, fmt.Errorf("format version 1 cannot hold this model")
	}
	var b bytes.Buffer
	b.WriteString(modelMagic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(uint16(version))
	kind := md.Space.Kind()
	w(uint16(len(kind)))
	b.WriteString(kind)
	params := md.Space.Params()
	w(uint32(len(params)))
	w(params)
	w(uint8(md.Kernel.Kind))
	w(md.Kernel.Gamma)
	w(int32(md.Kernel.Degree))
	w(md.Kernel.Coef0)
	w(boolByte(md.Intercept))
	w(uint32(md.NFeatures))
	w(uint32(md.Result.Iterations))
	w(md.Result.Objective)
	w(md.Result.RelGrad)
	w(boolByte(md.Result.Converged))
	matrix := func(m *mat.Dense) {
		if m == nil {
			w(uint8(0))
			return
		}
		r, c := m.Dims()
		w(uint8(1))
		w(uint32(r))
		w(uint32(c))
		for i := 0; i < r; i++ {
			w(m.RawRowView(i))
		}
	}
	matrix(md.Coef)
	matrix(md.Dual)
	matrix(md.Support)
	if version >= 2 {
		w(uint64(md.Seen))
		w(uint64(md.Steps))
		var landmarks, proj, stats *mat.Dense
		if md.ny != nil {
			landmarks, proj = md.ny.landmarks, md.ny.proj
		}
		if md.stats != nil {
			stats = md.stats.M
		}
		matrix(landmarks)
		matrix(proj)
		matrix(stats)
		w(uint64(md.statsCount()))
	}
	return appendChecksum(b.Bytes()), nil
}

func (md *Model) statsCount() int64 {
	if md.stats == nil {
		return 0
	}
	return md.stats.count
}

// appendChecksum appends the CRC-32C of b.
func appendChecksum(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: truncated", ErrCorrupt)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}
func (r *reader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}
func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}
func (r *reader) f64() float64 {
	if b := r.take(8); b != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return 0
}

func (r *reader) matrix(name string) *mat.Dense {
	switch r.u8() {
	case 0:
		return nil
	case 1:
	default:
		r.fail("bad presence flag for %s", name)
		return nil
	}
	rows, cols := int(r.u32()), int(r.u32())
	if r.err != nil {
		return nil
	}
	if rows < 1 || cols < 1 || rows > maxDim || cols > maxDim || rows*cols > len(r.b)/8 {
		r.fail("%s claims %d×%d values, more than the bytes hold", name, rows, cols)
		return nil
	}
	data := make([]float64, rows*cols)
	raw := r.take(8 * rows * cols)
	for i := range data {
		data[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		if math.IsNaN(data[i]) || math.IsInf(data[i], 0) {
			r.fail("%s holds a non-finite value", name)
			return nil
		}
	}
	return mat.NewDense(rows, cols, data)
}

// flag reads a boolean byte, 0 or 1.
func (r *reader) flag(name string) bool {
	v := r.u8()
	if v > 1 {
		r.fail("bad %s flag %d", name, v)
	}
	return v == 1
}

// count reads a non-negative counter.
func (r *reader) count(name string) int64 {
	var v uint64
	if b := r.take(8); b != nil {
		v = binary.LittleEndian.Uint64(b)
	}
	if v > maxCount {
		r.fail("%s: %d out of range", name, v)
		return 0
	}
	return int64(v)
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

// UnmarshalModel decodes and validates bytes written by MarshalBinary.
func UnmarshalModel(data []byte) (*Model, error) {
	if len(data) < len(modelMagic)+2+4 || string(data[:len(modelMagic)]) != modelMagic {
		return nil, fmt.Errorf("%w: not a combpred model (bad magic)", ErrCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	r := &reader{b: body[len(modelMagic):]}
	version := r.u16()
	if version < 1 || version > modelVersion {
		return nil, fmt.Errorf("%w: format version %d, this library reads versions 1 to %d", ErrCorrupt, version, modelVersion)
	}
	kindLen := int(r.u16())
	if kindLen > maxKindLen {
		r.fail("space kind of %d bytes", kindLen)
	}
	kind := string(r.take(kindLen))
	nParams := int(r.u32())
	if r.err == nil && nParams > len(r.b)/8 {
		r.fail("%d space parameters, more than the bytes hold", nParams)
	}
	params := make([]int64, 0, max(0, min(nParams, len(r.b)/8)))
	for i := 0; i < nParams && r.err == nil; i++ {
		if b := r.take(8); b != nil {
			params = append(params, int64(binary.LittleEndian.Uint64(b)))
		}
	}
	md := &Model{}
	md.Kernel.Kind = kernel.Kind(r.u8())
	md.Kernel.Gamma = r.f64()
	md.Kernel.Degree = int(int32(r.u32()))
	md.Kernel.Coef0 = r.f64()
	md.Intercept = r.flag("intercept")
	md.NFeatures = int(r.u32())
	md.Result.Iterations = int(r.u32())
	md.Result.Objective = r.f64()
	md.Result.RelGrad = r.f64()
	md.Result.Converged = r.flag("converged")
	md.Coef = r.matrix("coefficients")
	md.Dual = r.matrix("dual coefficients")
	if support := r.matrix("support inputs"); support != nil {
		md.setSupport(support)
	}
	if version >= 2 {
		md.Seen, md.Steps = r.count("examples seen"), r.count("SGD steps")
		landmarks, proj := r.matrix("Nyström landmarks"), r.matrix("Nyström projection")
		if (landmarks == nil) != (proj == nil) {
			r.fail("Nyström landmarks without projection or the reverse")
		} else if landmarks != nil {
			md.ny = newNystromMap(md.Kernel, md.Intercept, landmarks, proj)
		}
		if stats := r.matrix("sufficient statistics"); stats != nil {
			md.stats = &linearStats{M: stats}
		}
		if count := r.count("examples in the statistics"); md.stats != nil {
			md.stats.count = count
		} else if count != 0 {
			r.fail("an example count without statistics")
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	sp, err := space.New(kind, params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	md.Space = sp
	if err := md.Kernel.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := md.checkShapes(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return md, nil
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
	switch md.Kernel.Kind {
	case kernel.Linear:
		want := md.NFeatures
		if md.Intercept {
			want++
		}
		if cr != want || cc != d || md.Dual != nil || md.Support != nil {
			return fmt.Errorf("linear model with coefficients %d×%d, want %d×%d", cr, cc, want, d)
		}
	case kernel.Precomputed:
		if md.Coef != nil || md.Support != nil || dr != md.NFeatures || dc != d {
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
	return md.checkStats(md.NFeatures)
}

// checkNystrom verifies the shapes of a model linear on its Nyström map.
func (md *Model) checkNystrom() error {
	lr, lc := md.ny.landmarks.Dims()
	pr, pc := md.ny.proj.Dims()
	if lr > MaxComponents || lc != md.NFeatures || pr != lr || pc > pr || md.Dual != nil || md.Support != nil || md.Coef == nil {
		return fmt.Errorf("Nyström model with landmarks %d×%d and projection %d×%d", lr, lc, pr, pc)
	}
	if cr, cc := md.Coef.Dims(); cr != pc || cc != md.Space.Dim() {
		return fmt.Errorf("Nyström model with %d components and coefficients %d×%d", pc, cr, cc)
	}
	return md.checkStats(pc)
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
