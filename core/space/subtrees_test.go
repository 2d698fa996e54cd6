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

func TestSubtreesByEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	shapes := treeShapes()
	for i := 0; i < 3; i++ {
		shapes = append(shapes, struct {
			name   string
			parent []int
		}{"random 14", treeRandom(r, 14)})
	}
	for i, sh := range shapes {
		s, err := space.NewSubtrees(sh.parent)
		if err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		checkRoundTrip(t, s)
		b := spacetest.CheckCounts(t, s, 1e-12)
		spacetest.CheckDecoder(t, s, b, 1000, uint64(i))
		if len(b.Ys) <= 400 {
			spacetest.CheckSampler(t, s, b, 50*len(b.Ys), uint64(500+i), 1e-4)
		}
	}
}

func TestSubtreesValidate(t *testing.T) {
	s, err := space.NewSubtrees([]int{-1, 0, 0, 1, 1, 2}) // 5's parent is 2
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		y    []int64
		want string
	}{
		{[]int64{1, 1, 0, 0, 0, 1}, "node 5 is in the subtree but its parent 2 is not"},
		{[]int64{0, 0, 0, 0, 0, 0}, "the root 0 is not in the subtree"},
		{[]int64{0, 1, 0, 0, 0, 0}, "the root 0 is not in the subtree"},
		{[]int64{1, 3, 0, 0, 0, 0}, "node 1 has value 3"},
		{[]int64{1, 1}, "has 6 entries"},
	}
	for _, c := range cases {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
	if err := s.Validate([]int64{1, 1, 1, 0, 1, 1}); err != nil {
		t.Errorf("valid subtree rejected: %v", err)
	}
}

// Sizes beyond enumeration, with closed forms: a path of N nodes has N rooted subtrees (its
// prefixes) and p_v = (N − depth(v))/N; a star with N−1 leaves has 2^{N−1} (a float64 overflows
// for N > 1024), p = ½ on the leaves, independent leaves.
func TestSubtreesLarge(t *testing.T) {
	const n = 2000
	path, _ := space.NewSubtrees(treePath(n))
	if got, want := path.LogCount(), math.Log(n); math.Abs(got-want) > 1e-12 {
		t.Errorf("path(%d).LogCount() = %v, want %v", n, got, want)
	}
	p := make([]float64, n)
	path.Mean(p)
	for v := range p {
		if want := float64(n-v) / n; math.Abs(p[v]-want) > 1e-12 {
			t.Fatalf("path: p[%d] = %v, want %v", v, p[v], want)
		}
	}
	star, _ := space.NewSubtrees(treeStar(n))
	if got, want := star.LogCount(), (n-1)*math.Ln2; math.Abs(got-want) > 1e-9 {
		t.Errorf("star(%d).LogCount() = %v, want %v", n, got, want)
	}
	cov := star.Covariance()
	if a, b := cov.At(3, 3), cov.At(3, 4); math.Abs(a-0.25) > 1e-15 || math.Abs(b) > 1e-15 {
		t.Errorf("star: S[3,3] = %v, S[3,4] = %v, want 0.25 and 0", a, b)
	}

	r := rand.New(rand.NewPCG(53, 54))
	big, err := space.NewSubtrees(treeRandom(r, n))
	if err != nil {
		t.Fatal(err)
	}
	checkLargeFinite(t, big)
	for _, s := range []space.Space{path, star, big} {
		checkLargeFinite(t, s)
		if err := s.Enumerate(func([]int64) bool { return true }); s != path && err != space.ErrTooLarge {
			t.Errorf("Enumerate on a large space: %v, want ErrTooLarge", err)
		}
	}
	// The O(N) covariance product against the O(N²) definition through At, on a few rows.
	checkRowsAgainstAt(t, big.Covariance(), []int{0, 1, 17, 1999}, 1e-12)
}

// checkRowsAgainstAt compares rows of op.MulVec with sums of op.At on a Gaussian vector.
func checkRowsAgainstAt(t *testing.T, op space.Operator, rows []int, tol float64) {
	t.Helper()
	d := op.Dim()
	r := rand.New(rand.NewPCG(55, 56))
	v, sv := make([]float64, d), make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	op.MulVec(sv, v)
	for _, i := range rows {
		var want, scale float64
		for j := 0; j < d; j++ {
			want += op.At(i, j) * v[j]
			scale += math.Abs(op.At(i, j) * v[j])
		}
		if math.Abs(sv[i]-want) > tol*(1+scale) {
			t.Errorf("row %d: MulVec %.15g, Σ_j At·v %.15g", i, sv[i], want)
		}
	}
}

// Marginals of the sampler on a 500-node random tree, where |Y| is astronomically large.
func TestSubtreesSamplerMarginalsLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	s, err := space.NewSubtrees(treeRandom(r, 500))
	if err != nil {
		t.Fatal(err)
	}
	// Coordinates whose p is not close to 0 or 1.
	p := make([]float64, 500)
	s.Mean(p)
	var coords []int
	for v := 0; v < 500 && len(coords) < 4; v++ {
		if p[v] > 0.2 && p[v] < 0.8 {
			coords = append(coords, v)
		}
	}
	checkLinearMoments(t, s, 20000, 59, testDirections(500, coords, 3, 60))
}

// The thesis (chapter "Complexity of Learning", subsection "Subtrees of a tree", eq. tree_count)
// counts "the number of subtrees rooted at v" by f(v) = 1 + Π_{c ∈ δ⁺(v)} f(c). A leaf gets
// f = 2, so f counts the empty subtree too: the number of non-empty rooted subtrees is f(r) − 1.
func TestThesisSubtreeCountIncludesEmpty(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, parent := range [][]int{treePath(5), treeStar(6), treeBinary(7), treeRandom(r, 9)} {
		s, _ := space.NewSubtrees(parent)
		b := spacetest.Enumerate(t, s)
		f := thesisF(parent)
		if count := float64(len(b.Ys)); f == count || f-1 != count {
			t.Errorf("tree %v: %d subtrees by enumeration, thesis f(r) = %v (want f(r) − 1)", parent, len(b.Ys), f)
		}
	}
}

// The thesis (same subsection) says that the number of subtrees with T' as a prefix is
// f(T') = (Π_{v ∈ L(T')} f(v)) − |L(T')|, L(T') the leaves of T', and samples with coins
// f(u)/f(v). Enumeration disagrees: extensions may grow below any node of T', not only below
// its leaves, and the count is Π_{c ∉ T', parent(c) ∈ T'} f(c) (each child hanging off T' is left
// out or grown into one of its g(c) = f(c) − 1 subtrees). The sampler therefore uses the
// conditional probabilities q(c) = g(c)/(1 + g(c)) instead, and its uniformity is tested by
// chi-square in TestSubtreesByEnumeration.
func TestThesisSubtreePrefixCount(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, parent := range [][]int{treeBinary(7), treeRandom(r, 8), {-1, 0, 1, 0}} {
		s, _ := space.NewSubtrees(parent)
		b := spacetest.Enumerate(t, s)
		f := thesisFAll(parent)
		disagree := 0
		for _, prefix := range b.Ys {
			var supersets float64
			for _, y := range b.Ys {
				if containsSet(y, prefix) {
					supersets++
				}
			}
			correct, printed := 1.0, 1.0
			leaves := 0
			for c, pc := range parent {
				if pc >= 0 && prefix[c] == 0 && prefix[pc] == 1 {
					correct *= f[c]
				}
			}
			for v := range parent {
				if prefix[v] == 1 && !hasChildIn(parent, prefix, v) {
					printed *= f[v]
					leaves++
				}
			}
			printed -= float64(leaves)
			if correct != supersets {
				t.Errorf("tree %v, prefix %v: %v supersets, Π f(c) over hanging children = %v", parent, prefix, supersets, correct)
			}
			if printed != supersets {
				disagree++
			}
		}
		if disagree == 0 {
			t.Errorf("tree %v: the printed prefix formula agrees with enumeration everywhere", parent)
		}
		t.Logf("tree %v: printed prefix count wrong for %d of %d prefixes", parent, disagree, len(b.Ys))
	}
}

// thesisFAll returns the thesis' f(v) = 1 + Π_c f(c) for every node.
func thesisFAll(parent []int) []float64 {
	n := len(parent)
	f := make([]float64, n)
	var rec func(v int) float64
	rec = func(v int) float64 {
		prod := 1.0
		for c, pc := range parent {
			if pc == v {
				prod *= rec(c)
			}
		}
		f[v] = 1 + prod
		return f[v]
	}
	for v, pv := range parent {
		if pv < 0 {
			rec(v)
		}
	}
	return f
}

// thesisF returns f(root).
func thesisF(parent []int) float64 {
	f := thesisFAll(parent)
	for v, pv := range parent {
		if pv < 0 {
			return f[v]
		}
	}
	panic("no root")
}

func containsSet(y, sub []int64) bool {
	for i := range y {
		if sub[i] == 1 && y[i] == 0 {
			return false
		}
	}
	return true
}

func hasChildIn(parent []int, set []int64, v int) bool {
	for c, pc := range parent {
		if pc == v && set[c] == 1 {
			return true
		}
	}
	return false
}

func BenchmarkSubtreesDecode(b *testing.B) {
	for _, n := range []int{500, 5000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(65, 66))
			s, err := space.NewSubtrees(treeRandom(r, n))
			if err != nil {
				b.Fatal(err)
			}
			u := make([]float64, n)
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
