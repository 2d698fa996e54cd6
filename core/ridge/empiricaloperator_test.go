package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The sparse operator of an empirical reference is its dense covariance, product for product, for
// pure and mixed references on spaces large enough to use it; and fits through it equal fits
// through the dense matrix.
func TestEmpiricalOperatorEqualsDenseCovariance(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	parent := make([]int64, 150)
	parent[0] = -1
	for v := 1; v < len(parent); v++ {
		parent[v] = int64(r.IntN(v))
	}
	for _, c := range []struct {
		kind   string
		params []int64
	}{
		{"multilabel", []int64{120}},
		{"subtrees", parent},
		{"permutations", []int64{14}},
	} {
		sp, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		const m, n = 20, 4 // few structures against d²: the sparse products are cheaper
		X, ys := synthetic(t, sp, m, n, 3)
		wts := weights(r, m)
		for _, w := range []float64{1, 0.4} {
			opt := baseOptions()
			opt.EmpiricalWeight, opt.Solver = w, CG
			p := preparedProblem(t, sp, X, m, n, ys, wts, &opt)
			op := p.ref.op
			if op == nil {
				t.Fatalf("%s w=%v: no sparse operator (d = %d)", c.kind, w, sp.Dim())
			}
			d := sp.Dim()
			v, got, want := make([]float64, d), make([]float64, d), make([]float64, d)
			for trial := 0; trial < 5; trial++ {
				for a := range v {
					v[a] = r.NormFloat64()
				}
				op.MulVec(got, v)
				denseOperator{p.ref.cov}.MulVec(want, v)
				var diff, top float64
				for a := range got {
					diff = math.Max(diff, math.Abs(got[a]-want[a]))
					top = math.Max(top, math.Abs(want[a]))
				}
				if diff > 1e-12*top {
					t.Fatalf("%s w=%v: S v differs from the dense product by %.2e (largest %.2e)", c.kind, w, diff, top)
				}
			}
			V := mat.NewDense(300, d, nil) // more rows than one block of mulRows
			for i := range V.RawMatrix().Data {
				V.RawMatrix().Data[i] = r.NormFloat64()
			}
			got2, want2 := mat.NewDense(300, d, nil), mat.NewDense(300, d, nil)
			op.mulRows(got2, V)
			want2.Mul(V, p.ref.cov)
			if e := relDiff(got2, want2); e > 1e-12 {
				t.Fatalf("%s w=%v: V·S differs from the dense product by %.2e", c.kind, w, e)
			}
			VT, got3, want3 := mat.NewDense(d, 1100, nil), mat.NewDense(d, 1100, nil), mat.NewDense(d, 1100, nil)
			for i := range VT.RawMatrix().Data { // more columns than one block of mulCols
				VT.RawMatrix().Data[i] = r.NormFloat64()
			}
			op.mulCols(got3, VT)
			want3.Mul(p.ref.cov, VT)
			if e := relDiff(got3, want3); e > 1e-12 {
				t.Fatalf("%s w=%v: S·X differs from the dense product by %.2e", c.kind, w, e)
			}
			for _, k := range []kernel.Kernel{{Kind: kernel.Linear}, {Kind: kernel.RBF, Gamma: 0.3}} {
				o := opt
				o.Kernel = k
				sparse, err := Fit(sp, X, m, n, ys, wts, o)
				if err != nil {
					t.Fatal(err)
				}
				sparseReference = false
				dense, err := Fit(sp, X, m, n, ys, wts, o)
				sparseReference = true
				if err != nil {
					t.Fatal(err)
				}
				a, b := make([]float64, m*d), make([]float64, m*d)
				_ = sparse.Decision(X, m, n, a)
				_ = dense.Decision(X, m, n, b)
				var diff, top float64
				for i := range a {
					diff = math.Max(diff, math.Abs(a[i]-b[i]))
					top = math.Max(top, math.Abs(b[i]))
				}
				if diff > 1e-7*top {
					t.Errorf("%s w=%v %v: scores differ from the dense fit by %.2e (largest %.2e)", c.kind, w, k.Kind, diff, top)
				}
			}
		}
	}
}

// The rank of a pure empirical reference taken from the m×m Gram matrix of its structures equals
// the rank of its d×d covariance, with fewer structures than d and with weights of zero.
func TestEmpiricalGramRank(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	sp, err := space.New("multilabel", []int64{60})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 2, 7, 30} {
		const n = 3
		X, ys := synthetic(t, sp, m, n, uint64(m))
		wts := weights(r, m)
		wts[0] = 0
		if m == 1 {
			wts[0] = 1
		}
		opt := baseOptions()
		opt.EmpiricalWeight, opt.Solver = 1, CG
		p := preparedProblem(t, sp, X, m, n, ys, wts, &opt)
		if p.ref.op == nil {
			t.Fatalf("m=%d: no sparse operator", m)
		}
		if got, want := symRank(p.ref.op.gram()), symRank(p.ref.cov); got != want || p.ref.rank != want {
			t.Errorf("m=%d: rank %d from the Gram matrix, %d stored, %d from S", m, got, p.ref.rank, want)
		}
	}
}

// preparedProblem is the Problem a fit of X (m×n) and ys with opt builds.
func preparedProblem(t *testing.T, sp space.Space, X []float64, m, n int, ys []int64, wts []float64, opt *Options) *Problem {
	t.Helper()
	xm, err := denseInput(X, m, n)
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepareProblem(sp, xm, ys, wts, opt, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
