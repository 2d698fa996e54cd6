package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// Every kernel value is computed the same way whatever the operands around it: with the transpose
// of b given or not, for a whole block of rows or each row alone, on one thread or several (every
// route of products runs below: rows against bT, without it a few rows as dstᵀ = b·aᵀ and more
// against blocks of b transposed in turn, and gemm.MulT beyond 512 features). So a
// single prediction, a block of predictions and the training Gram matrix agree bit for bit. The
// shapes cross the panel kernel's chunk of features and its blocks of 4 rows, 24 and 64 columns.
func TestProductsAgreeWhateverTheOperands(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(5, 6))
	dense := func(rows, cols int) *mat.Dense {
		x := mat.NewDense(rows, cols, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = r.NormFloat64()
		}
		return x
	}
	kernels := []Kernel{{Kind: Linear}, {Kind: RBF, Gamma: 0.05}, {Kind: Poly, Gamma: 0.1, Degree: 2, Coef0: 1}}
	for _, c := range []struct{ q, m, p int }{
		{1, 1, 1}, {1, 40, 3}, {3, 25, 103}, {9, 7, 256}, {30, 50, 257}, {64, 3, 600}, {5, 300, 40}, {2, 150, 300},
		{20, 700, 30}, {12, 70, 512}, {12, 70, 513}, {1, 600, 64},
	} {
		a, b := dense(c.q, c.p), dense(c.m, c.p)
		bT := mat.DenseCopyOf(b.T())
		for _, k := range kernels {
			parallel.SetThreads(1)
			want := mat.NewDense(c.q, c.m, nil)
			k.GramX(want, xmat.Matrix{Dense: a}, xmat.Matrix{Dense: b, DenseT: bT}, nil)
			// the plain sums, to rounding
			for i := 0; i < c.q; i++ {
				for j := 0; j < c.m; j++ {
					var dot, na, nb float64
					for l := 0; l < c.p; l++ {
						dot += a.At(i, l) * b.At(j, l)
						na += a.At(i, l) * a.At(i, l)
						nb += b.At(j, l) * b.At(j, l)
					}
					v := dot
					switch k.Kind {
					case RBF:
						v = math.Exp(-k.Gamma * (na + nb - 2*dot))
					case Poly:
						v = math.Pow(k.Gamma*dot+k.Coef0, float64(k.Degree))
					}
					if got := want.At(i, j); math.Abs(got-v) > 1e-10*(1+math.Abs(v)) {
						t.Fatalf("%v %+v: K[%d, %d] = %v, the plain sum gives %v", k.Kind, c, i, j, got, v)
					}
				}
			}
			for _, threads := range []int{1, 2, 3} {
				parallel.SetThreads(threads)
				got := mat.NewDense(c.q, c.m, nil)
				k.GramNorms(got, a, b, SquaredNorms(b))
				if !mat.Equal(got, want) {
					t.Errorf("%v %+v, %d threads: without bᵀ the values differ", k.Kind, c, threads)
				}
				k.GramX(got, xmat.Matrix{Dense: a}, xmat.Matrix{Dense: b, DenseT: bT}, nil)
				if !mat.Equal(got, want) {
					t.Errorf("%v %+v, %d threads: with bᵀ the values differ from one thread's", k.Kind, c, threads)
				}
				for i := 0; i < c.q; i++ {
					ai := a.Slice(i, i+1, 0, c.p).(*mat.Dense)
					for _, bt := range []*mat.Dense{nil, bT} {
						row := mat.NewDense(1, c.m, nil)
						k.GramX(row, xmat.Matrix{Dense: ai}, xmat.Matrix{Dense: b, DenseT: bt}, nil)
						if !mat.Equal(row, want.Slice(i, i+1, 0, c.m)) {
							t.Fatalf("%v %+v, %d threads: row %d alone (bᵀ given: %v) differs from its block", k.Kind, c, threads, i, bt != nil)
						}
					}
				}
			}
		}
	}
}
