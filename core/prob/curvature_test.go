package prob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
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

// leavesOnlySpaces are path spaces of leaves only, whose constant directions (a node's indicator
// minus its children's) are no coordinates, and their counterparts over all nodes, whose only
// constant direction is the root's coordinate.
func leavesOnlySpaces(t *testing.T) []space.Space {
	t.Helper()
	var out []space.Space
	for _, leaves := range []bool{true, false} {
		h, err := space.NewHierarchyPaths([]int{-1, 0, 0, 1, 1, 2, 2}, leaves)
		if err != nil {
			t.Fatal(err)
		}
		g, err := space.NewDAGPaths([][]int{{}, {0}, {0}, {1}, {1, 2}, {2}}, leaves)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h, g)
	}
	return out
}

// constantBasis returns an orthonormal basis (columns) of the directions v along which ⟨v, ψ(y)⟩
// is the same for every enumerated structure y: the kernel of the enumerated covariance.
func constantBasis(t *testing.T, sp space.Space) *mat.Dense {
	t.Helper()
	vals, vecs := spacetest.Enumerate(t, sp).CovEigen(t)
	d := sp.Dim()
	var cols []int
	for c, v := range vals {
		if v <= 1e-9*vals[d-1] {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	N := mat.NewDense(d, len(cols), nil)
	for k, c := range cols {
		N.SetCol(k, mat.Col(nil, c, vecs))
	}
	return N
}

// constantsAreCoordinates agrees with enumeration: the kernel of S is spanned by coordinate
// vectors exactly when it says so.
func TestConstantsAreCoordinatesAgainstEnumeration(t *testing.T) {
	spaces := append(leavesOnlySpaces(t), mustSpace(t, "multiclass", 4), mustSpace(t, "ksubsets", 5, 2),
		mustSpace(t, "dicycles", 5), mustSpace(t, "multilabel", 4), mustSpace(t, "permutations", 4))
	sub, err := space.NewSubtrees([]int{-1, 0, 0, 1, 1, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range append(spaces, sub) {
		N := constantBasis(t, sp)
		if N == nil {
			if !constantsAreCoordinates(sp) {
				t.Errorf("%s%v: constantsAreCoordinates false, enumeration: no constant direction", sp.Kind(), sp.Params())
			}
			continue
		}
		d, k := N.Dims()
		zeros := 0 // coordinates the kernel holds whole
		for a := 0; a < d; a++ {
			if floats.Norm(N.RawRowView(a), 2) > 1-1e-9 {
				zeros++
			}
		}
		if want := zeros == k; constantsAreCoordinates(sp) != want {
			t.Errorf("%s%v: constantsAreCoordinates %v, enumeration: a kernel of dimension %d holding %d coordinates",
				sp.Kind(), sp.Params(), !want, k, zeros)
		}
	}
}

// The fitted W has no component along ψ's constant directions on the path spaces of leaves only
// either: a coordinate-wise P had moved 6.6 % of coef_'s norm there (HierarchyPaths) and 1.7 %
// (DAGPaths) by the time the fit met tol (probe AT), which changes no probability but makes
// coef_, intercept_ and the scores another optimum than the minimum-norm one.
func TestPreconditionedFitStaysOffConstantDirections(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	for _, sp := range leavesOnlySpaces(t) {
		N := constantBasis(t, sp)
		b := spacetest.Enumerate(t, sp)
		const m, n = 80, 3
		X := make([]float64, m*n)
		for i := range X {
			X[i] = r.NormFloat64()
		}
		ys := make([]int64, 0, m*sp.Width())
		for i := 0; i < m; i++ {
			ys = append(ys, b.Ys[r.IntN(len(b.Ys))]...)
		}
		opt := Options{Alpha: 1e-6, Intercept: true, Solver: SolverLBFGS, Tol: 1e-6, MaxIter: 2000}
		opt.Inference.Method = InferExact
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		var along mat.Dense
		along.Mul(md.Coef, N)
		if got, scale := mat.Norm(&along, 2), mat.Norm(md.Coef, 2); got > 1e-4*scale {
			t.Errorf("%s%v: %.3g of coef's norm %.3g along the constant directions after %d iterations",
				sp.Kind(), sp.Params(), got, scale, md.Result.Iterations)
		}
	}
}
