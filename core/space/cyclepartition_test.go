package space_test

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// TestCyclesLogZBeyondPartition: log Z alone is offered up to 16 vertices, where Partition stops
// at 14. With every edge of an undirected cycle scored c, a cycle of k vertices scores c·k and
// there are C(n, k)·(k − 1)!/2 of them, so Z = Σ_{k ≥ 3} C(n, k)(k − 1)!/2 · e^{ck}: checked at
// 15 and 16 vertices in the linear domain and the log domain (c = 400, beyond the linear
// domain's reach of 300), and at c = 0 against
// the count of cycles for the directed space (twice as many), whose log Z is also invariant
// under u → −u (every cycle reversed).
func TestCyclesLogZBeyondPartition(t *testing.T) {
	for _, kind := range []string{"dicycles", "ucycles"} {
		for n, want := range map[int64]bool{14: true, 16: true, 17: false} {
			s, err := space.New(kind, []int64{n})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := space.LogZOf(s); ok != want {
				t.Errorf("%s(%d): log Z %v, want %v", kind, n, ok, want)
			}
		}
	}
	for _, n := range []int{15, 16} {
		us, _ := space.New("ucycles", []int64{int64(n)})
		ds, _ := space.New("dicycles", []int64{int64(n)})
		uz, dz := us.(space.LogZ), ds.(space.LogZ)
		for _, c := range []float64{0, 0.5, -1.5, 400} {
			terms := []float64{}
			for k := 3; k <= n; k++ { // log(C(n, k)(k − 1)!/2) + ck
				a, _ := math.Lgamma(float64(n + 1))
				b, _ := math.Lgamma(float64(n - k + 1))
				terms = append(terms, a-b-math.Log(float64(k))-math.Ln2+c*float64(k))
			}
			top := math.Inf(-1)
			for _, x := range terms {
				top = max(top, x)
			}
			var sum float64
			for _, x := range terms {
				sum += math.Exp(x - top)
			}
			want := top + math.Log(sum)
			u := make([]float64, us.Dim())
			for i := range u {
				u[i] = c
			}
			if got := uz.LogZ(u); math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("UndirectedCycles(%d), c = %v: log Z %v, want %v", n, c, got, want)
			}
			if c == 0 {
				if got := dz.LogZ(make([]float64, ds.Dim())); math.Abs(got-(want+math.Ln2)) > 1e-9*want {
					t.Errorf("DirectedCycles(%d), u = 0: log Z %v, want %v", n, got, want+math.Ln2)
				}
			}
		}
		r := rand.New(rand.NewPCG(uint64(n), 5))
		for _, scale := range []float64{0.5, 80} {
			u, neg := make([]float64, ds.Dim()), make([]float64, ds.Dim())
			for i := range u {
				u[i] = scale * r.NormFloat64()
				neg[i] = -u[i]
			}
			if a, b := dz.LogZ(u), dz.LogZ(neg); math.Abs(a-b) > 1e-9*math.Abs(a) {
				t.Errorf("DirectedCycles(%d), scale %v: log Z(u) %v, log Z(−u) %v", n, scale, a, b)
			}
		}
	}
}

// BenchmarkCyclesLogZ: log Z alone beyond Partition's 14 vertices, at the scores of a fitted model.
func BenchmarkCyclesLogZ(b *testing.B) {
	for _, n := range []int64{14, 15, 16} {
		s, err := space.New("dicycles", []int64{n})
		if err != nil {
			b.Fatal(err)
		}
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = 0.05 * (float64(i%7) - 3)
		}
		z := s.(space.LogZ)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				z.LogZ(u)
			}
		})
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
