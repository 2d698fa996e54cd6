package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// nystromFloor stops the pivoted factorisation of the landmarks' Gram matrix at pivots below this
// fraction of its largest diagonal entry: a landmark whose kernel feature the landmarks already
// chosen reproduce that closely adds no direction the kernel can resolve, and R⁻¹ would amplify
// rounding errors by the inverse square root of its pivot.
const nystromFloor = 1e-12

// nystromSeedStream separates the landmark draw from the other uses of Options.Seed.
const nystromSeedStream = 0x6e79_7374_726f_6d

// nystrom is the low-dimensional map of thesis appendix A (NMDS): with L landmark inputs, an input x
// is mapped to φ(x) = K_{x,L}·P ∈ R^c (NystromProjection), so that φ(x)ᵀφ(x') = K_{x,L} K_LL⁻¹ K_{L,x'},
// the Nyström approximation of k(x, x'), exact when x or x' is a landmark (c = L unless some
// landmarks are dependent to within nystromFloor, which the map then leaves out). With an intercept
// the map is of the kernel k + 1 that the kernel model uses, so that with every training input as a
// landmark the linear model on φ is the kernel model (its intercept is penalised, as the kernel
// model's is).
type nystrom struct {
	kern      kernel.Kernel
	intercept bool        // the mapped kernel is k + 1
	landmarks xmat.Matrix // L×n, dense or sparse (the layout of the X they were drawn from)
	norms     []float64   // ‖landmark‖², for the rbf kernel

	// The projection P (L×c). NystromProjection's is triangular in the order of its pivots: then
	// tri holds its rows in that order, order the landmarks they belong to, and P itself is not
	// kept (projection rebuilds it); transform evaluates the kernel at the c resolved landmarks
	// only and multiplies by the triangle block by block, about 0.55 of the dense product's
	// arithmetic. A dense P (an eigendecomposition's, in models written before) is kept as proj.
	proj          *mat.Dense
	order         []int
	tri           *mat.Dense  // c×c, upper triangular
	resolved      xmat.Matrix // c×n, the landmarks in pivot order
	resolvedNorms []float64
}

func newNystromMap(kern kernel.Kernel, intercept bool, landmarks xmat.Matrix, proj *mat.Dense) *nystrom {
	ny := &nystrom{kern: kern, intercept: intercept, landmarks: kernel.KeepTranspose(landmarks), norms: landmarks.SquaredNorms()}
	if proj != nil {
		ny.setProjection(proj)
	}
	return ny
}

// setProjection sets the projection P, as its triangle when it is triangular in some order of its
// rows (and has a row per landmark: a decoded model's shapes are checked after it is built).
func (ny *nystrom) setProjection(P *mat.Dense) {
	ny.proj, ny.order, ny.tri, ny.resolved, ny.resolvedNorms = P, nil, nil, xmat.Matrix{}, nil
	if l, _ := ny.landmarks.Dims(); l != P.RawMatrix().Rows {
		return
	}
	order := pivotOrder(P)
	if order == nil {
		return
	}
	tri := mat.NewDense(len(order), len(order), nil)
	for i, r := range order {
		copy(tri.RawRowView(i), P.RawRowView(r))
	}
	ny.setTriangle(order, tri)
}

// setTriangle sets the projection whose row order[i] is row i of the upper triangle tri (the other
// rows zero).
func (ny *nystrom) setTriangle(order []int, tri *mat.Dense) {
	resolved := ny.landmarks.CopyRows(order)
	ny.proj, ny.order, ny.tri, ny.resolved, ny.resolvedNorms = nil, order, tri, kernel.KeepTranspose(resolved), resolved.SquaredNorms()
}

// projection returns P (L×c), rebuilt from the triangle when the map keeps one.
func (ny *nystrom) projection() *mat.Dense {
	if ny.proj != nil {
		return ny.proj
	}
	l, _ := ny.landmarks.Dims()
	return expandTriangle(l, ny.order, ny.tri)
}

// expandTriangle returns the l×c projection whose row order[i] is row i of tri (c×c) and whose
// other rows are zero.
func expandTriangle(l int, order []int, tri *mat.Dense) *mat.Dense {
	P := mat.NewDense(l, len(order), nil)
	for i, r := range order {
		copy(P.RawRowView(r), tri.RawRowView(i))
	}
	return P
}

// dims returns the shape of P: L landmarks, c components.
func (ny *nystrom) dims() (l, c int) {
	if ny.proj != nil {
		return ny.proj.Dims()
	}
	l, _ = ny.landmarks.Dims()
	return l, len(ny.order)
}

// pivotOrder returns, for a projection whose row order[i] has its first non-zero entry in column
// i and whose other rows are zero, that order; nil for any other projection. Zero means +0 to the
// bit (−0 counts as non-zero), so that projection rebuilds a decoded P exactly.
func pivotOrder(proj *mat.Dense) []int {
	l, c := proj.Dims()
	order := make([]int, c)
	for i := range order {
		order[i] = -1
	}
	for r := 0; r < l; r++ {
		row := proj.RawRowView(r)
		f := 0
		for f < c && math.Float64bits(row[f]) == 0 {
			f++
		}
		if f == c {
			continue
		}
		if order[f] >= 0 {
			return nil
		}
		order[f] = r
	}
	for _, r := range order {
		if r < 0 {
			return nil
		}
	}
	return order
}

// NystromLandmarks returns the landmarks of a Nyström map of count components on m training rows:
// min(count, m) distinct row indices, drawn uniformly without replacement (a partial Fisher–Yates
// shuffle seeded with seed) and sorted. It is the one rule for every map, including those of
// callable kernels that Python evaluates.
func NystromLandmarks(m, count int, seed uint64) []int {
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	count = min(count, m)
	r := rand.New(rand.NewPCG(seed, nystromSeedStream))
	for i := 0; i < count; i++ {
		j := i + r.IntN(m-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	idx = idx[:count]
	sort.Ints(idx)
	return idx
}

// buildNystrom draws the landmarks among the rows of X and computes the projection; it returns
// reuse instead when that map has the same kernel and landmarks (a warm start on the same data).
func buildNystrom(kern kernel.Kernel, intercept bool, X xmat.Matrix, count int, seed uint64, reuse *nystrom, stop *cancel.Flag) (*nystrom, error) {
	m, _ := X.Dims()
	idx := NystromLandmarks(m, count, seed)
	L := X.CopyRows(idx)
	if L.Sparse != nil {
		if err := L.Sparse.CheckTranspose("X's Nyström landmarks", "the kernel's values at them"); err != nil {
			return nil, err
		}
	}
	ny := newNystromMap(kern, intercept, L, nil)
	if ny.sameMap(reuse) {
		return reuse, nil
	}
	l := len(idx)
	K := mat.NewDense(l, l, nil)
	_, n := X.Dims()
	rows := max(16, (1<<27)/max(l*n, 1)) // a block's kernel values cost about 2^27 flops
	for lo := 0; lo < l; lo += rows {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		hi := min(lo+rows, l)
		ny.gram(K.Slice(lo, hi, 0, l).(*mat.Dense), ny.landmarks.Slice(lo, hi))
	}
	if err := kern.CheckFinite(K.RawMatrix().Data, l); err != nil {
		return nil, err // what overflowed, not a landmark count that cannot be factored
	}
	order, tri, err := nystromTriangle(K, mayBeIndefinite(kern), stop)
	if err != nil {
		return nil, err
	}
	ny.setTriangle(order, tri)
	return ny, nil
}

// NystromProjection returns the projection P (L×c) of a Nyström map from the landmarks' Gram
// matrix K (L×L, of the kernel the map approximates; its symmetric part ½(K + Kᵀ) is used, as a
// computed Gram matrix may differ from its transpose by rounding), so that φ(x) = K_{x,L}·P. K is
// factored by Cholesky with complete pivoting down to pivots of nystromFloor times its largest
// diagonal entry: the c landmarks it resolves, in pivot order π, give K_ππ = RᵀR, and P holds R⁻¹ in
// their rows and zeros in the others. Then φ(x)ᵀφ(x') = K_{x,π} K_ππ⁻¹ K_{π,x'}, the Nyström
// approximation on those c landmarks, exact when x or x' is one of them; a landmark left out is one
// the others already reproduce to within the floor (a duplicate, say). It fails when no diagonal
// entry is positive and finite.
//
// An eigendecomposition K = UΛUᵀ gives the same inner products through U_c Λ_c^{-1/2} when no
// eigenvalue is dropped, at 70 times the cost: for 1,500 rbf landmarks gonum's took 8.2 s, this
// factorisation (blocked, its updates on package gemm) 0.11 s (BenchmarkNystromProjection).
func NystromProjection(K *mat.Dense) (*mat.Dense, error) {
	order, tri, err := nystromTriangle(K, true, nil)
	if err != nil {
		return nil, err
	}
	l, _ := K.Dims()
	return expandTriangle(l, order, tri), nil
}

// nystromTriangle is NystromProjection's factorisation: the pivot order of the c landmarks it
// resolves and R⁻¹ (c×c, upper triangular), or ErrCancelled as soon as stop is seen set. With
// mayBeIndefinite (a kernel that need not be positive semi-definite) it refuses one that is not
// (checkLeftOver).
func nystromTriangle(K *mat.Dense, mayBeIndefinite bool, stop *cancel.Flag) (order []int, tri *mat.Dense, err error) {
	k := K.RawMatrix()
	l := k.Rows
	a := make([]float64, l*l)
	top := 0.0
	for i := 0; i < l; i++ {
		for j := 0; j < l; j++ {
			a[i*l+j] = 0.5 * (k.Data[i*k.Stride+j] + k.Data[j*k.Stride+i])
		}
		top = math.Max(top, a[i*l+i])
	}
	piv, c, err := factorPivotedCholesky(blas64.General{Rows: l, Cols: l, Stride: l, Data: a}, nystromFloor*top, stop)
	if err != nil {
		return nil, nil, err
	}
	if c == 0 || math.IsInf(top, 0) {
		return nil, nil, fmt.Errorf("n_components: the landmarks' Gram matrix has no positive finite diagonal entry")
	}
	if stop.Yield() {
		return nil, nil, ErrCancelled
	}
	if mayBeIndefinite {
		if err := checkLeftOver(K, a, piv, c, top, stop); err != nil {
			return nil, nil, err
		}
	}
	tri = mat.NewDense(c, c, nil)
	for i := 0; i < c; i++ {
		copy(tri.RawRowView(i)[i:], a[i*l+i:i*l+c])
	}
	if !invertUpper(tri.RawMatrix(), make([]float64, (c/2+1)*(c/2+1)), stop) {
		return nil, nil, ErrCancelled
	}
	return piv[:c], tri, nil
}

// checkLeftOver refuses a kernel that is not positive semi-definite on the landmarks. The pivoted
// factorisation stops where the Schur complement's largest diagonal entry falls below the floor,
// which for a PSD K leaves every entry of it that small (|S_ij| ≤ √(S_ii S_jj)); an indefinite K
// can leave off-diagonal entries or negative pivots of any size there, and the map kept only the
// landmarks before them: a sigmoid kernel on 100 rows (34 eigenvalues down to −6.7 against 164)
// gave 3 components and no word, where the exact model refuses it (probe FL). S is computed again
// from K and the factor's rows (a the factorisation's working copy, piv its order, c its rank) and
// refused, as checkPSD does, where an entry shows an eigenvalue below −indefinite·max K_ii.
func checkLeftOver(K *mat.Dense, a []float64, piv []int, c int, top float64, stop *cancel.Flag) error {
	l, _ := K.Dims()
	t := l - c
	if t == 0 {
		return nil
	}
	k := K.RawMatrix()
	r := blas64.General{Rows: c, Cols: t, Stride: l, Data: a[c:]} // R's columns beyond the rank
	limit := indefinite * top
	// S block by block of rows, each about 2²⁰ values: the whole t×t of 10,000 landmarks of rank
	// 20 would have been 800 MB beside K, unchecked by the budget
	rows := max(1, min(t, (1<<20)/t))
	block, neg := make([]float64, rows*t), make([]float64, c*rows)
	for i0 := 0; i0 < t; i0 += rows {
		if stop.Yield() {
			return ErrCancelled
		}
		b := min(rows, t-i0)
		S := blas64.General{Rows: b, Cols: t, Stride: t, Data: block[:b*t]}
		for i := 0; i < b; i++ {
			for j := 0; j < t; j++ {
				u, v := piv[c+i0+i], piv[c+j]
				S.Data[i*t+j] = 0.5 * (k.Data[u*k.Stride+v] + k.Data[v*k.Stride+u])
			}
		}
		ri := blas64.General{Rows: c, Cols: b, Stride: l, Data: a[c+i0:]}
		gemm.MulTNAdd(S, negated(ri, neg), r)
		for i := 0; i < b; i++ {
			for j := 0; j < t; j++ {
				// a diagonal entry below −limit, or an off-diagonal one beside two diagonal entries
				// below the floor, whose 2×2 minor has an eigenvalue below −|S_ij| + floor
				if v := S.Data[i*t+j]; (i0+i == j && v < -limit) || (i0+i != j && math.Abs(v) > limit) {
					return fmt.Errorf("n_components: the kernel matrix is not positive semi-definite on the landmarks "+
						"(the Gram matrix of %d landmarks has an eigenvalue below −%g·max k(x, x) = %.3g after %d components): %s",
						l, indefinite, -limit, c, needPSD)
				}
			}
		}
	}
	return nil
}

// components is c, the dimension of the map.
func (ny *nystrom) components() int {
	_, c := ny.dims()
	return c
}

// gram writes k(x_i, landmark_j) (+1 with an intercept) into dst for the rows of X.
func (ny *nystrom) gram(dst *mat.Dense, X xmat.Matrix) { ny.gramAt(dst, X, ny.landmarks, ny.norms) }

// gramAt is gram at the inputs at (with their squared norms) in place of the landmarks.
func (ny *nystrom) gramAt(dst *mat.Dense, X, at xmat.Matrix, norms []float64) {
	ny.kern.GramX(dst, X, at, norms)
	if ny.intercept {
		addConstant(dst, 1)
	}
}

// transform writes φ of the rows of X (q×n) into Phi (q×c), block by block, or returns
// ErrCancelled as soon as stop is seen set: at q = c = 3,000 a fit's map took 0.8 s (probe DG).
func (ny *nystrom) transform(Phi *mat.Dense, X xmat.Matrix, stop *cancel.Flag) error {
	q, _ := X.Dims()
	at, norms := ny.landmarks, ny.norms
	if ny.tri != nil {
		at, norms = ny.resolved, ny.resolvedNorms
	}
	l, _ := at.Dims()
	c := ny.components()
	kb := mat.NewDense(min(q, predictBlock), l, nil)
	for lo := 0; lo < q; lo += predictBlock {
		if stop.Yield() {
			return ErrCancelled
		}
		hi := min(lo+predictBlock, q)
		kx := kb.Slice(0, hi-lo, 0, l).(*mat.Dense)
		out := Phi.Slice(lo, hi, 0, c).(*mat.Dense)
		ny.gramAt(kx, X.Slice(lo, hi), at, norms)
		if ny.tri == nil {
			gemm.Mul(out.RawMatrix(), kx.RawMatrix(), ny.proj.RawMatrix())
			continue
		}
		// Columns c0..c1 of φ take only the first c1 resolved landmarks.
		for c0 := 0; c0 < c; c0 += triBlock {
			if stop.Yield() {
				return ErrCancelled
			}
			c1 := min(c0+triBlock, c)
			gemm.MulPanel(out.Slice(0, hi-lo, c0, c1).(*mat.Dense).RawMatrix(), kx.Slice(0, hi-lo, 0, c1).(*mat.Dense).RawMatrix(),
				ny.tri.Slice(0, c1, c0, c1).(*mat.Dense).RawMatrix())
		}
	}
	return nil
}

// triBlock is the width of the column blocks of the triangular product in transform (as with
// gemm.MulTNUpperAdd, narrower blocks waste less of the triangle but run the kernels slower:
// calhousing's fit with 1,500 landmarks took 1.96–2.10 s with 128, 1.85–1.92 s with 384).
const triBlock = 384

// apply returns φ(X) as a new q×c matrix, or ErrCancelled as soon as stop is seen set.
func (ny *nystrom) apply(X xmat.Matrix, stop *cancel.Flag) (*mat.Dense, error) {
	q, _ := X.Dims()
	Phi := mat.NewDense(q, ny.components(), nil)
	if err := ny.transform(Phi, X, stop); err != nil {
		return nil, err
	}
	return Phi, nil
}

// sameMap reports whether o maps inputs as ny does (same kernel, intercept and landmarks).
func (ny *nystrom) sameMap(o *nystrom) bool {
	return o != nil && ny.kern == o.kern && ny.intercept == o.intercept && sameInputs(ny.landmarks, o.landmarks)
}
