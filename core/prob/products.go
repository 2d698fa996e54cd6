package prob

import (
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The two products of every objective evaluation, U = [X 1]·W and ∇ = [X 1]ᵀ·G, on core/gemm and
// with the intercept's column of ones kept implicit: gonum's Dgemm ran Xᵀ·G at a third of
// core/gemm's speed, and the copy of X with its column of ones was made at every evaluation
// (together half of a multi-label fit on yeast).

// scores writes [X 1]·W into U (b×d) for the b rows of X (b×n, a view), W having n rows, plus the
// intercept's row when intercept is set.
func scores(U, X, W *mat.Dense, intercept bool) {
	_, n := X.Dims()
	_, d := W.Dims()
	w := W.Slice(0, n, 0, d).(*mat.Dense).RawMatrix()
	if intercept {
		gemm.MulPanelBias(U.RawMatrix(), X.RawMatrix(), w, W.RawRowView(n)[:d])
		return
	}
	gemm.MulPanel(U.RawMatrix(), X.RawMatrix(), w)
}

// gradientProduct writes [X 1]ᵀ·G into grad (n×d, or (n+1)×d with the intercept), over the rows
// of X and G as they are stored.
func gradientProduct(grad, X, G *mat.Dense, intercept bool) {
	_, n := X.Dims()
	gemm.MulTN(grad.Slice(0, n, 0, G.RawMatrix().Cols).(*mat.Dense).RawMatrix(), X.RawMatrix(), G.RawMatrix())
	if intercept {
		gemm.ColumnSums(grad.RawRowView(n)[:G.RawMatrix().Cols], G.RawMatrix())
	}
}

// scoresX is scores for dense or sparse X.
func scoresX(U *mat.Dense, X xmat.Matrix, W *mat.Dense, intercept bool) {
	if X.Sparse == nil {
		scores(U, X.Dense, W, intercept)
		return
	}
	_, n := X.Dims()
	u, w := U.RawMatrix(), W.RawMatrix()
	X.Sparse.Mul(u.Data, u.Stride, w.Data, w.Stride, u.Cols)
	if intercept {
		gemm.AddRow(u, W.RawRowView(n)[:u.Cols])
	}
}

// gradientProductX is gradientProduct for dense or sparse X.
func gradientProductX(grad *mat.Dense, X xmat.Matrix, G *mat.Dense, intercept bool) {
	if X.Sparse == nil {
		gradientProduct(grad, X.Dense, G, intercept)
		return
	}
	_, n := X.Dims()
	o, g := grad.RawMatrix(), G.RawMatrix()
	X.Sparse.TMul(o.Data, o.Stride, g.Data, g.Stride, g.Cols)
	if intercept {
		gemm.ColumnSums(grad.RawRowView(n)[:g.Cols], g)
	}
}
