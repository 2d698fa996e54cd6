package prob

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// SumsFunc returns the data term of J at W summed over the whole training set, as DataSumsOf
// gives it for one part of the rows with the same exponent: the parts' loss, weight and grad
// (Cols×Dim, written into grad) added up, every sample weight counted as s·2^−exponent.
type SumsFunc func(W, grad *mat.Dense, exponent int) (loss, weight float64, err error)

// sumsExponent is the exponent FitSums asks its sums in after a first evaluation at 0 summed the
// weights to weight: 0 when weight lies in [2⁻⁵¹², 2⁵¹²] (or is no sum of weights), the one that
// brings it into [½, 1) beyond, and 1088 when it overflowed: finite weights of at most 2⁶³ rows
// sum below 2¹⁰⁸⁷. Sums of weights near the largest float overflowed in the data term (the
// in-memory fit, which scales weights to mean 1, took them), and sums of subnormal weights lost
// their digits.
func sumsExponent(weight float64) int {
	switch {
	case math.IsInf(weight, 1):
		return 1088
	case !(weight > 0) || (weight >= 0x1p-512 && weight <= 0x1p512):
		return 0
	}
	_, e := math.Frexp(weight)
	return e
}

// CheckFitSums refuses what FitSums would refuse before it asks for any sums: options, the
// inference it needs, and the memory of its coefficients, gradient and L-BFGS history. A caller
// whose sums read data spread over machines asks it first, so that a fit refused for its size
// reads none of them.
func CheckFitSums(sp space.Space, n int, opt Options) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("prob: the number of features must be ≥ 1, got %d", n)
	}
	if err := sumsInference(sp, opt.Inference); err != nil {
		return err
	}
	if opt.Solver == SolverAdam {
		return errors.New("prob: a fit from data sums runs L-BFGS on exact gradients, not Adam")
	}
	if err := checkClosedFormMemory(sp); err != nil {
		return err
	}
	rows := n
	if opt.Intercept {
		rows++
	}
	// W, ∇J and L-BFGS's history, as checkFitMemory counts them
	return budget.Check(fmt.Sprintf("fitting %d features on the %s space of dimension d = %d", n, sp.Kind(), sp.Dim()),
		budget.Mul(2*lbfgsMemory+8, int64(rows), int64(sp.Dim()), 8))
}

// FitSums trains ProbabilisticStructured on n features from the data sums that sums returns for
// each W (see SumsFunc), the fit of rows spread over machines: each evaluation sums
// Problem.DataSums over the parts. It runs the L-BFGS of Fit with exact inference (the same
// objective and Result), so the model equals Fit's on the rows taken together up to rounding and
// the solver's tolerance, given opt.Spread (without it, the solver works in W's own coordinates
// and its stopping rule differs from Fit's on features far from unit scale). opt.Alpha 0 means DefaultAlpha of the summed weight. The
// weight must be the same at every evaluation (the data may not change during the fit).
func FitSums(sp space.Space, n int, opt Options, sums SumsFunc) (*Model, error) {
	if err := CheckFitSums(sp, n, opt); err != nil {
		return nil, err
	}
	rows := n
	if opt.Intercept {
		rows++
	}
	if err := xmat.CheckCentre(opt.Centre, n); err != nil {
		return nil, err
	}
	if err := checkSpread(opt.Spread, n); err != nil {
		return nil, err
	}
	if err := checkVariances(opt.Variances, sp.Dim()); err != nil {
		return nil, err
	}
	if opt.Boundary != nil {
		if err := checkBoundaryCounts(sp, opt.Boundary); err != nil {
			return nil, err
		}
	}
	var centre []float64 // the parts centre X there (DataSumsOf): W's coordinates are theirs
	if opt.Intercept {
		centre = opt.Centre
	}
	W := warmStart(opt.Init, sp, n, opt.Intercept)
	dropConstantDirections(sp, W) // a warm start from an Adam fit (fitAdam)
	xmat.ShiftIntercept(W, centre, 1)
	d := sp.Dim()
	alpha, total, exponent := opt.Alpha, math.NaN(), 0
	eval := func(x, g []float64) (float64, error) {
		Wx, G := mat.NewDense(rows, d, x), mat.NewDense(rows, d, g)
		loss, weight, err := sums(Wx, G, exponent)
		if err == nil && math.IsNaN(total) && sumsExponent(weight) != 0 {
			exponent = sumsExponent(weight) // once, at the first evaluation: the sums again in its units
			loss, weight, err = sums(Wx, G, exponent)
		}
		if err != nil {
			return 0, err
		}
		switch {
		case !(weight > 0) || math.IsInf(weight, 0):
			return 0, fmt.Errorf("prob: sample_weight: the weights sum to %v; they need a positive finite sum", math.Ldexp(weight, exponent))
		case math.IsNaN(total):
			total = weight
			if alpha == 0 {
				var err error
				// of the weights' true sum, which may overflow: Fit refuses that default too
				if alpha, err = defaultAlpha(sp, []float64{math.Ldexp(weight, exponent)}, 1); err != nil {
					return 0, err
				}
			}
		case math.Abs(weight-total) > 1e-9*total:
			return 0, fmt.Errorf("prob: the data changed during the fit: the weights summed to %v, then to %v",
				math.Ldexp(total, exponent), math.Ldexp(weight, exponent))
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return 0, fmt.Errorf("prob: the data term's sum is %v", loss)
		}
		return penalized(Wx, n, alpha, loss, weight, G), nil
	}
	var res Result
	var err error
	if opt.Spread == nil {
		res, err = minimizeRelative(W.RawMatrix().Data, eval, &opt, nil, 0)
	} else {
		// The scales need λ, which the default takes from the weights of the first sums: ask for
		// them at W = 0, where the solver starts (memoized, so that it asks once).
		eval = memoized(eval)
		if _, err = eval(make([]float64, rows*d), make([]float64, rows*d)); err == nil {
			s, x := rowScalesOf(opt.Spread, alpha, opt.Intercept), W.RawMatrix().Data
			var precond func(dst, src []float64)
			if opt.Variances != nil && curvaturePreconditioning {
				precond = curvaturePrecondOf(sp, slices.Clone(opt.Variances), opt.Spread, alpha, s)
			}
			scaleRows(x, s, d, false)
			res, err = minimizeRelative(x, inScaledRows(eval, s, d), &opt, precond, 0)
			scaleRows(x, s, d, true)
		}
	}
	xmat.ShiftIntercept(W, centre, -1)
	if err == nil {
		err = check.Fitted("coefficients", W.RawMatrix().Data)
	}
	if err != nil {
		return nil, err
	}
	res.Solver, res.Exact = SolverLBFGS, true
	md := &Model{Space: sp, Coef: W, Intercept: opt.Intercept, NFeatures: n, Inference: opt.Inference, Result: res}
	if opt.Intercept && opt.Boundary != nil {
		if w := unboundedWarning(sp, opt.Boundary); w != "" {
			md.Warnings = append(md.Warnings, w)
		}
	}
	return md, nil
}

// DataSumsOf returns Problem.DataSums at W for one part of a data set, rows X (m×n, row-major)
// with structures ys and optional weights (nil: all 1) counted as s·2^−exponent (exactly: the
// units FitSums asks its sums in), checked as NewProblem checks them. A part
// may be empty or have only zero weights: its sums are zero (FitSums checks the total). With an
// intercept and a centre (n values, nil: none), W holds coefficients on X − 1·centreᵀ (a centred
// copy of X, as Fit makes; the products take the centre out where the budget refuses it).
func DataSumsOf(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, exponent int, intercept bool, centre []float64,
	inf InferenceOptions, W, grad *mat.Dense) (loss, weight float64, err error) {
	rows := n
	if intercept {
		rows++
	}
	if n < 1 || m < 0 {
		return 0, 0, fmt.Errorf("prob: a part of the data has shape %d×%d", m, n)
	}
	if err := check.WeightExponent("prob: the weights' exponent", exponent); err != nil {
		return 0, 0, err
	}
	if err := xmat.CheckCentre(centre, n); err != nil {
		return 0, 0, err
	}
	if r, c := W.Dims(); r != rows || c != sp.Dim() {
		return 0, 0, fmt.Errorf("prob: W is %d×%d, want %d×%d", r, c, rows, sp.Dim())
	}
	if r, c := grad.Dims(); r != rows || c != sp.Dim() {
		return 0, 0, fmt.Errorf("prob: the gradient is %d×%d, want %d×%d", r, c, rows, sp.Dim())
	}
	zero := m == 0
	if weights != nil && !zero {
		zero = true
		for _, w := range weights {
			if w != 0 {
				zero = false
				break
			}
		}
		if zero {
			weights = nil // the rows are still checked below
		}
	}
	// A part's weights are lifted by the power of two that brings the largest into [½, 1), exactly,
	// and its sums scaled back: NewProblem scales weights to mean 1, which overflowed for a part of
	// weights 1e-310 (the in-memory fit takes them beside others), and the fit failed on a data term
	// of +Inf (probe BC).
	lift := -exponent
	if weights != nil && !zero {
		var up int
		weights, up = check.ToUnitBinade(weights, floats.Max(weights))
		lift += up
	}
	if m > 0 {
		in, implicit := centredPart(X, m, n, intercept, centre)
		p, err := NewProblem(sp, in, m, n, ys, weights, 1, intercept) // λ plays no part in the sums
		if err != nil {
			return 0, 0, err
		}
		if intercept && centre != nil {
			p.centre, p.implicit = centre, implicit
		}
		if !zero {
			loss, weight, err = p.DataSums(W, inf, grad)
			// entry by entry: 2^lift alone may leave float64's range where the products do not
			grad.Apply(func(_, _ int, v float64) float64 { return math.Ldexp(v, lift) }, grad)
			return math.Ldexp(loss, lift), math.Ldexp(weight, lift), err
		}
	}
	grad.Zero()
	return 0, 0, nil
}

// centredPart returns a part of X centred at centre, as Fit centres X, and false; or X itself and
// whether the products must take the centre out (implicit): without an intercept or a centre,
// when the budget refuses the copy, or for rows NewProblem will refuse. The implicit products
// compute xᵀW − cᵀW, which cancels at features far from 0: at X + 10⁸ the distributed fit ran
// 200 iterations without converging where the in-memory fit took 8.
func centredPart(X []float64, m, n int, intercept bool, centre []float64) ([]float64, bool) {
	if !intercept || centre == nil {
		return X, false
	}
	if len(X) != m*n || budget.Check(fmt.Sprintf("a centred copy of a part of X (%d samples × %d features)", m, n),
		budget.Mul(int64(m), int64(n), 8)) != nil {
		return X, true
	}
	in := make([]float64, m*n)
	xmat.CentreInto(mat.NewDense(m, n, in), mat.NewDense(m, n, X), centre)
	if check.FiniteMagnitude("X", in, n) != nil {
		return X, true // X's own check (NewProblem) names the row at fault
	}
	return in, false
}

// sumsInference refuses inference options under which the data sums are not exact.
func sumsInference(sp space.Space, inf InferenceOptions) error {
	switch {
	case !HasExact(sp):
		return fmt.Errorf("%w: a fit from data sums needs exact inference, which the %s space (log|Y| = %.1f) does not have",
			ErrNoExact, sp.Kind(), sp.LogCount())
	case !inf.exact(sp):
		return fmt.Errorf("%w: a fit from data sums needs exact inference, and the sampler parameter resolves to sampled "+
			"inference on the %s space; use the exact sampler", ErrNoExact, sp.Kind())
	}
	return nil
}

// checkVariances refuses variances of ψ's coordinates that are not d non-negative finite numbers.
func checkVariances(variances []float64, d int) error {
	if variances == nil {
		return nil
	}
	if len(variances) != d {
		return fmt.Errorf("the variances of ψ have %d values for the space's dimension %d", len(variances), d)
	}
	for a, v := range variances {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("variances[%d] = %v: the variances of ψ's coordinates must be non-negative and finite", a, v)
		}
	}
	return nil
}

// checkSpread refuses an Options.Spread of the wrong length or with negative or NaN values (+Inf,
// from an overflowing sum of squares, leaves that row unscaled).
func checkSpread(spread []float64, n int) error {
	if spread == nil {
		return nil
	}
	if len(spread) != n {
		return fmt.Errorf("the spread has %d values for %d features", len(spread), n)
	}
	for j, v := range spread {
		if !(v >= 0) {
			return fmt.Errorf("spread[%d] = %v: the features' spreads must be non-negative", j, v)
		}
	}
	return nil
}
