package ridge

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/parallel"
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
// Stopping: the fit stops when J, evaluated at the returned iterate after every epoch, changed by
// at most Tol·|J| over the epoch, or after MaxIter epochs. Result.RelGrad holds that relative
// change: the full gradient of a kernel model would cost O(m²n). J costs about as much as an
// epoch, so with Tol = 0 (no tolerance stop) it is evaluated after every epoch only for
// Options.TraceObjective, and otherwise once at the end: Progress then gets NaN for J and its
// change, and Result.RelGrad is NaN.
//
// Cost: a kernel step computes the scores f(x_i), O(e(n + d)) for an expansion of e examples, and
// then changes the coefficients of one example; the shrink and the averaging of all the others are
// kept implicit (kernelSGD). Without truncation the scores of 128 consecutive steps are computed
// together, through matrix products, which makes an epoch of m = 20,000, n = 15, d = 45 take
// about 2.5 s instead of 20, and J about as long (BenchmarkKernelSGDEpoch, 2 cores).

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

// sgdPlanner is a learner that computes its scores faster knowing the order of the epoch's
// examples in advance.
type sgdPlanner interface {
	// plan announces that the next len(order) steps take the examples of order, in that order.
	plan(order []int)
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

// stopEvery is how many SGD steps pass between two checks of Options.Stop: a kernel step costs
// up to a kernel row over the expansion, about a millisecond at 30,000 support vectors.
const stopEvery = 64

// epoch makes one pass over the examples in a random order, or stops early with ErrCancelled
// when stop is set (the learner then holds a partial epoch, which the caller discards).
func (r *sgdRun) epoch(ln sgdLearner, stop *cancel.Flag) error {
	m, d := r.p.Delta.Dims()
	u, su, g := make([]float64, d), make([]float64, d), make([]float64, d)
	S := r.p.S.RawSymmetric()
	order := r.rng.Perm(m)
	if pl, ok := ln.(sgdPlanner); ok {
		pl.plan(order)
	}
	for k, i := range order {
		if k%stopEvery == 0 && stop.Yield() {
			return cancel.ErrCancelled
		}
		r.steps++
		eta := math.Min(r.eta0/(r.p.Alpha*float64(r.steps)), 1/r.L)
		ln.scores(i, u)
		blas64.Symv(1, S, blas64.Vector{N: d, Inc: 1, Data: u}, 0, blas64.Vector{N: d, Inc: 1, Data: su})
		r.p.exampleLoss(i, u, su, g)
		floats.Scale(-eta*r.mEff, g)
		ln.step(i, r.steps, 1-2*r.p.Alpha*eta, g)
	}
	return nil
}

// fit runs up to opt.MaxIter epochs (Fit), suffix-averaging unless noAverage. J is evaluated
// after every epoch only when the tolerance stop or opt.TraceObjective needs it; otherwise
// Progress gets NaN for it and its change, and J is evaluated once at the end.
func (r *sgdRun) fit(ln sgdLearner, opt *Options, noAverage bool) (Result, error) {
	trace := opt.Tol > 0 || opt.TraceObjective
	prev := math.NaN()
	if trace {
		prev = ln.objective()
	}
	res := Result{}
	for ep := 1; ep <= opt.MaxIter; ep++ {
		if ep >= 2 && ep&(ep-1) == 0 && !noAverage {
			ln.average()
		}
		if err := r.epoch(ln, opt.Stop); err != nil {
			return res, err
		}
		res = Result{Iterations: ep, Objective: math.NaN(), RelGrad: math.NaN()}
		if trace {
			j := ln.objective()
			if err := opt.Stop.Err(); err != nil {
				return res, err
			}
			res.Objective, res.RelGrad = j, math.Abs(prev-j)/math.Max(math.Abs(j), math.SmallestNonzeroFloat64)
			res.Converged = res.RelGrad <= opt.Tol
			prev = j
		}
		if opt.Progress != nil && !opt.Progress(ep, res.Objective, res.RelGrad) {
			return res, ErrCancelled
		}
		if res.Converged {
			break
		}
	}
	if !trace {
		res.Objective = ln.objective()
	}
	return res, opt.Stop.Err()
}

// pass makes the single epoch of PartialFit, reporting J over the chunk and its relative change.
func (r *sgdRun) pass(ln sgdLearner, opt *Options) (Result, error) {
	before := ln.objective()
	if err := r.epoch(ln, opt.Stop); err != nil {
		return Result{}, err
	}
	j := ln.objective()
	if err := opt.Stop.Err(); err != nil {
		return Result{}, err
	}
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
//
// A step shrinks every coefficient and changes those of one example, so that doing it literally
// costs O(e·d) for e active examples, and averaging as much again. Instead the coefficients are
// scale·coef: the shrink multiplies scale, and adding c to a row adds c/scale to that row of coef;
// and without truncation the sum of the iterates since average() is sum + ssum·coef, ssum being
// the sum of their scales: when a step adds Δ to a row of coef, the new iterate joins the sum
// through ssum += scale, and the iterates before it stay as they were through that row of sum
// −= ssum·Δ (ssum before the step). A step then costs O(d) besides its scores. fold makes both
// explicit again when scale would underflow, or when ssum·coef grows so much larger than the sum
// it represents that their cancellation would cost more than a few digits.
//
// Without truncation, the scores of a planned epoch (plan) are computed a block of its examples at
// a time: the kernel values of the block against the slots active at its start and their product
// with coef are matrix products, and the scores of the block's j-th example are scale times that
// product plus the kernel-weighted changes of coef made by the block's earlier steps, which only
// touch rows of the block's examples. With truncation a step may drop examples, and the scores
// are computed per step, over the at most τ active examples.
type kernelSGD struct {
	p         *Problem
	kern      kernel.Kernel
	intercept bool
	X         *mat.Dense
	xn        []float64
	old       *mat.Dense // support rows of the previous model (nil for none)
	nOld      int        // rows of old: keys below nOld are old support rows
	tau       int64
	// stop is Options.Stop: objective, a pass over every example and support row, checks it
	// between blocks and then returns NaN, which sgdRun never reports, as it checks stop after.
	stop *cancel.Flag

	keys []int
	last []int64 // the step that last updated each slot
	// inputs holds the support inputs by slot as its columns (nil for a precomputed kernel), with
	// zero rows up to a multiple of eight: gemm's vector kernel takes eight at a time, and would
	// otherwise pad the last ones itself in every product.
	inputs *mat.Dense
	rnorms []float64
	coef   *mat.Dense // coefficients by slot, divided by scale
	scale  float64
	// sum, ssum and count hold the mean of the iterates since average(), (sum + ssum·coef)/count;
	// sum is nil before, and with truncation, whose slots are reused: without it a new slot's row
	// of sum is still zero.
	sum    *mat.Dense
	ssum   float64
	count  float64
	slotOf []int // key → slot, −1 when inactive
	size   int
	queue  []sgdUpdate // updates in time order (with truncation only)
	kv     []float64
	blk    sgdBlock
}

type sgdUpdate struct {
	t   int64
	key int
}

// sgdBlock is the planned epoch of a kernelSGD and the block of it in progress.
type sgdBlock struct {
	size  int   // examples per block
	order []int // the epoch's examples; nil when no epoch is planned
	pos   int   // the position in order of the current step
	lo    int   // the block is order[lo:hi]
	hi    int
	keys  []int     // the keys of its examples
	xb    []float64 // their inputs, padded like the columns of inputs
	bn    []float64 // their squared norms
	u     []float64 // their scores at the block's start, divided by scale
	kbb   []float64 // the kernel values (+1 with an intercept) among them (row j: before j)
	dv    []float64 // what each step of the block added to coef (rows listed in updated)
	k     []float64 // products' scratch: kernel values against a chunk of slots, by group
	gu    []float64 // products' scratch: the products of the groups
	// updated lists the positions in the block whose steps changed coef, in order.
	updated []int
}

// sgdBlockSize is the number of examples whose scores kernel SGD computes together. Larger
// blocks spread the overheads of the products over more steps, but each step's corrections cost
// O(size·d); an epoch of BenchmarkKernelSGDEpoch (m = 20,000) took the same time, within the
// noise of a shared machine, with 64, 128 and 256.
const sgdBlockSize = 128

// sgdChunk and sgdGroup divide the slots for products (see there). Chunks of 128 or 256 slots
// gave the same epoch times, chunks of 64 slower ones; groups of 512 slots rather than 1024 keep
// both threads busy on 5,000 slots (10 groups, not 3 on one thread and 2 on the other).
const (
	sgdChunk = 128
	sgdGroup = 4
)

// sgdMinScale is the scale below which kernelSGD folds it into the coefficients; a variable so
// that tests can make folds frequent.
var sgdMinScale = 1e-150

// sgdMaxDrift bounds ssum/(scale·count), by which the terms of sum + ssum·coef can exceed the
// sum of count iterates they represent, when the scale falls fast (a large Eta0, the step cap
// binding): past it kernelSGD folds, so that their cancellation costs at most about four digits.
const sgdMaxDrift = 1e4

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
		keys: make([]int, capacity), last: make([]int64, capacity), coef: mat.NewDense(capacity, d, nil), scale: 1,
		slotOf: make([]int, capacity), kv: make([]float64, capacity), blk: sgdBlock{size: sgdBlockSize}}
	if kern.Kind != kernel.Precomputed {
		ks.xn = kernel.SquaredNorms(X)
		ks.inputs = mat.NewDense((n+7)&^7, capacity, nil)
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
	if ks.inputs != nil {
		row, norm := ks.input(key)
		in := ks.inputs.RawMatrix()
		for r, v := range row {
			in.Data[r*in.Stride+s] = v
		}
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
		if ks.inputs != nil {
			in := ks.inputs.RawMatrix()
			for r := 0; r < in.Rows; r++ {
				in.Data[r*in.Stride+s] = in.Data[r*in.Stride+e]
			}
			ks.rnorms[s] = ks.rnorms[e]
		}
	}
	ks.size--
}

func (ks *kernelSGD) plus() float64 {
	if ks.intercept {
		return 1
	}
	return 0
}

func (ks *kernelSGD) kappa(i int) float64 {
	if ks.inputs == nil {
		return ks.X.At(i, i) + ks.plus()
	}
	v := []float64{ks.xn[i]}
	ks.kern.Row(v, ks.xn[i], v, ks.plus())
	return v[0]
}

func (ks *kernelSGD) scores(i int, u []float64) {
	if ks.blk.order != nil {
		ks.blockScores(i, u)
		return
	}
	e := ks.size
	if e == 0 {
		clear(u) // Gemv would leave u as it is
		return
	}
	kv := ks.kv[:e]
	if ks.inputs == nil {
		x := ks.X.RawRowView(i)
		for s, key := range ks.keys[:e] {
			kv[s] = x[key] + ks.plus()
		}
	} else {
		_, n := ks.X.Dims()
		in := ks.inputs.RawMatrix()
		blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: e, Stride: in.Stride, Data: in.Data},
			blas64.Vector{N: n, Inc: 1, Data: ks.X.RawRowView(i)}, 0, blas64.Vector{N: e, Inc: 1, Data: kv})
		ks.kern.Row(kv, ks.xn[i], ks.rnorms, ks.plus())
	}
	C := ks.coef.RawMatrix()
	blas64.Gemv(blas.Trans, ks.scale, blas64.General{Rows: e, Cols: C.Cols, Stride: C.Stride, Data: C.Data},
		blas64.Vector{N: e, Inc: 1, Data: kv}, 0, blas64.Vector{N: len(u), Inc: 1, Data: u})
}

// plan has the scores of the next epoch's steps, over the examples in order, computed a block at
// a time; with truncation, whose steps drop examples, they stay per step.
func (ks *kernelSGD) plan(order []int) {
	if ks.tau > 0 {
		return
	}
	b := &ks.blk
	b.order, b.pos, b.lo, b.hi = order, 0, 0, 0
}

// blockScores writes the scores of the planned step's example i.
func (ks *kernelSGD) blockScores(i int, u []float64) {
	b := &ks.blk
	if b.pos == b.hi {
		ks.startBlock()
	}
	if b.order[b.pos] != i {
		panic("ridge: kernel SGD stepped out of its planned order")
	}
	d, nb, j := len(u), b.hi-b.lo, b.pos-b.lo
	copy(u, b.u[j*d:(j+1)*d])
	kj := b.kbb[j*nb : (j+1)*nb]
	for _, l := range b.updated {
		floats.AddScaled(u, kj[l], b.dv[l*d:(l+1)*d])
	}
	floats.Scale(ks.scale, u)
}

// startBlock computes the scores at its start and the kernel values among the examples of the
// block that starts at the current step.
func (ks *kernelSGD) startBlock() {
	b := &ks.blk
	b.lo, b.hi = b.pos, min(b.pos+b.size, len(b.order))
	ex := b.order[b.lo:b.hi]
	nb, plus := len(ex), ks.plus()
	b.keys = b.keys[:0]
	for _, i := range ex {
		b.keys = append(b.keys, ks.nOld+i)
	}
	_, d := ks.coef.Dims()
	if len(b.kbb) < nb*nb {
		b.u, b.dv, b.kbb = make([]float64, nb*d), make([]float64, nb*d), make([]float64, nb*nb)
	}
	C := ks.coef.RawMatrix()
	ks.products(b.u[:nb*d], b.keys, blas64.General{Rows: ks.size, Cols: d, Stride: C.Stride, Data: C.Data})
	if ks.inputs == nil {
		for j, i := range ex {
			x := ks.X.RawRowView(i)
			for l, il := range ex[:j] {
				b.kbb[j*nb+l] = x[il] + plus
			}
		}
	} else {
		pad := ks.inputs.RawMatrix().Rows
		for j := range ex {
			kj, xj := b.kbb[j*nb:j*nb+j], b.xb[j*pad:(j+1)*pad]
			for l := range kj {
				kj[l] = floats.Dot(xj, b.xb[l*pad:(l+1)*pad])
			}
			ks.kern.Row(kj, b.bn[j], b.bn, plus)
		}
	}
	b.updated = b.updated[:0]
}

// products sets U (len(keys) × d, row-major) to the scores at the inputs of keys (at most
// blk.size of them) of the expansion over the active slots with coefficients A (a row per slot):
// U = (K + plus)·A for the kernel values K between the keys' inputs and the slots'. It leaves the
// keys' inputs in blk.xb and their squared norms in blk.bn.
//
// The slots are taken sgdChunk at a time, so that a chunk's kernel values are still in cache when
// they are multiplied by its rows of A, and sgdGroup chunks make a group, which has a product of
// its own on one thread; the products of the groups are then added in order, so that the result
// does not depend on the number of threads.
func (ks *kernelSGD) products(U []float64, keys []int, A blas64.General) {
	b := &ks.blk
	nb, e, d, plus := len(keys), ks.size, A.Cols, ks.plus()
	groups := (e + sgdGroup*sgdChunk - 1) / (sgdGroup * sgdChunk)
	var pad int // columns of xb
	if ks.inputs != nil {
		pad = ks.inputs.RawMatrix().Rows
	}
	if len(b.bn) < nb {
		rows, most := max(nb, b.size), (len(ks.keys)+sgdGroup*sgdChunk-1)/(sgdGroup*sgdChunk) // groups at full capacity
		b.k, b.gu = make([]float64, most*rows*sgdChunk), make([]float64, most*rows*d)
		b.bn, b.xb = make([]float64, rows), make([]float64, rows*pad)
	}
	if ks.inputs != nil {
		for j, key := range keys {
			row, norm := ks.input(key)
			copy(b.xb[j*pad:], row) // the padding columns are never written: zero
			b.bn[j] = norm
		}
	}
	parallel.For(groups, 1, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			K := b.k[g*nb*sgdChunk : (g+1)*nb*sgdChunk]
			P := blas64.General{Rows: nb, Cols: d, Stride: d, Data: b.gu[g*nb*d : (g+1)*nb*d]}
			clear(P.Data)
			for s0 := g * sgdGroup * sgdChunk; s0 < min(e, (g+1)*sgdGroup*sgdChunk); s0 += sgdChunk {
				w := min(sgdChunk, e-s0)
				Kc := blas64.General{Rows: nb, Cols: w, Stride: w, Data: K[:nb*w]}
				if ks.inputs == nil {
					for j, key := range keys {
						x := ks.X.RawRowView(key - ks.nOld)
						for s, slotKey := range ks.keys[s0 : s0+w] {
							Kc.Data[j*w+s] = x[slotKey] + plus
						}
					}
				} else {
					in := ks.inputs.RawMatrix()
					gemm.Mul(Kc, blas64.General{Rows: nb, Cols: pad, Stride: pad, Data: b.xb[:nb*pad]},
						blas64.General{Rows: pad, Cols: w, Stride: in.Stride, Data: in.Data[s0:]})
					for j := range keys {
						ks.kern.Row(Kc.Data[j*w:(j+1)*w], b.bn[j], ks.rnorms[s0:s0+w], plus)
					}
				}
				gemm.MulAdd(P, Kc, blas64.General{Rows: w, Cols: d, Stride: A.Stride, Data: A.Data[s0*A.Stride:]})
			}
		}
	})
	clear(U)
	for g := 0; g < groups; g++ {
		floats.Add(U, b.gu[g*nb*d:(g+1)*nb*d])
	}
}

func (ks *kernelSGD) step(i int, t int64, shrink float64, c []float64) {
	scale := ks.scale * shrink
	if scale < sgdMinScale || (ks.sum != nil && ks.ssum > sgdMaxDrift*scale*ks.count) {
		ks.fold(shrink)
		scale = 1
	}
	ks.scale = scale
	b := &ks.blk
	if floats.Norm(c, 1) != 0 {
		key := ks.nOld + i
		if ks.slotOf[key] < 0 {
			ks.activate(key, t)
		}
		s := ks.slotOf[key]
		row := ks.coef.RawRowView(s)
		var sum, dv []float64
		if ks.sum != nil {
			sum = ks.sum.RawRowView(s)
		}
		if b.order != nil {
			j := b.pos - b.lo
			dv = b.dv[j*len(c) : (j+1)*len(c)]
			b.updated = append(b.updated, j)
		}
		for a, v := range c {
			delta := v / scale
			row[a] += delta
			if sum != nil {
				sum[a] -= ks.ssum * delta
			}
			if dv != nil {
				dv[a] = delta
			}
		}
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
	if ks.sum != nil {
		ks.ssum += scale
		ks.count++
	}
	if b.order != nil {
		if b.pos++; b.pos == len(b.order) {
			b.order = nil
		}
	}
}

// fold makes the scale explicit before a step that shrinks by shrink: coef ← scale·shrink·coef
// (and the block's products and changes of coef with it), whose scale the step then sets to 1,
// and the sum of the iterates so far explicit in sum, with ssum 0.
func (ks *kernelSGD) fold(shrink float64) {
	_, d := ks.coef.Dims()
	coef := ks.coef.RawMatrix().Data[:ks.size*d]
	if ks.sum != nil {
		floats.AddScaled(ks.sum.RawMatrix().Data[:ks.size*d], ks.ssum, coef)
		ks.ssum = 0
	}
	apply := func(x []float64) {
		for k, v := range x {
			x[k] = v * ks.scale * shrink
		}
	}
	apply(coef)
	if b := &ks.blk; b.order != nil {
		apply(b.u[:(b.hi-b.lo)*d])
		for _, l := range b.updated {
			apply(b.dv[l*d : (l+1)*d])
		}
	}
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
	if ks.sum == nil {
		r, d := ks.coef.Dims()
		ks.sum = mat.NewDense(r, d, nil)
	} else {
		ks.sum.Zero()
	}
	ks.ssum, ks.count = ks.scale, 1
}

// returned writes slot s's coefficients in the returned iterate (the mean, when averaging) to dst.
func (ks *kernelSGD) returned(s int, dst []float64) {
	coef := ks.coef.RawRowView(s)
	if ks.sum == nil {
		for a, v := range coef {
			dst[a] = ks.scale * v
		}
		return
	}
	sum := ks.sum.RawRowView(s)
	for a, v := range coef {
		dst[a] = (sum[a] + ks.ssum*v) / ks.count
	}
}

// expansion returns the support inputs and coefficients of the returned iterate, ordered by their
// last update, oldest first, when byRecency (PartialFit, whose next call truncates the oldest
// first), else by key: the old support rows, then the chunk's examples in their order (Fit, so
// that a later warm start on the same inputs pairs them with X). For a precomputed kernel the
// coefficients are scattered to the chunk's samples instead (m×d) and the support is nil.
func (ks *kernelSGD) expansion(byRecency bool) (support, dual *mat.Dense) {
	_, d := ks.coef.Dims()
	order := make([]int, ks.size)
	for s := range order {
		order[s] = s
	}
	if byRecency {
		sort.SliceStable(order, func(a, b int) bool { return ks.last[order[a]] < ks.last[order[b]] })
	} else {
		sort.Slice(order, func(a, b int) bool { return ks.keys[order[a]] < ks.keys[order[b]] })
	}
	if ks.inputs == nil {
		dual = mat.NewDense(ks.chunkRows(), d, nil)
		for _, s := range order {
			ks.returned(s, dual.RawRowView(ks.keys[s]))
		}
		return nil, dual
	}
	_, n := ks.X.Dims()
	support, dual = mat.NewDense(max(1, ks.size), n, nil), mat.NewDense(max(1, ks.size), d, nil)
	for r, s := range order {
		row, _ := ks.input(ks.keys[s])
		copy(support.RawRowView(r), row)
		ks.returned(s, dual.RawRowView(r))
	}
	return support, dual
}

// objective is J over the chunk at the returned iterate, with ‖f‖² = Σ_s ⟨a_s, f(x_s)⟩ over the
// slots s with coefficients a_s: f(x_s) is a row of the chunk's scores for the chunk's examples,
// and only the old support rows need scores of their own.
func (ks *kernelSGD) objective() float64 {
	m, d := ks.p.Delta.Dims()
	e, size := ks.size, ks.blk.size
	A := mat.NewDense(max(1, e), d, nil)
	for s := 0; s < e; s++ {
		ks.returned(s, A.RawRowView(s))
	}
	U := mat.NewDense(m, d, nil)
	var keys, old []int
	for lo := 0; lo < m; lo += size {
		if ks.stop.Stopped() {
			return math.NaN()
		}
		keys = keys[:0]
		for i := lo; i < min(lo+size, m); i++ {
			keys = append(keys, ks.nOld+i)
		}
		ks.products(U.RawMatrix().Data[lo*d:(lo+len(keys))*d], keys, A.RawMatrix())
	}
	var norm float64
	for s, key := range ks.keys[:e] {
		if key < ks.nOld {
			old = append(old, s)
		} else {
			norm += floats.Dot(A.RawRowView(s), U.RawRowView(key-ks.nOld))
		}
	}
	if len(old) > 0 {
		u := make([]float64, min(size, len(old))*d)
		for lo := 0; lo < len(old); lo += size {
			if ks.stop.Stopped() {
				return math.NaN()
			}
			slots := old[lo:min(lo+size, len(old))]
			keys = keys[:0]
			for _, s := range slots {
				keys = append(keys, ks.keys[s])
			}
			ks.products(u[:len(keys)*d], keys, A.RawMatrix())
			for j, s := range slots {
				norm += floats.Dot(A.RawRowView(s), u[j*d:(j+1)*d])
			}
		}
	}
	return ks.p.lossGrad(U, nil) + ks.p.Alpha*norm
}
