package gemm

import (
	"math"
	"syscall"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
)

// guarded returns a slice of n float64s that ends where an unreadable page begins, and a function
// that unmaps it: a kernel reading one value past its end faults instead of reading what happens
// to lie there.
func guarded(t *testing.T, n int) ([]float64, func()) {
	t.Helper()
	page := syscall.Getpagesize()
	size := (8*n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	end := size - page
	data := unsafe.Slice((*float64)(unsafe.Pointer(&mem[end-8*n])), n)
	return data, func() { syscall.Munmap(mem) }
}

// The masked kernels read no value of B, C or the bias past a block's last column: operands whose
// last row ends at an unreadable page give the product (an unmasked load of the last register
// would fault there).
func TestPanelMaskedKernelsStayInBounds(t *testing.T) {
	if !haveAVX512 {
		t.Skip("no AVX-512 on this processor")
	}
	for _, m := range []int{1, 3, 6, 8, 9, 13, 14, 16, 17, 20, 23} { // 1–8: fma4x8m and fma8x8m
		for _, bias := range []bool{false, true} {
			const q, p = 11, 5 // 11 rows: one block of eight (fma8x16m, fma8x8m), then four
			B, freeB := guarded(t, p*m)
			C, freeC := guarded(t, q*m)
			X := make([]float64, q*p)
			for i := range X {
				X[i] = float64(i%7) - 3
			}
			for i := range B {
				B[i] = float64(i%5) - 2
			}
			var bv []float64
			if bias {
				var freeBias func()
				bv, freeBias = guarded(t, m)
				for j := range bv {
					bv[j] = float64(j)
				}
				defer freeBias()
			}
			Cm, Xm, Bm := blas64.General{Rows: q, Cols: m, Stride: m, Data: C}, blas64.General{Rows: q, Cols: p, Stride: p, Data: X},
				blas64.General{Rows: p, Cols: m, Stride: m, Data: B}
			if bias {
				MulPanelBias(Cm, Xm, Bm, bv)
			} else {
				MulPanel(Cm, Xm, Bm)
			}
			MulPanelAdd(Cm, Xm, Bm)
			for i := range q {
				for j := range m {
					want := 0.0
					if bias {
						want = bv[j]
					}
					for l := range p {
						want = math.FMA(X[i*p+l], B[l*m+j], want)
					}
					for l := range p {
						want = math.FMA(X[i*p+l], B[l*m+j], want)
					}
					if C[i*m+j] != want {
						t.Fatalf("m=%d bias=%v: C[%d,%d] = %v, want %v", m, bias, i, j, C[i*m+j], want)
					}
				}
			}
			freeB()
			freeC()
		}
	}
}
