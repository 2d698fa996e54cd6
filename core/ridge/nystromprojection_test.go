package ridge

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rbfGram returns exp(−γ‖a_i − b_j‖²) for the rows of a (p×n) and b (q×n).
func rbfGram(a, b []float64, n int, gamma float64) *mat.Dense {
	p, q := len(a)/n, len(b)/n
	K := mat.NewDense(p, q, nil)
	for i := 0; i < p; i++ {
		for j := 0; j < q; j++ {
			s := 0.0
			for c := 0; c < n; c++ {
				t := a[i*n+c] - b[j*n+c]
				s += t * t
			}
			K.Set(i, j, math.Exp(-gamma*s))
		}
	}
	return K
}

// polyGram returns (a_i·b_j + 1)² for the rows of a and b.
func polyGram(a, b []float64, n int) *mat.Dense {
	p, q := len(a)/n, len(b)/n
	K := mat.NewDense(p, q, nil)
	for i := 0; i < p; i++ {
		for j := 0; j < q; j++ {
			s := 1.0
			for c := 0; c < n; c++ {
				s += a[i*n+c] * b[j*n+c]
			}
			K.Set(i, j, s*s)
		}
	}
	return K
}

// eigenApprox returns K_xL K_LL⁺ K_Lx' through the eigenpairs of K_LL above floor·λ_max: the map
// NystromProjection replaced, as the reference.
func eigenApprox(t *testing.T, KLL, KxL *mat.Dense, floor float64) *mat.Dense {
	l, _ := KLL.Dims()
	vals, vecs, err := eigenSym(mat.NewSymDense(l, mat.DenseCopyOf(KLL).RawMatrix().Data), "K")
	if err != nil {
		t.Fatal(err)
	}
	var cols []int
	for c, v := range vals {
		if v > floor*vals[l-1] {
			cols = append(cols, c)
		}
	}
	q, _ := KxL.Dims()
	phi := mat.NewDense(q, len(cols), nil)
	for k, c := range cols {
		v := mat.NewVecDense(l, mat.Col(nil, c, vecs))
		var col mat.VecDense
		col.MulVec(KxL, v)
		col.ScaleVec(1/math.Sqrt(vals[c]), &col)
		phi.SetCol(k, col.RawVector().Data)
	}
	var out mat.Dense
	out.Mul(phi, phi.T())
	return &out
}

// The pivoted-Cholesky projection is the Nyström map: on the landmarks φφᵀ reproduces K, and on
// other inputs it gives K_xL K_LL⁺ K_Lx as the eigenvector map does; the landmarks it leaves out are
// exactly those K cannot resolve (duplicates, a polynomial kernel's rank).
func TestNystromProjectionIsNystromMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 3
	draw := func(rows int) []float64 {
		x := make([]float64, rows*n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	base := draw(40)
	dup := append(append([]float64{}, base...), base[:15*n]...) // 15 landmarks twice
	test := draw(25)
	cases := []struct {
		name      string
		landmarks []float64
		gram      func(a, b []float64) *mat.Dense
		rank      int     // the number of components expected; 0: not checked
		tol       float64 // on the approximation, against the eigenvector map's
	}{
		{"rbf", base, func(a, b []float64) *mat.Dense { return rbfGram(a, b, n, 0.5) }, 40, 1e-9},
		{"rbf duplicated landmarks", dup, func(a, b []float64) *mat.Dense { return rbfGram(a, b, n, 0.5) }, 40, 1e-9},
		{"poly degree 2 (rank 10)", base, func(a, b []float64) *mat.Dense { return polyGram(a, b, n) }, 10, 1e-9},
		// γ small: a continuum of eigenvalues down to rounding, which both maps cut at their floors.
		{"rbf nearly singular", draw(200), func(a, b []float64) *mat.Dense { return rbfGram(a, b, n, 0.02) }, 0, 1e-7},
	}
	for _, tc := range cases {
		KLL := tc.gram(tc.landmarks, tc.landmarks)
		KxL := tc.gram(test, tc.landmarks)
		P, err := NystromProjection(KLL)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l, c := P.Dims()
		if tc.rank > 0 && c != tc.rank {
			t.Errorf("%s: %d components, want %d", tc.name, c, tc.rank)
		}
		var phiL, onL, phiX, onX mat.Dense
		phiL.Mul(KLL, P)
		onL.Mul(&phiL, phiL.T())
		phiX.Mul(KxL, P)
		onX.Mul(&phiX, phiX.T())
		ref := eigenApprox(t, KLL, KxL, nystromFloor)
		scale := maxAbs(KLL)
		dL, dX := maxAbsDiff(&onL, KLL)/scale, maxAbsDiff(&onX, ref)/scale
		t.Logf("%s: %d landmarks, %d components; on the landmarks |φφᵀ − K| %.2g, elsewhere |φφᵀ − eigenvector map| %.2g",
			tc.name, l, c, dL, dX)
		if dL > tc.tol || dX > tc.tol {
			t.Errorf("%s: the map is off by %.3g on the landmarks and %.3g elsewhere (tolerance %g)", tc.name, dL, dX, tc.tol)
		}
	}
}

// A Gram matrix with no positive diagonal entry has no map; an indefinite one (a callable kernel
// need not be positive semi-definite) is factored as far as its pivots stay positive.
func TestNystromProjectionDegenerate(t *testing.T) {
	if _, err := NystromProjection(mat.NewDense(3, 3, nil)); err == nil {
		t.Errorf("zero Gram matrix: no error")
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), -1} {
		if _, err := NystromProjection(mat.NewDense(1, 1, []float64{v})); err == nil {
			t.Errorf("Gram matrix [[%g]]: no error", v)
		}
	}
	P, err := NystromProjection(mat.NewDense(2, 2, []float64{1, 2, 2, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, c := P.Dims(); c != 1 || P.At(0, 0) != 1 || P.At(1, 0) != 0 {
		t.Errorf("indefinite [[1 2] [2 1]]: projection %v, want the first landmark alone", mat.Formatted(P))
	}
}

// BenchmarkNystromProjection times the projection of 1,500 rbf landmarks (calhousing-like inputs:
// 4 features, γ·n = 10) against the eigendecomposition it replaced.
func BenchmarkNystromProjection(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const l, n = 1500, 4
	x := make([]float64, l*n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	K := rbfGram(x, x, n, 10.0/n)
	b.Run("pivoted-cholesky", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := NystromProjection(K); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gonum-eigen", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := eigenSym(mat.NewSymDense(l, mat.DenseCopyOf(K).RawMatrix().Data), "K"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
