package prob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// rareNodeProblem is a taxonomy of 60 nodes whose training subtrees hold each node below the
// root's children rarely (most nodes on for a few of the 600 examples, some never), as the FunCat
// genes hold theirs, and 6 features that move the first nodes' odds.
func rareNodeProblem(t *testing.T) (space.Space, []float64, []int64, int, int) {
	t.Helper()
	r := rand.New(rand.NewPCG(201, 1))
	const nodes, m, n = 60, 600, 6
	parent := make([]int, nodes)
	parent[0] = -1
	for v := 1; v < nodes; v++ {
		parent[v] = r.IntN(v)
	}
	sp, err := space.NewSubtrees(parent)
	if err != nil {
		t.Fatal(err)
	}
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	ys := make([]int64, m*sp.Width())
	for i := 0; i < m; i++ {
		y := ys[i*nodes : (i+1)*nodes]
		y[0] = 1
		for v := 1; v < nodes; v++ {
			rate := 0.6 / float64(v) // from 0.6 down to 1/100
			if X[i*n+v%n] > 1 {
				rate *= 3
			}
			if y[parent[v]] == 1 && r.Float64() < rate {
				y[v] = 1
			}
		}
	}
	return sp, X, ys, m, n
}

// On a taxonomy whose nodes are rare, plain L-BFGS crawls along the intercepts of the rare nodes,
// whose curvature is their variance, far below the penalised rows' (cellcycle_FUN: short of tol
// after 3,000 iterations, where the preconditioned fit took 684); P (curvature.go) takes it to
// tol in a fraction of the iterations, to the same optimum.
func TestCurvaturePreconditionerOnRareNodes(t *testing.T) {
	sp, X, ys, m, n := rareNodeProblem(t)
	defer func(v bool) { curvaturePreconditioning = v }(curvaturePreconditioning)
	var fits [2]*Model
	for k, on := range []bool{false, true} {
		curvaturePreconditioning = on
		opt := Options{Alpha: 0.1, Intercept: true, Solver: SolverLBFGS, Tol: 1e-6, MaxIter: 3000}
		opt.Inference.Method = InferExact
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		fits[k] = md
		t.Logf("preconditioned %v: %d iterations, relative gradient %.3g, J %.10g", on, md.Result.Iterations, md.Result.RelGrad, md.Result.Objective)
	}
	plain, pre := fits[0].Result, fits[1].Result
	if !pre.Converged || 3*pre.Iterations > plain.Iterations {
		t.Errorf("preconditioned: %d iterations (converged %v), plain %d: want under a third", pre.Iterations, pre.Converged, plain.Iterations)
	}
	if math.Abs(pre.Objective-plain.Objective) > 1e-8*math.Abs(plain.Objective) {
		t.Errorf("J %.12g preconditioned, %.12g plain", pre.Objective, plain.Objective)
	}
}
