package ridge

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// onesOf returns the positions of the ones of 0/1 rows ys (m × d) as CSR row pointers and indices.
func onesOf(ys []int64, m, d int) (indptr, indices []int64) {
	indptr = make([]int64, m+1)
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			if ys[i*d+a] == 1 {
				indices = append(indices, int64(a))
			}
		}
		indptr[i+1] = int64(len(indices))
	}
	return indptr, indices
}

// denseToCSR is a with its zeros dropped.
func denseToCSR(t *testing.T, a *mat.Dense) *xmat.CSR {
	t.Helper()
	m, n := a.Dims()
	ptr := make([]int64, m+1)
	var ind []int64
	var data []float64
	for i := 0; i < m; i++ {
		for j, v := range a.RawRowView(i) {
			if v != 0 {
				ind, data = append(ind, int64(j)), append(data, v)
			}
		}
		ptr[i+1] = int64(len(ind))
	}
	csr, err := xmat.New(m, n, ptr, ind, data)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}

// TestCubeTargetsEqualDelta: the sparse form of 0/1 targets given by their ones is Δ = Y − 1pᵀ,
// row by row, with B no larger than Y's ones (columns mostly on store their zeros).
func TestCubeTargetsEqualDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 9))
	sp, _ := space.New("multilabel", []int64{7})
	const m, d = 40, 7
	ys := make([]int64, m*d)
	rate := []float64{0.05, 0.3, 0.5, 0.7, 0.95, 0, 1}
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			if r.Float64() < rate[a] {
				ys[i*d+a] = 1
			}
		}
	}
	p, err := NewProblem(sp, ys, m, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	indptr, indices := onesOf(ys, m, d)
	q, err := newCubeProblem(sp, m, indptr, indices, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if q.Delta != nil {
		t.Fatal("the cube problem holds Δ densely")
	}
	buf := make([]float64, d)
	for i := 0; i < m; i++ {
		if got, want := q.deltaRow(i, buf), p.Delta.RawRowView(i); !slices.Equal(got, want) {
			t.Fatalf("row %d: δ = %v, want %v", i, got, want)
		}
	}
	if nnz := q.targets.rowPtr[m]; nnz > len(indices) || nnz != len(q.targets.colRow) {
		t.Errorf("B has %d entries by rows and %d by columns for %d ones", nnz, len(q.targets.colRow), len(indices))
	}
}

// TestFitSparseYEqualsFit: a fit on targets given by their ones is the fit on the same targets as
// dense rows, for dense and sparse X, with and without intercept and weights, on X and on a
// Nyström map (the sparse-target path), and on the paths that read Δ densely (exact solver, rbf
// expansion, empirical reference).
func TestFitSparseYEqualsFit(t *testing.T) {
	defer func(v int64) { sparseYMinEntries = v }(sparseYMinEntries)
	sparseYMinEntries = 0 // the sparse fit even on this small problem
	r := rand.New(rand.NewPCG(4, 2))
	const m, n, d = 120, 9, 12
	sp, _ := space.New("multilabel", []int64{d})
	X := randDense(r, m, n)
	for i := 0; i < m; i++ { // a sparse X
		for j := 0; j < n; j++ {
			if r.Float64() < 0.5 {
				X.Set(i, j, 0)
			}
		}
	}
	ys := make([]int64, m*d)
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			if r.Float64() < 0.1+0.8*float64(a)/d {
				ys[i*d+a] = 1
			}
		}
	}
	indptr, indices := onesOf(ys, m, d)
	w := weights(r, m)
	csr := denseToCSR(t, X)
	cases := []struct {
		name string
		opt  func(*Options)
	}{
		{"cg", func(o *Options) { o.Solver = CG }},
		{"cg without intercept", func(o *Options) { o.Solver = CG; o.Intercept = false }},
		{"auto (exact)", func(o *Options) {}},
		{"nystrom cg", func(o *Options) {
			o.Solver, o.NComponents, o.Seed = CG, 30, 3
			o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.1}
		}},
		{"rbf expansion", func(o *Options) { o.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.1} }},
		{"empirical reference", func(o *Options) { o.Solver, o.EmpiricalWeight = CG, 0.5 }},
	}
	for _, c := range cases {
		for _, sparse := range []bool{false, true} {
			for _, sw := range [][]float64{nil, w} {
				opt := baseOptions()
				opt.Tol = 1e-12
				opt.MaxIter = 2000
				c.opt(&opt)
				var want, got *Model
				var err1, err2 error
				if sparse {
					want, err1 = FitCSR(sp, csr, ys, sw, opt)
					got, err2 = FitCSRSparseY(sp, csr, indptr, indices, sw, opt)
				} else {
					want, err1 = Fit(sp, X.RawMatrix().Data, m, n, ys, sw, opt)
					got, err2 = FitSparseY(sp, X.RawMatrix().Data, m, n, indptr, indices, sw, opt)
				}
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v / %v", c.name, err1, err2)
				}
				a, b := got.Coef, want.Coef
				if a == nil {
					a, b = got.Dual, want.Dual
				}
				if rd := relDiffDense(a, b); rd > 1e-8 {
					t.Errorf("%s (sparse X %v, weights %v): coefficients differ by %.2e relative", c.name, sparse, sw != nil, rd)
				}
			}
		}
	}
}

// relDiffDense is ‖a − b‖/‖b‖.
func relDiffDense(a, b *mat.Dense) float64 {
	var diff mat.Dense
	diff.Sub(a, b)
	return mat.Norm(&diff, 2) / mat.Norm(b, 2)
}

// TestFitSparseYRefuses names what is wrong with targets given by their ones.
func TestFitSparseYRefuses(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	X := []float64{1, 2, 3, 4}
	opt := baseOptions()
	cases := []struct {
		indptr, indices []int64
		want            string
	}{
		{[]int64{0, 1}, []int64{0}, "row pointers"},
		{[]int64{0, 2, 1}, []int64{0}, "row pointers"},
		{[]int64{0, 1, 1}, []int64{3}, "out of range"},
		{[]int64{0, 2, 2}, []int64{1, 1}, "not increasing"},
		{[]int64{0, 1, 1}, []int64{-1}, "out of range"},
	}
	for _, c := range cases {
		if _, err := FitSparseY(sp, X, 2, 2, c.indptr, c.indices, nil, opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want an error mentioning %q", c.indptr, c.indices, err, c.want)
		}
	}
	perm, _ := space.New("permutations", []int64{3})
	if _, err := FitSparseY(perm, X, 2, 2, []int64{0, 1, 1}, []int64{0}, nil, opt); err == nil || !strings.Contains(err.Error(), "multilabel") {
		t.Errorf("a permutation space: %v", err)
	}
}

// TestFitSparseYManyLabels fits 20,000 labels on 3,000 rows (a dense Δ would be 480 MB) with
// far less memory than Δ, and equals the dense-target fit on the first labels' columns where that
// is small enough to run: the labels are independent problems under the uniform measure only
// through H, so the check is on a slice of the same data.
func TestFitSparseYManyLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("memory test")
	}
	const m, n, d, per = 3000, 30, 20000, 4
	sp, _ := space.New("multilabel", []int64{d})
	r := rand.New(rand.NewPCG(7, 7))
	X := randDense(r, m, n)
	indptr := make([]int64, m+1)
	var indices []int64
	for i := 0; i < m; i++ {
		used := map[int64]bool{}
		for len(used) < per {
			used[r.Int64N(d)] = true
		}
		row := make([]int64, 0, per)
		for a := range used {
			row = append(row, a)
		}
		sortInt64s(row)
		indices = append(indices, row...)
		indptr[i+1] = int64(len(indices))
	}
	opt := baseOptions()
	opt.Solver, opt.Tol = CG, 1e-6
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	md, err := FitSparseY(sp, X.RawMatrix().Data, m, n, indptr, indices, nil, opt)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
	delta := float64(m) * d * 8 / (1 << 20)
	t.Logf("%d × %d labels: %d CG iterations, %.0f MiB allocated (a dense Δ alone: %.0f MiB)", m, d, md.Result.Iterations, alloc, delta)
	if !md.Result.Converged || alloc > delta/2 {
		t.Errorf("converged %v, %.0f MiB allocated against %.0f MiB for Δ", md.Result.Converged, alloc, delta)
	}
}

// TestCheckOnes: the values stored at the positions of 0/1 targets must be ones; the error names
// the row and the label.
func TestCheckOnes(t *testing.T) {
	indptr, indices := []int64{0, 2, 2, 3}, []int64{0, 3, 1}
	for _, c := range []struct {
		values []float64
		want   string
	}{
		{[]float64{1, 1, 1}, ""},
		{[]float64{1, 1, 2}, "y: row 2: label 1 has value 2, want 0 or 1"},
		{[]float64{1, -1, 1}, "y: row 0: label 3 has value -1, want 0 or 1"},
		{[]float64{1, 1, 0.5}, "has value 0.5"},
		{[]float64{0, 1, 1}, "y: row 0: label 0 is stored as 0"},
		{[]float64{1, 1}, "2 values for 3 positions"},
	} {
		err := CheckOnes(indptr, indices, c.values)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("values %v: %v, want %q", c.values, err, c.want)
		}
	}
}
