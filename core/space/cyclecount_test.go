package space_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// pcCycleSums evaluates the counting sums of the thesis for cycles on subsets of n vertices in
// exact integer arithmetic, with the sums started where enumeration says they start:
//
//	dir  = Σ_{i=3}^{n} C(n,i)(i−1)!            directed cycles (appendix B)
//	arc  = Σ_{i=3}^{n} C(n−2,i−2)(i−2)!        directed cycles through a given arc
//	path = Σ_{i=3}^{n} C(n−3,i−3)(i−3)!        directed cycles through a given path u→v→w
//	two  = Σ_{i=4}^{n} C(n−4,i−4)·2(i−3)!      undirected cycles through two disjoint edges (§4.3.1)
type pcCycleSums struct{ dir, arc, path, two *big.Int }

func pcBigCycleSums(n int) pcCycleSums {
	c := pcCycleSums{new(big.Int), new(big.Int), new(big.Int), new(big.Int)}
	for i := 3; i <= n; i++ {
		c.dir.Add(c.dir, new(big.Int).Mul(pcBinom(n, i), pcFact(i-1)))
		c.arc.Add(c.arc, new(big.Int).Mul(pcBinom(n-2, i-2), pcFact(i-2)))
		c.path.Add(c.path, new(big.Int).Mul(pcBinom(n-3, i-3), pcFact(i-3)))
		if i >= 4 {
			t := new(big.Int).Mul(pcBinom(n-4, i-4), pcFact(i-3))
			c.two.Add(c.two, t.Lsh(t, 1))
		}
	}
	return c
}

func pcBinom(n, k int) *big.Int {
	if k < 0 || n < 0 || k > n {
		return new(big.Int)
	}
	return new(big.Int).Binomial(int64(n), int64(k))
}

func pcFact(k int) *big.Int {
	if k < 0 {
		return new(big.Int)
	}
	return new(big.Int).MulRange(1, int64(max(k, 1)))
}

// pcRat is num/den rounded to a float64.
func pcRat(num, den *big.Rat) float64 {
	f, _ := new(big.Rat).Quo(num, den).Float64()
	return f
}

// pcBigLog is log x for a positive big integer, to float64 precision.
func pcBigLog(x *big.Int) float64 {
	mant := new(big.Float)
	exp := new(big.Float).SetInt(x).MantExp(mant)
	m, _ := mant.Float64()
	return math.Log(m) + float64(exp)*math.Ln2
}

// pcCheckCycleValidate runs the corrupted rows shared by both cycle spaces (n = 6).
func pcCheckCycleValidate(t *testing.T, s space.Space) {
	t.Helper()
	cases := []struct {
		y    []int64
		want string
	}{
		{[]int64{1, 2, 0}, "got 3 values"},
		{[]int64{6, -1, -1, -1, -1, -1}, "vertex 0's successor 6 is out of range"},
		{[]int64{1, 2, -3, -1, -1, -1}, "vertex 2's successor -3 is out of range"},
		{[]int64{1, 2, 0, 3, -1, -1}, "vertex 3 is its own successor"},
		{[]int64{1, 2, 3, -1, -1, -1}, "vertex 2's successor 3 is not on the cycle"},
		{[]int64{1, 2, 1, -1, -1, -1}, "vertex 1 is the successor of both 0 and 2"},
		{[]int64{1, 2, 0, 4, 5, 3}, "the row is two cycles, not one"},
		{[]int64{1, 0, 3, 4, 2, -1}, "the row is two cycles, not one"},
		{[]int64{1, 0, -1, -1, -1, -1}, "cycle of length 2"},
		{[]int64{-1, -1, -1, -1, -1, -1}, "no vertex is on the cycle"},
	}
	for _, c := range cases {
		err := s.Validate(c.y)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate(%v) = %v, want an error containing %q", s.Kind(), c.y, err, c.want)
		}
	}
	for _, y := range [][]int64{{1, 2, 0, -1, -1, -1}, {1, 2, 3, 4, 5, 0}, {-1, -1, 5, -1, 2, 4}} {
		if err := s.Validate(y); err != nil {
			t.Errorf("%s: Validate(%v) = %v, want nil", s.Kind(), y, err)
		}
	}
}

// pcCheckCycleMarginals samples m cycles from s (n vertices, far beyond enumeration) and checks,
// within 5 standard errors: the frequency of a few pairs on the cycle against the exact
// P(pair on cycle) (S's diagonal for dicycles, p for ucycles) and, for dicycles, the mean
// orientation 0; the mean and variance of a random linear statistic g = ⟨c, ψ⟩ against ⟨c, p⟩
// and cᵀSc, which ties the sampler's length law and the whole operator together.
func pcCheckCycleMarginals(t *testing.T, s space.Space, onCycle float64, m int, seed uint64) {
	t.Helper()
	n, d := s.Width(), s.Dim()
	r := rand.New(rand.NewPCG(seed, seed+1))
	c := make([]float64, d)
	for i := range c {
		c[i] = r.NormFloat64()
	}
	p := make([]float64, d)
	s.Mean(p)
	sc := make([]float64, d)
	s.Covariance().MulVec(sc, c)
	wantMean, wantVar := pcDot(c, p), pcDot(c, sc)

	pairs := [][2]int{{0, 1}, {0, n - 1}, {17, 250}, {n - 2, n - 1}}
	on := make([]float64, len(pairs))
	orient := make([]float64, len(pairs))
	gs := make([]float64, m)
	y := make([]int64, n)
	psi := make([]float64, d)
	for k := 0; k < m; k++ {
		s.Sample(r, y)
		if k < 50 {
			if err := s.Validate(y); err != nil {
				t.Fatalf("%s(%d): sample invalid: %v", s.Kind(), n, err)
			}
		}
		s.Embed(y, psi)
		var g float64
		for v, w := range y {
			if w < 0 {
				continue
			}
			a, b := min(v, int(w)), max(v, int(w))
			e := a*(2*n-a-1)/2 + b - a - 1
			if s.Kind() == "ucycles" {
				g += c[e] // each edge once: only the arc listed from v
			} else {
				g += c[e] * psi[e]
			}
		}
		gs[k] = g
		for j, pr := range pairs {
			if y[pr[0]] == int64(pr[1]) {
				on[j]++
				orient[j]++
			} else if y[pr[1]] == int64(pr[0]) {
				on[j]++
				orient[j]--
			}
		}
	}
	fm := float64(m)
	for j, pr := range pairs {
		freq := on[j] / fm
		se := math.Sqrt(onCycle * (1 - onCycle) / fm)
		if math.Abs(freq-onCycle) > 5*se {
			t.Errorf("%s(%d): pair %v on %.5f of the samples, exact %.5f (se %.5f)", s.Kind(), n, pr, freq, onCycle, se)
		}
		if s.Kind() == "dicycles" {
			if mo, se := orient[j]/fm, math.Sqrt(onCycle/fm); math.Abs(mo) > 5*se {
				t.Errorf("%s(%d): pair %v mean orientation %.5f, exact 0 (se %.5f)", s.Kind(), n, pr, mo, se)
			}
		}
	}
	var mean float64
	for _, g := range gs {
		mean += g / fm
	}
	var m2, m4 float64
	for _, g := range gs {
		dev := g - mean
		m2 += dev * dev / fm
		m4 += dev * dev * dev * dev / fm
	}
	if se := math.Sqrt(m2 / fm); math.Abs(mean-wantMean) > 5*se {
		t.Errorf("%s(%d): mean of ⟨c,ψ⟩ %.5f, exact ⟨c,p⟩ = %.5f (se %.5f)", s.Kind(), n, mean, wantMean, se)
	}
	if se := math.Sqrt((m4 - m2*m2) / fm); math.Abs(m2-wantVar) > 5*se {
		t.Errorf("%s(%d): variance of ⟨c,ψ⟩ %.5f, exact cᵀSc = %.5f (se %.5f)", s.Kind(), n, m2, wantVar, se)
	}
	t.Logf("%s(%d): var ⟨c,ψ⟩ over %d samples %.4f, cᵀSc = %.4f; mean %.4f, ⟨c,p⟩ = %.4f", s.Kind(), n, m, m2, wantVar, mean, wantMean)
}

// pcCheckCycleDecodeLarge decodes random scores beyond enumeration: rows must validate, the
// exact decoder (n ≤ 14) must not lose to the approximate one, and for dicycles the score must
// reach the sibling bound 0.
func pcCheckCycleDecodeLarge(t *testing.T, exact, approx space.Space, trials int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	d, n := exact.Dim(), exact.Width()
	u, psi := make([]float64, d), make([]float64, d)
	y, ya := make([]int64, n), make([]int64, n)
	for trial := 0; trial < trials; trial++ {
		for i := range u {
			u[i] = r.NormFloat64()
		}
		exact.Decode(u, y)
		approx.Decode(u, ya)
		for _, row := range [][]int64{y, ya} {
			if err := exact.Validate(row); err != nil {
				t.Fatalf("%s(%d): decoded %v invalid: %v", exact.Kind(), n, row, err)
			}
		}
		exact.Embed(y, psi)
		f := pcDot(u, psi)
		exact.Embed(ya, psi)
		fa := pcDot(u, psi)
		if exact.Guarantee() == 0 && fa > f+1e-9 {
			t.Errorf("%s(%d): approximate decoder %g beats the exact one %g", exact.Kind(), n, fa, f)
		}
		if exact.Kind() == "dicycles" && (f < 0 || fa < 0) {
			t.Errorf("%s(%d): decoded score %g (approx %g) below the sibling bound 0", exact.Kind(), n, f, fa)
		}
	}
}
