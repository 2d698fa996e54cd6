package space_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The closed-form spectral decompositions must reproduce the dense S: the projectors are
// orthogonal, idempotent, sum to the identity and have the stated ranks, Σ σ_k P_k equals S entry
// by entry, and the eigenvalues with their multiplicities are those of a numerical
// eigendecomposition of S.
func TestSpectralDecompositionsMatchDenseCovariance(t *testing.T) {
	one := func(ns ...int64) [][]int64 {
		var out [][]int64
		for _, n := range ns {
			out = append(out, []int64{n})
		}
		return out
	}
	cases := []struct {
		kind   string
		params [][]int64
	}{
		{"permutations", one(2, 3, 4, 5, 7, 9)},
		{"dicycles", one(3, 4, 5, 6, 8)},
		{"ucycles", one(3, 4, 5, 6, 8)},
		{"cliques", one(2, 3, 4, 5, 6, 9)},
		{"tournaments", one(2, 3, 5, 7)},
		{"multiclass", one(1, 2, 5, 30)},
		{"multilabel", one(1, 4, 30)},
		{"ksubsets", [][]int64{{2, 1}, {5, 2}, {9, 4}, {6, 6}}},
	}
	for _, c := range cases {
		for _, par := range c.params {
			sp, err := space.New(c.kind, par)
			if err != nil {
				t.Fatal(err)
			}
			op, ok := space.SpectralOf(sp.Covariance())
			if !ok {
				t.Fatalf("%s%v: covariance is not Spectral", c.kind, par)
			}
			checkSpectral(t, c.kind, int(par[0]), op)
		}
	}
	// Spaces without a closed form say so.
	sp, _ := space.New("ordinal", []int64{5})
	if _, ok := space.SpectralOf(sp.Covariance()); ok {
		t.Errorf("ordinal: SpectralOf claims a closed form")
	}
}

func checkSpectral(t *testing.T, kind string, n int, op space.Spectral) {
	t.Helper()
	d := op.Dim()
	S := space.Dense(op)
	es := op.Spectrum()
	// Dense projectors, column by column.
	projs := make([]*mat.Dense, len(es))
	e, col := make([]float64, d), make([]float64, d)
	total := 0
	for k, eig := range es {
		if eig.Dim <= 0 {
			t.Errorf("%s(%d): eigenspace %d has dimension %d", kind, n, k, eig.Dim)
		}
		total += eig.Dim
		projs[k] = mat.NewDense(d, d, nil)
		for j := 0; j < d; j++ {
			clear(e)
			e[j] = 1
			op.Project(k, col, e)
			projs[k].SetCol(j, col)
		}
	}
	if total != d {
		t.Fatalf("%s(%d): eigenspace dimensions sum to %d, want d = %d", kind, n, total, d)
	}
	const tol = 1e-12
	sum := mat.NewDense(d, d, nil)
	recon := mat.NewDense(d, d, nil)
	for k, pk := range projs {
		// Symmetric, idempotent, orthogonal to the others, rank = trace = stated dimension.
		if !mat.EqualApprox(pk, pk.T(), tol) {
			t.Errorf("%s(%d): P_%d is not symmetric", kind, n, k)
		}
		var sq mat.Dense
		sq.Mul(pk, pk)
		if !mat.EqualApprox(&sq, pk, tol) {
			t.Errorf("%s(%d): P_%d is not idempotent", kind, n, k)
		}
		if tr := mat.Trace(pk); math.Abs(tr-float64(es[k].Dim)) > 1e-9 {
			t.Errorf("%s(%d): trace P_%d = %v, stated dimension %d", kind, n, k, tr, es[k].Dim)
		}
		for l := k + 1; l < len(projs); l++ {
			var cross mat.Dense
			cross.Mul(pk, projs[l])
			if mat.Norm(&cross, math.Inf(1)) > tol {
				t.Errorf("%s(%d): P_%d P_%d ≠ 0", kind, n, k, l)
			}
		}
		sum.Add(sum, pk)
		var sp mat.Dense
		sp.Scale(es[k].Value, pk)
		recon.Add(recon, &sp)
	}
	var eye mat.Dense
	eye.Scale(1, eyeDense(d))
	if !mat.EqualApprox(sum, &eye, tol) {
		t.Errorf("%s(%d): Σ P_k ≠ I", kind, n)
	}
	if !mat.EqualApprox(recon, S, 1e-12) {
		t.Errorf("%s(%d): Σ σ_k P_k differs from S by %.3g", kind, n, maxAbsDiff(recon, S))
	}
	// The multiset of eigenvalues matches a numerical eigendecomposition.
	var eig mat.EigenSym
	if !eig.Factorize(S, false) {
		t.Fatalf("%s(%d): eigendecomposition failed", kind, n)
	}
	got := eig.Values(nil)
	var want []float64
	for _, eg := range es {
		for range eg.Dim {
			want = append(want, eg.Value)
		}
	}
	slices.Sort(want)
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-10*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s(%d): eigenvalue %d: numerical %.15g, closed form %.15g", kind, n, i, got[i], want[i])
			break
		}
	}
	// And S v = Σ σ_k P_k v through the O(d) operators on a random vector.
	r := rand.New(rand.NewPCG(uint64(n), 7))
	v := make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	sv, acc, pv := make([]float64, d), make([]float64, d), make([]float64, d)
	op.MulVec(sv, v)
	for k, eg := range es {
		op.Project(k, pv, v)
		for i := range acc {
			acc[i] += eg.Value * pv[i]
		}
	}
	for i := range sv {
		if math.Abs(sv[i]-acc[i]) > 1e-12*math.Max(1, math.Abs(sv[i])) {
			t.Errorf("%s(%d): (Sv)[%d] = %v, Σ σ_k P_k v = %v", kind, n, i, sv[i], acc[i])
			break
		}
	}
}

// The closed forms named in the documentation: permutations have the eigenvalues (n+1)/3 and 1/3,
// and directed cycles are singular on the n−1 potentials (every cycle has zero net flow at each
// vertex).
func TestSpectralNamedEigenvalues(t *testing.T) {
	for _, n := range []int{3, 6, 50} {
		sp, _ := space.NewPermutations(n)
		es := sp.Covariance().(space.Spectral).Spectrum()
		want := []space.Eigenspace{{Value: float64(n+1) / 3, Dim: n - 1}, {Value: 1.0 / 3, Dim: (n - 1) * (n - 2) / 2}}
		for k := range want {
			if math.Abs(es[k].Value-want[k].Value) > 1e-14 || es[k].Dim != want[k].Dim {
				t.Errorf("permutations(%d): eigenspace %d = %+v, want %+v", n, k, es[k], want[k])
			}
		}
		dc, _ := space.NewDirectedCycles(n)
		es = dc.Covariance().(space.Spectral).Spectrum()
		if math.Abs(es[0].Value) > 1e-14 || es[0].Dim != n-1 {
			t.Errorf("dicycles(%d): potential eigenspace %+v, want value 0 and dimension %d", n, es[0], n-1)
		}
	}
}

func eyeDense(d int) *mat.Dense {
	e := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		e.Set(i, i, 1)
	}
	return e
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	var m float64
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
}
