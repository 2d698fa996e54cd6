package ridge

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// linearStats are the sufficient statistics of the linear model: every term of its normal
// equations (docs/design.md §2)
//
//	(2αI' + S⊗G + ZᵀZ) w = vec(B),   G = X̃ᵀdiag(s)X̃,  ZᵀZ = Σ_i s_i (δ_iδ_iᵀ)⊗(x̃_ix̃_iᵀ),  B = X̃ᵀdiag(s)Δ,
//
// is a sum over examples, so one pass over the data, in as many chunks as one likes, gives the
// exact solution (Fit with the exact solver, and PartialFit). They are kept as the moments
//
//	M[q, (j,l)] = Σ_i s_i c_q(ψ_i) x̂_ij x̂_il,   x̂_i = (x_i, 1),  j ≤ l,
//	c_q(ψ) ∈ {ψ_aψ_b (a ≤ b), ψ_a, 1},
//
// (rows q in that order, columns the pairs j ≤ l packed by triIndex), from which ZᵀZ, G, B and
// Σs follow with δ = ψ − p (solve). The moments do not depend on α or on the intercept, and being
// in ψ rather than δ they cost one update per pair of non-zero coordinates of ψ(y_i), which is
// sparse in most spaces (one-hot for multiclass, a few labels for multilabel): accumulating a
// sample costs O(nnz(ψ)² n²/4) instead of the O(d² n²/2) of forming z_i z_iᵀ. The symmetric pairs
// also halve the work and the memory twice over. Memory is O(n²d²/4), independent of m.
type linearStats struct {
	n, d  int        // features of x (without the constant) and coordinates of ψ
	M     *mat.Dense // (d(d+1)/2 + d + 1) × (n+1)(n+2)/2
	count int64      // examples accumulated
	// shift, when not nil, is subtracted from every x before it is accumulated: with an
	// intercept, the weighted mean of the rows so far (statsShift, then recentre before each later
	// chunk). The moments and the solution are then those of the shifted inputs, the same model
	// in other coordinates (xmat.ShiftIntercept takes W back); reshift moves the moments exactly.
	shift []float64
}

// statsDims returns the shape of the moment matrix for n features and d coordinates.
func statsDims(n, d int) (rows, cols int) {
	k := n + 1
	return d*(d+1)/2 + d + 1, k * (k + 1) / 2
}

func newLinearStats(n, d int) *linearStats {
	r, c := statsDims(n, d)
	return &linearStats{n: n, d: d, M: mat.NewDense(r, c, nil)}
}

// clone returns an independent copy, so that a model's statistics are never modified.
func (st *linearStats) clone() *linearStats {
	return &linearStats{n: st.n, d: st.d, M: mat.DenseCopyOf(st.M), count: st.count, shift: slices.Clone(st.shift)}
}

// triIndex is the position of (i, j), i ≤ j, in the row-major packed upper triangle of an n×n
// symmetric matrix.
func triIndex(i, j, n int) int {
	return i*n - i*(i-1)/2 + j - i
}

// statsBlock is the largest number of examples add takes at a time; statsProducts bounds the
// products x̂_j x̂_l of a block it holds (16 MB), and statsCols is the number of columns of M each
// task of add updates: a block's products and M's rows over those columns (256 × 256 values, and
// 231 × 256 for 20 labels) stay near the second level of cache while the examples go by. On
// 100,000 × 50 features and 20 labels, 128 columns took 0.78 s, 256 0.68 s, 512 0.86 s.
const (
	statsBlock    = 256
	statsProducts = 1 << 21
	statsCols     = 256
)

// add accumulates the examples of p with the inputs of des (m×n, dense or sparse), or returns
// ErrCancelled when stop is set, leaving the statistics partly updated (PartialFit adds to a clone,
// which it then drops).
//
// M = Σ_i c(ψ_i) ⊗ s_i x̂_i x̂_iᵀ is a sparse matrix (the c_q(ψ_i) of each example's non-zero
// coordinates) times the dense products of each example's features, taken a block of examples at
// a time: each task computes the block's products s_i x̂_ij x̂_il over its columns, then adds, for
// each row q of M, the examples whose c_q is not zero, four at a time (gemm.Axpy4: M's row read
// once for four examples). One example at a time, each of its (z² + 3z + 2)/2 rows of M was read
// and written for it alone: 1.15 s for 100,000 examples of 50 features and 20 labels, half of them
// on, where this takes 0.68 s (2 cores).
func (st *linearStats) add(p *Problem, des design, stop *cancel.Flag) error {
	m, n := des.samples(), des.features()
	d, k := st.d, n+1
	rowsM, pk := st.M.Dims()
	pd := d * (d + 1) / 2
	pj, pl := make([]int, pk), make([]int, pk)
	for j := 0; j < k; j++ {
		for l := j; l < k; l++ {
			q := triIndex(j, l, k)
			pj[q], pl[q] = j, l
		}
	}
	// beyond statsProducts, one example's products: as many values as a row of M
	block := max(1, min(statsBlock, statsProducts/pk, m))
	xh := make([]float64, block*k) // the block's rows x̂ = (x − shift, 1)
	ws := make([]float64, block)   // and their weights s (0: the row is not used)
	P := make([]float64, block*pk) // row r: s_r x̂_rj x̂_rl over the pairs j ≤ l
	// for each row q of M, the block's examples with c_q(ψ) ≠ 0 and those values, in order
	users, coefs := make([][]int, rowsM), make([][]float64, rowsM)
	var active []int // the rows q with examples in this block, in the order first used
	var nzA []int
	var nzV []float64
	chunks := (pk + statsCols - 1) / statsCols
	for lo := 0; lo < m; lo += block {
		if stop.Yield() {
			return ErrCancelled
		}
		hi := min(lo+block, m)
		for _, q := range active {
			users[q], coefs[q] = users[q][:0], coefs[q][:0]
		}
		active = active[:0]
		use := func(q, r int, c float64) {
			if len(users[q]) == 0 {
				active = append(active, q)
			}
			users[q], coefs[q] = append(users[q], r), append(coefs[q], c)
		}
		for i := lo; i < hi; i++ {
			s, r := p.Weight[i], i-lo
			if ws[r] = s; s == 0 {
				continue
			}
			x := xh[r*k : (r+1)*k]
			des.rowInto(i, x[:n])
			if st.shift != nil {
				floats.Sub(x[:n], st.shift)
			}
			x[n] = 1
			nzA, nzV = nzA[:0], nzV[:0]
			for c, del := range p.Delta.RawRowView(i) {
				if psi := del + p.Mean[c]; psi != 0 {
					nzA, nzV = append(nzA, c), append(nzV, psi)
				}
			}
			for u, au := range nzA {
				use(pd+au, r, nzV[u])
				for w := u; w < len(nzA); w++ {
					use(triIndex(au, nzA[w], d), r, nzV[u]*nzV[w])
				}
			}
			use(pd+d, r, 1)
		}
		// The columns are split between the goroutines: every entry accumulates the examples in
		// the same order whatever the number of threads, so the result is reproducible.
		parallel.For(chunks, 1, func(ch0, ch1 int) {
			for ch := ch0; ch < ch1; ch++ {
				// A block takes up to a second at 8,000 unknowns: the caller discards the
				// statistics of a cancelled add.
				if stop.Yield() {
					return
				}
				c0, c1 := ch*statsCols, min((ch+1)*statsCols, pk)
				row := func(r int) []float64 { return P[r*pk+c0 : r*pk+c1] }
				for r := 0; r < hi-lo; r++ { // the products of this task's columns, for the examples used
					if ws[r] == 0 {
						continue
					}
					x, pr := xh[r*k:(r+1)*k], row(r)
					for c := range pr {
						pr[c] = ws[r] * x[pj[c0+c]] * x[pl[c0+c]]
					}
				}
				for _, q := range active {
					rs, cs := users[q], coefs[q]
					dst := st.M.RawRowView(q)[c0:c1]
					t := 0
					for ; t+4 <= len(rs); t += 4 {
						a := [4]float64{cs[t], cs[t+1], cs[t+2], cs[t+3]}
						gemm.Axpy4(dst, &a, row(rs[t]), row(rs[t+1]), row(rs[t+2]), row(rs[t+3]))
					}
					for ; t < len(rs); t++ {
						gemm.Axpy(dst, cs[t], row(rs[t]))
					}
				}
			}
		})
	}
	if err := stop.Err(); err != nil {
		return err
	}
	st.count += int64(m)
	return nil
}

// moments returns the weighted moments of the structures accumulated: the entries of M in the
// column of the constant feature's pair (x̂_{n}x̂_{n} = 1).
func (st *linearStats) moments() psiMoments {
	d, kh := st.d, st.n+1
	c := triIndex(st.n, st.n, kh)
	pd := d * (d + 1) / 2
	mo := psiMoments{first: make([]float64, d), second: mat.NewSymDense(d, nil), sum: st.M.At(pd+d, c)}
	for a := 0; a < d; a++ {
		mo.first[a] = st.M.At(pd+a, c)
		for b := a; b < d; b++ {
			mo.second.SetSym(a, b, st.M.At(triIndex(a, b, d), c))
		}
	}
	return mo
}

// unknowns is the size of the normal equations: (rows of W)·d.
func (st *linearStats) unknowns(intercept bool) int {
	k := st.n
	if intercept {
		k++
	}
	return k * st.d
}

// normal forms H₀ = 2αI' + S⊗G + ZᵀZ (w indexed a·k + j for W[j, a], k rows of W), the right-hand
// side vec(B) and Σs from the moments, with δ = ψ − mean.
// It gives up with ErrCancelled, returning nils, as soon as stop is set: at 8,000 unknowns it
// takes half a second.
func (st *linearStats) normal(S *mat.SymDense, mean []float64, alpha float64, intercept bool, stop *cancel.Flag) (*mat.SymDense, *mat.VecDense, float64, error) {
	n, d := st.n, st.d
	k, kh := n, n+1
	if intercept {
		k++
	}
	pd := d * (d + 1) / 2
	moment := func(q, j, l int) float64 {
		if j > l {
			j, l = l, j
		}
		return st.M.At(q, triIndex(j, l, kh))
	}
	// every entry on and above the diagonal is written below, and none under it is read
	H := mat.NewSymDense(k*d, scratchFloats(k*d*k*d))
	hraw := H.RawSymmetric()
	mraw := st.M.RawMatrix()
	momentRow := func(q int) []float64 { return mraw.Data[q*mraw.Stride : q*mraw.Stride+mraw.Cols] }
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			if stop.Yield() {
				return nil, nil, 0, ErrCancelled
			}
			sab, pa, pb := S.At(a, b), mean[a], mean[b]
			mab, ma, mb, m0 := momentRow(triIndex(a, b, d)), momentRow(pd+a), momentRow(pd+b), momentRow(pd+d)
			entry := func(c int) float64 { // the moments' column c: the pair of features (j, l)
				g := m0[c]
				t := mab[c] - pb*ma[c] - pa*mb[c] + pa*pb*g
				return sab*g + t
			}
			for j := 0; j < k; j++ {
				// row a·k + j of H from its column b·k + lo on: the upper triangle
				lo := 0
				if a == b {
					lo = j
				}
				out := hraw.Data[(a*k+j)*hraw.Stride+b*k : (a*k+j)*hraw.Stride+b*k+k]
				for l := lo; l < j; l++ { // the pair (l, j), column triIndex(l, j)
					out[l] = entry(triIndex(l, j, kh))
				}
				for l, c := max(lo, j), triIndex(j, max(lo, j), kh); l < k; l, c = l+1, c+1 {
					out[l] = entry(c)
				}
				if a == b && j < n {
					out[j] += 2 * alpha
				}
			}
		}
	}
	rhs := mat.NewVecDense(k*d, nil)
	for a := 0; a < d; a++ {
		for j := 0; j < k; j++ {
			rhs.SetVec(a*k+j, moment(pd+a, j, n)-mean[a]*moment(pd+d, j, n))
		}
	}
	return H, rhs, moment(pd+d, n, n), nil
}

// solve returns the exact minimiser W (k×d) of J for the accumulated examples, by Cholesky of the
// normal equations, and J and the relative gradient there, computed from the statistics.
func (st *linearStats) solve(S *mat.SymDense, mean []float64, alpha float64, intercept bool, stop *cancel.Flag) (*mat.Dense, Result, error) {
	H, rhs, sumW, err := st.normal(S, mean, alpha, intercept, stop)
	if err != nil {
		return nil, Result{}, err
	}
	defer releaseFloats(H.RawSymmetric().Data)
	d := st.d
	k := st.unknowns(intercept) / d
	hraw := H.RawSymmetric()
	for i := 0; i < hraw.N; i++ {
		if stop.Yield() {
			return nil, Result{}, ErrCancelled
		}
		for _, v := range hraw.Data[i*hraw.Stride+i : i*hraw.Stride+hraw.N] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, Result{}, sumsOverflow("the exact solver's", v)
			}
		}
	}
	// Along J's null directions (zero average curvature M̄: span(1) of multiclass, a subtree's root)
	// every row of H is 2α alone, or nothing on the intercept's, and B has no component there, so
	// the optimum has none. At a tiny α, or weights that put the data's curvature far above 2α,
	// that block made D H D singular in double precision (alpha = 1e-16 on multiclass, probe AU)
	// while CG, which drops those directions (nullspace.go), solved the same problem. A penalty of
	// each row's own scale there keeps the factorisation well conditioned and the optimum as it is.
	// J's null directions lie in S's (M̄ = S + the examples' curvature): where S has none (multi-
	// label), neither has J, and M̄'s eigendecomposition is spared.
	//
	// Nothing else is penalised: S's null directions are J's in exact arithmetic (Sv = 0 makes vᵀψ
	// constant on the measure's support, which holds every weighted training structure, so δ_iᵀv =
	// 0), and the directions S's looser threshold (nullRelTol) adds are real curvature of the
	// examples. The intercept's 2α there, which the solver added until probe DR, biased the optimum
	// wherever the weights put S's smallest eigenvalues below 1e-10 of its largest: empirical_weight
	// = 1 with five rows weighted 1e11 against forty near 1 gave coefficients 3.3e-3 from the optimum
	// and the intercept 9.5e-2 (now 1.9e-6, the rounding of S at that ratio).
	null, err := nullProjector(S)
	if err != nil {
		return nil, Result{}, err
	}
	zero := mat.NewSymDense(d, nil)
	if !isZeroSym(null) {
		if zero, err = st.zeroProjector(S, mean); err != nil {
			return nil, Result{}, err
		}
	}
	rowScale := make([]float64, k)
	for j := range rowScale {
		for a := 0; a < d; a++ {
			rowScale[j] = math.Max(rowScale[j], H.At(a*k+j, a*k+j))
		}
		if !(rowScale[j] > 0) || math.IsInf(rowScale[j], 0) {
			rowScale[j] = 1
		}
	}
	addNull := func(f float64) {
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				if z := zero.At(a, b); z != 0 {
					for j := 0; j < k; j++ {
						H.SetSym(a*k+j, b*k+j, H.At(a*k+j, b*k+j)+f*rowScale[j]*z)
					}
				}
			}
		}
	}
	addNull(1)
	// Factor D H D with D = diag(H)^(−1/2): the penalised coefficients' diagonal (2α + …) and the
	// unpenalised intercept's (the data's scale) may lie 10³⁰⁰ apart, which Cholesky on H itself
	// reported as not positive definite (alpha = 1e300), while D H D has a unit diagonal.
	dim := H.SymmetricDim()
	scale := make([]float64, dim)
	for i := range scale {
		scale[i] = 1
		if h := H.At(i, i); h > 0 {
			scale[i] = 1 / math.Sqrt(h)
		}
	}
	Hs := mat.NewSymDense(dim, scratchFloats(dim*dim)) // its upper triangle written below
	defer releaseFloats(Hs.RawSymmetric().Data)
	sraw := Hs.RawSymmetric()
	for i := 0; i < dim; i++ {
		if stop.Yield() {
			return nil, Result{}, ErrCancelled
		}
		src, dst := hraw.Data[i*hraw.Stride:i*hraw.Stride+dim], sraw.Data[i*sraw.Stride:i*sraw.Stride+dim]
		for j := i; j < dim; j++ {
			dst[j] = scale[i] * src[j] * scale[j]
		}
	}
	addNull(-1) // H is H₀ again: the penalty only serves to pick the minimum-norm optimum
	rs := make([]float64, dim)
	for i := range scale {
		rs[i] = scale[i] * rhs.AtVec(i)
	}
	cond, err := solveCholesky(Hs, rs, stop)
	if err != nil {
		switch {
		case errors.Is(err, ErrCancelled):
			return nil, Result{}, err
		case errors.Is(err, errNotPositiveDefinite):
			return nil, Result{}, st.conditionError(S, mean, alpha, intercept, "they are not numerically positive definite")
		}
		return nil, Result{}, st.conditionError(S, mean, alpha, intercept, err.Error())
	}
	w := mat.NewVecDense(dim, rs)
	for i := range scale {
		w.SetVec(i, scale[i]*w.AtVec(i))
	}
	W := mat.NewDense(k, d, nil)
	for a := 0; a < d; a++ {
		for j := 0; j < k; j++ {
			W.Set(j, a, w.AtVec(a*k+j))
		}
	}
	// J = ½wᵀH₀w − bᵀw + ½Σs and ∇J = H₀w − b.
	var hw, grad mat.VecDense
	hw.MulVec(H, w)
	grad.SubVec(&hw, rhs)
	res := Result{Objective: 0.5*mat.Dot(w, &hw) - mat.Dot(rhs, w) + 0.5*sumW, Converged: true, Condition: cond}
	if bn := mat.Norm(rhs, 2); bn > 0 {
		res.RelGrad = mat.Norm(&grad, 2) / bn
	}
	if intercept {
		xmat.ShiftIntercept(W, st.shift, -1) // from the shifted inputs' coordinates to X's
	}
	return W, res, nil
}

// exactWarnCondition is the estimated condition number of the scaled normal equations above which
// the exact solver's fit warns that its coefficients may have lost digits: about log10(κ) of
// float64's 16, one more for the estimate, which can run 3–10 times low (one-hot columns beside
// the intercept at alpha 1e-10: coefficients 1.6e-4 from a rational optimum, probe DZ), and more
// where the rounding of the sums that form H adds to κ's share. Without an intercept, on features
// 1e6 from the origin, the coefficients were 1e-4 from the optimum at κ = 1.7e13 and 0.18 at
// κ = 5.7e15, silently (probe DY; the solve is refused past 1e16). CG does not resolve such
// systems better at its default tol, so solver auto keeps the exact solve. Predictions lose far
// less: the digits lost lie along directions the data barely reach.
const exactWarnCondition = 1e11

// warnCondition adds to md.Warnings what an ill-conditioned exact solve (exactWarnCondition) costs.
func (md *Model) warnCondition() {
	if c := md.Result.Condition; c > exactWarnCondition {
		md.Warnings = append(md.Warnings, fmt.Sprintf("the exact solver's normal equations are ill-conditioned "+
			"(estimated condition number %.2g): its coefficients may keep only about %.0f of float64's 16 significant digits "+
			"(its scores more); "+
			"features far from the origin without an intercept, or sample weights far apart, make them so: centre or "+
			"scale X (e.g. StandardScaler), set fit_intercept=True, or use solver=\"cg\" with a smaller tol", c, max(0, 15-math.Log10(c))))
	}
}

// conditionError explains a failed solve of the normal equations H = 2αI + C, C being the data's
// curvature (the part of H without α). Double precision resolves H only while 2α and the scale
// of C are within about 10¹² of each other: a far larger α swamps C (the unpenalised intercept
// then sits at C's scale next to 2α), a far smaller one leaves C's null directions unresolved.
// The error names alpha and the range that works for these data.
func (st *linearStats) conditionError(S *mat.SymDense, mean []float64, alpha float64, intercept bool, cause string) error {
	C, _, _, _ := st.normal(S, mean, 0, intercept, nil)
	var scale float64
	for i := 0; i < C.SymmetricDim(); i++ {
		scale = math.Max(scale, math.Abs(C.At(i, i)))
	}
	way := fmt.Sprintf("alpha at most about %.1g (10¹² × that scale) keeps them solvable", 1e12*scale)
	if 2*alpha < scale {
		way = fmt.Sprintf("a larger alpha (about %.1g or more) makes them solvable", 1e-12*scale)
	}
	return &normalEquationsError{fmt.Sprintf("alpha = %g: the exact solver's normal equations cannot be solved in double precision (%s); "+
		"with these inputs (curvature of scale %.3g, set by X and sample_weight), %s; rescale X or sample_weight, change alpha or fit with solver=\"cg\"",
		alpha, cause, scale, way)}
}

// normalEquationsError is conditionError's: solver=auto then runs CG instead, which needs no
// factorisation (X + 1e8 without an intercept was refused where CG fits it, probe CG).
type normalEquationsError struct{ msg string }

func (e *normalEquationsError) Error() string { return e.msg }

// eigenSym returns the eigenvalues (ascending) and eigenvectors (columns) of a; what names a in
// the error.
func eigenSym(a *mat.SymDense, what string) ([]float64, *mat.Dense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, nil, fmt.Errorf("eigendecomposition of %s failed", what)
	}
	vecs := new(mat.Dense)
	eig.VectorsTo(vecs)
	return eig.Values(nil), vecs, nil
}

// nullRelTol is where a curvature counts as none for a preconditioner: eigenvalues of S (or of
// the average curvature M̄) at or below nullRelTol times the largest. The CG preconditioners keep
// the intercept penalised there (CG amplifies any rounding along a direction left unpenalised
// with a curvature this small); the exact solver only skips J's null directions' search when S
// has none.
const nullRelTol = 1e-10

// zeroProjector returns the orthogonal projector onto J's null directions for the accumulated
// examples: the output directions v along which the average curvature M̄ = S + Σ s_i δ_iδ_iᵀ/Σ s_i
// is at most zeroRelTol of its largest eigenvalue (nullspace.go), so that Sv = 0 and δ_iᵀv = 0 for
// every weighted example. M̄·Σs is the intercept's block of H₀, formed from the moments whether or
// not the model has an intercept.
func (st *linearStats) zeroProjector(S *mat.SymDense, mean []float64) (*mat.SymDense, error) {
	n, d := st.n, st.d
	pd, kh := d*(d+1)/2, n+1
	at := func(q int) float64 { return st.M.At(q, triIndex(n, n, kh)) }
	g := at(pd + d)
	curv := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			pa, pb := mean[a], mean[b]
			curv.SetSym(a, b, S.At(a, b)*g+at(triIndex(a, b, d))-pb*at(pd+a)-pa*at(pd+b)+pa*pb*g)
		}
	}
	vals, vecs, err := eigenSym(curv, "the average curvature")
	if err != nil {
		return nil, err
	}
	top := vals[d-1]
	if top == 0 && g > 0 {
		// Weighted examples without curvature: under the empirical measure of one structure
		// S = 0 and every δ = 0, so every direction is null and the optimum is W = 0 (a
		// partial_fit stream whose first chunk holds one structure, probe EQ).
		return eigenProjector(vals, vecs, func(float64) bool { return true }), nil
	}
	if !(top > 0) || math.IsInf(top, 0) {
		return mat.NewSymDense(d, nil), nil // no data (every weight zero) or overflowed sums, reported by the caller
	}
	return eigenProjector(vals, vecs, func(v float64) bool { return v <= zeroRelTol*top }), nil
}

// eigenProjector returns the orthogonal projector onto the eigenvectors (columns of vecs) whose
// eigenvalue keep accepts.
func eigenProjector(vals []float64, vecs *mat.Dense, keep func(float64) bool) *mat.SymDense {
	d := len(vals)
	proj := mat.NewSymDense(d, nil)
	for c, v := range vals {
		if keep(v) {
			proj.SymRankOne(proj, 1, mat.NewVecDense(d, mat.Col(nil, c, vecs)))
		}
	}
	return proj
}

// isZeroSym reports whether every entry of a is zero.
func isZeroSym(a *mat.SymDense) bool {
	for _, v := range a.RawSymmetric().Data {
		if v != 0 {
			return false
		}
	}
	return true
}

// nullProjector returns the orthogonal projector onto the null space of the covariance S.
func nullProjector(S *mat.SymDense) (*mat.SymDense, error) {
	vals, vecs, err := eigenSym(S, "the space covariance")
	if err != nil {
		return nil, err
	}
	tol := nullRelTol * math.Max(vals[len(vals)-1], 1e-300)
	return eigenProjector(vals, vecs, func(v float64) bool { return v <= tol }), nil
}

// sumsOverflow is the error of a solver (named as a possessive: "the exact solver's") whose
// weighted sums of the data overflowed to v.
func sumsOverflow(whose string, v float64) error {
	return fmt.Errorf("%s weighted sums overflow (%v): sample_weight or X holds values too large; "+
		"rescale them (%s)", whose, v, shrinkWeights)
}
