package ridge

import (
	"math"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// nullDrop removes from every row of a k×d matrix (coefficients, or a residual) its components
// along the output directions u where J has no curvature from the data: Su = 0 and δ_iᵀu = 0 for
// every weighted example, so that the average curvature M̄ = S + Σ s_i δ_iδ_iᵀ/Σ s_i vanishes
// along u (span(1) for multiclass and k-subsets, whose ψ sums to a constant; the potentials of
// directed cycles; a coordinate the reference measure holds constant).
//
// Along such a u, J depends on W only through the penalty α‖W‖² (none on the intercept's row),
// and B = X̃ᵀΔ has no component: the optimum, and the minimum-norm optimum for the intercept,
// has none either, which the exact solver and CG from zero in exact arithmetic give. The
// preconditioners invert H there as 2α (they keep the intercept penalised too, which keeps their
// blocks invertible), so they scale the rounding error of the residual along u by 1/(2α) where
// every other direction gets about 1/(M_c·μ_j), the inverse of the data's curvature. With the
// data's curvature far above α (α = 1e-24 on unit features, or features ×1e12 at α = 1), that
// amplified rounding filled the search directions: CG on multiclass stopped after 1–4 iterations
// at a relative gradient above 1, with coefficients along span(1) of 1e15 and a negative J
// (probe AA); at milder ratios it let the intercept wander along u (multiclass at α = 1e-9 on
// sparse X: every class score shifted by 4, J unchanged to 15 digits).
type nullDrop func(V *mat.Dense)

// nullSpaceOf returns the nullDrop of p's null directions, read from the null eigenspaces of a
// spectral S, otherwise from the coordinates where M̄'s diagonal vanishes, by the criterion the
// preconditioners use (nullRelTol); nil when there are none.
func nullSpaceOf(p *Problem) nullDrop {
	if sp, ok := space.SpectralOf(p.Cov); ok {
		es := sp.Spectrum()
		var top float64
		for _, e := range es {
			top = math.Max(top, e.Value)
		}
		small := func(c int) bool { return es[c].Value <= nullRelTol*top }
		var null []int
		for c, tau := range spectralTau(p, sp, small) { // M_c = σ_c + τ_c, as newSpectralPrecond has it
			if small(c) && math.Max(0, es[c].Value)+tau <= nullRelTol*top {
				null = append(null, c)
			}
		}
		if len(null) == 0 {
			return nil
		}
		remove := space.RemoveEigenspaces(sp, null)
		return func(V *mat.Dense) {
			k, _ := V.Dims()
			for j := 0; j < k; j++ {
				remove(V.RawRowView(j))
			}
		}
	}
	return nullDiagDrop(p.curvatureDiag())
}

// nullDiagDrop is nullSpaceOf for a curvature known by its diagonal (a positive semi-definite M̄
// whose diagonal entry vanishes vanishes on that row and column): it zeroes those columns.
func nullDiagDrop(diag []float64) nullDrop {
	null := vanishing(diag)
	if len(null) == 0 {
		return nil
	}
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		for j := 0; j < k; j++ {
			row := V.RawRowView(j)
			for _, a := range null {
				row[a] = 0
			}
		}
	}
}

// nullEigenDrop is nullSpaceOf for the curvature M̄ = Q diag(nu) Qᵀ (Q's columns orthonormal):
// the components along the eigenvectors whose eigenvalue is at most nullRelTol times the largest,
// V − (V Q₀) Q₀ᵀ in two products.
func nullEigenDrop(q *mat.Dense, nu []float64) nullDrop {
	null := vanishing(nu)
	if len(null) == 0 {
		return nil
	}
	d, _ := q.Dims()
	q0 := mat.NewDense(d, len(null), nil)
	for i, b := range null {
		q0.SetCol(i, mat.Col(nil, b, q))
	}
	q0t := mat.DenseCopyOf(q0.T())
	var along *mat.Dense // k × len(null), allocated on first use
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		if along == nil || along.RawMatrix().Rows != k {
			along = mat.NewDense(k, len(null), nil)
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

// vanishing returns the indices of the curvatures at or below nullRelTol times the largest.
func vanishing(values []float64) []int {
	top := floats.Max(values)
	var null []int
	for i, v := range values {
		if v <= nullRelTol*top {
			null = append(null, i)
		}
	}
	return null
}

// nullSpacePrecond applies a preconditioner and then removes the null directions (nullDrop) from
// every row of its result: the pseudo-inverse there, in place of the preconditioner's 1/(2α), so
// that CG's iterates keep the components along them they started with, which conjugateGradients
// sets to zero, the optimum's.
type nullSpacePrecond struct {
	linearPrecond
	drop nullDrop
}

func (pc nullSpacePrecond) apply(dst, R *mat.Dense) {
	pc.linearPrecond.apply(dst, R)
	pc.drop(dst)
}

// withNullSpace wraps pc in a nullSpacePrecond where J has null directions (nullSpaceOf).
func withNullSpace(pc linearPrecond, p *Problem) linearPrecond {
	if _, done := pc.(nullSpacePrecond); done {
		return pc
	}
	return wrapNullSpace(pc, nullSpaceOf(p))
}

// wrapNullSpace is pc in a nullSpacePrecond with drop, or pc when drop is nil.
func wrapNullSpace(pc linearPrecond, drop nullDrop) linearPrecond {
	if drop == nil {
		return pc
	}
	return nullSpacePrecond{pc, drop}
}
