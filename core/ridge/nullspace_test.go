package ridge

import (
	"math"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// TestCGStaysOffTheNullSpaceAtTinyAlpha: with the data's curvature far above α (α = 1e-24 on unit
// features), the preconditioners' 1/(2α) along J's null directions amplified CG's rounding there
// in every row of W, not only the intercept's: multiclass stopped after 1–4 iterations at a
// relative gradient above 1 with a negative J (probe AA). Every form of CG must now converge to
// the α → 0 optimum, which the exact solver at α = 1e-8 gives to about 1e-8, with no component of
// any row along the null directions, and a J between 0 and J(0).
func TestCGStaysOffTheNullSpaceAtTinyAlpha(t *testing.T) {
	for _, sp := range nullDirectionSpaces(t) {
		const m, n = 60, 4
		X, ys := synthetic(t, sp, m, n, 5)
		for _, intercept := range []bool{false, true} {
			opt := baseOptions()
			opt.Intercept, opt.Alpha, opt.Solver = intercept, 1e-8, Exact
			exact, err := Fit(sp, X, m, n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := decisionOf(t, exact, X, m, n)
			p, err := NewProblem(sp, ys, m, nil, 1e-24)
			if err != nil {
				t.Fatal(err)
			}
			drop := spectralNullDrop(t, p)
			for _, form := range []string{"dense", "sparse", "sums"} {
				o := opt
				o.Alpha, o.Solver, o.Tol, o.MaxIter = 1e-24, CG, 1e-10, 10000
				md := fitCGForm(t, form, sp, X, m, n, ys, o)
				res := md.Result
				if rel := maxRelDiff(decisionOf(t, md, X, m, n), want); !res.Converged || rel > 1e-5 || !(res.Objective >= 0 && res.Objective <= p.Constant()) {
					t.Errorf("%s intercept=%v form=%s: converged %v after %d iterations (relative gradient %.1e), J = %g (J(0) = %g), scores %.1e from the exact solver's at α = 1e-8",
						sp.Kind(), intercept, form, res.Converged, res.Iterations, res.RelGrad, res.Objective, p.Constant(), rel)
				}
				kept := mat.DenseCopyOf(md.Coef)
				drop(kept)
				kept.Sub(kept, md.Coef)
				if along := mat.Norm(kept, 2); along > 1e-8*mat.Norm(md.Coef, 2) {
					t.Errorf("%s intercept=%v form=%s: W has %.1e of its norm %.1e along the null directions", sp.Kind(), intercept, form, along, mat.Norm(md.Coef, 2))
				}
			}
		}
	}
}

// A warm start with components along J's null directions (a model of an older fit, or one
// shifted by hand) loses them before CG starts: the preconditioners are zero there, so CG could
// never remove them, and the penalty's gradient 2αW along them would have kept the fit from
// converging.
func TestCGWarmStartLosesItsNullComponents(t *testing.T) {
	sp, _ := space.NewMulticlass(4)
	const m, n = 60, 4
	X, ys := synthetic(t, sp, m, n, 7)
	opt := baseOptions()
	opt.Solver, opt.Alpha = CG, 1
	cold, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	shifted := *cold
	shifted.Coef = mat.DenseCopyOf(cold.Coef)
	for j := 0; j <= n; j++ { // every row, the intercept's too, moved along span(1)
		floats.AddConst(float64(j+1), shifted.Coef.RawRowView(j))
	}
	opt.Init = &shifted
	warm, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !warm.Result.Converged {
		t.Fatalf("warm fit: not converged after %d iterations (relative gradient %.1e)", warm.Result.Iterations, warm.Result.RelGrad)
	}
	if !mat.EqualApprox(warm.Coef, cold.Coef, 1e-6*mat.Norm(cold.Coef, math.Inf(1))) {
		t.Errorf("warm fit's coefficients\n%v\ndiffer from the cold fit's\n%v", mat.Formatted(warm.Coef), mat.Formatted(cold.Coef))
	}
}

// spectralNullDrop removes from every row of a matrix its components along the null eigenspaces
// of p's closed-form covariance (whose δ_i are orthogonal to them).
func spectralNullDrop(t *testing.T, p *Problem) func(*mat.Dense) {
	sp, ok := space.SpectralOf(p.Cov)
	if !ok {
		t.Fatal("no closed-form spectrum")
	}
	null := space.NullEigenspaces(sp)
	if len(null) == 0 {
		t.Fatal("no null eigenspace")
	}
	remove := space.RemoveEigenspaces(sp, null)
	return func(V *mat.Dense) {
		k, _ := V.Dims()
		for j := 0; j < k; j++ {
			remove(V.RawRowView(j))
		}
	}
}

// fitCGForm fits ys on X (m×n) with o in one of the forms of the linear CG fit: "dense", "sparse"
// (X as CSR) or "sums" (the distributed fit on two parts' sums, as Dask runs it).
func fitCGForm(t *testing.T, form string, sp space.Space, X []float64, m, n int, ys []int64, o Options) *Model {
	t.Helper()
	var md *Model
	var err error
	switch form {
	case "dense":
		md, err = Fit(sp, X, m, n, ys, nil, o)
	case "sparse":
		md, err = FitCSR(sp, xmat.FromDense(m, n, X), ys, nil, o)
	default:
		setup, products := cgParts(t, sp, X, m, n, ys, nil, o, []int{20, 45})
		md, err = FitCGSums(sp, n, o, setup, products)
	}
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// nullDirectionSpaces are spaces whose ψ has directions of constant value: span(1) for
// multiclass and k-subsets, the vertex potentials of directed cycles.
func nullDirectionSpaces(t *testing.T) []space.Space {
	var spaces []space.Space
	for _, c := range []struct {
		kind   string
		params []int64
	}{{"multiclass", []int64{4}}, {"ksubsets", []int64{6, 2}}, {"dicycles", []int64{5}}} {
		sp, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, sp)
	}
	return spaces
}

// decisionOf returns md's scores of the m rows of X (m×n).
func decisionOf(t *testing.T, md *Model, X []float64, m, n int) []float64 {
	t.Helper()
	out := make([]float64, m*md.Space.Dim())
	if err := md.Decision(X, m, n, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// maxRelDiff is max_i |got_i − want_i| / max_i |want_i|.
func maxRelDiff(got, want []float64) float64 {
	diff := 0.0
	for i := range got {
		diff = math.Max(diff, math.Abs(got[i]-want[i]))
	}
	return diff / floats.Norm(want, math.Inf(1))
}

// TestExactSolverAlongTheNullSpace: along J's null directions every row of H is 2α alone (none on
// the intercept's row), so at a tiny α, or with weights that put the data's curvature far above
// or below 2α, the exact solver's scaled normal equations were singular in double precision and
// it refused fits that CG solved (alpha = 1e-16 on multiclass, weights 1e30 or 1e-20; probes AU
// and AT). Its scores must now match CG's, with no component of W along the null directions.
func TestExactSolverAlongTheNullSpace(t *testing.T) {
	subtrees, err := space.New("subtrees", []int64{-1, 0, 0, 1, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range append(nullDirectionSpaces(t), subtrees) {
		const m, n = 40, 3
		X, ys := synthetic(t, sp, m, n, 11)
		for _, c := range []struct {
			alpha, weight float64
		}{{1e-16, 1}, {1e-300, 1}, {1, 1e30}, {1, 1e-20}, {1, 1e-300}} {
			w := make([]float64, m)
			for i := range w {
				w[i] = c.weight
			}
			opt := baseOptions()
			opt.Alpha, opt.Solver = c.alpha, Exact
			exact, err := Fit(sp, X, m, n, ys, w, opt)
			if err != nil {
				t.Errorf("%s alpha=%g weights %g: %v", sp.Kind(), c.alpha, c.weight, err)
				continue
			}
			opt.Solver, opt.Tol, opt.MaxIter = CG, 1e-12, 10000
			cg, err := Fit(sp, X, m, n, ys, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			if rel := maxRelDiff(decisionOf(t, exact, X, m, n), decisionOf(t, cg, X, m, n)); rel > 1e-6 {
				t.Errorf("%s alpha=%g weights %g: the exact solver's scores %.1e from CG's", sp.Kind(), c.alpha, c.weight, rel)
			}
			p, err := NewProblem(sp, ys, m, w, c.alpha)
			if err != nil {
				t.Fatal(err)
			}
			if sp.Kind() == "subtrees" {
				continue // its null direction (the root) is a coordinate, not an eigenspace of a closed form
			}
			kept := mat.DenseCopyOf(exact.Coef)
			spectralNullDrop(t, p)(kept)
			kept.Sub(kept, exact.Coef)
			if along := mat.Norm(kept, 2); along > 1e-10*mat.Norm(exact.Coef, 2) {
				t.Errorf("%s alpha=%g weights %g: W has %.1e of its norm %.1e along the null directions", sp.Kind(), c.alpha, c.weight, along, mat.Norm(exact.Coef, 2))
			}
		}
	}
}
