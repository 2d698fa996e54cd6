package space_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// structuredScores returns score vectors whose entries are −c, 0 or c, and for rankings a block
// of labels at c per pair: within the linear domain's reach (300 per arc, 300 per gain), their
// programmes' levels can still span more than float64's range, a path that carries the mass
// sitting e^{−800} below its level's largest. The linear programmes lost such values (a review:
// UndirectedCycles(7) drew the mode of probability 1 never; three cycles of 1/3 came 1495, 755 and
// 750 times in 3000; log Z off by ln 2 and NaN marginals on UndirectedCycles(10)).
func structuredScores(s space.Space, r *rand.Rand, c float64) []float64 {
	u := make([]float64, s.Dim())
	for i := range u {
		u[i] = c * float64(r.IntN(3)-1)
	}
	return u
}

// TestPartitionAndSamplersAtStructuredScores: exact inference and the exact samplers of rankings and
// cycles agree with enumeration at such scores (the review's vectors, and random ones).
func TestPartitionAndSamplersAtStructuredScores(t *testing.T) {
	ucycles5, ucycles7 := must(t, "ucycles", 5), must(t, "ucycles", 7)
	type tc struct {
		s space.Space
		u []float64
	}
	cases := []tc{
		{ucycles5, []float64{-300, 300, -300, -300, 0, 0, -300, 300, 0, -300}},
		{ucycles7, []float64{-300, 300, -300, 0, 0, 300, 0, 0, -300, -300, -300, 300, 0, 0, -300, 0, -300, 300, -300, -300, -300}},
		// one edge at 200, the rest at −300: the forward and backward tables lose the two
		// orientations of the likely cycle, mirror images that a mass check balanced (third review)
		{must(t, "ucycles", 4), []float64{-300, 200, -300, -300, -300, -300}},
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, s := range []space.Space{must(t, "dicycles", 6), must(t, "ucycles", 6)} {
		for range 4 {
			cases = append(cases, tc{s, structuredScores(s, r, 300)})
		}
	}
	perm := must(t, "permutations", 8)
	for _, block := range [][]int{{0, 1, 2, 3}, {1, 4, 6}} { // c per pair within the block, 0 elsewhere: reach 300
		u := make([]float64, perm.Dim())
		c := 300 / float64(len(block)-1)
		k := 0
		for a := 0; a < 8; a++ {
			for b := a + 1; b < 8; b++ {
				if contains(block, a) && contains(block, b) {
					u[k] = c
				}
				k++
			}
		}
		cases = append(cases, tc{perm, u})
	}
	briefs := map[space.Space]*spacetest.Brute{}
	for i, c := range cases {
		b, ok := briefs[c.s]
		if !ok {
			b = spacetest.Enumerate(t, c.s)
			briefs[c.s] = b
		}
		what := fmt.Sprintf("case %d", i)
		spacetest.CheckPartitionAt(t, c.s, b, c.u, 1e-9, what)
		spacetest.CheckScoreSamplerAt(t, c.s, b, c.u, 3000, rand.New(rand.NewPCG(uint64(i), 7)), 1e-4, what)
	}
}

// TestRankingsBlockAtStructuredScores: 12 labels, a block of 6 at 60 per pair (the gains reach
// 300), the others free. The block keeps its order but for e^{−120}, and its labels' places
// among the 12 are uniform: log Z = 900 + log(12!/6!), P(label 0 before label 6) = 6/7, and the
// block lies within the first 8 places with probability C(8,6)/C(12,6) = 28/924. The linear
// programme gave log Z 0.34 off and NaN marginals, and its sampler never drew the block within
// the first 8.
func TestRankingsBlockAtStructuredScores(t *testing.T) {
	s := must(t, "permutations", 12)
	u := make([]float64, s.Dim())
	k := 0
	for a := 0; a < 12; a++ {
		for b := a + 1; b < 12; b++ {
			if b < 6 {
				u[k] = 60
			}
			k++
		}
	}
	part, _ := space.PartitionOf(s)
	mean := make([]float64, s.Dim())
	logZ := part.LogPartition(u, mean)
	if want := 900 + math.Log(479001600.0/720); math.Abs(logZ-want) > 1e-9*want {
		t.Errorf("log Z = %.12g, want %.12g", logZ, want)
	}
	if got := mean[6-1]; math.Abs(got-5.0/7) > 1e-9 { // ψ_{0,6}: 2·P(0 before 6) − 1
		t.Errorf("E[ψ_0,6] = %v, want 5/7", got)
	}
	ss, _ := space.ScoreSamplingOf(s)
	sm := ss.ScoreSampler(u)
	r := rand.New(rand.NewPCG(8, 9))
	y := make([]int64, 12)
	const n = 20000
	var early, sixFirst int
	for i := 0; i < n; i++ {
		sm.Draw(r, y)
		last := int64(0)
		for a := 0; a < 6; a++ {
			if y[a] < last {
				t.Fatalf("drew %v: the block is out of order", y)
			}
			last = y[a]
		}
		if last <= 8 {
			early++
		}
		if y[6] < y[0] {
			sixFirst++
		}
	}
	for _, c := range []struct {
		name  string
		count int
		p     float64
	}{{"the block within the first 8 places", early, 28.0 / 924}, {"label 6 before label 0", sixFirst, 1.0 / 7}} {
		if z := (float64(c.count) - n*c.p) / math.Sqrt(n*c.p*(1-c.p)); math.Abs(z) > 5 {
			t.Errorf("%s: %d of %d, expected %.0f (z = %.1f)", c.name, c.count, n, n*c.p, z)
		}
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
