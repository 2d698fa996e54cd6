package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// nystromEigenFloor drops the eigenvalues of the landmarks' Gram matrix below this fraction of the
// largest: their directions carry no information the kernel can resolve, and K_LL^{-1/2} would
// amplify rounding errors by the inverse square root of their size.
const nystromEigenFloor = 1e-12

// nystromSeedStream separates the landmark draw from the other uses of Options.Seed.
const nystromSeedStream = 0x6e79_7374_726f_6d

// nystrom is the low-dimensional map of thesis appendix A (NMDS): with L landmark inputs and their
// Gram matrix K_LL = U Λ Uᵀ, an input x is mapped to φ(x) = K_{x,L} U_c Λ_c^{-1/2} ∈ R^c, keeping the
// c eigenvalues above the floor. Then φ(x)ᵀφ(x') = K_{x,L} K_LL⁺ K_{L,x'}, the Nyström approximation
// of k(x, x'), exact when x or x' is a landmark. With an intercept the map is of the kernel k + 1
// that the kernel model uses, so that with every training input as a landmark the linear model on φ
// is the kernel model (its intercept is penalised, as the kernel model's is).
type nystrom struct {
	kern      kernel.Kernel
	intercept bool        // the mapped kernel is k + 1
	landmarks xmat.Matrix // L×n, dense or sparse (the layout of the X they were drawn from)
	norms     []float64   // ‖landmark‖², for the rbf kernel
	proj      *mat.Dense  // L×c, U_c Λ_c^{-1/2}
}

func newNystromMap(kern kernel.Kernel, intercept bool, landmarks xmat.Matrix, proj *mat.Dense) *nystrom {
	return &nystrom{kern: kern, intercept: intercept, landmarks: landmarks.WithTranspose(), norms: landmarks.SquaredNorms(), proj: proj}
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
func buildNystrom(kern kernel.Kernel, intercept bool, X xmat.Matrix, count int, seed uint64, reuse *nystrom) (*nystrom, error) {
	m, _ := X.Dims()
	idx := NystromLandmarks(m, count, seed)
	L := X.CopyRows(idx)
	ny := newNystromMap(kern, intercept, L, nil)
	if ny.sameMap(reuse) {
		return reuse, nil
	}
	K := mat.NewDense(len(idx), len(idx), nil)
	ny.gram(K, ny.landmarks)
	proj, err := NystromProjection(K)
	if err != nil {
		return nil, err
	}
	ny.proj = proj
	return ny, nil
}

// NystromProjection returns the projection P (L×c) of a Nyström map from the landmarks' Gram
// matrix K (L×L, of the kernel the map approximates; its symmetric part ½(K + Kᵀ) is used, as a
// computed Gram matrix may differ from its transpose by rounding), so that φ(x) = K_{x,L}·P: R⁻¹ of
// K's Cholesky factor when K is comfortably positive definite, else U_c Λ_c^{-1/2} from the
// eigenpairs above nystromEigenFloor of the largest (largest first). It fails when K has no
// positive eigenvalue.
func NystromProjection(K *mat.Dense) (*mat.Dense, error) {
	l, _ := K.Dims()
	sym := mat.NewSymDense(l, nil)
	for i := 0; i < l; i++ {
		for j := i; j < l; j++ {
			sym.SetSym(i, j, 0.5*(K.At(i, j)+K.At(j, i)))
		}
	}
	if proj := choleskyProjection(sym); proj != nil {
		return proj, nil
	}
	vals, vecs, err := eigenSym(sym, "the landmarks' Gram matrix (n_components)")
	if err != nil {
		return nil, err
	}
	top := vals[len(vals)-1]
	var keep []int
	for c := len(vals) - 1; c >= 0; c-- { // largest first
		if top > 0 && vals[c] > nystromEigenFloor*top {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("n_components: the landmarks' Gram matrix has no positive eigenvalue")
	}
	proj := mat.NewDense(l, len(keep), nil)
	for c, e := range keep {
		f := 1 / math.Sqrt(vals[e])
		for r := 0; r < l; r++ {
			proj.Set(r, c, f*vecs.At(r, e))
		}
	}
	return proj, nil
}

// choleskyProjection returns R⁻¹ for K_LL = RᵀR (R upper triangular) when K_LL is comfortably
// positive definite, nil otherwise. Then φ(x) = K_{x,L} R⁻¹ gives the same inner products φ(x)ᵀφ(x') = K_{x,L} K_LL⁻¹ K_{L,x'}
// as the eigenvector map, which drops nothing when every eigenvalue is above nystromEigenFloor·λ_max;
// and a Cholesky factorisation costs a small fraction of an eigendecomposition (1000 landmarks:
// 0.2 s against 6 s). Duplicate or nearly dependent landmarks fail the condition test and take the
// eigenvector map, which drops the directions they leave unresolved.
func choleskyProjection(K *mat.SymDense) *mat.Dense {
	var ch mat.Cholesky
	if !ch.Factorize(K) || !(ch.Cond() < 0.1/nystromEigenFloor) {
		return nil
	}
	var R, Rinv mat.TriDense
	ch.UTo(&R)
	if err := Rinv.InverseTri(&R); err != nil {
		return nil
	}
	return mat.DenseCopyOf(&Rinv)
}

// components is c, the dimension of the map.
func (ny *nystrom) components() int {
	_, c := ny.proj.Dims()
	return c
}

// gram writes k(x_i, landmark_j) (+1 with an intercept) into dst for the rows of X.
func (ny *nystrom) gram(dst *mat.Dense, X xmat.Matrix) {
	ny.kern.GramX(dst, X, ny.landmarks, ny.norms)
	if ny.intercept {
		addConstant(dst, 1)
	}
}

// transform writes φ of the rows of X (q×n) into Phi (q×c), block by block.
func (ny *nystrom) transform(Phi *mat.Dense, X xmat.Matrix) {
	q, _ := X.Dims()
	l, c := ny.proj.Dims()
	kb := mat.NewDense(min(q, predictBlock), l, nil)
	for lo := 0; lo < q; lo += predictBlock {
		hi := min(lo+predictBlock, q)
		kx := kb.Slice(0, hi-lo, 0, l).(*mat.Dense)
		ny.gram(kx, X.Slice(lo, hi))
		gemm.Mul(Phi.Slice(lo, hi, 0, c).(*mat.Dense).RawMatrix(), kx.RawMatrix(), ny.proj.RawMatrix())
	}
}

// apply returns φ(X) as a new q×c matrix.
func (ny *nystrom) apply(X xmat.Matrix) *mat.Dense {
	q, _ := X.Dims()
	Phi := mat.NewDense(q, ny.components(), nil)
	ny.transform(Phi, X)
	return Phi
}

// sameMap reports whether o maps inputs as ny does (same kernel, intercept and landmarks).
func (ny *nystrom) sameMap(o *nystrom) bool {
	return o != nil && ny.kern == o.kern && ny.intercept == o.intercept && sameInputs(ny.landmarks, o.landmarks)
}
