package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ExpNonPositive agrees with math.Exp to 5e-16 relative over the rbf kernel's arguments, and
// exactly (through math.Exp) outside them.
func TestExpNonPositive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const count = 200000
	xs := make([]float64, count)
	for i := range xs {
		xs[i] = -770 * r.Float64()
		if i%2 == 0 {
			xs[i] = -2 * r.Float64()
		}
	}
	xs = append(xs, 0, math.Copysign(0, -1), -1e-300, -708, -708.0000001, -745, -746, math.Inf(-1), math.NaN(), 1, 700)
	want := make([]float64, len(xs))
	for i, x := range xs {
		want[i] = math.Exp(x)
	}
	ExpNonPositive(xs)
	var worst float64
	for i, got := range xs {
		if math.IsNaN(want[i]) || want[i] == 0 || math.IsInf(want[i], 0) {
			if !(got == want[i] || math.IsNaN(got) && math.IsNaN(want[i])) {
				t.Errorf("value %d: %v, want %v", i, got, want[i])
			}
			continue
		}
		worst = math.Max(worst, math.Abs(got-want[i])/want[i])
	}
	if worst > 5e-16 {
		t.Errorf("largest relative difference from math.Exp %.3g, want ≤ 5e-16", worst)
	}
}

func BenchmarkExpNonPositive(b *testing.B) {
	xs := make([]float64, 4096)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = -20 * r.Float64()
	}
	buf := make([]float64, len(xs))
	b.Run("ExpNonPositive", func(b *testing.B) {
		for b.Loop() {
			copy(buf, xs)
			ExpNonPositive(buf)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, x := range xs {
				buf[i] = math.Exp(x)
			}
		}
	})
}
