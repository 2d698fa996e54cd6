package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// testGram returns k(a_i, b_j) for the rows of a and b (n features each).
func testGram(a, b []float64, n int, k func(x, y []float64) float64) *mat.Dense {
	p, q := len(a)/n, len(b)/n
	K := mat.NewDense(p, q, nil)
	for i := 0; i < p; i++ {
		for j := 0; j < q; j++ {
			K.Set(i, j, k(a[i*n:(i+1)*n], b[j*n:(j+1)*n]))
		}
	}
	return K
}

// rbfGram returns exp(−γ‖a_i − b_j‖²) for the rows of a and b.
func rbfGram(a, b []float64, n int, gamma float64) *mat.Dense {
	return testGram(a, b, n, func(x, y []float64) float64 {
		s := 0.0
		for c := range x {
			s += (x[c] - y[c]) * (x[c] - y[c])
		}
		return math.Exp(-gamma * s)
	})
}

// polyGram returns (a_i·b_j + 1)² for the rows of a and b.
func polyGram(a, b []float64, n int) *mat.Dense {
	return testGram(a, b, n, func(x, y []float64) float64 {
		s := 1.0
		for c := range x {
			s += x[c] * y[c]
		}
		return s * s
	})
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
	draw := func(rows int) []float64 { return randDense(r, rows, n).RawMatrix().Data }
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

// A Gram matrix with no positive diagonal entry has no map, and an indefinite one (a callable
// kernel need not be positive semi-definite) is refused as the exact kernel model refuses it: it
// was factored as far as its pivots stayed positive, which left a sigmoid kernel on 100 rows 3
// components and no word (probe FL). One that is PSD to within the factorisation's floor is not.
func TestNystromProjectionDegenerate(t *testing.T) {
	if _, err := NystromProjection(mat.NewDense(3, 3, nil)); err == nil {
		t.Errorf("zero Gram matrix: no error")
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), -1} {
		if _, err := NystromProjection(mat.NewDense(1, 1, []float64{v})); err == nil {
			t.Errorf("Gram matrix [[%g]]: no error", v)
		}
	}
	for _, K := range [][]float64{{1, 2, 2, 1}, {1, 0, 0, 1, 0, 0, 0, 0, 0, 0, -0.5, 0, 0, 0, 0, 1}, {1, 0, 0, 0, 0, 0.01, 0, 0.01, 0}} {
		l := int(math.Sqrt(float64(len(K))))
		if _, err := NystromProjection(mat.NewDense(l, l, K)); err == nil || !strings.Contains(err.Error(), "not positive semi-definite") {
			t.Errorf("indefinite %v: error %v", K, err)
		}
	}
	// a duplicate landmark leaves a Schur complement of rounding: not a refusal
	P, err := NystromProjection(mat.NewDense(3, 3, []float64{1, 0.3, 1, 0.3, 1, 0.3, 1, 0.3, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, c := P.Dims(); c != 2 {
		t.Errorf("a duplicated landmark: %d components, want 2", c)
	}
}

// The map's triangular product (the kernel at the resolved landmarks in pivot order, times the
// triangle block by block) gives the dense product's φ, on dense and sparse inputs, and a dense
// projection (an older model's, from an eigendecomposition) takes the dense product.
func TestNystromTriangularTransform(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const m, n = 900, 5
	X := make([]float64, m*n)
	for i := range X {
		if r.IntN(3) > 0 {
			X[i] = r.NormFloat64()
		}
	}
	copy(X[300*n:], X[:200*n]) // duplicate rows: dependent landmarks for the pivoting to leave out
	for _, in := range []xmat.Matrix{{Dense: mat.NewDense(m, n, X)}, {Sparse: xmat.FromDense(m, n, X)}} {
		for _, intercept := range []bool{true, false} {
			ny, err := buildNystrom(kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}, intercept, in, 600, 1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			l, c := ny.dims()
			if ny.tri == nil || ny.proj != nil || c >= l {
				t.Fatalf("sparse=%v: %d landmarks, %d components, triangular %v: want fewer components and the triangle",
					in.Sparse != nil, l, c, ny.tri != nil)
			}
			if decoded := newNystromMap(ny.kern, intercept, ny.landmarks, ny.projection()); decoded.tri == nil ||
				!slices.Equal(decoded.order, ny.order) || !mat.Equal(decoded.tri, ny.tri) {
				t.Fatalf("sparse=%v: the map rebuilt from its projection (as a model is decoded) lost its triangle", in.Sparse != nil)
			}
			got, _ := ny.apply(in, nil)
			dense := *ny
			dense.proj, dense.order, dense.tri, dense.resolved, dense.resolvedNorms = ny.projection(), nil, nil, xmat.Matrix{}, nil
			want, _ := dense.apply(in, nil)
			// The two sum the same terms in different orders; R⁻¹'s entries reach 1/√(the floor),
			// so the bound on their difference is 2·L·ε·(|K_xL|·|P|), not a multiple of |φ|.
			K := mat.NewDense(m, l, nil)
			ny.gram(K, in)
			absK, absP := mat.DenseCopyOf(K), mat.DenseCopyOf(ny.projection())
			absK.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, absK)
			absP.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, absP)
			var bound mat.Dense
			bound.Mul(absK, absP)
			worst := 0.0
			for i := 0; i < m; i++ {
				for j := 0; j < c; j++ {
					worst = math.Max(worst, math.Abs(got.At(i, j)-want.At(i, j))/(2*float64(l)*0x1p-52*bound.At(i, j)))
				}
			}
			t.Logf("sparse=%v intercept=%v: %d of %d landmarks resolved; |difference| / bound at most %.3g",
				in.Sparse != nil, intercept, c, l, worst)
			if worst > 1 {
				t.Errorf("sparse=%v intercept=%v: triangular φ differs from the dense product by %.3g × the rounding bound",
					in.Sparse != nil, intercept, worst)
			}
			// A projection rotated by an orthogonal Q (as an eigenvector map is) is dense: no pivot
			// order, the dense product, the same inner products.
			var q mat.QR
			q.Factorize(randDense(r, c, c))
			var Q, rotated mat.Dense
			q.QTo(&Q)
			rotated.Mul(ny.projection(), &Q)
			old := newNystromMap(ny.kern, intercept, ny.landmarks, &rotated)
			if old.tri != nil {
				t.Fatalf("a rotated projection was taken as triangular")
			}
			var a, b mat.Dense
			phi, _ := old.apply(in, nil)
			a.Mul(phi, phi.T())
			b.Mul(want, want.T())
			if diff := maxAbsDiff(&a, &b) / maxAbs(&b); diff > 1e-10 {
				t.Errorf("sparse=%v intercept=%v: the dense map's inner products differ by %.3g", in.Sparse != nil, intercept, diff)
			}
		}
	}
}

// A set stop flag cancels the map's factorisation: 10,000 landmarks (the most n_components allows)
// took 48 s to factor beside a CI run (one block of pivots, about 0.2 s), which Ctrl-C must not wait for.
func TestNystromProjectionCancels(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const m, n = 3000, 4
	X := randDense(r, m, n).RawMatrix().Data
	var stop cancel.Flag
	stop.Stop()
	t0 := time.Now()
	_, err := buildNystrom(kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}, true, xmat.Matrix{Dense: mat.NewDense(m, n, X)}, m, 1, nil, &stop)
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("stopped map: error %v, want ErrCancelled", err)
	}
	t.Logf("cancelled after %v", time.Since(t0))
}

// A set stop flag ends the map's features: at 3,000 rows and landmarks they took 0.8 s of a fit,
// deaf to Ctrl-C (probe DG).
func TestNystromFeaturesCancel(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const m, n = 400, 4
	in := xmat.Matrix{Dense: randDense(r, m, n)}
	ny, err := buildNystrom(kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}, true, in, 100, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stop cancel.Flag
	stop.Stop()
	if _, err := ny.apply(in, &stop); !errors.Is(err, ErrCancelled) {
		t.Errorf("features with the flag set: error %v, want ErrCancelled", err)
	}
	if _, err := ny.apply(in, nil); err != nil {
		t.Errorf("features without a flag: %v", err)
	}
}

// pivotOrder recognises a projection triangular in some order of its rows, with zero rows for the
// landmarks left out, and nothing else: a dense row, two rows starting in one column, a column
// where no row starts, or −0 where the triangle has +0 (projection could not rebuild it).
func TestPivotOrder(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		name string
		rows [][]float64
		want []int
	}{
		{"triangular", [][]float64{{0, 2, 3}, {0, 0, 0}, {1, 4, 5}, {0, 0, 6}}, []int{2, 0, 3}},
		{"dense", [][]float64{{1, 2}, {3, 4}}, nil},
		{"two rows start in a column", [][]float64{{1, 2}, {1, 0}}, nil},
		{"no row starts in a column", [][]float64{{1, 2}, {0, 0}}, nil},
		{"−0 before the pivot", [][]float64{{1, 2}, {negZero, 3}}, nil},
	}
	for _, tc := range cases {
		P := mat.NewDense(len(tc.rows), len(tc.rows[0]), nil)
		for i, row := range tc.rows {
			P.SetRow(i, row)
		}
		if got := pivotOrder(P); !slices.Equal(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkNystromProjection times the projection of 1,500 rbf landmarks (calhousing-like inputs:
// 4 features, γ·n = 10) against the eigendecomposition it replaced.
func BenchmarkNystromProjection(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const l, n = 1500, 4
	x := randDense(r, l, n).RawMatrix().Data
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

// The left-over Schur complement is checked block by block of rows (its whole t×t beside K was
// unbounded by the budget): a rank-one K with an indefinite pair of entries in a late block is
// refused, and the rank-one K itself is not.
func TestNystromLeftOverCheckedInBlocks(t *testing.T) {
	const l = 1200
	K := mat.NewDense(l, l, nil)
	for i := range K.RawMatrix().Data {
		K.RawMatrix().Data[i] = 1
	}
	if _, err := NystromProjection(K); err != nil {
		t.Fatalf("rank one: %v", err)
	}
	K.Set(1150, 1160, 1.01)
	K.Set(1160, 1150, 1.01)
	if _, err := NystromProjection(K); err == nil || !strings.Contains(err.Error(), "not positive semi-definite") {
		t.Errorf("an indefinite pair in the second block: %v", err)
	}
}
