package ridge

import (
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// gramRows is how many rows of the training Gram matrix are computed between two checks of
// Options.Stop: 1024 rows against 30,000 samples of 100 features are about 6 GFLOP.
const gramRows = 1024

// symmetricGramRows is the block of rows of a dense training Gram matrix: each block is computed
// against the rows up to its own last one, then copied onto the upper triangle while it is in
// cache. That is m²/2 + 64·m kernel values (products, and exponentials for rbf) instead of m²;
// every value is computed as the full matrix's, so the fit does not change.
const symmetricGramRows = 128

// gramCancellable writes the Gram matrix of X plus shift (the intercept's constant, 0 for none)
// into K (m×m) a block of rows at a time, stopping with ErrCancelled when stop is set, and
// returns the largest |K_ij|, or NaN when K holds a NaN or an infinity (check.AddMaxAbs). The
// shift, the maximum and the upper triangle are taken block by block while the block is in
// cache: as passes over the whole of K after it, they read 18 MB from memory twice on yeast
// (1,500 samples), 11–15 ms of a 100 ms fit on two threads.
func gramCancellable(kern kernel.Kernel, K *mat.Dense, X xmat.Matrix, shift float64, stop *cancel.Flag) (float64, error) {
	m, _ := X.Dims()
	var norms []float64
	if kern.Kind == kernel.RBF {
		norms = X.SquaredNorms()
	}
	if X.Sparse == nil {
		X = kernel.KeepTranspose(X) // once, where a block would copy it transposed (kernel.GramX)
		tops := make([]float64, 0, (m+symmetricGramRows-1)/symmetricGramRows)
		for lo := 0; lo < m; lo += symmetricGramRows {
			if stop.Yield() {
				return 0, ErrCancelled
			}
			hi := min(lo+symmetricGramRows, m)
			kernel.Products(K.Slice(lo, hi, 0, hi).(*mat.Dense), X.Slice(lo, hi), X.Slice(0, hi))
			tops = append(tops, finishRows(kern, K.RawMatrix(), lo, hi, norms, shift))
		}
		return check.MaxAbs(tops), nil // NaN when a block's is
	}
	if err := X.Sparse.CheckTranspose("X", "the kernel's Gram matrix"); err != nil {
		return 0, err
	}
	X = X.WithTranspose()
	for lo := 0; lo < m; lo += gramRows {
		if stop.Yield() {
			return 0, ErrCancelled
		}
		hi := min(lo+gramRows, m)
		kern.GramX(K.Slice(lo, hi, 0, m).(*mat.Dense), X.Slice(lo, hi), X, norms)
	}
	return check.AddMaxAbs(K.RawMatrix().Data, shift), nil
}

// finishRows turns the inner products on and below the diagonal of the rows lo..hi−1 of the
// square a into kernel values plus shift (norms: the squared row norms, rbf only), copies them
// onto their mirror images above the diagonal, and returns the largest |value|, or NaN when one is
// not finite. One parallel pass while the rows are in cache: with separate passes for the kernel
// values, the shift with the maximum, and the copy, a yeast Gram matrix (1,500 × 103, two
// threads) took 6.4–7.2 ms, with this one 4.9–5.8 (alternated runs).
func finishRows(k kernel.Kernel, a blas64.General, lo, hi int, norms []float64, shift float64) float64 {
	st := a.Stride
	tops := make([]float64, hi-lo)
	parallel.For(hi-lo, 16, func(r0, r1 int) {
		i0, i1 := lo+r0, lo+r1
		for i := i0; i < i1; i++ {
			var ni float64
			if norms != nil {
				ni = norms[i]
			}
			row := a.Data[i*st:][:i+1]
			k.Row(row, ni, norms, shift)
			tops[i-lo] = check.MaxAbs(row)
		}
		// Column j of the rows i0..i1−1 onto row j, for every row j above them: the threads write
		// disjoint columns.
		for j := 0; j < i1-1; j++ {
			dst := a.Data[j*st:]
			for i := max(i0, j+1); i < i1; i++ {
				dst[i] = a.Data[i*st+j]
			}
		}
	})
	return check.MaxAbs(tops) // the rows' maxima are ≥ 0, or NaN
}
