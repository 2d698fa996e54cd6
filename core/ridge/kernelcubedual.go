package ridge

import (
	"errors"
	"math"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// kernelCubeDual solves the kernel model's optimality condition A(Γ) = b (solveKernelCG) where S
// acts as σI on the span of the δ_i (kernelDualSigma: multi-label, multi-class and k-subsets under
// the uniform measure) through a dual over the examples: the kernel form of cubeDual. With q = s^½,
// Q = diag(q), C̃ = 2αI + σQKQ and t̃ ∈ Rᵐ, the coefficients Γ = Q C̃⁻¹ diag(t̃) Δ satisfy
// 2αΓ + σ diag(s) KΓ = Q diag(t̃) Δ, so that the residual of the optimality condition is
//
//	b − A(Γ) = Q diag(r̃) Δ,   r̃ = q − H̃ t̃,   H̃ = I + L̃∘ΔΔᵀ,   L̃ = QKQ C̃⁻¹ = (I − 2αC̃⁻¹)/σ,
//
// and Γ is the optimum when H̃ t̃ = q. (Γ's rows lie in the span of the δ_i, and so do those of
// KΓ, where S u = σu: that is all the identity asks of S.) H̃ is I plus the Hadamard product of two positive
// semi-definite matrices, so its eigenvalues are at least 1 and at most 1 + max_i ‖δ_i‖²/σ = 1 + d
// (L̃ ≼ I/σ): conjugate gradients on H̃ t̃ = q converge whatever α and K. A product with H̃ is a
// solve with C̃'s Cholesky factor on d columns (H̃p = p + rowdot(Δ, (diag(p)Δ − 2αC̃⁻¹diag(p)Δ)/σ)).
// The dual's residual also bounds the objective: J(Γ) − J* = ½ r̃ᵀ(I − H̃⁻¹) r̃ ≤ ½‖r̃‖², and
// J(Γ) = −½ Σ_i (q_i − t̃_i − r̃_i)(q_i + r̃_i) + c, both at no cost.
//
// On the yeast training set (1,500 examples, 14 labels, rbf, γ = 0.02, intercept) the dual reaches
// a relative gradient of 1e-8 in 8, 12 and 18 iterations at α = 0.01, 0.03 and 1, where kernel CG
// with deflation takes 54, 40 and 13. The factorisation costs m³/3 flops (factorLower, 39 ms
// there) and a dual iteration about one product with K, so the dual serves where kernel CG would
// need many iterations, at small α, and the factorisation is cheap (useKernelCubeDual). Its Γ is
// judged by the true gradient, from two products with K, as kernel CG judges its own.
type kernelCubeDual struct {
	ks            *kernelSystem
	m, d          int
	twoAlpha, sig float64
	q             []float64      // s^½
	dd            []float64      // ‖δ_i‖²
	F             blas64.General // C̃'s factor as factorLower leaves it: L in the diagonal blocks, −L below them, Lᵀ above
	invL, invLT   [][]float64    // per diagonal block of cholPanel rows: L_bb⁻¹ and L_bb⁻ᵀ
	scratch, work *mat.Dense     // d×m
	y             []float64      // m × min(d, kernelDualCols): solve's right-hand sides, transposed
	blockT        []float64      // kernelDualOuter × min(d, kernelDualCols): solveCols's products
}

// kernelDualOuter is the block of the triangular solves' products with the columns already
// solved: wide enough for package gemm to spread over the threads.
const kernelDualOuter = 4 * cholPanel

// Constants of the choice between kernel CG and the dual (useKernelCubeDual), in products with K
// (2m²d flops), measured on the yeast training set at Tol 1e-8 (rbf, γ = 0.02, intercept, so
// that max K_ij = 2; m = 500 and 1,500; d = 6 and 14): the dual's iterations (6–18 for α from
// 0.01 to 10) and their cost (a pair of triangular solves and the rest), the factorisation's
// rate against the products' (39 ms for m³/3 flops at m = 1,500, 1.3 ms per product), kernel
// CG's iterations, about kernelPrimalIters·(2α/max K_ij)^−kernelPrimalPower (54, 28, 13 and 8
// at α = 0.01, 0.1, 1 and 10), and their cost with the deflation's work, the set-up of its
// coarse space, and the margin by which the dual's estimate must undercut kernel CG's. Measured
// against kernel CG at m = 1,500 and d = 14: 123 against 190 ms at α = 0.01, 141 against 115 at
// α = 0.1, 148 against 88 at α = 1; at d = 6 the two are level at α = 0.01 (100 ms). Multi-class
// (1,500 digits, d = 10, γ = 1/64, through Python): the dual takes more iterations, and 146–178
// against 363–442 ms at α = 0.001, 160–173 against 263 at 0.003, level at 0.01 (about 180 ms).
const (
	kernelDualIters      = 16
	kernelDualItersSum   = 25 // where every δ_i ⊥ 1 (multi-class: 27, 23 and 18 at α = 0.01, 0.003, 0.001 on 1,500 digits)
	kernelDualIterCost   = 1.2
	kernelDualFactorRate = 0.6
	kernelDualMargin     = 1.2
	kernelPrimalIters    = 13
	kernelPrimalPower    = 0.3
	kernelPrimalIterCost = 1.4
	kernelPrimalSetUp    = 17
)

// kernelDualSigma returns σ when S = σI + c·11ᵀ under the uniform measure, with c = 0 or every
// δ_i ⊥ 1 (multi-class, k-subsets: their ψ sum to a constant, reported by sumZero), so that S acts
// as σI on the δ_i's span.
func kernelDualSigma(p *Problem) (sigma float64, sumZero, ok bool) {
	if p.ref != nil || p.Delta == nil {
		return 0, false, false
	}
	dc, ok := p.Cov.(space.DiagonalPlusConstant)
	if !ok {
		return 0, false, false
	}
	diag, c := dc.DiagonalPlusConstant()
	if len(diag) == 0 || !(diag[0] > 0) || math.IsInf(diag[0], 1) {
		return 0, false, false
	}
	for _, v := range diag {
		if v != diag[0] {
			return 0, false, false
		}
	}
	if c != 0 {
		m, _ := p.dims()
		for i := 0; i < m; i++ {
			var sum, size float64
			for _, v := range p.Delta.RawRowView(i) {
				sum, size = sum+v, size+math.Abs(v)
			}
			if math.Abs(sum) > 1e-12*size {
				return 0, false, false
			}
		}
	}
	return diag[0], c != 0, true
}

// knownPSD reports whether every Gram matrix of k is positive semi-definite (up to rounding): the
// dual finds the stationary point of J, the minimum only when K is, and a precomputed or a
// polynomial kernel with coef0 < 0 is left to kernel CG, whose curvature check refuses it.
func knownPSD(k kernel.Kernel) bool {
	switch k.Kind {
	case kernel.Linear, kernel.RBF:
		return true
	case kernel.Poly:
		return k.Coef0 >= 0
	}
	return false
}

// kernelDualPlan is how solveKernelCG uses the dual: not at all (use false), first (from a cold
// start), or after kernel CG has spent primalIters iterations without converging.
type kernelDualPlan struct {
	sigma       float64
	use, first  bool
	primalIters int
}

// kernelDualSwitch is the share of the dual's estimated cost that kernel CG may spend, when the
// estimates favour it, before the dual takes over from Γ = 0 (a ski-rental rule): kernel CG's
// iterations are estimated from α alone and can be many times more (6,000 rows, 14 labels, rbf,
// α = 0.001: 586 iterations in 22 s where 103 were estimated), while the dual's are bounded by its
// conditioning. The worst case then costs (1 + kernelDualSwitch) times the dual's estimate.
const kernelDualSwitch = 1.5

// kernelDualWeightRange bounds the ratio of the largest to the smallest positive sample weight of
// the problems the dual takes (planKernelDual).
const kernelDualWeightRange = 1e12

// planKernelDual decides how solveKernelCG uses the dual for K with max |K_ij| = kScale. The dual
// serves where the problem has its structure, the weights are within a range where s_i^½ s_j^½
// neither overflows nor underflows, the kernel is known to be positive semi-definite, and its
// factor fits the memory budget; it goes first when its estimated cost is smaller (the
// factorisation's m³/3 flops against the iterations of kernel CG it saves, which grow as α falls,
// each about a product with K), and otherwise takes over if kernel CG has not converged after
// about kernelDualSwitch times that cost.
func planKernelDual(p *Problem, kScale float64, opt *Options) kernelDualPlan {
	if cubeDualMode == cubeDualNever || !knownPSD(opt.Kernel) {
		return kernelDualPlan{}
	}
	sigma, sumZero, ok := kernelDualSigma(p)
	if !ok {
		return kernelDualPlan{}
	}
	dualIters := float64(kernelDualIters)
	if sumZero {
		dualIters = kernelDualItersSum
	}
	m, d := p.dims()
	if m == 0 || d == 0 {
		return kernelDualPlan{}
	}
	// Weights s_i and α/c give the model of weights c·s_i and α: the iterations follow α over the
	// mean weight. The dual's identities are exact at any weights, but weights many orders of
	// magnitude apart spoil its check against the true gradient, after which kernel CG inherited a
	// poor Γ (weights 1e-40 to 1e40: J 12 % below the optimum reported), so such fits stay with
	// kernel CG, as do weights whose s_i^½ s_j^½ would leave the range of doubles.
	var total, lo, hi float64
	for _, w := range p.Weight {
		if w == 0 {
			continue
		}
		if !(w >= 1e-100 && w <= 1e100) {
			return kernelDualPlan{}
		}
		if lo == 0 || w < lo {
			lo = w
		}
		hi = max(hi, w)
		total += w
	}
	if !(total > 0) || hi > kernelDualWeightRange*lo {
		return kernelDualPlan{}
	}
	alpha := p.Alpha / (total / float64(m))
	// The factor, and the iteration's d×m matrices with solve's m × min(d, kernelDualCols) copy.
	need := budget.Add(budget.Mul(int64(m), int64(m), 8), budget.Mul(7, int64(m), int64(max(d, cholPanel)), 8))
	if budget.Check("", need) != nil {
		return kernelDualPlan{}
	}
	// Both counts of iterations grow as log(1/Tol) (measured at Tol 1e-8), up to MaxIter.
	digits := logmath.Log(1/max(opt.Tol, 1e-16)) / logmath.Log(1e8)
	primalIters := kernelPrimalIters * math.Pow(2*alpha/kScale, -kernelPrimalPower) * digits
	primal := kernelPrimalSetUp + kernelPrimalIterCost*min(float64(opt.MaxIter), math.Ceil(primalIters))
	// The factorisation (m³/3 flops, in products of 2m²d), the iterations, Kb and the final check.
	dual := float64(m)/(6*float64(d))/kernelDualFactorRate +
		kernelDualIterCost*min(float64(opt.MaxIter), math.Ceil(dualIters*digits)) + 3
	return kernelDualPlan{
		sigma: sigma, use: true,
		first:       cubeDualMode == cubeDualAlways || kernelDualMargin*dual < primal,
		primalIters: max(1, int(math.Ceil((kernelDualSwitch*dual-kernelPrimalSetUp)/kernelPrimalIterCost))),
	}
}

// solveKernelCubeDual runs the dual from Γ = 0 and writes its Γ (m×d) into Gamma. It reports
// done when Γ meets Tol on its true gradient or the iterations reach MaxIter (res then final);
// otherwise Gamma holds the dual's best point, or zeros if the dual could not start (C̃ not
// positive definite to working precision: a precomputed K that is not positive semi-definite),
// for kernel CG to finish within the iterations left (res.Iterations used).
func solveKernelCubeDual(ks *kernelSystem, p *Problem, K *mat.Dense, Kb *mat.Dense, kbNorm, sigma float64, Gamma *mat.Dense, opt *Options) (res Result, done bool, err error) {
	m := ks.m
	kd, err := newKernelCubeDual(ks, K, sigma, opt)
	if kd == nil || err != nil {
		return Result{}, false, err
	}
	defer releaseFloats(kd.F.Data)

	// Conjugate gradients on H̃ t̃ = q from t̃ = 0.
	t, r, pv, hp := make([]float64, m), append([]float64(nil), kd.q...), make([]float64, m), make([]float64, m)
	copy(pv, r)
	rr := dot(r, r)
	objective := func() float64 {
		var s float64
		for i, qi := range kd.q {
			s += (qi - t[i] - r[i]) * (qi + r[i])
		}
		return -0.5*s + p.Constant()
	}
	// The relative gradient ‖Kρ‖/‖Kb‖, ρ = b − A(Γ) = Q diag(r̃) Δ, costs a product with K: only
	// the progress reports ask for it at every iteration.
	relGrad := func() float64 {
		rho := kd.work
		kd.scaledTargets(rho, r, kd.q)
		ks.kmul(kd.scratch, rho)
		return norm(kd.scratch.RawMatrix().Data) / kbNorm
	}
	floor := func(j float64) float64 { return objectiveRounding * (math.Abs(j) + math.Abs(p.Constant())) }
	checkBelow := math.Inf(1) // ‖r̃‖² below which Γ is judged again after a failed check
	checks, estimated := 0, false
	for it := 0; ; {
		j := objective()
		// J(Γ) − J* ≤ ½‖r̃‖²: the second test of kernel CG's (settleIters), here a bound.
		settled := 0.5*rr <= opt.Tol*math.Abs(j)+floor(j)
		if settled && rr <= checkBelow && it < opt.MaxIter && checks == 0 && !estimated {
			// J settles long before the gradient (yeast, α = 0.01: at iteration 5 of 8, with a
			// relative gradient of 1e-6 for a Tol of 1e-8). The recurrence's residual gives the
			// gradient's estimate for one product with K, where the judge costs three and a
			// solve: below Tol, the judge decides; above it, it sets the ‖r̃‖ to reach first.
			estimated = true
			if g := relGrad(); g > opt.Tol {
				checkBelow = rr * math.Pow(opt.Tol/g, 2) / 4
			}
		}
		if settled && rr <= checkBelow || it >= opt.MaxIter {
			res, err = kd.judge(p, K, Kb, kbNorm, t, Gamma, opt)
			res.Iterations = it
			res.Converged = res.Converged && settled
			if err != nil || res.Converged || it >= opt.MaxIter {
				return res, err == nil, err
			}
			// Rounding in C̃⁻¹ or in the recurrences: iterate until r̃ has shrunk by the factor the
			// gradient misses, twice at most, then leave the rest to kernel CG from this Γ.
			if checks++; checks == 3 {
				return res, false, nil
			}
			checkBelow = rr * math.Pow(opt.Tol/res.RelGrad, 2) / 4
		}
		if opt.Stop.Yield() {
			Gamma.Zero()
			return Result{}, false, ErrCancelled
		}
		if !(rr > 0) {
			res, err = kd.judge(p, K, Kb, kbNorm, t, Gamma, opt)
			res.Iterations = it
			return res, err == nil && res.Converged, err
		}
		it++
		kd.applyH(hp, pv)
		php := dot(pv, hp)
		if !(php > 0) || math.IsInf(php, 0) {
			Gamma.Zero() // H̃ is not positive definite: K is not positive semi-definite
			return Result{}, false, nil
		}
		step := rr / php
		axpy(t, step, pv)
		axpy(r, -step, hp)
		rrNew := dot(r, r)
		if opt.Progress != nil && !opt.Progress(it, objective(), relGrad()) {
			Gamma.Zero()
			return Result{}, false, ErrCancelled
		}
		axpby(pv, rrNew/rr, r)
		rr = rrNew
	}
}

// newKernelCubeDual factors C̃ for the problem of ks; it returns nil when C̃ is not positive
// definite to working precision.
func newKernelCubeDual(ks *kernelSystem, K *mat.Dense, sigma float64, opt *Options) (*kernelCubeDual, error) {
	m, d := ks.m, ks.d
	kd := &kernelCubeDual{ks: ks, m: m, d: d, twoAlpha: ks.twoAlpha, sig: sigma,
		q: make([]float64, m), dd: make([]float64, m)}
	for i, w := range ks.w {
		kd.q[i] = math.Sqrt(w)
	}
	for a := 0; a < d; a++ {
		for i, v := range ks.DT.RawRowView(a) {
			kd.dd[i] += v * v
		}
	}
	if ok, err := kd.factor(K, opt); !ok || err != nil {
		return nil, err
	}
	kd.buffers()
	return kd, nil
}

// buffers allocates the iteration's d×m matrices and solve's.
func (kd *kernelCubeDual) buffers() {
	m, d := kd.m, kd.d
	kd.scratch, kd.work = mat.NewDense(d, m, nil), mat.NewDense(d, m, nil)
	c := min(d, kernelDualCols)
	kd.y, kd.blockT = make([]float64, m*c), make([]float64, c*kernelDualOuter)
}

// factor builds C̃ = 2αI + σQKQ from K's upper triangle and factors it; it reports false when C̃
// is not positive definite to working precision. On yeast (m = 1,500, two threads) it took
// 17.5–20.8 ms with C̃ built on one thread, the diagonal blocks inverted twice and the lower copy
// negated before each panel's update, 14.0–15.1 ms without (alternated runs).
func (kd *kernelCubeDual) factor(K *mat.Dense, opt *Options) (bool, error) {
	m := kd.m
	kr := K.RawMatrix()
	kd.F = blas64.General{Rows: m, Cols: m, Stride: m, Data: scratchFloats(m * m)} // every entry is written
	// The threads take rows in turns of 16, so that their shares of the triangle are even.
	w := min(parallel.Threads(), max(1, m*m/parallel.MinWork))
	q, sig, twoAlpha, F := kd.q, kd.sig, kd.twoAlpha, kd.F.Data
	parallel.Go(w, func(t int) {
		for r0 := 16 * t; r0 < m; r0 += 16 * w {
			for i := r0; i < min(m, r0+16); i++ {
				src, dst, qj, qi := kr.Data[i*kr.Stride+i:][:m-i], F[i*m+i:][:m-i], q[i:][:m-i], sig*q[i]
				for j, v := range src {
					dst[j] = qi * qj[j] * v
				}
				dst[0] += twoAlpha
			}
		}
	})
	invs, err := factorLower(kd.F, opt.Stop)
	if err != nil {
		if errors.Is(err, errNotPositiveDefinite) {
			return false, nil
		}
		return false, err
	}
	kd.invL = invs
	for b, inv := range invs {
		n := min(cholPanel, m-b*cholPanel)
		kd.invLT = append(kd.invLT, xmat.Transpose(mat.NewDense(n, n, inv)).RawMatrix().Data)
	}
	return true, nil
}

// scaledTargets sets dst (d×m) to (diag(v) Δ)ᵀ, or to (diag(q∘v) Δ)ᵀ when q is given.
func (kd *kernelCubeDual) scaledTargets(dst *mat.Dense, v, q []float64) {
	for a := 0; a < kd.d; a++ {
		row, del := dst.RawRowView(a), kd.ks.DT.RawRowView(a)
		for i, vi := range v {
			if q != nil {
				vi *= q[i]
			}
			row[i] = vi * del[i]
		}
	}
}

// applyH sets hp = H̃p.
func (kd *kernelCubeDual) applyH(hp, pv []float64) {
	V := kd.work
	kd.scaledTargets(V, pv, nil)
	kd.solve(kd.scratch, V) // C̃⁻¹ diag(p) Δ, transposed
	for i, pi := range pv {
		hp[i] = pi * kd.dd[i]
	}
	for a := 0; a < kd.d; a++ {
		w, del := kd.scratch.RawRowView(a), kd.ks.DT.RawRowView(a)
		for i := range hp {
			hp[i] -= kd.twoAlpha * del[i] * w[i]
		}
	}
	for i, pi := range pv {
		hp[i] = pi + hp[i]/kd.sig
	}
}

// judge writes Γ = Q C̃⁻¹ diag(t̃) Δ into Gamma and returns J, the relative gradient and
// convergence there, computed from Γ as kernel CG computes them (two products with K).
func (kd *kernelCubeDual) judge(p *Problem, K, Kb *mat.Dense, kbNorm float64, t []float64, Gamma *mat.Dense, opt *Options) (Result, error) {
	ks, d := kd.ks, kd.d
	V := kd.work
	kd.scaledTargets(V, t, nil)
	G := mat.NewDense(d, kd.m, nil)
	kd.solve(G, V)
	for a := 0; a < d; a++ {
		g := G.RawRowView(a)
		for i, qi := range kd.q {
			g[i] *= qi
		}
	}
	KG, AG, KR := mat.NewDense(d, kd.m, nil), mat.NewDense(d, kd.m, nil), mat.NewDense(d, kd.m, nil)
	ks.kmul(KG, G)
	ks.applyA(AG, G, KG)
	AG.Sub(ks.bT, AG) // ρ = b − A(Γ)
	ks.kmul(KR, AG)
	Gamma.Copy(G.T())
	kr := KR.RawMatrix().Data
	res := Result{Objective: kernelObjective(G.RawMatrix().Data, Kb.RawMatrix().Data, kr, p.Constant()), RelGrad: norm(kr) / kbNorm}
	if math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) || math.IsNaN(res.RelGrad) {
		return res, sumsOverflow("the kernel dual's", res.Objective)
	}
	res.Converged = res.RelGrad <= opt.Tol
	return res, nil
}

// solve sets XT = VT·C̃⁻¹ (the transpose of C̃⁻¹V) for VT (d×m), by the two triangular solves
// L Z = V and Lᵀ X = Z. The right-hand sides are independent: up to kernelDualCols of them (rows
// of VT) are transposed into kd.y (m×c) at a time and solved there by solveCols, whose products
// read each row of F once for all of them (package gemm's panel kernels hold up to 16 in
// registers, eight rows of F at a time). Solved in XT's layout, four right-hand sides at a time on
// each goroutine with MulT's dot products, the solves had read F once per four and taken 43 % of
// yeast's rbf fit at α = 0.01 (14 labels, one thread).
func (kd *kernelCubeDual) solve(XT, VT *mat.Dense) {
	m, d := kd.m, kd.d
	for r0 := 0; r0 < d; r0 += kernelDualCols {
		c := min(kernelDualCols, d-r0)
		Y := mat.NewDense(m, c, kd.y[:m*c])
		xmat.TransposeInto(Y, VT.Slice(r0, r0+c, 0, m).(*mat.Dense))
		kd.solveCols(Y.RawMatrix())
		xmat.TransposeInto(XT.Slice(r0, r0+c, 0, m).(*mat.Dense), Y)
	}
}

// kernelDualCols is the most right-hand sides solveCols takes at once.
const kernelDualCols = 64

// solveCols overwrites Y (m×c) with C̃⁻¹Y, block by block: the rows already solved enter through
// one product per block of kernelDualOuter rows (rows of F against rows of Y, package gemm's
// MulPanel), the diagonal blocks through their inverses. kd.blockT holds the products.
func (kd *kernelCubeDual) solveCols(Y blas64.General) {
	m, c := Y.Rows, Y.Cols
	F := kd.F
	rows := func(lo, hi int) blas64.General { // Y[lo:hi]
		return blas64.General{Rows: hi - lo, Cols: c, Stride: c, Data: Y.Data[lo*c:]}
	}
	frows := func(r0, r1, c0, c1 int) blas64.General { // F[r0:r1, c0:c1]
		return blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: F.Stride, Data: F.Data[r0*F.Stride+c0:]}
	}
	tmp := func(n int) blas64.General {
		return blas64.General{Rows: n, Cols: c, Stride: c, Data: kd.blockT[:n*c]}
	}
	// subtract sets Y[lo:hi] −= sign·F[lo:hi, c0:c1]·Y[c0:c1].
	subtract := func(lo, hi, c0, c1 int, sign float64) {
		if c1 <= c0 {
			return
		}
		T := tmp(hi - lo)
		gemm.MulPanel(T, frows(lo, hi, c0, c1), rows(c0, c1))
		y := Y.Data[lo*c : hi*c]
		for i, v := range T.Data[:len(y)] {
			y[i] -= sign * v
		}
	}
	// diagonal sets Y[b0:b0+n] = B·Y[b0:b0+n] for B one of block b's inverses (n×n).
	diagonal := func(b0 int, B []float64) {
		n := min(cholPanel, m-b0)
		T := tmp(n)
		gemm.MulPanel(T, blas64.General{Rows: n, Cols: n, Stride: n, Data: B}, rows(b0, b0+n))
		copy(Y.Data[b0*c:(b0+n)*c], T.Data[:n*c])
	}
	// L Z = V: Z_b = L_bb⁻¹ (V_b − Σ_{c<b} L_bc Z_c), the −L_bc read from F's rows below the
	// diagonal blocks.
	for o0 := 0; o0 < m; o0 += kernelDualOuter {
		o1 := min(m, o0+kernelDualOuter)
		subtract(o0, o1, 0, o0, -1)
		for b0 := o0; b0 < o1; b0 += cholPanel {
			b1 := min(o1, b0+cholPanel)
			subtract(b0, b1, o0, b0, -1)
			diagonal(b0, kd.invL[b0/cholPanel])
		}
	}
	// Lᵀ X = Z: X_b = L_bb⁻ᵀ (Z_b − Σ_{c>b} (Lᵀ)_bc X_c), (Lᵀ)_bc read from F's rows above the
	// diagonal blocks.
	last := (m - 1) / kernelDualOuter * kernelDualOuter
	for o0 := last; o0 >= 0; o0 -= kernelDualOuter {
		o1 := min(m, o0+kernelDualOuter)
		subtract(o0, o1, o1, m, 1)
		for b0 := (o1 - 1 - o0) / cholPanel * cholPanel; b0 >= 0; b0 -= cholPanel {
			lo, hi := o0+b0, min(o1, o0+b0+cholPanel)
			subtract(lo, hi, hi, o1, 1)
			diagonal(lo, kd.invLT[lo/cholPanel])
		}
	}
}
