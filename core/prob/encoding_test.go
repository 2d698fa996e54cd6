package prob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// encodedModels returns one model of each shape the byte format holds: exact L-BFGS fits with and
// without intercept (closed-form and enumerated spaces), an Adam fit on chain samples with every
// sampler setting away from its default, and a model built from coefficients (NewModel).
func encodedModels(t testing.TB) []*Model {
	t.Helper()
	var out []*Model
	fit := func(kind string, params []int64, opt Options) {
		sp := mustSpace(t, kind, params...)
		X, ys := syntheticData(t, sp, 12, 3, 0.5, 31)
		md, err := Fit(sp, X, 12, 3, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, md)
	}
	fit("multiclass", []int64{3}, Options{Alpha: 0.1, Intercept: true, Tol: 1e-6, MaxIter: 50})
	fit("multilabel", []int64{4}, Options{Alpha: 0.1, Tol: 1e-6, MaxIter: 50})
	fit("permutations", []int64{4, 2}, Options{Alpha: 0.1, Intercept: true, Tol: 1e-6, MaxIter: 50})
	fit("dicycles", []int64{5}, Options{Alpha: 0.1, Intercept: true, Tol: 1e-6, MaxIter: 5, Seed: 9,
		Inference: InferenceOptions{Method: InferSampled, Samples: 7, Sampler: SampleOptions{
			Sampler: SamplerChain, Chain: ChainMixed, BurnIn: 30, Thin: 3, Chains: 2, MaxSteps: 100000}}})
	fit("ucycles", []int64{5}, Options{Alpha: 0.1, Tol: 1e-6, MaxIter: 3, Seed: 9,
		Inference: InferenceOptions{Method: InferSampled, Samples: 5, Sampler: SampleOptions{Sampler: SamplerAuto}}})
	md, err := NewModel(mustSpace(t, "cliques", 4), make([]float64, 2*6), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, md)
}

func sameScores(t *testing.T, a, b *Model) {
	t.Helper()
	X := []float64{0.3, -1, 2, 0.5, 0.25, -0.75}
	q := len(X) / a.NFeatures
	X = X[:q*a.NFeatures]
	u1, u2 := make([]float64, q*a.Space.Dim()), make([]float64, q*a.Space.Dim())
	if err := a.Decision(X, q, a.NFeatures, u1); err != nil {
		t.Fatal(err)
	}
	if err := b.Decision(X, q, b.NFeatures, u2); err != nil {
		t.Fatal(err)
	}
	for i := range u1 {
		if u1[i] != u2[i] {
			t.Fatalf("%s: scores differ after a round trip", a.Space.Kind())
		}
	}
}

// TestMarshalRoundTrip: every model reads back with the same space, options, result and
// coefficients, predicts the same scores, and re-encodes to the same bytes.
func TestMarshalRoundTrip(t *testing.T) {
	for _, md := range encodedModels(t) {
		b, err := md.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := UnmarshalModel(b)
		if err != nil {
			t.Fatalf("%s: %v", md.Space.Kind(), err)
		}
		if back.Space.Kind() != md.Space.Kind() || back.Inference != md.Inference || back.Intercept != md.Intercept ||
			back.NFeatures != md.NFeatures || !mat.Equal(back.Coef, md.Coef) {
			t.Errorf("%s: fields differ after a round trip", md.Space.Kind())
		}
		same := back.Result == md.Result || (math.IsNaN(md.Result.Objective) && math.IsNaN(back.Result.Objective) &&
			back.Result.Iterations == md.Result.Iterations && back.Result.Solver == md.Result.Solver &&
			back.Result.RelGradSE == md.Result.RelGradSE && back.Result.FinalSamples == md.Result.FinalSamples)
		if !same {
			t.Errorf("%s: result %+v, want %+v", md.Space.Kind(), back.Result, md.Result)
		}
		sameScores(t, md, back)
		again, _ := back.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Errorf("%s: bytes differ after a round trip", md.Space.Kind())
		}
	}
}

// TestUnmarshalVersion1 reads the bytes of format version 1, which end at W: the standard
// error is unknown (NaN), the final sample count 0, and everything else as written.
func TestUnmarshalVersion1(t *testing.T) {
	for _, md := range encodedModels(t) {
		b, _ := md.MarshalBinary()
		v1 := append([]byte(nil), b[:len(b)-4-12]...) // without the checksum and the version 2 fields
		binary.LittleEndian.PutUint16(v1[len(modelMagic):], 1)
		back, err := UnmarshalModel(resign(append(v1, 0, 0, 0, 0)))
		if err != nil {
			t.Fatalf("%s: %v", md.Space.Kind(), err)
		}
		if !math.IsNaN(back.Result.RelGradSE) || back.Result.FinalSamples != 0 || back.Result.Iterations != md.Result.Iterations ||
			!mat.Equal(back.Coef, md.Coef) {
			t.Errorf("%s: version 1 read as %+v", md.Space.Kind(), back.Result)
		}
		if md.Result.Iterations > 0 && !md.Result.Exact && !(md.Result.RelGradSE > 0 && md.Result.FinalSamples >= md.Inference.Samples) {
			t.Errorf("%s: a sampled fit reports RelGradSE %v and %d final samples", md.Space.Kind(), md.Result.RelGradSE, md.Result.FinalSamples)
		}
	}
}

// resign replaces the checksum of b after a mutation of its body.
func resign(b []byte) []byte {
	body := b[:len(b)-4]
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), binfmt.Checksum(body))
}

// TestUnmarshalRejectsCorruption: bad magic, truncation, bit flips, trailing bytes, and re-signed
// bodies with invalid fields (flags, enumerations, shapes, non-finite coefficients, non-canonical
// or invalid space parameters, options the space cannot honour) are all ErrCorrupt, naming why.
func TestUnmarshalRejectsCorruption(t *testing.T) {
	models := encodedModels(t)
	b, _ := models[0].MarshalBinary() // multiclass(3), intercept, 3 features
	// Offsets into b: magic 4, version 2, kind "multiclass" 2+10, params 4+8, intercept 1,
	// n_features 4, method 1, samples 4, sampler 1, chain 1, 4×4 sampler ints, solver 1, exact 1,
	// iterations 4, objective 8, relgrad 8, converged 1, rows 4, cols 4, W, relgrad SE 8, final samples 4.
	const (
		offParam     = 4 + 2 + 2 + 10 + 4
		offIntercept = offParam + 8
		offNFeatures = offIntercept + 1
		offMethod    = offNFeatures + 4
		offSampler   = offMethod + 1 + 4
		offChain     = offSampler + 1
		offSolver    = offChain + 1 + 16
		offConverged = offSolver + 1 + 1 + 4 + 8 + 8
		offRows      = offConverged + 1
		offW         = offRows + 8
	)
	set := func(off int, v ...byte) []byte {
		c := append([]byte(nil), b...)
		copy(c[off:], v)
		return resign(c)
	}
	nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":          {nil, "magic"},
		"magic":          {append([]byte("CPRM"), b[4:]...), "magic"},
		"truncated":      {b[:len(b)-9], "checksum"},
		"bit flip":       {append(append([]byte(nil), b[:30]...), append([]byte{b[30] ^ 0x10}, b[31:]...)...), "checksum"},
		"trailing":       {resign(append(append([]byte(nil), b[:len(b)-4]...), 0, 0, 0, 0, 0)), "trailing"},
		"cut body":       {resign(b[:len(b)-24]), "more than the bytes hold"},
		"cut header":     {resign(b[:offSolver+4]), "truncated"},
		"version":        {set(4, 9, 0), "version 9"},
		"space":          {set(offParam, 1), "multiclass"},
		"intercept flag": {set(offIntercept, 2), "intercept"},
		"no features":    {set(offNFeatures, 0, 0, 0, 0), "n_features"},
		"features":       {set(offNFeatures, 4), "W is 4×3"},
		"method":         {set(offMethod, 7), "inference method"},
		"sampler":        {set(offSampler, 3), "sampler"},
		"chain":          {set(offChain, 2), "no local chain"},
		"solver":         {set(offSolver, 3), "solver"},
		"converged":      {set(offConverged, 5), "converged"},
		"rows":           {set(offRows, 0xff, 0xff, 0xff, 0x7f), "more than the bytes hold"},
		"nan":            {set(offW+8, nan...), "not finite"},
	}
	for name, c := range cases {
		_, err := UnmarshalModel(c.data)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrCorrupt mentioning %q", name, err, c.want)
		}
	}
	// Non-canonical space parameters: permutations(4) with an explicit auto decoder mode.
	md := *models[2]
	md.Space = mustSpace(t, "permutations", 4)
	canon, _ := md.MarshalBinary()
	w := binfmt.NewWriter(modelMagic, modelVersion)
	w.String("permutations")
	w.Int64s([]int64{4, 0})
	head := w.Sign()
	long := append(head[:len(head)-4], canon[4+2+2+len("permutations")+4+8:]...)
	if _, err := UnmarshalModel(resign(long)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "canonical") {
		t.Errorf("non-canonical parameters: %v", err)
	}
	// Exact inference on a space without it.
	big := *models[3]
	big.Space = mustSpace(t, "permutations", 17)
	big.Coef = mat.NewDense(4, big.Space.Dim(), nil)
	big.Inference = InferenceOptions{Method: InferExact}
	bb, _ := big.MarshalBinary()
	if _, err := UnmarshalModel(bb); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "exact inference") {
		t.Errorf("exact inference on permutations(17): %v", err)
	}
}

// seedBytes are the fuzzing seeds: the bytes of every encoded model.
func seedBytes(f *testing.F) [][]byte {
	var out [][]byte
	for _, md := range encodedModels(f) {
		b, err := md.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzUnmarshalModel feeds arbitrary bytes (seeded with real models) to the decoder: it must never
// panic, and whatever it accepts must re-encode to the same bytes.
func FuzzUnmarshalModel(f *testing.F) {
	for _, b := range seedBytes(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := UnmarshalModel(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := md.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted model cannot be encoded: %v", err)
		}
		if binary.LittleEndian.Uint16(data[len(modelMagic):]) < modelVersion {
			// older bytes are written back in the current version, which must then be stable
			md2, err := UnmarshalModel(again)
			if err != nil {
				t.Fatalf("re-encoded older bytes are refused: %v", err)
			}
			data = again
			if again, err = md2.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not round-trip")
		}
	})
}

// FuzzUnmarshalModelBody signs the fuzzed bytes with a valid checksum first, so that mutations
// reach the field parser and the checks instead of stopping at the checksum; an accepted model
// must score and decode.
func FuzzUnmarshalModelBody(f *testing.F) {
	for _, b := range seedBytes(f) {
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), binfmt.Checksum(body))
		md, err := UnmarshalModel(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if md.Space.Dim()*md.NFeatures > 1<<20 {
			return // valid but too large to exercise quickly
		}
		X := make([]float64, 2*md.NFeatures)
		if err := md.Predict(X, 2, md.NFeatures, make([]int64, 2*md.Space.Width()), nil); err != nil {
			t.Fatalf("accepted model cannot predict: %v", err)
		}
	})
}

// A model's bytes build its space again, which for a large DAG takes seconds: a decode whose stop
// is set returns cancel.ErrCancelled, which says nothing against the bytes (not ErrCorrupt), and
// the same bytes decode without a stop.
func TestUnmarshalStopsBuildingTheSpace(t *testing.T) {
	params := append([]int64{0}, space.DAGParams([][]int{nil, {0}, {0}, {1, 2}, {1, 3}})...)
	sp := mustSpace(t, "dag_paths", params...)
	X, ys := syntheticData(t, sp, 12, 3, 0.5, 31)
	md, err := Fit(sp, X, 12, 3, ys, nil, Options{Alpha: 0.1, Intercept: true, Tol: 1e-6, MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	b, err := md.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	stopped := new(cancel.Flag)
	stopped.Stop()
	if _, err := UnmarshalModelUntil(b, stopped); !errors.Is(err, cancel.ErrCancelled) || errors.Is(err, ErrCorrupt) {
		t.Errorf("a stopped decode returned %v, want cancel.ErrCancelled alone", err)
	}
	if _, err := UnmarshalModelUntil(b, new(cancel.Flag)); err != nil {
		t.Error(err)
	}
}
