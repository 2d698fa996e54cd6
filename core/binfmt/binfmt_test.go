package binfmt

import (
	"errors"
	"math"
	"strings"
	"testing"
)

var errTest = errors.New("test format")

func sample() []byte {
	w := NewWriter("TEST", 2)
	w.String("kind")
	w.Int64s([]int64{-1, 5})
	w.Bool(true)
	w.U8(3)
	w.U32(7)
	w.F64(math.NaN())
	w.Matrix(2, 2, []float64{1, 2, 3, 4})
	return w.Sign()
}

// TestRoundTrip: what the Writer writes the Reader reads back, NaN bits included, and nothing is
// left over.
func TestRoundTrip(t *testing.T) {
	r, version, err := Open(sample(), "TEST", 2, errTest)
	if err != nil || version != 2 {
		t.Fatalf("Open: version %d, %v", version, err)
	}
	kind, params, flag, enum, n, nan := r.String("kind", 8), r.Int64s("params"), r.Bool("flag"), r.Enum("enum", 3), r.Int("n", 1, 7), r.F64()
	rows, cols, data := r.Matrix("m", 4)
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if kind != "kind" || len(params) != 2 || params[0] != -1 || !flag || enum != 3 || n != 7 || !math.IsNaN(nan) ||
		rows != 2 || cols != 2 || data[3] != 4 {
		t.Errorf("read %q %v %v %d %d %v %d×%d %v", kind, params, flag, enum, n, nan, rows, cols, data)
	}
}

// TestRejects: every check fails with an error wrapping the format's sentinel and naming why.
func TestRejects(t *testing.T) {
	good := sample()
	resigned := func(b []byte) []byte {
		w := &Writer{b: append([]byte(nil), b[:len(b)-4]...)}
		return w.Sign()
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"short":    {good[:5], "bad magic"},
		"magic":    {append([]byte("XXXX"), good[4:]...), "bad magic"},
		"checksum": {append(append([]byte(nil), good[:10]...), good[11:]...), "checksum"},
		"version":  {resigned(append([]byte("TEST\x03\x00"), good[6:]...)), "version 3"},
	} {
		if _, _, err := Open(c.data, "TEST", 2, errTest); !errors.Is(err, errTest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	read := func(f func(r *Reader)) error {
		r, _, err := Open(good, "TEST", 2, errTest)
		if err != nil {
			t.Fatal(err)
		}
		f(r)
		return r.Err()
	}
	for name, c := range map[string]struct {
		f    func(r *Reader)
		want string
	}{
		"long string": {func(r *Reader) { r.String("kind", 3) }, "at most 3"},
		"bool":        {func(r *Reader) { r.U16(); r.Bool("flag") }, "bad flag flag"},
		"enum":        {func(r *Reader) { r.String("k", 8); r.Int64s("p"); r.Bool("b"); r.Enum("e", 2) }, "e 3 out of range"},
		"int":         {func(r *Reader) { r.String("k", 8); r.Int64s("p"); r.U16(); r.Int("n", 8, 9) }, "n 7 out of range"},
		"count":       {func(r *Reader) { r.U16(); r.Int64s("p") }, "more than the bytes hold"},
		"truncated": {func(r *Reader) {
			for range 20 {
				r.U64()
			}
		}, "truncated"},
		"trailing": {func(r *Reader) { r.String("k", 8); _ = r.Finish() }, "trailing"},
		"matrix":   {func(r *Reader) { r.String("k", 8); r.Int64s("p"); r.U16(); r.U32(); r.Matrix("m", 1) }, "claims"},
	} {
		if err := read(c.f); !errors.Is(err, errTest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	w := NewWriter("TEST", 1)
	w.Matrix(1, 1, []float64{math.Inf(1)})
	r, _, _ := Open(w.Sign(), "TEST", 1, errTest)
	if r.Matrix("m", 1); !strings.Contains(fmtErr(r.Err()), "not finite") {
		t.Errorf("infinite value: %v", r.Err())
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
