// Package kernel computes Gram matrices of the input kernels combpred supports.
package kernel

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
	"slices"
)

// Kind names an input kernel.
type Kind int

// The kernels. Linear models are solved in the primal; the others through the kernel expansion.
const (
	Linear Kind = iota
	Poly
	RBF
	Precomputed
)

var kindNames = [...]string{"linear", "poly", "rbf", "precomputed"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind maps a kernel name to its Kind.
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if n == name {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown kernel %q (want linear, poly, rbf or precomputed)", name)
}

// Kernel is an input kernel with its parameters:
// linear ⟨a,b⟩, poly (γ⟨a,b⟩ + coef0)^degree, rbf exp(−γ‖a−b‖²).
type Kernel struct {
	Kind   Kind
	Gamma  float64
	Degree int
	Coef0  float64
}

// Validate reports parameters that make the kernel meaningless.
func (k Kernel) Validate() error {
	switch k.Kind {
	case Linear, Precomputed:
	case RBF:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("gamma must be a positive finite number for the rbf kernel, got %v", k.Gamma)
		}
	case Poly:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("gamma must be a positive finite number for the poly kernel, got %v", k.Gamma)
		}
		if k.Degree < 1 {
			return fmt.Errorf("degree must be ≥ 1, got %d", k.Degree)
		}
		if math.IsNaN(k.Coef0) || math.IsInf(k.Coef0, 0) {
			return fmt.Errorf("coef0 must be finite, got %v", k.Coef0)
		}
	default:
		return fmt.Errorf("unknown kernel kind %d", int(k.Kind))
	}
	return nil
}

// Same reports whether k and o are the same function: the same kind with equal values of the
// parameters that kind reads (gamma for rbf; gamma, degree and coef0 for poly; none for linear and
// precomputed), so that a parameter the kind ignores does not tell two kernels apart.
func (k Kernel) Same(o Kernel) bool {
	switch {
	case k.Kind != o.Kind:
		return false
	case k.Kind == RBF:
		return k.Gamma == o.Gamma
	case k.Kind == Poly:
		return k == o
	}
	return true
}

// Gram writes k(a_i, b_j) into dst (rows of a × rows of b). a and b have the same number of
// columns. Precomputed kernels have no Gram matrix: the caller passes the matrix itself.
func (k Kernel) Gram(dst *mat.Dense, a, b *mat.Dense) {
	var nb []float64
	if k.Kind == RBF {
		nb = SquaredNorms(b)
	}
	k.GramNorms(dst, a, b, nb)
}

// GramNorms is Gram with the squared row norms of b given (SquaredNorms(b)), so that repeated
// predictions against the same b do not recompute them; nb is used by the rbf kernel only.
func (k Kernel) GramNorms(dst *mat.Dense, a, b *mat.Dense, nb []float64) {
	k.gramDense(dst, a, b, nil, nb)
}

// Products writes the inner products a·bᵀ of dense a and b (b's transpose used where kept, as
// KeepTranspose keeps it) into dst, as GramX computes them before Row turns them into kernel
// values: Row applied to them gives GramX's values bit for bit.
func Products(dst *mat.Dense, a, b xmat.Matrix) { products(dst, a.Dense, b.Dense, b.DenseT) }

// gramDense is GramNorms given bT, the transpose of b, or nil (products).
func (k Kernel) gramDense(dst *mat.Dense, a, b, bT *mat.Dense, nb []float64) {
	if k.Kind == Precomputed {
		panic("kernel: Gram called on a " + k.Kind.String() + " kernel")
	}
	products(dst, a, b, bT)
	if k.Kind == Linear {
		return
	}
	var na []float64
	if k.Kind == RBF {
		na = SquaredNorms(a)
	}
	k.fromProducts(dst, na, nb)
}

// fromProducts turns the inner products in dst into kernel values, row by row in parallel; na
// and nb are the squared row norms of both sides (rbf only, else nil).
func (k Kernel) fromProducts(dst *mat.Dense, na, nb []float64) {
	rows, cols := dst.Dims()
	raw := dst.RawMatrix()
	parallel.For(rows, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var ni float64
			if na != nil {
				ni = na[i]
			}
			k.Row(raw.Data[i*raw.Stride:i*raw.Stride+cols], ni, nb, 0)
		}
	})
}

// Row turns the inner products v_j = ⟨a, b_j⟩ into k(a, b_j) + plus, in place, given the squared
// norms na = ‖a‖² and nb_j = ‖b_j‖² (used by the rbf kernel only): a row of GramNorms, plus a
// constant (an intercept's). For the linear and precomputed kernels v already holds the values.
func (k Kernel) Row(v []float64, na float64, nb []float64, plus float64) {
	switch k.Kind {
	case RBF:
		rbfRow(v, na, nb, k.Gamma, plus)
	case Poly:
		for j, dot := range v {
			v[j] = powInt(k.Gamma*dot+k.Coef0, k.Degree) + plus
		}
	default:
		if plus != 0 {
			for j := range v {
				v[j] += plus
			}
		}
	}
}

// powInt returns x raised to the power n ≥ 1 by repeated squaring: math.Pow took 10–15 ns an
// entry, five times the rbf kernel's exponentials (a polynomial model's predictions were 5× slower
// than an rbf model's, probe FS). Its rounding error grows with the log of n: a few units in the
// last place at the degrees in use, where math.Pow's is below one.
func powInt(x float64, n int) float64 {
	r := 1.0
	for {
		if n&1 == 1 {
			r *= x
		}
		n >>= 1
		if n == 0 {
			return r
		}
		x *= x
	}
}

// products writes a·bᵀ into dst, given bT (the transpose of b, kept by callers that take many
// products against the same b: TransposesInputs) or nil. Every entry is computed by one rule that
// depends on the number of features alone, so that a block of rows, a single prediction and the
// whole training Gram matrix agree bit for bit, with or without bT, on any number of threads:
//
//   - up to panelFeatures features, package gemm's panel sum: the fused multiply–adds of the
//     features in order, chunk by chunk, whichever of a and b the kernel reads along rows
//     (fma(x, y, s) and fma(y, x, s) round alike). Its 4×24 block of dst stays in registers for a
//     whole chunk, where the dot-product kernels fold their lanes at the end of every short sum:
//     yeast's Gram matrix (1,500 × 103) ran at 123 against 56 GFLOP/s on one core of a Zen 5;
//   - beyond, gemm.MulT's dot products of rows, which read both operands along their rows: on long
//     rows their folds cost little, and the panel kernel, reading bᵀ a row of features at a time
//     across a large b, was up to 27 % slower (40,000 features against 1,000 rows, probe FT).
//
// Within the panel rule, a against bT; without bT, few rows of a (at most panelFewRows) are taken as
// dstᵀ = b·aᵀ, b read along its rows, and more rows against blocks of panelBlock rows of b
// transposed in turn into a buffer of bounded size. (With bT, dstᵀ = b·aᵀ for 4 or 8 rows against
// 1,500 × 103 was 1.5× slower: its kernels are then the 256-bit ones, a register or two a row.)
func products(dst, a, b, bT *mat.Dense) {
	q, p := a.Dims()
	m, _ := b.Dims()
	switch {
	case q == 0 || m == 0:
		return
	case !TransposesInputs(p) || p == 0:
		gemm.MulT(dst.RawMatrix(), a.RawMatrix(), b.RawMatrix())
	case bT == nil && q <= panelFewRows:
		t := mat.NewDense(m, q, nil)
		gemm.MulPanel(t.RawMatrix(), b.RawMatrix(), xmat.Transpose(a).RawMatrix())
		xmat.TransposeInto(dst, t)
	case bT != nil:
		gemm.MulPanel(dst.RawMatrix(), a.RawMatrix(), bT.RawMatrix())
	default:
		buf := mat.NewDense(max(p, 1), min(m, panelBlock), nil)
		for j0 := 0; j0 < m; j0 += panelBlock {
			j1 := min(m, j0+panelBlock)
			blockT := buf.Slice(0, p, 0, j1-j0).(*mat.Dense)
			xmat.TransposeInto(blockT, b.Slice(j0, j1, 0, p).(*mat.Dense))
			gemm.MulPanel(dst.Slice(0, q, j0, j1).(*mat.Dense).RawMatrix(), a.RawMatrix(), blockT.RawMatrix())
		}
	}
}

// Shapes of products' rules: the panel kernel up to panelFeatures features (where it was measured
// faster for every number of rows; at 1,000 features 8 rows against 3,000 were 13 % slower); without
// bT, at most panelFewRows rows of a taken as dstᵀ = b·aᵀ, more against b transposed panelBlock rows
// at a time (a buffer of at most 2 MB).
const (
	panelFeatures = 512
	panelFewRows  = 8
	panelBlock    = 512
)

// TransposesInputs reports whether kernel products with inputs of n features read the transpose of
// their right operand, which callers that take many products against the same rows (a fitted
// model's support inputs, a Nyström map's landmarks, the training Gram matrix) keep at hand
// (xmat.Matrix.DenseT); without it, every product transposes what it reads.
func TransposesInputs(n int) bool { return n <= panelFeatures }

// KeepTranspose returns x with the transpose that kernel products against its rows read
// (xmat.Matrix.WithTranspose, where the memory budget allows it): a sparse x's always
// (xmat.ProductsT), a dense x's where TransposesInputs.
func KeepTranspose(x xmat.Matrix) xmat.Matrix {
	if x.Sparse == nil {
		if x.Dense == nil {
			return x
		}
		if _, n := x.Dense.Dims(); !TransposesInputs(n) {
			return x
		}
	}
	return x.WithTranspose()
}

// SquaredNorms returns ‖a_i‖² for every row of a.
func SquaredNorms(a *mat.Dense) []float64 { return xmat.Matrix{Dense: a}.SquaredNorms() }

// CheckFinite names the first kernel value of K (rows × cols, row-major) that overflowed, with the
// parameters that set the kernel's scale: a poly kernel with coef0 = 1e300 gives +Inf, from which
// a fit would return NaN coefficients. One parallel pass (check.MaxAbs) clears a finite K; only a
// K that fails it is searched for its first bad value.
func (k Kernel) CheckFinite(K []float64, cols int) error {
	if top := check.MaxAbs(K); !math.IsNaN(top) && !math.IsInf(top, 0) {
		return nil
	}
	for i, v := range K {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel=%v overflows: K[%d, %d] = %v (gamma=%v, degree=%d, coef0=%v); "+
				"scale X or reduce gamma, coef0 or degree", k.Kind, i/cols, i%cols, v, k.Gamma, k.Degree, k.Coef0)
		}
	}
	return nil
}

// KindNames returns the names of the kernel kinds, in the order of their values.
func KindNames() []string { return slices.Clone(kindNames[:]) }

// GramX is GramNorms for inputs that may be sparse: k(a_i, b_j) into dst (rows of a × rows of
// b), with the squared row norms of b given (nb, rbf only; nil computes them). The inner products
// of sparse rows cost their shared entries, and no sparse input is densified, so a model fitted on
// sparse X predicts dense X and the reverse with the same kernel values up to rounding.
func (k Kernel) GramX(dst *mat.Dense, a, b xmat.Matrix, nb []float64) {
	if a.Sparse == nil && b.Sparse == nil {
		if k.Kind == RBF && nb == nil {
			nb = SquaredNorms(b.Dense)
		}
		k.gramDense(dst, a.Dense, b.Dense, b.DenseT, nb)
		return
	}
	if k.Kind == Precomputed {
		panic("kernel: Gram called on a " + k.Kind.String() + " kernel")
	}
	switch {
	case a.Sparse != nil && b.Sparse != nil:
		if b.SparseT != nil {
			xmat.ProductsT(dst, a.Sparse, b.SparseT)
		} else {
			xmat.Products(dst, a.Sparse, b.Sparse)
		}
	case a.Sparse != nil:
		xmat.ProductsDense(dst, a.Sparse, b.Dense)
	default:
		xmat.DenseProducts(dst, a.Dense, b.Sparse)
	}
	if k.Kind == Linear {
		return
	}
	var na []float64
	if k.Kind == RBF {
		na = a.SquaredNorms()
		if nb == nil {
			nb = b.SquaredNorms()
		}
	}
	k.fromProducts(dst, na, nb)
}
