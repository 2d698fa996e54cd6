package ridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
)

func fittedModels(t testing.TB) []*Model {
	t.Helper()
	var out []*Model
	sp, _ := space.NewMulticlass(3)
	X, ys := synthetic(t, sp, 20, 3, 2)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.5}, {Kind: kernel.Poly, Gamma: 1, Degree: 2, Coef0: 1}} {
		opt := baseOptions()
		opt.Kernel = k
		md, err := Fit(sp, X, 20, 3, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, md)
	}
	return out
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, md := range fittedModels(t) {
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
		X := []float64{0.1, -0.2, 0.3, 1, 2, 3}
		u1, u2 := make([]float64, 6), make([]float64, 6)
		_ = md.Decision(X, 2, 3, u1)
		_ = back.Decision(X, 2, 3, u2)
		for i := range u1 {
			if u1[i] != u2[i] {
				t.Fatalf("%v: decision differs after a round trip", md.Kernel.Kind)
			}
		}
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

// FuzzUnmarshalModel feeds arbitrary bytes (seeded with real models) to the decoder: it must never
// panic, and whatever it accepts must re-encode to the same bytes.
func FuzzUnmarshalModel(f *testing.F) {
	for _, md := range fittedModels(f) {
		b, _ := md.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := UnmarshalModel(data)
		if err != nil {
			return
		}
		again, err := md.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not round-trip")
		}
	})
}

// FuzzUnmarshalModelBody signs the fuzzed bytes with a valid checksum first, so that mutations reach
// the field parser and the shape checks instead of stopping at the checksum.
func FuzzUnmarshalModelBody(f *testing.F) {
	for _, md := range fittedModels(f) {
		b, _ := md.MarshalBinary()
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
		md, err := UnmarshalModel(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		X := make([]float64, 2*md.NFeatures)
		if err := md.Decision(X, 2, md.NFeatures, make([]float64, 2*md.Space.Dim())); err != nil {
			t.Fatalf("accepted model cannot predict: %v", err)
		}
	})
}
