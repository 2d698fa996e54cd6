package ridge

import (
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// design.gram is X̃ᵀ diag(s) X̃ (X̃ = [X 1] with an intercept) for row counts below, at and across
// its block of rows, with and without the intercept, with unit weights (read in place) and others.
func TestDesignGram(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 7
	for _, m := range []int{1, 5, 4 * 8192, 4*8192 + 5, 2*4*8192 + 3} {
		X := randDense(r, m, n)
		weighted, unit := make([]float64, m), make([]float64, m)
		for i := range weighted {
			weighted[i], unit[i] = r.Float64()*2, 1
		}
		for _, c := range []struct {
			s         []float64
			intercept bool
		}{{weighted, false}, {weighted, true}, {unit, false}, {unit, true}} { // unit weights skip diag(s)·X's copy
			s, intercept := c.s, c.intercept
			des := design{X: X, intercept: intercept}
			k := des.cols()
			xt := mat.NewDense(m, k, nil)
			xt.Slice(0, m, 0, n).(*mat.Dense).Copy(X)
			sx := mat.NewDense(m, k, nil)
			for i := 0; i < m; i++ {
				if intercept {
					xt.Set(i, n, 1)
				}
				for j := 0; j < k; j++ {
					sx.Set(i, j, s[i]*xt.At(i, j))
				}
			}
			var want mat.Dense
			want.Mul(xt.T(), sx)
			got := des.gram(s)
			for a := 0; a < k; a++ {
				for b := 0; b < k; b++ {
					if diff := got.At(a, b) - want.At(a, b); diff > 1e-9*float64(m) || diff < -1e-9*float64(m) {
						t.Fatalf("m=%d intercept=%v: G[%d,%d] = %v, want %v", m, intercept, a, b, got.At(a, b), want.At(a, b))
					}
				}
			}
		}
	}
}

// With [X 1] held explicitly (withOnes), mul and tmul are the same sums in the same order: the
// products equal those of the implicit column to the last bit, for outputs of every width the
// kernels split (24, 12 and masked columns) and across tmul's blocks of rows; where MulTN sums a
// tall X in slabs, the intercept's row is summed slab by slab, equal to rounding.
func TestDesignWithOnesIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const n = 9
	for _, c := range []struct{ m, d int }{{1, 1}, {37, 70}, {300, 1000}, {1<<18 + 3, 13}} {
		X := randDense(r, c.m, n)
		des := design{X: X, intercept: true}
		ones := des.withOnes()
		if ones.ones == nil {
			t.Fatal("withOnes kept the intercept implicit")
		}
		W := randDense(r, n+1, c.d)
		U, Uo := mat.NewDense(c.m, c.d, nil), mat.NewDense(c.m, c.d, nil)
		des.mul(U, W)
		ones.mul(Uo, W)
		G := randDense(r, c.m, c.d)
		T, To := mat.NewDense(n+1, c.d, nil), mat.NewDense(n+1, c.d, nil)
		des.tmul(T, G)
		ones.tmul(To, G)
		slabs := c.m >= 2*8192 && (n+1)*c.d <= 4096
		if !mat.Equal(U, Uo) || !slabs && !mat.Equal(T, To) || !mat.EqualApprox(T, To, 1e-12*float64(c.m)) {
			t.Errorf("%d×%d, %d outputs: the products with [X 1] differ from the implicit column's", c.m, n, c.d)
		}
	}
	if d := (design{X: randDense(r, 3, 2)}).withOnes(); d.ones != nil {
		t.Error("withOnes added a column without an intercept")
	}
}

// The wide-output form of H (linearHessian with [X 1] explicit and, for the diagonal covariances,
// the curvature applied in place over X̃V) equals H V written from its definition,
// 2αE V + Σ_i s_i x̃_i ((S + δ_iδ_iᵀ) Vᵀx̃_i)ᵀ, on spaces with and without an in-place curvature.
func TestWideHessianMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const m, n, alpha = 150, 5, 0.7
	defer func(old int) { sparseTargetMode = old }(sparseTargetMode)
	sparseTargetMode = sparseTargetNever // the form checked here, whatever the targets' sparsity
	for _, c := range []struct {
		kind    string
		size    int64
		inPlace bool
	}{{"multilabel", 80, true}, {"multiclass", 70, true}, {"ksubsets", 70, true}, {"permutations", 12, false}} {
		sizes := []int64{c.size}
		if c.kind == "ksubsets" {
			sizes = []int64{c.size, 3}
		}
		sp, err := space.New(c.kind, sizes)
		if err != nil {
			t.Fatal(err)
		}
		X, ys := synthetic(t, sp, m, n, 7)
		p, err := NewProblem(sp, ys, m, weights(r, m), alpha)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.curvatureInPlace(); got != c.inPlace {
			t.Fatalf("%s: curvatureInPlace %v, want %v", c.kind, got, c.inPlace)
		}
		_, d := p.dims()
		des := design{X: mat.NewDense(m, n, X), intercept: true}
		h, _ := linearHessian(p, des, des.gram(p.Weight))
		if ls, ok := h.(*linearSystem); !ok || ls.des.ones == nil {
			t.Fatalf("%s (d = %d): linearHessian chose %T without [X 1]", c.kind, d, h)
		}
		V := randDense(r, n+1, d)
		got := mat.NewDense(n+1, d, nil)
		h.apply(got, V)
		want := mat.NewDense(n+1, d, nil)
		xt, u, su := make([]float64, n+1), make([]float64, d), make([]float64, d)
		for i := 0; i < m; i++ {
			copy(xt, X[i*n:(i+1)*n])
			xt[n] = 1
			for a := range u {
				u[a] = 0
				for j, x := range xt {
					u[a] += x * V.At(j, a)
				}
			}
			p.Cov.MulVec(su, u)
			delta := p.Delta.RawRowView(i)
			var du float64
			for a := range u {
				du += delta[a] * u[a]
			}
			for j, x := range xt {
				for a := range su {
					want.Set(j, a, want.At(j, a)+p.Weight[i]*x*(su[a]+du*delta[a]))
				}
			}
		}
		for j := 0; j < n; j++ {
			for a := 0; a < d; a++ {
				want.Set(j, a, want.At(j, a)+2*alpha*V.At(j, a))
			}
		}
		if diff := relDiff(got, want); diff > 1e-12 {
			t.Errorf("%s (d = %d): H V differs from its definition by %.3g relative", c.kind, d, diff)
		}
	}
}

// Unit weights read X in place where other weights copy diag(s)·X first: the copy of X·1 holds
// X's values, and the product is the same to the last bit (shapes on both sides of the kernels'
// slab and panel paths).
func TestDesignGramUnitWeightsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range []struct{ m, n int }{{5, 7}, {3000, 50}, {40000, 13}, {700, 300}} {
		X := randDense(r, c.m, c.n)
		ones := make([]float64, c.m)
		for i := range ones {
			ones[i] = 1
		}
		got := design{X: X}.gram(ones)
		top := mat.NewDense(c.n, c.n, nil)
		for lo := 0; lo < c.m; lo += 4 * 8192 { // gram's blocks of rows, each copied as diag(s)·X is
			rows := X.Slice(lo, min(lo+4*8192, c.m), 0, c.n).(*mat.Dense)
			gemm.MulTNUpperAdd(top.RawMatrix(), mat.DenseCopyOf(rows).RawMatrix(), rows.RawMatrix())
		}
		for a := 0; a < c.n; a++ {
			for b := a; b < c.n; b++ {
				if got.At(a, b) != top.At(a, b) {
					t.Fatalf("%d×%d: G[%d,%d] = %v in place, %v from the copy", c.m, c.n, a, b, got.At(a, b), top.At(a, b))
				}
			}
		}
	}
}
