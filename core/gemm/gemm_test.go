package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/mat"
)

// fmaRows8 must compute exactly (bit for bit) the fused multiply–add sequence its doc comment
// states, on every length the loops split differently (16-column body, 4-column tail).
func TestFMARows8(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2/FMA on this processor")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{4, 8, 12, 16, 20, 28, 32, 36, 64, 100, 132} {
		const stride = 141
		k := make([]float64, 8*stride)
		for i := range k {
			k[i] = r.NormFloat64()
		}
		var a [8]float64
		for i := range a {
			a[i] = r.NormFloat64()
		}
		c := make([]float64, n+1)
		for i := range c {
			c[i] = r.NormFloat64()
		}
		want := make([]float64, n+1)
		copy(want, c)
		for j := 0; j < n; j++ {
			kt := func(t int) float64 { return k[t*stride+j] }
			lo := math.FMA(a[3], kt(3), math.FMA(a[2], kt(2), math.FMA(a[1], kt(1), math.FMA(a[0], kt(0), want[j]))))
			hi := math.FMA(a[7], kt(7), math.FMA(a[6], kt(6), math.FMA(a[5], kt(5), a[4]*kt(4))))
			want[j] = lo + hi
		}
		fmaRows8(&c[0], &k[0], stride, n, &a)
		for j := range c {
			if c[j] != want[j] {
				t.Fatalf("n=%d: c[%d] = %v, want %v", n, j, c[j], want[j])
			}
		}
	}
}

// The product must not depend on the number of threads, which moves the column-block boundaries.
func TestMulThreadIndependent(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(5, 6))
	const q, m = 14, 1283
	K, X := randDense(r, m, m), randDense(r, q, m)
	var first *mat.Dense
	for _, threads := range []int{1, 2, 3, 7} {
		parallel.SetThreads(threads)
		got := mat.NewDense(q, m, nil)
		Mul(got.RawMatrix(), X.RawMatrix(), K.RawMatrix())
		if first == nil {
			first = got
			continue
		}
		if !mat.Equal(first, got) {
			t.Errorf("%d threads: result differs from 1 thread (max %.3g)", threads, maxAbsDiff(first, got))
		}
	}
}

// BenchmarkMul times the product the kernel CG solver spends its time in, at the size of
// the yeast training set (m = 1500, d = 14), with the vector kernel (where the processor has one)
// and with the portable loop.
func BenchmarkMul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const q, m = 14, 1500
	K, X := randDense(r, m, m), randDense(r, q, m)
	C := mat.NewDense(q, m, nil)
	run := func(b *testing.B) {
		for b.Loop() {
			Mul(C.RawMatrix(), X.RawMatrix(), K.RawMatrix())
		}
		b.ReportMetric(float64(2*q*m*m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	if haveFMA {
		b.Run("fma", run)
	}
	b.Run("portable", func(b *testing.B) {
		defer setHaveFMA(setHaveFMA(false))
		run(b)
	})
}

// Mul and MulAdd must agree with gonum's product for any shape, including sizes that are not
// multiples of the unrolling or the tiles, strided views, and both kernels.
func TestMul(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, fma := range []bool{true, false} {
		old := setHaveFMA(fma)
		for _, c := range []struct{ q, p, m int }{{1, 1, 1}, {3, 7, 7}, {14, 9, 9}, {5, 300, 300}, {14, 641, 641},
			{26, 1283, 1283}, {130, 103, 150}, {1000, 20, 3}, {70, 17, 700}} {
			B := randDense(r, c.p, c.m)
			big := randDense(r, c.q+2, c.p+3)
			X := big.Slice(1, c.q+1, 2, c.p+2).(*mat.Dense) // a strided view
			want := mat.NewDense(c.q, c.m, nil)
			want.Mul(X, B)
			gotBig := mat.NewDense(c.q+1, c.m+5, nil)
			got := gotBig.Slice(1, c.q+1, 1, c.m+1).(*mat.Dense)
			gotBig.Set(0, 0, math.NaN()) // outside the view: must be left alone
			for i := 0; i < c.q; i++ {
				for j := 0; j < c.m; j++ {
					got.Set(i, j, math.NaN()) // Mul must overwrite, not accumulate
				}
			}
			Mul(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			tol := 1e-13 * math.Sqrt(float64(c.p)) * math.Max(1, mat.Norm(want, math.Inf(1)))
			if diff := maxAbsDiff(got, want); !(diff <= tol) {
				t.Errorf("fma=%v %d×%d·%d×%d: differs from gonum by %.3g", fma, c.q, c.p, c.p, c.m, diff)
			}
			MulAdd(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			want.Scale(2, want)
			if diff := maxAbsDiff(got, want); !(diff <= 2*tol) {
				t.Errorf("fma=%v %d×%d·%d×%d: MulAdd differs from 2·X·B by %.3g", fma, c.q, c.p, c.p, c.m, diff)
			}
			if !math.IsNaN(gotBig.At(0, 0)) || gotBig.At(c.q, c.m+1) != 0 {
				t.Errorf("%d×%d: wrote outside the destination", c.q, c.m)
			}
		}
		setHaveFMA(old)
	}
}

// fmaRowsSpan must do fmaRows8's arithmetic group after group on the columns its masks select,
// and neither read nor write the others (NaN there would show).
func TestFMARowsSpan(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2/FMA on this processor")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, w := range []int{1, 3, 4, 5, 8, 13, 16} {
		for _, groups := range []int{1, 2, 7} {
			const stride = 23
			k := make([]float64, 8*groups*stride)
			for i := range k {
				k[i] = math.NaN()
				if i%stride < w {
					k[i] = r.NormFloat64()
				}
			}
			x := make([]float64, 8*groups)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			c := make([]float64, 17)
			for i := range c {
				c[i] = math.NaN()
				if i < w {
					c[i] = r.NormFloat64()
				}
			}
			want := append([]float64(nil), c...)
			for g := 0; g < groups; g++ {
				a := x[8*g:]
				for j := 0; j < w; j++ {
					kt := func(t int) float64 { return k[(8*g+t)*stride+j] }
					lo := math.FMA(a[3], kt(3), math.FMA(a[2], kt(2), math.FMA(a[1], kt(1), math.FMA(a[0], kt(0), want[j]))))
					hi := math.FMA(a[7], kt(7), math.FMA(a[6], kt(6), math.FMA(a[5], kt(5), a[4]*kt(4))))
					want[j] = lo + hi
				}
			}
			var masks [4][4]uint64
			for j := 0; j < w; j++ {
				masks[j/4][j%4] = ^uint64(0)
			}
			fmaRowsSpan(&c[0], &k[0], stride, groups, &x[0], &masks)
			for j := range c {
				if j < w && c[j] != want[j] || j >= w && !math.IsNaN(c[j]) {
					t.Fatalf("w=%d groups=%d: c[%d] = %v, want %v", w, groups, j, c[j], want[j])
				}
			}
		}
	}
}

// A row's products are the same, bit for bit, whether the row is multiplied alone (mulRow, a
// single prediction) or among others, for every remainder of p mod 8 and across column tiles.
func TestMulOneRowIsARowOfTheProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for _, p := range []int{1, 5, 8, 9, 15, 16, 103, 1500} {
		for _, m := range []int{1, 3, 14, 16, 17, 33, 700} {
			B := randDense(r, p, m+2).Slice(0, p, 1, m+1).(*mat.Dense)
			X := randDense(r, 3, p)
			all := mat.NewDense(3, m, nil)
			Mul(all.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			added := mat.DenseCopyOf(all)
			MulAdd(added.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			for i := 0; i < 3; i++ {
				xi := X.Slice(i, i+1, 0, p).(*mat.Dense)
				row := mat.NewDense(1, m, nil)
				Mul(row.RawMatrix(), xi.RawMatrix(), B.RawMatrix())
				if !mat.Equal(row, all.Slice(i, i+1, 0, m)) {
					t.Fatalf("p=%d m=%d: row %d alone differs from its row of the product", p, m, i)
				}
				MulAdd(row.RawMatrix(), xi.RawMatrix(), B.RawMatrix())
				if !mat.Equal(row, added.Slice(i, i+1, 0, m)) {
					t.Fatalf("p=%d m=%d: MulAdd of row %d alone differs from its row of MulAdd", p, m, i)
				}
			}
		}
	}
}

func randDense(r *rand.Rand, rows, cols int) *mat.Dense {
	a := mat.NewDense(rows, cols, nil)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			a.Set(i, j, r.NormFloat64())
		}
	}
	return a
}

func maxAbsDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1)) // the largest row sum bounds every entry
}
