// Package spacetest checks an output space against brute-force enumeration of all its structures.
// Every space's tests call these checkers on sizes small enough to enumerate.
package spacetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Brute holds Y, ψ(Y) and the exact moments of ψ under the uniform distribution, by enumeration.
type Brute struct {
	Ys   [][]int64
	Psis [][]float64
	Mean []float64   // p
	Cov  [][]float64 // S = C/|Y| − ppᵀ
}

// CovEigen returns the eigenvalues (ascending) and eigenvectors (columns) of the enumerated S.
func (b *Brute) CovEigen(t testing.TB) ([]float64, *mat.Dense) {
	t.Helper()
	d := len(b.Mean)
	S := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			S.SetSym(i, j, b.Cov[i][j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(S, true) {
		t.Fatal("spacetest: eigendecomposition of the enumerated covariance failed")
	}
	vecs := new(mat.Dense)
	eig.VectorsTo(vecs)
	return eig.Values(nil), vecs
}

// Enumerate lists the space and computes p and S by summation over every structure.
func Enumerate(t testing.TB, s space.Space) *Brute {
	t.Helper()
	d := s.Dim()
	b := &Brute{Mean: make([]float64, d), Cov: make([][]float64, d)}
	for i := range b.Cov {
		b.Cov[i] = make([]float64, d)
	}
	err := s.Enumerate(func(y []int64) bool {
		yc := append([]int64(nil), y...)
		psi := make([]float64, d)
		s.Embed(yc, psi)
		b.Ys = append(b.Ys, yc)
		b.Psis = append(b.Psis, psi)
		return true
	})
	if err != nil {
		t.Fatalf("%s%v: Enumerate: %v", s.Kind(), s.Params(), err)
	}
	n := float64(len(b.Ys))
	for _, psi := range b.Psis {
		for i := 0; i < d; i++ {
			b.Mean[i] += psi[i] / n
			for j := 0; j < d; j++ {
				b.Cov[i][j] += psi[i] * psi[j] / n
			}
		}
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			b.Cov[i][j] -= b.Mean[i] * b.Mean[j]
		}
	}
	return b
}

func close(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// CheckCounts compares LogCount, Mean, Covariance (At and MulVec) with enumeration to tol, checks
// that every enumerated structure validates and that their embeddings are distinct.
func CheckCounts(t *testing.T, s space.Space, tol float64) *Brute {
	t.Helper()
	b := Enumerate(t, s)
	name := fmt.Sprintf("%s%v", s.Kind(), s.Params())
	if got, want := s.LogCount(), logmath.Log(float64(len(b.Ys))); !close(got, want, tol) {
		t.Errorf("%s: LogCount = %.15g, enumeration gives log %d = %.15g", name, got, len(b.Ys), want)
	}
	d := s.Dim()
	p := make([]float64, d)
	s.Mean(p)
	for i := range p {
		if !close(p[i], b.Mean[i], tol) {
			t.Errorf("%s: Mean[%d] = %.15g, enumeration %.15g", name, i, p[i], b.Mean[i])
		}
	}
	op := s.Covariance()
	if op.Dim() != d {
		t.Fatalf("%s: Covariance().Dim() = %d, want %d", name, op.Dim(), d)
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if got := op.At(i, j); !close(got, b.Cov[i][j], tol) {
				t.Errorf("%s: S[%d,%d] = %.15g, enumeration %.15g", name, i, j, got, b.Cov[i][j])
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	v, sv := make([]float64, d), make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	op.MulVec(sv, v)
	for i := 0; i < d; i++ {
		var want float64
		for j := 0; j < d; j++ {
			want += b.Cov[i][j] * v[j]
		}
		if !close(sv[i], want, tol*float64(d)) {
			t.Errorf("%s: (S·v)[%d] = %.15g, enumeration %.15g", name, i, sv[i], want)
		}
	}
	seen := map[string]int{}
	for k, y := range b.Ys {
		if err := s.Validate(y); err != nil {
			t.Errorf("%s: enumerated structure %v rejected: %v", name, y, err)
		}
		key := fmt.Sprint(b.Psis[k])
		if prev, dup := seen[key]; dup {
			t.Errorf("%s: structures %v and %v share ψ = %s", name, b.Ys[prev], y, key)
		}
		seen[key] = k
	}
	return b
}

// CheckSampler draws n samples and runs a chi-square test of uniformity over the enumerated
// structures; it fails when the p-value is below alpha (use a small alpha and a fixed seed).
func CheckSampler(t *testing.T, s space.Space, b *Brute, n int, seed uint64, alpha float64) {
	t.Helper()
	index := map[string]int{}
	for k, y := range b.Ys {
		index[fmt.Sprint(y)] = k
	}
	counts := make([]float64, len(b.Ys))
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	y := make([]int64, s.Width())
	for i := 0; i < n; i++ {
		s.Sample(r, y)
		if err := s.Validate(y); err != nil {
			t.Fatalf("%s%v: sample %v is invalid: %v", s.Kind(), s.Params(), y, err)
		}
		k, ok := index[fmt.Sprint(y)]
		if !ok {
			t.Fatalf("%s%v: sample %v is not among the enumerated structures", s.Kind(), s.Params(), y)
		}
		counts[k]++
	}
	expect := float64(n) / float64(len(b.Ys))
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - expect) * (c - expect) / expect
	}
	if len(b.Ys) < 2 {
		return
	}
	df := float64(len(b.Ys) - 1)
	pval := 1 - distuv.ChiSquared{K: df}.CDF(chi2)
	if pval < alpha {
		t.Errorf("%s%v: sampler fails chi-square uniformity: χ² = %.1f on %g df, p = %.3g", s.Kind(), s.Params(), chi2, df, pval)
	}
}

// CheckDecoder compares Decode on trials random score vectors with brute-force argmax. For exact
// spaces the decoded score must equal the maximum; otherwise the realised z-factor
// ν = (max − f(ŷ))/(max − min) must not exceed Guarantee(). It returns the mean realised ν.
func CheckDecoder(t *testing.T, s space.Space, b *Brute, trials int, seed uint64) float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	d := s.Dim()
	u := make([]float64, d)
	y := make([]int64, s.Width())
	psi := make([]float64, d)
	nu := s.Guarantee()
	var sumNu float64
	for trial := 0; trial < trials; trial++ {
		for i := range u {
			u[i] = r.NormFloat64()
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range b.Psis {
			f := dot(u, p)
			lo, hi = math.Min(lo, f), math.Max(hi, f)
		}
		s.Decode(u, y)
		if err := s.Validate(y); err != nil {
			t.Fatalf("%s%v: decoded %v is invalid: %v", s.Kind(), s.Params(), y, err)
		}
		s.Embed(y, psi)
		f := dot(u, psi)
		realised := 0.0
		if hi > lo {
			realised = (hi - f) / (hi - lo)
		}
		sumNu += realised
		if realised > nu+1e-9 {
			t.Fatalf("%s%v: decoded score %.12g, max %.12g, min %.12g: realised ν = %.3g > guarantee %.3g",
				s.Kind(), s.Params(), f, hi, lo, realised, nu)
		}
	}
	return sumNu / float64(trials)
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// CheckPartition compares the exact inference of s (space.Partition) with sums over every
// structure: log Z(u) and E[ψ] under p(y) ∝ exp⟨u, ψ(y)⟩ for random scores u with entries of
// scale 0.1 to 300 (near-uniform to deterministic distributions), to a relative tolerance tol.
func CheckPartition(t *testing.T, s space.Space, b *Brute, trials int, seed uint64, tol float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	u := make([]float64, s.Dim())
	for trial := 0; trial < trials; trial++ {
		scale := []float64{0.1, 1, 3, 30, 300}[trial%5]
		for i := range u {
			u[i] = scale * r.NormFloat64()
		}
		CheckPartitionAt(t, s, b, u, tol, fmt.Sprintf("scale %g", scale))
	}
}

// CheckPartitionAt is CheckPartition at the scores u, named what in its messages.
func CheckPartitionAt(t *testing.T, s space.Space, b *Brute, u []float64, tol float64, what string) {
	t.Helper()
	part, ok := space.PartitionOf(s)
	if !ok {
		t.Fatalf("%s%v: no exact inference", s.Kind(), s.Params())
	}
	d := s.Dim()
	mean := make([]float64, d)
	want := make([]float64, d)
	pi := make([]float64, len(b.Psis))
	wantLogZ := b.distribution(u, pi)
	for k, p := range b.Psis {
		for i := range want {
			want[i] += pi[k] * p[i]
		}
	}
	if got := part.LogPartition(u, nil); !close(got, wantLogZ, tol) {
		t.Fatalf("%s%v, %s: log Z = %.15g without marginals, enumeration %.15g", s.Kind(), s.Params(), what, got, wantLogZ)
	}
	got := part.LogPartition(u, mean)
	if !close(got, wantLogZ, tol) {
		t.Fatalf("%s%v, %s: log Z = %.15g, enumeration %.15g", s.Kind(), s.Params(), what, got, wantLogZ)
	}
	for i := range want {
		if !(math.Abs(mean[i]-want[i]) <= tol) {
			t.Fatalf("%s%v, %s: E[ψ_%d] = %.15g, enumeration %.15g", s.Kind(), s.Params(), what, i, mean[i], want[i])
		}
	}
}

// CheckScoreSampler draws n samples from the exact sampler of s (space.ScoreSampling) for random
// scores of scale 0.3, 2 and 20 (near-uniform to peaked) and compares the counts with
// p(y) ∝ exp⟨u, ψ(y)⟩ over the enumerated structures by a chi-square test (ChiSquare); it fails
// when a p-value is below alpha (use a small alpha and a fixed seed), or when a sample is invalid.
// At scale 20 the cells pool into few, so the test also checks that nothing is drawn whose
// probability is below 1e-12.
func CheckScoreSampler(t *testing.T, s space.Space, b *Brute, n int, seed uint64, alpha float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 13))
	u := make([]float64, s.Dim())
	for _, scale := range []float64{0.3, 2, 20} {
		for i := range u {
			u[i] = scale * r.NormFloat64()
		}
		CheckScoreSamplerAt(t, s, b, u, n, r, alpha, fmt.Sprintf("scale %g", scale))
	}
}

// CheckScoreSamplerAt is CheckScoreSampler at the scores u, named what in its messages.
func CheckScoreSamplerAt(t *testing.T, s space.Space, b *Brute, u []float64, n int, r *rand.Rand, alpha float64, what string) {
	t.Helper()
	ss, ok := space.ScoreSamplingOf(s)
	if !ok {
		t.Fatalf("%s%v: no exact sampler of scores", s.Kind(), s.Params())
	}
	index := map[string]int{}
	for k, y := range b.Ys {
		index[fmt.Sprint(y)] = k
	}
	pi := make([]float64, len(b.Ys))
	y := make([]int64, s.Width())
	b.distribution(u, pi)
	sm := ss.ScoreSampler(u)
	counts := make([]int, len(b.Ys))
	for i := 0; i < n; i++ {
		sm.Draw(r, y)
		if err := s.Validate(y); err != nil {
			t.Fatalf("%s%v, %s: sample %v is invalid: %v", s.Kind(), s.Params(), what, y, err)
		}
		k, ok := index[fmt.Sprint(y)]
		if !ok {
			t.Fatalf("%s%v, %s: sample %v is not among the enumerated structures", s.Kind(), s.Params(), what, y)
		}
		if pi[k] < 1e-12 {
			t.Fatalf("%s%v, %s: drew %v, of probability %.3g", s.Kind(), s.Params(), what, y, pi[k])
		}
		counts[k]++
	}
	if stat, df, p := ChiSquare(counts, pi); p < alpha {
		t.Errorf("%s%v, %s: samples do not follow p ∝ exp⟨u, ψ⟩: χ² = %.1f on %d df, p = %.3g",
			s.Kind(), s.Params(), what, stat, df, p)
	}
}

// distribution writes p(y) ∝ exp⟨u, ψ(y)⟩ over the enumerated structures into pi and returns
// log Z(u), with a running maximum so that nothing overflows.
func (b *Brute) distribution(u, pi []float64) float64 {
	top := math.Inf(-1)
	for k, psi := range b.Psis {
		pi[k] = dot(u, psi)
		top = math.Max(top, pi[k])
	}
	var z float64
	for k := range pi {
		pi[k] = math.Exp(pi[k] - top)
		z += pi[k]
	}
	for k := range pi {
		pi[k] /= z
	}
	return top + logmath.Log(z)
}

// ChiSquare compares counts of n draws with the probabilities pi and returns the statistic, the
// degrees of freedom and the p-value. Cells are taken by increasing expected count and pooled
// until each pool expects at least 5 draws (a last short pool joins the previous one).
func ChiSquare(counts []int, pi []float64) (stat float64, df int, p float64) {
	var n int
	for _, c := range counts {
		n += c
	}
	idx := make([]int, len(pi))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return pi[idx[a]] < pi[idx[b]] })
	var pe, po []float64
	var e, o float64
	for _, i := range idx {
		e += pi[i] * float64(n)
		o += float64(counts[i])
		if e >= 5 {
			pe, po = append(pe, e), append(po, o)
			e, o = 0, 0
		}
	}
	if e > 0 || o > 0 {
		if len(pe) == 0 {
			pe, po = append(pe, e), append(po, o)
		} else {
			pe[len(pe)-1] += e
			po[len(po)-1] += o
		}
	}
	for k := range pe {
		stat += (po[k] - pe[k]) * (po[k] - pe[k]) / pe[k]
	}
	df = len(pe) - 1
	if df < 1 {
		return stat, df, 1
	}
	return stat, df, distuv.ChiSquared{K: float64(df)}.Survival(stat)
}
