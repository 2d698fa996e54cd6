package prob

import (
	"math"

	"github.com/combpred/combpred/core/xmat"
)

// rowDigest returns a 64-bit digest of the values of row i of X: equal for rows of equal values,
// dense or sparse (only nonzero entries enter, −0 counts as 0), and different for different rows
// but with probability about 2⁻⁶⁴. The sampled estimates of a row are seeded by it, so that
// they are a function of the row alone: not of the other rows queried with it, nor of its place
// among them (a row seeded by its index got other samples alone than in a batch, and the blocks
// of a distributed X needed to be told where they began).
func rowDigest(X xmat.Rows, i int) uint64 {
	var h uint64
	if X.Sparse != nil {
		var hs uint64 // captured by the callback, so on the heap: the dense rows keep h off it
		X.Sparse.RowEntries(i, func(col int, v float64) { hs += entryDigest(col, v) })
		h = hs
	} else {
		for j, v := range X.Dense[i*X.N : (i+1)*X.N] {
			h += entryDigest(j, v)
		}
	}
	return splitmix64(h ^ uint64(X.N))
}

// entryDigest is the digest of entry (col, v) of a row: 0 for a zero, whose absence from a sparse
// row is its presence in a dense one.
func entryDigest(col int, v float64) uint64 {
	if v == 0 {
		return 0
	}
	return splitmix64(splitmix64(uint64(col)) ^ math.Float64bits(v))
}
