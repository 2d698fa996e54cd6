package ridge

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
func TestMulRowsByGramThreadIndependent(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(5, 6))
	const q, m = 14, 1283
	K, X := randDense(r, m, m), randDense(r, q, m)
	var first *mat.Dense
	for _, threads := range []int{1, 2, 3, 7} {
		parallel.SetThreads(threads)
		got := mat.NewDense(q, m, nil)
		mulRowsByGram(got.RawMatrix(), X.RawMatrix(), K.RawMatrix())
		if first == nil {
			first = got
			continue
		}
		if !mat.Equal(first, got) {
			t.Errorf("%d threads: result differs from 1 thread (max %.3g)", threads, maxAbsDiff(first, got))
		}
	}
}

// BenchmarkMulRowsByGram times the product the kernel CG solver spends its time in, at the size of
// the yeast training set (m = 1500, d = 14), with the vector kernel (where the processor has one)
// and with the portable loop.
func BenchmarkMulRowsByGram(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const q, m = 14, 1500
	K, X := randDense(r, m, m), randDense(r, q, m)
	C := mat.NewDense(q, m, nil)
	run := func(b *testing.B) {
		for b.Loop() {
			mulRowsByGram(C.RawMatrix(), X.RawMatrix(), K.RawMatrix())
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
