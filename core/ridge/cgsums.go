package ridge

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The linear model's conjugate gradients on data spread over machines. J = ½⟨W, H W⟩ − ⟨B, W⟩ +
// ½Σs with H V = 2αV (intercept row excepted) + Σ_i s_i x̃_i [(S + δ_iδ_iᵀ) Vᵀx̃_i]ᵀ and
// B = Σ_i s_i x̃_i δ_iᵀ (linear.go): B, the preconditioner's moments and every product H V are sums
// over examples. Each part of the data computes its own (CGSetupOf once, CGProductOf at every
// iteration) where it lives; FitCGSums runs the CG of Fit on their totals. With an intercept,
// every part centres its X at the same opt.Centre (the caller's estimate of X's mean), as Fit
// centres its X, and FitCGSums takes W back to X's coordinates.

// CGSetup holds the sums over examples that a distributed CG fit needs before iterating, each
// weight s_i counted in units of 2^Options.WeightExponent.
type CGSetup struct {
	B      *mat.Dense    // k×d: Σ s_i x̃_i δ_iᵀ, = −∇J(0)
	G      *mat.SymDense // k×k: Σ s_i x̃_i x̃_iᵀ, for the preconditioner
	M      *mat.SymDense // d×d: Σ s_i δ_i δ_iᵀ, for the preconditioner
	Weight float64       // Σ s_i
	Count  int64         // examples (zero weights included)
	// Top and Low are the largest and the smallest weight above 2⁻⁵²·α (weightRange; 0 and +Inf
	// where none is): the parts' maximum and minimum, for the warning of Fit's CG on weights
	// further apart than float64 resolves. A zero Top warns of nothing.
	Top, Low float64
}

// cgPart checks one part of the data of a distributed CG fit, rows X (m×n) with structures ys and
// optional weights, and returns its Problem and design, or a nil Problem when the part adds
// nothing (no rows, or only zero weights).
func cgPart(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*Problem, design, error) {
	if err := checkCGOptions(sp, opt); err != nil {
		return nil, design{}, err
	}
	if err := xmat.CheckCentre(opt.Centre, n); err != nil {
		return nil, design{}, err
	}
	if m == 0 {
		return nil, design{}, nil
	}
	in, err := denseInput(X, m, n)
	if err != nil {
		return nil, design{}, err
	}
	if weights, err = weightsInUnits(weights, m, opt.WeightExponent); err != nil {
		return nil, design{}, err
	}
	if weights != nil && zeroWeights(weights) {
		if _, err := newProblem(sp, ys, m, nil, opt.Alpha, partOfData, opt.Stop); err != nil { // the rows are still checked
			return nil, design{}, err
		}
		return nil, design{}, nil
	}
	if err := checkFitMemory(sp, m, n, &opt, budget.Mul(4, int64(m), int64(sp.Dim()))); err != nil {
		return nil, design{}, err
	}
	p, err := newProblem(sp, ys, m, weights, opt.Alpha, partOfData, opt.Stop)
	if err != nil {
		return nil, design{}, err
	}
	des := design{X: in.Dense, intercept: opt.Intercept, stop: opt.Stop}
	if c := partCentre(opt); c != nil {
		if err := budget.Check(fmt.Sprintf("a centred copy of a part of X (%d samples × %d features)", m, n), budget.Mul(int64(m), int64(n), 8)); err != nil {
			return nil, design{}, err
		}
		des.X = mat.NewDense(m, n, nil)
		xmat.CentreInto(des.X, in.Dense, c)
	}
	return p, des, nil
}

// weightsInUnits returns the m weights (nil: all 1) as counted in units of 2^e (Options.WeightExponent):
// weights itself for e = 0, a scaled copy otherwise. A weight that fails the checks of newProblem
// (NaN, negative, infinite) fails them scaled too; a finite one that e takes to +Inf is refused
// here, naming e (it was blamed on sample_weight, even when none was given, probe CH).
func weightsInUnits(weights []float64, m, e int) ([]float64, error) {
	if e == 0 {
		return weights, nil
	}
	out := make([]float64, m)
	for i := range out {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		out[i] = math.Ldexp(w, -e)
		if math.IsInf(out[i], 0) && !math.IsInf(w, 0) {
			return nil, fmt.Errorf("the weights' exponent %d takes sample weight %v of row %d beyond float64's range: "+
				"it is the binary exponent of the largest weight", e, w, i)
		}
	}
	return out, nil
}

// partCentre is opt.Centre when a distributed CG fit centres X at it (with an intercept), else nil.
func partCentre(opt Options) []float64 {
	if !opt.Intercept {
		return nil
	}
	return opt.Centre
}

// checkCGOptions refuses what a distributed CG fit does not do: kernels other than the linear one
// (a Nyström map is fitted exactly from merged statistics), solvers other than CG, reference
// measures other than the uniform one (their S and p depend on every training structure), and
// spaces whose S is not held densely or that have no uniform measure.
func checkCGOptions(sp space.Space, opt Options) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	if err := check.WeightExponent("the weights' exponent", opt.WeightExponent); err != nil {
		return err
	}
	switch {
	case opt.Kernel.Kind != kernel.Linear || opt.NComponents > 0:
		return fmt.Errorf("distributed conjugate gradients fit the linear kernel without n_components, not kernel=%v with n_components=%d "+
			"(a Nyström map is solved exactly from merged statistics: solver=\"exact\")", opt.Kernel.Kind, opt.NComponents)
	case opt.Solver != CG && opt.Solver != Auto:
		return fmt.Errorf("distributed conjugate gradients run solver=cg, not %v", opt.Solver)
	case opt.EmpiricalWeight > 0:
		return fmt.Errorf("distributed conjugate gradients use the uniform reference measure (empirical_weight=0); "+
			"the empirical one is supported by the exact distributed fit (solver=\"exact\", at most %d unknowns: features, "+
			"plus one for the intercept, × output dimension) and by StructuredRidge in memory", MaxExactUnknowns)
	case sp.Dim() > denseMaxDim:
		return largeDistributedDimError(sp)
	}
	return space.Counts(sp)
}

// CGSetupOf returns the CGSetup sums of one part of the data (see cgPart): zero for a part that
// adds nothing.
func CGSetupOf(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*CGSetup, error) {
	p, des, err := cgPart(sp, X, m, n, ys, weights, opt)
	if err != nil {
		return nil, err
	}
	d := sp.Dim()
	k := n
	if opt.Intercept {
		k++
	}
	if err := budget.Check(fmt.Sprintf("the sums of conjugate gradients' set-up for %d features on the %s space of dimension d = %d", n, sp.Kind(), d),
		budget.Mul(8, budget.Add(budget.Mul(int64(k), int64(k)), budget.Mul(int64(d), int64(d)), budget.Mul(int64(k), int64(d))))); err != nil {
		return nil, err
	}
	// Count is every example, zero weights included, as Fit's Model.Seen.
	st := &CGSetup{B: mat.NewDense(k, d, nil), G: mat.NewSymDense(k, nil), M: mat.NewSymDense(d, nil), Count: int64(m), Low: math.Inf(1)}
	if p == nil {
		return st, nil
	}
	st.Top, st.Low = weightRange(p.Weight, math.Ldexp(opt.Alpha, -opt.WeightExponent)) // α in the weights' units
	st.B = newLinearSystem(p, des).B
	st.G = des.gram(p.Weight)
	rt := mat.NewDense(m, d, nil) // diag(√s) Δ, so that M = (diag(√s) Δ)ᵀ (diag(√s) Δ)
	for i := 0; i < m; i++ {
		src, dst, r := p.Delta.RawRowView(i), rt.RawRowView(i), math.Sqrt(p.Weight[i])
		for a := range src {
			dst[a] = r * src[a]
		}
		st.Weight += p.Weight[i]
	}
	st.M.SymOuterK(1, rt.T())
	return st, opt.Stop.Err()
}

// CGProductOf writes into dst (k×d) the data part of H V over one part of the data (see cgPart):
// Σ_i s_i x̃_i [(S + δ_iδ_iᵀ) Vᵀx̃_i]ᵀ, zero for a part that adds nothing.
func CGProductOf(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options, V, dst *mat.Dense) error {
	k := n
	if opt.Intercept {
		k++
	}
	for _, a := range []struct {
		name string
		m    *mat.Dense
	}{{"V", V}, {"the product", dst}} {
		if r, c := a.m.Dims(); r != k || c != sp.Dim() {
			return fmt.Errorf("%s is %d×%d, want %d×%d (n_features, plus 1 with an intercept, × the space's dimension)", a.name, r, c, k, sp.Dim())
		}
	}
	p, des, err := cgPart(sp, X, m, n, ys, weights, opt)
	if err != nil {
		return err
	}
	if p == nil {
		dst.Zero()
		return nil
	}
	U, C := mat.NewDense(m, sp.Dim(), nil), mat.NewDense(m, sp.Dim(), nil)
	des.mul(U, V)
	p.curvature(C, U)
	des.tmul(dst, C)
	return opt.Stop.Err()
}

// sumsHessian applies H through the caller's summed products.
type sumsHessian struct {
	products func(V, dst *mat.Dense) error
	n        int // rows of W that are penalised (the features)
	alpha    float64
	err      error // the first failure of products: the CG stops on the NaN it leaves
}

func (h *sumsHessian) apply(dst, V *mat.Dense) {
	if h.err == nil {
		h.err = h.products(V, dst)
	}
	if h.err != nil {
		for i := range dst.RawMatrix().Data {
			dst.RawMatrix().Data[i] = math.NaN()
		}
		return
	}
	for j := 0; j < h.n; j++ {
		g, w := dst.RawRowView(j), V.RawRowView(j)
		for a := range g {
			g[a] += 2 * h.alpha * w[a]
		}
	}
}

// CheckCGSumsMemory checks the memory budget for FitCGSums on n features of sp: its vectors,
// preconditioner and the summed set-up (B, G and M, which a caller copies from its buffers;
// counted here so that it can refuse before making the copies, which a 488 MB G under a 100 MB
// budget made first, probe BP).
func CheckCGSumsMemory(sp space.Space, n int, intercept bool) error {
	k, d := int64(n), int64(sp.Dim())
	if intercept {
		k++
	}
	return budget.Check(fmt.Sprintf("conjugate gradients on %d×%d coefficients", k, d),
		budget.Add(budget.Mul(13, k, d, 8), budget.Mul(4, k, k, 8), budget.Mul(5, d, d, 8)))
}

// sumsKronMaxDim is the largest output dimension for which FitCGSums preconditions with M̄'s
// eigendecomposition (about a second at 1,024).
const sumsKronMaxDim = 1024

// FitCGSums fits the linear StructuredRidge of opt (solver cg or auto, uniform reference) on n
// features by the preconditioned conjugate gradients of Fit, from the sums of its data: setup,
// the parts' CGSetupOf added up, and products, which writes the parts' CGProductOf at V added up
// into dst. The preconditioner is the Kronecker one (kronPrecond) of the summed G and
// M̄ = S + M/Σs (its diagonal one beyond sumsKronMaxDim), whatever Fit would choose for the
// space, so the iterates differ from Fit's and the solution agrees to the tolerance. opt.Init
// warm-starts as in Fit.
func FitCGSums(sp space.Space, n int, opt Options, setup *CGSetup, products func(V, dst *mat.Dense) error) (*Model, error) {
	if err := checkCGOptions(sp, opt); err != nil {
		return nil, err
	}
	d := sp.Dim()
	k := n
	if opt.Intercept {
		k++
	}
	if n < 1 {
		return nil, fmt.Errorf("distributed conjugate gradients need at least one feature, got %d", n)
	}
	if err := xmat.CheckCentre(opt.Centre, n); err != nil {
		return nil, err
	}
	if r, c := setup.B.Dims(); r != k || c != d {
		return nil, fmt.Errorf("B is %d×%d, want %d×%d", r, c, k, d)
	}
	if setup.G.SymmetricDim() != k || setup.M.SymmetricDim() != d {
		return nil, fmt.Errorf("G is %d×%d and M %d×%d, want %d×%d and %d×%d", setup.G.SymmetricDim(), setup.G.SymmetricDim(),
			setup.M.SymmetricDim(), setup.M.SymmetricDim(), k, k, d, d)
	}
	// The sums count the weights in units of 2^e (Options.WeightExponent): the fit takes α in the
	// same units, and their total, subnormal or not, at its true scale, as Fit judges it.
	e := opt.WeightExponent
	total := math.Ldexp(setup.Weight, e)
	if !(setup.Weight > 0) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("sample_weight: the examples' weights sum to %v; they need a positive finite sum", total)
	}
	if err := checkWeightTotal(total); err != nil {
		return nil, err
	}
	alpha := math.Ldexp(opt.Alpha, -e)
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("alpha = %g against sample weights of about 2^%d leaves float64's range (alpha·2^%d = %v): "+
			"scale alpha and the weights towards each other (multiplying both by c fits the same model)", opt.Alpha, e, -e, alpha)
	}
	if setup.Count < 0 || setup.Count > maxCount { // the model's bytes, which hold it, would not read back
		return nil, fmt.Errorf("the number of examples must be in [0, 2⁶²], got %d", setup.Count)
	}
	for _, a := range [][]float64{setup.B.RawMatrix().Data, setup.G.RawSymmetric().Data, setup.M.RawSymmetric().Data} {
		if err := check.Fitted("summed moments", a); err != nil {
			return nil, err
		}
	}
	if err := CheckCGSumsMemory(sp, n, opt.Intercept); err != nil {
		return nil, err
	}
	_, S, err := uniformReference(sp, opt.Stop)
	if err != nil {
		return nil, err
	}
	mbar := mat.NewSymDense(d, nil)
	mbar.ScaleSym(1/setup.Weight, setup.M)
	mbar.AddSym(mbar, S)
	var pc linearPrecond
	if d > sumsKronMaxDim {
		// M̄'s eigendecomposition costs d³ (27 s at d = 2,048, minutes at 4,096) in one gonum call
		// that Ctrl-C cannot reach (probe FD): the diagonal preconditioner instead
		err = errIllConditioned
	} else {
		pc, err = kronPrecondOf(mbar, setup.G, alpha, opt.Intercept, opt.Stop)
	}
	if errors.Is(err, errIllConditioned) {
		curvature := diagOf(mbar)
		pc, err = newDiagScalePrecond(diagOf(setup.G), curvature, alpha, opt.Intercept), nil
		if opt.Intercept {
			pc = wrapNullIntercept(pc, nullDiagDrop(curvature))
		}
	}
	if err != nil {
		return nil, err
	}
	md := &Model{Space: sp, Kernel: opt.Kernel, Intercept: opt.Intercept, NFeatures: n, Seen: setup.Count, Solver: CG}
	md.Coef = md.warmCoef(&opt, k, d)
	centre := partCentre(opt) // the parts' X were centred there: W's coordinates are theirs
	xmat.ShiftIntercept(md.Coef, centre, 1)
	h := &sumsHessian{products: products, n: n, alpha: alpha}
	o := opt // J at the weights' own scale, as scaledWeights reports it (Ldexp: 2^1024 itself overflows)
	if progress := opt.Progress; progress != nil && e != 0 {
		o.Progress = func(it int, objective, relGrad float64) bool { return progress(it, math.Ldexp(objective, e), relGrad) }
	}
	md.Result, err = conjugateGradients(h, setup.B, pc, md.Coef, setup.Weight/2, &o)
	md.Result.Objective = math.Ldexp(md.Result.Objective, e)
	xmat.ShiftIntercept(md.Coef, centre, -1)
	if h.err != nil { // a failed product (NaN in its place) is the cause of what CG reports
		err = h.err
	}
	if err == nil {
		err = md.checkFinite()
	}
	if err != nil {
		return nil, err
	}
	if w := weightSpreadWarning(setup.Top, setup.Low, CG, true, opt.Tol); w != "" {
		md.Warnings = append(md.Warnings, w)
	}
	return md, nil
}

// WeightRows is the number of rows of the linear model's W on n features: one per feature, and
// one more for the intercept with opt.Intercept.
func WeightRows(n int, opt Options) int {
	if opt.Intercept {
		return n + 1
	}
	return n
}

// CheckDistributable refuses the fits that are not functions of per-partition sums, whatever the
// data: SGD, and kernel expansions (an exact rbf or poly kernel, a precomputed one). It needs
// the parameters alone, so that a distributed fit refuses them before it reads any partition.
func CheckDistributable(opt Options) error {
	switch {
	case opt.Solver == SGD:
		return errors.New("a distributed fit solves exactly from merged statistics (solver 'exact') or by " +
			"distributed conjugate gradients (solver 'cg'), not solver='sgd': stream the partitions through " +
			"StructuredRidge(solver='sgd').partial_fit for that")
	case opt.Kernel.Kind == kernel.Precomputed:
		return errors.New("a distributed fit takes linear models: kernel='linear', or kernel='rbf'/'poly' with " +
			"n_components (a Nyström map); kernel=precomputed is an expansion over every training sample")
	case opt.Kernel.Kind != kernel.Linear && opt.NComponents == 0:
		return fmt.Errorf("a distributed fit takes linear models: kernel='linear', or kernel='rbf'/'poly' "+
			"with n_components (a Nyström map); kernel=%v without n_components is an expansion over every training "+
			"sample", opt.Kernel.Kind)
	}
	return nil
}

// DistributedSolver resolves opt.Solver for a fit of data spread over machines on n features:
// Auto is Exact, one pass of mergeable statistics (Stats), for kernel models on a Nyström map and
// for linear ones whose normal equations have at most MaxExactUnknowns unknowns and whose
// statistics the memory budget takes, and CG (one pass of summed products per iteration,
// FitCGSums) for other linear ones. Other solvers stay.
// A fit that resolves to CG with options CG refuses (the empirical reference, say) is the error
// of checkCGOptions, returned here before any pass over the data: from the first partition's
// task it had read as a fault of that partition's rows.
//
// The fits CheckDistributable refuses are refused here too, and an exact linear fit whose
// statistics NewStats would refuse (too many unknowns, or above the memory budget).
func DistributedSolver(sp space.Space, n int, opt Options) (Solver, error) {
	if err := CheckDistributable(opt); err != nil {
		return opt.Solver, err
	}
	solver := opt.Solver
	linear := opt.Kernel.Kind == kernel.Linear && opt.NComponents == 0
	stats := &Stats{Space: sp, Intercept: opt.Intercept, NFeatures: n}
	u := stats.unknowns(n)
	large := sp.Dim() > denseMaxDim || u > MaxExactUnknowns
	// what NewStats, which the parts start from, would refuse: too many unknowns or above the
	// memory budget (a Nyström map's width waits for its landmarks)
	var statsErr error
	if linear {
		statsErr = stats.checkSize(n)
	}
	switch {
	case linear && large && opt.EmpiricalWeight > 0 && solver != CG:
		// Neither distributed solver takes it: each error named the other's (probe BC).
		return solver, fmt.Errorf("a distributed fit with empirical_weight > 0 is exact, from merged statistics of at most %d "+
			"unknowns (%s: %d here); distributed conjugate gradients "+
			"take empirical_weight=0 only: use empirical_weight=0, fewer features (a Nyström map, n_components), or "+
			"StructuredRidge in memory", MaxExactUnknowns, unknownsOf(opt.Intercept), u)
	case solver == Auto && !linear:
		solver = Exact
	case solver == Auto:
		solver = Exact
		// CG where the statistics would not fit (the budget's refusal stopped a fit that CG, and
		// the in-memory fit's auto, take; probe BZ)
		if large || statsErr != nil {
			solver = CG
		}
	}
	switch {
	case solver == CG:
		if err := checkCGOptions(sp, opt); err != nil {
			return solver, err
		}
	case solver == Exact && statsErr != nil:
		// refused before a partition is read: NewStats refused it after the first had been (probe BW)
		return solver, statsErr
	}
	return solver, nil
}
