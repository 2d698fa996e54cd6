package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/gemm"
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
//
// Eigenspace c ≥ 1 of a merged spectrum (first > 0) is the eigenvector in row c − 1 of qt, and
// the merged one is what the others leave: spectralPrecond applies such a spectrum in products
// with qt (applyLowRank).
type denseSpectrum struct {
	s      *mat.SymDense
	qt     *mat.Dense // eigenvectors first, first+1, … as rows, ascending eigenvalues
	first  int        // the first eigenvector held: merged, or 0 when nothing is merged
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
	values, merged := mergeSmallest(es.Values(nil), spaces)
	ds := &denseSpectrum{s: S, values: values, merged: merged}
	if merged > 1 {
		ds.first = merged
	}
	d := S.SymmetricDim()
	ds.qt = mat.DenseCopyOf(q.Slice(0, d, ds.first, d).T())
	return ds, true
}

// partialSpectrumPower is the number of products with S of newPartialSpectrum's subspace.
const partialSpectrumPower = 6

// newPartialSpectrum is newDenseSpectrum without the full eigendecomposition, for S too large for
// it (gonum's took 218 s at d = 3,698): the largest spaces − 1 eigenpairs by subspace iteration
// (a random start of spaces + 8 rows, partialSpectrumPower products with S on package gemm,
// orthonormalised by Cholesky QR, then Rayleigh–Ritz), fewer when S's rank is smaller, and the
// other eigenvalues at their mean, (tr S − Σ top)/(d − top). It reports false when S is not
// finite, when the budget refuses S's full copy (the products read both triangles), or when a
// small factorisation fails.
func newPartialSpectrum(S *mat.SymDense, spaces int, seed uint64) (*denseSpectrum, bool) {
	d := S.SymmetricDim()
	top := min(spaces-1, d-1)
	if top < 1 {
		return newDenseSpectrum(S, spaces)
	}
	if budget.Check(fmt.Sprintf("a full copy of the %d×%d covariance for its largest eigenvalues", d, d), budget.Floats(d, d)) != nil {
		return nil, false
	}
	full := mat.DenseCopyOf(S)
	b := min(top+9, d)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	Qt := mat.NewDense(b, d, nil) // the subspace's basis as rows
	for i := range Qt.RawMatrix().Data {
		Qt.RawMatrix().Data[i] = r.NormFloat64()
	}
	orthonormalRows(Qt)
	Yt := mat.NewDense(b, d, nil)
	for range partialSpectrumPower {
		gemm.MulPanel(Yt.RawMatrix(), Qt.RawMatrix(), full.RawMatrix()) // (S Qᵀ)ᵀ
		orthonormalRows(Yt)
		Qt, Yt = Yt, Qt
	}
	// Rows that orthonormalRows found dependent are zero: S's range is smaller than the subspace
	// (a reference measure of few training structures). Rayleigh–Ritz on the others keeps the Ritz
	// vectors orthonormal, which a zero row mixed into them would not; with none left (S = 0)
	// one zero row stands for an eigenspace of value 0.
	Qt = nonzeroRows(Qt)
	b, _ = Qt.Dims()
	top = min(top, b)
	Yt = mat.NewDense(b, d, nil)
	gemm.MulPanel(Yt.RawMatrix(), Qt.RawMatrix(), full.RawMatrix())
	T := mat.NewDense(b, b, nil) // Q S Qᵀ
	gemm.MulT(T.RawMatrix(), Yt.RawMatrix(), Qt.RawMatrix())
	Ts := mat.NewSymDense(b, nil)
	for i := 0; i < b; i++ {
		for j := i; j < b; j++ {
			Ts.SetSym(i, j, (T.At(i, j)+T.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(Ts, true) {
		return nil, false
	}
	var v mat.Dense
	es.VectorsTo(&v)
	ritz := es.Values(nil) // ascending
	for _, x := range ritz {
		if math.IsNaN(x) || math.IsInf(x, 0) { // a NaN or ±Inf off S's diagonal, which its trace misses
			return nil, false
		}
	}
	var trace float64
	for i := 0; i < d; i++ {
		trace += S.At(i, i)
	}
	if math.IsNaN(trace) || math.IsInf(trace, 0) {
		return nil, false
	}
	values := make([]float64, top+1)
	rest := trace
	for c := 1; c <= top; c++ {
		values[c] = math.Max(0, ritz[b-top-1+c])
		rest -= values[c]
	}
	merged := d - top
	values[0] = math.Max(0, rest/float64(merged))
	qt := mat.NewDense(top, d, nil) // the top Ritz vectors, ascending, as rows
	gemm.MulPanel(qt.RawMatrix(), mat.DenseCopyOf(v.Slice(0, b, b-top, b).T()).RawMatrix(), Qt.RawMatrix())
	return &denseSpectrum{s: S, qt: qt, first: merged, values: values, merged: merged}, true
}

// nonzeroRows returns the rows of a that are not all zero, as a new matrix (a's first row when
// all are).
func nonzeroRows(a *mat.Dense) *mat.Dense {
	rows, cols := a.Dims()
	var keep []int
	for i := 0; i < rows; i++ {
		if slices.ContainsFunc(a.RawRowView(i), func(v float64) bool { return v != 0 }) {
			keep = append(keep, i)
		}
	}
	if len(keep) == rows {
		return a
	}
	if len(keep) == 0 {
		keep = []int{0}
	}
	out := mat.NewDense(len(keep), cols, nil)
	for r, i := range keep {
		out.SetRow(r, a.RawRowView(i))
	}
	return out
}

// orthonormalRows makes the rows of a (b×d, b ≤ d) orthonormal in place, a row in the span of
// the ones before it (to rounding) becoming zero: by Cholesky QR twice (a = L·Q with L the
// Cholesky factor of a·aᵀ, in products on package gemm) where a·aᵀ is well conditioned, and by
// Gram–Schmidt otherwise.
//
// Cholesky QR loses orthogonality as κ(a)²·ε, so a factorisation that merely succeeds is not
// enough; and Gram–Schmidt must not normalise what rounding leaves of a dependent row. The
// subspace iteration of a rank-deficient S (the empirical measure of 5 training rankings: rank
// 4, 264 rows) makes all but 4 rows such rounding noise, which both had turned into unit rows
// far from orthogonal (Gᵢⱼ up to 1): Ritz values 7 times S's trace, an indefinite
// preconditioner, and CG stopped before its first step (TestPartialSpectrumLowRank).
func orthonormalRows(a *mat.Dense) {
	rows, cols := a.Dims()
	for range 2 {
		G := mat.NewDense(rows, rows, nil)
		gemm.MulT(G.RawMatrix(), a.RawMatrix(), a.RawMatrix())
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(rows, G.RawMatrix().Data)) || !(chol.Cond() <= cholQRMaxCond) {
			gramSchmidtRows(a)
			return
		}
		var L mat.TriDense
		chol.LTo(&L)
		var Linv mat.TriDense
		if err := Linv.InverseTri(&L); err != nil {
			gramSchmidtRows(a)
			return
		}
		out := mat.NewDense(rows, cols, nil)
		gemm.MulPanel(out.RawMatrix(), mat.DenseCopyOf(&Linv).RawMatrix(), a.RawMatrix())
		a.Copy(out)
	}
}

// cholQRMaxCond is the largest condition number of a·aᵀ (κ(a)²) at which orthonormalRows uses
// Cholesky QR: its first pass leaves the rows orthogonal to about κ(a)²·ε ≈ 1e-6, which the
// second brings to rounding.
const cholQRMaxCond = 1e10

// dependentRow is how small, relative to its norm before, what Gram–Schmidt leaves of a row must
// be for the row to count as dependent on the rows before it: its remainder is then rounding
// noise (about ε·√d of the norm: 1e-14 at d = 1000), mostly along those rows, and normalising it
// would make a row that is not orthogonal to them. A real direction of S below 1e-12 of its
// largest eigenvalue goes with it, into the merged rest, which a preconditioner does not miss (a
// review found 1e-8 dropping eigenvalues a preconditioner uses).
const dependentRow = 1e-12

// gramSchmidtRows is orthonormalRows by Gram–Schmidt: each row orthogonalised against the rows
// before it until the pass no longer shrinks it much (twice is enough, up to rounding, for a row
// that is not dependent), then normalised, or set to zero when dependent (dependentRow).
func gramSchmidtRows(a *mat.Dense) {
	rows, _ := a.Dims()
	for i := 0; i < rows; i++ {
		ri := a.RawRowView(i)
		n0 := floats.Norm(ri, 2)
		n := n0
		for range 3 {
			for j := 0; j < i; j++ {
				rj := a.RawRowView(j)
				floats.AddScaled(ri, -floats.Dot(ri, rj), rj)
			}
			before := n
			if n = floats.Norm(ri, 2); n > before/2 {
				break
			}
		}
		if !(n > dependentRow*n0) {
			clear(ri)
			continue
		}
		floats.Scale(1/n, ri)
	}
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
	q := o.qt.RawRowView(b - o.first)
	s := floats.Dot(q, v)
	if subtract {
		floats.AddScaled(dst, -s, q)
		return
	}
	floats.ScaleTo(dst, s, q)
}
