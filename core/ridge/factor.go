package ridge

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// The exact solvers factor a square matrix of up to MaxExactUnknowns rows: the linear model's
// normal equations by Cholesky (170 GFLOP, 30 s at the limit), the kernel model's system by LU
// (340 GFLOP), which one call into LAPACK's dpotrf or dgetrf would spend without a look at
// Options.Stop. factorLU and factorCholesky are LAPACK's blocked algorithms with checks between
// their pieces of work.
const (
	// luPanel is the width of the column panels factored one at a time (LAPACK's usual block).
	luPanel = 64
	// luUpdateRows is how many rows (or columns) of the trailing matrix are updated between two
	// checks of stop: 512 × 8,000 × 64 multiply-adds, a few tens of milliseconds.
	luUpdateRows = 512
)

// errNotPositiveDefinite says that factorCholesky met a pivot that is not positive.
var errNotPositiveDefinite = errors.New("the matrix is not positive definite")

// errSingular says that factorLU met an exactly zero pivot or solveLU an ill-conditioned factor.
var errSingular = errors.New("the matrix is singular to working precision")

// factorLU overwrites the n×n matrix a with its LU factorisation with partial pivoting (the unit
// lower and the upper triangle, as LAPACK's dgetrf stores them) and returns the pivots, or
// ErrCancelled as soon as stop is seen set.
func factorLU(a blas64.General, stop *cancel.Flag) ([]int, error) {
	n, lda, data := a.Rows, a.Stride, a.Data
	impl, bi := gonum.Implementation{}, blas64.Implementation()
	ipiv := make([]int, n)
	scratch := make([]float64, luUpdateRows*luPanel)
	singular := false
	for j := 0; j < n; j += luPanel {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		jb := min(n-j, luPanel)
		if !impl.Dgetf2(n-j, jb, data[j*lda+j:], lda, ipiv[j:j+jb]) {
			singular = true
		}
		for i := j; i < j+jb; i++ {
			ipiv[i] += j
		}
		impl.Dlaswp(j, data, lda, j, j+jb-1, ipiv[:j+jb], 1)
		if j+jb == n {
			break
		}
		impl.Dlaswp(n-j-jb, data[j+jb:], lda, j, j+jb-1, ipiv[:j+jb], 1)
		bi.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.Unit, jb, n-j-jb, 1,
			data[j*lda+j:], lda, data[j*lda+j+jb:], lda)
		// A22 −= L21·U12, through core/gemm (several times gonum's Dgemm), on the negated L21.
		u12 := blas64.General{Rows: jb, Cols: n - j - jb, Stride: lda, Data: data[j*lda+j+jb:]}
		for r := j + jb; r < n; r += luUpdateRows {
			if stop.Yield() {
				return nil, ErrCancelled
			}
			rows := min(luUpdateRows, n-r)
			neg := negated(blas64.General{Rows: rows, Cols: jb, Stride: lda, Data: data[r*lda+j:]}, scratch)
			gemm.MulPanelAdd(blas64.General{Rows: rows, Cols: n - j - jb, Stride: lda, Data: data[r*lda+j+jb:]}, neg, u12)
		}
	}
	if singular {
		return nil, errSingular
	}
	return ipiv, nil
}

// solveLU overwrites b with the solution x of A x = b, and the square matrix A with its factors
// (factorLU), refusing, as gonum's mat.LU does, a factor whose condition number exceeds
// mat.ConditionTolerance.
func solveLU(A *mat.Dense, b []float64, stop *cancel.Flag) error {
	n, _ := A.Dims()
	a := A.RawMatrix()
	impl := gonum.Implementation{}
	work := make([]float64, 4*n)
	anorm := impl.Dlange(lapack.MaxColumnSum, n, n, a.Data, a.Stride, work)
	ipiv, err := factorLU(a, stop)
	if err != nil {
		return err
	}
	cond, err := luCondition(a, ipiv, anorm, stop)
	if err != nil {
		return err
	}
	if !(cond <= mat.ConditionTolerance) {
		return fmt.Errorf("%w (condition number %.3g)", errSingular, cond)
	}
	luSolve(a, ipiv, b, blas.NoTrans)
	return nil
}

// luSolve overwrites x with A⁻¹x (trans NoTrans) or A⁻ᵀx (Trans), A = P·L·U in the factors of
// factorLU, by two triangular solves that read them by rows: gonum's Dgetrs with one right-hand
// side took 0.25 s at 8,000 unknowns, these 0.09 s.
func luSolve(a blas64.General, ipiv []int, x []float64, trans blas.Transpose) {
	n := a.Rows
	impl, bi := gonum.Implementation{}, blas64.Implementation()
	if trans == blas.NoTrans {
		impl.Dlaswp(1, x, 1, 0, n-1, ipiv, 1)
		bi.Dtrsv(blas.Lower, blas.NoTrans, blas.Unit, n, a.Data, a.Stride, x, 1)
		bi.Dtrsv(blas.Upper, blas.NoTrans, blas.NonUnit, n, a.Data, a.Stride, x, 1)
		return
	}
	bi.Dtrsv(blas.Upper, blas.Trans, blas.NonUnit, n, a.Data, a.Stride, x, 1)
	bi.Dtrsv(blas.Lower, blas.Trans, blas.Unit, n, a.Data, a.Stride, x, 1)
	impl.Dlaswp(1, x, 1, 0, n-1, ipiv, -1)
}

// luCondition estimates the 1-norm condition number of A from its LU factors (factorLU) and
// ‖A‖₁, as LAPACK's dgecon does (Hager–Higham's estimate of ‖A⁻¹‖₁ by Dlacn2), with a look at
// stop between the solves (conditionEstimate): gonum's Dgecon reads the factors by columns in
// its overflow-guarded solves, 0.67 s at 4,000 unknowns and seconds at 8,000, the tail of an
// exact kernel fit that Ctrl-C waited for (probe DH: 5.5 s).
func luCondition(a blas64.General, ipiv []int, anorm float64, stop *cancel.Flag) (float64, error) {
	return conditionEstimate(a.Rows, anorm, stop, func(x []float64, kase int) {
		trans := blas.NoTrans // kase 1: x = A⁻¹x; kase 2: x = A⁻ᵀx
		if kase == 2 {
			trans = blas.Trans
		}
		luSolve(a, ipiv, x, trans)
	})
}

// conditionEstimate is ‖A‖₁ (anorm) times Hager–Higham's estimate of ‖A⁻¹‖₁ (LAPACK's Dlacn2),
// for an n×n A whose inverse solve applies: x = A⁻¹x for kase 1, x = A⁻ᵀx for kase 2. It looks at
// stop before each solve, and a solve that overflows gives +Inf: the matrix is then singular to
// working precision anyway.
func conditionEstimate(n int, anorm float64, stop *cancel.Flag, solve func(x []float64, kase int)) (float64, error) {
	if anorm == 0 {
		return math.Inf(1), nil
	}
	impl := gonum.Implementation{}
	v, x, isgn := make([]float64, n), make([]float64, n), make([]int, n)
	var (
		est   float64
		kase  int
		isave [3]int
	)
	for {
		est, kase = impl.Dlacn2(n, v, x, isgn, est, kase, &isave)
		if kase == 0 {
			break
		}
		if stop.Yield() {
			return 0, ErrCancelled
		}
		solve(x, kase)
		for _, xi := range x {
			if math.IsNaN(xi) || math.IsInf(xi, 0) {
				return math.Inf(1), nil
			}
		}
	}
	if !(est > 0) {
		return math.Inf(1), nil
	}
	return est * anorm, nil
}

// factorCholesky overwrites the upper triangle of the n×n symmetric matrix a (row-major, upper
// triangle read) with U such that A = UᵀU, as LAPACK's left-looking blocked dpotrf does, or
// returns ErrCancelled as soon as stop is seen set. The entries below the diagonal are neither read
// nor written (spdInverse keeps zeros there for its products).
//
// The panel of rows J is updated from the rows above it, A[J, j:] −= U[:j, J]ᵀ·U[:j, j:], by
// package gemm's outer-product kernel (MulPanelAdd) on the negated transpose of U[:j, J]: the rows
// of both operands are read along their length. Its solve U_JJᵀ·X = A[J, j+jb:] is a forward
// substitution, in groups of cholSolveRows rows whose updates from the rows above are again
// MulPanelAdd's: substitution keeps the accuracy of LAPACK's dtrsm, which factorLower's products
// with an inverted block lose. At 3,010 unknowns (partial_fit's normal equations at 300 features
// and 10 labels, 2 cores) the factorisation took 281 ms on gemm.MulAdd, gonum's Dsyrk and Dtrsm.
func factorCholesky(a blas64.General, stop *cancel.Flag) error {
	n, lda, data := a.Rows, a.Stride, a.Data
	impl := gonum.Implementation{}
	negT := make([]float64, luPanel*n)       // −U[:j, J]ᵀ, then −U_JJᵀ
	diag := make([]float64, luPanel*luPanel) // the diagonal block's update
	for j := 0; j < n; j += luPanel {
		if stop.Yield() {
			return ErrCancelled
		}
		jb := min(luPanel, n-j)
		if j > 0 {
			for i := 0; i < jb; i++ {
				row := negT[i*j : (i+1)*j]
				for l := range row {
					row[l] = -data[l*lda+j+i]
				}
			}
			u01t := blas64.General{Rows: jb, Cols: j, Stride: j, Data: negT[:jb*j]}
			// A[J, J] −= U[:j, J]ᵀ·U[:j, J], its upper triangle only
			D := blas64.General{Rows: jb, Cols: jb, Stride: jb, Data: diag[:jb*jb]}
			gemm.MulPanel(D, u01t, blas64.General{Rows: j, Cols: jb, Stride: lda, Data: data[j:]})
			for i := 0; i < jb; i++ {
				row := data[(j+i)*lda+j+i : (j+i)*lda+j+jb]
				for c, v := range D.Data[i*jb+i : (i+1)*jb] {
					row[c] += v
				}
			}
			for c := j + jb; c < n; c += luUpdateRows {
				if stop.Yield() {
					return ErrCancelled
				}
				cols := min(luUpdateRows, n-c)
				gemm.MulPanelAdd(blas64.General{Rows: jb, Cols: cols, Stride: lda, Data: data[j*lda+c:]}, u01t,
					blas64.General{Rows: j, Cols: cols, Stride: lda, Data: data[c:]})
			}
		}
		if !impl.Dpotf2(blas.Upper, jb, data[j*lda+j:], lda) {
			return errNotPositiveDefinite
		}
		if j+jb < n {
			solvePanelUpperTrans(data[j*lda+j:], lda, jb, n-j-jb, negT)
		}
	}
	return nil
}

// cholSolveRows is the group of rows solvePanelUpperTrans substitutes one at a time, the rows
// above them entering through one product.
const cholSolveRows = 8

// solvePanelUpperTrans overwrites the k×cols panel B, to the right of the upper triangular k×k
// block U at u (both of row stride lda: B's rows start k values after U's), with X solving
// Uᵀ·X = B, by forward substitution over B's rows. scratch holds at least k² values.
// (upperTransSolve is the same solve for one vector, a whole factor's length.)
func solvePanelUpperTrans(u []float64, lda, k, cols int, scratch []float64) {
	negUT := scratch[:k*k] // −Uᵀ, row-major: row i holds −U[0:i, i]
	for i := 0; i < k; i++ {
		for l := 0; l < i; l++ {
			negUT[i*k+l] = -u[l*lda+i]
		}
	}
	row := func(i int) []float64 { return u[i*lda+k : i*lda+k+cols] }
	for g := 0; g < k; g += cholSolveRows {
		gr := min(cholSolveRows, k-g)
		if g > 0 {
			gemm.MulPanelAdd(blas64.General{Rows: gr, Cols: cols, Stride: lda, Data: u[g*lda+k:]},
				blas64.General{Rows: gr, Cols: g, Stride: k, Data: negUT[g*k:]},
				blas64.General{Rows: g, Cols: cols, Stride: lda, Data: u[k:]})
		}
		for i := g; i < g+gr; i++ {
			x := row(i)
			for l := g; l < i; l++ {
				gemm.Axpy(x, negUT[i*k+l], row(l))
			}
			inv := 1 / u[i*lda+i]
			for c := range x {
				x[c] *= inv
			}
		}
	}
}

// cholPanel is the width of the column panels factorLower factors one at a time.
const cholPanel = 64

// factorLower overwrites the n×n symmetric matrix a (row-major, upper triangle read) with L such
// that A = LLᵀ: L in the diagonal blocks of cholPanel rows, −L below them, and Lᵀ above the
// diagonal (the solves of kernelCubeDual read rows of both), or returns errNotPositiveDefinite at a
// pivot that is not positive, or ErrCancelled as soon as stop is seen set (checked between panels).
// It is LAPACK's blocked dpotrf on rows of the upper factor U = Lᵀ, left-looking: a panel of rows J
// is updated from the rows above it, A[J, j:] −= U[:j, J]ᵀ·U[:j, j:], whose left operand is
// L[J, :j], a block of rows of the lower copy, kept negated so that the update is MulPanelAdd's
// (negating it before each panel's update cost 1.6 ms of one thread at n = 1,500, the rows of the
// lower copy are written once); both operands are then read along rows, the shape of package gemm's
// outer-product kernel (MulPanelAdd), and the update lands in place (the dot-product form, rows of
// L against rows of L, wrote it transposed into a buffer and subtracted it from there on one
// thread). The panel's solve is a product with the inverse of the diagonal block, and its rows
// enter L by a transposed copy. At n = 1,500 on 2 cores it takes 22 ms (the dot-product form 23,
// factorCholesky 103; yeast's rbf Gram matrix, 4 alternated runs of 40). The inverted diagonal
// blocks cost accuracy on ill-conditioned matrices (a rank-deficient Gram matrix's deflation moved
// kernel CG's scores by 8e-7 where the substitution of factorCholesky's Dtrsm kept them within
// 1e-7), so factorLower serves only where the true gradient is checked after it (the kernel model's
// dual, kernelCubeDual), and factorCholesky stays the factor of the exact solvers and the
// preconditioners. It returns the inverses of the diagonal blocks (L_JJ⁻¹, row-major, zeros above
// the diagonal), which the solves of kernelCubeDual use too.
func factorLower(a blas64.General, stop *cancel.Flag) ([][]float64, error) {
	n, lda, data := a.Rows, a.Stride, a.Data
	if n == 0 {
		return nil, nil
	}
	nb := min(cholPanel, n)
	t := make([]float64, nb*n) // a panel's solve
	invs := make([][]float64, 0, (n+nb-1)/nb)
	for j := 0; j < n; j += nb {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		jb := min(nb, n-j)
		rows := n - j
		if j > 0 {
			gemm.MulPanelAdd(blas64.General{Rows: jb, Cols: rows, Stride: lda, Data: data[j*lda+j:]},
				blas64.General{Rows: jb, Cols: j, Stride: lda, Data: data[j*lda:]}, // −L[J, :j]
				blas64.General{Rows: j, Cols: rows, Stride: lda, Data: data[j:]})
		}
		// The diagonal block, from its upper triangle, by the recurrence on its lower one; then
		// Lᵀ above it.
		for c := 0; c < jb; c++ {
			for i := c + 1; i < jb; i++ {
				data[(j+i)*lda+j+c] = data[(j+c)*lda+j+i]
			}
		}
		if err := factorLowerBlock(data[j*lda+j:], lda, jb); err != nil {
			return nil, err
		}
		for c := 0; c < jb; c++ {
			for i := c + 1; i < jb; i++ {
				data[(j+c)*lda+j+i] = data[(j+i)*lda+j+c]
			}
		}
		inv := make([]float64, jb*jb)
		invertLowerBlock(inv, data[j*lda+j:], lda, jb)
		invs = append(invs, inv)
		if rows == jb {
			break
		}
		// U[J, I] = L_JJ⁻¹·A[J, I] for the columns I to the right, into U's rows and, transposed and
		// negated, L's columns J.
		below := rows - jb
		T := blas64.General{Rows: jb, Cols: below, Stride: below, Data: t[:jb*below]}
		gemm.MulPanel(T, blas64.General{Rows: jb, Cols: jb, Stride: jb, Data: inv},
			blas64.General{Rows: jb, Cols: below, Stride: lda, Data: data[j*lda+j+jb:]})
		for c := 0; c < jb; c++ {
			copy(data[(j+c)*lda+j+jb:][:below], T.Data[c*below:][:below])
		}
		for i := 0; i < below; i++ {
			row := data[(j+jb+i)*lda+j:][:jb]
			for c := range row {
				row[c] = -T.Data[c*below+i]
			}
		}
	}
	return invs, nil
}

// factorLowerBlock factors the k×k block at a (row stride lda, lower triangle read) in place by
// the unblocked Cholesky–Crout recurrence on contiguous rows.
func factorLowerBlock(a []float64, lda, k int) error {
	for c := 0; c < k; c++ {
		rc := a[c*lda:][:c]
		d := a[c*lda+c] - dot(rc, rc)
		if !(d > 0) || math.IsInf(d, 1) {
			return errNotPositiveDefinite
		}
		d = math.Sqrt(d)
		a[c*lda+c] = d
		for i := c + 1; i < k; i++ {
			a[i*lda+c] = (a[i*lda+c] - dot(a[i*lda:][:c], rc)) / d
		}
	}
	return nil
}

// invertLowerBlock writes into inv (k×k, row-major, zeros above the diagonal) the inverse of the
// lower triangular k×k block at l (row stride lda).
func invertLowerBlock(inv, l []float64, lda, k int) {
	clear(inv)
	for c := 0; c < k; c++ {
		copy(inv[c*k:][:c+1], l[c*lda:][:c+1])
	}
	gonum.Implementation{}.Dtrti2(blas.Lower, blas.NonUnit, k, inv, k)
}

// solveCholesky overwrites b with the solution x of A x = b for the symmetric positive definite A
// (its upper triangle is read, and overwritten with the factor) and returns the estimate of A's
// condition number. Like gonum's mat.Cholesky it reports errNotPositiveDefinite, or a
// mat.Condition error when the condition number exceeds mat.ConditionTolerance (b then holds the
// solution all the same).
func solveCholesky(A *mat.SymDense, b []float64, stop *cancel.Flag) (float64, error) {
	raw := A.RawSymmetric()
	n := raw.N
	a := blas64.General{Rows: n, Cols: n, Stride: raw.Stride, Data: raw.Data}
	anorm := symNorm1(a)
	if err := factorCholesky(a, stop); err != nil {
		return 0, err
	}
	cond, err := choleskyCondition(a, anorm, stop)
	if err != nil {
		return 0, err
	}
	upperTransSolve(a, b)
	upperSolve(a, b)
	if cond > mat.ConditionTolerance {
		return cond, mat.Condition(cond)
	}
	return cond, nil
}

// symNorm1 returns ‖A‖₁ (its largest column sum of magnitudes, the row sums' by symmetry) for the
// symmetric n×n A whose upper triangle a holds, in one pass along its rows: gonum's Dlansy read the
// triangle's columns too (15 ms at 3,010 unknowns).
func symNorm1(a blas64.General) float64 {
	n := a.Rows
	sums := make([]float64, n)
	for i := 0; i < n; i++ {
		row := a.Data[i*a.Stride+i : i*a.Stride+n]
		s := sums[i] + math.Abs(row[0])
		tail := sums[i+1 : n]
		for c, v := range row[1:] {
			v = math.Abs(v)
			s += v
			tail[c] += v
		}
		sums[i] = s
	}
	var m float64
	for _, s := range sums {
		m = max(m, s)
	}
	return m
}

// negated copies −x into scratch and returns it as a dense matrix of x's shape.
func negated(x blas64.General, scratch []float64) blas64.General {
	out := blas64.General{Rows: x.Rows, Cols: x.Cols, Stride: x.Cols, Data: scratch[:x.Rows*x.Cols]}
	for i := 0; i < x.Rows; i++ {
		src, dst := x.Data[i*x.Stride:i*x.Stride+x.Cols], out.Data[i*x.Cols:(i+1)*x.Cols]
		for c, v := range src {
			dst[c] = -v
		}
	}
	return out
}

// choleskyCondition estimates the 1-norm condition number of A = UᵀU from its factor U and
// ‖A‖₁, as LAPACK's dpocon does (Hager–Higham's estimate of ‖A⁻¹‖₁ by Dlacn2), with plain
// triangular solves in place of dpocon's overflow-guarded ones, which read U by columns (3 s
// at 8,000 unknowns, without a look at stop).
func choleskyCondition(u blas64.General, anorm float64, stop *cancel.Flag) (float64, error) {
	return conditionEstimate(u.Rows, anorm, stop, func(x []float64, _ int) { // A⁻¹ = A⁻ᵀ
		upperTransSolve(u, x)
		upperSolve(u, x)
	})
}

// upperTransSolve overwrites b with the solution y of Uᵀy = b for the non-singular upper
// triangular U (row-major, entries below the diagonal not read), by forward substitution along U's
// rows, four at a time: each group's four solved values leave the rest of b in one pass
// (gemm.Axpy4). gonum's Dtrsm, which Dpotrs uses, read U by columns for one right-hand side: 17 ms
// at 3,010 unknowns against 3 here, and its Dtrsv took 5.
func upperTransSolve(u blas64.General, b []float64) {
	n, lda := u.Rows, u.Stride
	var y [4]float64
	i := 0
	for ; i+4 <= n; i += 4 {
		for r := 0; r < 4; r++ {
			s := b[i+r]
			for l := 0; l < r; l++ {
				s -= y[l] * u.Data[(i+l)*lda+i+r]
			}
			y[r] = s / u.Data[(i+r)*lda+i+r]
			b[i+r] = y[r]
		}
		if i+4 < n {
			neg := [4]float64{-y[0], -y[1], -y[2], -y[3]}
			row := func(r int) []float64 { return u.Data[(i+r)*lda+i+4 : (i+r)*lda+n] }
			gemm.Axpy4(b[i+4:n], &neg, row(0), row(1), row(2), row(3))
		}
	}
	for ; i < n; i++ {
		b[i] /= u.Data[i*lda+i]
		if i+1 < n {
			gemm.Axpy(b[i+1:n], -b[i], u.Data[i*lda+i+1:i*lda+n])
		}
	}
}

// upperSolve overwrites y with the solution x of U·x = y for the non-singular upper triangular U
// (row-major, entries below the diagonal not read), by back substitution, four rows at a time:
// their dot products with the solved part of x read it once (gemm.DotRows4).
func upperSolve(u blas64.General, y []float64) {
	n, lda := u.Rows, u.Stride
	at := func(i, j int) float64 { return u.Data[i*lda+j] }
	for i := n - 1; i >= n-n%4; i-- { // the last n mod 4 rows one at a time
		y[i] = (y[i] - dot(y[i+1:n], u.Data[i*lda+i+1:])) / at(i, i)
	}
	for i := n - 1 - n%4; i >= 3; i -= 4 {
		// rows i−3 … i, their dot products with x[i+1:] in one pass
		tail := y[i+1 : n]
		row := func(r int) []float64 { return u.Data[r*lda+i+1 : r*lda+n] }
		s := gemm.DotRows4(row(i-3), row(i-2), row(i-1), row(i), tail)
		for r := 3; r >= 0; r-- {
			v := y[i-3+r] - s[r]
			for l := r + 1; l < 4; l++ {
				v -= at(i-3+r, i-3+l) * y[i-3+l]
			}
			y[i-3+r] = v / at(i-3+r, i-3+r)
		}
	}
}

// invPanel is the order below which invertUpper hands a triangle to LAPACK's unblocked dtrti2.
const invPanel = 64

// spdInverse returns the inverse of the symmetric positive definite n×n A (its upper triangle read)
// as a dense matrix, or errNotPositiveDefinite, or ErrCancelled as soon as stop is seen set. A =
// UᵀU by factorCholesky, U⁻¹ by invertUpper and A⁻¹ = U⁻¹U⁻ᵀ by products on package gemm: the
// preconditioners' blocks are inverted once and applied every CG iteration as products. gonum's
// Cholesky.InverseTo, level-2-bound in its triangular inverse, took 1.5 s of bibtex's 3 s fit at
// n = 1,837. All three steps look at stop: at n = 3,000 (a Nyström map of 3,000 landmarks) they
// took 1.2 s, deaf to Ctrl-C (probe DG).
func spdInverse(A blas64.General, stop *cancel.Flag) (*mat.Dense, error) {
	n := A.Rows
	u := mat.NewDense(n, n, nil) // the upper triangle of A, zeros below for the products
	for i := 0; i < n; i++ {
		copy(u.RawRowView(i)[i:], A.Data[i*A.Stride+i:i*A.Stride+n])
	}
	if err := factorCholesky(u.RawMatrix(), stop); err != nil {
		return nil, err
	}
	if !invertUpper(u.RawMatrix(), make([]float64, (n/2+1)*(n/2+1)), stop) {
		return nil, ErrCancelled
	}
	inv := mat.NewDense(n, n, nil)
	for lo := 0; lo < n; lo += inversePanel {
		if stop.Yield() {
			return nil, ErrCancelled
		}
		hi := min(lo+inversePanel, n)
		gemm.MulT(inv.Slice(lo, hi, 0, n).(*mat.Dense).RawMatrix(), u.Slice(lo, hi, 0, n).(*mat.Dense).RawMatrix(), u.RawMatrix())
	}
	return inv, nil
}

// inversePanel is the number of rows of A⁻¹ that spdInverse forms between two looks at its stop
// flag: 2·512·n² flops, 9 GFLOP at n = 3,000.
const inversePanel = 512

// invertUpper overwrites the non-singular upper triangular u (zeros below the diagonal) with its
// inverse, by halves: [A B; 0 C]⁻¹ = [A⁻¹ −A⁻¹BC⁻¹; 0 C⁻¹], the off-diagonal block by two
// products on package gemm (the triangles taken as full matrices, their zeros included). scratch
// holds at least ⌈n/2⌉² values. It returns false, u half inverted, as soon as stop is seen set.
func invertUpper(u blas64.General, scratch []float64, stop *cancel.Flag) bool {
	n := u.Rows
	if n <= invPanel {
		gonum.Implementation{}.Dtrti2(blas.Upper, blas.NonUnit, n, u.Data, u.Stride)
		return true
	}
	h := n / 2
	a := blas64.General{Rows: h, Cols: h, Stride: u.Stride, Data: u.Data}
	b := blas64.General{Rows: h, Cols: n - h, Stride: u.Stride, Data: u.Data[h:]}
	c := blas64.General{Rows: n - h, Cols: n - h, Stride: u.Stride, Data: u.Data[h*u.Stride+h:]}
	if !invertUpper(a, scratch, stop) || !invertUpper(c, scratch, stop) || stop.Yield() {
		return false
	}
	t := blas64.General{Rows: h, Cols: n - h, Stride: n - h, Data: scratch[:h*(n-h)]}
	gemm.Mul(t, b, c) // B·C⁻¹
	if stop.Yield() {
		return false
	}
	gemm.Mul(b, a, t) // A⁻¹·B·C⁻¹
	for i := 0; i < h; i++ {
		row := b.Data[i*b.Stride : i*b.Stride+b.Cols]
		for j := range row {
			row[j] = -row[j]
		}
	}
	return true
}

// factorPivotedCholesky overwrites the n×n symmetric matrix a (row-major, both triangles held)
// with the Cholesky factor of P·A·Pᵀ computed with complete (diagonal) pivoting, as LAPACK's
// blocked dpstrf does: at each step the largest remaining diagonal entry of the Schur complement
// is the next pivot, and the factorisation stops before the first one at or below tol. It returns
// the pivot order (piv[i] is the row of A that became row i) and the rank r: the leading r×r upper
// triangle of a then holds R with P·A·Pᵀ's leading r×r block = RᵀR; the rest of a is scratch.
// Pivoting keeps every pivot above tol, so R is as well conditioned as the numerical rank allows,
// and a positive semi-definite A that is singular, or nearly so, gives the factor of its
// resolved part instead of a failure. It returns ErrCancelled as soon as stop is seen set (checked
// between blocks of pivots: a block's update of 10,000 rows is about 13 GFLOP).
func factorPivotedCholesky(a blas64.General, tol float64, stop *cancel.Flag) (piv []int, rank int, err error) {
	n, lda, data := a.Rows, a.Stride, a.Data
	piv = make([]int, n)
	d := make([]float64, n) // diagonal of the Schur complement, kept current within a block
	for i := range piv {
		piv[i], d[i] = i, data[i*lda+i]
	}
	swap := func(j, p int) {
		d[j], d[p] = d[p], d[j]
		piv[j], piv[p] = piv[p], piv[j]
		for k := 0; k < n; k++ { // columns j and p: R's rows above, the Schur complement below
			data[k*lda+j], data[k*lda+p] = data[k*lda+p], data[k*lda+j]
		}
		rj, rp := data[j*lda:j*lda+n], data[p*lda:p*lda+n]
		for c := j; c < n; c++ {
			rj[c], rp[c] = rp[c], rj[c]
		}
	}
	neg := make([]float64, luPanel*n)
	for j0 := 0; j0 < n; j0 += luPanel {
		if stop.Yield() {
			return nil, 0, ErrCancelled
		}
		j1 := min(j0+luPanel, n)
		for j := j0; j < j1; j++ {
			p := j
			for i := j + 1; i < n; i++ {
				if d[i] > d[p] {
					p = i
				}
			}
			if !(d[p] > tol) {
				return piv, j, nil
			}
			if p != j {
				swap(j, p)
			}
			rjj := math.Sqrt(d[j])
			row := data[j*lda : j*lda+n]
			// The Schur complement's row j, less the contributions of this block's earlier rows,
			// which the trailing update has not yet applied.
			for k := j0; k < j; k++ {
				gemm.Axpy(row[j+1:], -data[k*lda+j], data[k*lda+j+1:k*lda+n])
			}
			row[j] = rjj
			for i := j + 1; i < n; i++ {
				row[i] /= rjj
				d[i] -= row[i] * row[i]
			}
		}
		if j1 == n {
			break
		}
		// S22 −= R12ᵀ·R12 over the block's rows, on package gemm with R12 negated.
		t := n - j1
		r12 := blas64.General{Rows: j1 - j0, Cols: t, Stride: lda, Data: data[j0*lda+j1:]}
		gemm.MulTNAdd(blas64.General{Rows: t, Cols: t, Stride: lda, Data: data[j1*lda+j1:]}, negated(r12, neg), r12)
		for i := j1; i < n; i++ {
			d[i] = data[i*lda+i]
		}
	}
	return piv, n, nil
}
