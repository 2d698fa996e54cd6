package ridge

import (
	"github.com/combpred/combpred/core/cancel"
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
// against the rows up to its own last one, and the upper triangle copied from the lower one once
// all are done. That is m²/2 + 64·m kernel values (products, and exponentials for rbf) instead of
// m²; every value is computed as the full matrix's, so the fit does not change.
const symmetricGramRows = 128

// gramCancellable writes the Gram matrix of X into K (m×m) a block of rows at a time, stopping
// with ErrCancelled when stop is set.
func gramCancellable(kern kernel.Kernel, K *mat.Dense, X xmat.Matrix, stop *cancel.Flag) error {
	m, _ := X.Dims()
	var norms []float64
	if kern.Kind == kernel.RBF {
		norms = X.SquaredNorms()
	}
	if X.Sparse == nil {
		for lo := 0; lo < m; lo += symmetricGramRows {
			if stop.Yield() {
				return ErrCancelled
			}
			hi := min(lo+symmetricGramRows, m)
			kern.GramX(K.Slice(lo, hi, 0, hi).(*mat.Dense), X.Slice(lo, hi), X.Slice(0, hi), norms[:min(len(norms), hi)])
		}
		mirrorLower(K.RawMatrix())
		return nil
	}
	if err := X.Sparse.CheckTranspose("X", "the kernel's Gram matrix"); err != nil {
		return err
	}
	X = X.WithTranspose()
	for lo := 0; lo < m; lo += gramRows {
		if stop.Yield() {
			return ErrCancelled
		}
		hi := min(lo+gramRows, m)
		kern.GramX(K.Slice(lo, hi, 0, m).(*mat.Dense), X.Slice(lo, hi), X, norms)
	}
	return nil
}

// mirrorLower copies the lower triangle of the square a onto its upper one, in tiles that keep
// the column reads in cache.
func mirrorLower(a blas64.General) {
	const tile = 64
	m, st := a.Rows, a.Stride
	tiles := (m + tile - 1) / tile
	parallel.For(tiles, 1, func(lo, hi int) {
		for ti := lo; ti < hi; ti++ {
			i0, i1 := ti*tile, min(m, (ti+1)*tile)
			for j0 := i0; j0 < m; j0 += tile {
				j1 := min(m, j0+tile)
				for i := i0; i < i1; i++ {
					row := a.Data[i*st:]
					for j := max(j0, i+1); j < j1; j++ {
						row[j] = a.Data[j*st+i]
					}
				}
			}
		}
	})
}
