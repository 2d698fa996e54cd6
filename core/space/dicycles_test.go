package space_test

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestDicyclesByEnumeration(t *testing.T) {
	for n := 3; n <= 7; n++ {
		s, err := space.New("dicycles", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		b := spacetest.CheckCounts(t, s, 1e-12)
		spacetest.CheckDecoder(t, s, b, 1000, uint64(n))
		if len(b.Ys) <= 400 {
			spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(400+n), 1e-4)
		}
	}
}

// The appendix B formulas, evaluated exactly as printed, agree with enumeration (docs/errata.md lists
// them as correct; this keeps it checked): |Y| = Σ_{i=3}^{N} C(N,i)(i−1)!, C on the diagonal
// 2Σ_{i=3}^{N} C(N−2,i−2)(i−2)!, and ∓2Σ_{i=3}^{N} C(N−3,i−3)(i−3)! for arcs sharing a vertex.
func TestThesisDicycleFormulasAgreeWithEnumeration(t *testing.T) {
	for n := 3; n <= 6; n++ {
		s, _ := space.NewDirectedCycles(n)
		b := spacetest.Enumerate(t, s)
		sums := pcBigCycleSums(n)
		if got := int64(len(b.Ys)); !sums.dir.IsInt64() || sums.dir.Int64() != got {
			t.Errorf("n=%d: printed |Y| = %v, enumeration %d", n, sums.dir, got)
		}
		count := float64(len(b.Ys))
		diag := 2 * float64(sums.arc.Int64())
		path := 2 * float64(sums.path.Int64())
		// pairs (0,1) and (1,2): arcs chain through vertex 1; (0,1) and (0,2): same end.
		i01, i02, i12 := 0, 1, n-1
		if got := b.Cov[i01][i01] * count; math.Abs(got-diag) > 1e-9 {
			t.Errorf("n=%d: C[(0,1),(0,1)] enumeration %g, printed %g", n, got, diag)
		}
		if got := b.Cov[i01][i12] * count; math.Abs(got-path) > 1e-9 {
			t.Errorf("n=%d: C[(0,1),(1,2)] enumeration %g, printed +%g", n, got, path)
		}
		if got := b.Cov[i01][i02] * count; math.Abs(got+path) > 1e-9 {
			t.Errorf("n=%d: C[(0,1),(0,2)] enumeration %g, printed −%g", n, got, path)
		}
	}
}

func TestDicyclesExactDecoderN8(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 16,036 cycles")
	}
	s, _ := space.NewDirectedCycles(8)
	b := spacetest.Enumerate(t, s)
	spacetest.CheckDecoder(t, s, b, 300, 8)
}

func TestDicyclesApproxDecoder(t *testing.T) {
	for n := 3; n <= 8; n++ {
		s, err := space.NewDirectedCyclesApprox(n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Guarantee() != 0.5 {
			t.Fatalf("approximate dicycles Guarantee = %v, want 0.5", s.Guarantee())
		}
		b := spacetest.Enumerate(t, s)
		trials := 1000
		if n == 8 {
			trials = 300
		}
		nu := spacetest.CheckDecoder(t, s, b, trials, uint64(500+n))
		worst := pcWorstRealisedNu(s, b, trials, uint64(500+n))
		t.Logf("dicycles n=%d: approximate decoder, realised ν mean %.4f, worst %.4f (guarantee 0.5)", n, nu, worst)
	}
}

func TestDicyclesGuaranteeSwitch(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{3, 0}, {14, 0}, {15, 0.5}, {300, 0.5}} {
		s, _ := space.NewDirectedCycles(c.n)
		if got := s.Guarantee(); got != c.want {
			t.Errorf("DirectedCycles(%d).Guarantee() = %v, want %v", c.n, got, c.want)
		}
	}
}

func TestDicyclesDecodeLarge(t *testing.T) {
	for _, n := range []int{11, 14, 15, 50, 300} {
		s, _ := space.NewDirectedCycles(n)
		a, _ := space.NewDirectedCyclesApprox(n)
		trials := 5
		if n == 300 {
			trials = 2
		}
		pcCheckCycleDecodeLarge(t, s, a, trials, uint64(n))
	}
}

func TestDicyclesValidate(t *testing.T) {
	s, _ := space.NewDirectedCycles(6)
	pcCheckCycleValidate(t, s)
}

func TestDicyclesLargeCounts(t *testing.T) {
	const n = 300
	s, err := space.NewDirectedCycles(n)
	if err != nil {
		t.Fatal(err)
	}
	sums := pcBigCycleSums(n)
	if got, want := s.LogCount(), pcBigLog(sums.dir); math.IsInf(got, 0) || math.IsNaN(got) || !pcRelClose(got, want, 1e-13) {
		t.Errorf("DirectedCycles(300).LogCount() = %.16g, exact %.16g", got, want)
	}
	count := new(big.Rat).SetInt(sums.dir)
	diag := pcRat(new(big.Rat).SetInt(new(big.Int).Lsh(sums.arc, 1)), count)
	path := pcRat(new(big.Rat).SetInt(new(big.Int).Lsh(sums.path, 1)), count)
	op := s.Covariance()
	idx := func(u, v int) int { return u*(2*n-u-1)/2 + v - u - 1 }
	cases := []struct {
		i, j int
		want float64
	}{
		{idx(0, 1), idx(0, 1), diag},
		{idx(7, 200), idx(7, 200), diag},
		{idx(0, 1), idx(1, 2), path},      // chain 0–1–2
		{idx(3, 9), idx(1, 3), path},      // chain 1–3–9
		{idx(0, 1), idx(0, 2), -path},     // same smaller end
		{idx(5, 299), idx(8, 299), -path}, // same larger end
		{idx(0, 1), idx(2, 3), 0},
	}
	for _, c := range cases {
		got := op.At(c.i, c.j)
		if math.IsInf(got, 0) || math.IsNaN(got) || (c.want == 0 && got != 0) || (c.want != 0 && !pcRelClose(got, c.want, 1e-12)) {
			t.Errorf("S[%d,%d] = %.16g, exact %.16g", c.i, c.j, got, c.want)
		}
	}
	pcCheckOperatorRows(t, op, []int{0, 1, 298, 5000, s.Dim() - 1}, 1e-12)
}

func TestDicyclesSamplerMarginals(t *testing.T) {
	s, _ := space.NewDirectedCycles(300)
	pcCheckCycleMarginals(t, s, s.Covariance().At(0, 0), 20000, 77)
}

func BenchmarkDicyclesDecode(b *testing.B) {
	for _, n := range []int{10, 14, 50} {
		s, _ := space.NewDirectedCycles(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { pcBenchmarkDecode(b, s) })
	}
}
