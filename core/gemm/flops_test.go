package gemm

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Every product adds 2·q·p·m to Flops once, whichever path computes it (the slabs of a long
// MulTN included), and an empty product adds nothing.
func TestFlopsCountsEveryProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	raw := func(rows, cols int) blas64.General { return randDense(r, rows, cols).RawMatrix() }
	for _, c := range []struct{ q, p, m int }{{3, 5, 7}, {40, 2*slabTerms + 3, 6}, {9, 2*slabTerms + 1, 13}} {
		want := 2 * uint64(c.q) * uint64(c.p) * uint64(c.m)
		out := mat.NewDense(c.q, c.m, nil).RawMatrix()
		for name, product := range map[string]func(){
			"Mul":         func() { Mul(out, raw(c.q, c.p), raw(c.p, c.m)) },
			"MulAdd":      func() { MulAdd(out, raw(c.q, c.p), raw(c.p, c.m)) },
			"MulT":        func() { MulT(out, raw(c.q, c.p), raw(c.m, c.p)) },
			"MulTAdd":     func() { MulTAdd(out, raw(c.q, c.p), raw(c.m, c.p)) },
			"MulTN":       func() { MulTN(out, raw(c.p, c.q), raw(c.p, c.m)) },
			"MulTNAdd":    func() { MulTNAdd(out, raw(c.p, c.q), raw(c.p, c.m)) },
			"MulPanel":    func() { MulPanel(out, raw(c.q, c.p), raw(c.p, c.m)) },
			"MulPanelAdd": func() { MulPanelAdd(out, raw(c.q, c.p), raw(c.p, c.m)) },
		} {
			before := Flops()
			product()
			if got := Flops() - before; got != want {
				t.Errorf("%s %v: counted %d operations, want %d", name, c, got, want)
			}
		}
	}
	before := Flops()
	MulTN(blas64.General{Rows: 0, Cols: 3, Stride: 3}, blas64.General{Rows: 5, Cols: 0, Stride: 1}, raw(5, 3))
	MulPanel(blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 6)}, blas64.General{Rows: 2, Cols: 0, Stride: 1}, blas64.General{Rows: 0, Cols: 3, Stride: 3})
	if got := Flops() - before; got != 0 {
		t.Errorf("empty products counted %d operations", got)
	}
}

// MulTNUpperAdd counts the entries on and above the diagonal, 2·p·n(n+1)/2, whichever path
// computes them (whole, in slabs, or in column blocks).
func TestFlopsCountsTheUpperTriangle(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct{ p, n int }{{50, 40}, {1500, 103}, {2*slabTerms + 3, 20}, {30, 2*upperBlock + 5}} {
		A := randDense(r, c.p, c.n).RawMatrix()
		C := mat.NewDense(c.n, c.n, nil).RawMatrix()
		before := Flops()
		MulTNUpperAdd(C, A, A)
		want := uint64(c.p) * uint64(c.n) * uint64(c.n+1)
		if got := Flops() - before; got != want {
			t.Errorf("%v: counted %d operations, want %d", c, got, want)
		}
	}
}
