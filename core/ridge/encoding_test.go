package ridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// fittedModels returns one model of every shape the byte format holds: linear, rbf and poly
// expansions, Nyström maps, sufficient statistics (PartialFit), SGD step counts and truncated
// expansions.
func fittedModels(t testing.TB) []*Model {
	t.Helper()
	var out []*Model
	sp, _ := space.NewMulticlass(3)
	X, ys := synthetic(t, sp, 20, 3, 2)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	type variant struct {
		fit func(o *Options) (*Model, error)
		mut func(o *Options)
	}
	fit := func(o *Options) (*Model, error) { return Fit(sp, X, 20, 3, ys, nil, *o) }
	partial := func(o *Options) (*Model, error) {
		first, err := PartialFit(nil, sp, X[:30], 10, 3, ys[:10], nil, *o)
		if err != nil {
			return nil, err
		}
		return PartialFit(first, sp, X[30:], 10, 3, ys[10:], nil, *o)
	}
	for _, v := range []variant{
		{fit, func(o *Options) {}},
		{fit, func(o *Options) { o.Kernel = rbf }},
		{fit, func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.Poly, Gamma: 1, Degree: 2, Coef0: 1} }},
		{fit, func(o *Options) { o.Kernel, o.NComponents = rbf, 8 }},
		{fit, func(o *Options) { o.Kernel, o.Solver, o.MaxIter, o.Tau = rbf, SGD, 3, 7 }},
		{fit, func(o *Options) { o.Solver, o.MaxIter = SGD, 3 }},
		{partial, func(o *Options) {}},
		{partial, func(o *Options) { o.Kernel, o.NComponents = rbf, 6 }},
		{partial, func(o *Options) { o.Kernel = rbf }},
		{fit, func(o *Options) { o.EmpiricalWeight = 1 }},
		{partial, func(o *Options) { o.EmpiricalWeight = 0.5 }},
	} {
		opt := baseOptions()
		v.mut(&opt)
		md, err := v.fit(&opt)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, md)
	}
	return out
}

// inVersion1 reports whether format version 1 holds md: no Nyström map, statistics or sparse
// support inputs.
func inVersion1(md *Model) bool { return md.ny == nil && md.stats == nil && md.supportCSR == nil }

// version1 returns the model's bytes in format version 1, which holds no counters.
func version1(t testing.TB, md *Model) []byte {
	t.Helper()
	c := *md
	c.Seen, c.Steps = 0, 0
	b, err := c.marshal(1)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, md := range append(fittedModels(t), spacesModels(t)...) {
		b, err := md.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalModel(b)
		if err != nil {
			t.Fatalf("%v: %v", md.Kernel.Kind, err)
		}
		b2, _ := back.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Errorf("%v: bytes differ after a round trip", md.Kernel.Kind)
		}
		if back.Seen != md.Seen || back.Steps != md.Steps || back.Components() != md.Components() || back.Streaming() != md.Streaming() {
			t.Errorf("%v: counters, map or statistics differ after a round trip", md.Kernel.Kind)
		}
		sameDecision(t, md, back)
		if !inVersion1(md) {
			if _, err := md.marshal(1); err == nil {
				t.Errorf("%v: format version 1 accepted a model it cannot hold", md.Kernel.Kind)
			}
			continue
		}
		// Version 1 bytes are still read.
		old := version1(t, md)
		back, err = UnmarshalModel(old)
		if err != nil {
			t.Fatalf("%v: version 1: %v", md.Kernel.Kind, err)
		}
		sameDecision(t, md, back)
	}
}

func sameDecision(t *testing.T, a, b *Model) {
	t.Helper()
	n := a.NFeatures
	X := make([]float64, 2*n)
	for i := range X {
		X[i] = float64(i%5) - 1.5
	}
	u1, u2 := make([]float64, 2*a.Space.Dim()), make([]float64, 2*a.Space.Dim())
	if err := a.Decision(X, 2, n, u1); err != nil {
		t.Fatal(err)
	}
	if err := b.Decision(X, 2, n, u2); err != nil || b.Space.Kind() != a.Space.Kind() {
		t.Fatalf("%s %v: %v after a round trip", a.Space.Kind(), a.Kernel.Kind, err)
	}
	for i := range u1 {
		if u1[i] != u2[i] {
			t.Fatalf("%s %v: decision differs after a round trip", a.Space.Kind(), a.Kernel.Kind)
		}
	}
}

// A model read back from bytes continues a PartialFit stream; the statistics' shape is checked.
func TestUnmarshalChecksStatistics(t *testing.T) {
	models := fittedModels(t)
	streamed := models[6]
	bad := *streamed
	bad.stats = &linearStats{M: mat.NewDense(3, 3, nil)}
	b, _ := bad.MarshalBinary()
	if _, err := UnmarshalModel(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "statistics") {
		t.Errorf("statistics of the wrong shape: %v", err)
	}
	kernelModel := *models[1]
	kernelModel.stats = streamed.stats
	b, _ = kernelModel.MarshalBinary()
	if _, err := UnmarshalModel(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("statistics on a kernel expansion: %v", err)
	}
	mixed := *models[3]
	mixed.Kernel = kernel.Kernel{Kind: kernel.Linear}
	b, _ = mixed.MarshalBinary()
	if _, err := UnmarshalModel(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a linear model with a Nyström map: %v", err)
	}
}

func TestUnmarshalRejectsCorruption(t *testing.T) {
	b, _ := fittedModels(t)[0].MarshalBinary()
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XXXX"), b[4:]...),
		"truncated": b[:len(b)-9],
		"bit flip":  flip(b, 20),
	}
	for name, data := range cases {
		if _, err := UnmarshalModel(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v, want ErrCorrupt", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x10
	return c
}

// FuzzUnmarshalModel feeds arbitrary bytes (seeded with real models, in both format versions) to
// the decoder: it must never panic, and whatever it accepts must re-encode, in its version, to
// the same bytes.
func FuzzUnmarshalModel(f *testing.F) {
	for _, b := range seedBytes(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := UnmarshalModel(data)
		if err != nil {
			return
		}
		again, err := md.marshal(int(binary.LittleEndian.Uint16(data[len(modelMagic):])))
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not round-trip")
		}
	})
}

// seedBytes are the fuzzing seeds: every model of fittedModels in the current format, and those
// that version 1 can hold in version 1, and the models of spacesModels, so that mutations start
// from every space kind and from a sparse kernel expansion, not only from dense multiclass ones.
func seedBytes(f *testing.F) [][]byte {
	var out [][]byte
	for _, md := range fittedModels(f) {
		b, _ := md.MarshalBinary()
		out = append(out, b)
		if inVersion1(md) {
			out = append(out, version1(f, md))
		}
	}
	for _, md := range spacesModels(f) {
		b, _ := md.MarshalBinary()
		out = append(out, b)
	}
	return out
}

// spacesModels returns small fitted models on every space (whose parameters the bytes rebuild:
// label counts, parent lists, cycle sizes), with statistics, and a kernel model whose support
// inputs are sparse.
func spacesModels(t testing.TB) []*Model {
	t.Helper()
	spaces := everySpace(t)
	for _, sp := range []func() (space.Space, error){
		func() (space.Space, error) { return space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}}, false) },
		func() (space.Space, error) { return space.NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}}) },
	} {
		dag, err := sp()
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, dag)
	}
	var out []*Model
	for i, sp := range spaces {
		X, ys := synthetic(t, sp, 12, 3, uint64(i+1))
		opt := baseOptions()
		if _, ok := sp.(*space.DAGSubsets); ok {
			opt.EmpiricalWeight = 1 // it has no uniform measure
		}
		md, err := PartialFit(nil, sp, X, 12, 3, ys, nil, opt)
		if err != nil {
			t.Fatalf("%T: %v", sp, err)
		}
		out = append(out, md)
	}
	sp, _ := space.NewMultilabel(3)
	X, ys := synthetic(t, sp, 10, 6, 7)
	for i := range X {
		if i%3 != 0 {
			X[i] = 0
		}
	}
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	md, err := FitCSR(sp, xmat.FromDense(10, 6, X), ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, md)
}

// FuzzUnmarshalModelBody signs the fuzzed bytes with a valid checksum first, so that mutations reach
// the field parser and the shape checks instead of stopping at the checksum.
func FuzzUnmarshalModelBody(f *testing.F) {
	for _, b := range seedBytes(f) {
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), binfmt.Checksum(body))
		md, err := UnmarshalModel(data)
		if err != nil {
			// sound bytes of a model too large for the memory budget are refused by the budget
			if !errors.Is(err, ErrCorrupt) && !budget.Is(err) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		// Finite parameters do not bound a kernel expansion's sums, so the one error allowed is the
		// scores' overflow (TestHugeParametersOverflowScores).
		X := make([]float64, 2*md.NFeatures)
		err = md.Decision(X, 2, md.NFeatures, make([]float64, 2*md.Space.Dim()))
		if err != nil && !errors.Is(err, check.ErrScoresOverflow) {
			t.Fatalf("accepted model cannot predict: %v", err)
		}
	})
}

// TestHugeParametersOverflowScores is the case the fuzzer found (CI, session 13): model bytes with
// finite dual coefficients near the largest float64 are valid, and their kernel expansion
// overflows on any input. Loading must accept them and predicting must name the overflow.
func TestHugeParametersOverflowScores(t *testing.T) {
	for i, md := range fittedModels(t) {
		params := md.Dual
		if params == nil {
			continue // a linear model's scores at X = 0 are its intercepts
		}
		for j := range params.RawMatrix().Data {
			params.RawMatrix().Data[j] = math.MaxFloat64 / 2
		}
		b, err := md.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalModel(b)
		if err != nil {
			t.Fatalf("model %d: finite parameters refused: %v", i, err)
		}
		X := make([]float64, 2*back.NFeatures)
		err = back.Decision(X, 2, back.NFeatures, make([]float64, 2*back.Space.Dim()))
		if !errors.Is(err, check.ErrScoresOverflow) || !strings.Contains(err.Error(), "X row 0") {
			t.Errorf("model %d: error %v, want the scores' overflow at row 0", i, err)
		}
	}
}

// A model's bytes, and statistics', build their space again, which for a large DAG takes seconds:
// a decode whose stop is set returns cancel.ErrCancelled, which says nothing against the bytes (not
// ErrCorrupt), and the same bytes decode without a stop.
func TestUnmarshalStopsBuildingTheSpace(t *testing.T) {
	sp, err := space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {1, 3}}, false)
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, 20, 3, 5)
	opt := baseOptions()
	md, err := Fit(sp, X, 20, 3, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := NewStats(sp, 3, nil, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	stopped := new(cancel.Flag)
	stopped.Stop()
	for _, c := range []struct {
		name      string
		marshal   func() ([]byte, error)
		unmarshal func([]byte, *cancel.Flag) error
	}{
		{"model", md.MarshalBinary, func(b []byte, stop *cancel.Flag) error { _, err := UnmarshalModelUntil(b, stop); return err }},
		{"statistics", empty.MarshalBinary, func(b []byte, stop *cancel.Flag) error { _, err := UnmarshalStatsUntil(b, stop); return err }},
	} {
		b, err := c.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.unmarshal(b, stopped); !errors.Is(err, cancel.ErrCancelled) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrCorruptStats) {
			t.Errorf("%s: a stopped decode returned %v, want cancel.ErrCancelled alone", c.name, err)
		}
		if err := c.unmarshal(b, new(cancel.Flag)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// Bytes of 224 declaring sparse Nyström landmarks of 2²⁸ columns for a model of 5 features had the
// map's two transposes allocated, 4 GiB in 7 s, before the shape checks refused them (probe DD). The
// landmarks' width is checked against the model's features first (testdata/sparse_nystrom_wide.bin;
// the same body seeds FuzzUnmarshalModelBody).
func TestUnmarshalChecksLandmarkWidthBeforeBuildingTheMap(t *testing.T) {
	data, err := os.ReadFile("testdata/sparse_nystrom_wide.bin")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = UnmarshalModel(data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "Nyström landmarks of 268435456 columns for a model of 5 features") {
		t.Fatalf("got %v, want the landmarks' width refused as corrupt", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Errorf("allocated %d bytes before refusing 224", grown)
	}
}
