package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// RBFRow agrees with math.Exp to 5e-16 relative over the whole range of arguments, is exactly
// 1 (+ plus) at distance 0 or below (rounding), and follows math.Exp below −708 (subnormal
// results, then 0) and for NaN.
func TestRBFRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const count = 200000
	gamma := 0.7
	nb := make([]float64, 0, count+8)
	for i := 0; i < count; i++ {
		d2 := 1100 * r.Float64() // arguments down to −770
		if i%2 == 0 {
			d2 = 3 * r.Float64()
		}
		nb = append(nb, d2)
	}
	nb = append(nb, 0, -1e-12, 1e-300, 708/gamma, 745/gamma, 1060, math.Inf(1), math.NaN())
	for _, plus := range []float64{0, 0.5} {
		v := make([]float64, len(nb)) // ⟨a, b_j⟩ = 0 and ‖a‖² = 0: ‖a − b_j‖² = nb_j
		RBFRow(v, 0, nb, gamma, plus)
		var worst float64
		for j, got := range v {
			want := math.Exp(-gamma*math.Max(0, nb[j])) + plus
			if math.IsNaN(want) || want == plus {
				if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("plus %g, ‖a−b‖² = %g: %v, want %v", plus, nb[j], got, want)
				}
				continue
			}
			worst = math.Max(worst, math.Abs(got-want)/want)
		}
		if worst > 5e-16 {
			t.Errorf("plus %g: largest relative difference from math.Exp %.3g, want ≤ 5e-16", plus, worst)
		}
	}
}

func BenchmarkRBFRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	nb := make([]float64, 4096)
	for i := range nb {
		nb[i] = 20 * r.Float64()
	}
	v := make([]float64, len(nb))
	b.Run("RBFRow", func(b *testing.B) {
		for b.Loop() {
			clear(v)
			RBFRow(v, 0, nb, 1, 0)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for j, d2 := range nb {
				v[j] = math.Exp(-d2)
			}
		}
	})
}
