package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// sgdGapTol bounds (J_sgd − J*)/(J(0) − J*) after sgdTestEpochs epochs on the small problems of
// TestSGDApproachesOptimum (measured: at most 4e-4, poly on permutations, whose large k(x, x)
// makes the steps small; most are near 1e-5).
const (
	sgdGapTol     = 1e-3
	sgdTestEpochs = 400
)

// SGD comes within sgdGapTol of the exact optimum, for linear and kernel models in every space,
// with sample weights (some zero).
func TestSGDApproachesOptimum(t *testing.T) {
	for _, sp := range testSpaces(t) {
		const m, n = 60, 4
		X, ys := synthetic(t, sp, m, n, 23)
		w := weights(rand.New(rand.NewPCG(7, 8)), m)
		w[3], w[10] = 0, 0
		p, _ := NewProblem(sp, ys, m, w, 0.5)
		for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3}, {Kind: kernel.Poly, Gamma: 0.3, Degree: 2, Coef0: 1}} {
			opt := baseOptions()
			opt.Kernel = k
			exact := mustFit(t, sp, X, m, n, ys, w, opt)
			opt.Solver, opt.MaxIter, opt.Tol = SGD, sgdTestEpochs, 1e-14
			t0 := time.Now()
			md := mustFit(t, sp, X, m, n, ys, w, opt)
			elapsed := time.Since(t0)
			jStar, j0 := exact.Result.Objective, p.Constant()
			gap := (md.Result.Objective - jStar) / (j0 - jStar)
			t.Logf("%s %v: J* = %.8g, SGD J = %.8g after %d epochs (%v), gap %.3g", sp.Kind(), k.Kind, jStar, md.Result.Objective,
				md.Result.Iterations, elapsed, gap)
			if !(gap >= -1e-12 && gap <= sgdGapTol) {
				t.Errorf("%s %v: SGD gap %.3g, want ≤ %g", sp.Kind(), k.Kind, gap, sgdGapTol)
			}
			// The reported objective is J at the returned model.
			var j float64
			if k.Kind == kernel.Linear {
				j = p.LinearObjective(mat.NewDense(m, n, X), true, md.Coef, nil)
			} else {
				j = kernelObjectiveOf(md, p, X)
			}
			if diff := md.Result.Objective - j; diff > 1e-9*j || diff < -1e-9*j {
				t.Errorf("%s %v: reported J %.12g, recomputed %.12g", sp.Kind(), k.Kind, md.Result.Objective, j)
			}
			if md.Steps != int64(md.Result.Iterations*m) {
				t.Errorf("%s %v: %d steps after %d epochs", sp.Kind(), k.Kind, md.Steps, md.Result.Iterations)
			}
		}
	}
}

// kernelObjectiveOf recomputes J of a kernel model over its training set (support = the samples
// with nonzero coefficients) with KernelObjective on the full Gram matrix.
func kernelObjectiveOf(md *Model, p *Problem, X []float64) float64 {
	m, d := p.dims()
	n := len(X) / m
	Xm := mat.NewDense(m, n, X)
	K := mat.NewDense(m, m, nil)
	md.Kernel.Gram(K, Xm, Xm)
	if md.Intercept {
		addConstant(K, 1)
	}
	// Γ over the samples: match support rows to training rows.
	A := mat.NewDense(d, m, nil)
	r, _ := md.Support.Dims()
	for s := 0; s < r; s++ {
		for i := 0; i < m; i++ {
			if mat.Equal(md.Support.RowView(s), Xm.RowView(i)) {
				for a := 0; a < d; a++ {
					A.Set(a, i, md.Dual.At(s, a))
				}
				break
			}
		}
	}
	return p.KernelObjective(K, A, nil)
}

// Truncation keeps at most τ examples in the expansion, in Fit and along a PartialFit stream.
func TestSGDTruncation(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n, tau = 90, 3, 17
	X, ys := synthetic(t, sp, m, n, 4)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	opt.Solver, opt.MaxIter, opt.Tau = SGD, 5, tau
	md := mustFit(t, sp, X, m, n, ys, nil, opt)
	if r, _ := md.Dual.Dims(); r > tau {
		t.Errorf("Fit: %d examples in the expansion, τ = %d", r, tau)
	}
	var prev *Model
	for _, c := range chunks(m, 4) {
		prev = streamFit(t, prev, sp, X, n, ys, nil, [][2]int{c}, opt)
		if r, _ := prev.Dual.Dims(); r > tau {
			t.Errorf("PartialFit: %d examples in the expansion after %d seen, τ = %d", r, prev.Seen, tau)
		}
	}
	// Without truncation a stream keeps every example it has seen (all weights are positive).
	opt.Tau = 0
	prev = nil
	for _, c := range chunks(m, 3) {
		prev = streamFit(t, prev, sp, X, n, ys, nil, [][2]int{c}, opt)
		if r, _ := prev.Dual.Dims(); int64(r) != prev.Seen || prev.Steps != prev.Seen {
			t.Errorf("PartialFit: %d examples in the expansion, %d steps after %d seen", r, prev.Steps, prev.Seen)
		}
	}
}

// The same seed gives the same model bit for bit; another seed another order, hence another model.
func TestSGDDeterministic(t *testing.T) {
	sp, _ := space.NewMulticlass(4)
	X, ys := synthetic(t, sp, 50, 3, 6)
	params := func(md *Model) *mat.Dense {
		if md.Coef != nil {
			return md.Coef
		}
		return md.Dual
	}
	const m, n = 50, 3
	opt := baseOptions()
	opt.Solver, opt.MaxIter = SGD, 7
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.5}} {
		opt.Kernel, opt.Seed = k, 42
		a, _ := Fit(sp, X, m, n, ys, nil, opt)
		b, _ := Fit(sp, X, m, n, ys, nil, opt)
		opt.Seed = 43
		c, _ := Fit(sp, X, m, n, ys, nil, opt)
		if !mat.Equal(params(a), params(b)) {
			t.Errorf("%v: two fits with the same seed differ", k.Kind)
		}
		if mat.Equal(params(a), params(c)) {
			t.Errorf("%v: fits with seeds 42 and 43 are identical", k.Kind)
		}
	}
}

// Progress is called once per epoch, and returning false cancels; Tol stops early.
func TestSGDProgressAndTol(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	opt := baseOptions()
	opt.Solver, opt.MaxIter = SGD, 30
	var epochs []int
	opt.Progress = func(it int, _, _ float64) bool { epochs = append(epochs, it); return true }
	md, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil || md.Result.Iterations != 30 || len(epochs) != 30 || epochs[29] != 30 {
		t.Errorf("progress calls %v, %d epochs, err %v", epochs, md.Result.Iterations, err)
	}
	opt.Progress = func(it int, _, _ float64) bool { return it < 3 }
	if _, err := Fit(sp, X, m, n, ys, nil, opt); !errors.Is(err, ErrCancelled) {
		t.Errorf("cancel: err %v", err)
	}
	opt.Progress, opt.Tol, opt.MaxIter = nil, 1e-3, 1000
	md, _ = Fit(sp, X, m, n, ys, nil, opt)
	if !md.Result.Converged || md.Result.Iterations >= 1000 || md.Result.RelGrad > 1e-3 {
		t.Errorf("tol 1e-3: %d epochs, relative change %.3g, converged %v", md.Result.Iterations, md.Result.RelGrad, md.Result.Converged)
	}
}

// Steps too small to move the model do not pass the tolerance stop as converged (eta0 = 1e-300
// stopped after one epoch at J(0), reported converged; alpha = 1e8 left the intercept at 0), and
// weights whose curvature bound overflows are refused (their steps, capped at 1/L, were zero: an
// all-zero model, "converged").
func TestSGDStallsAreNotConvergence(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 8)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.5}} {
		opt := baseOptions()
		opt.Kernel, opt.Solver, opt.MaxIter, opt.Tol, opt.Eta0 = k, SGD, 20, 1e-3, 1e-300
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil || md.Result.Converged {
			t.Errorf("%v, eta0 = 1e-300: converged after %d epochs (err %v)", k.Kind, md.Result.Iterations, err)
		}
		// A linear model checks its gradient at the end; alpha = 1e8 froze the intercept, whose
		// steps are capped at 1/(2α), while J moved (the weights shrank) and met the tolerance.
		if k.Kind == kernel.Linear {
			opt.Eta0, opt.Alpha = 0, 1e8
			if md, err := Fit(sp, X, m, n, ys, nil, opt); err != nil || md.Result.Converged {
				t.Errorf("linear, alpha = 1e8: converged after %d epochs (err %v)", md.Result.Iterations, err)
			}
			opt.Alpha = baseOptions().Alpha
		}
		opt.Eta0 = 0
		w := make([]float64, m)
		for i := range w {
			w[i] = 1e307
		}
		if _, err := Fit(sp, X, m, n, ys, w, opt); err == nil || !strings.Contains(err.Error(), "sample_weight") {
			t.Errorf("%v, weights 1e307: %v, want an error naming sample_weight", k.Kind, err)
		}
	}
}

// A precomputed kernel works with SGD too, and gives the rbf model's scores when it is that
// kernel's Gram matrix.
func TestSGDPrecomputed(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 40, 3
	X, ys := synthetic(t, sp, m, n, 10)
	Xm := mat.NewDense(m, n, X)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.4}
	K := mat.NewDense(m, m, nil)
	rbf.Gram(K, Xm, Xm)
	opt := baseOptions()
	opt.Solver, opt.MaxIter, opt.Kernel = SGD, 20, rbf
	a := mustFit(t, sp, X, m, n, ys, nil, opt)
	opt.Kernel = kernel.Kernel{Kind: kernel.Precomputed}
	b := mustFit(t, sp, K.RawMatrix().Data, m, m, ys, nil, opt)
	ua, ub := make([]float64, m*3), make([]float64, m*3)
	_ = a.Decision(X, m, n, ua)
	_ = b.Decision(K.RawMatrix().Data, m, m, ub)
	if diff := maxAbsDiff(mat.NewDense(m, 3, ua), mat.NewDense(m, 3, ub)); diff > 1e-9 {
		t.Errorf("precomputed and rbf SGD scores differ by %.3g", diff)
	}
}

// A kernel stream with SGD lowers J over all the data below J(0) = ½Σs, and an epoch of SGD
// warm-started from a converged SGD fit stays near the optimum.
func TestSGDStreamAndWarmStart(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n = 200, 3
	X, ys := synthetic(t, sp, m, n, 12)
	p, _ := NewProblem(sp, ys, m, nil, 0.5)
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
	md := streamFit(t, nil, sp, X, n, ys, nil, chunks(m, 5), opt)
	exact, _ := Fit(sp, X, m, n, ys, nil, opt)
	j := kernelObjectiveOf(md, p, X)
	t.Logf("one SGD pass in 5 chunks: J = %.6g, J(0) = %.6g, J* = %.6g", j, p.Constant(), exact.Result.Objective)
	if !(j < p.Constant()) {
		t.Errorf("the stream did not lower J: %.6g ≥ J(0) = %.6g", j, p.Constant())
	}
	opt.Solver, opt.MaxIter = SGD, 1
	cold, _ := Fit(sp, X, m, n, ys, nil, opt)
	opt.MaxIter = 100
	conv, _ := Fit(sp, X, m, n, ys, nil, opt)
	opt.Init, opt.MaxIter = conv, 1
	warm, _ := Fit(sp, X, m, n, ys, nil, opt)
	gap := func(md *Model) float64 {
		return (md.Result.Objective - exact.Result.Objective) / (p.Constant() - exact.Result.Objective)
	}
	t.Logf("gap after one epoch %.3g, after 100 epochs %.3g, after one more warm-started epoch %.3g", gap(cold), gap(conv), gap(warm))
	if gap(warm) > 1e-2 || gap(warm) > gap(cold)/10 || warm.Steps != conv.Steps+m {
		t.Errorf("one epoch warm-started near the optimum: gap %.3g (cold epoch %.3g), %d steps", gap(warm), gap(cold), warm.Steps)
	}
}

// sgdReference is kernel SGD done literally, the check on kernelSGD's implicit shrink and
// averaging and its block scores: a coefficient row per key (old support rows, then the chunk's
// examples), all of them shrunk at every step, the sum of the iterates kept explicitly, and each
// step's scores from a row of the full kernel matrix K (+1 with an intercept) between the keys.
type sgdReference struct {
	p      *Problem
	K      *mat.Dense
	nOld   int
	tau    int64
	coef   *mat.Dense
	active []bool
	last   []int64
	sum    *mat.Dense // nil until average
	count  float64
}

func newSGDReference(p *Problem, kern kernel.Kernel, intercept bool, X, old, oldCoef *mat.Dense, steps int64, tau int) *sgdReference {
	m, n := X.Dims()
	_, d := p.dims()
	nOld := 0
	if old != nil {
		nOld, _ = old.Dims()
	}
	keys := nOld + m
	r := &sgdReference{p: p, nOld: nOld, tau: int64(tau), coef: mat.NewDense(keys, d, nil),
		active: make([]bool, keys), last: make([]int64, keys)}
	if kern.Kind == kernel.Precomputed {
		r.K = mat.DenseCopyOf(X)
	} else {
		in := mat.NewDense(keys, n, nil)
		for j := 0; j < nOld; j++ {
			in.SetRow(j, old.RawRowView(j))
		}
		for i := 0; i < m; i++ {
			in.SetRow(nOld+i, X.RawRowView(i))
		}
		r.K = mat.NewDense(keys, keys, nil)
		kern.Gram(r.K, in, in)
	}
	if intercept {
		addConstant(r.K, 1)
	}
	for j := 0; j < nOld; j++ {
		r.active[j], r.last[j] = true, steps-int64(nOld-1-j)
		r.coef.SetRow(j, oldCoef.RawRowView(j))
	}
	return r
}

func (r *sgdReference) scores(i int, u []float64) {
	clear(u)
	for k, on := range r.active {
		if on {
			floats.AddScaled(u, r.K.At(r.nOld+i, k), r.coef.RawRowView(k))
		}
	}
}

func (r *sgdReference) kappa(i int) float64 { return r.K.At(r.nOld+i, r.nOld+i) }

func (r *sgdReference) step(i int, t int64, shrink float64, c []float64) {
	r.coef.Scale(shrink, r.coef)
	if floats.Norm(c, 1) != 0 {
		key := r.nOld + i
		r.active[key], r.last[key] = true, t
		floats.Add(r.coef.RawRowView(key), c)
	}
	for k, on := range r.active {
		if on && r.tau > 0 && r.last[k] <= t-r.tau {
			r.active[k] = false
			clear(r.coef.RawRowView(k))
		}
	}
	if r.sum != nil {
		r.sum.Add(r.sum, r.coef)
		r.count++
	}
}

func (r *sgdReference) average() {
	if r.tau == 0 {
		r.sum, r.count = mat.DenseCopyOf(r.coef), 1
	}
}

// returned is the returned iterate's coefficient matrix, a row per key.
func (r *sgdReference) returned() *mat.Dense {
	if r.sum == nil {
		return r.coef
	}
	var mean mat.Dense
	mean.Scale(1/r.count, r.sum)
	return &mean
}

func (r *sgdReference) objective() float64 {
	A := r.returned()
	var KA mat.Dense
	KA.Mul(r.K, A)
	keys, d := A.Dims()
	U := mat.DenseCopyOf(KA.Slice(r.nOld, keys, 0, d))
	return r.p.lossGrad(U, nil) + r.p.Alpha*mat.Sum(elemMul(A, &KA))
}

// Kernel SGD follows the literal algorithm (sgdReference) step for step: the same J after 1, 2
// and 5 epochs (averaging from the second) and the same coefficients, to rounding, for the rbf,
// poly and precomputed kernels, with and without intercept and truncation, with sample weights
// (some zero), with blocks that do not divide m (and of one example, and larger than m), with a
// previous model's support (PartialFit), and with the scale folded into the coefficients often:
// forced by a high sgdMinScale, or by the step cap (a large α and Eta0) making the scale fall
// geometrically, which without sgdMaxDrift would cancel the digits of the average.
func TestKernelSGDMatchesReference(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const n = 3
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.4}
	poly := kernel.Kernel{Kind: kernel.Poly, Gamma: 0.3, Degree: 3, Coef0: 1}
	precomputed := kernel.Kernel{Kind: kernel.Precomputed}
	r := rand.New(rand.NewPCG(9, 10))
	old, oldCoef := randDense(r, 12, n), randDense(r, 12, sp.Dim())
	oldCoef.Scale(0.05, oldCoef)
	for _, c := range []struct {
		name      string
		kern      kernel.Kernel
		intercept bool
		tau       int
		block     int // 0: sgdBlockSize
		old       bool
		m         int // 0: 45
		alpha     float64
		eta0      float64
		minScale  float64
	}{
		{name: "rbf", kern: rbf, block: 7},
		{name: "rbf intercept", kern: rbf, intercept: true, block: 16},
		{name: "rbf one block", kern: rbf},
		{name: "poly intercept", kern: poly, intercept: true, block: 13},
		{name: "poly steps", kern: poly, block: 1},
		{name: "rbf truncated", kern: rbf, intercept: true, tau: 17},
		{name: "precomputed", kern: precomputed, intercept: true, block: 10},
		{name: "precomputed truncated", kern: precomputed, tau: 9},
		{name: "old support", kern: rbf, intercept: true, block: 8, old: true},
		{name: "old support truncated", kern: poly, tau: 20, old: true},
		{name: "folds", kern: rbf, block: 6, minScale: 0.9},
		{name: "folds truncated", kern: rbf, tau: 25, minScale: 0.9},
		{name: "step cap", kern: rbf, intercept: true, block: 11, alpha: 1000, eta0: 50},
		// More slots than a group of chunks in products.
		{name: "rbf groups", kern: rbf, intercept: true, block: 100, m: 1300},
		{name: "precomputed groups", kern: precomputed, block: 99, m: 1100, minScale: 0.9},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.minScale > 0 {
				defer func(v float64) { sgdMinScale = v }(sgdMinScale)
				sgdMinScale = c.minScale
			}
			m, alpha := 45, 0.5
			if c.m > 0 {
				m = c.m
			}
			if c.alpha > 0 {
				alpha = c.alpha
			}
			X, ys := synthetic(t, sp, m, n, 31)
			w := weights(rand.New(rand.NewPCG(5, 6)), m)
			w[4], w[17], w[18] = 0, 0, 0
			p, err := NewProblem(sp, ys, m, w, alpha)
			if err != nil {
				t.Fatal(err)
			}
			opt := baseOptions()
			opt.Kernel, opt.Intercept, opt.Tau, opt.Eta0, opt.Seed = c.kern, c.intercept, c.tau, c.eta0, 77
			in := mat.NewDense(m, n, X)
			if c.kern.Kind == kernel.Precomputed {
				gram := mat.NewDense(m, m, nil)
				rbf.Gram(gram, in, in)
				in = gram
			}
			var o, oc *mat.Dense
			var steps int64
			if c.old {
				o, oc, steps = old, oldCoef, 30
			}
			ks := newKernelSGD(p, c.kern, c.intercept, in, o, oc, steps, c.tau)
			if c.block > 0 {
				ks.blk.size = c.block
			}
			ref := newSGDReference(p, c.kern, c.intercept, in, o, oc, steps, c.tau)
			mEff := float64(m + ks.nOld)
			run, refRun := newSGDRun(p, ks, mEff, steps, &opt), newSGDRun(p, ref, mEff, steps, &opt)
			for ep := 1; ep <= 5; ep++ {
				if ep >= 2 && ep&(ep-1) == 0 {
					ks.average()
					ref.average()
				}
				run.epoch(ks, nil)
				refRun.epoch(ref, nil)
				if ep != 1 && ep != 2 && ep != 5 {
					continue
				}
				j, jRef := ks.objective(), ref.objective()
				if diff := math.Abs(j-jRef) / math.Abs(jRef); !(diff <= 1e-9) {
					t.Errorf("epoch %d: J %.15g, reference %.15g (relative difference %.3g)", ep, j, jRef, diff)
				}
				if diff := coefDiff(ks, ref); !(diff <= 1e-9) {
					t.Errorf("epoch %d: coefficients differ from the reference's by %.3g (relative)", ep, diff)
				}
			}
		})
	}
}

// coefDiff is the largest difference between the coefficients kernelSGD returns and the
// reference's, relative to the largest of the latter.
func coefDiff(ks *kernelSGD, ref *sgdReference) float64 {
	_, dual := ks.expansion(false)
	A := ref.returned()
	keys, d := A.Dims()
	want := mat.NewDense(keys, d, nil)
	if ks.inputs == nil { // precomputed: dual is over the chunk's samples
		want = A
	} else {
		r := 0
		for k, on := range ref.active {
			if on {
				want.SetRow(r, A.RawRowView(k))
				r++
			}
		}
		want = mat.DenseCopyOf(want.Slice(0, max(1, r), 0, d))
	}
	if rd, _ := dual.Dims(); rd != want.RawMatrix().Rows {
		return math.Inf(1)
	}
	return maxAbsDiff(dual, want) / math.Max(mat.Norm(want, math.Inf(1)), math.SmallestNonzeroFloat64)
}

// J after every epoch costs about as much as the epoch: SGD reports it (and its relative change)
// to Progress only when the tolerance stop (Tol > 0) or TraceObjective needs it, and NaN
// otherwise; Result.Objective is J at the returned model either way. Tol = 0 is SGD's alone.
func TestSGDTraceObjective(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n, epochs = 40, 3, 4
	X, ys := synthetic(t, sp, m, n, 14)
	p, _ := NewProblem(sp, ys, m, nil, 0.5)
	for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.5}} {
		for _, c := range []struct {
			tol          float64
			trace, wantJ bool
		}{{0, false, false}, {0, true, true}, {1e-12, false, true}} {
			opt := baseOptions()
			opt.Kernel, opt.Solver, opt.MaxIter, opt.Tol, opt.TraceObjective = k, SGD, epochs, c.tol, c.trace
			var reported []float64
			opt.Progress = func(_ int, j, rel float64) bool { reported = append(reported, j, rel); return true }
			md := mustFit(t, sp, X, m, n, ys, nil, opt)
			name := fmt.Sprintf("%v, tol %g, trace %v", k.Kind, c.tol, c.trace)
			if len(reported) != 2*epochs {
				t.Fatalf("%s: %d progress values after %d epochs", name, len(reported), epochs)
			}
			for _, v := range reported {
				if math.IsNaN(v) == c.wantJ {
					t.Errorf("%s: progress reported %v", name, reported)
					break
				}
			}
			var j float64
			if k.Kind == kernel.Linear {
				j = p.LinearObjective(mat.NewDense(m, n, X), true, md.Coef, nil)
			} else {
				j = kernelObjectiveOf(md, p, X)
			}
			if diff := math.Abs(md.Result.Objective - j); !(diff <= 1e-9*j) {
				t.Errorf("%s: reported J %.12g, recomputed %.12g", name, md.Result.Objective, j)
			}
			if c.wantJ && reported[2*epochs-2] != md.Result.Objective {
				t.Errorf("%s: J of the last epoch %.12g, result %.12g", name, reported[2*epochs-2], md.Result.Objective)
			}
			if !c.wantJ && (!math.IsNaN(md.Result.RelGrad) || md.Result.Converged || md.Result.Iterations != epochs) {
				t.Errorf("%s: result %+v", name, md.Result)
			}
		}
	}
	opt := baseOptions()
	opt.Tol = 0
	for _, s := range []Solver{Auto, Exact, CG, SGD} {
		opt.Solver = s
		if err := opt.Validate(); (err == nil) != (s == SGD) {
			t.Errorf("tol 0 with solver %v: error %v", s, err)
		}
	}
}
