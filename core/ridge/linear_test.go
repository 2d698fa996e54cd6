package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// negatedPrecond is a broken preconditioner, −M⁻¹ for M = I: indefinite.
type negatedPrecond struct{}

func (negatedPrecond) apply(dst, R *mat.Dense) { dst.Scale(-1, R) }

// denseHessian applies a k·d × k·d symmetric matrix to W (k×d) read row-major.
type denseHessian struct{ H *mat.SymDense }

func (h denseHessian) apply(dst, V *mat.Dense) {
	k, d := V.Dims()
	out := mat.NewVecDense(k*d, dst.RawMatrix().Data)
	out.MulVec(h.H, mat.NewVecDense(k*d, mat.DenseCopyOf(V).RawMatrix().Data))
}

// An indefinite preconditioner (⟨r, M⁻¹r⟩ < 0) made CG stop at its start, with a warning that
// blamed max_iter; it now falls back to plain CG, which converges.
func TestCGSurvivesAnIndefinitePreconditioner(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const k, d = 2, 3
	A := mat.NewDense(k*d, k*d, nil)
	for i := range A.RawMatrix().Data {
		A.RawMatrix().Data[i] = r.NormFloat64()
	}
	H := mat.NewSymDense(k*d, nil)
	H.SymOuterK(1, A)
	for i := 0; i < k*d; i++ {
		H.SetSym(i, i, H.At(i, i)+1)
	}
	B := mat.NewDense(k, d, nil)
	for i := range B.RawMatrix().Data {
		B.RawMatrix().Data[i] = r.NormFloat64()
	}
	W := mat.NewDense(k, d, nil)
	opt := Options{Tol: 1e-10, MaxIter: 100}
	res, err := conjugateGradients(denseHessian{H}, B, negatedPrecond{}, W, 0, &opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.Iterations < 1 {
		t.Fatalf("CG stopped after %d iterations at %v", res.Iterations, res.RelGrad)
	}
	var want mat.VecDense
	if err := want.SolveVec(H, mat.NewVecDense(k*d, B.RawMatrix().Data)); err != nil {
		t.Fatal(err)
	}
	for i, v := range W.RawMatrix().Data {
		if math.Abs(v-want.AtVec(i)) > 1e-8*(1+math.Abs(want.AtVec(i))) {
			t.Fatalf("W[%d] = %v, want %v", i, v, want.AtVec(i))
		}
	}
}
