package prob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// FitCSR on a sparse X gives the model Fit gives on the dense X with the same entries (L-BFGS
// with exact inference, and Adam over minibatches), and both models score either layout alike.
func TestSparseFitEqualsDense(t *testing.T) {
	for _, c := range []struct {
		kind   string
		par    int64
		solver Solver
		batch  int
	}{{"multilabel", 5, SolverLBFGS, 0}, {"multiclass", 4, SolverLBFGS, 0}, {"multilabel", 4, SolverAdam, 16}} {
		sp, err := space.New(c.kind, []int64{c.par})
		if err != nil {
			t.Fatal(err)
		}
		const m, n = 70, 8
		r := rand.New(rand.NewPCG(4, uint64(c.par)))
		X := make([]float64, m*n)
		for i := range X {
			if r.Float64() < 0.35 && i/n != 2 { // row 2 stays empty
				X[i] = r.NormFloat64()
			}
		}
		ys := make([]int64, m*sp.Width())
		u := make([]float64, sp.Dim())
		for i := 0; i < m; i++ {
			for a := range u {
				u[a] = r.NormFloat64() + X[i*n+a%n]*2
			}
			sp.Decode(u, ys[i*sp.Width():(i+1)*sp.Width()])
		}
		A := xmat.FromDense(m, n, X)
		// L-BFGS to 1e-12, so that both fits lie within rounding of the one minimum: the sparse and
		// dense gradients differ in their last bits, and at 1e-10 the two runs stopped up to 1.7e-10
		// apart (relative) once the solver scaled its coordinates.
		opt := Options{Alpha: 0.01, Intercept: true, Solver: c.solver, Tol: 1e-12, MaxIter: 500, BatchSize: c.batch, Seed: 3}
		if c.solver == SolverAdam {
			opt.Tol, opt.MaxIter = 1e-6, 60
		}
		dense, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		sparse, err := FitCSR(sp, A, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		if c.solver == SolverLBFGS && (!dense.Result.Converged || !sparse.Result.Converged) {
			t.Errorf("%s: L-BFGS did not reach tol (dense %+v, sparse %+v)", c.kind, dense.Result, sparse.Result)
		}
		var scale, diff float64
		for k, v := range dense.Coef.RawMatrix().Data {
			scale = math.Max(scale, math.Abs(v))
			diff = math.Max(diff, math.Abs(v-sparse.Coef.RawMatrix().Data[k]))
		}
		if !(diff <= 1e-10*scale) {
			t.Fatalf("%s %v: sparse and dense fits differ by %.3g (scale %.3g)", c.kind, c.solver, diff, scale)
		}
		d := sp.Dim()
		U, V := make([]float64, m*d), make([]float64, m*d)
		if err := dense.Decision(X, m, n, U); err != nil {
			t.Fatal(err)
		}
		if err := dense.DecisionRows(xmat.SparseRows(A), V); err != nil {
			t.Fatal(err)
		}
		for k := range U {
			if math.Abs(U[k]-V[k]) > 1e-12*math.Max(1, math.Abs(U[k])) {
				t.Fatalf("scores of sparse rows %v, of dense rows %v", V[k], U[k])
			}
		}
	}
}

// A sparse X's fully stored columns are centred in a copy (shiftDenseColumns): a column at 10⁸ ± 1
// among sparse ones, centred implicitly, took the mean out of products of that size, and L-BFGS
// ran to its bound (200 iterations, relative error 2·10⁻⁵ in the probabilities) where the dense
// X met tol in 8 (probe AT). Sparse and dense now take the same path, and a warm start from the
// sparse fit (held on X's own coordinates) starts at its minimum.
func TestSparseFitCentresItsDenseColumns(t *testing.T) {
	sp := mustSpace(t, "multiclass", 4)
	const m, n = 80, 3
	r := rand.New(rand.NewPCG(8, 9))
	X := make([]float64, m*n)
	ys := make([]int64, m)
	for i := 0; i < m; i++ {
		X[i*n], X[i*n+1] = r.NormFloat64(), 1e8+r.NormFloat64()
		if r.IntN(2) == 0 {
			X[i*n+2] = r.NormFloat64() // implicit zeros elsewhere
		}
		ys[i] = int64(r.IntN(4))
	}
	opt := Options{Alpha: 0.01, Intercept: true, Solver: SolverLBFGS, Tol: 1e-8, MaxIter: 200}
	opt.Inference.Method = InferExact
	dense, err := Fit(sp, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := FitCSR(sp, xmat.FromDense(m, n, X), ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !sparse.Result.Converged || sparse.Result.Iterations > dense.Result.Iterations+2 {
		t.Errorf("sparse: %d iterations (converged %v), dense: %d", sparse.Result.Iterations, sparse.Result.Converged, dense.Result.Iterations)
	}
	d := sp.Dim()
	U, V := make([]float64, m*d), make([]float64, m*d)
	if err := dense.Decision(X, m, n, U); err != nil {
		t.Fatal(err)
	}
	if err := sparse.Decision(X, m, n, V); err != nil {
		t.Fatal(err)
	}
	for k := range U {
		if math.Abs(U[k]-V[k]) > 1e-6 {
			t.Fatalf("score %d: sparse fit %v, dense fit %v", k, V[k], U[k])
		}
	}
	warm := opt
	warm.Init = sparse
	again, err := FitCSR(sp, xmat.FromDense(m, n, X), ys, nil, warm)
	if err != nil {
		t.Fatal(err)
	}
	if again.Result.Iterations > 2 {
		t.Errorf("a warm start from the sparse fit took %d iterations", again.Result.Iterations)
	}
}
