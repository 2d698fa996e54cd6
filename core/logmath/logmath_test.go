package logmath

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestAgainstDirectFormulas(t *testing.T) {
	for _, x := range []float64{-50, -30, -1, 0, 0.5, 20, 35, 37, 60} {
		if got, want := Log1pExp(x), math.Log1p(math.Exp(x)); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("Log1pExp(%v) = %v, want %v", x, got, want)
		}
		if got, want := Logistic(x), 1/(1+math.Exp(-x)); math.Abs(got-want) > 1e-15 {
			t.Errorf("Logistic(%v) = %v, want %v", x, got, want)
		}
	}
	if got := Log1pExp(1000); got != 1000 {
		t.Errorf("Log1pExp(1000) = %v, want 1000 (no overflow)", got)
	}
	if got := SumExp([]float64{1000, 1000}); math.Abs(got-(1000+math.Ln2)) > 1e-12 {
		t.Errorf("SumExp overflowed: %v", got)
	}
	if got, want := SumExp([]float64{0.1, -2, 3}), math.Log(math.Exp(0.1)+math.Exp(-2)+math.Exp(3)); math.Abs(got-want) > 1e-14 {
		t.Errorf("SumExp = %v, want %v", got, want)
	}
	if !math.IsInf(SumExp(nil), -1) {
		t.Error("SumExp(nil) is not −Inf")
	}
}

// Log is right on subnormal inputs, where math.Log on amd64 returns about −709.09 for all of
// them, and is math.Log elsewhere.
func TestLogSubnormal(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{5e-324, -744.4400719213812}, // the smallest subnormal, 2⁻¹⁰⁷⁴
		{0x1p-1023, -1023 * math.Ln2},
		{0x1.8p-1050, math.Log(1.5) - 1050*math.Ln2},
		{0x1p-1022, -1022 * math.Ln2}, // the smallest normal number
		{1, 0},
		{math.E, 1},
		{0, math.Inf(-1)},
		{math.Inf(1), math.Inf(1)},
	} {
		if got := Log(c.x); !(got == c.want || math.Abs(got-c.want) <= 1e-15*math.Abs(c.want)) {
			t.Errorf("Log(%g) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	for _, x := range []float64{-1, math.NaN(), math.Inf(-1)} {
		if got := Log(x); !math.IsNaN(got) {
			t.Errorf("Log(%g) = %g, want NaN", x, got)
		}
	}
}

// stdLog matches a call of math.Log (not of logmath.Log).
var stdLog = regexp.MustCompile(`(^|[^\w.])math\.Log\(`)

// The packages of the core take logarithms through Log (see its doc comment), not math.Log.
func TestCoreUsesLog(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			filepath.Base(filepath.Dir(path)) == "logmath" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if stdLog.MatchString(line) {
				t.Errorf("%s:%d calls math.Log, which is wrong on subnormal inputs on amd64: use logmath.Log", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
