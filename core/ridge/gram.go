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
			kern.GramX(K.Slice(lo, hi, 0, hi).(*mat.Dense), X.Slice(lo, hi), X.Slice(0, hi), norms[:min(len(norms), hi)])
			tops = append(tops, lowerRowsMaxAbs(K.RawMatrix(), lo, hi, shift))
			mirrorRows(K.RawMatrix(), lo, hi)
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

// lowerRowsMaxAbs adds shift to the entries on and below the diagonal of the rows lo..hi−1 of the
// square a and returns check.AddMaxAbs of them: NaN when one is not finite.
func lowerRowsMaxAbs(a blas64.General, lo, hi int, shift float64) float64 {
	tops := make([]float64, hi-lo)
	parallel.For(hi-lo, 16, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			i := lo + r
			tops[r] = check.AddMaxAbs(a.Data[i*a.Stride:][:i+1], shift)
		}
	})
	return check.MaxAbs(tops) // the rows' maxima are ≥ 0, or NaN
}

// mirrorRows copies the entries below the diagonal of the rows lo..hi−1 of the square a onto their
// mirror images above it (column i of the rows above row i), a tile of columns at a time.
func mirrorRows(a blas64.General, lo, hi int) {
	const tile = 64
	st := a.Stride
	parallel.For((hi+tile-1)/tile, 1, func(t0, t1 int) {
		for j0 := t0 * tile; j0 < min(hi, t1*tile); j0 += tile {
			for j := j0; j < min(hi, j0+tile); j++ {
				dst := a.Data[j*st:]
				for i := max(lo, j+1); i < hi; i++ {
					dst[i] = a.Data[i*st+j]
				}
			}
		}
	})
}
