package ridge

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/kernel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Stochastic gradient descent in the RKHS (thesis §5.3.2, after Kivinen, Smola & Williamson).
//
// With m examples, J = α‖f‖² + Σ_i ℓ_i(f(x_i)) is the mean over i of J_i = α‖f‖² + m·ℓ_i(f(x_i)),
// whose gradient is 2αf + m·g_i k(x_i, ·), g_i = ∂ℓ_i/∂u = s_i (S u − (1 − δ_iᵀu) δ_i). Step t picks
// an example i_t (a fresh random order every epoch) and sets
//
//	f ← (1 − 2αη_t) f − η_t m g_{i_t} k(x_{i_t}, ·),
//
// which for a kernel expansion f = Σ_j c_j k(x_j, ·) shrinks every coefficient and adds to (or
// creates) that of x_{i_t}; a linear model is the same with k(x, ·) = x̃ (its intercept is not
// shrunk, being unpenalised). The step is the thesis' η_t = p/(αt) (p = Options.Eta0, default ½:
// η_t = 1/(μt) for the strong convexity μ = 2α of J_i), capped at 1/L, where L bounds the curvature
// of every J_i: 2α + m s_i λ_max(S + δ_iδ_iᵀ) k(x_i, x_i). The thesis leaves p to be tuned; without
// the cap, the first steps of a loss whose curvature grows with m overshoot and diverge. The cap
// also keeps 1 − 2αη_t in [0, 1), as the thesis requires.
//
// Truncation (Options.Tau = τ > 0): coefficients last updated τ or more steps ago are dropped, so
// the expansion never holds more than τ examples and a step costs O(τ(n + d)) instead of O(m(n+d)).
//
// Averaging: without truncation, Fit returns the mean of the iterates since the last epoch whose
// number is a power of two (2, 4, 8, …; suffix averaging), so that the mean always spans the last
// half of the run or more and forgets the early, far-off iterates. On small problems of every
// space it tested, it was as close to the optimum as the last iterate after 1000 epochs or closer,
// and up to a hundred times closer after 100 (whole-run averaging lagged behind both). With
// truncation the mean would hold more than τ examples, so the last iterate is returned.
//
// Truncation is the thesis' device for long streams seen once (PartialFit): an example's
// coefficient accumulates over its visits, and in a multi-epoch Fit with τ below 2m (the longest
// gap between two visits of an example) coefficients are dropped between visits, which keeps J far
// from the optimum (m = 100, τ = 50: J − J* about 0.9·(J(0) − J*)). Use it to bound the cost, not
// to approach the batch solution.
//
// Stopping: after every epoch J is evaluated at the returned iterate (it costs about as much as an
// epoch); the fit stops when it changed by at most Tol·|J| over the epoch, or after MaxIter epochs.
// Result.RelGrad holds that relative change: the full gradient of a kernel model would cost O(m²n).

// sgdSeedStream separates the example order from the other uses of Options.Seed.
const sgdSeedStream = 0x7367_6400

// sgdLearner is the function SGD updates: a linear model or a kernel expansion over one chunk of
// examples (the rows of the problem).
type sgdLearner interface {
	// scores writes f(x_i) into u.
	scores(i int, u []float64)
	// kappa is k(x_i, x_i) for the kernel in use (‖x̃_i‖² for a linear model).
	kappa(i int) float64
	// step sets f ← shrink·f + c·k(x_i, ·) at step t (c may be zero).
	step(i int, t int64, shrink float64, c []float64)
	// average starts averaging the iterates (including the current one).
	average()
	// objective returns J over the chunk at the returned iterate (the average, when averaging).
	objective() float64
}

// sgdRun is the step-size schedule and the example order of one call.
type sgdRun struct {
	p     *Problem
	mEff  float64 // m of J_i: the examples J sums over
	eta0  float64
	L     float64 // curvature bound: η_t ≤ 1/L
	steps int64   // steps taken before (PartialFit continues the schedule)
	rng   *rand.Rand
}

func newSGDRun(p *Problem, ln sgdLearner, mEff float64, steps int64, opt *Options) *sgdRun {
	m, d := p.Delta.Dims()
	var sNorm float64 // the ∞-norm of S bounds its largest eigenvalue
	for a := 0; a < d; a++ {
		var row float64
		for b := 0; b < d; b++ {
			row += math.Abs(p.S.At(a, b))
		}
		sNorm = math.Max(sNorm, row)
	}
	L := 2 * p.Alpha
	for i := 0; i < m; i++ {
		di := p.Delta.RawRowView(i)
		L = math.Max(L, 2*p.Alpha+mEff*p.Weight[i]*(sNorm+floats.Dot(di, di))*ln.kappa(i))
	}
	return &sgdRun{p: p, mEff: mEff, eta0: opt.eta0(), L: L, steps: steps,
		rng: rand.New(rand.NewPCG(opt.Seed, sgdSeedStream^uint64(steps)))}
}

// epoch makes one pass over the examples in a random order.
func (r *sgdRun) epoch(ln sgdLearner) {
	m, d := r.p.Delta.Dims()
	u, su, g := make([]float64, d), make([]float64, d), make([]float64, d)
	S := r.p.S.RawSymmetric()
	for _, i := range r.rng.Perm(m) {
		r.steps++
		eta := math.Min(r.eta0/(r.p.Alpha*float64(r.steps)), 1/r.L)
		ln.scores(i, u)
		blas64.Symv(1, S, blas64.Vector{N: d, Inc: 1, Data: u}, 0, blas64.Vector{N: d, Inc: 1, Data: su})
		r.p.exampleLoss(i, u, su, g)
		floats.Scale(-eta*r.mEff, g)
		ln.step(i, r.steps, 1-2*r.p.Alpha*eta, g)
	}
}

// fit runs up to opt.MaxIter epochs (Fit), suffix-averaging unless noAverage.
func (r *sgdRun) fit(ln sgdLearner, opt *Options, noAverage bool) (Result, error) {
	prev := ln.objective()
	res := Result{}
	for ep := 1; ep <= opt.MaxIter; ep++ {
		if ep >= 2 && ep&(ep-1) == 0 && !noAverage {
			ln.average()
		}
		r.epoch(ln)
		j := ln.objective()
		res = Result{Iterations: ep, Objective: j, RelGrad: math.Abs(prev-j) / math.Max(math.Abs(j), math.SmallestNonzeroFloat64)}
		res.Converged = res.RelGrad <= opt.Tol
		if opt.Progress != nil && !opt.Progress(ep, j, res.RelGrad) {
			return res, ErrCancelled
		}
		if res.Converged {
			break
		}
		prev = j
	}
	return res, nil
}

// pass makes the single epoch of PartialFit, reporting J over the chunk and its relative change.
func (r *sgdRun) pass(ln sgdLearner, opt *Options) (Result, error) {
	before := ln.objective()
	r.epoch(ln)
	j := ln.objective()
	res := Result{Iterations: 1, Objective: j, RelGrad: math.Abs(before-j) / math.Max(math.Abs(j), math.SmallestNonzeroFloat64)}
	res.Converged = res.RelGrad <= opt.Tol
	if opt.Progress != nil && !opt.Progress(1, j, res.RelGrad) {
		return res, ErrCancelled
	}
	return res, nil
}

// averager keeps the running mean of the iterates in cur: avg += (cur − avg)/count.
type averager struct {
	avg   []float64 // nil until average() is called
	count float64
}

func (a *averager) start(cur []float64) {
	a.avg = append(make([]float64, 0, cap(cur)), cur...)
	a.count = 1
}

// update folds the current iterate (the first len(cur) values; the rest were added since and
// their history is zero) into the mean.
func (a *averager) update(cur []float64) {
	if a.avg == nil {
		return
	}
	a.count++
	if len(a.avg) < len(cur) {
		a.avg = append(a.avg, make([]float64, len(cur)-len(a.avg))...)
	}
	f := 1 / a.count
	for i, v := range cur {
		a.avg[i] += f * (v - a.avg[i])
	}
}

// linearSGD is a linear model W ((n+1)×d with an intercept, n×d without) on the rows of des.X.
type linearSGD struct {
	p   *Problem
	des design
	W   *mat.Dense
	avg averager
}

func (l *linearSGD) scores(i int, u []float64) {
	_, n := l.des.X.Dims()
	x := l.des.X.RawRowView(i)
	W := l.W.RawMatrix()
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data},
		blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: len(u), Inc: 1, Data: u})
	if l.des.intercept {
		floats.Add(u, l.W.RawRowView(n))
	}
}

func (l *linearSGD) kappa(i int) float64 {
	x := l.des.X.RawRowView(i)
	k := floats.Dot(x, x)
	if l.des.intercept {
		k++
	}
	return k
}

func (l *linearSGD) step(i int, _ int64, shrink float64, c []float64) {
	_, n := l.des.X.Dims()
	W := l.W.RawMatrix()
	top := blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data[:n*W.Stride]}
	floats.Scale(shrink, top.Data)
	blas64.Ger(1, blas64.Vector{N: n, Inc: 1, Data: l.des.X.RawRowView(i)}, blas64.Vector{N: len(c), Inc: 1, Data: c}, top)
	if l.des.intercept {
		floats.Add(l.W.RawRowView(n), c)
	}
	l.avg.update(W.Data)
}

func (l *linearSGD) average() { l.avg.start(l.W.RawMatrix().Data) }

// result is the iterate the fit returns.
func (l *linearSGD) result() *mat.Dense {
	if l.avg.avg == nil {
		return l.W
	}
	k, d := l.W.Dims()
	return mat.NewDense(k, d, l.avg.avg)
}

func (l *linearSGD) objective() float64 {
	return l.p.LinearObjective(l.des.X, l.des.intercept, l.result(), nil)
}

// kernelSGD is a kernel expansion over the chunk's inputs X (for a precomputed kernel, X holds
// the kernel values between the chunk and itself) and, for PartialFit, the support inputs of the
// previous model. Example keys number the old support rows first, then the chunk's rows; every
// active example has a slot, slots being packed at the front.
type kernelSGD struct {
	p         *Problem
	kern      kernel.Kernel
	intercept bool
	X         *mat.Dense
	xn        []float64
	old       *mat.Dense // support rows of the previous model (nil for none)
	nOld      int        // rows of old: keys below nOld are old support rows
	tau       int64

	keys   []int
	last   []int64    // the step that last updated each slot
	rows   *mat.Dense // support inputs by slot (nil for a precomputed kernel)
	rnorms []float64
	coef   *mat.Dense // coefficients by slot
	slotOf []int      // key → slot, −1 when inactive
	size   int
	queue  []sgdUpdate // updates in time order (with truncation only)
	kv     []float64
	avg    averager
}

type sgdUpdate struct {
	t   int64
	key int
}

// newKernelSGD sets up the expansion; old (rows) and oldCoef are the previous model's support and
// dual coefficients, oldest update first, which are given the update times steps−len+1 … steps.
func newKernelSGD(p *Problem, kern kernel.Kernel, intercept bool, X, old, oldCoef *mat.Dense, steps int64, tau int) *kernelSGD {
	m, n := X.Dims()
	_, d := p.Delta.Dims()
	nOld := 0
	if old != nil {
		nOld, _ = old.Dims()
	}
	capacity := nOld + m
	ks := &kernelSGD{p: p, kern: kern, intercept: intercept, X: X, old: old, nOld: nOld, tau: int64(tau),
		keys: make([]int, capacity), last: make([]int64, capacity), coef: mat.NewDense(capacity, d, nil),
		slotOf: make([]int, capacity), kv: make([]float64, capacity)}
	if kern.Kind != kernel.Precomputed {
		ks.xn = kernel.SquaredNorms(X)
		ks.rows = mat.NewDense(capacity, n, nil)
		ks.rnorms = make([]float64, capacity)
	}
	for i := range ks.slotOf {
		ks.slotOf[i] = -1
	}
	for j := 0; j < nOld; j++ {
		t := steps - int64(nOld-1-j)
		ks.activate(j, t)
		copy(ks.coef.RawRowView(ks.slotOf[j]), oldCoef.RawRowView(j))
		ks.touched(j, t)
	}
	return ks
}

// input returns the input row of key and its squared norm.
func (ks *kernelSGD) input(key int) ([]float64, float64) {
	if key < ks.nOld {
		row := ks.old.RawRowView(key)
		return row, floats.Dot(row, row)
	}
	return ks.X.RawRowView(key - ks.nOld), ks.xn[key-ks.nOld]
}

// activate gives key a slot with a zero coefficient.
func (ks *kernelSGD) activate(key int, t int64) {
	s := ks.size
	ks.size++
	ks.keys[s], ks.last[s], ks.slotOf[key] = key, t, s
	clear(ks.coef.RawRowView(s))
	if ks.rows != nil {
		row, norm := ks.input(key)
		copy(ks.rows.RawRowView(s), row)
		ks.rnorms[s] = norm
	}
}

// remove frees slot s, moving the last slot into it.
func (ks *kernelSGD) remove(s int) {
	e := ks.size - 1
	ks.slotOf[ks.keys[s]] = -1
	if s != e {
		ks.keys[s], ks.last[s] = ks.keys[e], ks.last[e]
		ks.slotOf[ks.keys[s]] = s
		copy(ks.coef.RawRowView(s), ks.coef.RawRowView(e))
		if ks.rows != nil {
			copy(ks.rows.RawRowView(s), ks.rows.RawRowView(e))
			ks.rnorms[s] = ks.rnorms[e]
		}
	}
	ks.size--
}

// kernelValue is k(a, b) given ⟨a, b⟩ and the squared norms.
func kernelValue(k kernel.Kernel, dot, na, nb float64) float64 {
	switch k.Kind {
	case kernel.RBF:
		return math.Exp(-k.Gamma * math.Max(0, na+nb-2*dot))
	case kernel.Poly:
		return math.Pow(k.Gamma*dot+k.Coef0, float64(k.Degree))
	}
	return dot
}

func (ks *kernelSGD) plus() float64 {
	if ks.intercept {
		return 1
	}
	return 0
}

func (ks *kernelSGD) kappa(i int) float64 {
	if ks.rows == nil {
		return ks.X.At(i, i) + ks.plus()
	}
	return kernelValue(ks.kern, ks.xn[i], ks.xn[i], ks.xn[i]) + ks.plus()
}

func (ks *kernelSGD) scores(i int, u []float64) {
	e := ks.size
	kv := ks.kv[:e]
	if ks.rows == nil {
		x := ks.X.RawRowView(i)
		for s, key := range ks.keys[:e] {
			kv[s] = x[key] + ks.plus()
		}
	} else {
		_, n := ks.X.Dims()
		R := ks.rows.RawMatrix()
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: e, Cols: n, Stride: R.Stride, Data: R.Data},
			blas64.Vector{N: n, Inc: 1, Data: ks.X.RawRowView(i)}, 0, blas64.Vector{N: e, Inc: 1, Data: kv})
		for s, v := range kv {
			kv[s] = kernelValue(ks.kern, v, ks.rnorms[s], ks.xn[i]) + ks.plus()
		}
	}
	C := ks.coef.RawMatrix()
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: e, Cols: C.Cols, Stride: C.Stride, Data: C.Data},
		blas64.Vector{N: e, Inc: 1, Data: kv}, 0, blas64.Vector{N: len(u), Inc: 1, Data: u})
}

func (ks *kernelSGD) step(i int, t int64, shrink float64, c []float64) {
	_, d := ks.coef.Dims()
	floats.Scale(shrink, ks.coef.RawMatrix().Data[:ks.size*d])
	if floats.Norm(c, 1) != 0 {
		key := ks.nOld + i
		if ks.slotOf[key] < 0 {
			ks.activate(key, t)
		}
		floats.Add(ks.coef.RawRowView(ks.slotOf[key]), c)
		ks.touched(key, t)
	}
	if ks.tau > 0 {
		h := 0
		for ; h < len(ks.queue) && ks.queue[h].t <= t-ks.tau; h++ {
			if s := ks.slotOf[ks.queue[h].key]; s >= 0 && ks.last[s] == ks.queue[h].t {
				ks.remove(s)
			}
		}
		if h > 0 {
			ks.queue = append(ks.queue[:0], ks.queue[h:]...)
		}
	}
	ks.avg.update(ks.coef.RawMatrix().Data[:ks.size*d])
}

// touched records that key was updated at step t; the queue of updates exists for truncation only.
func (ks *kernelSGD) touched(key int, t int64) {
	ks.last[ks.slotOf[key]] = t
	if ks.tau > 0 {
		ks.queue = append(ks.queue, sgdUpdate{t, key})
	}
}

// chunkRows is the number of examples in the chunk.
func (ks *kernelSGD) chunkRows() int {
	m, _ := ks.X.Dims()
	return m
}

func (ks *kernelSGD) average() {
	if ks.tau > 0 {
		return
	}
	_, d := ks.coef.Dims()
	ks.avg.start(ks.coef.RawMatrix().Data[:ks.size*d])
}

// expansion returns the support inputs and coefficients of the returned iterate, ordered by their
// last update, oldest first, when byRecency (PartialFit, whose next call truncates the oldest
// first), else by key: the old support rows, then the chunk's examples in their order (Fit, so
// that a later warm start on the same inputs pairs them with X). For a precomputed kernel the
// coefficients are scattered to the chunk's samples instead (m×d) and the support is nil.
func (ks *kernelSGD) expansion(byRecency bool) (support, dual *mat.Dense) {
	_, d := ks.coef.Dims()
	coef := ks.coef.RawMatrix().Data
	if ks.avg.avg != nil {
		coef = ks.avg.avg
	}
	order := make([]int, ks.size)
	for s := range order {
		order[s] = s
	}
	if byRecency {
		sort.SliceStable(order, func(a, b int) bool { return ks.last[order[a]] < ks.last[order[b]] })
	} else {
		sort.Slice(order, func(a, b int) bool { return ks.keys[order[a]] < ks.keys[order[b]] })
	}
	if ks.rows == nil {
		dual = mat.NewDense(ks.chunkRows(), d, nil)
		for _, s := range order {
			copy(dual.RawRowView(ks.keys[s]), coef[s*d:(s+1)*d])
		}
		return nil, dual
	}
	_, n := ks.X.Dims()
	support, dual = mat.NewDense(max(1, ks.size), n, nil), mat.NewDense(max(1, ks.size), d, nil)
	for r, s := range order {
		copy(support.RawRowView(r), ks.rows.RawRowView(s))
		copy(dual.RawRowView(r), coef[s*d:(s+1)*d])
	}
	return support, dual
}

func (ks *kernelSGD) objective() float64 {
	support, dual := ks.expansion(false)
	m, d := ks.p.Delta.Dims()
	U := mat.NewDense(m, d, nil)
	if support == nil { // precomputed: the chunk is the training set, and ‖f‖² = ⟨Γ, (K+1)Γ⟩
		expansionScores(ks.kern, ks.intercept, ks.X, nil, nil, dual, U)
		return ks.p.lossGrad(U, nil) + ks.p.Alpha*mat.Sum(elemMul(dual, U))
	}
	norms := kernel.SquaredNorms(support)
	expansionScores(ks.kern, ks.intercept, ks.X, support, norms, dual, U)
	e, _ := support.Dims()
	KG := mat.NewDense(e, d, nil)
	expansionScores(ks.kern, ks.intercept, support, support, norms, dual, KG)
	return ks.p.lossGrad(U, nil) + ks.p.Alpha*mat.Sum(elemMul(dual, KG))
}
