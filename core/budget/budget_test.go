package budget

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	defer func() { _ = Set(0) }()
	if err := Set(1000); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bytes int64
		ok    bool
		want  string
	}{
		{0, true, ""},
		{24, true, ""},
		{1000, true, ""},
		{1001, false, "1.0 kB (1,001 bytes), above the memory budget of 1.0 kB (1,000 bytes)"},
		{15_000_000_000, false, "15.0 GB (15,000,000,000 bytes)"},
		{-1, false, "more than 9.2 EB"},
		{Unbounded, false, "more than 9.2 EB"},
	} {
		err := Check("n_samples: the sample buffers", c.bytes)
		if (err == nil) != c.ok {
			t.Fatalf("Check(%d) = %v, want ok=%v", c.bytes, err, c.ok)
		}
		if err == nil {
			continue
		}
		var e *Error
		if !errors.As(fmt.Errorf("wrapped: %w", err), &e) || !Is(err) {
			t.Fatalf("Check(%d) returned %T, not an *Error", c.bytes, err)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "n_samples: the sample buffers: needs ") || !strings.Contains(msg, c.want) ||
			!strings.Contains(msg, "max_memory") {
			t.Fatalf("Check(%d) = %q, want the parameter, %q and the way out", c.bytes, msg, c.want)
		}
	}
}

func TestSetAndDefault(t *testing.T) {
	defer func() { _ = Set(0) }()
	if d := Default(); d < 1<<20 {
		t.Fatalf("Default() = %d, want at least 1 MiB", d)
	}
	for _, c := range []struct {
		set, get int64
		ok       bool
	}{
		{0, Default(), true},
		{1 << 30, 1 << 30, true},
		{math.MaxInt64, math.MaxInt64, true},
		{-1, math.MaxInt64, false}, // refused: the previous setting stays
		{0, Default(), true},
	} {
		if err := Set(c.set); (err == nil) != c.ok {
			t.Fatalf("Set(%d) = %v, want ok=%v", c.set, err, c.ok)
		}
		if g := Get(); g != c.get {
			t.Fatalf("after Set(%d): Get() = %d, want %d", c.set, g, c.get)
		}
	}
	if err := Set(-5); err == nil || !strings.Contains(err.Error(), "max_memory") {
		t.Fatalf("Set(-5) = %v, want an error naming max_memory", err)
	}
}

func TestArithmeticSaturates(t *testing.T) {
	for _, c := range []struct {
		name string
		got  int64
		want int64
	}{
		{"Mul small", Mul(3, 4, 5), 60},
		{"Mul empty", Mul(), 1},
		{"Mul zero", Mul(0, math.MaxInt64, math.MaxInt64), 0},
		{"Mul overflow", Mul(1<<32, 1<<32), Unbounded},
		{"Mul 2^63", Mul(1<<62, 2), Unbounded},
		{"Mul negative", Mul(-1, 2), Unbounded},
		{"Add", Add(1, 2, 3), 6},
		{"Add overflow", Add(math.MaxInt64, 1), Unbounded},
		{"Add negative", Add(5, -1), Unbounded},
		{"Floats", Floats(1_000_000_000, 120), 960_000_000_000},
		{"Floats overflow", Floats(1<<40, 1<<40), Unbounded},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestHuman(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{999, "999 bytes"}, {1500, "1.5 kB"}, {5_600_000_000, "5.6 GB"}, {math.MaxInt64, "9.2 EB"}} {
		if got := Human(c.b); got != c.want {
			t.Errorf("Human(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// A small amount is written once: "needs 24 bytes (24 bytes) … budget of 1 bytes (1 bytes)".
func TestSmallAmountsAreWrittenOnce(t *testing.T) {
	defer func() { _ = Set(0) }()
	if err := Set(1); err != nil {
		t.Fatal(err)
	}
	msg := Check("X", 24).Error()
	if !strings.HasPrefix(msg, "X: needs 24 bytes, above the memory budget of 1 bytes;") {
		t.Fatalf("Check(24) under a budget of 1 byte = %q", msg)
	}
}

// A refusal under a limit says what the room keeps besides, and "nothing" where nothing is left
// beyond it: it said "leaves it 1 bytes" (probe EP).
func TestErrorUnderALimitSaysWhatIsKept(t *testing.T) {
	e := &Error{What: "n_samples: a sample", Need: 1 << 20, Room: 1, Limit: addressSpaceLimit, Sharing: 1, Kept: MappingSlack[0]}
	want := "leaves it nothing beyond the 209.7 MB kept for the call's own mappings, of which one request may take half"
	if !strings.Contains(e.Error(), want) {
		t.Errorf("%q lacks %q", e.Error(), want)
	}
}
