package space_test

// Shared helpers of the tests of ksubsets, ordinal, hierarchy_paths, subtrees, tournaments and
// cliques, and the parent-array validation both tree spaces rely on.

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// treePath is the path 0 ← 1 ← … ← n−1 rooted at 0.
func treePath(n int) []int {
	p := make([]int, n)
	for v := range p {
		p[v] = v - 1
	}
	return p
}

// treeStar is node 0 with n−1 leaf children.
func treeStar(n int) []int {
	p := make([]int, n)
	p[0] = -1
	return p
}

// treeBinary is the complete binary tree on n nodes in heap order.
func treeBinary(n int) []int {
	p := make([]int, n)
	for v := range p {
		p[v] = (v+1)/2 - 1
	}
	return p
}

// treeRandom is a random recursive tree on n nodes (each node hangs below a uniformly chosen
// earlier one) with its labels shuffled, so that the root and the parents sit anywhere.
func treeRandom(r *rand.Rand, n int) []int {
	label := r.Perm(n)
	p := make([]int, n)
	p[label[0]] = -1
	for v := 1; v < n; v++ {
		p[label[v]] = label[r.IntN(v)]
	}
	return p
}

// treeShapes lists the named small trees the tree spaces are checked on.
func treeShapes() []struct {
	name   string
	parent []int
} {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := []struct {
		name   string
		parent []int
	}{
		{"single node", []int{-1}},
		{"path 2", treePath(2)},
		{"path 6", treePath(6)},
		{"star 5", treeStar(5)},
		{"star 8", treeStar(8)},
		{"binary 7", treeBinary(7)},
		{"binary 10", treeBinary(10)},
		{"caterpillar", []int{-1, 0, 1, 2, 0, 1, 2, 3}},
		{"root not first", []int{2, 2, -1, 1, 1, 0}},
	}
	for i := 0; i < 6; i++ {
		shapes = append(shapes, struct {
			name   string
			parent []int
		}{"random 8", treeRandom(r, 8)})
	}
	return shapes
}

// checkRoundTrip rebuilds s through space.New(Kind(), Params()) and compares the result.
func checkRoundTrip(t *testing.T, s space.Space) {
	t.Helper()
	s2, err := space.New(s.Kind(), s.Params())
	if err != nil {
		t.Fatalf("%s%v: New from Params: %v", s.Kind(), s.Params(), err)
	}
	if s2.Dim() != s.Dim() || s2.Width() != s.Width() || s2.LogCount() != s.LogCount() || s2.Guarantee() != s.Guarantee() {
		t.Errorf("%s%v: rebuilt space differs", s.Kind(), s.Params())
	}
	p1, p2 := s.Params(), s2.Params()
	if len(p1) != len(p2) {
		t.Fatalf("%s: Params %v rebuilt as %v", s.Kind(), p1, p2)
	}
	for i := range p1 {
		if p1[i] != p2[i] {
			t.Fatalf("%s: Params %v rebuilt as %v", s.Kind(), p1, p2)
		}
	}
}

// checkLinearMoments draws m samples from a space too large to enumerate and checks, for each
// test direction a, that the sample mean and variance of ⟨a, ψ(y)⟩ agree with ⟨a, p⟩ and aᵀSa
// (from Mean and Covariance().MulVec) within 5 standard errors. Standard errors come from the
// sample itself (the variance of a sample variance needs the fourth central moment); a tolerance of
// 1e-9 relative absorbs the degenerate case of a zero standard error. Directions whose statistic
// is a rare event (a coordinate with p near 0 or 1) cannot be checked this way at moderate m.
func checkLinearMoments(t *testing.T, s space.Space, m int, seed uint64, dirs [][]float64) {
	t.Helper()
	d := s.Dim()
	p := make([]float64, d)
	s.Mean(p)
	op := s.Covariance()
	r := rand.New(rand.NewPCG(seed, seed+1))
	y := make([]int64, s.Width())
	psi := make([]float64, d)
	vals := make([][]float64, len(dirs))
	for i := 0; i < m; i++ {
		s.Sample(r, y)
		if i < 20 {
			if err := s.Validate(y); err != nil {
				t.Fatalf("%s: sample invalid: %v", s.Kind(), err)
			}
		}
		s.Embed(y, psi)
		for k, a := range dirs {
			vals[k] = append(vals[k], vecDot(a, psi))
		}
	}
	sa := make([]float64, d)
	for k, a := range dirs {
		mean, variance := vecDot(a, p), 0.0
		op.MulVec(sa, a)
		variance = vecDot(a, sa)
		var sm float64
		for _, x := range vals[k] {
			sm += x
		}
		sm /= float64(m)
		// Central moments about the exact mean: then m2 is unbiased for aᵀSa with variance
		// (μ₄ − σ⁴)/m exactly, estimated by (m4 − m2²)/m.
		var m2, m4 float64
		for _, x := range vals[k] {
			c := x - mean
			m2 += c * c
			m4 += c * c * c * c
		}
		m2 /= float64(m)
		m4 /= float64(m)
		if variance < 0 || math.IsNaN(variance) {
			t.Fatalf("%s: direction %d: aᵀSa = %g", s.Kind(), k, variance)
		}
		if se := math.Sqrt(variance / float64(m)); math.Abs(sm-mean) > 5*se+1e-9*(1+math.Abs(mean)) {
			t.Errorf("%s: direction %d: sample mean %.6g, exact %.6g (5 se = %.3g)", s.Kind(), k, sm, mean, 5*se)
		}
		if se := math.Sqrt(math.Max(m4-m2*m2, 0) / float64(m)); math.Abs(m2-variance) > 5*se+1e-9*(1+variance) {
			t.Errorf("%s: direction %d: sample variance %.6g, exact %.6g (5 se = %.3g)", s.Kind(), k, m2, variance, 5*se)
		}
	}
}

// testDirections returns the all-ones vector, a few coordinate vectors and Gaussian vectors.
func testDirections(d int, coords []int, gaussians int, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	var dirs [][]float64
	ones := make([]float64, d)
	for i := range ones {
		ones[i] = 1
	}
	dirs = append(dirs, ones)
	for _, c := range coords {
		e := make([]float64, d)
		e[c] = 1
		dirs = append(dirs, e)
	}
	for g := 0; g < gaussians; g++ {
		a := make([]float64, d)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		dirs = append(dirs, a)
	}
	return dirs
}

// checkLargeFinite checks that counts, moments and one covariance product of a large space are
// finite, and that a sample and a decoded structure validate.
func checkLargeFinite(t *testing.T, s space.Space) {
	t.Helper()
	name := s.Kind()
	if lc := s.LogCount(); math.IsNaN(lc) || math.IsInf(lc, 0) || lc < 0 {
		t.Errorf("%s: LogCount = %v", name, lc)
	}
	d := s.Dim()
	p := make([]float64, d)
	s.Mean(p)
	v, sv := make([]float64, d), make([]float64, d)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range v {
		v[i] = r.NormFloat64()
	}
	s.Covariance().MulVec(sv, v)
	for i := range p {
		if math.IsNaN(p[i]) || math.IsInf(p[i], 0) || math.IsNaN(sv[i]) || math.IsInf(sv[i], 0) {
			t.Fatalf("%s: p[%d] = %v, (S v)[%d] = %v", name, i, p[i], i, sv[i])
		}
	}
	if q := vecDot(v, sv); q < -1e-9*vecDot(v, v) {
		t.Errorf("%s: vᵀSv = %v < 0: S is not positive semidefinite", name, q)
	}
	y := make([]int64, s.Width())
	s.Sample(r, y)
	if err := s.Validate(y); err != nil {
		t.Errorf("%s: sample invalid: %v", name, err)
	}
	s.Decode(v, y)
	if err := s.Validate(y); err != nil {
		t.Errorf("%s: decoded structure invalid: %v", name, err)
	}
}

func vecDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestTreeSpacesRejectBadParentArrays(t *testing.T) {
	cases := []struct {
		parent []int64
		want   string
	}{
		{[]int64{-1, 0, 0, -1}, "two roots: 0 and 3"},
		{[]int64{0, -1, 1, 2, 9}, "cycle through node 0"}, // its own parent
		{[]int64{-1, 0, 1, 2, 9}, "node 4's parent 9 is out of range"},
		{[]int64{-1, 0, -5}, "node 2's parent -5 is out of range"},
		{[]int64{-1, 0, 3, 4, 2}, "parent array has a cycle through node 2"},
		{[]int64{1, 2, 0}, "no root"},
		{[]int64{-1, 0, 2}, "cycle through node 2"},
		{[]int64{}, "at least one node"},
		// 1-based arrays were reported as cycles alone (probe FJ)
		{[]int64{0, 1, 1, 2}, "cycle through node 0 (it is its own parent); node ids are 0-based"},
		{[]int64{-1, 1, 1, 2}, "cycle through node 1 (it is its own parent); node ids are 0-based"},
		{[]int64{1, 2, 0}, "no root: no node has parent −1, so the parent array has a cycle through node 0; node ids are 0-based"},
	}
	for _, c := range cases {
		for _, kind := range []string{"subtrees", "hierarchy_paths"} {
			params := c.parent
			if kind == "hierarchy_paths" {
				params = append([]int64{0}, c.parent...)
			}
			_, err := space.New(kind, params)
			want := c.want
			if kind == "hierarchy_paths" && len(c.parent) == 0 {
				want = "parameter"
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("New(%q, %v) error = %v, want it to mention %q", kind, params, err, want)
			}
		}
	}
}

// Decode of every space here must be safe for concurrent use (pooled scratch buffers, no shared
// mutable state): decode the same score rows from several goroutines and compare with a serial
// pass. Run with -race to check for data races as well.
func TestSixSpacesDecodeConcurrently(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	var spaces []space.Space
	add := func(s space.Space, err error) {
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, s)
	}
	add(space.NewKSubsets(50, 7))
	add(space.NewOrdinal(30))
	add(space.NewHierarchyPaths(treeRandom(r, 200), true))
	add(space.NewSubtrees(treeRandom(r, 200)))
	add(space.NewTournaments(20))
	add(space.NewCliques(12))
	add(space.NewCliques(40))
	for _, s := range spaces {
		const rows = 64
		d, w := s.Dim(), s.Width()
		us := make([]float64, rows*d)
		for i := range us {
			us[i] = r.NormFloat64()
		}
		want := make([]int64, rows*w)
		for i := 0; i < rows; i++ {
			s.Decode(us[i*d:(i+1)*d], want[i*w:(i+1)*w])
		}
		got := make([]int64, rows*w)
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < rows; i += 8 {
					s.Decode(us[i*d:(i+1)*d], got[i*w:(i+1)*w])
				}
			}(g)
		}
		wg.Wait()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s%v: concurrent Decode differs from serial at row %d", s.Kind(), s.Params()[:1], i/w)
			}
		}
	}
}
