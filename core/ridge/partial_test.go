package ridge

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// testSpaces are the spaces the streaming and SGD tests run on: a singular S with one-hot ψ, a
// diagonal S with sparse 0/1 ψ, and the dense ±1 ψ of rankings and cycles.
func testSpaces(t testing.TB) []space.Space {
	t.Helper()
	var out []space.Space
	for _, c := range []struct {
		kind string
		par  int64
	}{{"multiclass", 4}, {"multilabel", 5}, {"permutations", 4}, {"dicycles", 5}} {
		sp, err := space.New(c.kind, []int64{c.par})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// chunks splits [0, m) into k uneven consecutive ranges.
func chunks(m, k int) [][2]int {
	var out [][2]int
	lo := 0
	for c := 0; c < k; c++ {
		hi := lo + (m-lo)/(k-c)
		if c%2 == 1 && hi+1 < m {
			hi++ // uneven sizes
		}
		if c == k-1 {
			hi = m
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// streamFit runs PartialFit over the given row ranges of (X, ys, w), starting from prev.
func streamFit(t testing.TB, prev *Model, sp space.Space, X []float64, n int, ys []int64, w []float64, parts [][2]int, opt Options) *Model {
	t.Helper()
	width := sp.Width()
	for _, c := range parts {
		var wc []float64
		if w != nil {
			wc = w[c[0]:c[1]]
		}
		md, err := PartialFit(prev, sp, X[c[0]*n:c[1]*n], c[1]-c[0], n, ys[c[0]*width:c[1]*width], wc, opt)
		if err != nil {
			t.Fatal(err)
		}
		prev = md
	}
	return prev
}

func relDiff(a, b *mat.Dense) float64 {
	return maxAbsDiff(a, b) / math.Max(maxAbs(b), 1e-300)
}

// PartialFit over 1, 3 and 7 chunks gives the exact solution on all the data, in every space, with
// and without intercept and sample weights, and reports J over all the data.
func TestPartialFitEqualsExactFit(t *testing.T) {
	for _, sp := range testSpaces(t) {
		const m, n = 210, 4
		X, ys := synthetic(t, sp, m, n, 17)
		w := weights(rand.New(rand.NewPCG(1, 2)), m)
		for i := 0; i < m; i += 5 {
			w[i] = 0
		}
		for _, intercept := range []bool{true, false} {
			for _, sw := range [][]float64{nil, w} {
				opt := baseOptions()
				opt.Intercept = intercept
				opt.Solver = Exact
				ref := mustFit(t, sp, X, m, n, ys, sw, opt)
				p, _ := NewProblem(sp, ys, m, sw, opt.Alpha)
				opt.Solver = Auto
				for _, k := range []int{1, 3, 7} {
					md := streamFit(t, nil, sp, X, n, ys, sw, chunks(m, k), opt)
					name := sp.Kind()
					if diff := relDiff(md.Coef, ref.Coef); diff > 1e-9 {
						t.Errorf("%s intercept=%v weights=%v, %d chunks: coefficients differ by %.3g (relative)", name, intercept, sw != nil, k, diff)
					}
					rows, _ := md.Coef.Dims()
					grad, g0 := mat.NewDense(rows, sp.Dim(), nil), mat.NewDense(rows, sp.Dim(), nil)
					j := p.LinearObjective(mat.NewDense(m, n, X), intercept, md.Coef, grad)
					p.LinearObjective(mat.NewDense(m, n, X), intercept, mat.NewDense(rows, sp.Dim(), nil), g0)
					rel := mat.Norm(grad, 2) / mat.Norm(g0, 2)
					if math.Abs(j-md.Result.Objective) > 1e-10*j || !md.Result.Converged || md.Result.RelGrad > 1e-9 || rel > 1e-9 {
						t.Errorf("%s %d chunks: reported J %.15g (relative gradient %.3g), J over the data %.15g (relative gradient %.3g)",
							name, k, md.Result.Objective, md.Result.RelGrad, j, rel)
					}
					if md.Seen != m || !md.Streaming() {
						t.Errorf("%s %d chunks: Seen = %d, Streaming = %v", name, k, md.Seen, md.Streaming())
					}
				}
			}
		}
	}
}

// The statistics do not depend on the number of threads: PartialFit is reproducible bit for bit.
func TestLinearStatsThreadIndependent(t *testing.T) {
	sp, _ := space.NewMultilabel(6)
	const m, n = 300, 40
	X, ys := synthetic(t, sp, m, n, 3)
	p, _ := NewProblem(sp, ys, m, nil, 1)
	var first *mat.Dense
	for _, threads := range []int{1, 2, 3, 0} {
		withThreads(threads, func() {
			st := newLinearStats(n, 6)
			if err := st.add(p, design{X: mat.NewDense(m, n, X)}, nil); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = st.M
			} else if !mat.Equal(first, st.M) {
				t.Errorf("statistics with %d threads differ", threads)
			}
		})
	}
}

// A model written to bytes mid-stream and read back continues exactly as the uninterrupted one,
// and PartialFit never modifies the model it continues.
func TestPartialFitContinuesAfterBytes(t *testing.T) {
	for _, sp := range testSpaces(t)[:2] {
		const m, n = 150, 3
		X, ys := synthetic(t, sp, m, n, 5)
		opt := baseOptions()
		parts := chunks(m, 3)
		whole := streamFit(t, nil, sp, X, n, ys, nil, parts, opt)
		half := streamFit(t, nil, sp, X, n, ys, nil, parts[:2], opt)
		before, _ := half.MarshalBinary()
		back, err := UnmarshalModel(before)
		if err != nil {
			t.Fatal(err)
		}
		cont := streamFit(t, back, sp, X, n, ys, nil, parts[2:], opt)
		direct := streamFit(t, half, sp, X, n, ys, nil, parts[2:], opt)
		if !mat.Equal(cont.Coef, whole.Coef) || !mat.Equal(direct.Coef, whole.Coef) {
			t.Errorf("%s: continuing after a round trip through bytes differs from the uninterrupted stream by %.3g",
				sp.Kind(), maxAbsDiff(cont.Coef, whole.Coef))
		}
		if after, _ := half.MarshalBinary(); !bytes.Equal(before, after) {
			t.Errorf("%s: PartialFit modified the model it continued", sp.Kind())
		}
	}
}

// With a Nyström map, one chunk gives Fit's model (same landmarks for the same data and seed), and
// further chunks keep the first chunk's landmarks.
func TestPartialFitNystrom(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 120, 3
	X, ys := synthetic(t, sp, m, n, 9)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
	opt.NComponents = 25
	opt.Solver = Exact
	ref := mustFit(t, sp, X, m, n, ys, nil, opt)
	one := streamFit(t, nil, sp, X, n, ys, nil, chunks(m, 1), opt)
	if diff := relDiff(one.Coef, ref.Coef); diff > 1e-9 || one.Components() != ref.Components() {
		t.Errorf("one chunk: coefficients differ by %.3g, components %d and %d", diff, one.Components(), ref.Components())
	}
	parts := chunks(m, 4)
	first := streamFit(t, nil, sp, X, n, ys, nil, parts[:1], opt)
	all := streamFit(t, first, sp, X, n, ys, nil, parts[1:], opt)
	if all.ny != first.ny || all.Seen != m {
		t.Errorf("later chunks changed the Nyström map (or Seen = %d)", all.Seen)
	}
}

// The Nyström map stays the first chunk's, so a later chunk must ask for the n_components it was
// built for, even when the first chunk had fewer rows than that and gave fewer landmarks; the
// request survives the model's bytes, and bytes of format version 4 (which lack it) accept any.
func TestPartialFitHoldsNComponents(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const n = 3
	X, ys := synthetic(t, sp, 40, n, 4)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
	opt.NComponents = 15 // more than the first chunk's 10 rows
	first, err := PartialFit(nil, sp, X[:10*n], 10, n, ys[:10*3], nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if first.Components() != 10 || first.components != 15 {
		t.Fatalf("first chunk: %d components for n_components = %d, want 10 for 15", first.Components(), first.components)
	}
	b, err := first.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	old, err := first.marshal(4)
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := UnmarshalModel(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		prev *Model
		k    int
		ok   bool
	}{
		{"same request", first, 15, true},
		{"same request after bytes", back, 15, true},
		{"the landmark count", first, 10, false},
		{"another request", back, 20, false},
		{"version 4 bytes, any request", unknown, 20, true},
	} {
		o := opt
		o.NComponents = c.k
		next, err := PartialFit(c.prev, sp, X[10*n:], 30, n, ys[10*3:], nil, o)
		if c.ok != (err == nil) || !c.ok && !strings.Contains(err.Error(), fmt.Sprintf("n_components must stay that of the model (15), got %d", c.k)) {
			t.Errorf("%s: error %v", c.name, err)
		}
		if err == nil && next.ny != c.prev.ny {
			t.Errorf("%s: the Nyström map changed", c.name)
		}
	}
}

// Model bytes whose requested n_components contradicts the map are corrupt.
func TestUnmarshalRejectsNComponents(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	X, ys := synthetic(t, sp, 20, 3, 4)
	opt := baseOptions()
	lin := mustFit(t, sp, X, 20, 3, ys, nil, opt)
	opt.Kernel, opt.NComponents = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}, 8
	ny := mustFit(t, sp, X, 20, 3, ys, nil, opt)
	for _, c := range []struct {
		md   *Model
		k    int
		want string
	}{
		{lin, 5, "n_components = 5 without a Nyström map"},
		{ny, 7, "8 landmarks built for n_components = 7"},
		{ny, MaxComponents + 1, "built for n_components"},
	} {
		bad := *c.md
		bad.components = c.k
		b, err := bad.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalModel(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("n_components = %d: error %v, want it to mention %q", c.k, err, c.want)
		}
	}
}

// An exact Fit keeps its statistics, so PartialFit continues it as if it had streamed.
func TestPartialFitContinuesAnExactFit(t *testing.T) {
	sp, _ := space.NewMulticlass(4)
	X, ys := synthetic(t, sp, 60, 3, 9)
	opt := baseOptions()
	opt.Solver = Exact
	first := mustFit(t, sp, X[:30*3], 30, 3, ys[:30], nil, opt)
	cont, err := PartialFit(first, sp, X[30*3:], 30, 3, ys[30:], nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	all := mustFit(t, sp, X, 60, 3, ys, nil, opt)
	for i, v := range all.Coef.RawMatrix().Data {
		if w := cont.Coef.RawMatrix().Data[i]; math.Abs(v-w) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Fatalf("coefficient %d: fit on all %v, fit then partial_fit %v", i, v, w)
		}
	}
}

func TestPartialFitRejects(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	X, ys := synthetic(t, sp, 20, 3, 1)
	opt := baseOptions()
	cgOpt := opt
	cgOpt.Solver = CG
	fitted := mustFit(t, sp, X, 20, 3, ys, nil, cgOpt) // CG keeps no statistics
	sgdOpt := opt
	sgdOpt.Solver = SGD
	sgdFitted, err := PartialFit(nil, sp, X, 20, 3, ys, nil, sgdOpt) // nor does an SGD pass
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := PartialFit(nil, sp, X, 20, 3, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := space.NewMultilabel(4)
	wide, _ := space.NewMultilabel(100)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 1}
	cases := []struct {
		name string
		prev *Model
		sp   space.Space
		mut  func(o *Options)
		want string
	}{
		{"no statistics", fitted, sp, func(*Options) {}, "kept none (its fit ran CG"},
		{"no statistics after SGD", sgdFitted, sp, func(*Options) {}, "kept none (it was fitted by SGD)"},
		{"other space", streamed, other, func(*Options) {}, "space"},
		{"other kernel", streamed, sp, func(o *Options) { o.Kernel = rbf }, "must stay"},
		{"other intercept", streamed, sp, func(o *Options) { o.Intercept = false }, "must stay"},
		{"cg", nil, sp, func(o *Options) { o.Solver = CG }, "not by cg"},
		{"precomputed", nil, sp, func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.Precomputed} }, "precomputed"},
		{"exact rbf", nil, sp, func(o *Options) { o.Kernel, o.Solver = rbf, Exact }, "sgd"},
		{"too large", nil, wide, func(*Options) {}, "use solver=\"sgd\""},
	}
	for _, c := range cases {
		o := opt
		c.mut(&o)
		d := c.sp.Dim()
		y := make([]int64, 20*c.sp.Width())
		copy(y, ys)
		if d == 100 {
			_, err = PartialFit(c.prev, c.sp, make([]float64, 2*100), 2, 100, make([]int64, 2*100), nil, o)
		} else {
			_, err = PartialFit(c.prev, c.sp, X, 20, 3, y, nil, o)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

// Warm starts: CG restarted at its own solution stops at once, started from another alpha's
// solution needs fewer iterations than from zero, and an Init that does not fit is ignored.
func TestWarmStart(t *testing.T) {
	sp, _ := space.NewMultilabel(5)
	const m, n = 150, 30
	X, ys := synthetic(t, sp, m, n, 2)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.05}} {
		opt := baseOptions()
		opt.Kernel, opt.Solver, opt.Tol = k, CG, 1e-8
		cold := mustFit(t, sp, X, m, n, ys, nil, opt)
		opt.Init = cold
		again, _ := Fit(sp, X, m, n, ys, nil, opt)
		opt.Alpha = 0.6
		opt.Init = nil
		coldPath, _ := Fit(sp, X, m, n, ys, nil, opt)
		opt.Init = cold
		warmPath, _ := Fit(sp, X, m, n, ys, nil, opt)
		opt.Init, _ = Fit(sp, X[:m/2*n], m/2, n, ys[:m/2*5], nil, opt) // another sample count or solution
		ignored, err := Fit(sp, X, m, n, ys, nil, opt)
		t.Logf("%v: cold %d, restart %d, alpha path %d (cold %d), mismatched Init %d iterations",
			k.Kind, cold.Result.Iterations, again.Result.Iterations, warmPath.Result.Iterations, coldPath.Result.Iterations, ignored.Result.Iterations)
		if err != nil || again.Result.Iterations > 1 || warmPath.Result.Iterations >= coldPath.Result.Iterations || !warmPath.Result.Converged {
			t.Errorf("%v: warm starts did not pay off (err %v)", k.Kind, err)
		}
		if k.Kind != kernel.Linear && ignored.Result.Iterations != coldPath.Result.Iterations {
			t.Errorf("%v: an Init fitted on other samples was not ignored", k.Kind)
		}
	}
}

// mustFit is Fit, failing the test on an error.
func mustFit(t testing.TB, sp space.Space, X []float64, m, n int, ys []int64, w []float64, opt Options) *Model {
	t.Helper()
	md, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// withThreads runs f with package parallel limited to the given number of goroutines.
func withThreads(threads int, f func()) {
	defer parallel.SetThreads(parallel.Threads())
	parallel.SetThreads(threads)
	f()
}

// TestCheckPartialFit is the rule the C ABI offers partial_fit by: every option PartialFit
// refuses before reading a chunk, and none it runs with.
func TestCheckPartialFit(t *testing.T) {
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 1}
	cases := []struct {
		name string
		mut  func(o *Options)
		want string // "" accepted
	}{
		{"linear auto", func(*Options) {}, ""},
		{"linear exact", func(o *Options) { o.Solver = Exact }, ""},
		{"linear sgd", func(o *Options) { o.Solver = SGD }, ""},
		{"rbf auto", func(o *Options) { o.Kernel = rbf }, ""},
		{"rbf sgd", func(o *Options) { o.Kernel, o.Solver = rbf, SGD }, ""},
		{"nystrom exact", func(o *Options) { o.Kernel, o.NComponents, o.Solver = rbf, 5, Exact }, ""},
		{"linear empirical", func(o *Options) { o.EmpiricalWeight = 0.5 }, ""},
		{"cg", func(o *Options) { o.Solver = CG }, "not by cg"},
		{"nystrom cg", func(o *Options) { o.Kernel, o.NComponents, o.Solver = rbf, 5, CG }, "not by cg"},
		{"rbf exact", func(o *Options) { o.Kernel, o.Solver = rbf, Exact }, `uses solver="sgd"`},
		{"rbf cg", func(o *Options) { o.Kernel, o.Solver = rbf, CG }, `uses solver="sgd"`},
		{"precomputed", func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.Precomputed} }, "precomputed"},
		{"sgd empirical", func(o *Options) { o.Solver, o.EmpiricalWeight = SGD, 0.5 }, "empirical_weight"},
		{"rbf empirical", func(o *Options) { o.Kernel, o.EmpiricalWeight = rbf, 0.5 }, "empirical_weight"},
	}
	for _, c := range cases {
		o := baseOptions()
		c.mut(&o)
		err := CheckPartialFit(o)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// A chunk whose weights are all subnormal is a part of the data when the chunks are solved
// exactly from their accumulated statistics, as a partition of a distributed fit is: after a
// chunk of normal weights it continues to Fit's model (it was refused for its largest weight,
// which Fit checks over all the data), and a first chunk of them alone weighs a subnormal total
// and is refused. SGD keeps no total: there such a chunk is refused alone, where it fitted an
// all-zero model (probe BK).
func TestPartialFitChunksOfSubnormalWeights(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 5)
	w := make([]float64, m)
	for i := range w {
		w[i] = 1
		if i >= m/2 {
			w[i] = 1e-310
		}
	}
	opt := baseOptions()
	opt.Solver = Exact
	ref := mustFit(t, sp, X, m, n, ys, w, opt)
	md := streamFit(t, nil, sp, X, n, ys, w, [][2]int{{0, m / 2}, {m / 2, m}}, opt)
	if diff := relDiff(md.Coef, ref.Coef); diff > 1e-12 {
		t.Errorf("coefficients differ from Fit's by %.3g (relative)", diff)
	}
	half := m / 2
	for _, c := range []struct {
		name string
		set  func(o *Options)
	}{
		{"exact, a first chunk", func(o *Options) { o.Solver = Exact }},
		{"linear sgd", func(o *Options) { o.Solver = SGD }},
		{"rbf", func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5} }},
	} {
		opt := baseOptions()
		c.set(&opt)
		_, err := PartialFit(nil, sp, X[half*n:], m-half, n, ys[half*sp.Width():], w[half:], opt)
		if err == nil || !strings.Contains(err.Error(), "subnormal") {
			t.Errorf("%s: got %v, want a refusal of the subnormal weights", c.name, err)
		}
	}
}
