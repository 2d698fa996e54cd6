package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

func TestSolveLUMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 63, 64, 65, 130, 700} {
		A := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				A.Set(i, j, r.NormFloat64())
			}
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		var want mat.VecDense
		var lu mat.LU
		lu.Factorize(A)
		if err := lu.SolveVecTo(&want, false, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
			t.Fatal(err)
		}
		got := append([]float64(nil), b...)
		if err := solveLU(mat.DenseCopyOf(A), got, nil); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		// The residual of our solution is as small as gonum's.
		res := mat.NewVecDense(n, nil)
		res.MulVec(A, mat.NewVecDense(n, got))
		res.SubVec(res, mat.NewVecDense(n, b))
		if rn := floats.Norm(res.RawVector().Data, 2); rn > 1e-9*floats.Norm(b, 2)*float64(n) {
			t.Errorf("n=%d: residual %g", n, rn)
		}
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-8*float64(n)) {
			t.Errorf("n=%d: differs from gonum's LU", n)
		}
	}
}

// luSolve and luCondition replace gonum's Dgetrs and Dgecon, which read the factors by columns
// (the tail of an 8,000-unknown kernel fit: seconds deaf to Ctrl-C, probe DH): the same solutions
// in both orientations and the same estimate, up to rounding, and a look at stop.
func TestLUSolveAndConditionMatchGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	impl := gonum.Implementation{}
	for _, n := range []int{1, 2, 7, 64, 65, 300} {
		A := randDense(r, n, n)
		a := A.RawMatrix()
		anorm := impl.Dlange(lapack.MaxColumnSum, n, n, a.Data, a.Stride, make([]float64, n))
		ipiv, err := factorLU(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, trans := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			b := make([]float64, n)
			for i := range b {
				b[i] = r.NormFloat64()
			}
			want := slices.Clone(b)
			impl.Dgetrs(trans, n, 1, a.Data, a.Stride, ipiv, want, 1)
			luSolve(a, ipiv, b, trans)
			if !floats.EqualApprox(b, want, 1e-10*(1+floats.Norm(want, math.Inf(1)))) {
				t.Errorf("n=%d, trans %c: luSolve differs from Dgetrs", n, trans)
			}
		}
		want := 1 / impl.Dgecon(lapack.MaxColumnSum, n, a.Data, a.Stride, anorm, make([]float64, 4*n), make([]int, n))
		got, err := luCondition(a, ipiv, anorm, nil)
		if err != nil || math.Abs(got-want) > 1e-8*want {
			t.Errorf("n=%d: luCondition %g (%v), Dgecon %g", n, got, err, want)
		}
		var stop cancel.Flag
		stop.Stop()
		if _, err := luCondition(a, ipiv, anorm, &stop); n > 1 && !errors.Is(err, ErrCancelled) {
			t.Errorf("n=%d: luCondition with its flag set: %v, want ErrCancelled", n, err)
		}
	}
}

func TestSolveLURefusesSingular(t *testing.T) {
	for _, n := range []int{3, 100} {
		A := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				A.Set(i, j, float64(i+1)) // rank one
			}
		}
		if err := solveLU(A, make([]float64, n), nil); !errors.Is(err, errSingular) {
			t.Errorf("n=%d: got %v, want errSingular", n, err)
		}
	}
}

func TestSolveLUStops(t *testing.T) {
	stop := new(cancel.Flag)
	stop.Stop()
	A := mat.NewDense(200, 200, nil)
	for i := 0; i < 200; i++ {
		A.Set(i, i, 1)
	}
	if err := solveLU(A, make([]float64, 200), stop); !errors.Is(err, ErrCancelled) {
		t.Fatalf("got %v, want ErrCancelled", err)
	}
}

func TestSolveCholeskyMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 63, 64, 65, 130, 600} {
		B := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				B.Set(i, j, r.NormFloat64())
			}
		}
		A := mat.NewSymDense(n, nil)
		A.SymOuterK(1, B)
		for i := 0; i < n; i++ {
			A.SetSym(i, i, A.At(i, i)+1)
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		var ch mat.Cholesky
		if !ch.Factorize(A) {
			t.Fatal("gonum: not positive definite")
		}
		var want mat.VecDense
		if err := ch.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
			t.Fatal(err)
		}
		got := append([]float64(nil), b...)
		if _, err := solveCholesky(mat.NewSymDense(n, append([]float64(nil), A.RawSymmetric().Data...)), got, nil); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-8*float64(n)) {
			t.Errorf("n=%d: differs from gonum's Cholesky", n)
		}
	}
	indefinite := mat.NewSymDense(70, nil)
	for i := 0; i < 70; i++ {
		indefinite.SetSym(i, i, 1)
	}
	indefinite.SetSym(69, 69, -1)
	if _, err := solveCholesky(indefinite, make([]float64, 70), nil); !errors.Is(err, errNotPositiveDefinite) {
		t.Errorf("indefinite: got %v", err)
	}
}

// factorCholesky agrees with gonum's Cholesky factor on sizes around its panels (64 rows) and its
// update stripes (512 columns), and leaves the entries below the diagonal as they were: spdInverse
// keeps zeros there for its products with the factor.
func TestFactorCholeskyMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 5, 63, 64, 65, 128, 129, 300, 1100} {
		A := randomSPD(r, n, 1)
		var ch mat.Cholesky
		if !ch.Factorize(A) {
			t.Fatal("gonum: not positive definite")
		}
		var want mat.TriDense
		ch.UTo(&want)
		a := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if j >= i {
					a.Set(i, j, A.At(i, j))
				} else {
					a.Set(i, j, float64(i*n+j)) // must survive
				}
			}
		}
		if err := factorCholesky(a.RawMatrix(), nil); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		var worst float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if j < i {
					if a.At(i, j) != float64(i*n+j) {
						t.Fatalf("n=%d: entry (%d, %d) below the diagonal was written", n, i, j)
					}
					continue
				}
				worst = math.Max(worst, math.Abs(a.At(i, j)-want.At(i, j))/math.Sqrt(A.At(j, j)))
			}
		}
		if worst > 1e-12 {
			t.Errorf("n=%d: the factor differs from gonum's by %.3g (relative to its column's scale)", n, worst)
		}
	}
}

// randomSPD returns BᵀB/n + shift·I for a Gaussian n×n B.
func randomSPD(r *rand.Rand, n int, shift float64) *mat.SymDense {
	B := mat.NewDense(n, n, nil)
	for i := range B.RawMatrix().Data {
		B.RawMatrix().Data[i] = r.NormFloat64()
	}
	A := mat.NewSymDense(n, nil)
	A.SymOuterK(1/float64(n), B.T())
	for i := 0; i < n; i++ {
		A.SetSym(i, i, A.At(i, i)+shift)
	}
	return A
}

// On an ill-conditioned matrix (condition number 10¹², eigenvectors random) the solution of
// solveCholesky has a residual as small as gonum's Cholesky solve: factorCholesky solves its panels
// by substitution, as LAPACK's dtrsm does, and the estimate of the condition number finds 10¹².
func TestSolveCholeskyBackwardStable(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 300
	A, _ := decayingCovariance(r, n, math.Pow(10, -12/float64(n-1))) // eigenvalues 1 … 10⁻¹²
	b := make([]float64, n)
	for i := range b {
		b[i] = r.NormFloat64()
	}
	residual := func(x []float64) float64 {
		var ax mat.VecDense
		ax.MulVec(A, mat.NewVecDense(n, x))
		ax.SubVec(&ax, mat.NewVecDense(n, b))
		return mat.Norm(&ax, 2) / (mat.Norm(A, 2) * floats.Norm(x, 2))
	}
	var ch mat.Cholesky
	if !ch.Factorize(A) {
		t.Fatal("gonum: not positive definite")
	}
	var want mat.VecDense
	if err := ch.SolveVecTo(&want, mat.NewVecDense(n, b)); err != nil {
		t.Logf("gonum: %v", err)
	}
	got := slices.Clone(b)
	cond, err := solveCholesky(mat.NewSymDense(n, slices.Clone(A.RawSymmetric().Data)), got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cond < 1e11 || cond > 1e14 {
		t.Errorf("condition estimate %.3g, want about 1e12", cond)
	}
	t.Logf("relative residuals: ours %.3g, gonum %.3g; condition estimate %.3g", residual(got), residual(want.RawVector().Data), cond)
	if rg, rw := residual(got), residual(want.RawVector().Data); rg > 10*rw+1e-16 {
		t.Errorf("relative residual %.3g, gonum's %.3g", rg, rw)
	}
}

// upperSolve and upperTransSolve, which read U by rows four at a time, agree with gonum's Dtrsv at
// every size around their groups of four.
func TestUpperSolvesMatchGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	bi := blas64.Implementation()
	for n := 1; n <= 70; n++ {
		if n > 13 && n != 64 && n != 70 {
			continue
		}
		u := mat.NewDense(n, n+3, nil) // a stride wider than n
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				u.Set(i, j, r.NormFloat64()/math.Sqrt(float64(n)))
			}
			u.Set(i, i, 1+r.Float64())
			for j := 0; j < i; j++ {
				u.Set(i, j, math.NaN()) // never read
			}
		}
		raw := u.RawMatrix()
		raw.Cols = n
		for _, trans := range []bool{false, true} {
			x := make([]float64, n)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			want := slices.Clone(x)
			if trans {
				upperTransSolve(raw, x)
				bi.Dtrsv(blas.Upper, blas.Trans, blas.NonUnit, n, raw.Data, raw.Stride, want, 1)
			} else {
				upperSolve(raw, x)
				bi.Dtrsv(blas.Upper, blas.NoTrans, blas.NonUnit, n, raw.Data, raw.Stride, want, 1)
			}
			if !floats.EqualApprox(x, want, 1e-12) {
				t.Errorf("n=%d trans=%v: %v, want %v", n, trans, x, want)
			}
		}
	}
}

// TestFitStops checks that every solver path of Fit and PartialFit gives up with ErrCancelled
// when Options.Stop is set, and that a model then still fits with a fresh flag.
func TestFitStops(t *testing.T) {
	sp, _ := space.NewMultilabel(4)
	X, ys := synthetic(t, sp, 120, 5, 7)
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
	lin := kernel.Kernel{Kind: kernel.Linear}
	for _, c := range []struct {
		name    string
		kern    kernel.Kernel
		solver  Solver
		comps   int
		partial bool
	}{
		{"linear exact", lin, Exact, 0, false},
		{"linear cg", lin, CG, 0, false},
		{"linear sgd", lin, SGD, 0, false},
		{"kernel cg", rbf, CG, 0, false},
		{"kernel exact", rbf, Exact, 0, false},
		{"kernel sgd", rbf, SGD, 0, false},
		{"nystrom cg", rbf, CG, 20, false},
		{"partial linear", lin, Auto, 0, true},
		{"partial kernel", rbf, Auto, 0, true},
	} {
		stop := new(cancel.Flag)
		stop.Stop()
		opt := Options{Alpha: 0.5, Kernel: c.kern, Intercept: true, Solver: c.solver, Tol: 1e-8, MaxIter: 50, NComponents: c.comps, Stop: stop}
		fit := func(o Options) error {
			var err error
			if c.partial {
				_, err = PartialFit(nil, sp, X, 120, 5, ys, nil, o)
			} else {
				_, err = Fit(sp, X, 120, 5, ys, nil, o)
			}
			return err
		}
		if err := fit(opt); !errors.Is(err, ErrCancelled) {
			t.Errorf("%s: got %v, want ErrCancelled", c.name, err)
		}
		opt.Stop = new(cancel.Flag)
		if err := fit(opt); err != nil {
			t.Errorf("%s: after a cancel: %v", c.name, err)
		}
	}
}

// spdInverse inverts symmetric positive definite matrices of every size around invertUpper's
// halving and its unblocked panel, and refuses one that is not positive definite.
func TestSPDInverse(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, n := range []int{1, 2, 5, 63, 64, 65, 130, 257} {
		B := randDense(r, n+3, n)
		var a mat.Dense
		a.Mul(B.T(), B)
		for i := 0; i < n; i++ {
			a.Set(i, i, a.At(i, i)+0.5)
		}
		inv, err := spdInverse(a.RawMatrix(), nil)
		if err != nil {
			t.Fatalf("n = %d: %v", n, err)
		}
		var prod mat.Dense
		prod.Mul(&a, inv)
		for i := 0; i < n; i++ {
			prod.Set(i, i, prod.At(i, i)-1)
		}
		if e := maxAbs(&prod); e > 1e-10 {
			t.Errorf("n = %d: A·A⁻¹ differs from I by %.3g", n, e)
		}
		if !mat.EqualApprox(inv, inv.T(), 1e-12*maxAbs(inv)) {
			t.Errorf("n = %d: the inverse is not symmetric", n)
		}
	}
	a := mat.NewDense(3, 3, []float64{1, 2, 0, 2, 1, 0, 0, 0, 1})
	if _, err := spdInverse(a.RawMatrix(), nil); err == nil {
		t.Error("an indefinite matrix was inverted without an error")
	}
}

// A set stop flag ends spdInverse and invertUpper: the preconditioners' block inverses of a
// 3,000-column Nyström map took 1.2 s, deaf to Ctrl-C (probe DG).
func TestInversesSeeTheirStopFlag(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	const n = 300
	B := randDense(r, n+3, n)
	var a mat.Dense
	a.Mul(B.T(), B)
	var stop cancel.Flag
	stop.Stop()
	if _, err := spdInverse(a.RawMatrix(), &stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("spdInverse with its flag set: error %v, want ErrCancelled", err)
	}
	u := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		u.Set(i, i, 1)
	}
	if invertUpper(u.RawMatrix(), make([]float64, (n/2+1)*(n/2+1)), &stop) {
		t.Error("invertUpper with its flag set reported a finished inverse")
	}
	if !invertUpper(u.RawMatrix(), make([]float64, (n/2+1)*(n/2+1)), nil) {
		t.Error("invertUpper without a flag reported a stop")
	}
}

// TestFactorLower: the blocked left-looking factor of the kernel dual reproduces A = LLᵀ from A's
// upper triangle on sizes across its panel boundaries (cholPanel = 64), with −L below the
// diagonal blocks, writes Lᵀ above the diagonal, refuses a matrix that is not positive definite at any panel, and stops when asked.
func TestFactorLower(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 63, 64, 65, 129, 300} {
		B := mat.NewDense(n, n+3, nil)
		for i := range B.RawMatrix().Data {
			B.RawMatrix().Data[i] = r.NormFloat64()
		}
		A := mat.NewDense(n, n, nil)
		A.Mul(B, B.T())
		a := mat.DenseCopyOf(A)
		const marker = 12345.5
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				a.Set(i, j, marker) // the lower triangle is not read
			}
		}
		if _, err := factorLower(a.RawMatrix(), nil); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		L := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := a.At(i, j)
				if i/cholPanel != j/cholPanel { // below the diagonal blocks: −L
					v = -v
				}
				L.Set(i, j, v)
			}
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if a.At(i, j) != L.At(j, i) {
					t.Fatalf("n=%d: entry (%d, %d) above the diagonal is %v, Lᵀ's %v", n, i, j, a.At(i, j), L.At(j, i))
				}
			}
		}
		var LLT mat.Dense
		LLT.Mul(L, L.T())
		LLT.Sub(&LLT, A)
		if rel := mat.Norm(&LLT, 2) / mat.Norm(A, 2); rel > 1e-13 {
			t.Errorf("n=%d: ‖LLᵀ − A‖/‖A‖ = %.1e", n, rel)
		}
	}
	for _, bad := range []int{0, 63, 64, 100} { // a negative pivot in the first, a later, the next panel
		n := 130
		a := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			a.Set(i, i, 1)
		}
		a.Set(bad, bad, -1)
		if _, err := factorLower(a.RawMatrix(), nil); !errors.Is(err, errNotPositiveDefinite) {
			t.Errorf("pivot %d negative: got %v", bad, err)
		}
	}
	stop := new(cancel.Flag)
	stop.Stop()
	if _, err := factorLower(mat.NewDense(100, 100, nil).RawMatrix(), stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("stopped: got %v", err)
	}
}

// newProblem looks at the stop flag between blocks of stopRows examples, and its blocks count
// the rows a bad target is reported at from the first example, as one pass did; newGroupedSystem
// gives up on a stop request (the solve then returns ErrCancelled).
func TestProblemStopsBetweenBlocks(t *testing.T) {
	sp, _ := space.NewMultilabel(2)
	m := stopRows + 10
	ys := make([]int64, 2*m)
	stop := new(cancel.Flag)
	stop.Stop()
	if _, err := newProblem(sp, ys, m, nil, 1, 0, stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("stop set: got %v, want ErrCancelled", err)
	}
	p, err := newProblem(sp, ys, m, nil, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, 1, nil), intercept: true, stop: stop}
	if gs := newGroupedSystem(p, des, des.gram(p.Weight)); gs != nil {
		t.Errorf("stop set: newGroupedSystem went on")
	}
	ys[2*(stopRows+3)] = 2
	_, err = newProblem(sp, ys, m, nil, 1, 0, nil)
	if want := fmt.Sprintf("y: row %d:", stopRows+3); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a bad target in the second block: got %v, want %q…", err, want)
	}
	if _, err := newProblem(sp, ys[:5], m, nil, 1, 0, nil); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Errorf("too few values: got %v", err)
	}
}

// stoppingHessian sets stop during its application number at, as Ctrl-C can: the Hessian forms
// then return early with part of the product.
type stoppingHessian struct {
	h         hessian
	stop      *cancel.Flag
	calls, at int
}

func (s *stoppingHessian) apply(dst, V *mat.Dense) {
	if s.calls++; s.calls == s.at {
		s.stop.Stop()
		dst.Zero() // what a product cut short may leave
		return
	}
	s.h.apply(dst, V)
}

// A stop request during any of CG's products, the last ones (the true residual at convergence,
// the gradient it reports) included, ends the solve with ErrCancelled: never with a result
// computed from a product cut short.
func TestConjugateGradientsStopDuringProducts(t *testing.T) {
	sp, _ := space.NewMultilabel(3)
	const m, n = 80, 4
	X, ys := synthetic(t, sp, m, n, 11)
	p, err := NewProblem(sp, ys, m, nil, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	des := design{X: mat.NewDense(m, n, X), intercept: true}
	ls := newLinearSystem(p, des)
	count := &stoppingHessian{h: ls, stop: new(cancel.Flag)}
	W := mat.NewDense(n+1, 3, nil)
	if _, err := conjugateGradients(count, ls.B, identityPrecond{}, W, p.Constant(), &Options{Tol: 1e-8, MaxIter: 100}); err != nil {
		t.Fatal(err)
	}
	for at := 1; at <= count.calls; at++ {
		stop := new(cancel.Flag)
		h := &stoppingHessian{h: ls, stop: stop, at: at}
		W := mat.NewDense(n+1, 3, nil)
		if res, err := conjugateGradients(h, ls.B, identityPrecond{}, W, p.Constant(), &Options{Tol: 1e-8, MaxIter: 100, Stop: stop}); !errors.Is(err, ErrCancelled) {
			t.Errorf("stopped during product %d of %d: got %+v, %v; want ErrCancelled", at, count.calls, res, err)
		}
	}
}

// BenchmarkFactorCholesky factors symmetric positive definite matrices of the sizes the exact
// solver meets (partial_fit's normal equations at 300 features and 10 labels: 3,010 unknowns) and
// reports the rate at n³/3 flops.
func BenchmarkFactorCholesky(b *testing.B) {
	for _, n := range []int{500, 1500, 3010} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		B := mat.NewDense(n, n, nil)
		for i := range B.RawMatrix().Data {
			B.RawMatrix().Data[i] = r.NormFloat64()
		}
		A := mat.NewDense(n, n, nil)
		A.Mul(B.T(), B)
		work := mat.NewDense(n, n, nil)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				work.Copy(A)
				if err := factorCholesky(work.RawMatrix(), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(n)*float64(n)/3/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
		})
	}
}
