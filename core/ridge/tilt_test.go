package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The tilted estimate must be the mean of ψ under μ_θ(z) ∝ μ(z)·exp⟨c·u, ψ(z)⟩, computed here by
// brute force: every structure of Y with mass (1 − w)/|Y| and every training structure with mass
// w·s_j/Σs (a structure that occurs twice counts twice).
func TestTiltedMarginalsByEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, sp := range referenceSpaces(t) {
		const m = 9
		_, ys := synthetic(t, sp, m, 2, 7)
		copy(ys[sp.Width():2*sp.Width()], ys[:sp.Width()]) // a repeated structure
		s := weights(r, m)
		wd := sp.Width()
		all := embedAll(t, sp)
		var sum float64
		for _, v := range s {
			sum += v
		}
		for _, w := range []float64{0, 0.3, 1} {
			p, err := NewProblem(sp, ys, m, s, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, Empirical, w); err != nil {
				t.Fatal(err)
			}
			for _, c := range []float64{0.3, 2} {
				tm, err := newTiltMap(newMarginalMap(sp, p.ref), sp, p.ref, c)
				if err != nil {
					t.Fatal(err)
				}
				support, mass := slices.Clone(all), make([]float64, len(all), len(all)+m)
				for k := range mass {
					mass[k] = (1 - w) / float64(len(all))
				}
				for i := 0; i < m; i++ {
					support = append(support, embedOf(sp, ys[i*wd:(i+1)*wd]))
					mass = append(mass, w*s[i]/sum)
				}
				checkTiltByEnumeration(t, tm, r, support, mass, fmt.Sprintf("%s w=%v c=%v", sp.Kind(), w, c))
			}
		}
	}
}

// To first order in θ the tilt is p + S θ, the linear estimate at the same scale: at c = 1e-4 the
// two differ by O(c²), a thousandth of what either moves from p.
func TestTiltedMatchesLinearToFirstOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	sp, _ := space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2})
	const m = 12
	_, ys := synthetic(t, sp, m, 2, 8)
	for _, w := range []float64{0, 0.5, 1} {
		p, err := NewProblem(sp, ys, m, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.useReference(sp, Empirical, w); err != nil {
			t.Fatal(err)
		}
		const c = 1e-4
		tm, err := newTiltMap(newMarginalMap(sp, p.ref), sp, p.ref, c)
		if err != nil {
			t.Fatal(err)
		}
		mm := newMarginalMap(sp, p.ref)
		mm.unit, mm.factor = true, c
		u := make([]float64, sp.Dim())
		for j := range u {
			u[j] = r.NormFloat64()
		}
		tilted, linear := slices.Clone(u), slices.Clone(u)
		if err := tm.centre(tilted, tm.scratch()); err != nil {
			t.Fatal(err)
		}
		mm.centre(linear, make([]float64, len(u)))
		var top, diff float64
		for j := range u {
			top = math.Max(top, math.Abs(linear[j]))
			diff = math.Max(diff, math.Abs(tilted[j]-linear[j]))
		}
		if top == 0 || diff > 1e-3*top {
			t.Errorf("w=%v: tilted and linear estimates differ by %.3g where they move %.3g from p", w, diff, top)
		}
	}
}

// Under the empirical measure scores of any magnitude give a finite estimate: at c·u beyond
// float64's range, the best-scoring training structure; zero scores give p.
func TestTiltedHugeScores(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{4})
	const m = 10
	_, ys := synthetic(t, sp, m, 2, 9)
	p, err := NewProblem(sp, ys, m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.useReference(sp, Empirical, 1); err != nil {
		t.Fatal(err)
	}
	tm, err := newTiltMap(newMarginalMap(sp, p.ref), sp, p.ref, 1e100)
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{1e300, -3e299, 2e299, -1e300}
	best, bestScore := -1, math.Inf(-1)
	for i := 0; i < m; i++ {
		psi := embedOf(sp, ys[i*4:(i+1)*4])
		var a float64
		for j := range u {
			a += u[j] / 1e299 * psi[j]
		}
		if a > bestScore {
			best, bestScore = i, a
		}
	}
	got := slices.Clone(u)
	if err := tm.centre(got, tm.scratch()); err != nil {
		t.Fatal(err)
	}
	want := embedOf(sp, ys[best*4:(best+1)*4])
	for j := range got {
		if g := got[j] + tm.p[j]; g != want[j] {
			t.Fatalf("huge scores: m̂ = %v + p, want the best structure %v", got, want)
		}
	}
	// weights 600 orders of magnitude apart: the best structure wins whatever its weight
	psi, err := xmat.New(2, 4, []int64{0, 1, 2}, []int64{0, 3}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	ref := &reference{mean: []float64{0.5, 0, 0, 0.5}, cov: mat.NewSymDense(4, []float64{
		0.25, 0, 0, -0.25, 0, 0, 0, 0, 0, 0, 0, 0, -0.25, 0, 0, 0.25}), weight: 1, tilt: &empiricalTilt{psi: psi, weight: []float64{1e-300, 1e300}}}
	skewed, err := newTiltMap(newMarginalMap(sp, ref), sp, ref, 1e100)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		u    []float64
		want []float64
	}{
		{[]float64{1e300, 0, 0, -1e300}, []float64{1, 0, 0, 0}}, // the light structure scores best
		{[]float64{-1e300, 0, 0, 1e300}, []float64{0, 0, 0, 1}},
	} {
		got := slices.Clone(tc.u)
		if err := skewed.centre(got, skewed.scratch()); err != nil {
			t.Fatal(err)
		}
		for j := range got {
			if g := got[j] + skewed.p[j]; g != tc.want[j] {
				t.Fatalf("weights 1e-300 and 1e300, scores %v: m̂ = %v + p, want %v", tc.u, got, tc.want)
			}
		}
	}
	zero := make([]float64, 4)
	if err := tm.centre(zero, tm.scratch()); err != nil || slices.Max(zero) != 0 || slices.Min(zero) != 0 {
		t.Errorf("zero scores: m̂ − p = %v, %v", zero, err)
	}
}

// partial_fit keeps the structures of every chunk: its tilted estimates are those of a fit on all
// of them, and they survive the byte format.
func TestTiltedAfterPartialFitAndBytes(t *testing.T) {
	sp, _ := space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2})
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 10)
	wd := sp.Width()
	opt := baseOptions()
	opt.EmpiricalWeight = 0.5
	opt.Reference = Empirical
	whole, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	first, err := PartialFit(nil, sp, X[:15*n], 15, n, ys[:15*wd], nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := PartialFit(first, sp, X[15*n:], m-15, n, ys[15*wd:], nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stream.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	d := sp.Dim()
	want := make([]float64, m*d)
	if err := whole.Marginals(X, m, n, want, nil, EstimateTilted, ScaleUnit, 3, nil); err != nil {
		t.Fatal(err)
	}
	for name, md := range map[string]*Model{"partial_fit": stream, "read from bytes": back} {
		got := make([]float64, m*d)
		if err := md.Marginals(X, m, n, got, nil, EstimateTilted, ScaleUnit, 3, nil); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-8 {
				t.Fatalf("%s: tilted estimate %d is %v, the fit on all examples gives %v", name, i, got[i], want[i])
			}
		}
	}
	// version 6 bytes hold no structures: the estimate is refused, the linear one is not
	old, err := stream.marshal(6)
	if err != nil {
		t.Fatal(err)
	}
	v6, err := UnmarshalModel(old)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, m*d)
	if err := v6.Marginals(X, m, n, got, nil, EstimateTilted, ScaleUnit, 3, nil); !errors.Is(err, errNoTilt) {
		t.Errorf("version 6 model: %v, want errNoTilt", err)
	}
	if err := v6.Marginals(X, m, n, got, nil, EstimateLinear, ScaleUnit, 3, nil); err != nil {
		t.Error(err)
	}
}

// The tilted estimate is refused with a reason where it is not defined or not computable.
func TestTiltedRefusals(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	const m, n = 20, 2
	X, ys := synthetic(t, sp, m, n, 11)
	M := make([]float64, m*sp.Dim())
	opt := baseOptions()
	opt.EmpiricalWeight, opt.Reference = 1, Product
	product, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := product.Marginals(X, m, n, M, nil, EstimateTilted, ScaleNoiseFree, 1, nil); err == nil ||
		!strings.Contains(err.Error(), "noise_free") {
		t.Errorf("scale noise_free: %v", err)
	}
	big, _ := space.New("permutations", []int64{20})
	Xb, yb := synthetic(t, big, m, n, 12)
	uniform, err := Fit(big, Xb, m, n, yb, nil, baseOptions())
	if err != nil {
		t.Fatal(err)
	}
	Mb := make([]float64, m*big.Dim())
	if err := uniform.Marginals(Xb, m, n, Mb, nil, EstimateTilted, ScaleUnit, 1, nil); err == nil ||
		!strings.Contains(err.Error(), "exact inference") {
		t.Errorf("uniform reference without exact inference: %v", err)
	}
	opt = baseOptions()
	opt.EmpiricalWeight = 1
	empirical, err := Fit(big, Xb, m, n, yb, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := empirical.Marginals(Xb, m, n, Mb, nil, EstimateTilted, ScaleUnit, 1, nil); err != nil {
		t.Errorf("empirical reference on permutations of 20: %v", err)
	}
	if _, err := ParseMarginalEstimate(2); err == nil {
		t.Error("estimate code 2 accepted")
	}
}

// Under a product reference the tilt is the mean of ψ under (1 − w)·U + w·P tilted, P the space's
// measure with the training mean (the branching process of subtrees, independent labels, the
// categorical measures of classes and paths), computed here by enumeration with P written out.
func TestTiltedProductByEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, tc := range productCases(t) {
		sp := tc.sp
		const m = 9
		_, ys := synthetic(t, sp, m, 2, 8)
		s := weights(r, m)
		all := embedAll(t, sp)
		for _, w := range []float64{0.3, 1} {
			p, err := NewProblem(sp, ys, m, s, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, Product, w); err != nil {
				t.Fatal(err)
			}
			pd := p.ref.productMean
			for _, c := range []float64{0.5, 3} {
				tm, err := newTiltMap(newMarginalMap(sp, p.ref), sp, p.ref, c)
				if err != nil {
					t.Fatal(err)
				}
				mass := make([]float64, len(all))
				for k, psi := range all {
					mass[k] = (1-w)/float64(len(all)) + w*productProb(t, tc.kind, tc.params, pd, psi)
				}
				checkTiltByEnumeration(t, tm, r, all, mass, fmt.Sprintf("%s %v w=%v c=%v", tc.kind, tc.params, w, c))
			}
		}
	}
}

// checkTiltByEnumeration compares tm's estimate at random scores with the mean of ψ over support
// weighted by mass·exp(c⟨u, ψ⟩), c the scale of tm.
func checkTiltByEnumeration(t *testing.T, tm *tiltMap, r *rand.Rand, support [][]float64, mass []float64, name string) {
	t.Helper()
	d := len(tm.p)
	u := make([]float64, d)
	for j := range u {
		u[j] = r.NormFloat64()
	}
	want := make([]float64, d)
	var z float64
	for k, psi := range support {
		var a float64
		for j := range u {
			a += tm.c * u[j] * psi[j]
		}
		e := mass[k] * math.Exp(a)
		z += e
		for j := range want {
			want[j] += e * psi[j]
		}
	}
	got := slices.Clone(u)
	if err := tm.centre(got, tm.scratch()); err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if g := got[j] + tm.p[j]; math.Abs(g-want[j]/z) > 1e-12 {
			t.Fatalf("%s: m̂[%d] = %v, enumeration gives %v", name, j, g, want[j]/z)
		}
	}
}

// Statistics keep the distinct training structures, so a model solved from chunks merged in any
// order (combpred.dask's reduction), also after the statistics' bytes, has the tilted estimate of
// the fit on all examples, with sample weights (one chunk all zero); past the bound on their values
// they are dropped, and so is the estimate, by name, as for statistics started for the uniform
// measure (which do not collect them) and solved for an empirical one.
func TestTiltedFromMergedStats(t *testing.T) {
	sp, _ := space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2})
	const m, n = 60, 3
	X, ys := synthetic(t, sp, m, n, 11)
	w := weights(rand.New(rand.NewPCG(11, 12)), m)
	for i := 20; i < 30; i++ {
		w[i] = 0
	}
	opt := baseOptions()
	opt.Solver = Exact
	opt.EmpiricalWeight = 0.4
	opt.Reference = Empirical
	whole, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	d := sp.Dim()
	tilted := func(md *Model) ([]float64, error) {
		got := make([]float64, m*d)
		return got, md.Marginals(X, m, n, got, nil, EstimateTilted, ScaleUnit, 3, nil)
	}
	want, err := tilted(whole)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := NewStats(sp, n, nil, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	parts := chunkStats(t, empty, X, n, ys, w, [][2]int{{0, 20}, {20, 30}, {30, 45}, {45, m}})
	for order, s := range reductions(t, parts) {
		for name, st := range map[string]*Stats{order: s, order + ", read from bytes": statsThroughBytes(t, s)} {
			md, err := st.Solve(opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tilted(md)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-8 {
					t.Fatalf("%s: tilted estimate %d is %v, the fit on all examples gives %v", name, i, got[i], want[i])
				}
			}
		}
	}
	uniform := opt
	uniform.EmpiricalWeight = 0
	plain, err := NewStats(sp, n, nil, 0, uniform)
	if err != nil {
		t.Fatal(err)
	}
	without := chunkStats(t, plain, X, n, ys, w, [][2]int{{0, 30}, {30, m}})
	defer func(v int) { maxStatsStructureValues = v }(maxStatsStructureValues)
	maxStatsStructureValues = 12
	small := chunkStats(t, empty, X, n, ys, w, [][2]int{{0, 2}, {2, m}})
	if !small[0].keepStructures || small[1].keepStructures {
		t.Fatalf("structures kept: %v and %v, want true (2 rows) and false", small[0].keepStructures, small[1].keepStructures)
	}
	merged := mustMerge(t, small[0], small[1])
	cases := map[string]*Stats{"merged": merged, "read from bytes": statsThroughBytes(t, merged),
		"started for the uniform measure": mustMerge(t, without[0], without[1])}
	for name, st := range cases {
		md, err := st.Solve(opt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tilted(md); !errors.Is(err, errNoTilt) {
			t.Errorf("%s, structures past the bound: %v, want errNoTilt", name, err)
		}
	}
}

// CheckMarginalQuery is the rule Python asks before a fit (cp_ridge_check_marginals) and every
// query applies: the factor's range for both estimates, and no noise-free scale for the tilt.
func TestCheckMarginalQuery(t *testing.T) {
	for _, c := range []struct {
		est    MarginalEstimate
		scale  MarginalScale
		factor float64
		want   string // "" for none
	}{
		{EstimateLinear, ScaleNoiseFree, 1, ""},
		{EstimateLinear, ScaleUnit, MaxScaleFactor, ""},
		{EstimateTilted, ScaleUnit, 3, ""},
		{EstimateTilted, ScaleNoiseFree, 1, "noise_free is the linear estimate's"},
		{EstimateLinear, ScaleUnit, MinScaleFactor, ""},
		{EstimateLinear, ScaleUnit, 0, "positive"},
		{EstimateLinear, ScaleUnit, MinScaleFactor / 2, "smallest normal"},
		{EstimateTilted, ScaleUnit, math.NaN(), "positive"},
		{EstimateTilted, ScaleUnit, math.Inf(1), "to 1e+100"},
		{EstimateLinear, ScaleUnit, 2 * MaxScaleFactor, "to 1e+100"},
	} {
		err := CheckMarginalQuery(c.est, c.scale, c.factor)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, %v, %v: %v, want %q", c.est, c.scale, c.factor, err, c.want)
		}
	}
}

// CheckFitMarginals refuses before a fit what every model of the space and measure would refuse
// at its first query: CheckMarginalQuery's rules, and the tilt's needs that do not depend on the
// data (a uniform part needs exact inference, a product reference a product measure), with the
// message the query gives.
func TestCheckFitMarginals(t *testing.T) {
	large, err := space.NewPermutations(17) // beyond exact inference
	if err != nil {
		t.Fatal(err)
	}
	if prob.HasExact(large) {
		t.Fatal("Permutations(17) has exact inference: pick a larger space")
	}
	small, err := space.NewPermutations(4)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := space.NewMultilabel(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		sp    space.Space
		w     float64
		ref   Reference
		est   MarginalEstimate
		scale MarginalScale
		want  string // "" for none
	}{
		{"large uniform", large, 0, Empirical, EstimateTilted, ScaleUnit, "needs exact inference"},
		{"large mixture", large, 0.5, Empirical, EstimateTilted, ScaleUnit, "needs exact inference"},
		{"large empirical", large, 1, Empirical, EstimateTilted, ScaleUnit, ""},
		{"large linear", large, 0, Empirical, EstimateLinear, ScaleNoiseFree, ""},
		{"small uniform", small, 0, Empirical, EstimateTilted, ScaleUnit, ""},
		{"small product", small, 0.5, Product, EstimateTilted, ScaleUnit, `reference="product" is defined for`},
		{"labels product", labels, 0.5, Product, EstimateTilted, ScaleUnit, ""},
		{"noise-free tilt", small, 0, Empirical, EstimateTilted, ScaleNoiseFree, "noise_free is the linear estimate's"},
	} {
		opt := Options{Alpha: 1, EmpiricalWeight: c.w, Reference: c.ref}
		err := CheckFitMarginals(c.sp, opt, c.est, c.scale, 1)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Structures whose hashes collide stay apart: they are compared in full along the chain of their
// hash (collisions forced by pointing b's and c's hashes at earlier structures).
func TestStructureSetCollisions(t *testing.T) {
	a, b, c := []float64{1, 0, 1}, []float64{0, 1, 1}, []float64{1, 1, 0}
	add := func(ss *structureSet, v []float64, w float64) {
		ss.add(w, func(fn func(int, float64)) {
			for j, x := range v {
				fn(j, x)
			}
		})
	}
	ss := newStructureSet(3)
	hashOf := func(v []float64) uint64 {
		probe := newStructureSet(3)
		probe.seed = ss.seed
		add(probe, v, 1)
		for h := range probe.first {
			return h
		}
		return 0
	}
	add(ss, a, 1)
	ss.first[hashOf(b)] = 0 // b's hash leads to a
	add(ss, b, 2)
	ss.first[hashOf(c)] = 1 // c's hash leads to b, then a
	add(ss, c, 4)
	for _, v := range [][]float64{a, b, c} {
		add(ss, v, 8)
	}
	tl, err := ss.tilt()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tl.weight, []float64{9, 10, 12}) {
		t.Fatalf("weights %v, want [9 10 12] (a, b, c each added twice)", tl.weight)
	}
	for k, want := range [][]float64{a, b, c} {
		got := make([]float64, 3)
		tl.psi.RowEntries(k, func(j int, v float64) { got[j] = v })
		if !slices.Equal(got, want) {
			t.Errorf("structure %d is %v, want %v", k, got, want)
		}
	}
}
