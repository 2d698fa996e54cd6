package ridge

import (
	"math"
	"math/bits"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// cubeDual solves the linear model's normal equations in the dual over the examples, for a
// multi-label problem under the uniform measure, where S = σI (ψ ∈ {0,1}^d, p = ½, σ = ¼) and
// every δ_i has entries ±½. There H = A ⊗ I + ZᵀZ with A = 2αE + σG (k×k; G = X̃ᵀ diag(s) X̃)
// and the rows z_i = s_i^½ (δ_i ⊗ x̃_i), B = Zᵀ s^½, and Woodbury's identity turns H w = B into
//
//	(I + D K D) t = s^½,   K_ij = (x̃_iᵀ A⁻¹ x̃_j)(δ_i·δ_j),   D = diag(s^½),
//	W = A⁻¹ X̃ᵀ D diag(t) Δ.
//
// K is the Hadamard product of two m×m Gram matrices, X̃A⁻¹X̃ᵀ (m²k multiply–adds) and ΔΔᵀ, whose
// entries are (d − 2·Hamming(ψ_i, ψ_j))/4: popcounts of d/64 words, not d multiply–adds. After
// that set-up a CG iteration is one pass over K (m² entries), where the primal one is two
// products with X̃ (4mkd flops): on 5,000 × 100 with 1,000 labels, a fifth of the primal's.
// The residual of the primal system is X̃ᵀ D diag(r) Δ for the dual's residual r, which gives the
// dual an estimate of the primal's stopping rule (‖B − HW‖ ≤ Tol·‖B‖) at the cost of one product;
// it rests on A⁻¹, so solveLinearCG judges the returned W by its true gradient (checkedDual).
type cubeDual struct {
	ls   *linearSystem // B and the design (with [X 1] explicit for wide outputs)
	chol mat.Cholesky  // of A
	m, k int
	dkd  []float64 // D K D, m×m row-major, upper triangle
	// partial holds applyDual's partial sums.
	partial []float64
	sq      []float64 // s^½
	rows    *mat.Dense
}

// cubeDualSigma returns σ when p is a cube space's problem under the uniform measure: S = σI
// and p = ½ (so that every entry of Δ is ±½).
func cubeDualSigma(p *Problem) (float64, bool) {
	if p.ref != nil || p.Delta == nil {
		return 0, false
	}
	dc, ok := p.Cov.(space.DiagonalPlusConstant)
	if !ok {
		return 0, false
	}
	diag, c := dc.DiagonalPlusConstant()
	if c != 0 || len(diag) == 0 || !(diag[0] > 0) {
		return 0, false
	}
	for _, v := range diag {
		if v != diag[0] {
			return 0, false
		}
	}
	for _, v := range p.Mean {
		if v != 0.5 {
			return 0, false
		}
	}
	return diag[0], true
}

// Constants of the choice between the primal and the dual (useCubeDual), measured on the
// many-label benchmark's data: the primal's CG iterations (26 there at Tol 1e-8), the dual's (33),
// the cost of a pass over K in flops per entry (a memory-bound pass), and the margin by which the
// dual's estimate must undercut the primal's.
const (
	cubeDualPrimalIters = 25
	cubeDualIters       = 35
	cubeDualPassCost    = 16
	cubeDualMargin      = 1.5
	// cubeDualWordCost is the cost of a pair's popcount per 64-bit word, in flops.
	cubeDualWordCost = 4
	// cubeDualMaxRows bounds m: K takes m² values (512 MiB at 8,192 rows).
	cubeDualMaxRows = 8192
)

// cubeDualMode forces (cubeDualAlways: whatever the cost) or forbids (cubeDualNever) the dual, for
// tests and benchmarks; cubeDualAuto outside them.
var cubeDualMode = cubeDualAuto

const (
	cubeDualAuto = iota
	cubeDualNever
	cubeDualAlways
)

// cubeDualCandidate returns the dense system the dual would solve in place of h (with B, its
// right-hand side) and the flops of one primal iteration of h, or nil where the dual cannot stand
// in for h. The sparse-target form's arithmetic (sparseTargetPays) is weighed at
// sparseTargetPace times a dense flop, its pace measured on the many-label benchmark (20 and
// 131 ms per iteration at 1,000 and 10,000 labels with 2 % on, 2.6 and 3.6 times the estimate).
func cubeDualCandidate(p *Problem, des design, h hessian, B *mat.Dense) (*linearSystem, float64) {
	m, d := p.dims()
	k := float64(des.cols())
	switch h := h.(type) {
	case *linearSystem:
		return h, 4 * float64(m) * k * float64(d)
	case *sparseTargetSystem:
		if p.Delta == nil {
			return nil, 0
		}
		nnz := float64(len(h.rowCol))
		return &linearSystem{p: p, des: h.des, B: B}, sparseTargetPace * (sparseTargetGather*4*nnz*k + 2*k*k*float64(d))
	}
	return nil, 0
}

// sparseTargetPace is the time of a flop of the sparse-target form relative to a dense one's
// (cubeDualCandidate).
const sparseTargetPace = 3

// useCubeDual reports whether the system of ls is better solved through its dual than by primal
// iterations costing primalPerIter flops each, to opt's tolerance, and returns σ when it is: the problem has the
// dual's structure (cubeDualSigma), X is dense, the weights are within a range where
// s_i^½ s_j^½ neither overflows nor underflows, the estimated arithmetic is smaller by
// cubeDualMargin, and its matrices fit the memory budget.
func useCubeDual(ls *linearSystem, primalPerIter float64, opt *Options) (float64, bool) {
	p, des := ls.p, ls.des
	if cubeDualMode == cubeDualNever || linearPrecondMode != precondAuto || des.sp != nil {
		return 0, false
	}
	sigma, ok := cubeDualSigma(p)
	if !ok {
		return 0, false
	}
	m, d := p.dims()
	k := des.cols()
	if m == 0 || m > cubeDualMaxRows {
		return 0, false
	}
	for _, w := range p.Weight {
		if w != 0 && !(w >= 1e-100 && w <= 1e100) {
			return 0, false
		}
	}
	fm, fk, fd := float64(m), float64(k), float64(d)
	words := float64((d + 63) / 64)
	// Both counts of iterations grow as log(1/Tol) (measured at Tol 1e-8), up to MaxIter: at a
	// loose tolerance or a small MaxIter the dual's set-up does not pay (Tol 1e-3 on 8,000 × 200
	// with 1,000 labels: 2.5 s against the primal's 1.8 s).
	digits := logmath.Log(1/max(opt.Tol, 1e-16)) / logmath.Log(1e8)
	primalIters := min(float64(opt.MaxIter), math.Ceil(cubeDualPrimalIters*digits))
	dualIters := min(float64(opt.MaxIter), math.Ceil(cubeDualIters*digits))
	primal := primalIters * primalPerIter
	// Q, A⁻¹'s map, the popcounts, the passes over K, the products of W and the residuals, and
	// solveLinearCG's check of the gradient (one primal iteration).
	dual := 2*fm*fm*fk + 2*fm*fk*fk + cubeDualWordCost*fm*fm*words/2 + dualIters*cubeDualPassCost*fm*fm +
		6*fm*fk*fd + primalPerIter
	if cubeDualMode != cubeDualAlways && cubeDualMargin*dual >= primal {
		return 0, false
	}
	// K, X̃A⁻¹ and X̃ᵀ, the targets' bits and the rows diag(a)Δ of the products with X̃ᵀ.
	need := budget.Add(budget.Mul(int64(m), int64(m), 8), budget.Mul(2, int64(m), int64(k), 8),
		budget.Mul(int64(m), int64(words), 8), budget.Mul(int64(m), int64(d), 8))
	if budget.Check("", need) != nil {
		return 0, false
	}
	return sigma, true
}

// solveCubeDual minimises J through the dual system (cubeDual) from the Gram matrix G, writing
// the solution into W; it starts from zero (a warm start's W maps to no dual point that carries
// its progress over, so warm starts stay primal: see solveLinearCG). It reports false, having
// changed nothing, when A is too ill-conditioned for its inverse to be trusted; the caller then
// takes the primal.
func solveCubeDual(ls *linearSystem, G *mat.SymDense, sigma float64, W *mat.Dense, opt *Options) (Result, bool, error) {
	p, des := ls.p, ls.des
	m, d := p.dims()
	k := des.cols()
	a := mat.NewSymDense(k, nil)
	n := des.features()
	for i := 0; i < k; i++ {
		for j := i; j < k; j++ {
			a.SetSym(i, j, sigma*G.At(i, j))
		}
		if i < n || !des.intercept {
			a.SetSym(i, i, a.At(i, i)+2*p.Alpha)
		}
	}
	cd := &cubeDual{ls: ls, m: m, k: k}
	if !cd.chol.Factorize(a) || cd.chol.Cond() > 1e12 {
		return Result{}, false, nil
	}
	cd.sq = make([]float64, m)
	for i, w := range p.Weight {
		cd.sq[i] = math.Sqrt(w)
	}
	if err := cd.buildK(opt); err != nil {
		return Result{}, true, err
	}
	cd.rows = mat.NewDense(m, d, nil)
	res, t, err := cd.solve(opt)
	if err != nil {
		return res, true, err
	}
	P := mat.NewDense(k, d, nil)
	cd.tmulRows(P, t)
	if err := cd.chol.SolveTo(W, P); err != nil {
		return res, true, err
	}
	return res, true, nil
}

// buildK writes D K D: first X̃A⁻¹X̃ᵀ, then each entry times s_i^½ s_j^½ (δ_i·δ_j).
func (cd *cubeDual) buildK(opt *Options) error {
	des, m, k := cd.ls.des, cd.m, cd.k
	var inv mat.SymDense
	if err := cd.chol.InverseTo(&inv); err != nil {
		return err
	}
	Z := mat.NewDense(m, k, nil)
	des.mul(Z, mat.DenseCopyOf(&inv))
	// X̃ᵀ, k×m, so that each block of rows of K is a panel product Z_blk·X̃ᵀ (MulT's dot products
	// of 101 terms spent a third of their time storing results), restricted to the columns of
	// the upper triangle.
	xt := mat.NewDense(k, m, nil)
	n := des.features()
	for i := 0; i < m; i++ {
		for j, v := range des.X.RawRowView(i)[:n] {
			xt.Set(j, i, v)
		}
	}
	if des.intercept {
		for i := 0; i < m; i++ {
			xt.Set(n, i, 1)
		}
	}
	cd.dkd = make([]float64, m*m)
	const block = 256 // rows of K per product, between which a stop request is honoured
	for lo := 0; lo < m; lo += block {
		if err := opt.Stop.Err(); err != nil {
			return err
		}
		hi := min(lo+block, m)
		kb := blas64.General{Rows: hi - lo, Cols: m - lo, Stride: m, Data: cd.dkd[lo*m+lo:]}
		gemm.MulPanel(kb, Z.Slice(lo, hi, 0, k).(*mat.Dense).RawMatrix(), xt.Slice(0, k, lo, m).(*mat.Dense).RawMatrix())
	}
	if err := opt.Stop.Err(); err != nil {
		return err
	}
	return cd.scaleByTargets(opt.Stop)
}

// scaleByTargets multiplies K's entries by s_i^½ s_j^½ δ_i·δ_j, with δ_i·δ_j = (d − 2h)/4 for h
// the Hamming distance between ψ_i and ψ_j, counted on bit-packed rows.
func (cd *cubeDual) scaleByTargets(stop *cancel.Flag) error {
	delta, m := cd.ls.p.Delta, cd.m
	_, d := delta.Dims()
	words := (d + 63) / 64
	packed := make([]uint64, m*words)
	for i := 0; i < m; i++ {
		row, b := delta.RawRowView(i), packed[i*words:(i+1)*words]
		for a, v := range row {
			if v > 0 {
				b[a/64] |= 1 << (a % 64)
			}
		}
	}
	// The upper triangle only (applyDual reads no other), in tiles of cubeDualTile × cubeDualTile
	// entries, so that the packed rows of a tile of columns stay in cache while a tile of rows
	// passes over them (row by row over the whole triangle, the pass took 7–9 s at 8,000 rows and
	// 20,000 labels). Row tiles are dealt out in pairs (g, tiles−1−g), equal shares of the
	// triangle, and a stop request is read between tiles.
	tiles := (m + cubeDualTile - 1) / cubeDualTile
	parallel.For((tiles+1)/2, 1, func(lo, hi int) {
		for g := lo; g < hi && !stop.Stopped(); g++ {
			cd.scaleTile(g, packed, words, d, stop)
			if g != tiles-1-g {
				cd.scaleTile(tiles-1-g, packed, words, d, stop)
			}
		}
	})
	return stop.Err()
}

// cubeDualTile is the side of scaleByTargets' tiles: 64 packed rows of 20,000 labels take 160 KB.
const cubeDualTile = 64

// scaleTile scales the entries j ≥ i of the rows i of row tile g (scaleByTargets), a tile of
// columns at a time.
func (cd *cubeDual) scaleTile(g int, packed []uint64, words, d int, stop *cancel.Flag) {
	m := cd.m
	i0, i1 := g*cubeDualTile, min((g+1)*cubeDualTile, m)
	for j0 := i0; j0 < m; j0 += cubeDualTile {
		if stop.Stopped() {
			return
		}
		j1 := min(j0+cubeDualTile, m)
		for i := i0; i < i1; i++ {
			bi, ki, si := packed[i*words:(i+1)*words], cd.dkd[i*m:(i+1)*m], cd.sq[i]
			for j := max(i, j0); j < j1; j++ {
				bj := packed[j*words : (j+1)*words][:len(bi)]
				h := 0
				for w, x := range bi {
					h += bits.OnesCount64(x ^ bj[w])
				}
				ki[j] *= si * cd.sq[j] * float64(d-2*h) / 4
			}
		}
	}
}

// applyDual writes (I + DKD) x into dst from K's upper triangle, read once: four rows at a time,
// each giving its dot products with x and adding its mirror image times x into a slab's partial
// sum. The slabs are fixed (not one per thread) and summed in order, so the result does not depend
// on the number of threads.
func (cd *cubeDual) applyDual(dst, x []float64) {
	m := cd.m
	groups := (m + 3) / 4
	pairs := (groups + 1) / 2 // groups g and groups−1−g: equal shares of the triangle
	slabs := min(cubeDualSlabs, pairs)
	if len(cd.partial) < slabs*m {
		cd.partial = make([]float64, slabs*m)
	}
	parallel.For(slabs, 1, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			y := cd.partial[s*m : (s+1)*m]
			clear(y)
			for g := s * pairs / slabs; g < (s+1)*pairs/slabs; g++ {
				cd.upperGroup(4*g, x, y)
				if h := groups - 1 - g; h != g {
					cd.upperGroup(4*h, x, y)
				}
			}
		}
	})
	copy(dst, x)
	for s := 0; s < slabs; s++ {
		floats.Add(dst, cd.partial[s*m:(s+1)*m])
	}
}

// cubeDualSlabs is the number of partial sums of applyDual.
const cubeDualSlabs = 8

// upperGroup adds K's rows i…i+3 (those below m) restricted to the upper triangle, and their
// mirror images, times x into y.
func (cd *cubeDual) upperGroup(i int, x, y []float64) {
	m, K := cd.m, cd.dkd
	end := min(i+4, m)
	for a := i; a < end; a++ { // the diagonal block
		y[a] += K[a*m+a] * x[a]
		for b := a + 1; b < end; b++ {
			y[a] += K[a*m+b] * x[b]
			y[b] += K[a*m+b] * x[a]
		}
	}
	j := i + 4
	if j >= m {
		return
	}
	r0, r1, r2, r3 := K[i*m+j:(i+1)*m], K[(i+1)*m+j:(i+2)*m], K[(i+2)*m+j:(i+3)*m], K[(i+3)*m+j:(i+4)*m]
	dots := gemm.DotRows4(r0, r1, r2, r3, x[j:])
	for t, v := range dots {
		y[i+t] += v
	}
	gemm.Axpy4(y[j:], &[4]float64{x[i], x[i+1], x[i+2], x[i+3]}, r0, r1, r2, r3)
}

// tmulRows writes X̃ᵀ D diag(v) Δ into out (k×d).
func (cd *cubeDual) tmulRows(out *mat.Dense, v []float64) {
	delta := cd.ls.p.Delta
	parallel.For(cd.m, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			floats.ScaleTo(cd.rows.RawRowView(i), cd.sq[i]*v[i], delta.RawRowView(i))
		}
	})
	cd.ls.des.tmul(out, cd.rows)
}

// solve runs CG on (I + DKD) t = s^½ in units of ‖s^½‖ until its estimate of the primal residual,
// X̃ᵀ D diag(r) Δ, is at most Tol·‖B‖: the dual's tolerance starts at Tol and is tightened by the
// ratio it missed by, at most cubeDualRounds times. It returns t.
func (cd *cubeDual) solve(opt *Options) (Result, []float64, error) {
	m := cd.m
	beta := floats.Norm(cd.sq, 2)
	bnorm := mat.Norm(cd.ls.B, 2)
	b := make([]float64, m)
	floats.ScaleTo(b, 1/beta, cd.sq)
	x, r, pp, hp := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
	R := mat.NewDense(cd.k, cd.ls.p.Delta.RawMatrix().Cols, nil)
	// J = ½⟨W, HW⟩ − ⟨B, W⟩ + c with ⟨W, HW⟩ = Σ v_i(v_i − t_i), ⟨B, W⟩ = Σ s_i^½(v_i − t_i),
	// t = βx and v = (I + DKD)t = β(b − r).
	constant := cd.ls.p.Constant()
	objective := func() float64 {
		var j float64
		for i := range x {
			v := b[i] - r[i]
			j += 0.5*v*(v-x[i]) - b[i]*(v-x[i])
		}
		return beta*beta*j + constant
	}
	res := Result{}
	tau := opt.Tol
	for round := 0; ; round++ {
		// The true residual: the recursive one drifts over many iterations.
		cd.applyDual(hp, x)
		floats.SubTo(r, b, hp)
		copy(pp, r)
		rz := floats.Dot(r, r)
		for {
			if math.Sqrt(rz) <= tau || res.Iterations >= opt.MaxIter || !(rz > 0) {
				break
			}
			if opt.Stop.Yield() {
				return res, nil, ErrCancelled
			}
			cd.applyDual(hp, pp)
			curvature := floats.Dot(pp, hp)
			if !(curvature > 0) || math.IsInf(curvature, 0) {
				break
			}
			step := rz / curvature
			floats.AddScaled(x, step, pp)
			floats.AddScaled(r, -step, hp)
			res.Iterations++
			rzNew := floats.Dot(r, r)
			if opt.Progress != nil && !opt.Progress(res.Iterations, objective(), math.Sqrt(rzNew)) {
				return res, nil, ErrCancelled
			}
			floats.AddScaledTo(pp, r, rzNew/rz, pp)
			rz = rzNew
		}
		cd.applyDual(hp, x)
		floats.SubTo(r, b, hp)
		cd.tmulRows(R, r)
		res.RelGrad = beta * mat.Norm(R, 2) / bnorm
		if res.RelGrad <= opt.Tol || round == cubeDualRounds || res.Iterations >= opt.MaxIter ||
			!(res.RelGrad < math.Inf(1)) {
			break
		}
		tau *= max(1e-3, 0.5*opt.Tol/res.RelGrad)
	}
	res.Objective = objective()
	res.Converged = res.RelGrad <= opt.Tol
	if math.IsNaN(res.RelGrad) || math.IsInf(res.RelGrad, 0) || math.IsNaN(res.Objective) || math.IsInf(res.Objective, 0) {
		bad := res.RelGrad
		if !math.IsNaN(bad) && !math.IsInf(bad, 0) {
			bad = res.Objective
		}
		return res, nil, sumsOverflow("the cg solver's", bad)
	}
	floats.Scale(beta, x)
	return res, x, nil
}

// cubeDualRounds bounds how often solve tightens the dual's tolerance.
const cubeDualRounds = 3
