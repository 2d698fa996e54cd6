package prob

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// With an unpenalised intercept, a constant added to every feature changes nothing but the
// coordinates: the fitted probabilities must be those of X itself, with L-BFGS on the joint
// problem and column by column (separable multilabel). Uncentred, L-BFGS met its tolerance with
// probabilities up to 0.085 from the minimum's on yeast at X + 10³, without a warning.
func TestFitIgnoresAConstantShiftOfX(t *testing.T) {
	for _, c := range []struct {
		kind string
		size int64
	}{{"multilabel", 4}, {"multiclass", 4}, {"permutations", 3}} {
		sp := mustSpace(t, c.kind, c.size)
		const m, n = 150, 6
		X, ys := syntheticData(t, sp, m, n, 1, 11)
		w := make([]float64, m)
		for i := range w {
			w[i] = 0.5 + float64(i%7)/3
		}
		opt := Options{Alpha: 0.01, Intercept: true, Tol: 1e-10, MaxIter: 1000}
		base, err := Fit(sp, X, m, n, ys, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		want := make([]float64, m*d)
		if err := base.Marginals(X, m, n, 0, want); err != nil {
			t.Fatal(err)
		}
		for _, shift := range []float64{1e3, 1e5} {
			name := fmt.Sprintf("%s/shift %g", c.kind, shift)
			Xs := make([]float64, len(X))
			for i, v := range X {
				Xs[i] = v + shift
			}
			md, err := Fit(sp, Xs, m, n, ys, w, opt)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := make([]float64, m*d)
			if err := md.Marginals(Xs, m, n, 0, got); err != nil {
				t.Fatal(err)
			}
			if dist := floats.Distance(got, want, 2) / floats.Norm(want, 2); dist > 1e-6 {
				t.Errorf("%s: marginals %.3g from the unshifted fit's (%d iterations)", name, dist, md.Result.Iterations)
			}
			warm := opt
			warm.Init = md
			again, err := Fit(sp, Xs, m, n, ys, w, warm)
			if err != nil {
				t.Fatal(err)
			}
			if again.Result.Iterations > 2 {
				t.Errorf("%s: a warm start from the fitted model took %d iterations", name, again.Result.Iterations)
			}
		}
	}
}
