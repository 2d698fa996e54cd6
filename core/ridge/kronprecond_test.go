package ridge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// kronPrecond, with a dense curvature M̄ or its diagonal, applies the exact inverse of
// M = 2αE⊗I + G⊗M̄, the intercept row of E zero: M·M⁻¹R = R. Also where G is tiny against 2α, as
// sample weights of 1e-60 make it (scale): Sherman–Morrison's rank-one term for the intercept then
// has γ ≈ 1e60, and the eigenbasis forms take its vector A⁻¹e apart from the rotations
// (interceptColumn); built through the rotation, the feature rows of M⁻¹R were rounding noise
// times γ, 1e28 in units of R.
func TestKronPrecondInvertsKroneckerPart(t *testing.T) {
	for _, scale := range []float64{1, 1e-60, 1e-200} {
		t.Run(fmt.Sprintf("G×%g", scale), func(t *testing.T) { testKronPrecondInverts(t, scale) })
	}
}

func testKronPrecondInverts(t *testing.T, scale float64) {
	r := rand.New(rand.NewPCG(51, 52))
	const k, d, alpha = 10, 9, 0.7
	A := randDense(r, k+3, k)
	for i := 0; i < k+3; i++ {
		A.Set(i, k-1, 1) // the intercept's column, when there is one
	}
	var g mat.Dense
	g.Mul(A.T(), A)
	g.Scale(scale, &g)
	G := mat.NewSymDense(k, g.RawMatrix().Data)
	B := randDense(r, d+2, d)
	var mb mat.Dense
	mb.Mul(B.T(), B)
	mbar := mat.NewSymDense(d, mb.RawMatrix().Data)
	nu := make([]float64, d)
	for b := range nu {
		nu[b] = 0.1 + r.Float64()
	}
	for _, form := range []string{"dense", "cholesky", "merged", "diagonal", "diagonal-cholesky", "diagonal-merged"} {
		for _, intercept := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/intercept=%v", form, intercept), func(t *testing.T) {
				var pc linearPrecond
				var err error
				var curv mat.Matrix = mbar
				switch form {
				case "dense", "cholesky", "merged":
					defer func(a, b, c int, e int64) {
						spectralEigenMax, kronCholRatio, kronCholMergeMinK, kronCholBytes = a, b, c, e
					}(spectralEigenMax, kronCholRatio, kronCholMergeMinK, kronCholBytes)
					switch form {
					case "cholesky": // a block per eigenvalue at this k
						spectralEigenMax, kronCholRatio = 0, 1
					case "merged": // three blocks: the d − 2 smallest eigenvalues share one
						spectralEigenMax, kronCholMergeMinK, kronCholRatio, kronCholBytes = 0, 0, 1, 3*8*k*k
						curv = mergedCurvature(t, mbar, 3)
					}
					pc, err = kronPrecondOf(mbar, G, alpha, intercept, nil)
					if _, ok := pc.(*kronCholPrecond); ok != (form != "dense") {
						t.Fatalf("kronPrecondOf gave a %T", pc)
					}
				case "diagonal":
					pc, err = newKronBlocks(G, nil, nu, alpha, intercept)
					curv = mat.NewDiagDense(d, nu)
				case "diagonal-cholesky":
					pc, err = newKronCholPrecond(G, nil, nu, d, alpha, intercept, nil)
					curv = mat.NewDiagDense(d, nu)
				case "diagonal-merged": // four blocks: the d − 3 smallest values share one at their mean
					pc, err = newKronCholPrecond(G, nil, nu, 4, alpha, intercept, nil)
					curv = mat.NewDiagDense(d, mergedValues(nu, 4))
				}
				if scale < 1 && intercept && form != "dense" && form != "diagonal" {
					// the Cholesky forms' explicit block inverses would hold rounding amplified by
					// the blocks' condition (about 1/scale): refused, and the fit falls back to the
					// diagonal preconditioner
					if !errors.Is(err, errIllConditioned) {
						t.Fatalf("got %v, want the refusal of blocks too ill-conditioned to invert", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				R := randDense(r, k, d)
				Z := mat.NewDense(k, d, nil)
				pc.apply(Z, R)
				var gz, back mat.Dense
				gz.Mul(G, Z)
				back.Mul(&gz, curv)
				for j := 0; j < k; j++ {
					if intercept && j == k-1 {
						continue // E leaves the intercept row unpenalised
					}
					for b := 0; b < d; b++ {
						back.Set(j, b, back.At(j, b)+2*alpha*Z.At(j, b))
					}
				}
				if diff := maxAbsDiff(&back, R); diff > 1e-10*maxAbs(R) {
					t.Errorf("M·M⁻¹R differs from R by %.3g", diff)
				}
			})
		}
	}
}

// With the empirical reference, rare coordinates of ψ have little curvature, far below 2α: a
// preconditioner that penalises the intercept there leaves CG hundreds of iterations (785 on
// gasch2_GO at d = 564 before kronPrecond left the intercept unpenalised; 18 after).
func TestKronPrecondInterceptIterations(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	const m, n, d = 2000, 8, 120
	sp, err := space.New("multilabel", []int64{d})
	if err != nil {
		t.Fatal(err)
	}
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	ys := make([]int64, m*d)
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			rate := 0.5 / float64(1+a) // from ½ down to 1/240
			if X[i*n+a%n] > 0 {
				rate *= 1.5
			}
			if r.Float64() < rate {
				ys[i*d+a] = 1
			}
		}
	}
	for _, mode := range []precondMode{precondAuto, precondDiag} {
		defer func(v precondMode) { linearPrecondMode = v }(linearPrecondMode)
		linearPrecondMode = mode
		opt := baseOptions()
		opt.Alpha, opt.Tol, opt.MaxIter, opt.EmpiricalWeight, opt.Solver = 300, 1e-8, 2000, 1, CG
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		const limit = 20 // 57 (dense) and 59 (diagonal) with the intercept penalised
		if !md.Result.Converged || md.Result.Iterations > limit {
			t.Errorf("mode %d: %d iterations (converged %v), want at most %d", mode, md.Result.Iterations, md.Result.Converged, limit)
		}
		t.Logf("mode %d: %d iterations", mode, md.Result.Iterations)
	}
}

// A fit whose Kronecker preconditioner takes the Cholesky form (kronCholPrecond) reaches the optimum
// of the eigenbasis form, in about as many iterations: the two apply the same inverse.
func TestKronCholFitMatchesEigenbasis(t *testing.T) {
	sp, err := space.New("permutations", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 300, 12
	X, ys := synthetic(t, sp, m, n, 17)
	opt := baseOptions()
	opt.Solver, opt.EmpiricalWeight = CG, 0.3
	fit := func(cholesky bool) *Model {
		defer func(v, w int) { spectralEigenMax, kronCholRatio = v, w }(spectralEigenMax, kronCholRatio)
		if cholesky {
			spectralEigenMax, kronCholRatio = 0, 1
		}
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	eig, chol := fit(false), fit(true)
	if e := relDiff(chol.Coef, eig.Coef); e > 1e-8 {
		t.Errorf("Cholesky form's coefficients differ from the eigenbasis form's by %.2e", e)
	}
	if a, b := chol.Result.Iterations, eig.Result.Iterations; a > b+2 || a < b-2 {
		t.Errorf("Cholesky form took %d iterations, the eigenbasis form %d", a, b)
	}
	t.Logf("iterations: %d (Cholesky), %d (eigenbasis)", chol.Result.Iterations, eig.Result.Iterations)
}

// mergedCurvature is mbar with its d − blocks + 1 smallest eigenvalues replaced by their mean: the
// curvature a kronCholPrecond with that many blocks inverts.
func mergedCurvature(t *testing.T, mbar *mat.SymDense, blocks int) *mat.Dense {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(mbar, true) {
		t.Fatal("eigendecomposition failed")
	}
	nu := es.Values(nil)
	merged := len(nu) - blocks + 1
	var mean float64
	for _, v := range nu[:merged] {
		mean += v / float64(merged)
	}
	for b := range nu[:merged] {
		nu[b] = mean
	}
	var q, qd, out mat.Dense
	es.VectorsTo(&q)
	qd.Mul(&q, mat.NewDiagDense(len(nu), nu))
	out.Mul(&qd, q.T())
	return &out
}

// BenchmarkKronPrecondSetUp times kronPrecondOf at the sizes where its two forms part: a
// Nyström map's G (k = 1,501) with a ranking's small curvature (d = 6) or a text set's
// (d = 159), in the eigenbasis form (kronPrecond) and the Cholesky form (kronCholPrecond).
func BenchmarkKronPrecondSetUp(b *testing.B) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct{ k, d int }{{1501, 6}, {1501, 159}} {
		A := randDense(r, c.k+50, c.k)
		var g mat.Dense
		g.Mul(A.T(), A)
		G := mat.NewSymDense(c.k, g.RawMatrix().Data)
		B := randDense(r, c.d+5, c.d)
		var mb mat.Dense
		mb.Mul(B.T(), B)
		mbar := mat.NewSymDense(c.d, mb.RawMatrix().Data)
		for _, form := range []string{"eigenbasis", "cholesky"} {
			b.Run(fmt.Sprintf("k=%d/d=%d/%s", c.k, c.d, form), func(b *testing.B) {
				defer func(v int) { spectralEigenMax = v }(spectralEigenMax)
				if form == "eigenbasis" {
					spectralEigenMax = c.k
				}
				for b.Loop() {
					if _, err := kronPrecondOf(mbar, G, 0.5, true, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// mergedValues is nu with its len(nu) − blocks + 1 smallest values replaced by their mean.
func mergedValues(nu []float64, blocks int) []float64 {
	sorted := append([]float64(nil), nu...)
	slices.Sort(sorted)
	merged := len(nu) - blocks + 1
	cut := sorted[merged] // the smallest value kept on its own (the values are distinct)
	var mean float64
	for _, v := range sorted[:merged] {
		mean += v / float64(merged)
	}
	out := make([]float64, len(nu))
	for b, v := range nu {
		out[b] = v
		if v < cut {
			out[b] = mean
		}
	}
	return out
}

// kronCholBlocks: the eigenbasis form for a small G, a block per eigenvalue for few of them, merged
// blocks for many at a large G, and never more than 256 MB of blocks but one.
func TestKronCholBlocks(t *testing.T) {
	defer budget.Set(budget.Setting())
	if err := budget.Set(8 << 30); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ k, d, want int }{
		{200, 6, 0},     // G small: its eigendecomposition is cheap
		{300, 6, 6},     // d ≤ k/32
		{300, 20, 0},    // too many for exact blocks, G too small to merge
		{1000, 159, 15}, // k/64
		{1501, 6, 6},    // calhousing's ranking on a Nyström map
		{1501, 159, 14}, // 256 MB of 1,501² blocks
		{6000, 6, 1},    // one block of 288 MB
		{4097, 4097, 1}, // merged into one
	} {
		if got := kronCholBlocks(c.k, c.d); got != c.want {
			t.Errorf("kronCholBlocks(%d, %d) = %d, want %d", c.k, c.d, got, c.want)
		}
	}
}

// Under a small memory budget the blocks are refused, not allocated.
func TestKronCholBlocksFollowTheBudget(t *testing.T) {
	defer budget.Set(budget.Setting())
	if err := budget.Set(64 << 20); err != nil {
		t.Fatal(err)
	}
	if got := kronCholBlocks(1501, 6); got != 0 {
		t.Errorf("kronCholBlocks(1501, 6) = %d under a 64 MiB budget (nine 1,501² matrices are 162 MB)", got)
	}
}

// CG under a reference measure with sample weights of 1e-60 and 1e-200 (the intercept's curvature
// 1e60 and more below the penalty's) reaches the exact solver's optimum. It stopped at a relative
// gradient of 1e28 with coefficients 30 orders of magnitude off (the Kronecker preconditioner's
// rank-one term), and at 1e-60 on plain CG reported convergence at a true relative gradient of
// 0.25 (the recurrence's residual had drifted from the true one).
func TestCGAtTinyWeightsMatchesTheExactSolver(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	perm, _ := space.NewPermutations(5)
	labels, _ := space.NewMultilabel(60)
	const m, n = 30, 5
	for _, sp := range []space.Space{labels, perm} {
		kind := map[space.Space]string{labels: "multilabel(60)", perm: "permutations(5)"}[sp]
		X, ys := synthetic(t, sp, m, n, 59)
		for _, mode := range []precondMode{precondAuto, precondNone} {
			for _, w := range []float64{1e-60, 1e-200} {
				ws := make([]float64, m)
				for i := range ws {
					ws[i] = w * (0.5 + r.Float64())
				}
				defer func(v precondMode) { linearPrecondMode = v }(linearPrecondMode)
				linearPrecondMode = mode
				fits := make([]*Model, 2)
				for s, solver := range []Solver{CG, Exact} {
					opt := baseOptions()
					opt.Alpha, opt.Tol, opt.EmpiricalWeight, opt.Solver = 1, 1e-8, 0.5, solver
					md, err := Fit(sp, X, m, n, ys, ws, opt)
					if err != nil {
						t.Fatal(err)
					}
					fits[s] = md
				}
				checkTinyWeightFit(t, fmt.Sprintf("%s, precond mode %d, weights %g", kind, mode, w), fits[0], fits[1], "the exact solver's")
			}
		}
	}
}

// The same on spaces whose closed-form spectrum puts spectralPrecond in G's eigenbasis (three or
// more eigenspaces: undirected cycles, cliques) under the uniform measure, against the problem
// scaled back to unit weights (α/w, which the exact solver refuses at these scales as singular to
// working precision): the minimiser is the same.
func TestCGAtTinyWeightsInTheSpectralEigenbasis(t *testing.T) {
	for _, c := range []struct {
		kind string
		p    []int64
	}{{"ucycles", []int64{6}}, {"cliques", []int64{5}}} {
		sp, err := space.New(c.kind, c.p)
		if err != nil {
			t.Fatal(err)
		}
		const m, n = 40, 5
		X, ys := synthetic(t, sp, m, n, 61)
		for _, w := range []float64{1e-60, 1e-200} {
			ws := make([]float64, m)
			for i := range ws {
				ws[i] = w
			}
			opt := baseOptions()
			opt.Alpha, opt.Tol, opt.Solver = 1, 1e-8, CG
			tiny, err := Fit(sp, X, m, n, ys, ws, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Alpha, opt.Tol = 1/w, 1e-12
			unit, err := Fit(sp, X, m, n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			checkTinyWeightFit(t, fmt.Sprintf("%s%v, weights %g", c.kind, c.p, w), tiny, unit, "the rescaled problem's")
		}
	}
}

// checkTinyWeightFit checks that the CG fit got converged, to a relative gradient of 1e-8, and that
// each row of its coefficients is within 1e-5 of the reference's, against that row's own scale
// (the intercept's row is O(1) where the feature rows are O(w)).
func checkTinyWeightFit(t *testing.T, name string, cg, ref *Model, refName string) {
	t.Helper()
	if !cg.Result.Converged || cg.Result.RelGrad > 1e-8 {
		t.Errorf("%s: converged %v at a relative gradient of %.3g", name, cg.Result.Converged, cg.Result.RelGrad)
	}
	rows, d := ref.Coef.Dims()
	for j := 0; j < rows; j++ {
		a, b := mat.NewDense(1, d, cg.Coef.RawRowView(j)), mat.NewDense(1, d, ref.Coef.RawRowView(j))
		if diff := maxAbsDiff(a, b); diff > 1e-5*maxAbs(b) {
			t.Errorf("%s: row %d of the coefficients %.3g from %s (scale %.3g)", name, j, diff, refName, maxAbs(b))
		}
	}
}
