package space_test

import (
	"fmt"
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
