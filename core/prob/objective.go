package prob

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// Problem is a training set for the MAP objective
//
//	J(W) = λ‖W‖² + (1/m) Σ_i w_i [log Z(u_i) − ⟨u_i, ψ(y_i)⟩],   u_i = Wᵀx̃_i,
//	∇J   = 2λW + (1/m) Σ_i w_i x̃_i (E_{p(·|x_i)}[ψ] − ψ(y_i))ᵀ,
//
// with x̃_i = x_i, or (x_i, 1) with an intercept whose row of W is not penalised, and sample
// weights w_i (1 when not given) scaled to mean 1, so that the data term is the weighted mean
// (1/Σw) Σ_i w_i [...]: an integer weight k is then the same as k copies of the row, and a zero
// weight the same as removing it. W has Cols() rows and Dim() columns.
type Problem struct {
	sp        space.Space
	X         xmat.Matrix // m × n, a view of the caller's slice or CSR matrix
	m, n      int
	intercept bool
	ys        []int64    // m × Width(): the structures y_i, a view of the caller's slice
	psiY      *mat.Dense // m × d: ψ(y_i)
	weights   []float64  // nil: all 1; else scaled to mean 1
	weightSum float64    // Σ of the weights as given (m when nil)
	lambda    float64
	// centre, when not nil, is the weighted mean of X's rows at which the fit works (with an
	// intercept: a constant added to the features changes nothing, fit.go): W holds coefficients
	// on X − 1·centreᵀ. A dense X is centred in a copy (X holds it); a sparse X stays as it is
	// (implicit) and the products take the centre out of their result.
	centre   []float64
	implicit bool
	// origin, when not nil, is the centre of W's coordinates where it differs from centre: a
	// sparse X whose fully stored columns were shifted to their means in a copy (shiftDenseColumns)
	// leaves centre 0 on them.
	origin []float64
	// scratch is dataTerm's working set between evaluations (nil while one holds it).
	scratch atomic.Pointer[dataScratch]
}

// coordinates returns the centre of the coordinates W is fitted in (nil: X's own).
func (p *Problem) coordinates() []float64 {
	if p.origin != nil {
		return p.origin
	}
	return p.centre
}

// shiftDenseColumns replaces a sparse X, centred implicitly, by a copy whose fully stored columns
// are shifted to their means, where shifting the stored values is X − 1μᵀ exactly, and leaves the
// implicit centre the other columns'. Implicitly, a column at 10⁸ ± 1 took the mean out of products
// of that size: L-BFGS ran its 5,000 iterations and warned where the dense X, centred in a copy,
// met tol in 8 (probe AT). A copy the budget refuses leaves X as it is.
func (p *Problem) shiftDenseColumns() {
	if p.X.Sparse == nil || !p.implicit || p.centre == nil {
		return
	}
	shifted, shift := p.X.Sparse.CentredDenseColumns(p.centre)
	if shifted == nil {
		return
	}
	rest := make([]float64, p.n)
	for j, c := range p.centre {
		rest[j] = c - shift[j] // 0 where the copy is centred
	}
	p.X, p.origin, p.centre = xmat.Matrix{Sparse: shifted}, p.centre, rest
}

// NewProblem checks a data set: X (m×n, row-major, finite), structures ys (m × Width(), valid),
// optional positive finite weights and λ > 0. X is viewed, not copied: it must not change while
// the Problem is in use.
func NewProblem(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, lambda float64, intercept bool) (*Problem, error) {
	if m < 1 || n < 1 {
		return nil, fmt.Errorf("prob: X must have at least one sample and one feature, got %d×%d", m, n)
	}
	if len(X) != m*n {
		return nil, fmt.Errorf("prob: X has %d values, want %d×%d", len(X), m, n)
	}
	if err := check.FiniteMagnitude("X", X, n); err != nil {
		return nil, err
	}
	return newProblem(sp, xmat.Matrix{Dense: mat.NewDense(m, n, X)}, ys, weights, lambda, intercept)
}

// NewProblemCSR is NewProblem on a sparse X (m×n CSR, viewed: it must not change while the
// Problem is in use).
func NewProblemCSR(sp space.Space, X *xmat.CSR, ys []int64, weights []float64, lambda float64, intercept bool) (*Problem, error) {
	m, n := X.Dims()
	if m < 1 || n < 1 {
		return nil, fmt.Errorf("prob: X must have at least one sample and one feature, got %d×%d", m, n)
	}
	if err := X.CheckMagnitude("X"); err != nil {
		return nil, err
	}
	return newProblem(sp, xmat.Matrix{Sparse: X}, ys, weights, lambda, intercept)
}

func newProblem(sp space.Space, X xmat.Matrix, ys []int64, weights []float64, lambda float64, intercept bool) (*Problem, error) {
	m, n := X.Dims()
	if err := space.ValidateTargets(sp, ys, m); err != nil {
		return nil, err
	}
	weightSum := float64(m)
	if weights != nil {
		sum, err := checkWeights(weights, m)
		if err != nil {
			return nil, err
		}
		weightSum = sum
		scaled := make([]float64, m)
		for i, w := range weights {
			scaled[i] = w * (float64(m) / sum)
		}
		weights = scaled
	}
	if err := check.ScaledAlpha(lambda); err != nil { // after the data: the default λ is derived from it
		return nil, err
	}
	d := sp.Dim()
	psi := make([]float64, m*d)
	space.EmbedRows(sp, ys, m, psi)
	return &Problem{sp: sp, X: X, m: m, n: n, intercept: intercept, ys: ys,
		psiY: mat.NewDense(m, d, psi), weights: weights, weightSum: weightSum, lambda: lambda}, nil
}

// checkWeightValues refuses sample weights that are not m finite values ≥ 0, and returns their sum.
func checkWeightValues(weights []float64, m int) (float64, error) {
	if len(weights) != m {
		return 0, fmt.Errorf("sample_weight has %d entries for %d samples", len(weights), m)
	}
	var sum float64
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("sample_weight[%d] = %v: weights must be finite and non-negative", i, w)
		}
		sum += w
	}
	return sum, nil
}

// checkWeights is checkWeightValues, also refusing a sum that is not positive and finite.
func checkWeights(weights []float64, m int) (float64, error) {
	sum, err := checkWeightValues(weights, m)
	if err != nil {
		return 0, err
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return 0, fmt.Errorf("prob: sample_weight: the weights sum to %v; they need a positive finite sum", sum)
	}
	return sum, nil
}

// Cols is the number of rows of W: n, plus one for the intercept.
func (p *Problem) Cols() int {
	if p.intercept {
		return p.n + 1
	}
	return p.n
}

// Objective returns J(W) and, when grad (Cols()×Dim()) is not nil, writes ∇J into it. With exact
// inference both are exact; with sampled inference the gradient's expectations are means over
// samples (an unbiased estimate when they are exact CFTP samples) and J, which would need log Z,
// is NaN. Rows are processed in parallel; row i's samples are seeded by (seed, i).
func (p *Problem) Objective(W *mat.Dense, inf InferenceOptions, seed uint64, grad *mat.Dense) (float64, error) {
	return p.objectiveRows(W, nil, inf, seed, grad, nil)
}

// sampledGradient is what a sampled fit carries from one gradient to the next, and what each
// gradient reports back.
type sampledGradient struct {
	chains   []*chainStates // per row: its persistent chains (nil: fresh chains at every gradient)
	rowNorms []float64      // ‖x̃_i‖², the row's squared norm with the intercept's 1; nil: no noise wanted
	// noise is set to the Monte Carlo standard error of the gradient, √E‖ĝ − E ĝ‖² =
	// √(Σ_i (s_i/b)² ‖x̃_i‖² tr Cov(Ê_i)) over the b rows, s_i their weights.
	noise float64
}

// objectiveRows is Objective on the rows listed (all when rows is nil), with the data term
// averaged over them: an unbiased estimate of the full average for a uniform minibatch.
func (p *Problem) objectiveRows(W *mat.Dense, rows []int, inf InferenceOptions, seed uint64, grad *mat.Dense, sg *sampledGradient) (float64, error) {
	inf.DispersedCheck = false // the mixing check's verdict has no use in J or its gradient
	s, b, err := p.dataTerm(W, rows, inf, seed, grad, sg)
	if err != nil {
		return 0, err
	}
	return penalized(W, p.n, p.lambda, s, float64(b), grad), nil
}

// DataSums returns the data term of J over the Problem's rows as sums, not averaged: loss =
// Σ_i s_i [log Z(u_i) − ⟨u_i, ψ(y_i)⟩] and, in grad (Cols()×Dim()), Σ_i s_i x̃_i (E[ψ] − ψ(y_i))ᵀ,
// with the sample weights s_i as given to NewProblem (1 when nil), and weight = Σ_i s_i. Sums over
// disjoint sets of rows add up to the sums over their union, which FitSums turns into J and ∇J: a
// fit whose rows are spread over machines. Inference must be exact.
func (p *Problem) DataSums(W *mat.Dense, inf InferenceOptions, grad *mat.Dense) (loss, weight float64, err error) {
	if err := sumsInference(p.sp, inf); err != nil {
		return 0, 0, err
	}
	if r, c := grad.Dims(); r != p.Cols() || c != p.sp.Dim() {
		return 0, 0, fmt.Errorf("prob: the gradient is %d×%d, want %d×%d", r, c, p.Cols(), p.sp.Dim())
	}
	s, _, err := p.dataTerm(W, nil, inf, 0, grad, nil)
	if err != nil {
		return 0, 0, err
	}
	// The rows' weights were scaled to mean 1: undo it, so that the sums carry the raw weights.
	scale := p.weightSum / float64(p.m)
	grad.Scale(scale, grad)
	return s * scale, p.weightSum, nil
}

// dataScratch is dataTerm's working set: a batch's scores and gradient rows (b × d each) and its
// loss terms. The Problem keeps it between evaluations: made at each one, two m × d matrices of
// garbage per L-BFGS step let the Go heap grow to twice the fit's working set before it collected
// (a Permutations(6) fit peaked at 2.4 times the budget its working set was checked against, probe EE).
type dataScratch struct {
	u, g, terms []float64
}

// takeScratch returns the Problem's scratch, grown to b rows of d, or a new one while another
// evaluation holds it; dataTerm stores it back when done.
func (p *Problem) takeScratch(b, d int) *dataScratch {
	sc := p.scratch.Swap(nil)
	if sc == nil {
		sc = &dataScratch{}
	}
	if cap(sc.u) < b*d || cap(sc.terms) < b {
		sc.u, sc.g, sc.terms = make([]float64, b*d), make([]float64, b*d), make([]float64, b)
	}
	return sc
}

// dataTerm writes Σ_k s_k x̃_k (E[ψ] − ψ(y_k))ᵀ over the rows listed (all when rows is nil) into
// grad (when not nil) and returns Σ_k s_k [log Z(u_k) − ⟨u_k, ψ(y_k)⟩] (NaN with sampled
// inference) and the number of rows, s_k the scaled weights.
func (p *Problem) dataTerm(W *mat.Dense, rows []int, inf InferenceOptions, seed uint64, grad *mat.Dense, sg *sampledGradient) (float64, int, error) {
	if err := inf.validate(); err != nil {
		return 0, 0, err
	}
	d := p.sp.Dim()
	if r, c := W.Dims(); r != p.Cols() || c != d {
		return 0, 0, fmt.Errorf("prob: W is %d×%d, want %d×%d", r, c, p.Cols(), d)
	}
	// All rows (a full-batch evaluation): the products read X where it lies; a minibatch gathers
	// its rows first.
	Xb, b := p.X, p.m
	if rows != nil {
		Xb, b = p.X.CopyRows(rows), len(rows)
	}
	sc := p.takeScratch(b, d)
	defer p.scratch.Store(sc)
	U, G, terms := mat.NewDense(b, d, sc.u[:b*d]), mat.NewDense(b, d, sc.g[:b*d]), sc.terms[:b]
	Wx := W
	if p.implicit && p.centre != nil {
		// (x − c)ᵀW + b = xᵀW + (b − Wᵀc)
		Wx = mat.DenseCopyOf(W)
		xmat.ShiftIntercept(Wx, p.centre, -1)
	}
	scoresX(U, Xb, Wx, p.intercept)
	var failed firstFailure // a row failed (e.g. a sampler hit its work bound): skip the rest
	exact := inf.exact(p.sp)
	var noise []float64 // per row of the batch: (s_i/b)² ‖x̃_i‖² tr Cov(Ê_i)
	if sg != nil && !exact && sg.rowNorms != nil {
		noise = make([]float64, b)
	}
	// Ctrl-C is checked between rows (and every bruteForceStopEvery structures of a sum over the
	// space): one evaluation of exact inference on Permutations(15) over 2,000 rows took seconds,
	// and a line search makes several.
	stop := inf.Sampler.Stop
	if exact && bruteForced(p.sp) {
		if err := p.bruteForceTerm(U, G, terms, rows, stop); err != nil {
			return 0, 0, err
		}
	} else {
		p.rowTerms(U, G, terms, rows, inf, seed, sg, noise, exact, &failed)
	}
	if failed.err != nil {
		return 0, 0, failed.err
	}
	if err := stop.Err(); err != nil {
		return 0, 0, err
	}
	if noise != nil {
		var v float64
		for _, x := range noise {
			v += x
		}
		sg.noise = math.Sqrt(v)
	}
	s := math.NaN()
	if exact {
		s = 0
		for _, t := range terms {
			s += t
		}
	}
	if grad != nil {
		gradientProductX(grad, Xb, G, p.intercept)
		if p.implicit && p.centre != nil {
			xmat.CentreTMul(grad, p.centre)
		}
	}
	return s, b, nil
}

// bruteForceTerm is dataTerm's inference for a space summed over every structure
// (bruteForceRows, the space enumerated once for all rows): each row's G = s_i (E[ψ] − ψ(y_i))
// and term s_i [log Z(u_i) − ⟨u_i, ψ(y_i)⟩], for the rows of the batch (rows; nil: all).
func (p *Problem) bruteForceTerm(U, G *mat.Dense, terms []float64, rows []int, stop *cancel.Flag) error {
	b, d := U.Dims()
	if k, err := checkScoreRows(p.sp, U.RawMatrix().Data[:b*d], b); err != nil {
		return fmt.Errorf("row %d: %w", p.rowIndex(rows, k), err)
	}
	logZ := make([]float64, b)
	if err := bruteForceRows(p.sp, U.RawMatrix().Data[:b*d], b, G.RawMatrix().Data[:b*d], logZ, stop); err != nil {
		return err
	}
	for k := 0; k < b; k++ {
		i := p.rowIndex(rows, k)
		w := 1.0
		if p.weights != nil {
			w = p.weights[i]
		}
		u, g, py := U.RawRowView(k), G.RawRowView(k), p.psiY.RawRowView(i)
		for j := range g {
			g[j] = w * (g[j] - py[j])
		}
		terms[k] = w * (logZ[k] - dot(u, py))
	}
	return nil
}

// rowIndex is the row of the data that row k of a batch of rows holds (rows nil: all, in order).
func (p *Problem) rowIndex(rows []int, k int) int {
	if rows != nil {
		return rows[k]
	}
	return k
}

// rowTerms is dataTerm's inference row by row, in parallel: each row's marginals (exact or
// sampled, with a sampled fit's chains and noise estimate when sg is set), G and terms as
// bruteForceTerm's; the first failing row is recorded in failed and the others skipped.
func (p *Problem) rowTerms(U, G *mat.Dense, terms []float64, rows []int, inf InferenceOptions, seed uint64,
	sg *sampledGradient, noise []float64, exact bool, failed *firstFailure) {
	b, _ := U.Dims()
	stop := inf.Sampler.Stop
	parallel.For(b, 4, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if failed.failed.Load() || stop.Stopped() {
				return
			}
			i := p.rowIndex(rows, k)
			u := U.RawRowView(k)
			g := G.RawRowView(k)
			var rs *rowSampling
			if sg != nil && !exact {
				rs = &rowSampling{variance: noise != nil}
				if sg.chains != nil {
					rs.chains = sg.chains[i]
				}
			}
			info, err := marginalsFrom(p.sp, u, inf, deriveSeed(seed, uint64(i)), g, false, rs)
			if err != nil {
				failed.record(k, fmt.Errorf("row %d: %w", i, err))
				return
			}
			w := 1.0
			if p.weights != nil {
				w = p.weights[i]
			}
			if noise != nil {
				noise[k] = w * w * sg.rowNorms[i] * rs.trCov / float64(b) / float64(b)
			}
			py := p.psiY.RawRowView(i)
			for j := range g {
				g[j] = w * (g[j] - py[j])
			}
			if exact {
				terms[k] = w * (info.LogZ - dot(u, py))
			}
		}
	})
}

// penalized turns the data term's sums over rows of total weight b — loss = Σ_i s_i ℓ_i and, in
// grad, Σ_i s_i x̃_i (E[ψ] − ψ(y_i))ᵀ — into J = λ‖W_{:n}‖² + loss/b and, in place, ∇J = grad/b +
// 2λW_{:n}, the first n rows of W (the intercept's row is not penalised). grad may be nil.
func penalized(W *mat.Dense, n int, lambda, loss, b float64, grad *mat.Dense) float64 {
	var pen float64
	for j := 0; j < n; j++ {
		for _, v := range W.RawRowView(j) {
			pen += v * v
		}
	}
	if grad != nil {
		grad.Scale(1/b, grad)
		for j := 0; j < n; j++ {
			gr, wr := grad.RawRowView(j), W.RawRowView(j)
			for a := range gr {
				gr[a] += 2 * (lambda * wr[a]) // not (2λ)·w: 2λ overflows for λ near 1e308, and ∞·0 is NaN
			}
		}
	}
	return lambda*pen + loss/b
}
