package ridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/binfmt"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// mergeSpaces are the families the distributed fit is checked on: every family of the core
// (one-hot, sparse 0/1, k-subsets, ordinal, dense ±1 rankings and tournaments, paths and subtrees
// of a hierarchy, single paths of a DAG, directed and undirected cycles, cliques).
func mergeSpaces(t testing.TB) []space.Space {
	t.Helper()
	tree := []int{-1, 0, 0, 1, 1, 2, 5}
	var out []space.Space
	add := func(sp space.Space, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	add(space.NewMulticlass(4))
	add(space.NewMultilabel(5))
	add(space.NewPermutations(4))
	add(space.NewHierarchyPaths(tree, false))
	add(space.NewSubtrees(tree))
	add(space.NewDirectedCycles(5))
	add(space.NewKSubsets(5, 2))
	add(space.NewOrdinal(5))
	add(space.NewDAGPaths([][]int{nil, {0}, {0}, {1, 2}, {2}}, false))
	add(space.NewTournaments(4))
	add(space.NewUndirectedCycles(5))
	add(space.NewCliques(4))
	return out
}

// chunkStats returns the statistics of each row range of (X, ys, w), each computed from empty.
func chunkStats(t testing.TB, empty *Stats, X []float64, n int, ys []int64, w []float64, parts [][2]int) []*Stats {
	t.Helper()
	width := empty.Space.Width()
	var out []*Stats
	for _, c := range parts {
		var wc []float64
		if w != nil {
			wc = w[c[0]:c[1]]
		}
		s, err := empty.Add(X[c[0]*n:c[1]*n], c[1]-c[0], n, ys[c[0]*width:c[1]*width], wc, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// statsThroughBytes is s written and read back, which must write the same bytes again.
func statsThroughBytes(t testing.TB, s *Stats) *Stats {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalStats(b)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, b) {
		t.Error("statistics read and written again differ")
	}
	return back
}

func mustMerge(t testing.TB, a, b *Stats) *Stats {
	t.Helper()
	s, err := MergeStats(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reductions merges the chunk statistics in three tree orders: left fold, right fold and the
// balanced pairwise tree a distributed reduction uses.
func reductions(t testing.TB, parts []*Stats) map[string]*Stats {
	t.Helper()
	left := parts[0]
	for _, s := range parts[1:] {
		left = mustMerge(t, left, s)
	}
	right := parts[len(parts)-1]
	for i := len(parts) - 2; i >= 0; i-- {
		right = mustMerge(t, parts[i], right)
	}
	level := parts
	for len(level) > 1 {
		var next []*Stats
		for i := 0; i+1 < len(level); i += 2 {
			next = append(next, mustMerge(t, level[i], level[i+1]))
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return map[string]*Stats{"left": left, "right": right, "tree": level[0]}
}

// Statistics of uneven chunks merged in any tree order equal those of the concatenation (1e-12),
// and their solve equals Fit with the exact solver on all the data (1e-10 relative), on every
// space family, with and without intercept, sample weights (some zero, one chunk all zero) and an
// empirical reference measure.
func TestMergedStatsSolveEqualsExactFit(t *testing.T) {
	for _, sp := range mergeSpaces(t) {
		const m, n = 230, 4
		X, ys := synthetic(t, sp, m, n, 23)
		w := weights(rand.New(rand.NewPCG(3, 4)), m)
		for i := 0; i < m; i += 7 {
			w[i] = 0
		}
		parts := chunks(m, 6)
		wz := append([]float64(nil), w...)
		for i := parts[2][0]; i < parts[2][1]; i++ {
			wz[i] = 0 // a chunk of zero weights only
		}
		for _, intercept := range []bool{true, false} {
			for _, sw := range [][]float64{nil, w, wz} {
				for _, rm := range []struct {
					w    float64
					kind Reference
				}{{0, Empirical}, {0.5, Empirical}, {0.5, Product}, {1, Product}} {
					ew := rm.w
					name := fmt.Sprintf("%s intercept=%v weights=%v empirical_weight=%v reference=%v", sp.Kind(), intercept, sw != nil, ew, rm.kind)
					opt := baseOptions()
					opt.Intercept, opt.Solver, opt.EmpiricalWeight, opt.Reference = intercept, Exact, ew, rm.kind
					empty, err := NewStats(sp, n, nil, 0, opt)
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := sp.(space.MarginalMeasure); rm.kind == Product && !ok {
						// Fit refuses the product reference on this space; the merged solve
						// refuses it with the same message.
						_, ferr := Fit(sp, X, m, n, ys, sw, opt)
						s := reductions(t, chunkStats(t, empty, X, n, ys, sw, parts))["tree"]
						_, serr := s.Solve(opt)
						if ferr == nil || serr == nil || ferr.Error() != serr.Error() || !strings.Contains(serr.Error(), "product") {
							t.Errorf("%s: Fit error %v, merged solve error %v", name, ferr, serr)
						}
						continue
					}
					ref := mustFit(t, sp, X, m, n, ys, sw, opt)
					whole := chunkStats(t, empty, X, n, ys, sw, [][2]int{{0, m}})[0]
					for order, s := range reductions(t, chunkStats(t, empty, X, n, ys, sw, parts)) {
						if !s.Equal(whole, 1e-12) {
							t.Errorf("%s: %s merge differs from the statistics of the concatenation", name, order)
						}
						md, err := s.Solve(opt)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if diff := relDiff(md.Coef, ref.Coef); diff > 1e-10 {
							t.Errorf("%s: %s merge solves to coefficients %.3g (relative) from Fit's", name, order, diff)
						}
						if md.Seen != m || !md.Streaming() || (ew > 0) != (md.ref != nil) {
							t.Errorf("%s: Seen %d, streaming %v, reference %v", name, md.Seen, md.Streaming(), md.ref != nil)
						}
					}
				}
			}
		}
	}
}

// With a Nyström map built from the whole data (the rows Fit draws its landmarks from), merged
// chunk statistics solve to Fit's model; the map is fixed once, and the model is linear on it.
func TestMergedStatsNystrom(t *testing.T) {
	for _, intercept := range []bool{true, false} {
		sp, _ := space.NewMultilabel(3)
		const m, n = 150, 3
		X, ys := synthetic(t, sp, m, n, 9)
		opt := baseOptions()
		opt.Intercept = intercept
		opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
		opt.NComponents, opt.Seed, opt.Solver = 25, 7, Exact
		ref := mustFit(t, sp, X, m, n, ys, nil, opt)
		empty, err := NewStats(sp, n, X, m, opt)
		if err != nil {
			t.Fatal(err)
		}
		s := reductions(t, chunkStats(t, empty, X, n, ys, nil, chunks(m, 5)))["tree"]
		md, err := s.Solve(opt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := relDiff(md.Coef, ref.Coef); diff > 1e-10 || md.Components() != ref.Components() {
			t.Errorf("intercept=%v: coefficients differ by %.3g, components %d and %d", intercept, diff, md.Components(), ref.Components())
		}
		U, V := make([]float64, m*3), make([]float64, m*3)
		if err := md.Decision(X, m, n, U); err != nil {
			t.Fatal(err)
		}
		if err := ref.Decision(X, m, n, V); err != nil {
			t.Fatal(err)
		}
		for i := range U {
			if d := U[i] - V[i]; d > 1e-9 || d < -1e-9 {
				t.Fatalf("intercept=%v: scores differ at %d: %v and %v", intercept, i, U[i], V[i])
			}
		}
	}
}

// Statistics round-trip through bytes exactly, and the model solved from them continues with
// PartialFit as the stream of the same chunks does.
func TestStatsBytesAndContinuation(t *testing.T) {
	sp, _ := space.NewPermutations(4)
	const m, n = 120, 3
	X, ys := synthetic(t, sp, m, n, 4)
	opt := baseOptions()
	empty, _ := NewStats(sp, n, nil, 0, opt)
	parts := chunks(m, 3)
	s := reductions(t, chunkStats(t, empty, X, n, ys, nil, parts[:2]))["left"]
	back := statsThroughBytes(t, s)
	if !back.Equal(s, 0) {
		t.Fatal("statistics do not round-trip through bytes")
	}
	md, err := back.Solve(opt)
	if err != nil {
		t.Fatal(err)
	}
	cont := streamFit(t, md, sp, X, n, ys, nil, parts[2:], opt)
	whole := streamFit(t, nil, sp, X, n, ys, nil, parts, opt)
	if diff := relDiff(cont.Coef, whole.Coef); diff > 1e-10 {
		t.Errorf("partial_fit after a solve from statistics differs from the stream by %.3g", diff)
	}
}

// Incompatible statistics are not merged, a solve with other model settings or no examples is
// refused, and kernels without a linear form have no statistics.
func TestStatsRejects(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	sp4, _ := space.NewMultilabel(4)
	X, ys := synthetic(t, sp, 20, 3, 1)
	opt := baseOptions()
	a, _ := NewStats(sp, 3, nil, 0, opt)
	noInt := opt
	noInt.Intercept = false
	cases := map[string]func() error{
		"different space": func() error {
			b, _ := NewStats(sp4, 3, nil, 0, opt)
			_, err := MergeStats(a, b)
			return err
		},
		"different features": func() error {
			b, _ := NewStats(sp, 2, nil, 0, opt)
			_, err := MergeStats(a, b)
			return err
		},
		"different intercept": func() error {
			b, _ := NewStats(sp, 3, nil, 0, noInt)
			_, err := MergeStats(a, b)
			return err
		},
		"different maps": func() error {
			o := opt
			o.Kernel, o.NComponents = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}, 5
			b, _ := NewStats(sp, 3, X, 20, o)
			c, _ := NewStats(sp, 3, X[:30], 10, o)
			_, err := MergeStats(b, c)
			return err
		},
		"solve with another intercept": func() error { _, err := a.Solve(noInt); return err },
		"solve without examples":       func() error { _, err := a.Solve(opt); return err },
		"solve by cg": func() error {
			b, _ := a.Add(X, 20, 3, ys, nil, nil)
			o := opt
			o.Solver = CG
			_, err := b.Solve(o)
			return err
		},
		"rbf without map": func() error {
			o := opt
			o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}
			_, err := NewStats(sp, 3, nil, 0, o)
			return err
		},
		"wrong width": func() error { _, err := a.Add(X, 30, 2, append(ys, ys[:30]...), nil, nil); return err },
		"bad structure": func() error {
			bad := append([]int64(nil), ys...)
			bad[0] = 7
			_, err := a.Add(X, 20, 3, bad, nil, nil)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// statsSeeds are the fuzzing seeds: statistics of a linear and of a Nyström model.
func statsSeeds(f *testing.F) [][]byte {
	sp, _ := space.NewMulticlass(3)
	X, ys := synthetic(f, sp, 12, 2, 5)
	opt := baseOptions()
	var out [][]byte
	// the third keeps the training structures (an empirical reference)
	for _, o := range []Options{opt, func() Options {
		o := opt
		o.Kernel, o.NComponents = kernel.Kernel{Kind: kernel.Poly, Gamma: 0.5, Degree: 2, Coef0: 1}, 3
		return o
	}(), func() Options {
		o := opt
		o.EmpiricalWeight, o.Reference = 0.5, Empirical
		return o
	}()} {
		// the Nyström map's landmarks; the linear model takes none, and its rows give the shift
		sample, ms := X, 12
		if o.NComponents == 0 {
			sample, ms = nil, 0
		}
		empty, err := NewStats(sp, 2, sample, ms, o)
		if err != nil {
			f.Fatal(err)
		}
		s, err := empty.Add(X, 12, 2, ys, nil, nil)
		if err != nil {
			f.Fatal(err)
		}
		b, _ := s.MarshalBinary()
		out = append(out, b)
	}
	return out
}

// FuzzUnmarshalStats feeds arbitrary bytes to the statistics decoder: it must never panic, and
// what it accepts must re-encode to the same bytes.
func FuzzUnmarshalStats(f *testing.F) {
	for _, b := range statsSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := UnmarshalStats(data)
		if err != nil {
			return
		}
		if again, err := s.MarshalBinary(); err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not round-trip")
		}
	})
}

// FuzzUnmarshalStatsBody signs the fuzzed bytes first, so that mutations reach the field parser
// and the shape checks; what is accepted must merge with itself and solve or fail cleanly.
func FuzzUnmarshalStatsBody(f *testing.F) {
	for _, b := range statsSeeds(f) {
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), binfmt.Checksum(body))
		s, err := UnmarshalStats(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptStats) {
				t.Fatalf("error %v does not wrap ErrCorruptStats", err)
			}
			return
		}
		if _, err := MergeStats(s, s); err != nil && !strings.Contains(err.Error(), "overflow") {
			t.Fatalf("accepted statistics do not merge with themselves: %v", err)
		}
		opt := baseOptions()
		opt.Kernel, opt.Intercept = s.Kernel, s.Intercept
		if s.ny != nil {
			opt.NComponents = s.Components()
		}
		if opt.Kernel.Validate() == nil {
			s.Solve(opt) //nolint:errcheck // any error is fine, a panic is not
		}
	})
}

// A linear model's statistics follow the mean of their rows, each partition's its own, and merge
// by moving both to their common mean: they solve to the fit on the unshifted X (uncentred, X +
// 10⁵ lost 10⁻³ in the normal equations), also when the partitions lie far apart (the first at
// 10⁶: a centre fixed by it left the others' sums without precision). The shift travels in the
// bytes (version 2), and linear statistics refuse a sample.
func TestStatsFollowTheirMean(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n, shift = 120, 5, 1e5
	X, ys := synthetic(t, sp, m, n, 8)
	w := weights(rand.New(rand.NewPCG(8, 9)), m)
	opt := baseOptions()
	opt.Solver = Exact
	base, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	Xs := shifted(X, shift)
	empty, err := NewStats(sp, n, nil, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	parts := chunkStats(t, empty, Xs, n, ys, w, [][2]int{{0, 50}, {50, 90}, {90, m}})
	all := mustMerge(t, parts[2], mustMerge(t, parts[0], parts[1]))
	if all.st.shift == nil {
		t.Fatal("the statistics of an intercept model hold no shift")
	}
	back := statsThroughBytes(t, all)
	md, err := back.Solve(opt)
	if err != nil {
		t.Fatal(err)
	}
	if dist := relDist(scoresOf(t, md, Xs, m, n), scoresOf(t, base, X, m, n)); dist > 1e-9 {
		t.Errorf("scores %.3g from the in-memory fit on the unshifted X", dist)
	}

	// The first partition far from the others: as precise as a one-pass fit of the rows in
	// another order is.
	Xf := slices.Clone(X)
	for i := 0; i < 10*n; i++ {
		Xf[i] += 1e6
	}
	onePass, err := Fit(sp, Xf, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	parts = chunkStats(t, empty, Xf, n, ys, w, [][2]int{{0, 10}, {10, 60}, {60, m}})
	far, err := mustMerge(t, mustMerge(t, parts[0], parts[1]), parts[2]).Solve(opt)
	if err != nil {
		t.Fatal(err)
	}
	reordered, err := mustMerge(t, parts[2], mustMerge(t, parts[1], parts[0])).Solve(opt)
	if err != nil {
		t.Fatal(err)
	}
	want := scoresOf(t, onePass, Xf, m, n)
	floor := relDist(scoresOf(t, reordered, Xf, m, n), want)
	if dist := relDist(scoresOf(t, far, Xf, m, n), want); dist > 3*math.Max(floor, 1e-9) {
		t.Errorf("first partition at 1e6: scores %.3g from the one-pass fit's, merged in another order %.3g", dist, floor)
	}

	if _, err := NewStats(sp, n, Xs[:30*n], 30, opt); err == nil {
		t.Error("linear statistics took a sample")
	}
	noInt := opt
	noInt.Intercept = false
	if s := chunkStats(t, empty, Xs, n, ys, w, [][2]int{{0, m}}); s[0].st.shift == nil {
		t.Error("no shift with an intercept")
	}
	emptyNoInt, _ := NewStats(sp, n, nil, 0, noInt)
	if s := chunkStats(t, emptyNoInt, Xs, n, ys, w, [][2]int{{0, m}}); s[0].st.shift != nil {
		t.Error("a model without an intercept took a shift")
	}
	bad := *all
	bad.st = all.st.clone()
	bad.st.shift = []float64{1, 2}
	if b, _ := bad.MarshalBinary(); func() error { _, err := UnmarshalStats(b); return err }() == nil {
		t.Error("a shift of the wrong length was read")
	}
}

// Statistics without a shift (empty, or a first chunk whose mean is exactly zero) merge with
// statistics whose shift is exactly zero: reshift counted nil and zero as different shifts, and
// MergeStats reported an overflow.
func TestStatsMergeANilShiftWithAZeroOne(t *testing.T) {
	sp, _ := space.NewMulticlass(3)
	opt := baseOptions()
	empty, err := NewStats(sp, 1, nil, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	plus, err := empty.Add([]float64{2}, 1, 1, []int64{0}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	zero, err := plus.Add([]float64{-2}, 1, 1, []int64{1}, nil, nil) // shift [0]
	if err != nil {
		t.Fatal(err)
	}
	balanced, err := empty.Add([]float64{-1, 1}, 2, 1, []int64{2, 0}, nil, nil) // mean 0: no shift
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		a    *Stats
	}{{"empty", empty}, {"mean zero", balanced}} {
		if _, err := MergeStats(c.a, zero); err != nil {
			t.Errorf("%s with a zero shift: %v", c.name, err)
		}
		if _, err := MergeStats(zero, c.a); err != nil {
			t.Errorf("zero shift with %s: %v", c.name, err)
		}
	}
}

// Statistics of a Nyström map too large to solve count the map's components (the map holds the
// intercept's constant) and do not advise distributed CG, which refuses maps: both were the linear
// model's (probe FN).
func TestNystromStatsTooLargeNameTheMap(t *testing.T) {
	sp, _ := space.NewMultilabel(80)
	const m, n = 200, 3
	X, _ := synthetic(t, sp, m, n, 4)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
	opt.NComponents, opt.Seed, opt.Solver = 120, 7, Exact
	_, err := NewStats(sp, n, X, m, opt)
	if err == nil || !strings.Contains(err.Error(), "statistics of 9600 unknowns (the map's 120 components × output dimension 80") ||
		strings.Contains(err.Error(), "solver=\"cg\"") {
		t.Errorf("error %v", err)
	}
}

// Partitions whose means differ are re-centred to their common mean before they merge; a bound of
// the largest moment times the shift squared refused that for a feature at 1e80 (moments of
// 1e163, shifts of 1e79), and the merge reported a +Inf overflow of the sums, so a Dask fit failed
// or not with the partitioning (probe FN). The merged statistics solve to Fit's model.
func TestMergedStatsOfFeaturesFarFromZero(t *testing.T) {
	sp, _ := space.NewMulticlass(2)
	const m, n = 300, 2
	X, ys := synthetic(t, sp, m, n, 12)
	r := rand.New(rand.NewPCG(5, 6))
	for _, scale := range []float64{1e80, 1e100} {
		Xs := slices.Clone(X)
		for i := 0; i < m; i++ {
			Xs[i*n+1] = scale * (1 + 0.1*r.NormFloat64())
		}
		opt := baseOptions()
		opt.Solver = Exact
		ref := mustFit(t, sp, Xs, m, n, ys, nil, opt)
		empty, err := NewStats(sp, n, nil, 0, opt)
		if err != nil {
			t.Fatal(err)
		}
		for order, s := range reductions(t, chunkStats(t, empty, Xs, n, ys, nil, chunks(m, 3))) {
			md, err := s.Solve(opt)
			if err != nil {
				t.Fatalf("scale %g, %s: %v", scale, order, err)
			}
			U, want := scoresOf(t, md, Xs, m, n), scoresOf(t, ref, Xs, m, n)
			if diff := relDist(U, want); diff > 1e-10 {
				t.Errorf("scale %g, %s: scores %.3g from Fit's", scale, order, diff)
			}
		}
	}
}

// linearStats.add accumulates exactly the moments that define it, M[q, (j,l)] = Σ_i s_i c_q(ψ_i)
// x̂_ij x̂_il, computed here term by term: across blocks of examples (statsBlock) and chunks of
// columns (statsCols), with zero weights, a shift, ψ with several values (Permutations' ranks: ψ_a
// ψ_b ≠ ψ_a) and sparse ψ (multiclass one-hot), to rounding.
func TestStatsAddMatchesTheirDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		kind   string
		params []int64
		n      int
	}{
		{"multilabel", []int64{4}, 25}, // 351 column pairs: two chunks of statsCols
		{"permutations", []int64{3}, 3},
		{"multiclass", []int64{5}, 7},
	} {
		sp, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		m, n, d := 2*statsBlock+3, c.n, sp.Dim()
		X, ys := synthetic(t, sp, m, n, 43)
		w := make([]float64, m)
		for i := range w {
			if i%7 != 3 {
				w[i] = r.Float64() * 2
			}
		}
		p, err := NewProblem(sp, ys, m, w, 1)
		if err != nil {
			t.Fatal(err)
		}
		st := newLinearStats(n, d)
		st.shift = make([]float64, n)
		for j := range st.shift {
			st.shift[j] = r.NormFloat64()
		}
		if err := st.add(p, design{X: mat.NewDense(m, n, X)}, nil); err != nil {
			t.Fatal(err)
		}
		k, pd := n+1, d*(d+1)/2
		rows, cols := statsDims(n, d)
		want := mat.NewDense(rows, cols, nil)
		psi, x := make([]float64, d), make([]float64, k)
		for i := 0; i < m; i++ {
			sp.Embed(ys[i*sp.Width():(i+1)*sp.Width()], psi)
			for j := 0; j < n; j++ {
				x[j] = X[i*n+j] - st.shift[j]
			}
			x[n] = 1
			coef := func(q int) float64 {
				switch {
				case q == pd+d:
					return 1
				case q >= pd:
					return psi[q-pd]
				}
				for a := 0; a < d; a++ {
					for b := a; b < d; b++ {
						if triIndex(a, b, d) == q {
							return psi[a] * psi[b]
						}
					}
				}
				panic("no such row")
			}
			for q := 0; q < rows; q++ {
				cq := coef(q)
				for j := 0; j < k; j++ {
					for l := j; l < k; l++ {
						want.Set(q, triIndex(j, l, k), want.At(q, triIndex(j, l, k))+p.Weight[i]*cq*x[j]*x[l])
					}
				}
			}
		}
		if !mat.EqualApprox(st.M, want, 1e-10*mat.Norm(want, math.Inf(1))) {
			t.Errorf("%s%v: the moments differ from their definition", c.kind, c.params)
		}
		if st.count != int64(m) {
			t.Errorf("%s%v: count %d, want %d", c.kind, c.params, st.count, m)
		}
	}
}
