package ridge

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// Model is a fitted StructuredRidge. Its matrices are its own (never views of caller memory), and a
// fitted Model is read-only, so Decision and Predict are safe for concurrent use; PartialFit returns
// a new Model and leaves its argument untouched.
type Model struct {
	Space     space.Space
	Kernel    kernel.Kernel
	Intercept bool
	NFeatures int        // columns of the X given to Fit (for precomputed kernels: training samples)
	Coef      *mat.Dense // linear kernel: W, NFeatures(+1 intercept row) × d; Nyström: components × d
	Dual      *mat.Dense // other kernels: Γ = Aᵀ, support samples × d
	Support   *mat.Dense // rbf and poly kernels: the support inputs, samples × NFeatures (nil when sparse)
	Result    Result
	// Solver is the solver the last fit ran, Auto resolved (Auto: unknown, in a model decoded from
	// bytes, which do not hold it): the advice of a fit that stopped short depends on it.
	Solver Solver
	Seen   int64 // examples the model was trained on (PartialFit: the running total)
	Steps  int64 // SGD steps taken, which PartialFit's step-size schedule continues from
	// Warnings are what the last fit warns of (kernel.PrecisionWarning), for its caller to pass on;
	// a model read from bytes has none.
	Warnings []string

	supportCSR   *xmat.CSR    // the support inputs of a kernel model fitted on sparse X (Support is then nil)
	supportT     *transposed  // supportCSR's transpose, made when sparse rows are first scored
	supportNorms []float64    // ‖support_i‖², set with Support
	ny           *nystrom     // the Nyström map of an rbf or poly model with Coef
	components   int          // the n_components ny was built for (≥ its landmarks), 0 when unknown
	stats        *linearStats // sufficient statistics of an exact fit, which PartialFit continues
	ref          *reference   // the reference measure when not uniform (Options.EmpiricalWeight)
}

// setSupport stores the training inputs of a kernel model (dense or sparse) with what prediction
// needs from them.
func (md *Model) setSupport(s xmat.Matrix) {
	md.Support, md.supportCSR = s.Dense, s.Sparse
	md.supportNorms = s.SquaredNorms()
	md.supportT = new(transposed)
}

// transposed holds the transpose of the support inputs once it is made, for concurrent readers.
type transposed struct {
	mu sync.Mutex
	t  *xmat.CSR  // sparse support
	d  *mat.Dense // dense support
}

// supportWithTranspose is the support inputs with the transpose that scoring rows (sparse or not)
// uses, made on first use and kept with the model. Scoring sparse rows against sparse support
// needs it (xmat.ProductsT): each scoring call made it again, O(n_features), and a model on 10⁶
// features scored 5,000 sparse rows in 67 s, 13 ms a row, where the products took microseconds.
// Dense support's transpose, where kernel products read it (kernel.TransposesInputs), spares
// scoring dense rows a transposed copy per call (of the support, or of the rows and their kernel
// values); where the budget refuses it, scoring goes on without it, to the same values, about
// twice as slow (1,500 × 103 support, 64 rows a call). A refusal is not kept.
func (md *Model) supportWithTranspose(sparseRows bool) (xmat.Matrix, error) {
	s := md.support()
	if md.supportT == nil { // no support (a precomputed kernel): setSupport gives the others one
		return s, nil
	}
	md.supportT.mu.Lock()
	defer md.supportT.mu.Unlock()
	switch {
	case md.supportCSR != nil && sparseRows:
		if md.supportT.t == nil {
			if err := md.supportCSR.CheckTranspose("the model's sparse support inputs", "the kernel's values at sparse X"); err != nil {
				return s, err
			}
			md.supportT.t = md.supportCSR.Transpose()
		}
		s.SparseT = md.supportT.t
	case md.Support != nil && !sparseRows:
		if md.supportT.d == nil {
			md.supportT.d = kernel.KeepTranspose(s).DenseT // nil where not read, or refused by the budget
		}
		s.DenseT = md.supportT.d
	}
	return s, nil
}

// support is the support inputs of a kernel model, dense or sparse.
func (md *Model) support() xmat.Matrix { return xmat.Matrix{Dense: md.Support, Sparse: md.supportCSR} }

// hasSupport reports whether the model holds support inputs.
func (md *Model) hasSupport() bool { return md.Support != nil || md.supportCSR != nil }

// SupportSparse reports whether the model's support inputs are held sparse (fitted on sparse X).
func (md *Model) SupportSparse() bool { return md.supportCSR != nil }

// ScoreWork estimates the multiply-adds of scoring one input: a kernel row against the support
// samples and its product with the dual coefficients, the Nyström map and its product with W, or
// the product with W. Against sparse support samples or landmarks a kernel row costs their stored
// entries at most (a dense input's; a sparse one's, through their transpose, fewer), not samples ×
// features: a model of 300 samples on 10⁶ features was scored a row at a time, and its Nyström
// twin's single rows went through the cancellable path, 2 ms a call instead of 0.1. A Nyström
// map's triangular product costs k²/2 multiply-adds a row too, blocked ones, about 8 to a unit:
// without them, chunks of 3,000 rows of a map of 3,000 components ran 0.8 s between two looks at
// Ctrl-C (probe DH); counted in full, chunks of 29 rows scored 45 % slower.
func (md *Model) ScoreWork() float64 {
	n, d := float64(md.NFeatures), float64(md.Space.Dim())
	switch {
	case md.Dual != nil && md.supportCSR != nil:
		m, _ := md.Dual.Dims()
		return float64(md.supportCSR.NNZ()) + float64(m)*(1+d)
	case md.Dual != nil:
		m, _ := md.Dual.Dims()
		return float64(m) * (n + d)
	case md.ny != nil && md.ny.landmarks.Sparse != nil:
		k := float64(md.Components())
		return float64(md.ny.landmarks.Sparse.NNZ()) + k*(k+d)
	case md.ny != nil: // its kernel row, W's product and the triangle's k²/2, on gemm at ~8 a ns
		k := float64(md.Components())
		return k * (n + d + k/16)
	}
	return n * d
}

// Components is the dimension of the model's Nyström map, 0 when it has none.
func (md *Model) Components() int {
	if md.ny == nil {
		return 0
	}
	return md.ny.components()
}

// requestedComponents is the n_components the model's Nyström map was built for, or its
// dimension when that is unknown (bytes older than format version 5).
func (md *Model) requestedComponents() int {
	if md.components != 0 {
		return md.components
	}
	return md.Components()
}

// Streaming reports whether the model holds the sufficient statistics that let PartialFit
// continue it exactly.
func (md *Model) Streaming() bool { return md.stats != nil }

// operatorOnly reports whether a fit with these options only needs the covariance S as an
// operator: the linear model (on X or on a Nyström map) solved by conjugate gradients, which is
// what Auto picks whenever d > MaxDim.
func operatorOnly(opt *Options) bool {
	return (opt.Kernel.Kind == kernel.Linear || opt.NComponents > 0) && (opt.Solver == Auto || opt.Solver == CG)
}

// denseInput checks a dense X (m×n, row-major: at least one sample and one feature, finite, rows
// whose squared norms do not overflow) and views it.
func denseInput(X []float64, m, n int) (xmat.Matrix, error) { return namedInput("X", X, m, n) }

// inputName is what a fit's X is called in its errors: the kernel matrix for precomputed kernels.
func inputName(k kernel.Kernel) string {
	if k.Kind == kernel.Precomputed {
		return check.KernelMatrix
	}
	return "X"
}

// namedInput is denseInput with the input called name in its errors.
func namedInput(name string, X []float64, m, n int) (xmat.Matrix, error) {
	if m < 1 || n < 1 {
		return xmat.Matrix{}, fmt.Errorf("X must have at least one sample and one feature, got %d×%d", m, n)
	}
	if len(X) != m*n {
		return xmat.Matrix{}, fmt.Errorf("X has %d values, want %d×%d", len(X), m, n)
	}
	if err := check.FiniteMagnitude(name, X, n); err != nil {
		return xmat.Matrix{}, err
	}
	return xmat.Matrix{Dense: mat.NewDense(m, n, X)}, nil
}

// sparseInput checks a sparse X (valid CSR by construction: finite values, canonical indices)
// for its shape and the magnitude of its rows.
func sparseInput(X *xmat.CSR) (xmat.Matrix, error) {
	if X == nil {
		return xmat.Matrix{}, fmt.Errorf("X is nil")
	}
	m, n := X.Dims()
	if m < 1 || n < 1 {
		return xmat.Matrix{}, fmt.Errorf("X must have at least one sample and one feature, got %d×%d", m, n)
	}
	if err := X.CheckMagnitude("X"); err != nil {
		return xmat.Matrix{}, err
	}
	return xmat.Matrix{Sparse: X}, nil
}

// prepareProblem checks the options and builds the Problem of a fit on the checked inputs X,
// relaxing newProblem's checks by flags (operatorOK: a space with d > MaxDim gets an
// operator-only Problem, S nil, instead of an error; partOfData: X is a part of the data whose
// total weight a later solve checks, as a chunk of partial_fit solved from statistics is).
func prepareProblem(sp space.Space, X xmat.Matrix, ys []int64, weights []float64, opt *Options, flags problemFlags) (*Problem, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m, n := X.Dims()
	if X.Sparse != nil && opt.Kernel.Kind == kernel.Precomputed {
		return nil, fmt.Errorf("a precomputed kernel must be given as a dense array (samples × samples), not a sparse matrix")
	}
	if err := checkCounts(sp, opt); err != nil {
		return nil, err
	}
	if err := checkFitMemory(sp, m, n, opt, budget.Mul(4, int64(m), int64(sp.Dim()))); err != nil {
		return nil, err
	}
	p, err := newProblem(sp, ys, m, weights, opt.Alpha, flags, opt.Stop)
	if err == nil {
		err = p.useReference(sp, opt.Reference, opt.EmpiricalWeight)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkFitMemory checks the working set of a fit against the memory budget before any of it is
// allocated. For the targets it counts targetWords words: per example δ_i, its weighted copy and
// the scores with their curvature (4 rows of d) when Δ is dense; per row of W (n features, +1 intercept; Nyström components; for kernel models
// the m expansion rows) W, B and the CG or SGD vectors and preconditioner (10 rows of d; 6 for linear
// SGD); with
// d ≤ MaxDim, S and the preconditioner's d×d matrices (4); a Nyström map its m×k features and
// the landmarks' Gram matrix and its factor; other kernel models the m×m Gram matrix; the exact
// solvers their square systems.
func checkFitMemory(sp space.Space, m, n int, opt *Options, targetWords int64) error {
	d := int64(sp.Dim())
	k := int64(n)
	switch {
	case opt.NComponents > 0:
		k = int64(opt.NComponents)
	case opt.Kernel.Kind != kernel.Linear:
		k = int64(m)
	}
	if opt.Intercept {
		k++
	}
	// linear SGD holds W, its mean (lazyRows: U and the mean it returns) and the stall check's two
	// gradients: 6 rows where CG's vectors and preconditioner take 10 (2²⁰ features, d = 45, were
	// refused at 3.8 GB where the fit peaked at about 1.5 GB, probe DO)
	rows := int64(10)
	if opt.Solver == SGD && opt.Kernel.Kind == kernel.Linear && opt.NComponents == 0 {
		rows = 6
	}
	need := budget.Add(targetWords, budget.Mul(rows, k, d))
	if d <= int64(denseMaxDim) {
		need = budget.Add(need, budget.Mul(4, d, d))
	}
	switch {
	case opt.NComponents > 0:
		need = budget.Add(need, budget.Mul(int64(m), k), budget.Mul(2, k, k))
	case opt.Kernel.Kind != kernel.Linear:
		need = budget.Add(need, budget.Mul(int64(m), int64(m)))
	}
	if opt.Solver == Exact {
		need = budget.Add(need, budget.Mul(2, min(budget.Mul(k, d), MaxExactUnknowns+1), min(budget.Mul(k, d), MaxExactUnknowns+1)))
	}
	return budget.Check(fmt.Sprintf("fitting X of %d samples × %d features on the %s space of dimension d = %d", m, n, sp.Kind(), d),
		budget.Mul(need, 8))
}

// Fit trains StructuredRidge on inputs X (m×n, row-major, not retained) and structures ys
// (m × sp.Width()), with optional sample weights.
func Fit(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*Model, error) {
	in, err := namedInput(inputName(opt.Kernel), X, m, n)
	if err != nil {
		return nil, err
	}
	return fit(sp, in, ys, weights, opt)
}

// FitCSR is Fit on a sparse X (m×n CSR, viewed and not retained): the linear model's products
// with X, the kernels' Gram matrices and the Nyström map are computed from its entries, in memory
// O(nnz + k·d) besides what the dense fit holds per example and per row of W, never O(m·n). Kernel
// models keep their support inputs sparse. A model fitted on sparse X predicts dense X and the
// reverse. Not supported: precomputed kernels, and kernel expansions (rbf, poly without
// NComponents) with solver SGD.
func FitCSR(sp space.Space, X *xmat.CSR, ys []int64, weights []float64, opt Options) (*Model, error) {
	in, err := sparseInput(X)
	if err != nil {
		return nil, err
	}
	return fit(sp, in, ys, weights, opt)
}

func fit(sp space.Space, X xmat.Matrix, ys []int64, weights []float64, opt Options) (*Model, error) {
	if err := checkKernelWeightScale(weights, &opt); err != nil {
		return nil, err
	}
	var flags problemFlags
	if operatorOnly(&opt) {
		flags = operatorOK
	}
	p, err := prepareProblem(sp, X, ys, weights, &opt, flags)
	if err != nil {
		return nil, err
	}
	return fitProblem(sp, X, p, opt)
}

// checkKernelWeightScale refuses, for a kernel fit (no Nyström map), weights whose largest s puts
// α/s beyond alpha's range: kernel CG divides both by s (scaledWeights), and the penalty then
// exceeds the data term by more than float64 holds (at alpha 1e300 and weights 1e-300 the fit
// returned scores of zero after one iteration, behind a warning to raise max_iter).
func checkKernelWeightScale(weights []float64, opt *Options) error {
	if opt.Kernel.Kind == kernel.Linear || opt.NComponents > 0 || len(weights) == 0 || check.Alpha(opt.Alpha) != nil {
		return nil
	}
	top := floats.Max(weights)
	if !(top >= minLargestWeight) || math.IsInf(top, 0) || check.ScaledAlpha(opt.Alpha/top) == nil {
		return nil // sampleWeights names what is wrong with them
	}
	return fmt.Errorf("sample_weight's largest value is %.3g: against alpha = %g the penalty is %.3g times "+
		"the data term, beyond float64's range; rescale the weights (%s)",
		top, opt.Alpha, opt.Alpha/top, weightHint(opt.Alpha/top > 1))
}

// fitProblem fits the model of opt on inputs X and the Problem p built for them.
func fitProblem(sp space.Space, X xmat.Matrix, p *Problem, opt Options) (*Model, error) {
	var err error
	m, n := X.Dims()
	model := &Model{Space: sp, Kernel: opt.Kernel, Intercept: opt.Intercept, NFeatures: n, Seen: int64(m), ref: p.ref}
	model.warnPrecision(X)
	switch {
	case opt.Kernel.Kind == kernel.Linear:
		err = model.fitLinear(p, design{X: X.Dense, sp: X.Sparse, intercept: opt.Intercept, stop: opt.Stop}, &opt)
	case opt.NComponents > 0:
		var Phi *mat.Dense
		if err = model.setNystrom(X, &opt); err == nil {
			if Phi, err = model.ny.apply(X, opt.Stop); err == nil {
				err = model.fitLinear(p, design{X: Phi, stop: opt.Stop}, &opt)
			}
		}
	default:
		err = model.fitKernel(p, X, &opt)
	}
	if err == nil {
		err = model.checkFinite()
	}
	if err != nil {
		return nil, model.withWarnings(err)
	}
	model.warnWeightSpread(p.Weight, p.Alpha, opt.Tol)
	return model, nil
}

// warnWeightSpread warns of sample weights further apart than float64 resolves: an iterative
// solver's gradient sums every example's part, where those of weights below 2⁻⁵² of the largest
// fall under its rounding, so they are not fitted and its relative gradient cannot show it (one
// row weighted 1e20 left the others' scores at −181 against 0.34, probe EQ). The exact solver's
// normal equations keep them (right to 1e100 there). Weights below 2⁻⁵²·alpha are left out: the
// penalty outweighs them in the exact optimum too (an example of weight 1e-300 beside ones).
func (md *Model) warnWeightSpread(weights []float64, alpha, tol float64) {
	if md.Solver == Exact {
		return
	}
	top, low := weightRange(weights, alpha)
	if w := weightSpreadWarning(top, low, md.Solver, md.Kernel.Kind == kernel.Linear || md.ny != nil, tol); w != "" {
		md.Warnings = append(md.Warnings, w)
	}
}

// weightRange returns the largest and the smallest of the weights above 2⁻⁵²·alpha (0 and +Inf
// where none is): lighter ones weigh less than the penalty's rounding, in any optimum.
func weightRange(weights []float64, alpha float64) (top, low float64) {
	top, low = 0, math.Inf(1)
	for _, s := range weights {
		if s > kernelRangeEpsilon*alpha {
			top, low = max(top, s), min(low, s)
		}
	}
	return top, low
}

// weightSpreadWarning is warnWeightSpread's message for weights from low to top (those above
// 2⁻⁵²·alpha), "" where the solver resolves their ratio; linear says whether the exact solver's
// normal equations are the model's (a linear model or a Nyström map). CG stops when its relative
// gradient meets tol, and that gradient's norm is the heaviest examples' once the weights span
// more than 1/tol: at the default tol 1e-8 a spread of 1e10 stopped it after one iteration with
// 26 of 156 labels of the light rows decided otherwise than by the exact solver (probe FB). Where
// the lightest examples add no direction the heaviest leave free, they change no optimum and the
// alarm is false: only a solve can tell, so the message says may and names one.
func weightSpreadWarning(top, low float64, solver Solver, linear bool, tol float64) string {
	spread := top / low
	exact := "compare with solver=\"exact\", whose normal equations keep them, or with a fit that drops the lightest examples"
	if spread > 1/kernelRangeEpsilon {
		if !linear {
			exact = "no solver of a kernel model keeps them in double precision: drop or raise the lightest weights, or lower the heaviest"
		}
		return fmt.Sprintf("%s, beyond float64's 16 digits: in the %s solver's gradient the lightest examples fall below the "+
			"rounding of the heaviest, so they may be left unfitted without its relative gradient showing it; %s",
			weightSpan(spread), solver, exact)
	}
	if solver != CG || !(tol > 0) || !(spread > 1/tol) {
		return ""
	}
	if !linear {
		exact = "use solver=\"exact\", whose kernel system keeps them at this spread"
	}
	return fmt.Sprintf("%s, more than 1/tol = %.2g: CG's relative gradient is then the heaviest examples', so it may meet "+
		"tol before the lightest are fitted; set tol below 1/%.2g, or %s", weightSpan(spread), 1/tol, spread, exact)
}

// weightSpan names a spread of the sample weights (weightRange's top over low) in messages.
func weightSpan(spread float64) string {
	return fmt.Sprintf("sample_weight spans %.2g (largest over smallest weight above 2⁻⁵²·alpha)", spread)
}

// withWarnings adds to a fit's error what the fit would have warned of: on X + 1e7 the rbf kernel
// matrix came out indefinite, and the refusal blamed the kernel, not the precision lost (probe CH).
func (md *Model) withWarnings(err error) error {
	if len(md.Warnings) == 0 || errors.Is(err, ErrCancelled) {
		return err
	}
	return fmt.Errorf("%w; the likely cause: %s", err, strings.Join(md.Warnings, "; "))
}

// warnPrecision adds the kernel's PrecisionWarning for the inputs X to md.Warnings (one pass over X).
func (md *Model) warnPrecision(X xmat.Matrix) {
	if md.Kernel.Kind != kernel.RBF {
		return
	}
	var top float64
	for _, v := range X.SquaredNorms() {
		top = max(top, v)
	}
	if w := md.Kernel.PrecisionWarning(top); w != "" {
		md.Warnings = append(md.Warnings, w)
	}
}

// checkFinite refuses a model whose fitted parameters overflowed.
func (md *Model) checkFinite() error {
	for _, p := range []struct {
		what string
		m    *mat.Dense
	}{{"coefficients", md.Coef}, {"dual coefficients", md.Dual}} {
		if p.m != nil {
			if err := check.Fitted(p.what, p.m.RawMatrix().Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// setNystrom builds the model's Nyström map from the rows of X, reusing the map of opt.Init when
// it has the same landmarks.
func (md *Model) setNystrom(X xmat.Matrix, opt *Options) error {
	var reuse *nystrom
	if opt.Init != nil {
		reuse = opt.Init.ny
	}
	ny, err := buildNystrom(opt.Kernel, opt.Intercept, X, opt.NComponents, opt.Seed, reuse, opt.Stop)
	md.ny, md.components = ny, opt.NComponents
	return err
}

// fitLinear fits W on the rows of des (X itself, or its Nyström map).
func (md *Model) fitLinear(p *Problem, des design, opt *Options) error {
	_, d := p.dims()
	k := des.cols()
	var err error
	solver := CG // FitSparseY keeps the targets sparse only for CG, which alone reads them
	if p.targets == nil {
		solver = resolveSolver(opt.Solver, des.samples(), des.features(), k, d, func() float64 { return meanNonzeros(p) })
	}
	if p.S == nil {
		// An operator-only Problem (d > MaxDim): only CG works without the dense S.
		if opt.Solver != Auto && opt.Solver != CG {
			return largeDimError(md.Space)
		}
		solver = CG
	}
	if solver == Exact {
		if k*d > MaxExactUnknowns {
			return fmt.Errorf("solver=exact would factor a %d×%d matrix (%s > %d); use solver=\"cg\"",
				k*d, k*d, unknownsOf(des.intercept), MaxExactUnknowns)
		}
		n := des.features()
		// The statistics are kept (O((kd)²) memory, bounded by MaxExactUnknowns), so that
		// partial_fit can continue an exact fit exactly, as scikit-learn users expect.
		md.stats = newLinearStats(n, d)
		md.stats.shift = des.statsShift(p.Weight)
		md.Solver = Exact
		err = md.addAndSolve(p, des, opt)
		var unsolvable *normalEquationsError
		if !(opt.Solver == Auto && errors.As(err, &unsolvable)) {
			return err
		}
		md.stats, md.Coef, solver = nil, nil, CG // auto: CG needs no factorisation of the normal equations
	}
	md.Solver = solver
	switch solver {
	case CG:
		centred, mu, refused := des.centred(p.Weight)
		md.warnUncentred(des, p.Weight, refused)
		md.Coef = md.warmCoef(opt, k, d)
		xmat.ShiftIntercept(md.Coef, mu, 1)
		md.Result, err = solveLinearCG(p, centred, md.Coef, opt)
		xmat.ShiftIntercept(md.Coef, mu, -1)
		des.releaseCentred(centred) // the solve keeps no view of it
	case SGD:
		des, mu, refused := des.centred(p.Weight)
		md.warnUncentred(des, p.Weight, refused)
		W := md.warmCoef(opt, k, d)
		xmat.ShiftIntercept(W, mu, 1)
		ln := newLinearSGD(p, des, W)
		run := newSGDRun(p, ln, float64(des.samples()), warmSteps(opt, W), opt)
		md.Result, err = run.fit(ln, opt, false)
		md.Coef, md.Steps = ln.result(), run.steps
		xmat.ShiftIntercept(md.Coef, mu, -1)
	}
	return err
}

// addAndSolve adds the examples of p (rows of des) to the model's sufficient statistics and
// solves the normal equations they give, reporting the direct solve as one iteration to Progress.
func (md *Model) addAndSolve(p *Problem, des design, opt *Options) error {
	if err := md.stats.add(p, des, opt.Stop); err != nil {
		return err
	}
	if err := checkWeightTotal(md.stats.moments().sum); err != nil { // partial_fit's chunks so far
		return err
	}
	S, mean := p.S, p.Mean
	prev := md.ref
	md.ref = p.ref
	if m, _ := p.dims(); opt.EmpiricalWeight > 0 && md.stats.count > int64(m) {
		// The reference of every example seen, not only this chunk's (which p holds): the
		// empirical moments are in the statistics.
		pu, Su, err := uniformReference(md.Space, opt.Stop)
		if err != nil {
			return err
		}
		ref, err := mixtureReference(md.Space, opt.Reference, pu, Su, md.stats.moments(), opt.EmpiricalWeight)
		if err != nil {
			return err
		}
		ref.setRank(md.Space, nil, opt.EmpiricalWeight)
		if opt.Reference == Empirical && prev != nil && p.ref != nil {
			if ref.tilt, err = mergeTilts(prev.tilt, p.ref.tilt); err != nil {
				return err
			}
		}
		md.ref, S, mean = ref, ref.cov, ref.mean
	}
	var err error
	if md.Coef, md.Result, err = md.stats.solve(S, mean, p.Alpha, des.intercept, opt.Stop); err != nil {
		return err
	}
	md.warnCondition()
	return progressOnce(opt, md.Result)
}

// warmCoef returns a copy of opt.Init's coefficients when they fit this model (same kernel,
// intercept, Nyström map and shape), else zeros.
func (md *Model) warmCoef(opt *Options, rows, d int) *mat.Dense {
	in := opt.Init
	if in != nil && in.Coef != nil && in.Kernel.Same(md.Kernel) && in.Intercept == md.Intercept && in.NFeatures == md.NFeatures &&
		(md.ny == nil) == (in.ny == nil) && (md.ny == nil || md.ny.sameMap(in.ny)) {
		if r, c := in.Coef.Dims(); r == rows && c == d {
			return mat.DenseCopyOf(in.Coef)
		}
	}
	return mat.NewDense(rows, d, nil)
}

// warmSteps is where SGD's step-size schedule starts: at Init's step count when the fit starts
// from Init's coefficients (start, nonzero), so that a warm start continues with the small steps
// of a fit that has converged instead of the large first steps, which would undo it; else at 0.
func warmSteps(opt *Options, start *mat.Dense) int64 {
	if opt.Init == nil || mat.Norm(start, 1) == 0 {
		return 0
	}
	return opt.Init.Steps
}

// warmDual returns a copy of opt.Init's dual coefficients when Init is a kernel model of the same
// kernel whose expansion is over these training samples (its support equals X; for a precomputed
// kernel, which has no support to compare, it has as many rows as X), else zeros.
func (md *Model) warmDual(opt *Options, X xmat.Matrix) *mat.Dense {
	m, _ := X.Dims()
	d := md.Space.Dim()
	if in := md.kernelInit(opt); in != nil {
		if r, _ := in.Dual.Dims(); (!in.hasSupport() && r == m) || sameInputs(in.support(), X) {
			return mat.DenseCopyOf(in.Dual)
		}
	}
	return mat.NewDense(m, d, nil)
}

// sameInputs reports whether a and b hold the same matrix in the same layout (a support is
// compared with the X of a warm start).
func sameInputs(a, b xmat.Matrix) bool {
	switch {
	case a.Dense != nil && b.Dense != nil:
		return mat.Equal(a.Dense, b.Dense)
	case a.Sparse != nil && b.Sparse != nil:
		return xmat.Equal(a.Sparse, b.Sparse)
	}
	return false
}

// kernelInit returns opt.Init when it is a kernel expansion of the same kernel, else nil.
func (md *Model) kernelInit(opt *Options) *Model {
	in := opt.Init
	if in == nil || in.Dual == nil || !in.Kernel.Same(md.Kernel) || in.Intercept != md.Intercept || in.NFeatures != md.NFeatures {
		return nil
	}
	if _, d := in.Dual.Dims(); d != md.Space.Dim() {
		return nil
	}
	return in
}

// fitKernel fits the kernel expansion over the training samples.
func (md *Model) fitKernel(p *Problem, X xmat.Matrix, opt *Options) error {
	m, n := X.Dims()
	Xm := X.Dense
	if X.Sparse != nil && opt.Solver == SGD {
		return fmt.Errorf("solver=\"sgd\" with the %v kernel needs dense X (its expansion keeps the support inputs densely); "+
			"on sparse X use solver=\"cg\" or \"exact\", or n_components (a Nyström map, linear on sparse X)", opt.Kernel.Kind)
	}
	if opt.Kernel.Kind == kernel.Precomputed {
		if m != n {
			return fmt.Errorf("a precomputed kernel must be square (samples × samples), got %d×%d", m, n)
		}
		if err := checkSymmetric(Xm); err != nil {
			return err
		}
	}
	if opt.Solver == SGD {
		md.Solver = SGD
		if err := checkSGDKernel(opt, X); err != nil {
			return err
		}
		// A warm start on the same inputs starts from Init's coefficients on them, and its step
		// count; on other inputs the fit starts cold, as kernel CG's does. (Joining Init's
		// expansion, as PartialFit does, kept the earlier data set's rows in the model, and its
		// decayed steps never reached the new optimum: J 14.359 after 300 epochs against 14.035.)
		Gamma := md.warmDual(opt, X)
		var steps int64
		if in := md.kernelInit(opt); in != nil && mat.Norm(Gamma, 1) != 0 {
			steps = in.Steps
		}
		ks := newKernelSGD(p, opt.Kernel, opt.Intercept, Xm, nil, nil, steps, opt.Tau)
		ks.stop = opt.Stop
		for i := 0; i < m; i++ {
			if g := Gamma.RawRowView(i); floats.Norm(g, 1) != 0 {
				ks.activate(i, steps)
				copy(ks.coef.RawRowView(ks.slotOf[i]), g)
			}
		}
		run := newSGDRun(p, ks, float64(m), steps, opt)
		var err error
		if md.Result, err = run.fit(ks, opt, opt.Tau > 0); err != nil {
			return err
		}
		md.Steps = run.steps
		support, dual := ks.expansion(false)
		md.Dual = dual
		if support != nil {
			md.setSupport(xmat.Matrix{Dense: support})
		}
		return nil
	}
	if m > MaxKernelSamples {
		return fmt.Errorf("a %v kernel model on %d samples needs their %d×%d Gram matrix; at most %d samples are supported: "+
			"use the linear kernel, n_components (a Nyström map), solver=\"sgd\" or subsample", opt.Kernel.Kind, m, m, m, MaxKernelSamples)
	}
	// The intercept's constant, the finiteness check and the scale of K in one pass over it (over
	// the Gram matrix, block by block as it is computed).
	var shift float64
	if opt.Intercept {
		shift = 1
	}
	if opt.Kernel.Kind != kernel.Precomputed {
		if X.Sparse != nil {
			md.setSupport(xmat.Matrix{Sparse: X.Sparse.Copy()})
		} else {
			md.setSupport(xmat.Matrix{Dense: mat.DenseCopyOf(Xm)})
		}
	}
	K, kScale, err := kernelMatrix(opt.Kernel, X, shift, opt.Stop)
	if err != nil {
		return err
	}
	defer releaseFloats(K.RawMatrix().Data)
	if math.IsNaN(kScale) {
		if err := opt.Kernel.CheckFinite(K.RawMatrix().Data, m); err != nil {
			return err
		}
		return fmt.Errorf("the kernel matrix holds non-finite values")
	}
	md.Dual = md.warmDual(opt, X)
	// Auto takes CG: with deflation it needs 13–22 iterations where the direct solve costs
	// O((md)³) (m = 400, d = 6: 10–13 ms against 1.3 s, BenchmarkKernelSolvers), so the direct
	// solve is for those who ask.
	if opt.Solver == Exact {
		md.Solver = Exact
		md.Result, err = solveKernelExact(p, K, kScale, md.Dual, opt)
	} else {
		md.Solver = CG
		if err := checkMaybeIndefinite(opt.Kernel, K, kScale, opt.Stop); err != nil {
			return err
		}
		md.warnKernelRange(p, K)
		md.Result, err = solveKernelCGScaled(p, K, kScale, md.Dual, opt)
	}
	return err
}

// checkSGDKernel is checkMaybeIndefinite for kernel SGD, which never forms K: a precomputed K
// (X itself) or a poly Gram matrix with coef0 < 0 is formed for the check, with the intercept's
// constant, on at most psdCheckSamples samples (poly with SGD fitted an indefinite kernel that
// every other solver refused, probe FO).
func checkSGDKernel(opt *Options, X xmat.Matrix) error {
	k := opt.Kernel
	m, _ := X.Dims()
	if !mayBeIndefinite(k) || m > psdCheckSamples ||
		budget.Check("the kernel matrix, to check it is positive semi-definite", budget.Mul(int64(m), int64(m), 8)) != nil {
		return nil
	}
	var shift float64
	if opt.Intercept {
		shift = 1
	}
	K, kScale, err := kernelMatrix(k, X, shift, opt.Stop)
	if err != nil {
		return err
	}
	defer releaseFloats(K.RawMatrix().Data)
	if math.IsNaN(kScale) {
		return nil // the fit's own checks name what is not finite
	}
	return checkMaybeIndefinite(k, K, kScale, opt.Stop)
}

// mayBeIndefinite reports whether the kernel k need not be positive semi-definite: a precomputed
// matrix (or a callable's, which reaches the core as one), or poly with coef0 < 0. rbf, linear and
// poly with coef0 ≥ 0 are, and indefiniteness in their matrices is rounding (warnPrecision).
func mayBeIndefinite(k kernel.Kernel) bool {
	return k.Kind == kernel.Precomputed || k.Kind == kernel.Poly && k.Coef0 < 0
}

// kernelMatrix returns the m×m kernel matrix of the rows of X plus shift (the intercept's
// constant) and its largest |K_ij| (NaN where an entry is not finite): a copy of a precomputed X,
// or the kernel's Gram matrix, computed block by block and cancellable.
func kernelMatrix(k kernel.Kernel, X xmat.Matrix, shift float64, stop *cancel.Flag) (*mat.Dense, float64, error) {
	if k.Kind == kernel.Precomputed {
		K := mat.DenseCopyOf(X.Dense)
		return K, check.AddMaxAbs(K.RawMatrix().Data, shift), nil
	}
	m, _ := X.Dims()
	K := mat.NewDense(m, m, scratchFloats(m*m)) // every entry is written
	kScale, err := gramCancellable(k, K, X, shift, stop)
	return K, kScale, err
}

// psdCheckSamples is the most samples at which the iterative solvers check a kernel matrix that
// may be indefinite (checkMaybeIndefinite) as the exact solver does, by a Cholesky factorisation
// of m³/3 flops: at 2,048 samples it took a precomputed rbf fit by CG from 58 to 165 ms and a
// callable one from 176 to 303 ms (probe FO), the price of not returning a saddle point.
const psdCheckSamples = 2048

// checkMaybeIndefinite refuses, as checkPSD does, the kernel matrix K (with the intercept's
// constant; kScale its largest |K_ij|) of a kernel that need not be positive semi-definite — a
// precomputed or callable one, poly with coef0 < 0 — on at most psdCheckSamples samples whose
// copy the budget allows. CG and SGD refuse only the indefiniteness their iterates run into: on a
// precomputed K with an eigenvalue of −0.02 against entries up to 1, both returned the objective's
// saddle point, unbounded below along that eigenvector, without a word, where the exact solver
// refused K (probe FL).
func checkMaybeIndefinite(k kernel.Kernel, K *mat.Dense, kScale float64, stop *cancel.Flag) error {
	m, _ := K.Dims()
	if !mayBeIndefinite(k) || m > psdCheckSamples ||
		budget.Check("a copy of the kernel matrix to check it is positive semi-definite", budget.Mul(int64(m), int64(m), 8)) != nil {
		return nil
	}
	return checkPSD(K, kScale, stop)
}

// warnKernelRange adds a warning to md.Warnings when the curvature of the kernel fit's data term
// can exceed that of its penalty by more than float64 resolves, κ = tr(K)·max_i s_i‖M_i‖/(2α) >
// 2⁵², M_i = S + δ_iδ_iᵀ (tr(K) bounds K's largest eigenvalue, and ‖S‖∞ + ‖δ_i‖² bounds ‖M_i‖).
// Kernel CG then cannot resolve the scores along the directions where the penalty decides them:
// at poly degree 50 (K up to 1e50, alpha 1) it returned scores of 12.5 where the optimum's are 0.5,
// reporting a relative gradient of 1e-15 (its gradient, K·ρ, is blind to them; probe DJ). The
// exact solver refuses such systems through its condition estimate.
func (md *Model) warnKernelRange(p *Problem, K *mat.Dense) {
	if p.S == nil || p.Delta == nil {
		return
	}
	m, _ := p.dims()
	var trace float64
	for i := 0; i < m; i++ {
		trace += K.At(i, i)
	}
	sNorm := p.sBound()
	var curvature float64
	for i := 0; i < m; i++ {
		di := p.Delta.RawRowView(i)
		curvature = math.Max(curvature, p.Weight[i]*(sNorm+floats.Dot(di, di)))
	}
	kappa := trace * curvature / (2 * p.Alpha)
	if !(kappa > 1/kernelRangeEpsilon) {
		return
	}
	md.Warnings = append(md.Warnings, fmt.Sprintf("the kernel matrix's scale against alpha is beyond float64's precision: "+
		"its data term can curve up to %.2g times as much as the penalty (trace of K %.3g, alpha %g), so the scores the "+
		"penalty decides may be resolved only to about %.2g of their size; lower the kernel's scale (degree, gamma, coef0, "+
		"or X's), raise alpha, or use a Nyström map (n_components)", kappa, trace, p.Alpha, kappa*kernelRangeEpsilon))
}

// kernelRangeEpsilon is float64's unit roundoff, 2⁻⁵², the relative error of one product.
const kernelRangeEpsilon = 0x1p-52

// predictBlock bounds the q×m kernel block built at prediction time.
const predictBlock = 1024

// Decision writes the scores u = Wᵀx̃ (or Γᵀk(x), or Wᵀφ(x) through a Nyström map) of q inputs X
// (q×n, row-major) into U (q×d).
func (md *Model) Decision(X []float64, q, n int, U []float64) error {
	if err := md.checkFeatures(n); err != nil {
		return err
	}
	d := md.Space.Dim()
	if len(X) != q*n || len(U) != q*d {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features and %d scores", q, n, d)
	}
	if q == 0 {
		return nil
	}
	if err := check.Finite("X", X, n); err != nil {
		return err
	}
	return md.decision(xmat.Matrix{Dense: mat.NewDense(q, n, X)}, U)
}

// DecisionCSR is Decision on a sparse X (q×n CSR): the same scores, up to rounding, as on the
// dense X with the same entries, whether the model was fitted on sparse or dense inputs.
func (md *Model) DecisionCSR(X *xmat.CSR, U []float64) error {
	q, n := X.Dims()
	if err := md.checkFeatures(n); err != nil {
		return err
	}
	if d := md.Space.Dim(); len(U) != q*d {
		return fmt.Errorf("buffer sizes do not match %d rows and %d scores", q, d)
	}
	if q == 0 {
		return nil
	}
	return md.decision(xmat.Matrix{Sparse: X}, U)
}

// checkFeatures refuses inputs with another number of features than the model's.
func (md *Model) checkFeatures(n int) error {
	if n != md.NFeatures {
		what := "features"
		if md.Kernel.Kind == kernel.Precomputed {
			what = "columns (training samples) in the precomputed kernel"
		}
		return fmt.Errorf("X has %d %s, the model was fitted with %d", n, what, md.NFeatures)
	}
	return nil
}

// decision writes the scores of the q ≥ 1 checked inputs X into U (q×d).
func (md *Model) decision(X xmat.Matrix, U []float64) error {
	q, _ := X.Dims()
	d := md.Space.Dim()
	if X.Sparse != nil && md.Kernel.Kind == kernel.Precomputed {
		return fmt.Errorf("a precomputed kernel must be given as a dense array, not a sparse matrix")
	}
	Um := mat.NewDense(q, d, U)
	switch {
	case md.ny != nil:
		for lo := 0; lo < q; lo += predictBlock {
			hi := min(lo+predictBlock, q)
			Phi, _ := md.ny.apply(X.Slice(lo, hi), nil) // never cancelled without a stop flag
			Um.Slice(lo, hi, 0, d).(*mat.Dense).Mul(Phi, md.Coef)
		}
	case md.Coef != nil:
		design{X: X.Dense, sp: X.Sparse, intercept: md.Intercept}.mul(Um, md.Coef)
	default:
		support, err := md.supportWithTranspose(X.Sparse != nil)
		if err != nil {
			return err
		}
		expansionScores(md.Kernel, md.Intercept, X, support, md.supportNorms, md.Dual, Um)
	}
	return check.Scores(U, d)
}

// expansionScores writes U = (K(Xq, support) + c)·dual, c = 1 with an intercept, block by block;
// for a precomputed kernel Xq holds the kernel values themselves and support is unused.
func expansionScores(kern kernel.Kernel, intercept bool, Xq, support xmat.Matrix, norms []float64, dual, U *mat.Dense) {
	q, _ := Xq.Dims()
	m, d := dual.Dims()
	kb := mat.NewDense(min(q, predictBlock), m, nil)
	for lo := 0; lo < q; lo += predictBlock {
		hi := min(lo+predictBlock, q)
		xb := Xq.Slice(lo, hi)
		kx := kb.Slice(0, hi-lo, 0, m).(*mat.Dense)
		if kern.Kind == kernel.Precomputed {
			kx.Copy(xb.Dense)
		} else {
			kern.GramX(kx, xb, support, norms)
		}
		if intercept {
			addConstant(kx, 1)
		}
		gemm.Mul(U.Slice(lo, hi, 0, d).(*mat.Dense).RawMatrix(), kx.RawMatrix(), dual.RawMatrix())
	}
}

// Predict decodes the scores of q inputs into structures ys (q × Width()), a chunk of rows at a
// time (space.PredictRows); it stops with ErrCancelled once stop is set (nil: never).
func (md *Model) Predict(X []float64, q, n int, ys []int64, stop *cancel.Flag) error {
	if len(X) != q*n {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features", q, n)
	}
	return md.PredictRows(xmat.DenseRows(X, q, n), ys, stop)
}

// DecisionRows is Decision (dense rows) or DecisionCSR (sparse rows).
func (md *Model) DecisionRows(X xmat.Rows, U []float64) error {
	if X.Sparse != nil {
		return md.DecisionCSR(X.Sparse, U)
	}
	return md.Decision(X.Dense, X.Q, X.N, U)
}

// PredictRows is Predict on dense or sparse rows.
func (md *Model) PredictRows(X xmat.Rows, ys []int64, stop *cancel.Flag) error {
	q := X.Q
	if err := md.checkFeatures(X.N); err != nil { // no rows still need the model's features
		return err
	}
	if len(ys) != q*md.Space.Width() {
		return fmt.Errorf("output has %d values, want %d×%d", len(ys), q, md.Space.Width())
	}
	if err := space.CheckScores(md.Space, space.PredictChunk(md.Space, q)); err != nil {
		return err
	}
	if err := space.CheckDecode(md.Space, q); err != nil {
		return err
	}
	pins, d := md.pins(), md.Space.Dim()
	scores := func(lo, hi int, U []float64) error {
		if err := model.ScoreRows(md, X.Slice(lo, hi), U, stop); err != nil {
			return err
		}
		pinScores(U, d, pins)
		return nil
	}
	return space.PredictRowsBy(md.Space, q, ys, scores, stop)
}

// addConstant adds c to every entry of a, in blocks of rows of at least 64K entries on the
// threads of package parallel (a single prediction's row stays on the caller's).
func addConstant(a *mat.Dense, c float64) {
	r, cols := a.Dims()
	parallel.For(r, max(1, 1<<16/max(cols, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := a.RawRowView(i)
			for j := range row[:cols] {
				row[j] += c
			}
		}
	})
}

// SymmetryTol is the relative tolerance of the symmetry check of a precomputed kernel matrix:
// K[i, j] and K[j, i] may differ by SymmetryTol · max(1, |K[i, j]|, |K[j, i]|), the rounding of a
// kernel evaluated in two orders.
const SymmetryTol = 1e-8

func checkSymmetric(k *mat.Dense) error {
	m, _ := k.Dims()
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a, b := k.At(i, j), k.At(j, i)
			if math.Abs(a-b) > SymmetryTol*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
				return fmt.Errorf("the precomputed kernel is not symmetric: K[%d, %d] = %v but K[%d, %d] = %v", i, j, a, j, i, b)
			}
		}
	}
	return nil
}

// Output is the space of the structures the model predicts (model.Model).
func (md *Model) Output() space.Space { return md.Space }
