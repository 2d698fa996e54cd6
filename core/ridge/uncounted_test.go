package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
)

// On a space without counts (DAG node sets closed under parents), the fit with the training
// structures as the reference depends only on their ψ: it is the multi-label fit over the same 0/1
// rows, score for score, for every solver and kernel and for partial_fit; only the
// decoder differs (a closed set of the largest score). Every other reference is refused, naming
// the reason.
func TestUncountedSpaceFitsWithTheEmpiricalReference(t *testing.T) {
	parents := [][]int{nil, {0}, {0}, {1, 2}, {1}, {3, 4}, {2}}
	dag, err := space.NewDAGSubsets(parents)
	if err != nil {
		t.Fatal(err)
	}
	labels, _ := space.NewMultilabel(len(parents))
	const m, n = 50, 3
	r := rand.New(rand.NewPCG(5, 6))
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	ys := make([]int64, m*dag.Width())
	u := make([]float64, dag.Dim())
	for i := 0; i < m; i++ { // closed sets decoded from scores linear in x
		for v := range u {
			u[v] = X[i*n+v%n] - 0.3*float64(v) + 0.5*r.NormFloat64()
		}
		dag.Decode(u, ys[i*dag.Width():(i+1)*dag.Width()])
	}
	w := weights(r, m)
	for _, c := range []struct {
		name string
		opt  func(*Options)
	}{
		{"linear exact", func(o *Options) { o.Solver = Exact }},
		{"linear cg", func(o *Options) { o.Solver = CG }},
		{"rbf", func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5} }},
	} {
		opt := baseOptions()
		opt.EmpiricalWeight = 1
		c.opt(&opt)
		got, err := Fit(dag, X, m, n, ys, w, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := Fit(labels, X, m, n, ys, w, opt)
		if err != nil {
			t.Fatal(err)
		}
		scores, wantScores := make([]float64, m*dag.Dim()), make([]float64, m*dag.Dim())
		if err := got.Decision(X, m, n, scores); err != nil {
			t.Fatal(err)
		}
		if err := want.Decision(X, m, n, wantScores); err != nil {
			t.Fatal(err)
		}
		var diff, top float64
		for i := range scores {
			diff = math.Max(diff, math.Abs(scores[i]-wantScores[i]))
			top = math.Max(top, math.Abs(wantScores[i]))
		}
		if diff > 1e-10*top {
			t.Errorf("%s: scores differ from the multi-label fit by %.2e (largest %.2e)", c.name, diff, top)
		}
		pred := make([]int64, m*dag.Width())
		if err := got.Predict(X, m, n, pred, nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			row := pred[i*dag.Width() : (i+1)*dag.Width()]
			if err := dag.Validate(row); err != nil {
				t.Fatalf("%s: prediction %v: %v", c.name, row, err)
			}
			best := make([]int64, dag.Width())
			dag.Decode(scores[i*dag.Dim():(i+1)*dag.Dim()], best)
			for v := range row {
				if row[v] != best[v] {
					t.Fatalf("%s row %d: predicted %v, the decoder gives %v", c.name, i, row, best)
				}
			}
		}
		M := make([]float64, m*dag.Dim())
		if err := got.Marginals(X, m, n, M, nil, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatal(err)
		}
		for _, v := range M {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("%s: marginal %v", c.name, v)
			}
		}
	}
	opt := baseOptions()
	opt.Solver, opt.EmpiricalWeight = Exact, 1
	first, err := PartialFit(nil, dag, X[:20*n], 20, n, ys[:20*dag.Width()], w[:20], opt)
	if err != nil {
		t.Fatal(err)
	}
	both, err := PartialFit(first, dag, X[20*n:], m-20, n, ys[20*dag.Width():], w[20:], opt)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Fit(dag, X, m, n, ys, w, opt)
	if e := relDiff(both.Coef, full.Coef); e > 1e-10 {
		t.Errorf("partial_fit in two chunks differs from fit by %.2e", e)
	}
	for _, bad := range []func(*Options){
		func(o *Options) { o.EmpiricalWeight = 0 },
		func(o *Options) { o.EmpiricalWeight = 0.5 },
		func(o *Options) { o.EmpiricalWeight, o.Reference = 1, Product },
	} {
		o := baseOptions()
		bad(&o)
		if _, err := Fit(dag, X, m, n, ys, w, o); !errors.Is(err, space.ErrUncounted) {
			t.Errorf("empirical_weight %v reference %v: got %v, want ErrUncounted", o.EmpiricalWeight, o.Reference, err)
		}
	}
}

// Statistics merged from chunks solve an uncounted space exactly as Fit does, with the same
// refusal of every reference that needs the uniform measure.
func TestUncountedSpaceStatistics(t *testing.T) {
	dag, err := space.NewDAGSubsets([][]int{nil, {0}, {0}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 30, 2
	r := rand.New(rand.NewPCG(7, 8))
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	ys := make([]int64, m*4)
	u := make([]float64, 4)
	for i := 0; i < m; i++ {
		for v := range u {
			u[v] = X[i*n+v%n] + 0.3*r.NormFloat64()
		}
		dag.Decode(u, ys[i*4:(i+1)*4])
	}
	opt := baseOptions()
	opt.Solver, opt.EmpiricalWeight = Exact, 1
	a, err := NewStats(dag, n, nil, 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewStats(dag, n, nil, 0, opt)
	if a, err = a.Add(X[:12*n], 12, n, ys[:12*4], nil, nil); err != nil {
		t.Fatal(err)
	}
	if b, err = b.Add(X[12*n:], m-12, n, ys[12*4:], nil, nil); err != nil {
		t.Fatal(err)
	}
	merged, err := MergeStats(a, b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := merged.Solve(opt)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Fit(dag, X, m, n, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(got.Coef, want.Coef); e > 1e-10 {
		t.Errorf("merged statistics differ from Fit by %.2e", e)
	}
	bad := opt
	bad.EmpiricalWeight = 0
	if _, err := merged.Solve(bad); !errors.Is(err, space.ErrUncounted) {
		t.Errorf("empirical_weight 0: got %v, want ErrUncounted", err)
	}
}
