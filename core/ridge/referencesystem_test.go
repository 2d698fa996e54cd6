package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// referenceSystem must apply the same Hessian as linearSystem under every kind of reference:
// dense S (empirical and product mixtures, the training structures alone) and the sparse
// training-structure operator, with and without the intercept, with sample weights (one zero).
func TestReferenceSystemMatchesLinearSystem(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		kind string
		args []int64
		m    int
		ref  Reference
		w    float64
		op   bool // the sparse operator applies S
	}{
		{"multilabel", []int64{5}, 203, Empirical, 0.3, false},
		{"multilabel", []int64{5}, 203, Product, 0.6, false},
		{"permutations", []int64{4}, 301, Empirical, 1, false},
		{"multiclass", []int64{40}, 301, Empirical, 0.5, true},
		{"multiclass", []int64{40}, 301, Empirical, 1, true},
	} {
		for _, intercept := range []bool{false, true} {
			sp, err := space.New(c.kind, c.args)
			if err != nil {
				t.Fatal(err)
			}
			const n = 7
			X, ys := synthetic(t, sp, c.m, n, 4)
			w := weights(r, c.m)
			w[3] = 0
			p, err := NewProblem(sp, ys, c.m, w, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.useReference(sp, c.ref, c.w); err != nil {
				t.Fatal(err)
			}
			if (p.ref.op != nil) != c.op {
				t.Fatalf("%s %v w=%v: sparse operator %v, want %v", c.kind, c.ref, c.w, p.ref.op != nil, c.op)
			}
			des := design{X: mat.NewDense(c.m, n, X), intercept: intercept}
			rs := newReferenceSystem(p, des, des.gram(p.Weight))
			if rs == nil {
				t.Fatalf("%s %v w=%v: no referenceSystem", c.kind, c.ref, c.w)
			}
			ls := newLinearSystem(p, des)
			d := sp.Dim()
			V := mat.NewDense(des.cols(), d, nil)
			for i := range V.RawMatrix().Data {
				V.RawMatrix().Data[i] = r.NormFloat64()
			}
			want, got := mat.NewDense(des.cols(), d, nil), mat.NewDense(des.cols(), d, nil)
			ls.apply(want, V)
			for range 2 { // the second call reuses the scratch
				rs.apply(got, V)
			}
			if !mat.EqualApprox(got, want, 1e-10*mat.Norm(want, 2)) {
				t.Errorf("%s %v w=%v, intercept %v: H·V differs from linearSystem's", c.kind, c.ref, c.w, intercept)
			}
		}
	}
}

// TestLinearHessianUnderAReference: linearHessian picks referenceSystem under a reference
// measure when the grouped and narrow forms do not apply (varied label sets, 12 outputs), and
// keeps the sparse-target form for one-hot targets, which applies S to k rows as referenceSystem
// does and skips its m·k·d products besides (a review: multiclass(500) went from 1.5 to 9.9 ms
// per application when referenceSystem came first).
func TestLinearHessianUnderAReference(t *testing.T) {
	ml, _ := space.NewMultilabel(12)
	mc, _ := space.NewMulticlass(100)
	for _, c := range []struct {
		sp   space.Space
		m, n int
		want string
	}{{ml, 40, 5, "*ridge.referenceSystem"}, {mc, 301, 7, "*ridge.sparseTargetSystem"}} {
		X, ys := synthetic(t, c.sp, c.m, c.n, 9)
		p, err := NewProblem(c.sp, ys, c.m, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.useReference(c.sp, Empirical, 0.5); err != nil {
			t.Fatal(err)
		}
		des := design{X: mat.NewDense(c.m, c.n, X), intercept: true}
		if h, _ := linearHessian(p, des, des.gram(p.Weight)); fmt.Sprintf("%T", h) != c.want {
			t.Errorf("%s: linearHessian chose %T, want %s", c.sp.Kind(), h, c.want)
		}
	}
}

// referenceSystem declines what it does not speed up: the uniform measure, no Gram matrix, and
// as many rows of W as examples (G V costs more than S on the rows it saves).
func TestReferenceSystemDeclines(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	const m, n = 30, 5
	X, ys := synthetic(t, sp, m, n, 2)
	p, err := NewProblem(sp, ys, m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, n, X), intercept: true}
	if newReferenceSystem(p, des, des.gram(p.Weight)) != nil {
		t.Error("the uniform measure")
	}
	if err := p.useReference(sp, Empirical, 0.5); err != nil {
		t.Fatal(err)
	}
	if newReferenceSystem(p, des, nil) != nil {
		t.Error("no Gram matrix")
	}
	wide := design{X: mat.NewDense(m, m, nil), intercept: false}
	if newReferenceSystem(p, wide, wide.gram(p.Weight)) != nil {
		t.Error("as many rows of W as examples")
	}
}
