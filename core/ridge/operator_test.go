package ridge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// withDenseMaxDim runs f with Problems holding S densely only up to dimension dim, so that small
// spaces take the operator-only path of spaces with d > MaxDim.
func withDenseMaxDim(dim int, f func()) {
	old := denseMaxDim
	denseMaxDim = dim
	defer func() { denseMaxDim = old }()
	f()
}

// withPrecond runs f with the linear CG preconditioner forced to mode.
func withPrecond(mode precondMode, f func()) {
	old := linearPrecondMode
	linearPrecondMode = mode
	defer func() { linearPrecondMode = old }()
	f()
}

// fitPrecond is Fit with the linear CG preconditioner forced to mode, failing t on an error.
func fitPrecond(t testing.TB, mode precondMode, sp space.Space, X []float64, m, n int, ys []int64, opt Options) *Model {
	t.Helper()
	var md *Model
	withPrecond(mode, func() {
		var err error
		if md, err = Fit(sp, X, m, n, ys, nil, opt); err != nil {
			t.Fatal(err)
		}
	})
	return md
}

// operatorSpaces are the pair spaces, at sizes the exact solver handles, and two others, for the
// operator-path tests.
func operatorSpaces(t testing.TB) []space.Space {
	t.Helper()
	var out []space.Space
	for _, c := range []struct {
		kind string
		n    int64
	}{
		{"permutations", 4}, {"permutations", 7},
		{"tournaments", 5},
		{"dicycles", 5}, {"dicycles", 7},
		{"ucycles", 5}, {"ucycles", 7},
		{"cliques", 4}, {"cliques", 7},
		{"multiclass", 6}, // c₀I + c11ᵀ, singular on span(1)
		{"ordinal", 6},    // no closed-form spectrum: the diagonal fallback
	} {
		sp, err := space.New(c.kind, []int64{c.n})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// relGradAt is ‖∇J(W)‖ / ‖∇J(0)‖ and J(W) for the linear model.
func relGradAt(p *Problem, Xm *mat.Dense, intercept bool, W *mat.Dense) (j, rel float64) {
	k, d := W.Dims()
	g, g0 := mat.NewDense(k, d, nil), mat.NewDense(k, d, nil)
	j = p.LinearObjective(Xm, intercept, W, g)
	p.LinearObjective(Xm, intercept, mat.NewDense(k, d, nil), g0)
	return j, mat.Norm(g, 2) / mat.Norm(g0, 2)
}

// On the pair spaces, the operator-only path (S never dense, the spectral preconditioner, or the
// diagonal one, or none) reaches the optimum of the exact dense solver: same objective, same
// coefficients, vanishing gradient.
func TestOperatorPathMatchesExactSolver(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	modes := []struct {
		name string
		mode precondMode
	}{{"spectral", precondAuto}, {"spectral+mean", precondSpectralMean}, {"diagonal", precondDiag}, {"none", precondNone}}
	for _, sp := range operatorSpaces(t) {
		for _, intercept := range []bool{true, false} {
			name := fmt.Sprintf("%s%v/intercept=%v", sp.Kind(), sp.Params(), intercept)
			const m, n = 50, 4
			X, ys := synthetic(t, sp, m, n, uint64(sp.Dim()))
			w := weights(r, m)
			opt := baseOptions()
			opt.Intercept = intercept
			opt.Solver = Exact
			exact := mustFit(t, sp, X, m, n, ys, w, opt)
			pDense, err := NewProblem(sp, ys, m, w, opt.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			Xm := mat.NewDense(m, n, X)
			jExact, _ := relGradAt(pDense, Xm, intercept, exact.Coef)
			null, err := nullProjector(pDense.S)
			if err != nil {
				t.Fatal(err)
			}
			for _, md := range modes {
				for _, solver := range []Solver{CG, Auto} {
					withDenseMaxDim(0, func() {
						withPrecond(md.mode, func() {
							o := opt
							o.Solver = solver
							o.MaxIter = 5000
							got := mustFit(t, sp, X, m, n, ys, w, o)
							pOp, err := newProblem(sp, ys, m, w, o.Alpha, operatorOK, nil)
							if err != nil {
								t.Fatal(err)
							}
							if pOp.S != nil {
								t.Fatalf("%s: the problem holds S densely below the lowered limit", name)
							}
							j, rel := relGradAt(pDense, Xm, intercept, got.Coef)
							jOp, relOp := relGradAt(pOp, Xm, intercept, got.Coef)
							if !got.Result.Converged || rel > 1e-8 || relOp > 1e-8 {
								t.Errorf("%s %s/%v: relative gradient %.3g (operator: %.3g) after %d iterations, converged %v",
									name, md.name, solver, rel, relOp, got.Result.Iterations, got.Result.Converged)
							}
							if math.Abs(j-jExact) > 1e-8*math.Abs(jExact) || math.Abs(jOp-j) > 1e-10*math.Abs(j) ||
								math.Abs(got.Result.Objective-j) > 1e-8*math.Abs(j) {
								t.Errorf("%s %s/%v: J = %.15g (operator %.15g, reported %.15g), exact %.15g",
									name, md.name, solver, j, jOp, got.Result.Objective, jExact)
							}
							coef := got.Coef
							if md.mode == precondDiag && intercept {
								// The diagonal fallback does not keep the intercept's component
								// along ker S (where J is flat) at zero, unlike the exact solver's
								// minimum-norm choice: compare without it.
								coef = mat.DenseCopyOf(coef)
								row := mat.NewVecDense(sp.Dim(), coef.RawRowView(n))
								var along mat.VecDense
								along.MulVec(null, row)
								row.SubVec(row, &along)
							}
							if diff := relDiff(coef, exact.Coef); diff > 1e-6 {
								t.Errorf("%s %s/%v: coefficients differ from the exact solver's by %.3g (relative)", name, md.name, solver, diff)
							}
						})
					})
				}
			}
		}
	}
}

// Beyond the dense limit, every path that needs the dense S refuses with an error naming the way
// out; nothing panics.
func TestOperatorOnlyProblemRefusesDensePaths(t *testing.T) {
	sp, _ := space.NewPermutations(5)
	const m, n = 20, 3
	X, ys := synthetic(t, sp, m, n, 2)
	withDenseMaxDim(5, func() {
		cases := []struct {
			name string
			fit  func() error
		}{
			{"exact", func() error {
				o := baseOptions()
				o.Solver = Exact
				_, err := Fit(sp, X, m, n, ys, nil, o)
				return err
			}},
			{"sgd", func() error {
				o := baseOptions()
				o.Solver = SGD
				_, err := Fit(sp, X, m, n, ys, nil, o)
				return err
			}},
			{"rbf", func() error {
				o := baseOptions()
				o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
				_, err := Fit(sp, X, m, n, ys, nil, o)
				return err
			}},
			{"rbf sgd", func() error {
				o := baseOptions()
				o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
				o.Solver = SGD
				_, err := Fit(sp, X, m, n, ys, nil, o)
				return err
			}},
			{"nystrom exact", func() error {
				o := baseOptions()
				o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
				o.NComponents, o.Solver = 5, Exact
				_, err := Fit(sp, X, m, n, ys, nil, o)
				return err
			}},
			{"partial_fit", func() error {
				_, err := PartialFit(nil, sp, X, m, n, ys, nil, baseOptions())
				return err
			}},
			{"partial_fit sgd", func() error {
				o := baseOptions()
				o.Solver = SGD
				_, err := PartialFit(nil, sp, X, m, n, ys, nil, o)
				return err
			}},
			{"NewProblem", func() error {
				_, err := NewProblem(sp, ys, m, nil, 1)
				return err
			}},
		}
		for _, c := range cases {
			err := c.fit()
			if err == nil || !strings.Contains(err.Error(), "dimension 10 > 5") || !strings.Contains(err.Error(), `solver="cg"`) {
				t.Errorf("%s: error %v, want the dimension limit and solver=\"cg\" named", c.name, err)
			}
		}
		// The linear kernel and a Nyström map with CG (or auto) work.
		for _, o := range []Options{baseOptions(), func() Options {
			o := baseOptions()
			o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}
			o.NComponents = 8
			return o
		}()} {
			o.Tol = 1e-8
			md, err := Fit(sp, X, m, n, ys, nil, o)
			if err != nil || !md.Result.Converged {
				t.Errorf("%v kernel, n_components %d: %v", o.Kernel.Kind, o.NComponents, err)
			}
		}
	})
}

// The symmetrised D̄ correction of the spectral preconditioner (τ_k) is the projection of D̄ onto
// the span of the eigenprojectors: tr(P_k D̄) / dim_k, which the dense D̄ confirms.
func TestSpectralPrecondCorrection(t *testing.T) {
	for _, sp := range operatorSpaces(t) {
		const m, n = 30, 3
		X, ys := synthetic(t, sp, m, n, 5)
		w := weights(rand.New(rand.NewPCG(1, 2)), m)
		p, _ := NewProblem(sp, ys, m, w, 1)
		op, ok := space.SpectralOf(p.Cov)
		if !ok {
			continue
		}
		des := design{X: mat.NewDense(m, n, X), intercept: true}
		pc, err := newSpectralPrecond(p, des, des.gram(p.Weight), op, true)
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		dbar := mat.NewSymDense(d, nil)
		var total float64
		for i := 0; i < m; i++ {
			dbar.SymRankOne(dbar, w[i], mat.NewVecDense(d, p.Delta.RawRowView(i)))
			total += w[i]
		}
		dbar.ScaleSym(1/total, dbar)
		e, col := make([]float64, d), make([]float64, d)
		for c, es := range op.Spectrum() {
			var tr float64 // tr(P_c D̄) = Σ_j (P_c D̄)[j, j]
			for j := 0; j < d; j++ {
				clear(e)
				e[j] = 1
				op.Project(c, col, e)
				tr += mat.Dot(mat.NewVecDense(d, col), mat.NewVecDense(d, mat.Col(nil, j, dbar)))
			}
			want := math.Max(0, es.Value+tr/float64(es.Dim))
			if math.Abs(pc.m[c]-want) > 1e-12*math.Max(1, want) {
				t.Errorf("%s%v eigenspace %d: M = %v, want σ + tr(P D̄)/dim = %v", sp.Kind(), sp.Params(), c, pc.m[c], want)
			}
		}
	}
}

// spectralPrecond is the exact inverse of its Kronecker matrix M, M·Z = 2αE Z + G Z S (E leaving
// the intercept row unpenalised), on spaces whose S is nonsingular.
func TestSpectralPrecondInvertsKroneckerPart(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, sp := range operatorSpaces(t) {
		if sp.Kind() == "dicycles" || sp.Kind() == "multiclass" || sp.Kind() == "ordinal" {
			continue // singular S, or no closed form
		}
		op, _ := space.SpectralOf(sp.Covariance())
		for _, form := range []struct {
			name             string
			eigenMax, spaces int
		}{{"eigenbasis", spectralEigenMax, 0}, {"cholesky", 0, spectralCholeskySpaces}} {
			defer func(v, w int) { spectralEigenMax, spectralCholeskySpaces = v, w }(spectralEigenMax, spectralCholeskySpaces)
			spectralEigenMax, spectralCholeskySpaces = form.eigenMax, form.spaces
			for _, intercept := range []bool{false, true} {
				const m, n = 25, 4
				X, ys := synthetic(t, sp, m, n, 9)
				w := weights(r, m)
				p, _ := NewProblem(sp, ys, m, w, 0.3)
				des := design{X: mat.NewDense(m, n, X), intercept: intercept}
				pc, err := newSpectralPrecond(p, des, des.gram(p.Weight), op, false)
				if err != nil {
					t.Fatal(err)
				}
				k, d := des.cols(), sp.Dim()
				R := randDense(r, k, d)
				Z := mat.NewDense(k, d, nil)
				pc.apply(Z, R)
				var gz, back mat.Dense
				gz.Mul(des.gram(w), Z)
				back.Mul(&gz, p.S)
				des.addPenaltyGrad(&back, Z, 2*p.Alpha)
				if diff := maxAbsDiff(&back, R); diff > 1e-10*maxAbs(R) {
					t.Errorf("%s%v intercept=%v, %s: M·M⁻¹R differs from R by %.3g", sp.Kind(), sp.Params(), intercept, form.name, diff)
				}
			}
		}
	}
}

// A fit on a pair space far beyond MaxDim converges with memory linear in d: Permutations(120),
// d = 7140, whose dense S alone would take 408 MB.
func TestLargePairSpaceFit(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds")
	}
	const m, f = 200, 8
	sp, X, ys := largePairData(t, "permutations", 120, m, f)
	d := sp.Dim()
	opt := baseOptions()
	opt.Alpha, opt.Tol, opt.MaxIter = 1, 1e-8, 200
	model, dt, heap := fitMeasured(t, sp, X, m, f, ys, opt)
	p, err := newProblem(sp, ys, m, nil, opt.Alpha, operatorOK, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.S != nil {
		t.Fatalf("d = %d: the problem holds S densely", d)
	}
	_, rel := relGradAt(p, mat.NewDense(m, f, X), true, model.Coef)
	t.Logf("d=%d: %d iterations, %v, relative gradient %.2g, peak heap %d MB", d, model.Result.Iterations, dt, rel, heap>>20)
	if !model.Result.Converged || rel > 1e-7 || model.Result.Iterations > 60 {
		t.Errorf("d=%d: %d iterations, converged %v, relative gradient %.3g", d, model.Result.Iterations, model.Result.Converged, rel)
	}
	if dense := uint64(8 * d * d); heap > dense/2 {
		t.Errorf("peak heap %d MB during the fit, a dense S alone is %d MB", heap>>20, dense>>20)
	}
}
