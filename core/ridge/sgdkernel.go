package ridge

import (
	"fmt"
	"math"
	"sort"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

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
	// psd is nil, or the refusal of a kernel matrix that objective found indefinite (see psdCheck).
	psd error
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
	_, d := p.dims()
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
	return ks.keyKappa(ks.nOld + i)
}

// keyKappa is k(x, x) for the input of key, a previous support row or an example of the chunk
// (kernels on inputs only: a precomputed kernel has no previous support rows).
func (ks *kernelSGD) keyKappa(key int) float64 {
	_, norm := ks.input(key)
	v := []float64{norm}
	ks.kern.Row(v, norm, v, ks.plus())
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
	m, d := ks.p.dims()
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
	ks.psdCheck(norm, A.RawMatrix().Data[:e*d])
	return ks.p.lossGrad(U, nil) + ks.p.Alpha*norm
}

// psdCheck sets psd when the squared norm of the returned function, ‖f‖² = tr(AᵀKA) = norm for its
// coefficients A, proves the kernel matrix (with the intercept's constant) indefinite: below
// −indefinite·κ·‖A‖²_F, the margin of CG's check with κ the largest |k(x_i, x_i)| of the chunk
// and of the previous support rows (max |K_ij| on a PSD kernel). SGD on an indefinite K diverged
// along its negative directions, for 1,000 epochs, and ended in a NaN objective with a warning to
// raise max_iter.
func (ks *kernelSGD) psdCheck(norm float64, A []float64) {
	if ks.psd != nil || !(norm < 0) {
		return
	}
	m, _ := ks.p.dims()
	var kScale float64
	for i := 0; i < m; i++ {
		kScale = math.Max(kScale, math.Abs(ks.kappa(i)))
	}
	if ks.inputs != nil { // the previous model's support rows of a stream carry coefficients too
		for key := 0; key < ks.nOld; key++ {
			kScale = math.Max(kScale, math.Abs(ks.keyKappa(key)))
		}
	}
	if aa := floats.Dot(A, A); norm < -indefinite*kScale*aa {
		ks.psd = fmt.Errorf("the kernel matrix is not positive semi-definite (SGD's coefficients A have ‖f‖² = "+
			"tr(AᵀKA) = %.3g, a Rayleigh quotient of %.3g against max k(x_i, x_i) = %.3g): %s", norm, norm/aa, kScale, needPSD)
	}
}
