package prob

import (
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// constantDirections returns a function that removes from a vector of sp.Dim() values its
// components along the directions v for which ⟨v, ψ(y)⟩ is the same for every structure y — the
// kernel of the uniform covariance S of ψ, which has full support (span(1) for multiclass and
// k-subsets, whose ψ sums to a constant; the potentials of directed cycles) — or nil when S is not
// known in closed form (space.SpectralOf) or has no kernel. Adding such a v to a row of W adds the
// same number to the scores of every structure, so that p(y|x) does not change.
//
// The minimum-norm optimum, which L-BFGS from zero reaches (its gradients lie in the range of S),
// has no component there; Adam does not stay there: its steps divide each coordinate by its own
// running scale, which turns gradients orthogonal to the kernel into steps along it (a sampled
// fit on DirectedCycles(5) left 0.09 of its intercept there, the decision function 0.06 from the
// exact fit's; probe X). Penalised rows also lose α‖·‖² by the projection.
func constantDirections(sp space.Space) func(row []float64) {
	op, ok := space.SpectralOf(sp.Covariance())
	if !ok {
		return nil
	}
	null := space.NullEigenspaces(op)
	if len(null) == 0 {
		return nil
	}
	return space.RemoveEigenspaces(op, null)
}

// constantsAreCoordinates reports whether every direction along which ψ is constant is a
// coordinate's (a subtree's root, the root of HierarchyPaths over all nodes): the uniform
// covariance S then has as many zero diagonal entries as its rank falls short of d
// (space.CovRank), and a diagonal scaling of a gradient, zero along those coordinates, stays zero
// there.
func constantsAreCoordinates(sp space.Space) bool {
	d, cov := sp.Dim(), sp.Covariance()
	var top float64
	for a := 0; a < d; a++ {
		top = max(top, cov.At(a, a))
	}
	zeros := 0
	for a := 0; a < d; a++ {
		if cov.At(a, a) <= 1e-12*top {
			zeros++
		}
	}
	return space.CovRank(sp)+zeros >= d
}

// dropConstantDirections removes from every row of W its components along sp's constant
// directions (constantDirections).
func dropConstantDirections(sp space.Space, W *mat.Dense) {
	drop := constantDirections(sp)
	if drop == nil {
		return
	}
	rows, d := W.Dims()
	for i := 0; i < rows; i++ {
		drop(W.RawRowView(i)[:d])
	}
}
