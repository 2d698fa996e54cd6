package xmat

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Malformed CSR arrays are refused with a message naming the argument.
func TestNewRefusesMalformed(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name      string
		rows, col int
		ptr, ind  []int32
		data      []float64
		want      string
	}{
		{"short indptr", 2, 3, []int32{0, 1}, []int32{0}, []float64{1}, "indptr has 2 entries"},
		{"indptr not from 0", 1, 3, []int32{1, 1}, []int32{0}, []float64{1}, "indptr[0] = 1"},
		{"decreasing indptr", 2, 3, []int32{0, 2, 1}, []int32{0, 1}, []float64{1, 2}, "indptr must be non-decreasing"},
		{"indptr beyond nnz", 1, 3, []int32{0, 3}, []int32{0, 1}, []float64{1, 2}, "exceeds nnz"},
		{"indptr short of nnz", 1, 3, []int32{0, 1}, []int32{0, 1}, []float64{1, 2}, "want nnz = 2"},
		{"index too large", 1, 3, []int32{0, 1}, []int32{3}, []float64{1}, "indices[0] = 3 (row 0) is out of range"},
		{"negative index", 1, 3, []int32{0, 1}, []int32{-1}, []float64{1}, "indices[0] = -1"},
		{"unsorted", 1, 3, []int32{0, 2}, []int32{2, 1}, []float64{1, 2}, "must be sorted"},
		{"duplicate", 1, 3, []int32{0, 2}, []int32{1, 1}, []float64{1, 2}, "without duplicates"},
		{"NaN", 1, 3, []int32{0, 1}, []int32{1}, []float64{nan}, "data[0] = NaN"},
		{"Inf", 1, 3, []int32{0, 1}, []int32{1}, []float64{math.Inf(1)}, "data[0] = +Inf"},
		{"lengths", 1, 3, []int32{0, 1}, []int32{1}, []float64{1, 2}, "indices has 1 entries but data has 2"},
	}
	for _, c := range cases {
		_, err := New(c.rows, c.col, c.ptr, c.ind, c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// The products agree with their dense forms, whatever the number of threads and index type.
func TestProductsMatchDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const m, n, k = 300, 40, 5
	x := make([]float64, m*n)
	for i := range x {
		if r.Float64() < 0.2 {
			x[i] = r.NormFloat64()
		}
	}
	A := FromDense(m, n, x)
	X := mat.NewDense(m, n, x)
	W := mat.NewDense(n, k, nil)
	G := mat.NewDense(m, k, nil)
	for i := range W.RawMatrix().Data {
		W.RawMatrix().Data[i] = r.NormFloat64()
	}
	for i := range G.RawMatrix().Data {
		G.RawMatrix().Data[i] = r.NormFloat64()
	}
	s := make([]float64, m)
	for i := range s {
		s[i] = r.Float64()
	}
	close := func(what string, got, want *mat.Dense) {
		t.Helper()
		if !mat.EqualApprox(got, want, 1e-12) {
			t.Fatalf("%s differs from its dense form", what)
		}
	}
	var want mat.Dense
	U := mat.NewDense(m, k, nil)
	A.Mul(U.RawMatrix().Data, k, W.RawMatrix().Data, k, k)
	want.Mul(X, W)
	close("X·W", U, &want)
	T := mat.NewDense(n, k, nil)
	A.TMul(T.RawMatrix().Data, k, G.RawMatrix().Data, k, k)
	want.Reset()
	want.Mul(X.T(), G)
	close("Xᵀ·G", T, &want)
	Gr := mat.NewDense(n, n, nil)
	A.Gram(Gr.RawMatrix().Data, n, s, make([]float64, n))
	var xs mat.Dense
	xs.Apply(func(i, _ int, v float64) float64 { return v * s[i] }, X)
	want.Reset()
	want.Mul(X.T(), &xs)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			Gr.Set(i, j, want.At(i, j)) // only the upper triangle is written
		}
	}
	close("Xᵀdiag(s)X", Gr, &want)
	K := mat.NewDense(m, m, nil)
	Products(K, A, A)
	want.Reset()
	want.Mul(X, X.T())
	close("X·Xᵀ (sparse, sparse)", K, &want)
	DenseProducts(K, X, A)
	close("X·Xᵀ (dense, sparse)", K, &want)
	ProductsDense(K, A, X)
	close("X·Xᵀ (sparse, dense)", K, &want)
	if !Equal(A.Transpose().Transpose(), A) {
		t.Fatal("transposing twice changes the matrix")
	}
}
