package space_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestUcyclesByEnumeration(t *testing.T) {
	for n := 3; n <= 7; n++ {
		s, err := space.New("ucycles", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		b := spacetest.CheckCounts(t, s, 1e-12)
		spacetest.CheckDecoder(t, s, b, 1000, uint64(n))
		if len(b.Ys) <= 400 {
			spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(600+n), 1e-4)
		}
	}
}

// Thesis §4.3.1 ("Route Prediction — Counting Cyclic Permutations") prints
//
//	|Y| = Σ_{i=2}^{N} C(N,i)(i−1)!/2   and   Ψ = 1·Σ_{i=0}^{N−2} C(N−2,i) i!.
//
// Both count a two-vertex "cycle": the first adds C(N,2)/2, not even an integer for N ≡ 2, 3
// (mod 4), the second adds 1 (the i = 0 term, the edge alone). Enumeration says the sums start at
// i = 3 and i = 1. The printed C entries (Σ_{i=0}^{N−|e∪e'|} C(N−|e∪e'|,i) i! for edges sharing a
// vertex, Σ_{i=0}^{N−4} C(N−4,i)·2(i+1)! for disjoint edges) are right.
func TestThesisUndirectedCycleCountIsWrong(t *testing.T) {
	for n := 3; n <= 6; n++ {
		s, _ := space.NewUndirectedCycles(n)
		b := spacetest.Enumerate(t, s)
		count := float64(len(b.Ys))

		printedCount := new(big.Rat)
		for i := 2; i <= n; i++ {
			term := new(big.Rat).SetInt(new(big.Int).Mul(pcBinom(n, i), pcFact(i-1)))
			printedCount.Add(printedCount, term.Mul(term, big.NewRat(1, 2)))
		}
		pc, _ := printedCount.Float64()
		if pc == count {
			t.Errorf("n=%d: printed |Y| = %g agrees with enumeration; the erratum is wrong", n, pc)
		}
		if want := count + float64(n*(n-1))/4; pc != want {
			t.Errorf("n=%d: printed |Y| = %g, expected enumeration %g + C(n,2)/2", n, pc, count)
		}
		correctedCount := pcBigCycleSums(n).dir.Int64() / 2
		if float64(correctedCount) != count {
			t.Errorf("n=%d: Σ_{i=3} C(n,i)(i−1)!/2 = %d, enumeration %g", n, correctedCount, count)
		}

		printedPsi := new(big.Int)
		for i := 0; i <= n-2; i++ {
			printedPsi.Add(printedPsi, new(big.Int).Mul(pcBinom(n-2, i), pcFact(i)))
		}
		psi01 := math.Round(b.Mean[0] * count) // Ψ for the edge {0,1}, an integer
		if float64(printedPsi.Int64()) != psi01+1 {
			t.Errorf("n=%d: printed Ψ = %v, enumeration %g: expected them to differ by the i = 0 term, 1", n, printedPsi, psi01)
		}
		if arc := pcBigCycleSums(n).arc.Int64(); math.Abs(float64(arc)-psi01) > 1e-9 {
			t.Errorf("n=%d: Σ_{i=1}^{N−2} C(N−2,i) i! = %d, enumeration %g", n, arc, psi01)
		}
	}
	t.Log("n=5: printed |Y| = 42 and Ψ = 16; enumeration gives 37 and 15")
}

// The printed C entries of §4.3.1 agree with enumeration.
func TestThesisUndirectedCycleSecondMomentsAgree(t *testing.T) {
	for n := 4; n <= 6; n++ {
		s, _ := space.NewUndirectedCycles(n)
		b := spacetest.Enumerate(t, s)
		count := float64(len(b.Ys))
		sums := pcBigCycleSums(n)
		// C = S + ppᵀ, scaled by |Y|
		c := func(i, j int) float64 { return (b.Cov[i][j] + b.Mean[i]*b.Mean[j]) * count }
		share, disjoint := float64(sums.path.Int64()), float64(sums.two.Int64())
		i01, i02, i23 := 0, 1, 2*n-3 // pairs (0,1), (0,2), (2,3)
		if got := c(i01, i02); math.Abs(got-share) > 1e-9 {
			t.Errorf("n=%d: C[(0,1),(0,2)] enumeration %g, printed %g", n, got, share)
		}
		if got := c(i01, i23); math.Abs(got-disjoint) > 1e-9 {
			t.Errorf("n=%d: C[(0,1),(2,3)] enumeration %g, printed %g", n, got, disjoint)
		}
	}
}

func TestUcyclesExactDecoderN8(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 8,018 cycles")
	}
	s, _ := space.NewUndirectedCycles(8)
	b := spacetest.Enumerate(t, s)
	spacetest.CheckDecoder(t, s, b, 300, 8)
}

func TestUcyclesApproxDecoder(t *testing.T) {
	for n := 3; n <= 8; n++ {
		s, err := space.NewUndirectedCyclesApprox(n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Guarantee() != 1 {
			t.Fatalf("approximate ucycles Guarantee = %v, want 1", s.Guarantee())
		}
		b := spacetest.Enumerate(t, s)
		trials := 1000
		if n == 8 {
			trials = 300
		}
		nu := spacetest.CheckDecoder(t, s, b, trials, uint64(700+n))
		worst := pcWorstRealisedNu(s, b, trials, uint64(700+n))
		t.Logf("ucycles n=%d: approximate decoder, realised ν mean %.4f, worst %.4f (no guarantee)", n, nu, worst)
	}
}

func TestUcyclesGuaranteeSwitch(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{3, 0}, {14, 0}, {15, 1}, {300, 1}} {
		s, _ := space.NewUndirectedCycles(c.n)
		if got := s.Guarantee(); got != c.want {
			t.Errorf("UndirectedCycles(%d).Guarantee() = %v, want %v", c.n, got, c.want)
		}
	}
}

func TestUcyclesDecodeLarge(t *testing.T) {
	for _, n := range []int{11, 14, 15, 50, 300} {
		s, _ := space.NewUndirectedCycles(n)
		a, _ := space.NewUndirectedCyclesApprox(n)
		trials := 5
		if n == 300 {
			trials = 2
		}
		pcCheckCycleDecodeLarge(t, s, a, trials, uint64(n))
	}
}

func TestUcyclesValidate(t *testing.T) {
	s, _ := space.NewUndirectedCycles(6)
	pcCheckCycleValidate(t, s)
	// Both orientations of a cycle are valid and embed alike.
	y1 := []int64{1, 2, 3, 0, -1, -1}
	y2 := []int64{3, 0, 1, 2, -1, -1}
	p1, p2 := make([]float64, s.Dim()), make([]float64, s.Dim())
	for _, y := range [][]int64{y1, y2} {
		if err := s.Validate(y); err != nil {
			t.Errorf("Validate(%v) = %v", y, err)
		}
	}
	s.Embed(y1, p1)
	s.Embed(y2, p2)
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatalf("the two orientations embed differently at %d", i)
		}
	}
}

func TestUcyclesLargeCounts(t *testing.T) {
	const n = 300
	s, err := space.NewUndirectedCycles(n)
	if err != nil {
		t.Fatal(err)
	}
	sums := pcBigCycleSums(n)
	undirected := new(big.Int).Rsh(sums.dir, 1)
	if got, want := s.LogCount(), pcBigLog(undirected); math.IsInf(got, 0) || math.IsNaN(got) || !pcRelClose(got, want, 1e-13) {
		t.Errorf("UndirectedCycles(300).LogCount() = %.16g, exact %.16g", got, want)
	}
	count := new(big.Rat).SetInt(undirected)
	p := new(big.Rat).Quo(new(big.Rat).SetInt(sums.arc), count)
	pp := new(big.Rat).Mul(p, p)
	one := big.NewRat(1, 1)
	diag := pcRat(new(big.Rat).Sub(p, pp), one)
	share := pcRat(new(big.Rat).Sub(new(big.Rat).Quo(new(big.Rat).SetInt(sums.path), count), pp), one)
	disjoint := pcRat(new(big.Rat).Sub(new(big.Rat).Quo(new(big.Rat).SetInt(sums.two), count), pp), one)
	mean := make([]float64, s.Dim())
	s.Mean(mean)
	if want := pcRat(p, one); !pcRelClose(mean[0], want, 1e-12) || !pcRelClose(mean[len(mean)-1], want, 1e-12) {
		t.Errorf("UndirectedCycles(300) mean %.16g, exact %.16g", mean[0], want)
	}
	op := s.Covariance()
	idx := func(u, v int) int { return u*(2*n-u-1)/2 + v - u - 1 }
	cases := []struct {
		i, j int
		want float64
	}{
		{idx(0, 1), idx(0, 1), diag},
		{idx(7, 200), idx(7, 200), diag},
		{idx(0, 1), idx(1, 2), share},
		{idx(5, 299), idx(8, 299), share},
		{idx(0, 1), idx(2, 3), disjoint},
		{idx(10, 20), idx(30, 299), disjoint},
	}
	for _, c := range cases {
		got := op.At(c.i, c.j)
		if math.IsInf(got, 0) || math.IsNaN(got) || !pcRelClose(got, c.want, 1e-12) {
			t.Errorf("S[%d,%d] = %.16g, exact %.16g", c.i, c.j, got, c.want)
		}
	}
	pcCheckOperatorRows(t, op, []int{0, 1, 298, 5000, s.Dim() - 1}, 1e-12)
}

func TestUcyclesSamplerMarginals(t *testing.T) {
	s, _ := space.NewUndirectedCycles(300)
	p := make([]float64, s.Dim())
	s.Mean(p)
	pcCheckCycleMarginals(t, s, p[0], 20000, 78)
}
