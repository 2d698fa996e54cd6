package ridge

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// scoresOf is the fitted model's scores on X (m×n).
func scoresOf(t *testing.T, md *Model, X []float64, m, n int) []float64 {
	t.Helper()
	U := make([]float64, m*md.Space.Dim())
	if err := md.Decision(X, m, n, U); err != nil {
		t.Fatal(err)
	}
	return U
}

// relDist is ‖a − b‖ / ‖b‖.
func relDist(a, b []float64) float64 {
	diff := make([]float64, len(a))
	floats.SubTo(diff, a, b)
	return floats.Norm(diff, 2) / floats.Norm(b, 2)
}

// With an intercept, adding a constant to every feature changes the problem's coordinates and
// nothing else: every solver must give the scores it gives on X itself. Uncentred, conjugate
// gradients stopped at the relative-gradient tolerance with scores up to 2.5·10⁻⁵ away here
// (tol 10⁻¹⁰; 8·10⁻³ on yeast at the default 10⁻⁸), SGD's were 0.37 to 0.998 away, and the
// normal equations of the exact solver lost 10⁻³ on yeast at X + 10⁵.
func TestFitsIgnoreAConstantShiftOfX(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct {
		kind string
		size int64
	}{{"multilabel", 6}, {"permutations", 4}} {
		sp, err := space.New(c.kind, []int64{c.size})
		if err != nil {
			t.Fatal(err)
		}
		const m, n = 200, 8
		X, ys := synthetic(t, sp, m, n, 7)
		w := weights(r, m)
		for _, solver := range []Solver{Exact, CG, SGD} {
			opt := baseOptions()
			opt.Solver, opt.Tol, opt.MaxIter = solver, 1e-10, 5000
			base, err := Fit(sp, X, m, n, ys, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := scoresOf(t, base, X, m, n)
			for _, shift := range []float64{1e2, 1e4, 1e5} {
				name := fmt.Sprintf("%s/%v/shift %g", c.kind, solver, shift)
				Xs := shifted(X, shift)
				md, err := Fit(sp, Xs, m, n, ys, w, opt)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if dist := relDist(scoresOf(t, md, Xs, m, n), want); dist > 1e-6 {
					t.Errorf("%s: scores %.3g from the unshifted fit's (%d iterations)", name, dist, md.Result.Iterations)
				}
				// A warm start from the fitted model (held on X's own coordinates) starts at the
				// minimum: a wrong change of coordinates would start it far from there.
				if solver == CG {
					warm := opt
					warm.Init = md
					again, err := Fit(sp, Xs, m, n, ys, w, warm)
					if err != nil {
						t.Fatal(err)
					}
					if again.Result.Iterations > 2 {
						t.Errorf("%s: warm start from the fitted model took %d iterations", name, again.Result.Iterations)
					}
				}
			}
		}
	}
}

// The exact solver's statistics are accumulated around the chunks' running mean: partial fits of
// shifted chunks must give the one-shot fit on the unshifted X, before and after the model's
// bytes carry the shift (format version 6) from one chunk to the next.
func TestExactStatisticsShiftAcrossChunksAndBytes(t *testing.T) {
	sp, err := space.New("multilabel", []int64{5})
	if err != nil {
		t.Fatal(err)
	}
	const m, n, shift = 240, 6, 1e5
	X, ys := synthetic(t, sp, m, n, 9)
	w := weights(rand.New(rand.NewPCG(5, 6)), m)
	opt := baseOptions()
	opt.Solver = Exact
	base, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := scoresOf(t, base, X, m, n)
	Xs := shifted(X, shift)
	var md *Model
	for lo := 0; lo < m; lo += 80 {
		if md, err = PartialFit(md, sp, Xs[lo*n:(lo+80)*n], 80, n, ys[lo*5:(lo+80)*5], w[lo:lo+80], opt); err != nil {
			t.Fatal(err)
		}
		if md.statsShift() == nil {
			t.Fatal("the statistics of an intercept model hold no shift")
		}
		b, err := md.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if md, err = UnmarshalModel(b); err != nil {
			t.Fatal(err)
		}
	}
	if dist := relDist(scoresOf(t, md, Xs, m, n), want); dist > 1e-9 {
		t.Errorf("three shifted chunks: scores %.3g from the one-shot unshifted fit's", dist)
	}
	for _, c := range []struct {
		name  string
		shift []float64
	}{{"NaN", []float64{1, 2, math.NaN(), 4, 5, 6}}, {"short", []float64{1, 2, 3}}} {
		bad := *md
		bad.stats = md.stats.clone()
		bad.stats.shift = c.shift
		b, err := bad.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalModel(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s shift: got %v, want ErrCorrupt", c.name, err)
		}
	}
	if _, err := md.marshal(5); err == nil {
		t.Error("format version 5 wrote statistics with a shift it cannot hold")
	}
}

// The statistics follow the running mean of the chunks: a first chunk far from the rest (one row
// at 10⁶ among rows near zero, a stream whose first rows drifted) must not cost later chunks
// their precision. With the shift fixed at the first chunk's mean, the scores were 316 (one row
// first) and 17 (ten rows) times as far from the one-pass fit's as rounding puts a second one-pass
// fit; following the mean, 0.8 times.
func TestExactStatisticsFollowTheRunningMean(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 300, 5
	X, ys := synthetic(t, sp, m, n, 11)
	opt := baseOptions()
	opt.Solver = Exact
	for _, first := range []int{1, 10} {
		Xf := slices.Clone(X)
		for i := 0; i < first; i++ {
			for j := 0; j < n; j++ {
				Xf[i*n+j] += 1e6
			}
		}
		base, err := Fit(sp, Xf, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		// The far rows make the problem ill-conditioned, so even one-pass fits differ by rounding:
		// the noise floor is the distance of a one-pass fit of the rows in reverse order.
		rev, rys := slices.Clone(Xf), slices.Clone(ys)
		for i := 0; i < m; i++ {
			copy(rev[i*n:(i+1)*n], Xf[(m-1-i)*n:(m-i)*n])
			copy(rys[i*3:(i+1)*3], ys[(m-1-i)*3:(m-i)*3])
		}
		reversed, err := Fit(sp, rev, m, n, rys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		want := scoresOf(t, base, Xf, m, n)
		floor := relDist(scoresOf(t, reversed, Xf, m, n), want)
		md := streamFit(t, nil, sp, Xf, n, ys, nil, [][2]int{{0, first}, {first, m / 2}, {m / 2, m}}, opt)
		if dist := relDist(scoresOf(t, md, Xf, m, n), want); dist > 3*floor {
			t.Errorf("first chunk of %d rows at 1e6: scores %.3g from the one-pass fit's, whose rounding is %.3g", first, dist, floor)
		}
		mean := xmat.WeightedMean(xmat.Matrix{Dense: mat.NewDense(m, n, Xf)}, nil)
		if got := md.statsShift(); relDist(got, mean) > 1e-12 {
			t.Errorf("first chunk of %d rows: shift %v, want the mean of every row %v", first, got, mean)
		}
	}
}

// shifted returns a copy of X with c added to every value.
func shifted(X []float64, c float64) []float64 {
	out := make([]float64, len(X))
	for i, v := range X {
		out[i] = v + c
	}
	return out
}

// A sparse X is centred along its fully stored columns: a dense column at 10⁷ ± 1 among sparse
// ones, held uncentred beside the intercept's ones, left CG's scores 3·10⁻² from the optimum at a
// relative gradient of 9·10⁻⁹ and SGD's 0.44 (probe AT), where the dense X, centred, gave 10⁻⁹.
// Sparse and dense fits must now agree, with and without weights, and a column with one implicit
// zero must keep its values.
func TestSparseFitsCentreTheirDenseColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	sp, err := space.New("multiclass", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 120, 4
	X, ys := synthetic(t, sp, m, n, 13)
	for i := 0; i < m; i++ {
		X[i*n+1] += 1e7 // dense, far from zero
		if r.IntN(2) == 0 {
			X[i*n+3] = 0 // sparse
		}
	}
	for _, w := range [][]float64{nil, weights(r, m)} {
		for _, solver := range []Solver{CG, SGD} {
			opt := baseOptions()
			opt.Solver, opt.Tol, opt.MaxIter = solver, 1e-10, 5000
			dense, err := Fit(sp, X, m, n, ys, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			sparse, err := FitCSR(sp, xmat.FromDense(m, n, X), ys, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := scoresOf(t, dense, X, m, n)
			tol := map[Solver]float64{CG: 1e-7, SGD: 1e-3}[solver]
			if dist := relDist(scoresOf(t, sparse, X, m, n), want); dist > tol {
				t.Errorf("%v weights %v: the sparse fit's scores %.3g from the dense fit's", solver, w != nil, dist)
			}
		}
	}
	csr := xmat.FromDense(m, n, X)
	counts := csr.ColumnCounts()
	shifted := csr.ShiftColumns([]float64{0, 1e7, 0, 5})
	for i := 0; i < m; i++ {
		row, got := make([]float64, n), make([]float64, n)
		csr.RowDense(i, row)
		shifted.RowDense(i, got)
		if got[1] != row[1]-1e7 || got[0] != row[0] || (row[3] == 0) != (got[3] == 0) {
			t.Fatalf("row %d: %v shifted to %v", i, row, got)
		}
	}
	if counts[1] != m || counts[3] == m {
		t.Errorf("column counts %v", counts)
	}
	view := csr.Slice(10, 20) // a view whose row pointers start past zero
	if c := view.ColumnCounts(); c[1] != 10 {
		t.Errorf("a slice's column counts %v", c)
	}
	row, got := make([]float64, n), make([]float64, n)
	csr.RowDense(15, row)
	view.ShiftColumns([]float64{0, 1e7, 0, 0}).RowDense(5, got)
	if got[1] != row[1]-1e7 || got[2] != row[2] {
		t.Errorf("a slice's row 5 %v shifted to %v", row, got)
	}
}

// When the budget refuses the centred copy of a dense X, CG and SGD fit X as it is, which at
// features far from zero may stop them far from the optimum without a sign in their relative
// gradient (probe FG: 20 of 6,000 labels changed at X + 10⁶): the fit warns, naming the column
// and how far it lies, and stays silent where X is near its centre.
func TestUncentredFitWarnsOfFarFeatures(t *testing.T) {
	sp, err := space.New("multilabel", []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 3000, 40 // the centred copy: 984 kB
	X, ys := synthetic(t, sp, m, n, 3)
	defer budget.Set(budget.Setting())
	for _, c := range []struct {
		shift, budget float64
		warn          bool
	}{{1e4, 900e3, true}, {10, 900e3, false}, {1e4, 0, false}} {
		if err := budget.Set(int64(c.budget)); err != nil {
			t.Fatal(err)
		}
		for _, solver := range []Solver{CG, SGD} {
			opt := baseOptions()
			opt.Solver, opt.MaxIter = solver, 50
			md, err := Fit(sp, shifted(X, c.shift), m, n, ys, nil, opt)
			if err != nil {
				t.Fatalf("shift %g, budget %g, %v: %v", c.shift, c.budget, solver, err)
			}
			warned := slices.ContainsFunc(md.Warnings, func(w string) bool {
				return strings.Contains(w, "fits X as it is, not centred") && strings.Contains(w, "standard deviations from zero")
			})
			if warned != c.warn {
				t.Errorf("shift %g, budget %g, %v: warned %v, want %v (%q)", c.shift, c.budget, solver, warned, c.warn, md.Warnings)
			}
		}
	}
}

// Without an intercept nothing centres X, and at features far from zero CG stopped far from the
// optimum with a relative gradient below tol, silently (X + 10¹⁰: J 37 % above the minimum, probe
// FN): the fit warns beyond noInterceptOffsetLimit standard deviations, and not at 10⁴, where its
// scores are the exact solver's to 10⁻⁷.
func TestNoInterceptFitWarnsOfFarFeatures(t *testing.T) {
	sp, err := space.New("multilabel", []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 300, 3
	X, ys := synthetic(t, sp, m, n, 9)
	for _, c := range []struct {
		shift float64
		warn  bool
	}{{1e4, false}, {1e7, true}} {
		for _, solver := range []Solver{CG, SGD} {
			opt := baseOptions()
			opt.Solver, opt.Intercept, opt.MaxIter = solver, false, 50
			md, err := Fit(sp, shifted(X, c.shift), m, n, ys, nil, opt)
			if err != nil {
				t.Fatalf("shift %g, %v: %v", c.shift, solver, err)
			}
			warned := slices.ContainsFunc(md.Warnings, func(w string) bool {
				return strings.Contains(w, "without an intercept to centre it with") && strings.Contains(w, "standard deviations from zero")
			})
			if warned != c.warn {
				t.Errorf("shift %g, %v: warned %v, want %v (%q)", c.shift, solver, warned, c.warn, md.Warnings)
			}
		}
	}
}
