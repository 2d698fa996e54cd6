package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
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
			Xs := shifted(X, shift)
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

// Where the budget refuses the centred copy of a dense X, the products take the mean out: X was
// fitted as it was, and L-BFGS ran to max_iter 0.03 in probability from the minimum at X + 100
// and 0.45 at X + 10⁴ (probe FG).
func TestFitCentresImplicitlyWhereTheBudgetRefusesTheCopy(t *testing.T) {
	sp := mustSpace(t, "multilabel", 4)
	const m, n = 3000, 40 // the centred copy: 960 kB
	X, ys := syntheticData(t, sp, m, n, 1, 17)
	opt := Options{Alpha: 1e-3, Intercept: true, Tol: 1e-8, MaxIter: 200}
	Xs := shifted(X, 1e4)
	marginals := func(limit int64) ([]float64, int) {
		defer budget.Set(budget.Setting())
		if err := budget.Set(limit); err != nil {
			t.Fatal(err)
		}
		md, err := Fit(sp, Xs, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, m*sp.Dim())
		if err := md.Marginals(Xs, m, n, 0, out); err != nil {
			t.Fatal(err)
		}
		return out, md.Result.Iterations
	}
	want, _ := marginals(0)
	got, its := marginals(900e3)
	if diff := floats.Distance(got, want, math.Inf(1)); diff > 1e-6 {
		t.Errorf("under the budget: marginals %.3g from the centred copy's (%d iterations)", diff, its)
	}
}

// A sparse X centred implicitly (its products take the centre out) is the dense X centred in a
// copy: the same J and gradient at the same W, jointly and column by column.
func TestImplicitCentringEqualsACentredCopy(t *testing.T) {
	sp := mustSpace(t, "multilabel", 4)
	const m, n = 40, 5
	X, ys := syntheticData(t, sp, m, n, 1, 13)
	for i := range X {
		if i%3 == 0 {
			X[i] = 0
		} else {
			X[i] += 50
		}
	}
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.25 + float64(i%5)
	}
	c := xmat.WeightedMean(xmat.Matrix{Dense: mat.NewDense(m, n, X)}, w)
	Xc := make([]float64, m*n)
	xmat.CentreInto(mat.NewDense(m, n, Xc), mat.NewDense(m, n, X), c)
	dense, err := NewProblem(sp, Xc, m, n, ys, w, 0.05, true)
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := NewProblemCSR(sp, xmat.FromDense(m, n, X), ys, w, 0.05, true)
	if err != nil {
		t.Fatal(err)
	}
	sparse.centre, sparse.implicit = c, true
	r := rand.New(rand.NewPCG(3, 4))
	W := mat.NewDense(n+1, sp.Dim(), nil)
	for i := range W.RawMatrix().Data {
		W.RawMatrix().Data[i] = r.NormFloat64()
	}
	var J [2]float64
	var G [2]*mat.Dense
	for k, p := range []*Problem{dense, sparse} {
		G[k] = mat.NewDense(n+1, sp.Dim(), nil)
		if J[k], err = p.Objective(W, InferenceOptions{Method: InferExact}, 0, G[k]); err != nil {
			t.Fatal(err)
		}
		var cols float64
		g, s := make([]float64, n+1), newColumnScratch(p)
		for a := 0; a < sp.Dim(); a++ {
			cols += p.columnObjective(a, mat.Col(nil, a, W), g, s)
			if diff := floats.Distance(g, mat.Col(nil, a, G[k]), math.Inf(1)); diff > 1e-12 {
				t.Errorf("problem %d: column %d's gradient is %.3g from the joint one's", k, a, diff)
			}
		}
		if math.Abs(cols-J[k]) > 1e-12*math.Abs(J[k]) {
			t.Errorf("problem %d: the columns sum to %v, J = %v", k, cols, J[k])
		}
	}
	if math.Abs(J[0]-J[1]) > 1e-12*math.Abs(J[0]) {
		t.Errorf("J = %v on the centred copy, %v centred implicitly", J[0], J[1])
	}
	if diff := floats.Distance(G[0].RawMatrix().Data, G[1].RawMatrix().Data, math.Inf(1)); diff > 1e-10 {
		t.Errorf("the gradients differ by %.3g", diff)
	}
}

// shifted returns a copy of X with c added to every value.
func shifted(X []float64, c float64) []float64 {
	out := make([]float64, len(X))
	for i, v := range X {
		out[i] = v + c
	}
	return out
}
