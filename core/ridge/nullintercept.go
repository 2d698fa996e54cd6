package ridge

import (
	"math"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// interceptNullSpace returns a function that removes from the intercept's row of W (d values) its
// components along the directions u where J does not depend on the intercept at all: Su = 0 and
// δ_iᵀu = 0 for every weighted example, so that the average curvature M̄ = S + Σ s_i δ_iδ_iᵀ/Σ s_i
// vanishes along u (span(1) for multiclass and k-subsets, whose ψ sums to a constant; the
// potentials of directed cycles; a coordinate the reference measure holds constant). It returns
// nil when it finds none: it reads the null eigenspaces of a spectral S, otherwise the coordinates
// where M̄'s diagonal vanishes, by the criterion the preconditioners use (nullRelTol).
//
// The preconditioners leave the intercept penalised by 2α on those directions, which keeps their
// blocks invertible, so that they scale the rounding error of the residual there by 1/(2α); with
// no curvature to pull it back, CG let the intercept wander along them (multiclass at α = 1e-9: the
// decision function shifted by 4 in every class on sparse X, the objective unchanged to 15 digits).
// The minimum-norm optimum, which the exact solver and CG from zero in exact arithmetic give, has
// no component there.
func interceptNullSpace(p *Problem) func(row []float64) {
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
		return space.RemoveEigenspaces(sp, null)
	}
	return nullDiagDrop(p.curvatureDiag())
}

// nullDiagDrop is interceptNullSpace for a curvature known by its diagonal (a positive
// semi-definite M̄ whose diagonal entry vanishes vanishes on that row and column).
func nullDiagDrop(diag []float64) func(row []float64) {
	null := vanishing(diag)
	if len(null) == 0 {
		return nil
	}
	return func(r []float64) {
		for _, a := range null {
			r[a] = 0
		}
	}
}

// nullEigenDrop is interceptNullSpace for the curvature M̄ = Q diag(nu) Qᵀ (Q's columns
// orthonormal): the components along the eigenvectors whose eigenvalue is at most nullRelTol
// times the largest.
func nullEigenDrop(q *mat.Dense, nu []float64) func(row []float64) {
	null := vanishing(nu)
	if len(null) == 0 {
		return nil
	}
	vecs := make([][]float64, len(null))
	for i, b := range null {
		vecs[i] = mat.Col(nil, b, q)
	}
	return func(r []float64) {
		for _, v := range vecs {
			floats.AddScaled(r, -floats.Dot(v, r), v)
		}
	}
}

// vanishing returns the indices of the curvatures at or below nullRelTol times the largest.
func vanishing(values []float64) []int { return indicesAtMost(values, nullRelTol*floats.Max(values)) }

// nullInterceptPrecond applies a preconditioner and then removes from the intercept's row (the
// last) of its result the components interceptNullSpace finds: the pseudo-inverse on the
// directions where H vanishes, in place of the preconditioner's 1/(2α).
type nullInterceptPrecond struct {
	linearPrecond
	drop func(row []float64)
}

func (pc nullInterceptPrecond) apply(dst, R *mat.Dense) {
	pc.linearPrecond.apply(dst, R)
	k, _ := dst.Dims()
	pc.drop(dst.RawRowView(k - 1))
}

// withNullIntercept wraps pc in a nullInterceptPrecond where the model has an intercept and J has
// directions without curvature along it.
func withNullIntercept(pc linearPrecond, p *Problem, intercept bool) linearPrecond {
	if _, done := pc.(nullInterceptPrecond); done || !intercept {
		return pc
	}
	return wrapNullIntercept(pc, interceptNullSpace(p))
}

// wrapNullIntercept is pc in a nullInterceptPrecond with drop, or pc when drop is nil.
func wrapNullIntercept(pc linearPrecond, drop func(row []float64)) linearPrecond {
	if drop == nil {
		return pc
	}
	return nullInterceptPrecond{pc, drop}
}
