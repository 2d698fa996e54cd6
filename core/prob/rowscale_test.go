package prob

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// Fitting X·c with regularisation α·c² is fitting X with α in other units (W·c = W₁): every
// solver must find the same model (for a power of two c, step for step). Before the solvers worked in rowScales' coordinates, L-BFGS
// stopped at c = 10⁶ and c = 10⁻⁸ with objectives 13–30 % above the minimum and no warning, and
// Adam's steps overshot.
func TestFitIsScaleEquivariant(t *testing.T) {
	for _, c := range []struct {
		kind   string
		size   int64
		solver Solver
	}{
		{"multilabel", 4, SolverLBFGS},   // column by column (fitSeparable)
		{"permutations", 4, SolverLBFGS}, // jointly (fitLBFGS)
		{"multiclass", 4, SolverAdam},    // Adam on exact gradients
	} {
		sp := mustSpace(t, c.kind, c.size)
		const m, n = 80, 3
		X, ys := syntheticData(t, sp, m, n, 1, 5)
		opt := Options{Alpha: 0.1, Intercept: true, Tol: 1e-9, MaxIter: 2000, Solver: c.solver}
		if c.solver == SolverAdam {
			opt.Tol, opt.MaxIter, opt.LearningRate = 1e-6, 400, 0.05
		}
		base, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		want := make([]float64, m*d)
		if err := base.Marginals(X, m, n, 0, want); err != nil {
			t.Fatal(err)
		}
		// powers of two (2⁻²⁷ ≈ 7e-9, 2²⁰ ≈ 1e6): the scales are powers of two, so that the two fits
		// run in the same coordinates and Adam, stopped after 400 steps, takes the same ones
		scales := []float64{0x1p-27, 0x1p20}
		if c.solver == SolverLBFGS { // converged: any c
			scales = append(scales, 1e-8, 1e6)
		}
		for _, scale := range scales {
			name := fmt.Sprintf("%s/%v/X·%g", c.kind, c.solver, scale)
			Xs := append([]float64(nil), X...)
			floats.Scale(scale, Xs)
			o := opt
			o.Alpha = opt.Alpha * scale * scale
			md, err := Fit(sp, Xs, m, n, ys, nil, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := make([]float64, m*d)
			if err := md.Marginals(Xs, m, n, 0, got); err != nil {
				t.Fatal(err)
			}
			if dist := floats.Distance(got, want, 2) / floats.Norm(want, 2); dist > 1e-6 {
				t.Errorf("%s: marginals %.3g from the unscaled fit's (%d against %d iterations)", name, dist,
					md.Result.Iterations, base.Result.Iterations)
			}
			if r := md.Result.Objective / base.Result.Objective; r < 1-1e-9 || r > 1+1e-9 {
				t.Errorf("%s: objective %v, unscaled %v", name, md.Result.Objective, base.Result.Objective)
			}
		}
	}
}

// Columns on scales 10⁻⁶, 1 and 10⁶ side by side: the default tolerance's fit is the tight one.
// Before, the unit-scale column's coefficients stayed near 0 (10⁻¹⁵ where the optimum is −1.4).
func TestFitWithMixedColumnScales(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	const m, n = 60, 3
	X, ys := syntheticData(t, sp, m, n, 1, 9)
	for i := 0; i < m; i++ {
		X[i*n] *= 1e-6
		X[i*n+2] *= 1e6
	}
	fit := func(tol float64) *Model {
		md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 1e-3, Intercept: true, Tol: tol, MaxIter: 5000})
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	loose, tight := fit(1e-6), fit(1e-13)
	if r := loose.Result.Objective/tight.Result.Objective - 1; r > 1e-6 {
		t.Errorf("objective at tol 1e-6 is %.3g above the tight fit's", r)
	}
	for a := 0; a < sp.Dim(); a++ {
		if got, want := loose.Coef.At(1, a), tight.Coef.At(1, a); math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
			t.Errorf("label %d: the unit-scale feature's coefficient %v, tight fit %v", a, got, want)
		}
	}
}
