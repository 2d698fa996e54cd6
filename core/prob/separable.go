package prob

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// separable reports whether J(W) is a sum of independent terms, one per column of W: on a cube
// (space.Cube: the multi-label space) log Z(u) = Σ_a log(1 + e^{u_a}) and ψ_a = y_a, so column a
// of W is a binary logistic regression of coordinate a alone, with exact inference.
func separable(sp space.Space, inf InferenceOptions) bool {
	return space.IsCube(sp) && inf.exact(sp)
}

// fitSeparable minimises a separable J (see separable) by one L-BFGS run per column, columns in
// parallel. A joint run takes as many iterations as its slowest label needs and pays for every
// label in each; here each label stops when its own relative gradient is below Tol, which implies
// the joint criterion, ‖∇J‖² = Σ_a ‖∇J_a‖² ≤ Tol² Σ_a ‖∇J_a(0)‖² = Tol² ‖∇J(0)‖². Progress
// reports the sum of the columns' latest objectives and the joint relative gradient, once per
// iteration of the furthest column, and once more at the end, under the last iteration's number,
// with the fitted model's: columns that run after the furthest one has finished never report, so
// the last line of a verbose fit held their starting values (an objective of 1.66 for a model at
// 0.80), or not, as the threads' timing fell. W (zero, or a warm start) is updated in place.
func fitSeparable(p *Problem, W *mat.Dense, opt *Options) (Result, error) {
	k, d := W.Dims()
	cols := make([][]float64, d) // each column's coefficients, then copied into W
	for a := range cols {
		cols[a] = make([]float64, k)
	}
	start := mat.DenseCopyOf(W) // zero, or a warm start
	f, g2, g0 := make([]float64, d), make([]float64, d), make([]float64, d)
	iters := make([]int, d)
	errs := make([]error, d)
	stop := opt.Inference.Sampler.Stop
	scales := p.rowScales() // the coordinates the columns are minimised in (see rowScales)
	colEval := func(a int, scratch *columnScratch) func(x, g []float64) (float64, error) {
		return inScaledRows(func(x, g []float64) (float64, error) { return p.columnObjective(a, x, g, scratch), nil }, scales, 1)
	}
	// The starting point: every column's objective and gradient at w = 0 (a pass over the data
	// per column: Ctrl-C is read between them).
	parallel.For(d, 1, func(lo, hi int) {
		g := make([]float64, k)
		scratch := newColumnScratch(p)
		for a := lo; a < hi && !stop.Stopped(); a++ {
			f[a], _ = colEval(a, scratch)(cols[a], g)
			g0[a] = floats.Norm(g, 2)
			g2[a] = g0[a] * g0[a]
		}
	})
	if stop.Stopped() {
		return Result{}, ErrCancelled
	}
	var total0 float64
	for _, v := range g0 {
		total0 += v * v
	}
	total0 = math.Sqrt(total0)
	if err := overflowAtZero(total0); err != nil {
		return Result{}, err
	}
	if total0 == 0 {
		W.Zero()
		return Result{Objective: floats.Sum(f), Converged: true}, nil
	}
	for a, col := range cols {
		if g0[a] > 0 { // else w_a = 0 is the optimum
			mat.Col(col, a, start)
			scaleRows(col, scales, 1, false)
		}
	}
	var (
		mu        sync.Mutex
		reported  int
		cancelled atomic.Bool
	)
	// progress records column a's state after its iteration it and reports the joint state when
	// it is the furthest column's newest iteration. Ctrl-C also reaches a column through the stop
	// flag: the callback sees only the furthest column's iterations, and once the slowest column
	// is done the others never report (a fit of 80 labels went on for seconds after an interrupt).
	progress := func(a, it int, fa float64, ga []float64) error {
		if cancelled.Load() || stop.Stopped() {
			cancelled.Store(true)
			return ErrCancelled
		}
		mu.Lock()
		defer mu.Unlock()
		f[a] = fa
		n := floats.Norm(ga, 2)
		g2[a] = n * n
		if opt.Progress != nil && it > reported {
			reported = it
			if !opt.Progress(it, floats.Sum(f), math.Sqrt(floats.Sum(g2))/total0) {
				cancelled.Store(true)
				return ErrCancelled
			}
		}
		return nil
	}
	parallel.For(d, 1, func(lo, hi int) {
		scratch := newColumnScratch(p)
		for a := lo; a < hi; a++ {
			if g0[a] == 0 || cancelled.Load() || stop.Stopped() {
				continue // w_a = 0 is optimal, or the fit was cancelled
			}
			eval := colEval(a, scratch)
			if floats.Norm(cols[a], 2) > 0 { // a warm start that already meets the tolerance
				g := make([]float64, k)
				if _, _ = eval(cols[a], g); floats.Norm(g, 2) <= opt.Tol*g0[a] {
					continue
				}
			}
			record := func(it int, fa float64, g []float64) error {
				if err := progress(a, it, fa, g); err != nil {
					return err
				}
				if floats.Norm(g, 2) <= opt.Tol*g0[a] {
					return errConverged
				}
				return nil
			}
			n, err := minimizeLBFGS(cols[a], eval, opt.MaxIter, record, nil)
			iters[a] = n
			if err != nil && !errors.Is(err, errConverged) && !errors.Is(err, errLineSearch) {
				errs[a] = err
			}
		}
	})
	if cancelled.Load() || stop.Stopped() {
		return Result{}, ErrCancelled
	}
	for _, err := range errs {
		if err != nil {
			return Result{}, err
		}
	}
	for a, col := range cols {
		for j, v := range col {
			W.Set(j, a, v/scales[j])
		}
	}
	// The result's objective and gradient are those of the joint J, evaluated once.
	grad := mat.NewDense(k, d, nil)
	obj, err := p.Objective(W, InferenceOptions{Method: InferExact}, 0, grad)
	if err != nil {
		return Result{}, err
	}
	scaleRows(grad.RawMatrix().Data, scales, d, true)
	rel := mat.Norm(grad, 2) / total0
	most := 0
	for _, n := range iters {
		most = max(most, n)
	}
	if opt.Progress != nil && most > 0 {
		opt.Progress(most, obj, rel) // the fit is over: a request to stop comes too late to matter
	}
	return Result{Iterations: most, Objective: obj, RelGrad: rel, Converged: rel <= opt.Tol}, nil
}

// columnScratch holds one worker's buffers for columnObjective.
type columnScratch struct {
	u, r []float64 // scores and residuals, m each
}

func newColumnScratch(p *Problem) *columnScratch {
	return &columnScratch{u: make([]float64, p.m), r: make([]float64, p.m)}
}

// columnObjective returns J_a(w) = λ‖w‖² + (1/m) Σ_i s_i [log(1 + e^{u_i}) − y_ia u_i], u_i = x̃_iᵀw,
// the part of J that column a of W (w, Cols() values) contributes on a separable space, and writes
// its gradient into g.
func (p *Problem) columnObjective(a int, w, g []float64, s *columnScratch) float64 {
	n, m := p.n, p.m
	u, r := s.u, s.r
	if p.X.Sparse != nil {
		for i := range u {
			u[i] = p.X.Sparse.RowDot(i, w[:n])
		}
	} else {
		blas64.Gemv(blas.NoTrans, 1, p.X.Dense.RawMatrix(), blas64.Vector{N: n, Inc: 1, Data: w}, 0, blas64.Vector{N: m, Inc: 1, Data: u})
	}
	var b float64
	if p.intercept {
		b = w[n]
	}
	if p.implicit && p.centre != nil {
		b -= floats.Dot(p.centre, w[:n]) // (x − c)ᵀw + b = xᵀw + (b − cᵀw)
	}
	var data float64
	for i := range u {
		ui := u[i] + b
		y := p.psiY.At(i, a)
		wt := 1.0
		if p.weights != nil {
			wt = p.weights[i]
		}
		data += wt * (logmath.Log1pExp(ui) - y*ui)
		r[i] = wt * (logmath.Logistic(ui) - y) / float64(m)
	}
	if p.X.Sparse != nil {
		clear(g[:n])
		for i, ri := range r {
			if ri != 0 {
				p.X.Sparse.RowAxpy(i, ri, g[:n])
			}
		}
	} else {
		blas64.Gemv(blas.Trans, 1, p.X.Dense.RawMatrix(), blas64.Vector{N: m, Inc: 1, Data: r}, 0, blas64.Vector{N: n, Inc: 1, Data: g})
	}
	var pen float64
	for j, v := range w[:n] {
		pen += v * v
		g[j] += 2 * (p.lambda * v)
	}
	if p.intercept {
		g[n] = floats.Sum(r)
	}
	if p.implicit && p.centre != nil {
		floats.AddScaled(g[:n], -g[n], p.centre) // Σ r_i (x_i − c)
	}
	return p.lambda*pen + data/float64(m)
}
