package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// decayingCovariance is a random d×d covariance whose eigenvalues decay geometrically (rate per
// eigenvalue), with its eigenvalues, descending.
func decayingCovariance(r *rand.Rand, d int, rate float64) (*mat.SymDense, []float64) {
	A := mat.NewDense(d, d, nil)
	for i := range A.RawMatrix().Data {
		A.RawMatrix().Data[i] = r.NormFloat64()
	}
	var qr mat.QR
	qr.Factorize(A)
	var Q mat.Dense
	qr.QTo(&Q)
	values := make([]float64, d)
	S := mat.NewSymDense(d, nil)
	for b := range values {
		values[b] = math.Pow(rate, float64(b))
		col := mat.Col(nil, b, &Q)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				S.SetSym(i, j, S.At(i, j)+values[b]*col[i]*col[j])
			}
		}
	}
	return S, values
}

// newPartialSpectrum finds the largest eigenvalues of S (to 1e-8 relative on a spectrum that
// decays by 0.6 per eigenvalue), puts the others at the mean the trace leaves them, and its
// eigenspaces' projections add up to the identity.
func TestPartialSpectrum(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	const d, spaces = 80, 10
	S, values := decayingCovariance(r, d, 0.6)
	ps, ok := newPartialSpectrum(S, spaces, 1)
	if !ok {
		t.Fatal("newPartialSpectrum failed")
	}
	es := ps.Spectrum()
	if len(es) != spaces || es[0].Dim != d-spaces+1 {
		t.Fatalf("eigenspaces %+v", es)
	}
	var rest float64
	for _, v := range values[spaces-1:] {
		rest += v
	}
	if got, want := es[0].Value, rest/float64(d-spaces+1); math.Abs(got-want) > 1e-12*math.Abs(want)+1e-15 {
		t.Errorf("merged value %v, want the mean of the others %v", got, want)
	}
	for c := 1; c < spaces; c++ {
		if got, want := es[c].Value, values[spaces-1-c]; math.Abs(got-want) > 1e-8*want {
			t.Errorf("eigenspace %d: value %v, want %v", c, got, want)
		}
	}
	v := make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	sum, part := make([]float64, d), make([]float64, d)
	for c := range es {
		ps.Project(c, part, v)
		floats.Add(sum, part)
	}
	floats.Sub(sum, v)
	if n := floats.Norm(sum, math.Inf(1)); n > 1e-12 {
		t.Errorf("the projections add up to the identity within %v", n)
	}
}

// A covariance of lower rank than the subspace gives its nonzero eigenvalues, held eigenvectors
// that are orthonormal, and a merged value of 0: for a Gaussian factor, and for the empirical
// measure of 5 training structures with ψ ∈ {−1, 1}^780 (rank 4), where the products' rows
// beyond the rank are rounding noise. Normalised as rows, that noise made Ritz vectors with
// Gram entries up to 17 and Ritz values 7 times S's trace, an indefinite preconditioner, and
// linear CG stopped before its first step (TestCGOnFewTrainingStructures).
func TestPartialSpectrumLowRank(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	gaussian := func(d, rank int) *mat.SymDense {
		F := mat.NewDense(rank, d, nil)
		for i := range F.RawMatrix().Data {
			F.RawMatrix().Data[i] = r.NormFloat64()
		}
		S := mat.NewSymDense(d, nil)
		S.SymOuterK(1, F.T())
		return S
	}
	signs := func(d, m int) *mat.SymDense { // the covariance of m random sign vectors
		psi := mat.NewDense(m, d, nil)
		for i := range psi.RawMatrix().Data {
			psi.RawMatrix().Data[i] = float64(2*r.IntN(2) - 1)
		}
		mean := make([]float64, d)
		for i := 0; i < m; i++ {
			floats.AddScaled(mean, 1/float64(m), psi.RawRowView(i))
		}
		S := mat.NewSymDense(d, nil)
		S.SymOuterK(1/float64(m), psi.T()) // E[ψψᵀ] − ppᵀ, as the reference measure sums it
		S.SymRankOne(S, -1, mat.NewVecDense(d, mean))
		return S
	}
	for _, tc := range []struct {
		name         string
		S            *mat.SymDense
		rank, spaces int
	}{
		{"gaussian", gaussian(60, 5), 5, 12},
		{"signs", signs(780, 5), 4, 256},
		{"zero", mat.NewSymDense(50, nil), 0, 12},
	} {
		d := tc.S.SymmetricDim()
		var full mat.EigenSym
		full.Factorize(tc.S, false)
		want := full.Values(nil)
		ps, ok := newPartialSpectrum(tc.S, tc.spaces, 2)
		if !ok {
			t.Fatalf("%s: newPartialSpectrum failed", tc.name)
		}
		es := ps.Spectrum()
		// The eigenspaces held beyond the rank, if any, have values at rounding.
		for c := len(es) - tc.rank; c < len(es); c++ {
			if got, w := es[c].Value, want[d-len(es)+c]; c < 1 || math.Abs(got-w) > 1e-8*w {
				t.Errorf("%s: eigenspace %d of %d: value %v, want %v", tc.name, c, len(es), got, w)
			}
		}
		var trace float64
		for i := 0; i < d; i++ {
			trace += tc.S.At(i, i)
		}
		for c := 0; c < len(es)-tc.rank; c++ {
			if math.Abs(es[c].Value) > 1e-10*trace {
				t.Errorf("%s: eigenspace %d: value %v, want 0", tc.name, c, es[c].Value)
			}
		}
		rows, _ := ps.qt.Dims()
		var G mat.Dense
		G.Mul(ps.qt, ps.qt.T())
		for i := 0; i < rows; i++ {
			for j := 0; j < rows; j++ {
				w := 0.0
				if i == j && tc.rank > 0 {
					w = 1
				}
				if e := math.Abs(G.At(i, j) - w); e > 1e-12 {
					t.Fatalf("%s: held eigenvectors %d and %d: Gram entry %v, want %v", tc.name, i, j, G.At(i, j), w)
				}
			}
		}
	}
}

// hiddenSpectral hides a denseSpectrum's type, so that spectralPrecond projects on it eigenspace by
// eigenspace instead of through products.
type hiddenSpectral struct{ space.Spectral }

// applyLowRank applies the same preconditioner as the projections eigenspace by eigenspace, with
// and without the intercept (unpenalised except where an eigenvalue vanishes).
func TestApplyLowRankEqualsProjections(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	const m, n, d = 60, 6, 40
	sp, err := space.New("multilabel", []int64{d})
	if err != nil {
		t.Fatal(err)
	}
	X, ys := synthetic(t, sp, m, n, 9)
	S, _ := decayingCovariance(r, d, 0.8)
	for _, intercept := range []bool{false, true} {
		p, err := NewProblem(sp, ys, m, weights(r, m), 0.3)
		if err != nil {
			t.Fatal(err)
		}
		des := design{X: mat.NewDense(m, n, X), intercept: intercept}
		ps, ok := newPartialSpectrum(S, 12, 3)
		if !ok {
			t.Fatal("newPartialSpectrum failed")
		}
		pc, err := newSpectralPrecond(p, des, des.gram(p.Weight), ps, false)
		if err != nil {
			t.Fatal(err)
		}
		if pc.inv == nil {
			t.Fatal("a low-rank spectrum should take the block inverses")
		}
		slow := *pc
		slow.op = hiddenSpectral{ps}
		k := des.cols()
		R := mat.NewDense(k, d, nil)
		for i := range R.RawMatrix().Data {
			R.RawMatrix().Data[i] = r.NormFloat64()
		}
		fast, want := mat.NewDense(k, d, nil), mat.NewDense(k, d, nil)
		pc.apply(fast, R)
		slow.apply(want, R)
		var diff mat.Dense
		diff.Sub(fast, want)
		if e := mat.Norm(&diff, math.Inf(1)) / mat.Norm(want, math.Inf(1)); e > 1e-12 {
			t.Errorf("intercept %v: products differ from projections by %v (relative)", intercept, e)
		}
	}
}

// Beyond kronMaxDim a reference's covariance is preconditioned through its partial spectrum: a
// multi-label fit of 700 labels under the empirical measure converges in a fraction of the
// iterations the diagonal preconditioner takes, to the same coefficients.
func TestPartialSpectrumPreconditions(t *testing.T) {
	if testing.Short() {
		t.Skip("two fits on 700 coordinates: seconds, a minute under the race detector")
	}
	sp, err := space.New("multilabel", []int64{kronMaxDim + 60})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 240, 5
	X, ys := synthetic(t, sp, m, n, 11)
	opt := baseOptions()
	opt.Alpha, opt.EmpiricalWeight, opt.Tol, opt.MaxIter, opt.Solver = 3, 1, 1e-12, 5000, CG
	auto, diag := fitPrecond(t, precondAuto, sp, X, m, n, ys, opt), fitPrecond(t, precondDiag, sp, X, m, n, ys, opt)
	if auto.Result.Iterations*3 > diag.Result.Iterations {
		t.Errorf("partial spectrum: %d iterations, diagonal %d", auto.Result.Iterations, diag.Result.Iterations)
	}
	if math.Abs(auto.Result.Objective-diag.Result.Objective) > 1e-12*math.Abs(diag.Result.Objective) {
		t.Errorf("objectives %v and %v", auto.Result.Objective, diag.Result.Objective)
	}
	var diff mat.Dense
	diff.Sub(auto.Coef, diag.Coef)
	for i := 0; i < n; i++ {
		if e := floats.Norm(diff.RawRowView(i), math.Inf(1)) / floats.Norm(diag.Coef.RawRowView(i), math.Inf(1)); e > 1e-7 {
			t.Errorf("feature %d: coefficients differ by %v (relative)", i, e)
		}
	}
	// The intercept is determined only on the range of S: 240 training structures span at most
	// 239 of the 700 directions, and J does not see the intercept along the others. The diagonal
	// preconditioner leaves a component there (1e-3 of the intercept's norm); along S's range the
	// two agree.
	d := sp.Dim()
	psi := mat.NewDense(m, d, nil)
	for i := 0; i < m; i++ {
		sp.Embed(ys[i*sp.Width():(i+1)*sp.Width()], psi.RawRowView(i))
	}
	mean := make([]float64, d)
	for i := 0; i < m; i++ {
		floats.Add(mean, psi.RawRowView(i))
	}
	floats.Scale(1/float64(m), mean)
	for i := 0; i < m; i++ {
		floats.Sub(psi.RawRowView(i), mean)
	}
	c := mat.NewVecDense(m, nil)
	c.MulVec(psi, mat.NewVecDense(d, diff.RawRowView(n))) // Ψ_c Δb: 0 exactly when Δb ⊥ range(S)
	if e := mat.Norm(c, math.Inf(1)) / (mat.Norm(psi, math.Inf(1)) * floats.Norm(diag.Coef.RawRowView(n), math.Inf(1))); e > 1e-7 {
		t.Errorf("intercepts differ by %v (relative) along the range of S", e)
	}
	// The partial spectrum's eigenvectors lie in S's range and the design is centred, so its
	// iterates never leave the range either: its intercept is the minimum-norm one, which the
	// Kronecker preconditioner gets by dropping M̄'s null eigenvectors explicitly.
	kron := fitPrecond(t, precondKron, sp, X, m, n, ys, opt)
	b, bk := auto.Coef.RawRowView(n), kron.Coef.RawRowView(n)
	if e := floats.Distance(b, bk, math.Inf(1)) / floats.Norm(bk, math.Inf(1)); e > 1e-7 {
		t.Errorf("intercepts of the partial spectrum and of the Kronecker preconditioner differ by %v (relative)", e)
	}
	t.Logf("iterations: partial spectrum %d, diagonal %d", auto.Result.Iterations, diag.Result.Iterations)
}

// A reference measure of few training structures on a space too large for kronPrecond (d = 780
// > kronMaxDim) is preconditioned on S's partial spectrum, whose rank is below its subspace: CG
// converges to the optimum that kronPrecond's CG finds. It stopped before its first step, at J(0),
// when the partial spectrum's rows beyond the rank were normalised rounding noise
// (TestPartialSpectrumLowRank).
func TestCGOnFewTrainingStructures(t *testing.T) {
	for _, name := range []string{"permutations", "dicycles", "ucycles"} {
		sp, err := space.New(name, []int64{40})
		if err != nil {
			t.Fatal(err)
		}
		const m, n = 5, 4
		X, ys := synthetic(t, sp, m, n, 11)
		opt := baseOptions()
		opt.EmpiricalWeight, opt.Solver = 1, CG
		auto, kron := fitPrecond(t, precondAuto, sp, X, m, n, ys, opt), fitPrecond(t, precondKron, sp, X, m, n, ys, opt)
		if !auto.Result.Converged || auto.Result.Iterations < 1 {
			t.Errorf("%s: CG stopped after %d iterations at a relative gradient of %v", name, auto.Result.Iterations, auto.Result.RelGrad)
		}
		if a, k := auto.Result.Objective, kron.Result.Objective; math.Abs(a-k) > 1e-9*k {
			t.Errorf("%s: objective %v, kronPrecond's CG %v", name, a, k)
		}
	}
}

// A covariance with a non-finite entry off its diagonal, which its trace does not see, is refused
// (a zeroed NaN row had let it through); a spread spectrum under one huge eigenvalue keeps its
// next eigenvalues (a threshold of 1e-8 for dependent rows had merged all but 2 of 255).
func TestPartialSpectrumEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(97, 98))
	S, _ := decayingCovariance(r, 300, 0.99)
	S.SetSym(3, 7, math.NaN())
	if _, ok := newPartialSpectrum(S, 64, 1); ok {
		t.Error("a NaN off the diagonal: newPartialSpectrum reported ok")
	}
	const d = kronMaxDim + 20
	S, _ = decayingCovariance(r, d, 0.99)
	v := make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64() / math.Sqrt(d)
	}
	S.SymRankOne(S, 1e9, mat.NewVecDense(d, v))
	var full mat.EigenSym
	full.Factorize(S, false)
	want := full.Values(nil)
	ps, ok := newPartialSpectrum(S, 256, 2)
	if !ok {
		t.Fatal("newPartialSpectrum failed")
	}
	es := ps.Spectrum()
	if len(es) != 256 {
		t.Fatalf("%d eigenspaces, want 256", len(es))
	}
	for c := len(es) - 10; c < len(es); c++ {
		if got, w := es[c].Value, want[d-len(es)+c]; math.Abs(got-w) > 1e-6*w {
			t.Errorf("eigenspace %d: value %v, want %v", c, got, w)
		}
	}
}
