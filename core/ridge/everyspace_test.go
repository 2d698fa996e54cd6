package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// everySpace is one small instance of every output space, each with its own covariance shape.
func everySpace(t testing.TB) []space.Space {
	t.Helper()
	tree := []int{-1, 0, 0, 1, 1, 2, 5} // node 6 hangs below 5, below 2
	var out []space.Space
	add := func(sp space.Space, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	add(space.NewMulticlass(5))
	add(space.NewMultilabel(5))
	add(space.NewKSubsets(6, 2))
	add(space.NewOrdinal(5))
	add(space.NewHierarchyPaths(tree, false))
	add(space.NewHierarchyPaths(tree, true))
	add(space.NewSubtrees(tree))
	add(space.NewPermutations(4))
	add(space.NewTournaments(4))
	add(space.NewDirectedCycles(5))
	add(space.NewUndirectedCycles(5))
	add(space.NewCliques(5))
	return out
}

// On every space, linear CG and the kernel solvers, CG and exact (a precomputed linear Gram
// matrix without intercept: the same model in dual form), reach the exact solver's optimum:
// objectives within 1e-8 relative, the same scores, and a vanishing gradient.
func TestEverySolverReachesTheExactOptimumOnEverySpace(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, sp := range everySpace(t) {
		const m, n = 40, 3
		name := sp.Kind()
		X, ys := synthetic(t, sp, m, n, 17)
		w := weights(r, m)
		d := sp.Dim()
		opt := baseOptions()
		opt.Intercept = false
		fit := func(solver Solver, kern kernel.Kind, data []float64, cols int) (*Model, []float64) {
			o := opt
			o.Solver, o.Kernel = solver, kernel.Kernel{Kind: kern}
			model, err := Fit(sp, data, m, cols, ys, w, o)
			if err != nil {
				t.Fatalf("%s %v %v: %v", name, solver, kern, err)
			}
			U := make([]float64, m*d)
			if err := model.Decision(data, m, cols, U); err != nil {
				t.Fatal(err)
			}
			return model, U
		}
		exact, uExact := fit(Exact, kernel.Linear, X, n)
		cg, uCG := fit(CG, kernel.Linear, X, n)
		Xm := mat.NewDense(m, n, X)
		var K mat.Dense
		K.Mul(Xm, Xm.T())
		dual, uDual := fit(CG, kernel.Precomputed, K.RawMatrix().Data, m)
		dualExact, uDualExact := fit(Exact, kernel.Precomputed, K.RawMatrix().Data, m)

		p, err := NewProblem(sp, ys, m, w, opt.Alpha)
		if err != nil {
			t.Fatal(err)
		}
		j, rel := relGradAt(p, Xm, false, exact.Coef)
		if rel > 1e-8 {
			t.Errorf("%s: exact solution has relative gradient %.3g", name, rel)
		}
		for _, c := range []struct {
			solver string
			model  *Model
			u      []float64
		}{{"linear CG", cg, uCG}, {"kernel CG", dual, uDual}, {"kernel exact", dualExact, uDualExact}} {
			if got := c.model.Result.Objective; math.Abs(got-j) > 1e-8*math.Abs(j) {
				t.Errorf("%s %s: J = %.15g, exact J = %.15g", name, c.solver, got, j)
			}
			var worst float64
			for i := range c.u {
				worst = math.Max(worst, math.Abs(c.u[i]-uExact[i]))
			}
			if worst > 1e-6 {
				t.Errorf("%s %s: scores differ from the exact solution's by %.3g", name, c.solver, worst)
			}
		}
	}
}
