package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"gonum.org/v1/gonum/mat"

	"github.com/combpred/combpred/core/space"
)

// closedFormSpaces lists an enumerable instance of every space with a closed form.
func closedFormSpaces(t testing.TB) []space.Space {
	return []space.Space{
		mustSpace(t, "multiclass", 1),
		mustSpace(t, "multiclass", 6),
		mustSpace(t, "multilabel", 1),
		mustSpace(t, "multilabel", 7),
		mustSpace(t, "ordinal", 2),
		mustSpace(t, "ordinal", 7),
		mustSpace(t, "hierarchy_paths", append([]int64{0}, smallTree...)...),
		mustSpace(t, "hierarchy_paths", append([]int64{1}, smallTree...)...),
		mustSpace(t, "hierarchy_paths", 0, -1),
		mustSpace(t, "subtrees", smallTree...),
		mustSpace(t, "subtrees", -1, 0, 0, 0, 0, 0),
		mustSpace(t, "subtrees", -1),
		mustSpace(t, "tournaments", 4),
		mustSpace(t, "ksubsets", 7, 3),
		mustSpace(t, "ksubsets", 5, 5),
		mustSpace(t, "ksubsets", 6, 1),
		// The space.Scorer spaces: scoring writes no ψ, which the brute force must embed itself.
		mustSpace(t, "permutations", 5),
		mustSpace(t, "dicycles", 5),
		mustSpace(t, "ucycles", 5),
	}
}

// TestClosedFormsMatchBruteForce: every closed form of log Z and E[ψ] equals the sum over all
// structures (relative 1e-10), at scores from 0 to large (‖u‖ = 30, where naive exponentials
// would overflow in the closed forms but not in the log-space brute force).
func TestClosedFormsMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for _, sp := range closedFormSpaces(t) {
		if !HasClosedForm(sp) {
			t.Fatalf("%s has no closed form", sp.Kind())
		}
		for _, norm := range []float64{0, 0.3, 3, 30} {
			u := randomScores(r, sp.Dim(), norm)
			name := fmt.Sprintf("%s%v/|u|=%g", sp.Kind(), sp.Params(), norm)
			m1, m2 := make([]float64, sp.Dim()), make([]float64, sp.Dim())
			lz1, ok := closedForm(sp, u, m1)
			if !ok {
				t.Fatalf("%s: no closed form", name)
			}
			lz2, err := bruteForce(sp, u, m2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lz1-lz2) > 1e-10*math.Max(1, math.Abs(lz2)) {
				t.Errorf("%s: log Z closed form %.15g, brute force %.15g", name, lz1, lz2)
			}
			for j := range m1 {
				if math.Abs(m1[j]-m2[j]) > 1e-10 {
					t.Errorf("%s: E[ψ_%d] closed form %.15g, brute force %.15g", name, j, m1[j], m2[j])
				}
			}
			if lz3, _ := closedForm(sp, u, nil); lz3 != lz1 {
				t.Errorf("%s: log Z depends on whether marginals are asked for", name)
			}
		}
		// At u = 0, log Z = log|Y| and E[ψ] = p, the space's own counting formulas.
		u := make([]float64, sp.Dim())
		m, p := make([]float64, sp.Dim()), make([]float64, sp.Dim())
		lz, _ := closedForm(sp, u, m)
		sp.Mean(p)
		if math.Abs(lz-sp.LogCount()) > 1e-12*math.Max(1, lz) {
			t.Errorf("%s: log Z(0) = %g, log|Y| = %g", sp.Kind(), lz, sp.LogCount())
		}
		for j := range m {
			if math.Abs(m[j]-p[j]) > 1e-12 {
				t.Errorf("%s: E_0[ψ_%d] = %g, p = %g", sp.Kind(), j, m[j], p[j])
			}
		}
	}
}

// TestClosedFormsLarge: closed forms stay finite and consistent far beyond enumeration
// (log Z(0) = log|Y|, and E[ψ] lies in the range of ψ).
func TestClosedFormsLarge(t *testing.T) {
	parent := make([]int64, 2000)
	parent[0] = -1
	for v := 1; v < len(parent); v++ {
		parent[v] = int64((v - 1) / 3)
	}
	for _, sp := range []space.Space{
		mustSpace(t, "multiclass", 5000), mustSpace(t, "multilabel", 5000), mustSpace(t, "ordinal", 5000),
		mustSpace(t, "hierarchy_paths", append([]int64{1}, parent...)...), mustSpace(t, "subtrees", parent...),
		mustSpace(t, "tournaments", 80), mustSpace(t, "ksubsets", 300, 40),
	} {
		u := make([]float64, sp.Dim())
		lz, err := ExactLogPartition(sp, u)
		if err != nil || math.Abs(lz-sp.LogCount()) > 1e-9*lz {
			t.Errorf("%s: log Z(0) = %v (%v), log|Y| = %v", sp.Kind(), lz, err, sp.LogCount())
		}
		u = randomScores(rand.New(rand.NewPCG(1, 3)), sp.Dim(), 100)
		m := make([]float64, sp.Dim())
		lz, err = ExactMarginals(sp, u, m)
		if err != nil || math.IsNaN(lz) || math.IsInf(lz, 0) {
			t.Errorf("%s: log Z = %v (%v)", sp.Kind(), lz, err)
		}
		for j, x := range m {
			if !(x >= -1-1e-12 && x <= 1+1e-12) {
				t.Fatalf("%s: E[ψ_%d] = %v", sp.Kind(), j, x)
			}
		}
	}
}

// TestExactDispatch: brute force serves small spaces without closed forms; large ones get
// ErrNoExact.
func TestExactDispatch(t *testing.T) {
	sp := mustSpace(t, "permutations", 5)
	u := randomScores(rand.New(rand.NewPCG(2, 3)), sp.Dim(), 2)
	e := newExactDist(t, sp, u)
	m := make([]float64, sp.Dim())
	lz, err := ExactMarginals(sp, u, m)
	if err != nil || math.Abs(lz-e.logZ) > 1e-12 {
		t.Fatalf("log Z = %v (%v), want %v", lz, err, e.logZ)
	}
	big := mustSpace(t, "permutations", 17)
	if HasExact(big) {
		t.Fatal("17! structures claimed exact (beyond the subset programme's marginals)")
	}
	// log Z alone goes on to 19 labels (space.LogZ): log 17! at u = 0, by ExactLogPartition and
	// by LogZAuto, which no longer samples for it (a default-fitted model's log_partition hit
	// CFTP's work bound there, probe AO); 20 labels are beyond it.
	lg, _ := math.Lgamma(18)
	if lz, err := ExactLogPartition(big, make([]float64, big.Dim())); err != nil || math.Abs(lz-lg) > 1e-9*lg {
		t.Fatalf("Permutations(17): log Z %v (%v), want log 17! = %v", lz, err, lg)
	}
	if r, err := LogPartition(big, make([]float64, big.Dim()), LogZOptions{}); err != nil || r.Method != LogZExact || !r.Valid || math.Abs(r.LogZ-lg) > 1e-9*lg {
		t.Fatalf("Permutations(17), auto: %+v (%v), want exact log 17! = %v", r, err, lg)
	}
	for _, kind := range []string{"dicycles", "ucycles"} { // and cycles to 16 vertices: log |Y| at u = 0
		cycles := mustSpace(t, kind, 16)
		if r, err := LogPartition(cycles, make([]float64, cycles.Dim()), LogZOptions{}); err != nil || r.Method != LogZExact ||
			math.Abs(r.LogZ-cycles.LogCount()) > 1e-9*r.LogZ {
			t.Fatalf("%s(16), auto: %+v (%v), want exact log |Y| = %v", kind, r, err, cycles.LogCount())
		}
	}
	beyond := mustSpace(t, "permutations", 20)
	if _, err := ExactLogPartition(beyond, make([]float64, beyond.Dim())); !errors.Is(err, ErrNoExact) {
		t.Fatalf("Permutations(20): want ErrNoExact, got %v", err)
	}
	if _, err := ExactLogPartition(big, []float64{1}); err == nil {
		t.Fatal("a score vector of the wrong length was accepted beyond the closed form")
	}
	if _, err := ExactLogPartition(sp, []float64{1}); err == nil {
		t.Fatal("a score vector of the wrong length was accepted")
	}
	bad := make([]float64, sp.Dim())
	bad[2] = math.NaN()
	if _, err := ExactLogPartition(sp, bad); err == nil {
		t.Fatal("a NaN score was accepted")
	}
}

// TestLogZAloneUnderTheBudget: where the budget refuses the tables of log Z alone (Permutations(19):
// about 9 MB per thread), LogZAuto keeps the FPRAS it ran before log Z alone existed rather than
// fail a call that named no method; an explicit exact call, and a model's rows, get the memory
// error, which names no row (every row meets it, so the row named was the threads' timing) and
// speaks of the programme's tables.
func TestLogZAloneUnderTheBudget(t *testing.T) {
	sp := mustSpace(t, "permutations", 19)
	defer func(v int64) { _ = budget.Set(v) }(budget.Setting())
	if err := budget.Set(closedFormBytes(sp) / 2); err != nil {
		t.Fatal(err)
	}
	u := make([]float64, sp.Dim())
	r, err := LogPartition(sp, u, LogZOptions{Eps: 0.5, Delta: 0.5, Seed: 1})
	if err != nil || r.Method != LogZFPRAS {
		t.Fatalf("auto under the budget: %+v, %v; want the FPRAS", r, err)
	}
	lg, _ := math.Lgamma(20)
	if math.Abs(r.LogZ-lg) > 1 { // within the FPRAS' ε = 0.5 of log 19! (a factor 1.5 is 0.41 in logs)
		t.Errorf("FPRAS log Z %v, log 19! = %v", r.LogZ, lg)
	}
	if _, err := ExactLogPartition(sp, u); !budget.Is(err) || !strings.Contains(err.Error(), "dynamic programme's tables") {
		t.Errorf("exact under the budget: %v", err)
	}
	md := &Model{Space: sp, Coef: mat.NewDense(1, sp.Dim(), nil), NFeatures: 1}
	_, err = md.LogPartition([]float64{1, 1, 1, 1}, 4, 1, LogZOptions{Method: LogZExact}, make([]float64, 4))
	if !budget.Is(err) || strings.HasPrefix(err.Error(), "row") {
		t.Errorf("rows under the budget: %v", err)
	}
	// Where the FPRAS that auto took meets its work bound, the refusal says that the budget kept
	// the exact programme out (it said only that the sampler had stopped), as text: not a
	// MemoryError, the work bound being what failed.
	hard := randomScores(rand.New(rand.NewPCG(181, 1)), sp.Dim(), 50)
	_, err = LogPartition(sp, hard, LogZOptions{Eps: 0.5, Delta: 0.5, Seed: 1, MaxSamples: 1000})
	if !errors.Is(err, ErrWorkBound) || budget.Is(err) || !strings.Contains(err.Error(), "took the FPRAS because exact inference does not fit the memory budget") ||
		!strings.Contains(err.Error(), "max_memory") {
		t.Errorf("auto's FPRAS at its work bound under the budget: %v", err)
	}
	_ = budget.Set(0)
	if _, err = LogPartition(sp, hard, LogZOptions{Method: LogZFPRAS, Eps: 0.5, Delta: 0.5, Seed: 1, MaxSamples: 1000}); !errors.Is(err, ErrWorkBound) || strings.Contains(err.Error(), "memory budget") {
		t.Errorf("the FPRAS asked for, at its work bound: %v", err)
	}
}

// Exact marginals stay in the range of their coordinates: the dynamic programmes' sums of ratios
// rounded past 1 by up to 3e-13 at large scores (KSubsets, Ordinal, HierarchyPaths, DAGPaths;
// probe AR), which a caller drawing from them (np.random.binomial) refuses.
func TestExactMarginalsStayInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(191, 1))
	for _, c := range []struct {
		kind string
		p    []int64
	}{
		{"ksubsets", []int64{5, 2}}, {"ksubsets", []int64{12, 5}}, {"ordinal", []int64{6}},
		{"hierarchy_paths", []int64{0, -1, 0, 0, 1, 1, 2, 2, 3}}, {"multiclass", []int64{7}},
		{"permutations", []int64{6}}, {"subtrees", []int64{-1, 0, 0, 1, 1, 2}},
	} {
		sp, err := space.New(c.kind, c.p)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := space.CoordRange(sp)
		mean := make([]float64, sp.Dim())
		worst := 0.0
		for row := 0; row < 3000; row++ {
			u := randomScores(r, sp.Dim(), math.Pow(10, float64(row%5)))
			if _, err := ExactMarginals(sp, u, mean); err != nil {
				t.Fatal(err)
			}
			for _, v := range mean {
				worst = max(worst, v-hi, lo-v)
			}
		}
		if worst > 0 {
			t.Errorf("%s%v: a marginal %.3g outside [%g, %g]", c.kind, c.p, worst, lo, hi)
		}
	}
}

// log p(y | x) of an exact log Z is at most 0: at ‖u‖₁ ≈ 1e10 the mode's came out +1e-7 (log Z and
// the score round apart; Permutations(4), probe AR).
func TestScoreSamplesAtMostZero(t *testing.T) {
	r := rand.New(rand.NewPCG(193, 1))
	sp := mustSpace(t, "permutations", 4)
	d := sp.Dim()
	const q = 400
	md := &Model{Space: sp, Coef: mat.NewDense(1, d, randomScores(r, d, 1)), NFeatures: 1}
	X, ys := make([]float64, q), make([]int64, q*sp.Width())
	for i := range X {
		X[i] = 1e10 * (0.5 + r.Float64())
		sp.Decode(md.Coef.RawRowView(0), ys[i*sp.Width():(i+1)*sp.Width()])
	}
	out := make([]float64, q)
	if _, err := md.ScoreSamples(X, q, 1, ys, LogZOptions{Method: LogZExact}, out); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v > 0 {
			t.Fatalf("row %d: log p(mode) = %g > 0", i, v)
		}
	}
}

// TestExactSumStopsWithinARow: log Z and the marginals by summing over 2²⁰ structures (about a
// second a row on Cliques(20), what LogZAuto now takes) stop when the flag is set, inside the row:
// Ctrl-C waited for the row's end (1.2–2.2 s, probe BG).
func TestExactSumStopsWithinARow(t *testing.T) {
	sp := mustSpace(t, "cliques", 20)
	if sp.LogCount() > math.Log(BruteForceMax)+1e-9 || HasClosedForm(sp) {
		t.Fatalf("Cliques(20) is no longer summed by brute force: pick another space for this test")
	}
	u := make([]float64, sp.Dim())
	stop := new(cancel.Flag)
	stop.Stop()
	if _, err := bruteForce(sp, u, nil, stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("bruteForce: got %v, want ErrCancelled", err)
	}
	opt := LogZOptions{Method: LogZAuto}
	opt.Sampler.Stop = stop
	if _, err := LogPartition(sp, u, opt); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("LogPartition(auto): got %v, want ErrCancelled", err)
	}
	var inf InferenceOptions
	inf.Method = InferExact
	inf.Sampler.Stop = stop
	if _, err := Marginals(sp, u, inf, 1, make([]float64, sp.Dim())); !errors.Is(err, cancel.ErrCancelled) {
		t.Errorf("Marginals(exact): got %v, want ErrCancelled", err)
	}
}
