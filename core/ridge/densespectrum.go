package ridge

import (
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// denseSpectrum is a held covariance S (d×d, a reference measure's without a closed-form
// spectrum) as a space.Spectral, for the preconditioners that invert 2αE⊗I + G⊗S eigenspace by
// eigenspace (dualPrecond). Its eigenspaces are S's eigenvectors, each alone, except that with
// merged > 1 the merged smallest eigenvalues share one eigenspace at their mean: an approximation
// of S, which is all a preconditioner needs, that bounds the eigenspaces (each costs an m×m
// inverse in dualPrecond) while keeping S's eigenvectors and its largest eigenvalues.
type denseSpectrum struct {
	s      *mat.SymDense
	qt     *mat.Dense // eigenvectors as rows, ascending eigenvalues
	values []float64  // the eigenspaces' values: the merged mean first
	merged int        // eigenvectors 0 … merged−1 form eigenspace 0
}

// newDenseSpectrum eigendecomposes S (d×d) into at most spaces eigenspaces (at least one).
func newDenseSpectrum(S *mat.SymDense, spaces int) (*denseSpectrum, bool) {
	var es mat.EigenSym
	if !es.Factorize(S, true) {
		return nil, false
	}
	var q mat.Dense
	es.VectorsTo(&q)
	qt := mat.DenseCopyOf(q.T())
	values, merged := mergeSmallest(es.Values(nil), spaces)
	return &denseSpectrum{s: S, qt: qt, values: values, merged: merged}, true
}

// Dim is d.
func (o *denseSpectrum) Dim() int { return o.s.SymmetricDim() }

// MulVec writes S v into dst (S itself, not the merged approximation).
func (o *denseSpectrum) MulVec(dst, v []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(o.s, mat.NewVecDense(len(v), v))
}

// At is S[i, j].
func (o *denseSpectrum) At(i, j int) float64 { return o.s.At(i, j) }

// Spectrum returns the eigenspaces: the merged one first.
func (o *denseSpectrum) Spectrum() []space.Eigenspace {
	out := make([]space.Eigenspace, len(o.values))
	for c, v := range o.values {
		out[c] = space.Eigenspace{Value: v, Dim: 1}
	}
	out[0].Dim = o.merged
	return out
}

// Project writes P_c v into dst; the merged eigenspace as v minus the projections on the others.
func (o *denseSpectrum) Project(c int, dst, v []float64) {
	if c > 0 {
		o.column(o.merged-1+c, dst, v, false)
		return
	}
	if o.merged == 1 {
		o.column(0, dst, v, false)
		return
	}
	copy(dst, v)
	d := len(v)
	for b := o.merged; b < d; b++ {
		o.column(b, dst, v, true)
	}
}

// column writes q_b q_bᵀ v into dst, or subtracts it from dst.
func (o *denseSpectrum) column(b int, dst, v []float64, subtract bool) {
	q := o.qt.RawRowView(b)
	s := floats.Dot(q, v)
	if subtract {
		floats.AddScaled(dst, -s, q)
		return
	}
	floats.ScaleTo(dst, s, q)
}
