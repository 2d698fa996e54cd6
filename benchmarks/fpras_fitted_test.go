package benchmarks

// Scores of models fitted to data, for the FPRAS table (TestFPRASAdaptiveTable): a
// ProbabilisticStructured ranking model fitted to the shared glass set (6 labels), and a
// DirectedCycles(7) model fitted to routes drawn from a planted linear model.

import (
	"compress/gzip"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

// labelRanking reads one of the bundled label-ranking sets (scikit-lr's CSV: a header "m,n,k",
// then n features and k ranks per row) and returns X standardised column by column.
func labelRanking(t *testing.T, name string) (X []float64, ys []int64, m, n, k int) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "python", "combpred", "datasets", "data", "label_ranking", name+".csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	dims := make([]int, 3)
	for i := range dims {
		if dims[i], err = strconv.Atoi(recs[0][i]); err != nil {
			t.Fatal(err)
		}
	}
	m, n, k = dims[0], dims[1], dims[2]
	X, ys = make([]float64, m*n), make([]int64, m*k)
	for i, rec := range recs[1 : m+1] {
		for j := 0; j < n; j++ {
			if X[i*n+j], err = strconv.ParseFloat(rec[j], 64); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < k; j++ {
			if ys[i*k+j], err = strconv.ParseInt(rec[n+j], 10, 64); err != nil {
				t.Fatal(err)
			}
		}
	}
	standardise(X, m, n)
	return X, ys, m, n, k
}

func standardise(X []float64, m, n int) {
	for j := 0; j < n; j++ {
		var s, s2 float64
		for i := 0; i < m; i++ {
			s += X[i*n+j]
			s2 += X[i*n+j] * X[i*n+j]
		}
		mean := s / float64(m)
		sd := math.Sqrt(max(s2/float64(m)-mean*mean, 0))
		if sd == 0 {
			sd = 1
		}
		for i := 0; i < m; i++ {
			X[i*n+j] = (X[i*n+j] - mean) / sd
		}
	}
}

// fittedScores fits prob.Fit (default regularisation, exact inference, L-BFGS to 1e-6) on the first
// 80 % of the rows and returns the scores u = Wᵀx of the held-out rows, with R‖u‖ of each.
func fittedScores(t *testing.T, sp space.Space, X []float64, ys []int64, m, n int) (us [][]float64, a []float64) {
	t.Helper()
	train := m * 4 / 5
	w := sp.Width()
	md, err := prob.Fit(sp, X[:train*n], train, n, ys[:train*w], nil, prob.Options{Intercept: true, Tol: 1e-6, MaxIter: 1000})
	if err != nil {
		t.Fatal(err)
	}
	q, d := m-train, sp.Dim()
	U := make([]float64, q*d)
	if err := md.Decision(X[train*n:], q, n, U); err != nil {
		t.Fatal(err)
	}
	R := maxNorm(sp)
	for i := 0; i < q; i++ {
		u := U[i*d : (i+1)*d]
		us = append(us, u)
		a = append(a, R*math.Sqrt(dot(u, u)))
	}
	return us, a
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// plantedRoutes draws m inputs and routes y = decode(Wᵀx + noise) for a planted W: data with a
// learnable signal for a DirectedCycles model.
func plantedRoutes(sp space.Space, m, n int, seed uint64) (X []float64, ys []int64) {
	r := rand.New(rand.NewPCG(seed, 7))
	d, w := sp.Dim(), sp.Width()
	W := make([]float64, n*d)
	for i := range W {
		W[i] = r.NormFloat64()
	}
	X, ys = make([]float64, m*n), make([]int64, m*w)
	u := make([]float64, d)
	for i := 0; i < m; i++ {
		x := X[i*n : (i+1)*n]
		for j := range x {
			x[j] = r.NormFloat64()
		}
		for c := range u {
			u[c] = 0.5 * r.NormFloat64()
			for j := range x {
				u[c] += x[j] * W[j*d+c]
			}
		}
		sp.Decode(u, ys[i*w:(i+1)*w])
	}
	return X, ys
}

// medianAndMax returns the indices of the median and the largest of a.
func medianAndMax(a []float64) (med, top int) {
	idx := make([]int, len(a))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		switch {
		case a[i] < a[j]:
			return -1
		case a[i] > a[j]:
			return 1
		}
		return 0
	})
	return idx[len(idx)/2], idx[len(idx)-1]
}
