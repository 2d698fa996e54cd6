package ridge

import (
	"fmt"
	"math"
	"sync"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Reference measures (docs/design.md §2b). The loss of §2 is the expected Taylor loss over
// structures z drawn from a reference measure μ, E_μ[a + a²/2] with a = f(x, z) − f(x, y); only
// μ's mean p and covariance S enter J, so any measure with known p and S gives an objective of the
// same form, solved by the same code. The thesis' μ is uniform on Y, whose p and S the spaces
// count in closed form. The uniform measure over rooted subtrees, say, is dominated by huge trees
// that no example resembles, and whitening by its S says little about the structures that occur;
// the empirical measure of the training structures (weighted by the sample weights) is available
// for every space, and mixtures of the two interpolate. The product reference replaces E by the
// space's measure with E's mean (space.MarginalMeasure), which keeps the training marginals and
// drops their correlations. For μ = (1 − w)·U + w·E:
//
//	p = (1 − w) p_U + w p_E,   E_μ[ψψᵀ] = (1 − w)(S_U + p_U p_Uᵀ) + w E_E[ψψᵀ],   S = E_μ[ψψᵀ] − p pᵀ.
//
// The empirical moments are sums over examples, so partial_fit's statistics hold them (stats.go,
// the column of the constant feature) and a continued fit stays exactly the fit on all chunks.

// reference is the mean p and covariance S of a reference measure other than the uniform one,
// with the rank of S (which caps the marginal estimates' scale, marginals.go).
type reference struct {
	mean []float64
	cov  *mat.SymDense
	full *mat.Dense // cov with both triangles, for the products of mulS
	rank int
	// op applies cov from the sparse training structures (empirical references of a fit; nil:
	// the dense products of full are cheaper, or the moments came from partial_fit's statistics).
	op *empiricalOperator
	// pinned are the coordinates the measure holds at an end of their range (pins.go), found
	// once, on the first prediction.
	pinOnce sync.Once
	pinned  []space.Pin
	// weight is w of (1 − w)·U + w·D, the data-driven part's share, which the tilted marginal
	// estimate (tilt.go) reads with one of the two fields after it.
	weight float64
	// tilt holds the training structures of an empirical reference D; nil for the product
	// reference and for moments merged across partitions.
	tilt *empiricalTilt
	// productMean is the mean of the product reference D, the space's measure with these
	// marginals (space.MarginalMeasure); nil for the empirical reference.
	productMean []float64
}

// newReference completes a reference from its mean, covariance and rank.
func newReference(mean []float64, cov *mat.SymDense, rank int) *reference {
	return &reference{mean: mean, cov: cov, full: mat.DenseCopyOf(cov), rank: rank}
}

// psiMoments are the weighted moments of the training structures: Σs, Σ s ψ and Σ s ψψᵀ.
type psiMoments struct {
	sum    float64
	first  []float64
	second *mat.SymDense
}

// momentsOf sums the moments of the structures of p (ψ_i = δ_i + p.Mean) with its weights.
func momentsOf(p *Problem) psiMoments {
	m, d := p.dims()
	mo := psiMoments{first: make([]float64, d), second: mat.NewSymDense(d, nil)}
	var pairs float64 // Σ_i nnz(ψ_i)²/2, the sparse sum's work
	for i := 0; i < m; i++ {
		z := float64(p.psiNonzeros(i))
		pairs += z * (z + 1) / 2
	}
	if pairs > float64(m)*float64(d)*float64(d)/2/denseMomentsShare {
		denseMoments(p, &mo)
		return mo
	}
	psi := make([]float64, d)
	nz := make([]int, 0, d)
	raw := mo.second.RawSymmetric()
	for i := 0; i < m; i++ {
		s := p.Weight[i]
		if s == 0 {
			continue
		}
		mo.sum += s
		nz = nz[:0]
		for a, v := range p.Delta.RawRowView(i) {
			if psi[a] = v + p.Mean[a]; psi[a] != 0 {
				nz = append(nz, a)
				mo.first[a] += s * psi[a]
			}
		}
		for u, a := range nz { // ψ is sparse in most spaces: O(nnz²) per example
			sa := s * psi[a]
			for _, b := range nz[u:] {
				raw.Data[a*raw.Stride+b] += sa * psi[b]
			}
		}
	}
	return mo
}

// denseMomentsShare sets where momentsOf sums Σ s ψψᵀ by blocked matrix products instead of over
// the pairs of non-zero coordinates: when those pairs are more than 1/denseMomentsShare of the
// dense product's m·d²/2. The products run about ten times faster per multiply-add (2,000
// multi-label targets with half of 2,000 labels on: 1.6 s of scalar updates).
const denseMomentsShare = 16

// denseMoments adds the moments of the structures of p to mo through Ψ_bᵀ diag(s) Ψ_b, Ψ_b a block
// of rows ψ_i, the upper triangle only.
func denseMoments(p *Problem, mo *psiMoments) {
	m, d := p.dims()
	const block = 128
	rows := min(m, block)
	raw := mo.second.RawSymmetric()
	second := blas64.General{Rows: d, Cols: d, Stride: raw.Stride, Data: raw.Data}
	psi, spsi := mat.NewDense(rows, d, nil), mat.NewDense(rows, d, nil)
	for lo := 0; lo < m; lo += block {
		hi := min(lo+block, m)
		for i := lo; i < hi; i++ {
			s := p.Weight[i]
			mo.sum += s
			row, srow := psi.RawRowView(i-lo), spsi.RawRowView(i-lo)
			for a, v := range p.Delta.RawRowView(i) {
				row[a] = v + p.Mean[a]
				srow[a] = s * row[a]
				mo.first[a] += srow[a]
			}
		}
		n := hi - lo
		gemm.MulTNUpperAdd(second, psi.Slice(0, n, 0, d).(*mat.Dense).RawMatrix(),
			spsi.Slice(0, n, 0, d).(*mat.Dense).RawMatrix())
	}
}

// productMeasure is sp's product measure (space.MarginalMeasure), or why it has none.
func productMeasure(sp space.Space) (space.MarginalMeasure, error) {
	mm, ok := sp.(space.MarginalMeasure)
	if !ok {
		return nil, fmt.Errorf("reference=\"product\" is defined for the multilabel, multiclass, hierarchy_paths and subtrees spaces, not %s: "+
			"use reference=\"empirical\"", sp.Kind())
	}
	return mm, nil
}

// mixtureReference returns the reference (1 − w)·uniform + w·D from the uniform mean pu and
// covariance Su and the empirical moments of the training structures: D is those structures
// (Empirical) or the space's measure with their mean (Product, space.MarginalMeasure).
func mixtureReference(sp space.Space, kind Reference, pu []float64, Su *mat.SymDense, mo psiMoments, w float64) (*reference, error) {
	if !(mo.sum > 0) {
		return nil, fmt.Errorf("empirical_weight: the training structures have zero total weight")
	}
	d := len(pu)
	pd := make([]float64, d)
	for a := range pd {
		pd[a] = mo.first[a] / mo.sum
	}
	// second holds E_D[ψψᵀ] in its upper triangle.
	second := mat.NewSymDense(d, nil)
	switch kind {
	case Empirical:
		// Divided, not scaled by 1/Σs: weights summing to less than 1/MaxFloat64 (sample weights
		// of 5e-324) made the reciprocal +Inf and the covariance NaN.
		src, dst := mo.second.RawSymmetric(), second.RawSymmetric()
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				dst.Data[a*dst.Stride+b] = src.Data[a*src.Stride+b] / mo.sum
			}
		}
	case Product:
		mm, err := productMeasure(sp)
		if err != nil {
			return nil, err
		}
		mm.MarginalCovariance(pd, second)
		for a := 0; a < d; a++ {
			for b := a; b < d; b++ {
				second.SetSym(a, b, second.At(a, b)+pd[a]*pd[b])
			}
		}
	default:
		return nil, fmt.Errorf("unknown reference measure %d", int(kind))
	}
	mean, cov := make([]float64, d), mat.NewSymDense(d, nil)
	for a := range pu {
		mean[a] = (1-w)*pu[a] + w*pd[a]
	}
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			e := w * second.At(a, b)
			if w < 1 {
				e += (1 - w) * (Su.At(a, b) + pu[a]*pu[b])
			}
			cov.SetSym(a, b, e-mean[a]*mean[b])
		}
	}
	ref := newReference(mean, cov, 0)
	ref.weight = w
	if kind == Product {
		ref.productMean = pd
	}
	return ref, nil
}

// setRank sets the rank of the reference's covariance: from the m×m Gram matrix of its training
// structures when the reference is theirs alone (w = 1, op not nil) and they are fewer than d
// (the same non-zero eigenvalues; gasch2_GO with every term: 1,636 structures of d = 3,698, where
// the d×d eigenvalues took 32 s); d when the uniform part alone makes S definite
// (definiteMixture); otherwise from S's eigenvalues.
func (r *reference) setRank(sp space.Space, op *empiricalOperator, w float64) {
	d := r.cov.SymmetricDim()
	switch {
	case op != nil && w == 1 && len(op.wt) < d:
		r.rank = symRank(op.gram())
	case definiteMixture(sp, r.cov, w):
		r.rank = d
	default:
		r.rank = symRank(r.cov)
	}
}

// definiteMixture reports whether the covariance S of a mixture with weight w < 1 on the data has
// every eigenvalue above symRank's threshold, 1e-10 of its largest, from the uniform part alone:
//
//	S = (1 − w) S_U + w S_D + w(1 − w)(p_U − p_D)(p_U − p_D)ᵀ ⪰ (1 − w) S_U,
//
// so S's smallest eigenvalue is at least (1 − w) times S_U's, which the spaces with a closed-form
// spectrum know, and its largest at most its trace. The eigendecomposition this saves is O(d³):
// 0.5 s of a 0.6 s fit on 1,000 labels, and 8× that on 2,000.
func definiteMixture(sp space.Space, S *mat.SymDense, w float64) bool {
	if !(w < 1) {
		return false
	}
	spec, ok := space.SpectralOf(sp.Covariance())
	if !ok {
		return false
	}
	low := math.Inf(1)
	for _, e := range spec.Spectrum() {
		low = min(low, e.Value)
	}
	var trace float64
	for a := range S.SymmetricDim() {
		trace += S.At(a, a)
	}
	return (1-w)*low > 1e-10*trace
}

// symRank is the numerical rank of a positive semi-definite S: its eigenvalues above 1e-10 of
// the largest (the tolerance of the spaces' closed-form ranks).
func symRank(S *mat.SymDense) int {
	var es mat.EigenSym
	if !es.Factorize(S, false) {
		return S.SymmetricDim() // an upper bound, which only loosens the marginals' cap
	}
	vals := es.Values(nil)
	top := vals[len(vals)-1]
	r := 0
	for _, v := range vals {
		if v > 1e-10*math.Abs(top) {
			r++
		}
	}
	return r
}

// denseOperator is a covariance held as a dense symmetric matrix.
type denseOperator struct{ s *mat.SymDense }

func (o denseOperator) Dim() int            { return o.s.SymmetricDim() }
func (o denseOperator) At(i, j int) float64 { return o.s.At(i, j) }
func (o denseOperator) MulVec(dst, v []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(o.s, mat.NewVecDense(len(v), v))
}

// setReference makes ref the Problem's reference measure: its mean and covariance, and δ_i
// re-centred on the new mean.
func (p *Problem) setReference(ref *reference) {
	m, d := p.dims()
	for i := 0; i < m; i++ {
		row := p.Delta.RawRowView(i)
		for a := 0; a < d; a++ {
			row[a] += p.Mean[a] - ref.mean[a]
		}
	}
	p.Mean = ref.mean
	p.S = ref.cov
	p.Cov = denseOperator{ref.cov}
	if ref.op != nil {
		p.Cov = ref.op
	}
	p.ref = ref
}

// uniformReference returns the uniform measure's mean and dense covariance of sp (d ≤ MaxDim);
// zeros for an uncounted space, which only ever takes them with weight 0 (checkCounts). The
// covariance looks at stop before every row (a DAG's paths take seconds, probe CW).
func uniformReference(sp space.Space, stop *cancel.Flag) ([]float64, *mat.SymDense, error) {
	d := sp.Dim()
	pu := make([]float64, d)
	if space.Counts(sp) != nil {
		return pu, mat.NewSymDense(d, nil), nil
	}
	sp.Mean(pu)
	S, err := space.DenseUntil(sp.Covariance(), stop)
	return pu, S, err
}

// checkCounts refuses a reference measure that needs the uniform measure of a space without one:
// such spaces take the training structures' measure alone (empirical_weight = 1, "empirical").
func checkCounts(sp space.Space, opt *Options) error {
	err := space.Counts(sp)
	if err == nil || (opt.EmpiricalWeight == 1 && opt.Reference == Empirical) {
		return nil
	}
	return fmt.Errorf("%w; got empirical_weight=%v, reference=%q", err, opt.EmpiricalWeight, opt.Reference.String())
}

// useReference replaces the uniform reference measure of p (built by newProblem) by the mixture
// with weight w on the data-driven measure kind of its own training structures; w = 0 keeps the
// uniform one.
func (p *Problem) useReference(sp space.Space, kind Reference, w float64) error {
	if w == 0 {
		return nil
	}
	if p.S == nil {
		err := fmt.Errorf("empirical_weight > 0 holds the reference covariance densely: the %s space's dimension %d is above %d",
			sp.Kind(), sp.Dim(), denseMaxDim)
		if _, uncounted := sp.(space.Uncounted); uncounted {
			// no other reference exists for it: say what shrinks the space (probe AJ, gasch2_GO's 4,132 terms)
			err = fmt.Errorf("%w; this space has no uniform measure to fit without it: keep the nodes the training "+
				"structures hold (a node set closed under parents, so its parents restricted to it form a smaller DAG)", err)
		}
		return err
	}
	ref, err := mixtureReference(sp, kind, p.Mean, p.S, momentsOf(p), w)
	if err != nil {
		return err
	}
	if kind == Empirical {
		ref.op = newEmpiricalOperator(p, ref, w) // from ψ_i = δ_i + p.Mean, before the re-centring
		if ref.tilt, err = tiltOf(p); err != nil {
			return err
		}
	}
	ref.setRank(sp, ref.op, w)
	p.setReference(ref)
	return nil
}
