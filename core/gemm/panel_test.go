package gemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The vector kernels must compute exactly (bit for bit) the fused multiply–add sequence their doc
// comment states, for every width the drivers ask of them, and must touch no column of C past it:
// those hold NaN, which a masked lane would carry into the sums or leave changed. With an init row
// the block's own values are NaN too (a kernel that read them would return NaN), and so are the
// init row's values past the width.
func TestPanelKernels(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2/FMA on this processor")
	}
	r := rand.New(rand.NewPCG(17, 18))
	const bStep, cStride = 29, 67
	widths := []int{1, 2, 3, 4, 5, 6, 7, 8, 12}
	if haveAVX512 {
		widths = append(widths, 9, 10, 11, 13, 14, 15, 16, 17, 20, 23, 24, 64) // 64: fma1x64, row by row
	}
	// aStep 1: A's rows contiguous, which fma4x8m prefetches every eight terms (17 and 33 terms
	// cross that cadence), where 5 is prefetched at every term. Up to 8 columns, the 512-bit
	// fma4x8m where the processor has it, and the 256-bit fma4x8 and fma4x4 (wide: false) always.
	for _, kc := range []struct {
		aStep int
		wide  bool
	}{{5, true}, {1, true}, {5, false}} {
		aStep, wide := kc.aStep, kc.wide
		for _, start := range []string{"c", "zeros", "row"} {
			for _, n := range []int{0, 1, 2, 7, 17, 33} {
				for _, kw := range kernelWidths(widths, wide) {
					w, rows := kw.w, kw.rows
					A := make([]float64, rows+n*aStep)
					for i := range A {
						A[i] = r.NormFloat64()
					}
					B := make([]float64, n*bStep+64)
					for i := range B {
						B[i] = r.NormFloat64()
					}
					C := make([]float64, rows*cStride)
					want := make([]float64, len(C))
					for i := range C {
						C[i], want[i] = math.NaN(), math.NaN()
					}
					init := make([]float64, 64)
					for k := range init {
						init[k] = math.NaN()
						if k < w {
							init[k] = r.NormFloat64()
						}
					}
					var initp *float64
					switch start {
					case "zeros":
						initp = &zeroRow[0]
					case "row":
						initp = &init[0]
					}
					for row := 0; row < rows; row++ {
						for k := 0; k < w; k++ {
							switch start {
							case "c":
								C[row*cStride+k] = r.NormFloat64()
								want[row*cStride+k] = C[row*cStride+k]
							case "zeros":
								want[row*cStride+k] = 0
							case "row":
								want[row*cStride+k] = init[k]
							}
							for l := 0; l < n; l++ {
								want[row*cStride+k] = math.FMA(A[row+l*aStep], B[l*bStep+k], want[row*cStride+k])
							}
						}
					}
					var a, c [4]*float64
					var a8, c8 [8]*float64
					for row := range rows {
						a8[row], c8[row] = &A[row], &C[row*cStride]
					}
					copy(a[:], a8[:])
					copy(c[:], c8[:])
					switch {
					case rows == 8 && w > 8:
						fma8x16m(&a8, aStep, &B[0], bStep, n, &c8, initp, 1<<(w-8)-1)
					case rows == 8:
						fma8x8m(&a8, aStep, &B[0], bStep, n, &c8, initp, 1<<w-1)
					case w == 64:
						for row := range 4 {
							fma1x64(a[row], aStep, &B[0], bStep, n, c[row], initp)
						}
					case w == 24:
						fma4x24(&a, aStep, &B[0], bStep, n, &c, initp)
					case haveAVX512 && w > 16:
						fma4x24m(&a, aStep, &B[0], bStep, n, &c, initp, 1<<(w-16)-1)
					case haveAVX512 && w > 8:
						fma4x16m(&a, aStep, &B[0], bStep, n, &c, initp, 1<<(w-8)-1)
					case haveAVX512 && wide:
						fma4x8m(&a, aStep, &B[0], bStep, n, &c, initp, 1<<w-1)
					case w == 12:
						fma4x12(&a, aStep, &B[0], bStep, n, &c, initp)
					case w > 4:
						fma4x8(&a, aStep, &B[0], bStep, n, &c, &tailMasks[w-4], initp)
					default:
						fma4x4(&a, aStep, &B[0], bStep, n, &c, &tailMasks[w], initp)
					}
					for i := range C {
						if C[i] != want[i] && !(math.IsNaN(C[i]) && math.IsNaN(want[i])) {
							t.Fatalf("aStep=%d wide=%v rows=%d start=%s n=%d w=%d: C[%d] = %v, want %v", aStep, wide, rows, start, n, w, i, C[i], want[i])
						}
					}
				}
			}
		}
	}
}

// kernelWidths lists the (columns, rows) blocks TestPanelKernels runs: every width on four rows
// (up to 8 columns where wide is false), and the widths up to 16 on eight rows too where the
// processor has AVX-512F (fma8x16m, fma8x8m).
func kernelWidths(widths []int, wide bool) []struct{ w, rows int } {
	var out []struct{ w, rows int }
	for _, w := range widths {
		if !wide && w > 8 {
			continue
		}
		out = append(out, struct{ w, rows int }{w, 4})
		if wide && haveAVX512 && w <= 16 {
			out = append(out, struct{ w, rows int }{w, 8})
		}
	}
	return out
}

// MulTN and MulPanel (and their adding forms) must agree with gonum for any shape: rows of C not a multiple of four, columns
// not a multiple of twelve (each remainder width), several chunks of terms and blocks of rows,
// strided views, no terms at all, and both kernels.
func TestMulTNAndMulPanel(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, kern := range []struct{ fma, avx512 bool }{{true, true}, {true, false}, {false, false}} {
		fma := kern.fma
		old, oldAVX := setHaveFMA(fma), setHaveAVX512(kern.avx512)
		for _, c := range []struct{ q, p, m int }{{1, 1, 1}, {3, 2, 5}, {4, 9, 12}, {5, 300, 13}, {14, 641, 21},
			{101, 700, 1000}, {50, 3000, 20}, {7, 17, 23}, {2000, 50, 20}, {9, 17000, 7}, {7, 17000, 9}, {50, 20000, 20},
			{6, 40, 24}, {9, 70, 47}, {5, 33, 59}, {3, 300, 72}, {1, 300, 150}, {1, 600, 64}} {
			Bbig := randDense(r, c.p+2, c.m+3)
			B := Bbig.Slice(1, c.p+1, 2, c.m+2).(*mat.Dense)
			Xbig := randDense(r, c.q+1, c.p+2)
			X := Xbig.Slice(1, c.q+1, 1, c.p+1).(*mat.Dense) // q×p
			Abig := randDense(r, c.p+1, c.q+2)
			A := Abig.Slice(1, c.p+1, 1, c.q+1).(*mat.Dense) // p×q
			for _, tn := range []bool{true, false} {
				want := mat.NewDense(c.q, c.m, nil)
				if c.p > 0 {
					if tn {
						want.Mul(A.T(), B)
					} else {
						want.Mul(X, B)
					}
				}
				gotBig := mat.NewDense(c.q+1, c.m+5, nil)
				got := gotBig.Slice(1, c.q+1, 1, c.m+1).(*mat.Dense)
				gotBig.Set(0, 0, math.NaN())
				for i := 0; i < c.q; i++ {
					for j := 0; j < c.m; j++ {
						got.Set(i, j, math.NaN()) // must overwrite, not accumulate
					}
				}
				if tn {
					MulTN(got.RawMatrix(), A.RawMatrix(), B.RawMatrix())
				} else {
					MulPanel(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
				}
				tol := 1e-13 * math.Sqrt(float64(c.p)) * math.Max(1, mat.Norm(want, math.Inf(1)))
				if diff := maxAbsDiff(got, want); !(diff <= tol) {
					t.Errorf("fma=%v tn=%v %d×%d·%d×%d: differs from gonum by %.3g", fma, tn, c.q, c.p, c.p, c.m, diff)
				}
				if !math.IsNaN(gotBig.At(0, 0)) || gotBig.At(c.q, c.m+1) != 0 {
					t.Errorf("tn=%v %d×%d: wrote outside the destination", tn, c.q, c.m)
				}
				if tn {
					MulTNAdd(got.RawMatrix(), A.RawMatrix(), B.RawMatrix())
				} else {
					MulPanelAdd(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
				}
				want.Scale(2, want)
				if diff := maxAbsDiff(got, want); !(diff <= 2*tol) {
					t.Errorf("fma=%v tn=%v %d×%d·%d×%d: the adding form differs from twice the product by %.3g", fma, tn, c.q, c.p, c.p, c.m, diff)
				}
			}
		}
		setHaveAVX512(oldAVX)
		setHaveFMA(old)
	}
}

// MulPanelBias must equal the product plus the bias in every row, for any shape and every kernel
// (no terms included: then C is the bias), overwriting C and nothing past it; the bias row past C's
// columns is never read.
func TestMulPanelBias(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, kern := range []struct{ fma, avx512 bool }{{true, true}, {true, false}, {false, false}} {
		old, oldAVX := setHaveFMA(kern.fma), setHaveAVX512(kern.avx512)
		for _, c := range []struct{ q, p, m int }{{1, 1, 1}, {3, 2, 5}, {4, 9, 12}, {5, 300, 13}, {14, 641, 21},
			{2000, 51, 20}, {6, 40, 24}, {9, 70, 47}, {5, 33, 59}, {7, 0, 9}} {
			xr, br := blas64.General{Rows: c.q, Stride: 1}, blas64.General{Cols: c.m, Stride: c.m}
			want := mat.NewDense(c.q, c.m, nil)
			if c.p > 0 {
				X, B := randDense(r, c.q, c.p), randDense(r, c.p, c.m)
				xr, br = X.RawMatrix(), B.RawMatrix()
				want.Mul(X, B)
			}
			bias := make([]float64, c.m+3)
			for j := range bias {
				bias[j] = r.NormFloat64()
			}
			bias[c.m] = math.NaN() // past the columns: must not be read
			for i := 0; i < c.q; i++ {
				for j := 0; j < c.m; j++ {
					want.Set(i, j, want.At(i, j)+bias[j])
				}
			}
			gotBig := mat.NewDense(c.q+1, c.m+1, nil)
			for i := range gotBig.RawMatrix().Data {
				gotBig.RawMatrix().Data[i] = math.NaN()
			}
			got := gotBig.Slice(0, c.q, 0, c.m).(*mat.Dense)
			MulPanelBias(got.RawMatrix(), xr, br, bias)
			tol := 1e-13 * math.Sqrt(float64(c.p+1)) * math.Max(1, mat.Norm(want, math.Inf(1)))
			if diff := maxAbsDiff(got, want); !(diff <= tol) {
				t.Errorf("fma=%v avx512=%v %d×%d·%d×%d: differs from the product plus the bias by %.3g", kern.fma, kern.avx512, c.q, c.p, c.p, c.m, diff)
			}
			for i := 0; i <= c.q; i++ {
				if v := gotBig.At(i, c.m); !math.IsNaN(v) {
					t.Fatalf("%d×%d: wrote %v past the columns of C", c.q, c.m, v)
				}
			}
		}
		setHaveAVX512(oldAVX)
		setHaveFMA(old)
	}
}

// The 512-bit kernel performs every entry's fused multiply–adds in the same order as the 256-bit
// ones: the products are identical to the last bit, so results do not depend on the processor.
func TestPanelAVX512Identical(t *testing.T) {
	defer setHaveAVX512(setHaveAVX512(true))
	if !haveAVX512 {
		t.Skip("no AVX-512 on this processor")
	}
	r := rand.New(rand.NewPCG(21, 22))
	// m = 14, 20, 9, 17 and 47 end in the masked kernels (a last 9–23 columns)
	for _, c := range []struct{ q, p, m int }{{9, 70, 47}, {101, 700, 1000}, {6, 300, 24}, {1500, 104, 14}, {203, 51, 20}, {7, 300, 9}, {13, 3, 17}} {
		X, B := randDense(r, c.q, c.p), randDense(r, c.p, c.m)
		got, want := mat.NewDense(c.q, c.m, nil), mat.NewDense(c.q, c.m, nil)
		MulPanel(got.RawMatrix(), X.RawMatrix(), B.RawMatrix())
		setHaveAVX512(false)
		MulPanel(want.RawMatrix(), X.RawMatrix(), B.RawMatrix())
		setHaveAVX512(true)
		if !mat.Equal(got, want) {
			t.Errorf("%d×%d·%d×%d: the 512-bit kernel's product differs from the 256-bit one's by %.3g", c.q, c.p, c.p, c.m, maxAbsDiff(got, want))
		}
	}
}

// A transposed operand wider than packNarrow is packed, four rows a group, a short last group
// repeating its last row; eight rows of C run in one eight-row kernel, reading two groups. The
// product is the one of the same values read in place (a compact copy of A), bit for bit.
func TestMulTNPackedFewRows(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, q := range []int{5, 6, 7, 8, 11} {
		for _, m := range []int{9, 16, 40} {
			wide := randDense(r, 300, packNarrow+40)
			A := wide.Slice(0, 300, 3, 3+q).(*mat.Dense) // stride packNarrow + 40: packed
			B := randDense(r, 300, m)
			got, want := mat.NewDense(q, m, nil), mat.NewDense(q, m, nil)
			MulTN(got.RawMatrix(), A.RawMatrix(), B.RawMatrix())
			MulTN(want.RawMatrix(), mat.DenseCopyOf(A).RawMatrix(), B.RawMatrix())
			if !mat.Equal(got, want) {
				t.Errorf("q=%d m=%d: packed and in-place products differ by %.3g", q, m, maxAbsDiff(got, want))
			}
		}
	}
}

// With no terms, both products are zero, whatever C held.
func TestPanelNoTerms(t *testing.T) {
	for _, tn := range []bool{true, false} {
		C := blas64.General{Rows: 6, Cols: 4, Stride: 4, Data: make([]float64, 24)}
		for i := range C.Data {
			C.Data[i] = math.NaN()
		}
		B := blas64.General{Rows: 0, Cols: 4, Stride: 4}
		if tn {
			MulTN(C, blas64.General{Rows: 0, Cols: 6, Stride: 6}, B)
		} else {
			MulPanel(C, blas64.General{Rows: 6, Cols: 0, Stride: 1}, B)
		}
		for i, v := range C.Data {
			if v != 0 {
				t.Fatalf("tn=%v: C[%d] = %v, want 0", tn, i, v)
			}
		}
	}
}

// A long sum into a small C with more rows than columns is computed as Cᵀ = Bᵀ·A, slab by slab,
// and so is the product of a thin B with a wide A (without slabs):
// every entry must be bit-identical to the one MulTN computes for Cᵀ itself, for both kernels.
func TestMulTNSlabsTransposeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, fma := range []bool{true, false} {
		old := setHaveFMA(fma)
		// The slabs, and the thin B of a wide A (computed transposed, without slabs).
		for _, c := range []struct{ q, p, m int }{{50, 20000, 20}, {13, 2*slabTerms + 5, 9}, {5, 3 * slabTerms, 4},
			{1001, 300, 20}, {400, 500, thinColumns}, {300, 40, 7}} {
			A, B := randDense(r, c.p, c.q), randDense(r, c.p, c.m)
			C, Ct := mat.NewDense(c.q, c.m, nil), mat.NewDense(c.m, c.q, nil)
			MulTN(C.RawMatrix(), A.RawMatrix(), B.RawMatrix())
			MulTN(Ct.RawMatrix(), B.RawMatrix(), A.RawMatrix())
			if !mat.Equal(C, Ct.T()) {
				t.Errorf("fma=%v %v: AᵀB differs from (BᵀA)ᵀ (max %.3g)", fma, c, maxAbsDiff(C, mat.DenseCopyOf(Ct.T())))
			}
		}
		setHaveFMA(old)
	}
}

// The products must not depend on the number of threads, which moves the row groups and the
// column blocks between goroutines.
func TestPanelThreadIndependent(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	r := rand.New(rand.NewPCG(23, 24))
	for _, c := range []struct{ q, p, m int }{{2003, 53, 21}, {101, 1301, 1003}, {13, 40000, 9}} {
		A, B := randDense(r, c.p, c.q), randDense(r, c.p, c.m)
		var first *mat.Dense
		for _, threads := range []int{1, 2, 3, 7} {
			parallel.SetThreads(threads)
			got := mat.NewDense(c.q, c.m, nil)
			MulTN(got.RawMatrix(), A.RawMatrix(), B.RawMatrix())
			if first == nil {
				first = got
				continue
			}
			if !mat.Equal(first, got) {
				t.Errorf("%v, %d threads: result differs from 1 thread (max %.3g)", c, threads, maxAbsDiff(first, got))
			}
		}
	}
}

// BenchmarkPanel times the linear solvers' products on the shapes of issue 18: X·W and Xᵀ·G for a
// thousand labels (5000 × 101, d = 1000) and for tall thin data (200,000 × 50, d = 20), with the
// panel kernels, with Mul, and (Xᵀ·G) with tmul's former route, a transposed copy of G and Mul.
func BenchmarkPanel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name    string
		m, n, d int
	}{{"labels1000_5000x101", 5000, 101, 1000}, {"tall_200000x50_d20", 200000, 50, 20}, {"nystrom_12384x1501_d6", 12384, 1501, 6}} {
		X, W, G := randDense(r, c.m, c.n), randDense(r, c.n, c.d), randDense(r, c.m, c.d)
		U, H := mat.NewDense(c.m, c.d, nil), mat.NewDense(c.n, c.d, nil)
		flops := float64(2 * c.m * c.n * c.d)
		report := func(b *testing.B) {
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(c.name+"/XW/MulPanel", func(b *testing.B) {
			for b.Loop() {
				MulPanel(U.RawMatrix(), X.RawMatrix(), W.RawMatrix())
			}
			report(b)
		})
		b.Run(c.name+"/XW/MulPanel-256", func(b *testing.B) { // the 256-bit kernels alone
			defer setHaveAVX512(setHaveAVX512(false))
			for b.Loop() {
				MulPanel(U.RawMatrix(), X.RawMatrix(), W.RawMatrix())
			}
			report(b)
		})
		b.Run(c.name+"/XW/Mul", func(b *testing.B) {
			for b.Loop() {
				Mul(U.RawMatrix(), X.RawMatrix(), W.RawMatrix())
			}
			report(b)
		})
		b.Run(c.name+"/XtG/MulTN", func(b *testing.B) {
			for b.Loop() {
				MulTN(H.RawMatrix(), X.RawMatrix(), G.RawMatrix())
			}
			report(b)
		})
		b.Run(c.name+"/XtG/MulTN-256", func(b *testing.B) {
			defer setHaveAVX512(setHaveAVX512(false))
			for b.Loop() {
				MulTN(H.RawMatrix(), X.RawMatrix(), G.RawMatrix())
			}
			report(b)
		})
		b.Run(c.name+"/XtG/direct", func(b *testing.B) { // MulTN's route before the thin B's transposed product
			A := strided{X.RawMatrix().Data, 1, X.RawMatrix().Stride}
			for b.Loop() {
				panelMul(H.RawMatrix(), A, c.m, G.RawMatrix(), false, nil, whole, panelTerms)
			}
			report(b)
		})
		b.Run(c.name+"/XtG/transpose+Mul", func(b *testing.B) {
			Ht := mat.NewDense(c.d, c.n, nil)
			for b.Loop() {
				Gt := mat.DenseCopyOf(G.T())
				Mul(Ht.RawMatrix(), Gt.RawMatrix(), X.RawMatrix())
			}
			report(b)
		})
	}
}

// MulTNUpperAdd adds exactly MulTNAdd's entries on and above the diagonal, and leaves the entries
// below the diagonal blocks as they were.
func TestMulTNUpperAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	fill := func(rows, cols int) blas64.General {
		g := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: make([]float64, rows*cols)}
		for i := range g.Data {
			g.Data[i] = r.NormFloat64()
		}
		return g
	}
	// Serial, split across threads (yeast's Gram matrix; a triangle split unevenly by rows), in
	// slabs of terms (tall and narrow), and in column blocks of upperBlock.
	shapes := [][2]int{{50, 40}, {7, 5}, {1500, 103}, {600, 250}, {2*slabTerms + 5, 30}, {300, 2 * upperBlock}, {100, 1000}}
	for _, sh := range shapes {
		for _, threads := range []int{1, 2, 3} {
			parallel.SetThreads(threads)
			p, n := sh[0], sh[1]
			A, B, C0 := fill(p, n), fill(p, n), fill(n, n)
			full := blas64.General{Rows: n, Cols: n, Stride: n, Data: slices.Clone(C0.Data)}
			MulTNAdd(full, A, B)
			upper := blas64.General{Rows: n, Cols: n, Stride: n, Data: slices.Clone(C0.Data)}
			MulTNUpperAdd(upper, A, B)
			checkUpper(t, p, n, upper, full, C0)
		}
	}
	parallel.SetThreads(0)
}

// checkUpper compares MulTNUpperAdd's result with MulTNAdd's (full) on and above the diagonal, and
// with C's entries before (C0) below the diagonal blocks.
func checkUpper(t *testing.T, p, n int, upper, full, C0 blas64.General) {
	t.Helper()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			got := upper.Data[i*n+j]
			switch {
			case j >= i && got != full.Data[i*n+j]:
				t.Fatalf("%d×%d: entry (%d, %d) = %v, MulTNAdd gives %v", p, n, i, j, got, full.Data[i*n+j])
			case n >= 2*upperBlock && i/upperBlock > j/upperBlock && got != C0.Data[i*n+j]:
				t.Fatalf("%d×%d: entry (%d, %d) below the diagonal blocks changed", p, n, i, j)
			}
		}
	}
}

// triangleCuts covers the groups of rows in order and gives each range about the same number of
// entries on and above the diagonal: no range is short of an equal share by more than one group.
func TestTriangleCuts(t *testing.T) {
	for _, c := range []struct{ groups, diag, m, w int }{{26, 0, 103, 2}, {26, 0, 103, 3}, {96, 0, 384, 2}, {192, 384, 384, 2}, {3, 0, 10, 2}, {1, 0, 4, 2}} {
		cuts := triangleCuts(c.groups, c.diag, c.m, c.w)
		if len(cuts) != c.w+1 || cuts[0] != 0 || cuts[c.w] != c.groups || !slices.IsSorted(cuts) {
			t.Fatalf("%+v: cuts %v", c, cuts)
		}
		entries := func(g int) int { return min(max(c.diag+c.m-4*g, 0), c.m) }
		total, biggest := 0, 0
		share := make([]int, c.w)
		for r := 0; r < c.w; r++ {
			for g := cuts[r]; g < cuts[r+1]; g++ {
				share[r] += entries(g)
				biggest = max(biggest, entries(g))
			}
			total += share[r]
		}
		for r, e := range share {
			if d := e - total/c.w; d > biggest || d < -biggest {
				t.Fatalf("%+v: cuts %v give range %d %d entries of %d", c, cuts, r, e, total)
			}
		}
	}
}

// MulTN's transposed product of a thin B equals the direct one (panelMul on Aᵀ) bit for bit, for
// both kernels: each entry sums the same products in the same order, whatever the chunks of terms
// (panelTermsFor's against panelTerms).
func TestMulTNThinIsTheDirectProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, fma := range []bool{true, false} {
		old := setHaveFMA(fma)
		for _, c := range []struct{ p, q, m int }{{1000, 301, 6}, {3000, 1001, 20}, {700, 400, thinColumns}, {5, 300, 7}} {
			A, B := randDense(r, c.p, c.q), randDense(r, c.p, c.m)
			got, want := mat.NewDense(c.q, c.m, nil), mat.NewDense(c.q, c.m, nil)
			MulTN(got.RawMatrix(), A.RawMatrix(), B.RawMatrix())
			panelMul(want.RawMatrix(), strided{A.RawMatrix().Data, 1, A.RawMatrix().Stride}, c.p, B.RawMatrix(), false, nil, whole, panelTerms)
			if !mat.Equal(got, want) {
				t.Errorf("fma=%v %v: MulTN differs from the direct product (max %.3g)", fma, c, maxAbsDiff(got, want))
			}
		}
		setHaveFMA(old)
	}
}

// A lone row of X (a single prediction's kernel row), which MulPanel gives to fma1x64 where the
// processor has AVX-512F, gets the values it has inside a block of rows, bit for bit, with or
// without a bias, over several chunks of terms and a last block of columns too narrow for fma1x64.
func TestPanelLoneRowMatchesItsBlock(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, c := range []struct{ q, p, m int }{{5, 1, 64}, {6, 103, 1500}, {3, 600, 130}, {9, 257, 200}} {
		X, B := randDense(r, c.q, c.p), randDense(r, c.p, c.m)
		bias := make([]float64, c.m)
		for j := range bias {
			bias[j] = r.NormFloat64()
		}
		for _, withBias := range []bool{false, true} {
			block := mat.NewDense(c.q, c.m, nil)
			mul := func(C, X blas64.General) {
				if withBias {
					MulPanelBias(C, X, B.RawMatrix(), bias)
				} else {
					MulPanel(C, X, B.RawMatrix())
				}
			}
			mul(block.RawMatrix(), X.RawMatrix())
			for i := 0; i < c.q; i++ {
				row := mat.NewDense(1, c.m, nil)
				mul(row.RawMatrix(), X.Slice(i, i+1, 0, c.p).(*mat.Dense).RawMatrix())
				if !mat.Equal(row, block.Slice(i, i+1, 0, c.m)) {
					t.Fatalf("%+v, bias %v: row %d alone differs from its block", c, withBias, i)
				}
			}
		}
	}
}
