package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// sparsify zeroes about 70% of X's entries, and the whole of row 3, and returns X with its CSR
// form with int32 or int64 indices.
func sparsify(t testing.TB, X []float64, m, n int, seed uint64, wide bool) *xmat.CSR {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 5))
	for i := range X {
		if r.Float64() < 0.7 || i/n == 3 {
			X[i] = 0
		}
	}
	ptr64, ptr32 := []int64{0}, []int32{0}
	var ind64 []int64
	var ind32 []int32
	var data []float64
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if v := X[i*n+j]; v != 0 {
				ind64, ind32, data = append(ind64, int64(j)), append(ind32, int32(j)), append(data, v)
			}
		}
		ptr64, ptr32 = append(ptr64, int64(len(data))), append(ptr32, int32(len(data)))
	}
	var a *xmat.CSR
	var err error
	if wide {
		a, err = xmat.New(m, n, ptr64, ind64, data)
	} else {
		a, err = xmat.New(m, n, ptr32, ind32, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Sparse and dense inputs with the same entries give the same model — coefficients or dual
// coefficients within 1e-10 relative — for every solver and kernel and a few spaces, and each
// model predicts the other layout's inputs with the same scores.
func TestSparseFitEqualsDense(t *testing.T) {
	rbf := kernel.Kernel{Kind: kernel.RBF, Gamma: 0.3}
	poly := kernel.Kernel{Kind: kernel.Poly, Gamma: 0.5, Degree: 2, Coef0: 1}
	lin := kernel.Kernel{Kind: kernel.Linear}
	cases := []struct {
		name string
		opt  func(o *Options)
	}{
		{"linear exact", func(o *Options) { o.Solver = Exact }},
		{"linear cg", func(o *Options) { o.Solver = CG }},
		{"linear cg diag precond", func(o *Options) { o.Solver = CG; o.MaxIter = 5000 }},
		// Without an intercept: with one, SGD on a dense X runs on the centred rows (centring.go),
		// a sparse X's stay as they are, and five epochs end at different points of the way.
		{"linear sgd", func(o *Options) { o.Solver = SGD; o.MaxIter = 5; o.Tol = 0; o.Intercept = false }},
		{"linear empirical reference", func(o *Options) { o.Solver = CG; o.EmpiricalWeight = 0.5 }},
		{"rbf cg", func(o *Options) { o.Kernel = rbf; o.Solver = CG }},
		{"rbf exact", func(o *Options) { o.Kernel = rbf; o.Solver = Exact }},
		{"poly cg", func(o *Options) { o.Kernel = poly; o.Solver = CG }},
		{"rbf nystrom", func(o *Options) { o.Kernel = rbf; o.NComponents = 15; o.Solver = Exact }},
		{"poly nystrom cg", func(o *Options) { o.Kernel = poly; o.NComponents = 12; o.Solver = CG }},
	}
	const m, n = 60, 9
	for _, sp := range testSpaces(t) {
		for ci, c := range cases {
			for _, wide := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/int64=%v", sp.Kind(), c.name, wide)
				t.Run(name, func(t *testing.T) {
					if c.name == "linear cg diag precond" {
						defer func(e int) { sparseGramEntries = e }(sparseGramEntries)
						sparseGramEntries = 0
					}
					X, ys := synthetic(t, sp, m, n, uint64(40+ci))
					A := sparsify(t, X, m, n, uint64(ci), wide)
					opt := baseOptions()
					opt.Tol = 1e-13
					opt.Kernel = lin
					c.opt(&opt)
					w := weights(rand.New(rand.NewPCG(3, uint64(ci))), m)
					dense, err := Fit(sp, X, m, n, ys, w, opt)
					if err != nil {
						t.Fatal(err)
					}
					sparse, err := FitCSR(sp, A, ys, w, opt)
					if err != nil {
						t.Fatal(err)
					}
					a, b := dense.Coef, sparse.Coef
					if a == nil {
						a, b = dense.Dual, sparse.Dual
					}
					if diff := relDiff(b, a); !(diff <= 1e-10) {
						t.Fatalf("sparse and dense fits differ by %.3g relative", diff)
					}
					d := sp.Dim()
					U := [4][]float64{make([]float64, m*d), make([]float64, m*d), make([]float64, m*d), make([]float64, m*d)}
					for k, md := range []*Model{dense, sparse} {
						if err := md.Decision(X, m, n, U[2*k]); err != nil {
							t.Fatal(err)
						}
						if err := md.DecisionCSR(A, U[2*k+1]); err != nil {
							t.Fatal(err)
						}
					}
					ref := mat.NewDense(m, d, U[0])
					for k := 1; k < 4; k++ {
						if diff := relDiff(mat.NewDense(m, d, U[k]), ref); !(diff <= 1e-10) {
							t.Fatalf("scores %d differ from the dense model's on dense X by %.3g relative", k, diff)
						}
					}
					// The model round-trips through bytes, sparse support and landmarks included.
					raw, err := sparse.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					back, err := UnmarshalModel(raw)
					if err != nil {
						t.Fatal(err)
					}
					V := make([]float64, m*d)
					if err := back.DecisionCSR(A, V); err != nil {
						t.Fatal(err)
					}
					for i, v := range V {
						if v != U[3][i] {
							t.Fatalf("the model read back from bytes scores %v, not %v", v, U[3][i])
						}
					}
				})
			}
		}
	}
}

// PartialFit over sparse chunks equals the exact fit on the dense data, and so does SGD's pass.
func TestSparsePartialFitEqualsDense(t *testing.T) {
	const m, n = 80, 7
	for _, sp := range testSpaces(t) {
		for _, solver := range []Solver{Exact, SGD} {
			X, ys := synthetic(t, sp, m, n, 7)
			A := sparsify(t, X, m, n, 8, false)
			opt := baseOptions()
			opt.Solver = solver
			if solver == SGD {
				opt.Tol = 0
			}
			var dense, sparse *Model
			w := sp.Width()
			for _, c := range chunks(m, 3) {
				var err error
				if dense, err = PartialFit(dense, sp, X[c[0]*n:c[1]*n], c[1]-c[0], n, ys[c[0]*w:c[1]*w], nil, opt); err != nil {
					t.Fatal(err)
				}
				if sparse, err = PartialFitCSR(sparse, sp, A.Slice(c[0], c[1]), ys[c[0]*w:c[1]*w], nil, opt); err != nil {
					t.Fatal(err)
				}
			}
			if diff := relDiff(sparse.Coef, dense.Coef); !(diff <= 1e-10) {
				t.Fatalf("%s %v: sparse and dense partial fits differ by %.3g relative", sp.Kind(), solver, diff)
			}
		}
	}
}

// An all-zero sparse X fits (W = 0 but the intercept) and predicts.
func TestSparseAllZero(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	const m, n = 20, 5
	ptr := make([]int32, m+1)
	A, err := xmat.New(m, n, ptr, []int32{}, []float64{})
	if err != nil {
		t.Fatal(err)
	}
	ys := make([]int64, m*3)
	for i := range ys {
		ys[i] = int64(i % 2)
	}
	for _, solver := range []Solver{Exact, CG, SGD} {
		opt := baseOptions()
		opt.Solver = solver
		md, err := FitCSR(sp, A, ys, nil, opt)
		if err != nil {
			t.Fatalf("%v: %v", solver, err)
		}
		for j := 0; j < n; j++ {
			for _, v := range md.Coef.RawRowView(j) {
				if v != 0 {
					t.Fatalf("%v: coefficient %v on an all-zero feature", solver, v)
				}
			}
		}
		out := make([]int64, m*3)
		if err := md.PredictRows(xmat.SparseRows(A), out, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A linear fit on a wide sparse X allocates O(nnz + n·d), far less than the m·n of its dense form:
// m = 3000 rows of n = 400,000 features (9.6 GB dense) with 20 entries each.
func TestSparseWideFitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("memory test")
	}
	sp, _ := space.New("multilabel", []int64{4})
	const m, n, per = 3000, 400000, 20
	r := rand.New(rand.NewPCG(1, 2))
	ptr := make([]int64, m+1)
	var ind []int64
	var data []float64
	ys := make([]int64, m*4)
	for i := 0; i < m; i++ {
		used := map[int64]bool{}
		for len(used) < per {
			used[r.Int64N(n)] = true
		}
		row := make([]int64, 0, per)
		for j := range used {
			row = append(row, j)
		}
		sortInt64s(row)
		for _, j := range row {
			ind = append(ind, j)
			data = append(data, r.NormFloat64())
			if j%4 == 0 {
				ys[i*4+int(j/4)%4] = 1
			}
		}
		ptr[i+1] = int64(len(ind))
	}
	A, err := xmat.New(m, n, ptr, ind, data)
	if err != nil {
		t.Fatal(err)
	}
	opt := baseOptions()
	opt.Solver = CG
	opt.Tol = 1e-6
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	md, err := FitCSR(sp, A, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	// W and the CG vectors: about 10 rows of d per feature, 8 bytes each (128 MB), plus O(m·d).
	limit := uint64(12*n*4*8 + 64<<20)
	if alloc > limit {
		t.Fatalf("the fit allocated %d MB, more than %d MB (dense X alone would be %d MB)", alloc>>20, limit>>20, m*n*8>>20)
	}
	if !md.Result.Converged {
		t.Logf("not converged: %+v", md.Result)
	}
	t.Logf("allocated %d MB over the fit (%d iterations); dense X would be %d MB", alloc>>20, md.Result.Iterations, m*n*8>>20)
}

func sortInt64s(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

var _ = math.Abs

// A kernel fit on a sparse X of ten rows declaring 2³⁶ columns aborted the process: the Gram
// matrix's transpose of X allocated row pointers for every declared column (1 TB) past the
// memory budget. The transposes of X, of Nyström landmarks and of a model's sparse support now
// check their row pointers against the budget where they are made; fits and predictions that
// make none are not refused (a tall linear fit under a budget smaller than X's transpose), and a
// model read from bytes is refused by the budget, not reported corrupt.
func TestSparseWideTransposeBudget(t *testing.T) {
	defer budget.Set(budget.Setting())
	if err := budget.Set(64 << 20); err != nil {
		t.Fatal(err)
	}
	sp, _ := space.New("multilabel", []int64{2})
	ptr := []int64{0, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3}
	A, err := xmat.New(10, 1<<36, ptr, []int64{5, 1 << 35, 7}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	ys := make([]int64, 20)
	ys[0], ys[3] = 1, 1
	refused := func(name string, err error, want string) {
		t.Helper()
		var be *budget.Error
		if !errors.As(err, &be) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a budget error with %q", name, err, want)
		}
	}
	rbf := baseOptions()
	rbf.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 1}
	_, err = FitCSR(sp, A, ys, nil, rbf)
	refused("rbf fit", err, "X: the transpose of its 68719476736 columns, for the kernel's Gram matrix")
	nys := rbf
	nys.NComponents = 5
	_, err = FitCSR(sp, A, ys, nil, nys)
	refused("Nyström fit", err, "X's Nyström landmarks: the transpose of its 68719476736 columns")
	_, err = PartialFitCSR(nil, sp, A, ys, nil, nys)
	refused("Nyström partial fit", err, "X's Nyström landmarks: the transpose")

	// a tall linear fit transposes nothing: 4000 rows × 5000 columns under a budget below its
	// transpose's row pointers (2 × 4 bytes × 5001)
	const m, n = 4000, 5000
	tp := make([]int64, m+1)
	var ti []int64
	var td []float64
	tys := make([]int64, 2*m)
	for i := range m {
		ti = append(ti, int64(i%(n/2)), int64(n/2+(7*i+3)%(n/2))) // sorted within the row
		td = append(td, 1, -0.5)
		tp[i+1] = int64(len(ti))
		tys[2*i] = int64(i % 2)
	}
	T, err := xmat.New(m, n, tp, ti, td)
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(39 << 10); err != nil {
		t.Fatal(err)
	}
	lin := baseOptions()
	lin.Solver, lin.Tol = CG, 1e-6
	if _, err := FitCSR(sp, T, tys, nil, lin); errors.As(err, new(*budget.Error)) && strings.Contains(err.Error(), "transpose") {
		t.Errorf("a tall linear fit was refused for a transpose it does not make: %v", err)
	}

	// a model with sparse support reads and predicts dense X under a small budget; sparse X is
	// refused by the support's transpose
	if err := budget.Set(64 << 20); err != nil {
		t.Fatal(err)
	}
	B, err := xmat.New(10, 1<<16, ptr, []int64{5, 1 << 15, 7}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	md, err := FitCSR(sp, B, ys, nil, rbf)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := md.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(256 << 10); err != nil { // the support's transpose needs 2 × 4 bytes × 2¹⁶ columns
		t.Fatal(err)
	}
	back, err := UnmarshalModel(raw)
	if err != nil {
		t.Fatalf("a model with sparse support was refused at load: %v", err)
	}
	if err := back.Decision(make([]float64, 1<<16), 1, 1<<16, make([]float64, 2)); err != nil {
		t.Errorf("dense prediction: %v", err)
	}
	err = back.DecisionCSR(B, make([]float64, 20))
	refused("sparse prediction", err, "the model's sparse support inputs: the transpose of its 65536 columns")

	// a Nyström model with sparse landmarks: their transpose is made at load
	if err := budget.Set(64 << 20); err != nil {
		t.Fatal(err)
	}
	nys.NComponents = 3
	md, err = FitCSR(sp, B, ys, nil, nys)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = md.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(256 << 10); err != nil {
		t.Fatal(err)
	}
	_, err = UnmarshalModel(raw)
	refused("Nyström model at load", err, "the model's sparse Nyström landmarks: the transpose")
	if errors.Is(err, ErrCorrupt) {
		t.Errorf("a budget refusal reported as corrupt bytes: %v", err)
	}
}

// A kernel model on sparse support transposes it once, when sparse rows are first scored, and
// keeps it for every later call and thread; its scoring work counts the support's entries, not
// samples × features. Each call made the transpose again (O(n_features)) and the work estimate
// cut 5,000 sparse rows into 5,000 calls: 67 s for a model on 10⁶ features, 13 ms a row.
func TestSparseSupportTransposeIsKept(t *testing.T) {
	sp, _ := space.New("multilabel", []int64{3})
	const m, n, q = 40, 20000, 100
	r := rand.New(rand.NewPCG(5, 6))
	rows := func(k int) (*xmat.CSR, []float64) {
		ptr := make([]int64, k+1)
		var ind []int64
		var data []float64
		dense := make([]float64, k*n)
		for i := 0; i < k; i++ {
			for j := int64(i % 7); j < n; j += int64(n / 5) { // shared columns, so kernel rows differ
				v := r.NormFloat64()
				ind, data = append(ind, j), append(data, v)
				dense[i*n+int(j)] = v
			}
			ptr[i+1] = int64(len(ind))
		}
		A, err := xmat.New(k, n, ptr, ind, data)
		if err != nil {
			t.Fatal(err)
		}
		return A, dense
	}
	A, _ := rows(m)
	ys := make([]int64, m*3)
	for i := range ys {
		ys[i] = int64(r.IntN(2))
	}
	opt := baseOptions()
	opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 0.1}
	md, err := FitCSR(sp, A, ys, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if w, want := md.ScoreWork(), float64(A.NNZ()+m*4); w != want {
		t.Errorf("ScoreWork = %g, want the support's %d entries + m·(1 + d) = %g", w, A.NNZ(), want)
	}
	nys := opt
	nys.NComponents = 20
	ny, err := FitCSR(sp, A, ys, nil, nys)
	if err != nil {
		t.Fatal(err)
	}
	k := ny.Components()
	if w, want := ny.ScoreWork(), float64(ny.ny.landmarks.Sparse.NNZ()+k*(k+3)); w != want {
		t.Errorf("Nyström ScoreWork = %g, want the landmarks' entries + k·(k + d) = %g", w, want)
	}
	B, dense := rows(q)
	want := make([]float64, q*3)
	if err := md.Decision(dense, q, n, want); err != nil {
		t.Fatal(err)
	}
	if md.supportT.t != nil {
		t.Fatal("dense rows made the support's transpose")
	}
	got := make([][]float64, 4)
	var wg sync.WaitGroup
	for g := range got {
		got[g] = make([]float64, q*3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := md.DecisionCSR(B, got[g]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	kept := md.supportT.t
	if kept == nil {
		t.Fatal("sparse rows left no transpose with the model")
	}
	if err := md.DecisionCSR(B.Slice(0, 1), got[0][:3]); err != nil {
		t.Fatal(err)
	}
	if md.supportT.t != kept {
		t.Error("a later call made the transpose again")
	}
	for g := range got {
		for i := range want {
			if math.Abs(got[g][i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("goroutine %d, score %d: sparse %v, dense %v", g, i, got[g][i], want[i])
			}
		}
	}
}
