package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The rbf kernel's Row agrees with math.Exp to 5e-16 relative over the whole range of arguments, is exactly
// 1 (+ plus) at distance 0 or below (rounding), and follows math.Exp below −708 (subnormal
// results, then 0) and for NaN.
func TestRBFRowExponential(t *testing.T) {
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
		Kernel{Kind: RBF, Gamma: gamma}.Row(v, 0, nb, plus)
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
	b.Run("Row", func(b *testing.B) {
		for b.Loop() {
			clear(v)
			Kernel{Kind: RBF, Gamma: 1}.Row(v, 0, nb, 0)
		}
	})
	b.Run("Row-go", func(b *testing.B) { // the loop in Go alone
		defer setHaveRBFKernel(setHaveRBFKernel(false))
		for b.Loop() {
			clear(v)
			Kernel{Kind: RBF, Gamma: 1}.Row(v, 0, nb, 0)
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

// Row, which kernel SGD computes its rows with, turns inner products into exactly the values
// GramNorms gives (plus the intercept's constant), which the other solvers and predict use.
func TestRowMatchesGram(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := mat.NewDense(7, 5, nil), mat.NewDense(300, 5, nil)
	for _, m := range []*mat.Dense{a, b} {
		for i := range m.RawMatrix().Data {
			m.RawMatrix().Data[i] = 3 * r.NormFloat64()
		}
	}
	na, nb := SquaredNorms(a), SquaredNorms(b)
	dots := mat.NewDense(7, 300, nil) // the inner products as GramNorms forms them
	Kernel{Kind: Linear}.GramNorms(dots, a, b, nil)
	for _, k := range []Kernel{{Kind: Linear}, {Kind: RBF, Gamma: 0.7}, {Kind: RBF, Gamma: 40}, {Kind: Poly, Gamma: 0.3, Degree: 3, Coef0: 1}} {
		want := mat.NewDense(7, 300, nil)
		k.GramNorms(want, a, b, nb)
		for i := 0; i < 7; i++ {
			v := append([]float64(nil), dots.RawRowView(i)...)
			k.Row(v, na[i], nb, 0.5)
			for j, got := range v {
				if w := want.At(i, j) + 0.5; got != w {
					t.Fatalf("%v: k(a_%d, b_%d) + 0.5 = %v, GramNorms gives %v", k.Kind, i, j, got, w)
				}
			}
		}
	}
}

// rbfRow's vector kernel gives rbfRowGo's values bit for bit, including blocks it hands back to
// the loop in Go (arguments below −708, NaN), distances that rounding makes negative or −0, and
// every length modulo 4.
func TestRBFRowKernelMatchesGo(t *testing.T) {
	if !haveRBFKernel {
		t.Skip("no AVX2 on this processor")
	}
	r := rand.New(rand.NewPCG(5, 6))
	special := []float64{0, math.Copysign(0, -1), -1e-12, 1e-300, 1011.4, 1011.5, 1065, math.Inf(1), math.NaN(), 1e308}
	for _, n := range []int{0, 1, 3, 4, 5, 8, 13, 64, 1001} {
		for _, gamma := range []float64{0.7, 1e-3, 40} {
			for _, plus := range []float64{0, 1} {
				dots, nb := make([]float64, n), make([]float64, n)
				for j := range dots {
					dots[j] = 3 * r.NormFloat64()
					nb[j] = 20 * r.Float64()
					if r.IntN(10) == 0 {
						nb[j] = special[r.IntN(len(special))]
						dots[j] = 0
					}
				}
				na := 2 * r.Float64()
				want := append([]float64(nil), dots...)
				rbfRowGo(want, na, nb, gamma, plus)
				got := append([]float64(nil), dots...)
				rbfRow(got, na, nb, gamma, plus)
				for j := range got {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Fatalf("n=%d γ=%g plus=%g: v[%d] = %v (nb %v, dot %v), the loop in Go gives %v",
							n, gamma, plus, j, got[j], nb[j], dots[j], want[j])
					}
				}
			}
		}
	}
}
