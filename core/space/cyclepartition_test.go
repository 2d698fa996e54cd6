package space_test

import (
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestCyclesPartitionByEnumeration: the sum-product Held–Karp programme's log Z and pairwise
// marginals equal the sums over every directed and undirected cycle, n = 3..7, at score scales
// from near-uniform to deterministic (both the linear-domain and the log-domain programme).
func TestCyclesPartitionByEnumeration(t *testing.T) {
	for n := 3; n <= 7; n++ {
		for _, kind := range []string{"dicycles", "ucycles"} {
			s, err := space.New(kind, []int64{int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			spacetest.CheckPartition(t, s, spacetest.Enumerate(t, s), 15, uint64(n), 1e-10)
		}
	}
}

// TestCyclesPartitionLimit: exact inference is offered up to the exact decoder's 14 vertices.
func TestCyclesPartitionLimit(t *testing.T) {
	for _, kind := range []string{"dicycles", "ucycles"} {
		for n, want := range map[int64]bool{14: true, 15: false} {
			s, err := space.New(kind, []int64{n})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := space.PartitionOf(s); ok != want {
				t.Errorf("%s(%d): exact inference %v, want %v", kind, n, ok, want)
			}
		}
	}
}

func BenchmarkCyclesPartition(b *testing.B) {
	for _, n := range []int64{8, 11, 14} {
		s, err := space.New("dicycles", []int64{n})
		if err != nil {
			b.Fatal(err)
		}
		part, _ := space.PartitionOf(s)
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = float64(i%7) - 3
		}
		mean := make([]float64, s.Dim())
		b.Run(s.Kind()+"/"+string(rune('0'+n/10))+string(rune('0'+n%10)), func(b *testing.B) {
			for b.Loop() {
				part.LogPartition(u, mean)
			}
		})
	}
}
