package space_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// TestScorerEqualsEmbedDot: a space's Score is the dot product of u with its Embed bit for bit, on
// sampled structures (uniform, so every pair order occurs) and on scores of mixed magnitudes, where
// summing the terms in another order would change the last bits.
func TestScorerEqualsEmbedDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{2, 3, 7, 20, 61} {
		sp, err := space.NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := any(sp).(space.Scorer); !ok {
			t.Fatalf("%s: no Scorer", sp.Kind())
		}
		u, y, psi := make([]float64, sp.Dim()), make([]int64, sp.Width()), make([]float64, sp.Dim())
		for trial := 0; trial < 200; trial++ {
			for j := range u {
				u[j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(13)-6))
			}
			sp.Sample(r, y)
			sp.Embed(y, psi)
			var want float64
			for j := range u {
				want += u[j] * psi[j]
			}
			if got := sp.Score(u, y); got != want {
				t.Fatalf("%s(%d), ranks %v: Score %v, Embed·u %v", sp.Kind(), n, y, got, want)
			}
			if got := space.Score(sp, u, y, nil); got != want {
				t.Fatalf("space.Score took another path: %v, want %v", got, want)
			}
		}
	}
	// The cycle spaces sum their n arcs in vertex order: equal up to rounding.
	for _, n := range []int{3, 5, 12, 40} {
		dc, err := space.NewDirectedCycles(n)
		if err != nil {
			t.Fatal(err)
		}
		uc, err := space.NewUndirectedCycles(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range []interface {
			space.Space
			space.Scorer
		}{dc, uc} {
			u, y, psi := make([]float64, sp.Dim()), make([]int64, sp.Width()), make([]float64, sp.Dim())
			for trial := 0; trial < 200; trial++ {
				var scale float64
				for j := range u {
					u[j] = r.NormFloat64()
					scale += math.Abs(u[j])
				}
				sp.Sample(r, y)
				sp.Embed(y, psi)
				var want float64
				for j := range u {
					want += u[j] * psi[j]
				}
				if got := sp.Score(u, y); math.Abs(got-want) > 1e-13*scale {
					t.Fatalf("%s(%d), %v: Score %v, Embed·u %v", sp.Kind(), n, y, got, want)
				}
			}
		}
	}
	// The fallback embeds into psi: a space without Score (multilabel) gives the same dot product.
	ml, err := space.NewMultilabel(5)
	if err != nil {
		t.Fatal(err)
	}
	y, psi := []int64{1, 0, 1, 1, 0}, make([]float64, 5)
	if got := space.Score(ml, []float64{1, 2, 3, 4, 5}, y, psi); got != 8 {
		t.Fatalf("multilabel fallback: %v, want 8", got)
	}
}

// BenchmarkPermutationsScore: scoring a uniform ranking of 20 labels by Score against Embed and a
// dot product (the chains' old path).
func BenchmarkPermutationsScore(b *testing.B) {
	sp, _ := space.NewPermutations(20)
	r := rand.New(rand.NewPCG(1, 2))
	u, psi := make([]float64, sp.Dim()), make([]float64, sp.Dim())
	for j := range u {
		u[j] = r.NormFloat64()
	}
	ys := make([][]int64, 1024)
	for i := range ys {
		ys[i] = make([]int64, 20)
		sp.Sample(r, ys[i])
	}
	var sink float64
	b.Run("Score", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink += sp.Score(u, ys[i%len(ys)])
		}
	})
	b.Run("EmbedDot", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sp.Embed(ys[i%len(ys)], psi)
			for j, x := range u {
				sink += x * psi[j]
			}
		}
	})
	_ = sink
}
