package xmat

import (
	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/mat"
)

// ProductsDense writes the inner products ⟨a_i, b_j⟩ of the rows of the sparse a and the dense b
// into dst (rows of a × rows of b).
func ProductsDense(dst *mat.Dense, a *CSR, b *mat.Dense) {
	ra, _ := a.Dims()
	rb, _ := b.Dims()
	parallel.For(ra, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := dst.RawRowView(i)[:rb]
			for j := range out {
				out[j] = a.RowDot(i, b.RawRowView(j))
			}
		}
	})
}

// DenseProducts writes ⟨a_i, b_j⟩ for the dense a and the sparse b into dst (rows of a × rows
// of b): one sparse matrix-vector product per row of a.
func DenseProducts(dst *mat.Dense, a *mat.Dense, b *CSR) {
	ra, _ := a.Dims()
	rb, _ := b.Dims()
	for i := 0; i < ra; i++ {
		b.Mul(dst.RawRowView(i)[:rb], 1, a.RawRowView(i), 1, 1)
	}
}

// Products writes ⟨a_i, b_j⟩ for the sparse a and b into dst (rows of a × rows of b), through
// bᵀ: row i of dst is Σ_k a_ik·(row k of bᵀ), so that the work is the number of pairs of entries
// sharing a column, never rows × rows × columns.
func Products(dst *mat.Dense, a, b *CSR) {
	ProductsT(dst, a, b.Transpose())
}

// ProductsT is Products with bᵀ given (Transpose of b), for repeated products against one b.
func ProductsT(dst *mat.Dense, a, bt *CSR) {
	ra, _ := a.Dims()
	_, rb := bt.Dims()
	parallel.For(ra, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := dst.RawRowView(i)[:rb]
			clear(out)
			a.RowEntries(i, func(k int, v float64) { bt.RowAxpy(k, v, out) })
		}
	})
}
