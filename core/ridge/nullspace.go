package ridge

import (
	"math"
	"slices"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// J's null directions are the output directions u along which the average curvature
// M̄ = S + Σ s_i δ_iδ_iᵀ/Σ s_i vanishes to rounding, zeroRelTol times its largest eigenvalue:
// S u = 0 and δ_iᵀu = 0 for every weighted example (span(1) for multiclass and k-subsets, whose ψ
// sums to a constant; the potentials of directed cycles; a coordinate the reference measure holds
// constant). J depends on W along u only through the penalty α‖W‖² (none on the intercept's row)
// and B = X̃ᵀΔ has no component there, so the optimum has none (the minimum-norm one for the
// intercept). The preconditioners used to invert H there as 2α, which scaled CG's rounding by
// 1/(2α) where every other direction got about the inverse of the data's curvature: with α
// negligible against it (α = 1e-24 on unit features, or features ×1e12 at α = 1), multiclass CG
// stopped after 1–4 iterations at a relative gradient above 1, with coefficients of 1e15 along
// span(1) and a negative J (probe AA). They are now zero there, and remove those components from
// every row of their result (a nullDrop of exactly the subspace they zero), so that CG keeps the
// components its start had there, which conjugateGradients sets to zero.
//
// Only curvature at the level of rounding counts: a direction with a small but real curvature
// (a label the reference measure or the weights make rare) still carries a component of the
// optimum, large where the curvature is small, which CG must fit (a diff review found scores off
// by 0.9 when directions under 1e-10 of the largest curvature were zeroed).
const zeroRelTol = 1e-13

// nullDrop removes from every row of a k×d matrix (coefficients, or a residual) its components
// along a set of J's null directions.
type nullDrop func(V *mat.Dense)

// nullDropper is a preconditioner that is zero on some of J's null directions: nullDirections
// returns the nullDrop of exactly those (nil: none), which conjugateGradients applies to a warm
// start, since CG cannot move along them.
type nullDropper interface {
	nullDirections() nullDrop
}

// zeroSpaces returns the eigenspaces c of op (eigenvalues M_c, their largest top) that are J's
// null directions: M_c and the examples' whole curvature there, dim_c·τ_c = Σ s_i ‖P_c δ_i‖²/Σ s
// (which bounds it along every direction of the eigenspace, where τ_c is only its mean), both at
// most zeroRelTol·top.
func zeroSpaces(p *Problem, op space.Spectral, M []float64, top float64) []int {
	small := indicesAtMost(M, zeroRelTol*top)
	if len(small) == 0 {
		return nil
	}
	es := op.Spectrum()
	tau := spectralTau(p, op, func(c int) bool { return slices.Contains(small, c) })
	return slices.DeleteFunc(small, func(c int) bool { return tau[c]*float64(es[c].Dim) > zeroRelTol*top })
}

// eigenspacesDrop is the nullDrop of the eigenspaces cs of op.
func eigenspacesDrop(op space.Spectral, cs []int) nullDrop {
	if len(cs) == 0 {
		return nil
	}
	remove := space.RemoveEigenspaces(op, cs)
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		for j := 0; j < k; j++ {
			remove(V.RawRowView(j))
		}
	}
}

// coordinatesDrop is the nullDrop of the coordinate directions cs.
func coordinatesDrop(cs []int) nullDrop {
	if len(cs) == 0 {
		return nil
	}
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		for j := 0; j < k; j++ {
			row := V.RawRowView(j)
			for _, a := range cs {
				row[a] = 0
			}
		}
	}
}

// vectorsDrop is the nullDrop of the columns cs of q (orthonormal): V − (V Q₀) Q₀ᵀ in two products.
func vectorsDrop(q *mat.Dense, cs []int) nullDrop {
	if len(cs) == 0 {
		return nil
	}
	d, _ := q.Dims()
	q0 := mat.NewDense(d, len(cs), nil)
	for i, b := range cs {
		q0.SetCol(i, mat.Col(nil, b, q))
	}
	q0t := mat.DenseCopyOf(q0.T())
	var along *mat.Dense // k × len(cs), allocated on first use
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		if along == nil || along.RawMatrix().Rows != k {
			along = mat.NewDense(k, len(cs), nil)
		}
		gemm.MulPanel(along.RawMatrix(), V.RawMatrix(), q0.RawMatrix())
		for j := 0; j < k; j++ {
			row := V.RawRowView(j)
			for i, c := range along.RawRowView(j) {
				floats.AddScaled(row, -c, q0t.RawRowView(i))
			}
		}
	}
}

// zeroValues returns the indices of the curvatures values (M̄'s eigenvalues or diagonal, which
// include the examples' δδᵀ) at or below zeroRelTol times the largest.
func zeroValues(values []float64) []int {
	return indicesAtMost(values, zeroRelTol*math.Max(0, floats.Max(values)))
}

// indicesAtMost returns the indices of the values at or below bound, ascending.
func indicesAtMost(values []float64, bound float64) []int {
	var at []int
	for i, v := range values {
		if v <= bound {
			at = append(at, i)
		}
	}
	return at
}

// warmNullDrop returns the nullDrop of the preconditioner pc, looking through the intercept's
// wrapper (nullInterceptPrecond), or nil.
func warmNullDrop(pc linearPrecond) nullDrop {
	if w, ok := pc.(nullInterceptPrecond); ok {
		pc = w.linearPrecond
	}
	if nd, ok := pc.(nullDropper); ok {
		return nd.nullDirections()
	}
	return nil
}
