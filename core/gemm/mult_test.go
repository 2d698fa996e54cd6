package gemm

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// dot2x6 must compute exactly (bit for bit) the sums its doc comment states, on every length its
// loops split differently (whole vectors, a masked tail of 1–3 terms, none at all), and must not
// read past n: the rows end there, followed by NaN that would poison any sum that touched it.
func TestDot2x6(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2/FMA on this processor")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 101, 256} {
		var rows [8]*float64
		var vals [8][]float64
		for k := range rows {
			v := make([]float64, n+4)
			for j := range v {
				v[j] = math.NaN()
			}
			for j := 0; j < n; j++ {
				v[j] = r.NormFloat64()
			}
			vals[k] = v
			rows[k] = &v[0]
		}
		var out [12]float64
		dot2x6(&rows, n, &tailMasks[n&3], &out)
		for a := 0; a < 2; a++ {
			for c := 0; c < 6; c++ {
				var lane [4]float64
				for j := 0; j < n; j++ {
					lane[j&3] = math.FMA(vals[a][j], vals[2+c][j], lane[j&3])
				}
				want := (lane[0] + lane[2]) + (lane[1] + lane[3])
				if got := out[6*a+c]; got != want {
					t.Fatalf("n=%d: out[%d] = %v, want %v", n, 6*a+c, got, want)
				}
			}
		}
	}
}

// dot1x12 must compute exactly dot2x6's sums for its one row, on strided rows of B, without
// reading past n (NaN follows every row).
func TestDot1x12(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2/FMA on this processor")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 101, 103, 256} {
		stride := n + 3
		a := make([]float64, n+4)
		b := make([]float64, 12*stride+4)
		for _, v := range [][]float64{a, b} {
			for j := range v {
				v[j] = math.NaN()
			}
		}
		for j := 0; j < n; j++ {
			a[j] = r.NormFloat64()
			for c := 0; c < 12; c++ {
				b[c*stride+j] = r.NormFloat64()
			}
		}
		var out [12]float64
		dot1x12(&a[0], &b[0], stride, n, &tailMasks[n&3], &out)
		for c := 0; c < 12; c++ {
			var lane [4]float64
			for j := 0; j < n; j++ {
				lane[j&3] = math.FMA(a[j], b[c*stride+j], lane[j&3])
			}
			if want := (lane[0] + lane[2]) + (lane[1] + lane[3]); out[c] != want {
				t.Fatalf("n=%d: out[%d] = %v, want %v", n, c, out[c], want)
			}
		}
	}
}

// A row's products are the same, bit for bit, whether the row is multiplied alone (mulTRow, a
// single prediction) or among others (mulTCols), with and without the 512-bit kernels.
func TestMulTOneRowIsARowOfTheProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, avx512 := range []bool{true, false} {
		old := setHaveAVX512(avx512)
		for _, p := range []int{1, 3, 4, 5, 103, 255, 300, 513, 1283} {
			for _, m := range []int{1, 5, 11, 12, 13, 25, 150} {
				B := randDense(r, m+1, p+3).Slice(1, m+1, 1, p+1).(*mat.Dense)
				X := randDense(r, 3, p)
				all := mat.NewDense(3, m, nil)
				MulT(all.RawMatrix(), X.RawMatrix(), B.RawMatrix())
				added := mat.DenseCopyOf(all)
				MulTAdd(added.RawMatrix(), X.RawMatrix(), B.RawMatrix())
				for i := 0; i < 3; i++ {
					row := mat.NewDense(1, m, nil)
					xi := X.Slice(i, i+1, 0, p).(*mat.Dense)
					MulT(row.RawMatrix(), xi.RawMatrix(), B.RawMatrix())
					if !mat.Equal(row, all.Slice(i, i+1, 0, m)) {
						t.Fatalf("avx512=%v p=%d m=%d: row %d alone differs from its row of the product", avx512, p, m, i)
					}
					MulTAdd(row.RawMatrix(), xi.RawMatrix(), B.RawMatrix())
					if !mat.Equal(row, added.Slice(i, i+1, 0, m)) {
						t.Fatalf("avx512=%v p=%d m=%d: MulTAdd of row %d alone differs from its row of MulTAdd", avx512, p, m, i)
					}
				}
			}
		}
		setHaveAVX512(old)
	}
}

// dot2x6z must compute exactly the sums its doc comment states: eight lanes over the first ⌊n/8⌋·8
// terms, folded to four, then dot2x6's four lanes and masked tail, without reading past n.
func TestDot2x6z(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 on this processor")
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 12, 15, 16, 17, 23, 24, 63, 64, 101, 256, 512} {
		var rows [8]*float64
		var vals [8][]float64
		for k := range rows {
			v := make([]float64, n+8)
			for j := range v {
				v[j] = math.NaN()
			}
			for j := 0; j < n; j++ {
				v[j] = r.NormFloat64()
			}
			vals[k] = v
			rows[k] = &v[0]
		}
		var out [12]float64
		dot2x6z(&rows, n, &tailMasks[n&3], &out)
		n8 := n &^ 7
		for a := 0; a < 2; a++ {
			for c := 0; c < 6; c++ {
				var lane8 [8]float64
				for j := 0; j < n8; j++ {
					lane8[j&7] = math.FMA(vals[a][j], vals[2+c][j], lane8[j&7])
				}
				var lane [4]float64
				for l := range lane {
					lane[l] = lane8[l] + lane8[l+4]
				}
				for j := n8; j < n; j++ {
					lane[j&3] = math.FMA(vals[a][j], vals[2+c][j], lane[j&3])
				}
				want := (lane[0] + lane[2]) + (lane[1] + lane[3])
				if got := out[6*a+c]; got != want {
					t.Fatalf("n=%d: out[%d] = %v, want %v", n, 6*a+c, got, want)
				}
			}
		}
	}
}

// MulT must agree with gonum's X·Bᵀ for any shape: rows of X not a multiple of the kernel's two,
// rows of B not a multiple of its six, lengths with a masked tail, several chunks and panels,
// strided views, and both kernels.
func TestMulT(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, kern := range []struct{ fma, avx512 bool }{{true, true}, {true, false}, {false, false}} {
		fma := kern.fma
		old, oldAVX := setHaveFMA(fma), setHaveAVX512(kern.avx512)
		for _, c := range []struct{ q, p, m int }{{1, 1, 1}, {1, 3, 5}, {2, 4, 6}, {3, 7, 7}, {14, 9, 9}, {5, 300, 301},
			{14, 641, 643}, {15, 1283, 1283}, {130, 103, 150}, {1000, 20, 3}, {70, 17, 700}, {4, 0, 5}} {
			B := randDense(r, c.m+1, c.p+3).Slice(1, c.m+1, 1, c.p+1).(*mat.Dense)
			var X *mat.Dense
			if c.p == 0 {
				X = &mat.Dense{}
				X.SetRawMatrix(blasGeneral(c.q, 0))
			} else {
				X = randDense(r, c.q+2, c.p+3).Slice(1, c.q+1, 2, c.p+2).(*mat.Dense) // a strided view
			}
			want := mat.NewDense(c.q, c.m, nil)
			if c.p > 0 {
				want.Mul(X, B.T())
			}
			gotBig := mat.NewDense(c.q+1, c.m+5, nil)
			got := gotBig.Slice(1, c.q+1, 1, c.m+1).(*mat.Dense)
			gotBig.Set(0, 0, math.NaN()) // outside the view: must be left alone
			for i := 0; i < c.q; i++ {
				for j := 0; j < c.m; j++ {
					got.Set(i, j, math.NaN()) // MulT must overwrite, not accumulate
				}
			}
			MulT(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			tol := 1e-13 * math.Sqrt(float64(c.p)) * math.Max(1, mat.Norm(want, math.Inf(1)))
			if diff := maxAbsDiff(got, want); !(diff <= tol) {
				t.Errorf("fma=%v %d×%d·(%d×%d)ᵀ: differs from gonum by %.3g", fma, c.q, c.p, c.m, c.p, diff)
			}
			if !math.IsNaN(gotBig.At(0, 0)) || gotBig.At(c.q, c.m+1) != 0 {
				t.Errorf("%d×%d: wrote outside the destination", c.q, c.m)
			}
			MulTAdd(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			want.Scale(2, want)
			if diff := maxAbsDiff(got, want); !(diff <= 2*tol) {
				t.Errorf("fma=%v %d×%d·(%d×%d)ᵀ: MulTAdd differs from 2·X·Bᵀ by %.3g", fma, c.q, c.p, c.m, c.p, diff)
			}
		}
		setHaveAVX512(oldAVX)
		setHaveFMA(old)
	}
}

// blasGeneral is an empty-column matrix, which mat.NewDense refuses to make.
func blasGeneral(rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: 1}
}

// The product must not depend on the number of threads, which moves the groups of rows of B.
func TestMulTThreadIndependent(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(15, 16))
	const q, m = 15, 1283
	K, X := randDense(r, m, m), randDense(r, q, m)
	var first *mat.Dense
	for _, threads := range []int{1, 2, 3, 7} {
		parallel.SetThreads(threads)
		got := mat.NewDense(q, m, nil)
		MulT(got.RawMatrix(), X.RawMatrix(), K.RawMatrix())
		if first == nil {
			first = got
			continue
		}
		if !mat.Equal(first, got) {
			t.Errorf("%d threads: result differs from 1 thread (max %.3g)", threads, maxAbsDiff(first, got))
		}
	}
}

// BenchmarkMulT times the kernel CG's product with K (symmetric, so X·K = X·Kᵀ = (K·Xᵀ)ᵀ) at the
// size of the yeast training set, as kernel CG takes it (KXt: MulSym, which computes (K·Xᵀ)ᵀ by
// MulPanel on K's rows where the processor has AVX-512F; MulT's dot products before) next to MulT and Mul on the same
// operands, and the Gram matrix's products, which package kernel takes with MulPanel and the
// transposed inputs (Panel; MulT before).
func BenchmarkMulT(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name    string
		q, p, m int
	}{{"cg_14x1500x1500", 14, 1500, 1500}, {"gram_1500x103x1500", 1500, 103, 1500}} {
		B, X := randDense(r, c.m, c.p), randDense(r, c.q, c.p)
		Bt := mat.DenseCopyOf(B.T())
		C := mat.NewDense(c.q, c.m, nil)
		flops := float64(2 * c.q * c.p * c.m)
		b.Run(c.name+"/MulT", func(b *testing.B) {
			for b.Loop() {
				MulT(C.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(c.name+"/MulT-256", func(b *testing.B) { // the 256-bit kernel alone
			defer setHaveAVX512(setHaveAVX512(false))
			for b.Loop() {
				MulT(C.RawMatrix(), X.RawMatrix(), B.RawMatrix())
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(c.name+"/Mul", func(b *testing.B) {
			for b.Loop() {
				Mul(C.RawMatrix(), X.RawMatrix(), Bt.RawMatrix())
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		panel := func(b *testing.B) {
			for b.Loop() {
				MulPanel(C.RawMatrix(), X.RawMatrix(), Bt.RawMatrix())
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		kxt := func(b *testing.B) {
			for b.Loop() {
				MulSym(C.RawMatrix(), X.RawMatrix(), B.RawMatrix()) // B as K: symmetric or not, the same work
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		if c.p == c.m { // B square: K
			b.Run(c.name+"/KXt", kxt)
			b.Run(c.name+"/KXt-256", func(b *testing.B) {
				defer setHaveAVX512(setHaveAVX512(false))
				kxt(b)
			})
		}
		b.Run(c.name+"/Panel", panel)
		b.Run(c.name+"/Panel-256", func(b *testing.B) {
			defer setHaveAVX512(setHaveAVX512(false))
			panel(b)
		})
	}
}

// BenchmarkKernelCeiling runs the vector kernels on operands that stay in the first level of
// cache, on every thread at once (b.RunParallel, one set of operands per goroutine): the rate the
// cores reach when memory is no limit, the ceiling the products are measured against.
func BenchmarkKernelCeiling(b *testing.B) {
	if !haveFMA {
		b.Skip("no AVX2/FMA on this processor")
	}
	const n = 256
	operands := func() (vals []float64, rows [8]*float64) {
		vals = make([]float64, 12*n)
		for i := range vals {
			vals[i] = 1e-3
		}
		for k := range rows {
			rows[k] = &vals[k*n]
		}
		return vals, rows
	}
	b.Run("dot2x6", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			_, rows := operands()
			var out [12]float64
			for pb.Next() {
				dot2x6(&rows, n, &tailMasks[0], &out)
			}
		})
		b.ReportMetric(float64(24*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	if haveAVX512 {
		b.Run("dot2x6z", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				_, rows := operands()
				var out [12]float64
				for pb.Next() {
					dot2x6z(&rows, n, &tailMasks[0], &out)
				}
			})
			b.ReportMetric(float64(24*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run("fma4x24", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				vals, _ := operands()
				c := make([]float64, 96)
				var a, cr [4]*float64
				for r := range 4 {
					a[r], cr[r] = &vals[r], &c[24*r]
				}
				for pb.Next() {
					fma4x24(&a, 4, &vals[0], 24, n/2, &cr, nil)
				}
			})
			b.ReportMetric(float64(96*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	b.Run("fma4x12", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			vals, _ := operands()
			c := make([]float64, 48)
			var a, cr [4]*float64
			for r := range 4 {
				a[r], cr[r] = &vals[r], &c[12*r]
			}
			for pb.Next() {
				fma4x12(&a, 4, &vals[0], 12, n, &cr, nil)
			}
		})
		b.ReportMetric(float64(96*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkMemoryCeiling reads an array of 128 MB per thread, far past the last level of cache,
// through dot2x6 as eight streams, on every thread at once (one array per goroutine, made before
// the timer starts): the read bandwidth that bounds a product whose operands come from memory,
// reported in GB/s.
func BenchmarkMemoryCeiling(b *testing.B) {
	if !haveFMA {
		b.Skip("no AVX2/FMA on this processor")
	}
	const values = 16 << 20
	arrays := make([][]float64, runtime.GOMAXPROCS(0))
	for t := range arrays {
		arrays[t] = make([]float64, values)
		for i := range arrays[t] {
			arrays[t][i] = 1e-3
		}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		vals := arrays[int(next.Add(1)-1)%len(arrays)]
		var rows [8]*float64
		for k := range rows {
			rows[k] = &vals[k*values/8]
		}
		var out [12]float64
		for pb.Next() {
			dot2x6(&rows, values/8, &tailMasks[0], &out)
		}
	})
	b.ReportMetric(8*values*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// dot4x6z and dot4x6y must give each of their 24 sums exactly as dot2x6z and dot2x6 give it, for
// every length (the eight-lane part, the four-lane steps, every masked tail), strided rows and NaN
// past the end.
func TestDot4x6IsDot2x6(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 on this processor")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, k := range []struct {
		name   string
		four   func(x *float64, xStride int, b *float64, bStride, n, maskBits int, out *[24]float64)
		two    func(rows *[8]*float64, n int, mask *[4]uint64, out *[12]float64)
		twoFor string
	}{{"dot4x6z", dot4x6z, dot2x6z, "dot2x6z"}, {"dot4x6y", dot4x6y, dot2x6, "dot2x6"}} {
		for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 23, 24, 63, 64, 101, 103, 256, 476, 512} {
			const xStride, bStride = 530, 517
			x := make([]float64, 3*xStride+n+8)
			b := make([]float64, 5*bStride+n+8)
			for _, v := range [][]float64{x, b} {
				for j := range v {
					v[j] = math.NaN()
				}
			}
			for rr := 0; rr < 4; rr++ {
				for j := 0; j < n; j++ {
					x[rr*xStride+j] = r.NormFloat64()
				}
			}
			for c := 0; c < 6; c++ {
				for j := 0; j < n; j++ {
					b[c*bStride+j] = r.NormFloat64()
				}
			}
			var got [24]float64
			k.four(&x[0], xStride, &b[0], bStride, n, 1<<(n&3)-1, &got)
			for pair := 0; pair < 2; pair++ {
				var rows [8]*float64
				rows[0], rows[1] = &x[2*pair*xStride], &x[(2*pair+1)*xStride]
				for c := 0; c < 6; c++ {
					rows[2+c] = &b[c*bStride]
				}
				var want [12]float64
				k.two(&rows, n, &tailMasks[n&3], &want)
				for i, w := range want {
					if g := got[12*pair+i]; g != w {
						t.Fatalf("%s, n=%d: out[%d] = %v, %s gives %v", k.name, n, 12*pair+i, g, k.twoFor, w)
					}
				}
			}
		}
	}
}
