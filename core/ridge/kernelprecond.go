package ridge

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// kernelSystem is the optimality condition of the kernel model in the transposed layout the
// solver works in: every m×d quantity of solveKernelCG (Γ, residuals, directions) is stored as its
// d×m transpose, so that products with the symmetric K are the faster (d×m)·(m×m) products.
//
// With Γ (m×d) the expansion coefficients and U = KΓ the scores, the gradient of J is K(A(Γ) − b)
// where A(Γ) = 2αΓ + T(KΓ), T applies s_i M_i = s_i (S + δ_iδ_iᵀ) row by row and b_i = s_i δ_i.
type kernelSystem struct {
	m, d     int
	twoAlpha float64
	K        blas64.General     // m×m, symmetric: X·K is the transpose of K·Xᵀ
	S        blas64.General     // d×d
	op       *empiricalOperator // applies S when the reference's training structures do it faster
	sDiag    []float64          // S's diagonal when S is diagonal (multilabel under the uniform measure), else nil
	DT       *mat.Dense         // d×m, Δᵀ
	w        []float64          // sample weights s_i
	bT       *mat.Dense         // d×m, bᵀ
	dv       []float64          // scratch, m
}

func newKernelSystem(p *Problem, K *mat.Dense) *kernelSystem {
	m, d := p.dims()
	ks := &kernelSystem{
		m: m, d: d, twoAlpha: 2 * p.Alpha,
		K:  K.RawMatrix(),
		S:  denseOfSymmetric(p.S).RawMatrix(),
		DT: mat.DenseCopyOf(p.Delta.T()),
		w:  p.Weight,
		bT: mat.NewDense(d, m, nil),
		dv: make([]float64, m),
	}
	if p.ref != nil {
		ks.op = p.ref.op
	}
	if ks.op == nil {
		ks.sDiag = diagonalOf(ks.S)
	}
	for a := 0; a < d; a++ {
		src, dst := ks.DT.RawRowView(a), ks.bT.RawRowView(a)
		for i, v := range src {
			dst[i] = ks.w[i] * v
		}
	}
	return ks
}

// kmul sets dst = X·K for X with m columns.
func (ks *kernelSystem) kmul(dst, X *mat.Dense) {
	gemm.MulSym(dst.RawMatrix(), X.RawMatrix(), ks.K)
}

// applyA sets dst = A(V)ᵀ = 2αV + T(KV) in the transposed layout, given V and KV (both d×m).
// dst must not alias V or KV.
func (ks *kernelSystem) applyA(dst, V, KV *mat.Dense) {
	m, d := ks.m, ks.d
	switch {
	case ks.op != nil:
		ks.op.mulCols(dst, KV) // gasch2_GO, d = 3,698: 0.2 GFLOP per product against the dense 45
	case ks.sDiag != nil:
		for a, s := range ks.sDiag {
			floats.ScaleTo(dst.RawRowView(a), s, KV.RawRowView(a))
		}
	default:
		gemm.Mul(dst.RawMatrix(), ks.S, KV.RawMatrix())
	}
	dv := ks.dv
	clear(dv)
	for a := 0; a < d; a++ {
		del, kv := ks.DT.RawRowView(a), KV.RawRowView(a)
		for i := 0; i < m; i++ {
			dv[i] += del[i] * kv[i]
		}
	}
	for a := 0; a < d; a++ {
		out, del, v := dst.RawRowView(a), ks.DT.RawRowView(a), V.RawRowView(a)
		for i := 0; i < m; i++ {
			out[i] = ks.twoAlpha*v[i] + ks.w[i]*(out[i]+dv[i]*del[i])
		}
	}
}

// curvatureBound bounds the largest eigenvalue of any s_i M_i from above.
func (ks *kernelSystem) curvatureBound() float64 {
	var sNorm float64 // ∞-norm of S, ≥ its spectral norm
	for a := 0; a < ks.d; a++ {
		var row float64
		for b := 0; b < ks.d; b++ {
			row += math.Abs(ks.S.Data[a*ks.S.Stride+b])
		}
		sNorm = math.Max(sNorm, row)
	}
	var t float64
	for i := 0; i < ks.m; i++ {
		var dd float64
		for a := 0; a < ks.d; a++ {
			v := ks.DT.At(a, i)
			dd += v * v
		}
		t = math.Max(t, ks.w[i]*(sNorm+dd))
	}
	return t
}

// deflation is the coarse space of the solver: W = {u eᵀ : u ∈ span(U)}, m×d matrices whose columns
// lie in the span of r approximate leading eigenvectors of K. K has a few eigenvalues far above the
// rest (the constant direction with an intercept or a non-centred kernel, often more), each of which
// puts d eigenvalues of up to 2α + λ·‖s_iM_i‖ into the spectrum of A; deflated conjugate gradients
// (Saad, Yeung, Erhel & Guyomarc'h, SIAM J. Sci. Comput. 21, 2000) solves the problem exactly on W
// and iterates on its K-orthogonal complement, where those eigenvalues are absent.
//
// Everything is exact whatever the quality of U: only its span matters, and KU is computed, not
// approximated. The Galerkin matrix E = ⟨W, A W⟩_K (rd × rd) is
//
//	E = 2α (UᵀKU) ⊗ I + ((KU)ᵀ diag(s) KU) ⊗ S + Σ_i s_i (k_i k_iᵀ) ⊗ (δ_iδ_iᵀ),   k_i = row i of KU,
//
// indexed (l, a) ↦ l·d + a, and costs O(m r² d²) to form.
type deflation struct {
	r   int
	UT  *mat.Dense // r×m, rows u_l (orthonormal)
	KUT *mat.Dense // r×m, rows K u_l
	// inv is E⁻¹ (rd×rd, row-major), inverted once on package gemm: the solve in every CG
	// iteration is then rd dot products of length rd. Substituting through the Cholesky factors
	// took 0.33 ms of a 2.3 ms iteration on yeast (rbf, r = 32, d = 14: rd = 448).
	inv []float64
	rhs *mat.VecDense // r·d
	y   *mat.VecDense // r·d
	// rhsT and yT (d×r) are scratch, so that the products of every iteration are row-major ones
	// for package gemm (gonum's took a fifth of the yeast rbf fit).
	rhsT, yT *mat.Dense
}

// deflationMaxRows bounds the order rd of E. The iterations a larger coarse space saves are paid
// for in its set-up (E's inverse, (rd)³) and in every iteration (the coarse solve and two
// corrections of r·d·m each, serial products too small to share between the cores). On the yeast
// training set (d = 14, rbf, γ = 0.02), fits alternated over 15 rounds: at α = 0.01 the bounds 240,
// 320 and 600 (r = 17, 22, 32) took 140, 145 and 145 ms (medians; 60, 54 and 49 iterations), at
// α = 0.03 106, 111 and 129 ms.
const deflationMaxRows = 320

// deflationChunkEntries bounds the entries of QT, the pd×chunk scratch of E's assembly: with a
// fixed chunk of 512 samples it took 28 GB at d = 3,698 (gasch2_GO with every GO term, an rbf
// fit), and the Go runtime aborted the process on the failed allocation. Where fewer than 64
// samples would fit, E is assembled by weightedGrams instead. A variable so that tests can lower
// it and take either route.
var deflationChunkEntries = 1 << 24

// deflationSeed fixes the random start of the subspace iteration, so that fits are reproducible.
const deflationSeed = 0x5eed_0fc0_4b1d

// newDeflation builds the coarse space from OmegaK = Ω·K for r0 random rows Ω (drawOmega; the
// caller computes the product, fused with another one): with Q an orthonormal basis of the rows of
// ΩK and Z = QK (the second pass over K), Rayleigh–Ritz on QKQᵀ gives the Ritz vectors U = VᵀQ
// and, exactly, KU = VᵀZ. Ritz vectors whose values are too small to matter — λ·max‖s_iM_i‖ < 2α,
// so deflating them could not improve the conditioning by more than a factor two — or are
// numerically zero are dropped. It returns nil when nothing is left or E is not numerically
// positive definite: the solver then runs without a coarse space.
func newDeflation(ks *kernelSystem, OmegaK *mat.Dense) *deflation {
	m, d := ks.m, ks.d
	r0, _ := OmegaK.Dims()
	Q := mat.DenseCopyOf(OmegaK)
	r := orthonormalizeRows(Q, r0)
	if r == 0 {
		return nil
	}
	Q = Q.Slice(0, r, 0, m).(*mat.Dense)
	Z := mat.NewDense(r, m, nil)
	ks.kmul(Z, Q)
	H := symmetricPart(Q, Z)
	var eig mat.EigenSym
	if !eig.Factorize(H, true) {
		return nil
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, r)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return vals[order[i]] > vals[order[j]] })
	top := vals[order[0]]
	if !(top > 0) {
		return nil
	}
	tmax := ks.curvatureBound()
	var keep []int
	for _, j := range order {
		if vals[j] > 1e-10*top && vals[j]*tmax >= ks.twoAlpha {
			keep = append(keep, j)
		}
	}
	r = len(keep)
	if r == 0 {
		return nil
	}
	V := mat.NewDense(len(vals), r, nil)
	for c, j := range keep {
		for a := range vals {
			V.Set(a, c, vecs.At(a, j))
		}
	}
	df := &deflation{r: r, UT: mat.NewDense(r, m, nil), KUT: mat.NewDense(r, m, nil)}
	gemm.MulTN(df.UT.RawMatrix(), V.RawMatrix(), Q.RawMatrix())
	gemm.MulTN(df.KUT.RawMatrix(), V.RawMatrix(), Z.RawMatrix())

	rd := r * d
	// The last term of E, Σ_i s_i k_il k_il' δ_ia δ_ib, is symmetric in (l, l') and in (a, b)
	// separately: its distinct entries are the product of the pairwise products k_l∘k_l' (rows of
	// PT) with the weighted pairwise products s∘δ_a∘δ_b (rows of QT), at a quarter of the cost of
	// forming Σ_i s_i (k_i ⊗ δ_i)(k_i ⊗ δ_i)ᵀ directly. It dominates the cost of the coarse space.
	pr, pd := r*(r+1)/2, d*(d+1)/2
	PQ := mat.NewDense(pr, pd, nil)
	if 64*pd > deflationChunkEntries {
		df.weightedGrams(ks, PQ)
	} else {
		chunk := min(512, deflationChunkEntries/pd) // samples at a time: bounds PT and QT
		c := min(m, chunk)
		PT, QT := mat.NewDense(pr, c, nil), mat.NewDense(pd, c, nil)
		for lo := 0; lo < m; lo += chunk {
			hi := min(m, lo+chunk)
			for l, t := 0, 0; l < r; l++ {
				kl := df.KUT.RawRowView(l)[lo:hi]
				for l2 := l; l2 < r; l2, t = l2+1, t+1 {
					kl2, dst := df.KUT.RawRowView(l2)[lo:hi], PT.RawRowView(t)
					for i, v := range kl {
						dst[i] = v * kl2[i]
					}
				}
			}
			for a, t := 0, 0; a < d; a++ {
				da := ks.DT.RawRowView(a)[lo:hi]
				for b := a; b < d; b, t = b+1, t+1 {
					db, dst, w := ks.DT.RawRowView(b)[lo:hi], QT.RawRowView(t), ks.w[lo:hi]
					for i, v := range da {
						dst[i] = w[i] * v * db[i]
					}
				}
			}
			pt := PT.Slice(0, pr, 0, hi-lo).(*mat.Dense).RawMatrix()
			qt := QT.Slice(0, pd, 0, hi-lo).(*mat.Dense).RawMatrix()
			gemm.MulTAdd(PQ.RawMatrix(), pt, qt)
		}
	}
	pairR := func(l, l2 int) int { // index of (min, max) in PT
		if l > l2 {
			l, l2 = l2, l
		}
		return l*r - l*(l-1)/2 + l2 - l
	}
	pairD := func(a, b int) int {
		if a > b {
			a, b = b, a
		}
		return a*d - a*(a-1)/2 + b - a
	}
	C1 := symmetricPart(df.UT, df.KUT) // UᵀKU
	SK := mat.NewDense(r, m, nil)      // (KU)ᵀ diag(s)
	for l := 0; l < r; l++ {
		sk := SK.RawRowView(l)
		for i, v := range df.KUT.RawRowView(l) {
			sk[i] = ks.w[i] * v
		}
	}
	C2 := mat.NewDense(r, r, nil) // (KU)ᵀ diag(s) KU
	gemm.MulT(C2.RawMatrix(), SK.RawMatrix(), df.KUT.RawMatrix())
	E := make([]float64, rd*rd) // the upper triangle, row-major
	for l := 0; l < r; l++ {
		for l2 := l; l2 < r; l2++ {
			c1, c2 := C1.At(l, l2), C2.At(l, l2)
			pq := PQ.RawRowView(pairR(l, l2))
			for a := 0; a < d; a++ {
				lo := 0
				if l == l2 {
					lo = a
				}
				for b := lo; b < d; b++ {
					v := pq[pairD(a, b)] + c2*ks.S.Data[a*ks.S.Stride+b]
					if a == b {
						v += ks.twoAlpha * c1
					}
					E[(l*d+a)*rd+l2*d+b] = v
				}
			}
		}
	}
	inv, err := spdInverse(blas64.General{Rows: rd, Cols: rd, Stride: rd, Data: E}, nil)
	if err != nil {
		return nil
	}
	df.inv = inv.RawMatrix().Data
	df.rhs = mat.NewVecDense(rd, nil)
	df.y = mat.NewVecDense(rd, nil)
	df.rhsT, df.yT = mat.NewDense(d, r, nil), mat.NewDense(d, r, nil)
	return df
}

// symmetricPart returns ½(A Bᵀ + B Aᵀ) for A and B of the same shape (r×m): the Rayleigh quotient
// matrix of rows A against their images B.
func symmetricPart(A, B *mat.Dense) *mat.SymDense {
	r, _ := A.Dims()
	AB := mat.NewDense(r, r, nil)
	gemm.MulT(AB.RawMatrix(), A.RawMatrix(), B.RawMatrix())
	out := mat.NewSymDense(r, nil)
	for a := 0; a < r; a++ {
		for b := a; b < r; b++ {
			out.SetSym(a, b, 0.5*(AB.At(a, b)+AB.At(b, a)))
		}
	}
	return out
}

// drawOmega returns the r0×m random start of the subspace iteration.
func drawOmega(r0, m int) *mat.Dense {
	rng := rand.New(rand.NewPCG(deflationSeed, uint64(m)))
	om := mat.NewDense(r0, m, nil)
	raw := om.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	return om
}

// weightedGrams fills PQ with E's last term one pair (l, l') at a time, as the weighted Gram
// matrix Σ_i s_i k_il k_il' δ_i δ_iᵀ of the rows of ks.DT on package gemm: the route for large d,
// where the chunked pairwise products would have to run a handful of samples at a time to keep
// QT (pd × chunk) bounded — at d = 3,698 that took 66 s against one product's 2 s.
func (df *deflation) weightedGrams(ks *kernelSystem, PQ *mat.Dense) {
	m, d, r := ks.m, ks.d, df.r
	scaled, gram := mat.NewDense(d, m, nil), mat.NewDense(d, d, nil)
	w := make([]float64, m)
	for l, t := 0, 0; l < r; l++ {
		kl := df.KUT.RawRowView(l)
		for l2 := l; l2 < r; l2, t = l2+1, t+1 {
			kl2 := df.KUT.RawRowView(l2)
			for i := range w {
				w[i] = ks.w[i] * kl[i] * kl2[i]
			}
			for a := 0; a < d; a++ {
				floats.MulTo(scaled.RawRowView(a), ks.DT.RawRowView(a), w)
			}
			gemm.MulT(gram.RawMatrix(), ks.DT.RawMatrix(), scaled.RawMatrix())
			row := PQ.RawRowView(t)
			for a, u := 0, 0; a < d; a++ {
				u += copy(row[u:], gram.RawRowView(a)[a:])
			}
		}
	}
}

// deflationRank is the number of random vectors the coarse space starts from: up to 32, fewer when
// forming E (about m·r²d²/4 operations) would cost more than three products with K (m²d) or E
// would exceed deflationMaxRows rows; at least 1, at most m. Real data sets have a broad bulk of
// kernel eigenvalues below a few separated ones, and every deflated direction shortens the
// iteration: on the yeast training set (rbf, γ = 0.02, intercept) r = 12, 20, 28, 32 take 65, 56,
// 50, 49 iterations at α = 0.01 and r = 12 → 32 takes 43 → 32 at α = 0.1. One vector suffices for
// the constant direction of an intercept.
func deflationRank(m, d int) int {
	r := 32
	for r > 1 && (r*(r+1)/2*(d*(d+1)/2) > 3*m*d || r*d > deflationMaxRows) {
		r--
	}
	return min(m, r)
}

// solve sets y (r×d, row-major in df.y) to the coefficients, in the basis u_l e_aᵀ of W, of the
// Galerkin solution ⟨W, A(W y)⟩_K = ⟨W, Xᵀ⟩_K for X (d×m), using ⟨u_l e_aᵀ, Xᵀ⟩_K = (K u_l)ᵀ X[a, :].
func (df *deflation) solve(X *mat.Dense) {
	d := X.RawMatrix().Rows
	gemm.MulT(df.rhsT.RawMatrix(), X.RawMatrix(), df.KUT.RawMatrix())
	xmat.TransposeInto(mat.NewDense(df.r, d, df.rhs.RawVector().Data), df.rhsT)
	// y = E⁻¹ rhs. An ill-conditioned E gives an inaccurate coarse solve, which can slow the
	// iteration down; convergence is always judged on the gradient recomputed from Γ.
	n := df.r * X.RawMatrix().Rows
	b, y := df.rhs.RawVector().Data, df.y.RawVector().Data
	for i := range y[:n] {
		y[i] = floats.Dot(df.inv[i*n:(i+1)*n], b[:n])
	}
}

// subtract sets X −= yᵀ·B for B one of UT or KUT (X is d×m): removes W y (or K W y).
func (df *deflation) subtract(X, B *mat.Dense) { df.addScaled(X, B, -1) }

// add sets X += yᵀ·B.
func (df *deflation) add(X, B *mat.Dense) { df.addScaled(X, B, 1) }

// addScaled sets X += f·yᵀ·B.
func (df *deflation) addScaled(X, B *mat.Dense, f float64) {
	d, _ := df.yT.Dims()
	xmat.TransposeInto(df.yT, mat.NewDense(df.r, d, df.y.RawVector().Data))
	df.yT.Scale(f, df.yT)
	gemm.MulPanelAdd(X.RawMatrix(), df.yT.RawMatrix(), B.RawMatrix())
}

// orthonormalizeRows orthonormalises the first r rows of Q in place by modified Gram–Schmidt run
// twice, packing the rows that are independent of their predecessors at the top; it returns
// the number of independent rows. Rows past that are left unspecified.
func orthonormalizeRows(Q *mat.Dense, r int) int {
	k := 0
	for j := 0; j < r; j++ {
		row := Q.RawRowView(j)
		norm0 := math.Sqrt(dot(row, row))
		if norm0 == 0 || math.IsNaN(norm0) || math.IsInf(norm0, 0) {
			continue
		}
		for pass := 0; pass < 2; pass++ {
			for i := 0; i < k; i++ {
				qi := Q.RawRowView(i)
				c := dot(qi, row)
				for t := range row {
					row[t] -= c * qi[t]
				}
			}
		}
		norm := math.Sqrt(dot(row, row))
		if norm <= 1e-10*norm0 {
			continue
		}
		dst := Q.RawRowView(k)
		for t := range row {
			dst[t] = row[t] / norm
		}
		k++
	}
	return k
}

// diagonalOf returns the diagonal of the square S when every other entry is zero, else nil.
func diagonalOf(S blas64.General) []float64 {
	diag := make([]float64, S.Rows)
	for a := range diag {
		for b, v := range S.Data[a*S.Stride:][:S.Cols] {
			if b != a && v != 0 {
				return nil
			}
		}
		diag[a] = S.Data[a*S.Stride+a]
	}
	return diag
}

// dot is ⟨a, b⟩, for b at least as long as a.
func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
