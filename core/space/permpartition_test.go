package space_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestPermutationsPartitionByEnumeration: the subset programme's log Z and pairwise marginals equal
// the sums over all n! rankings, n = 1..7.
func TestPermutationsPartitionByEnumeration(t *testing.T) {
	for n := 2; n <= 7; n++ {
		s, err := space.NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		spacetest.CheckPartition(t, s, spacetest.Enumerate(t, s), 15, uint64(n), 1e-10)
	}
}

// TestPermutationsPartitionLimit: exact inference is offered up to 16 labels.
func TestPermutationsPartitionLimit(t *testing.T) {
	for n, want := range map[int]bool{16: true, 17: false} {
		s, err := space.NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := space.PartitionOf(s); ok != want {
			t.Errorf("Permutations(%d): exact inference %v, want %v", n, ok, want)
		}
	}
}

// TestPermutationsLogZBeyondPartition: log Z alone is offered up to 19 labels, where Partition
// stops at 16, and equals the closed form of equal pair scores c, ⟨u, ψ(y)⟩ = c·(N − 2·inv(y))
// over the N = n(n−1)/2 pairs, whose sum over the n! rankings is Mahonian:
//
//	Z = e^{cN} Σ_y q^{inv(y)} = e^{cN} Π_{k=1..n} (1 − q^k)/(1 − q),   q = e^{−2c},
//
// in the linear domain (small c), the log domain (c = 40), and at c = 0 (log n!); and a block of
// labels at structured scores, where the linear programme's values underflow.
func TestPermutationsLogZBeyondPartition(t *testing.T) {
	for n, want := range map[int]bool{16: true, 17: true, 19: true, 20: false} {
		s, err := space.NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := space.LogZOf(s); ok != want {
			t.Errorf("Permutations(%d): log Z %v, want %v", n, ok, want)
		}
	}
	for _, n := range []int{17, 19} {
		s, err := space.NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []float64{0, 0.3, -0.7, 40} {
			u := make([]float64, s.Dim())
			for i := range u {
				u[i] = c
			}
			pairs := float64(n * (n - 1) / 2)
			want := c * pairs
			if c > 0 {
				for k := 1; k <= n; k++ { // log((1 − q^k)/(1 − q)), q = e^{−2c} < 1
					want += math.Log1p(-math.Exp(-2*c*float64(k))) - math.Log1p(-math.Exp(-2*c))
				}
			} else if c < 0 { // the mirror image: every ranking reversed, u → −u
				want = -c * pairs
				for k := 1; k <= n; k++ {
					want += math.Log1p(-math.Exp(2*c*float64(k))) - math.Log1p(-math.Exp(2*c))
				}
			} else {
				lg, _ := math.Lgamma(float64(n + 1))
				want = lg
			}
			if got := s.LogZ(u); math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("Permutations(%d), c = %v: log Z %v, want %v", n, c, got, want)
			}
		}
		// A block of the first 8 labels at 36 per pair, the rest at 0: the linear programme's
		// values underflow and log Z alone goes to the log domain. The other labels are free, so
		// Z = (n!/8!)·e^{36·28}·Π_{k=1..8} (1 − q^k)/(1 − q), q = e^{−72}.
		const block, v = 8, 36.0
		u := make([]float64, s.Dim())
		k := 0
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if b < block {
					u[k] = v
				}
				k++
			}
		}
		lgN, _ := math.Lgamma(float64(n + 1))
		lgB, _ := math.Lgamma(block + 1)
		want := lgN - lgB + v*block*(block-1)/2
		for j := 1; j <= block; j++ {
			want += math.Log1p(-math.Exp(-2*v*float64(j))) - math.Log1p(-math.Exp(-2*v))
		}
		if got := s.LogZ(u); math.Abs(got-want) > 1e-12*want {
			t.Errorf("Permutations(%d), a block of %d at %v: log Z %v, want %v", n, block, v, got, want)
		}
	}
}

func BenchmarkPermutationsPartition(b *testing.B) {
	for _, n := range []int{8, 12, 16} {
		s, err := space.NewPermutations(n)
		if err != nil {
			b.Fatal(err)
		}
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = float64(i%7) - 3
		}
		mean := make([]float64, s.Dim())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				s.LogPartition(u, mean)
			}
		})
		// Scores of a fitted model are small: the programme runs in the linear domain.
		small := make([]float64, s.Dim())
		for i := range small {
			small[i] = 0.05 * (float64(i%7) - 3)
		}
		b.Run(fmt.Sprintf("%d/small", n), func(b *testing.B) {
			for b.Loop() {
				s.LogPartition(small, mean)
			}
		})
	}
}

// BenchmarkPermutationsLogZ: log Z alone beyond Partition's 16 labels, at the scores of a fitted
// model (the linear domain).
func BenchmarkPermutationsLogZ(b *testing.B) {
	for _, n := range []int{16, 17, 18, 19} {
		s, err := space.NewPermutations(n)
		if err != nil {
			b.Fatal(err)
		}
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = 0.05 * (float64(i%7) - 3)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				s.LogZ(u)
			}
		})
	}
}
