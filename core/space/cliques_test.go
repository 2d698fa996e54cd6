package space_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestCliquesByEnumeration(t *testing.T) {
	for n := 2; n <= 10; n++ {
		s, err := space.New("cliques", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, s)
		b := spacetest.CheckCounts(t, s, 1e-12)
		if got, want := len(b.Ys), 1<<n-n; got != want {
			t.Errorf("n=%d: %d cliques enumerated, want 2^n − n = %d", n, got, want)
		}
		spacetest.CheckDecoder(t, s, b, 1000, uint64(n))
		if len(b.Ys) <= 300 {
			spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(800+n), 1e-4)
		}
	}
}

// The approximate decoder (used beyond CliquesExactMax vertices), measured against enumeration:
// the realised ν must stay within the proved 1 − 1/d; the mean and worst realised ν are logged.
func TestCliquesApproxDecoder(t *testing.T) {
	for n := 4; n <= 12; n++ {
		s, _ := space.NewCliques(n)
		b := spacetest.Enumerate(t, s)
		d := s.Dim()
		r := rand.New(rand.NewPCG(uint64(n), 81))
		u := make([]float64, d)
		y := make([]int64, n)
		psi := make([]float64, d)
		var sumNu, maxNu float64
		optimal := 0
		const trials = 300
		for trial := 0; trial < trials; trial++ {
			for i := range u {
				u[i] = r.NormFloat64()
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, p := range b.Psis {
				f := vecDot(u, p)
				lo, hi = math.Min(lo, f), math.Max(hi, f)
			}
			space.DecodeCliquesApprox(s, u, y)
			if err := s.Validate(y); err != nil {
				t.Fatalf("n=%d: approximate decoder returned %v: %v", n, y, err)
			}
			s.Embed(y, psi)
			nu := (hi - vecDot(u, psi)) / (hi - lo)
			if nu > 1-1/float64(d)+1e-9 {
				t.Fatalf("n=%d: realised ν = %v beyond the proved %v", n, nu, 1-1/float64(d))
			}
			if nu < 1e-12 {
				optimal++
			}
			sumNu += nu
			maxNu = math.Max(maxNu, nu)
		}
		t.Logf("n=%2d: approximate decoder optimal in %3d/%d trials, mean realised ν %.4f, worst %.4f (proved %.4f)",
			n, optimal, trials, sumNu/trials, maxNu, 1-1/float64(d))
	}
}

func TestCliquesGuaranteeSwitch(t *testing.T) {
	a, _ := space.NewCliques(space.CliquesExactMax)
	b, _ := space.NewCliques(space.CliquesExactMax + 1)
	if a.Guarantee() != 0 {
		t.Errorf("Cliques(%d).Guarantee() = %v, want 0 (exact)", space.CliquesExactMax, a.Guarantee())
	}
	if d := float64(b.Dim()); b.Guarantee() != 1-1/d {
		t.Errorf("Cliques(%d).Guarantee() = %v, want 1 − 1/d", space.CliquesExactMax+1, b.Guarantee())
	}
}

// Sizes where spacetest's enumeration would be too heavy: the exact decoder against a direct
// brute-force maximum over all vertex masks (n = 14, 17), and at the limit n = 20 against the
// approximate decoder, which it must never lose to.
func TestCliquesExactDecoderLarger(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, n := range []int{14, 17, space.CliquesExactMax} {
		s, _ := space.NewCliques(n)
		u := make([]float64, s.Dim())
		y1, y2 := make([]int64, n), make([]int64, n)
		psi := make([]float64, s.Dim())
		for trial := 0; trial < 3; trial++ {
			for i := range u {
				u[i] = r.NormFloat64()
			}
			s.Decode(u, y1)
			if err := s.Validate(y1); err != nil {
				t.Fatalf("n=%d: decoded %v: %v", n, y1, err)
			}
			s.Embed(y1, psi)
			f1 := vecDot(u, psi)
			var want float64
			if n < space.CliquesExactMax {
				want = cliquesBruteMax(n, u)
			} else {
				space.DecodeCliquesApprox(s, u, y2)
				s.Embed(y2, psi)
				want = vecDot(u, psi)
			}
			if f1 < want-1e-9 {
				t.Errorf("n=%d: exact decoder scores %.12g, brute force / local search %.12g", n, f1, want)
			}
		}
	}
}

// cliquesBruteMax is max over vertex masks of Σ_{a<b both in} u_ab (singletons score 0 like ∅).
func cliquesBruteMax(n int, u []float64) float64 {
	idx := make([][]int, n)
	e := 0
	for a := range idx {
		idx[a] = make([]int, n)
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			idx[a][b] = e
			e++
		}
	}
	best := 0.0
	vs := make([]int, 0, n)
	for mask := 0; mask < 1<<n; mask++ {
		vs = vs[:0]
		for v := 0; v < n; v++ {
			if mask>>v&1 == 1 {
				vs = append(vs, v)
			}
		}
		var f float64
		for i, a := range vs {
			for _, b := range vs[i+1:] {
				f += u[idx[a][b]]
			}
		}
		best = math.Max(best, f)
	}
	return best
}

func TestCliquesRejects(t *testing.T) {
	for _, c := range []struct {
		params []int64
		want   string
	}{
		{[]int64{1}, "n_vertices ≥ 2"},
		{[]int64{0}, "n_vertices ≥ 2"},
		{[]int64{2, 3}, "decoder mode 3"},
		{[]int64{4, 0, 1}, "takes 1 or 2 parameters"},
	} {
		if _, err := space.New("cliques", c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(cliques, %v) error = %v, want it to mention %q", c.params, err, c.want)
		}
	}
	s, _ := space.NewCliques(4)
	for _, c := range []struct {
		y    []int64
		want string
	}{
		{[]int64{0, 0, 1, 0}, "exactly one vertex (2)"},
		{[]int64{0, 2, 1, 0}, "vertex 1 has value 2"},
		{[]int64{1, 1, 1}, "has 4 entries"},
	} {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
	for _, y := range [][]int64{{0, 0, 0, 0}, {1, 1, 0, 0}, {1, 1, 1, 1}} {
		if err := s.Validate(y); err != nil {
			t.Errorf("Validate(%v) = %v", y, err)
		}
	}
}

// Cliques(300): d = 44850, O(d) covariance products, sampler marginals, approximate decoding.
func TestCliquesLarge(t *testing.T) {
	s, err := space.NewCliques(300)
	if err != nil {
		t.Fatal(err)
	}
	checkLargeFinite(t, s)
	if got, want := s.LogCount(), 300*math.Ln2; math.Abs(got-want) > 1e-12*want {
		t.Errorf("LogCount = %v, want ≈ %v", got, want)
	}
	checkRowsAgainstAt(t, s.Covariance(), []int{0, 1, 300, 44849}, 1e-12)
	checkLinearMoments(t, s, 1000, 85, testDirections(s.Dim(), []int{0, 44849}, 2, 86))
}

// The thesis (section "Graph Prediction") prints
// C^clique_{e,e'} = Σ_{i=|e∩e'|}^{N} C(N−|e∩e'|, i−|e∩e'|) (= 2^{N−|e∩e'|}), indexed by the
// intersection. The number of cliques containing both edges is 2^{N−|e∪e'|}: the printed value is
// right only for e = e'. It also prints |Y^clique| = 2^N, which counts vertex subsets: the N+1
// subsets with fewer than two vertices are all the edgeless graph (ψ = 0), so there are 2^N − N
// distinct cliques. Ψ_{uv} = Σ_{i=2}^{N} C(N−2, i−2) = 2^{N−2} is right.
func TestThesisCliqueCounts(t *testing.T) {
	const n = 5
	s, _ := space.NewCliques(n)
	b := spacetest.Enumerate(t, s)
	if len(b.Ys) == 1<<n || len(b.Ys) != 1<<n-n {
		t.Errorf("%d distinct cliques, thesis 2^N = %d, want 2^N − N = %d", len(b.Ys), 1<<n, 1<<n-n)
	}
	// Vertex subsets with ψ = 0: the empty set and the singletons, all the same graph.
	zero := 0
	for mask := 0; mask < 1<<n; mask++ {
		if ones := popcount(mask); ones <= 1 {
			zero++
		}
	}
	if zero != n+1 {
		t.Fatalf("%d edgeless vertex subsets, want N+1", zero)
	}
	pairs := [][2]int{}
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			pairs = append(pairs, [2]int{u, v})
		}
	}
	for i, e := range pairs {
		var psiSum float64
		for _, psi := range b.Psis {
			psiSum += psi[i]
		}
		if psiSum != 1<<(n-2) {
			t.Errorf("Ψ_%v = %v, want 2^(N−2) = %d", e, psiSum, 1<<(n-2))
		}
		for j, f := range pairs {
			var c float64
			for _, psi := range b.Psis {
				c += psi[i] * psi[j]
			}
			inter := 0
			for _, x := range e {
				if x == f[0] || x == f[1] {
					inter++
				}
			}
			union := 4 - inter
			var printed float64
			for k := inter; k <= n; k++ {
				printed += binom(n-inter, k-inter)
			}
			if want := math.Ldexp(1, n-union); c != want {
				t.Errorf("C_%v,%v = %v, want 2^(N−|e∪e'|) = %v", e, f, c, want)
			}
			if (c == printed) != (i == j) {
				t.Errorf("C_%v,%v = %v, printed formula %v: agreement only expected for e = e'", e, f, c, printed)
			}
		}
	}
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func BenchmarkCliquesDecode(b *testing.B) {
	for _, n := range []int{12, 16, 20, 21, 50, 300} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s, _ := space.NewCliques(n)
			r := rand.New(rand.NewPCG(87, 88))
			u := make([]float64, s.Dim())
			for i := range u {
				u[i] = r.NormFloat64()
			}
			y := make([]int64, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Decode(u, y)
			}
		})
	}
}
