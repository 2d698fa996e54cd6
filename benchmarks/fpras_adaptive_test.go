package benchmarks

// The FPRAS' adaptive schedule (Huber's TPA, prob.FPRASAdaptive) against the thesis schedule
// (prob.FPRASThesis): success rate and samples per estimate. It writes FPRAS_ADAPTIVE.md here:
//
//	COMBPRED_FPRAS_TABLE=1 go test ./benchmarks -run TestFPRASAdaptiveTable -v -timeout 60m
//
// Without COMBPRED_FPRAS_TABLE the test is skipped (it takes several CPU minutes);
// COMBPRED_FPRAS_RUNS=n measures n runs per row instead of 100, and COMBPRED_FPRAS_ROWS=0,2 only
// the rows listed (0-based), writing the table to the temporary directory instead (the rows of
// several such runs are the rows of the full table: each row's scores and seeds are its own).

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

// maxNorm is R = max_y ‖ψ(y)‖.
func maxNorm(sp space.Space) float64 {
	if nb, ok := sp.(space.NormBounded); ok {
		return nb.MaxNorm()
	}
	var r2 float64
	psi := make([]float64, sp.Dim())
	_ = sp.Enumerate(func(y []int64) bool {
		sp.Embed(y, psi)
		var s float64
		for _, x := range psi {
			s += x * x
		}
		r2 = math.Max(r2, s)
		return true
	})
	return math.Sqrt(r2)
}

// plantedScores are scores of a fitted model's shape: a planted structure y* that the scores
// favour, u ∝ (ψ(y*) − mean ψ(y*)) + 0.3·noise, scaled to R‖u‖ = a.
func plantedScores(r *rand.Rand, sp space.Space, a float64) []float64 {
	y := make([]int64, sp.Width())
	sp.Sample(r, y)
	psi := make([]float64, sp.Dim())
	sp.Embed(y, psi)
	var m float64
	for _, x := range psi {
		m += x / float64(len(psi))
	}
	u := make([]float64, len(psi))
	var n2 float64
	for j, x := range psi {
		u[j] = x - m + 0.3*r.NormFloat64()
		n2 += u[j] * u[j]
	}
	c := a / (maxNorm(sp) * math.Sqrt(n2))
	for j := range u {
		u[j] *= c
	}
	return u
}

type fprasRow struct {
	space  string
	sp     space.Space
	a      float64   // R‖u‖
	thesis bool      // run the thesis schedule too (only where its printed count is affordable)
	u      []float64 // the scores of a fitted model (nil: planted scores scaled to a)
}

func TestFPRASAdaptiveTable(t *testing.T) {
	if os.Getenv("COMBPRED_FPRAS_TABLE") == "" {
		t.Skip("set COMBPRED_FPRAS_TABLE=1 to measure (several CPU minutes) and write FPRAS_ADAPTIVE.md")
	}
	const eps, delta = 0.1, 0.25
	runs := 100
	if v := os.Getenv("COMBPRED_FPRAS_RUNS"); v != "" { // a quick look; the table is for 100
		if _, err := fmt.Sscan(v, &runs); err != nil || runs < 2 {
			t.Fatalf("COMBPRED_FPRAS_RUNS = %q", v)
		}
	}
	mk := func(kind string, n int64) space.Space {
		sp, err := space.New(kind, []int64{n})
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	perm6, dic7 := mk("permutations", 6), mk("dicycles", 7)
	rows := []fprasRow{
		{"Permutations(6)", perm6, 23, false, nil}, // the fitted 6-label model: l = 69
		{"DirectedCycles(7)", dic7, 23, false, nil},
		{"Permutations(6)", perm6, 2, true, nil}, // small scores, where the thesis schedule runs
		{"DirectedCycles(7)", dic7, 2, true, nil},
	}
	// Scores of fitted models: the held-out rows of glass (6 labels) with the median and the
	// largest R‖u‖, and the same for a DirectedCycles(7) model fitted to planted routes.
	X, ys, m, n, k := labelRanking(t, "glass")
	us, a := fittedScores(t, mk("permutations", int64(k)), X, ys, m, n)
	med, top := medianAndMax(a)
	rows = append(rows,
		fprasRow{"Permutations(6), glass, fitted (median held-out row)", perm6, a[med], false, us[med]},
		fprasRow{"Permutations(6), glass, fitted (largest held-out row)", perm6, a[top], false, us[top]})
	Xr, yr := plantedRoutes(dic7, 500, 5, 2014)
	us, a = fittedScores(t, dic7, Xr, yr, 500, 5)
	med, top = medianAndMax(a)
	rows = append(rows,
		fprasRow{"DirectedCycles(7), planted routes, fitted (median held-out row)", dic7, a[med], false, us[med]},
		fprasRow{"DirectedCycles(7), planted routes, fitted (largest held-out row)", dic7, a[top], false, us[top]})
	for i := range rows {
		if rows[i].u != nil {
			a := rows[i].a
			rows[i].a = math.Round(a*10) / 10
		}
	}
	only := os.Getenv("COMBPRED_FPRAS_ROWS")
	keep := func(i int) bool {
		if only == "" {
			return true
		}
		for _, f := range strings.Split(only, ",") {
			if strings.TrimSpace(f) == fmt.Sprint(i) {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# FPRAS: adaptive (TPA) against the thesis schedule\n\n")
	fmt.Fprintf(&b, "Reproduce (writes this file; %d logical CPUs here, GOMAXPROCS %d):\n\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&b, "    COMBPRED_FPRAS_TABLE=1 go test ./benchmarks -run TestFPRASAdaptiveTable -v -timeout 60m\n\n")
	fmt.Fprintf(&b, "It takes about 4 minutes on a quiet 2-core machine (15 beside other work), most of it the DirectedCycles(7) rows (e^L ≈ 2300 proposals per "+
		"exact sample near β = 1). Rows can be measured separately, e.g. `COMBPRED_FPRAS_ROWS=0,2,3` and then `COMBPRED_FPRAS_ROWS=1` "+
		"(each writes its rows to the temporary directory; every row has its own scores and seeds, so the rows are the same).\n\n")
	fmt.Fprintf(&b, "ε = %g, δ = %g (guarantee: Z within (1 ± ε) with probability ≥ %g), exact CFTP samples, %d seeded runs "+
		"(seeds 0…%d) per row; success = |Ẑ/Z − 1| ≤ ε against `prob.ExactLogPartition` (enumeration of the %.0f and %.0f structures). "+
		"Scores of the first four rows: planted, the shape of a fitted model's u = Wᵀx (a structure y* the scores favour plus noise, "+
		"u ∝ (ψ(y*) − mean) + 0.3·N(0, 1)), scaled to R‖u‖ = a (R = max ‖ψ‖); a = 23 is the issue's fitted 6-label "+
		"model (l = 69 stages). The other rows are the scores u = Wᵀx of fitted models (`prob.Fit`, default regularisation "+
		"(scikit-learn's C = 1), intercept, exact inference, L-BFGS to 1e-6, on the first 80 %% of the rows) at the held-out "+
		"rows with the median and the largest R‖u‖: the shared glass set (214 rows, 9 standardised features, 6 labels), and "+
		"500 routes on 7 vertices decoded from a planted linear model of 5 features plus N(0, ¼) noise on the scores. "+
		"*Thesis samples* is the printed count runs × l × S, S = ⌈65 ε⁻² l e^{2/3}⌉; above the default work bound (5·10⁷) "+
		"that schedule refuses and its success rate is not measured; between 5·10⁶ and the bound it is not run (minutes per estimate). "+
		"Success rates are k/%d with a 95%% Clopper–Pearson lower bound.\n\n",
		eps, delta, 1-delta, runs, runs-1, math.Round(math.Exp(perm6.LogCount())), math.Round(math.Exp(dic7.LogCount())), runs)
	fmt.Fprintf(&b, "| space | R‖u‖ | thesis: l | thesis: samples/estimate | thesis: success | adaptive: samples/estimate (mean, max) | adaptive: TPA runs (mean) | adaptive: success | samples ratio (thesis/adaptive mean) | time/estimate: thesis, adaptive |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
	for i, row := range rows {
		if !keep(i) {
			continue
		}
		u := row.u
		if u == nil {
			u = plantedScores(rand.New(rand.NewPCG(2014, uint64(i))), row.sp, row.a)
		}
		exact, err := prob.ExactLogPartition(row.sp, u)
		if err != nil {
			t.Fatal(err)
		}
		opt := prob.LogZOptions{Method: prob.LogZFPRAS, Eps: eps, Delta: delta}
		thesisN, err := prob.FPRASThesisSamples(row.sp, u, opt)
		if err != nil {
			t.Fatal(err)
		}
		l := 3 * math.Ceil(maxNorm(row.sp)*math.Sqrt(dot(u, u)))
		thesisCell, thesisTime := "refused: work bound", "–"
		if row.thesis || (row.u != nil && thesisN <= 5e6) {
			o := opt
			o.Schedule = prob.ScheduleThesis
			ok, _, _, _, per := measure(t, row, u, o, runs, exact, eps)
			thesisCell, thesisTime = successCell(ok, runs), fmt.Sprintf("%.1f ms", per.Seconds()*1e3)
		} else if thesisN > prob.DefaultMaxSamples {
			o := opt
			o.Schedule = prob.ScheduleThesis
			if _, err := prob.LogPartition(row.sp, u, o); !errors.Is(err, prob.ErrWorkBound) {
				t.Fatalf("%s a = %g: the thesis schedule should refuse, got %v", row.space, row.a, err)
			}
		} else {
			thesisCell = "not run (cost)"
		}
		o := opt
		o.Schedule = prob.ScheduleAdaptive
		ok, meanS, maxS, meanRuns, per := measure(t, row, u, o, runs, exact, eps)
		line := fmt.Sprintf("| %s | %g | %.0f | %.3g | %s | %.0f, %d | %.0f | %s | %.0f× | %s, %.1f ms |\n",
			row.space, row.a, l, thesisN, thesisCell, meanS, maxS, meanRuns, successCell(ok, runs), thesisN/meanS, thesisTime, per.Seconds()*1e3)
		t.Log(strings.TrimSpace(line))
		b.WriteString(line)
	}
	fmt.Fprintf(&b, "\nThe adaptive schedule's expected samples are (r₁ + r₂)(L + 1) with L = ln|Y| + F − log Z "+
		"(F ≥ max ⟨u, ψ⟩) and r₂ ≈ 2L ln(4/δ)/ln(1 + ε)²: on spaces that decode exactly L ≤ ln|Y| (plus a rounding margin) "+
		"whatever the scores, so the cost does not grow with ‖u‖; the thesis schedule's grows like (R‖u‖)². "+
		"The derivation and the guarantee are in the doc comment of `prob.FPRASAdaptive` (core/prob/fpras_adaptive.go).\n")
	out := "FPRAS_ADAPTIVE.md"
	if only != "" || runs != 100 {
		out = filepath.Join(os.TempDir(), fmt.Sprintf("FPRAS_ADAPTIVE.rows-%s.runs-%d.md", strings.ReplaceAll(only, ",", "-"), runs))
	}
	t.Logf("writing %s", out)
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// measure runs the FPRAS with seeds 0..runs-1 and returns the number within (1 ± eps), the mean
// and largest samples per estimate, the mean number of runs, and the wall time per estimate.
func measure(t *testing.T, row fprasRow, u []float64, opt prob.LogZOptions, runs int, exact, eps float64) (ok int, meanS float64, maxS int64, meanRuns float64, per time.Duration) {
	t.Helper()
	start := time.Now()
	for s := 0; s < runs; s++ {
		opt.Seed = uint64(s)
		res, err := prob.LogPartition(row.sp, u, opt)
		if err != nil {
			t.Fatalf("%s a = %g, %v: %v", row.space, row.a, opt.Schedule, err)
		}
		if math.Abs(math.Exp(res.LogZ-exact)-1) <= eps {
			ok++
		}
		meanS += float64(res.Samples) / float64(runs)
		maxS = max(maxS, res.Samples)
		meanRuns += float64(res.Runs) / float64(runs)
	}
	return ok, meanS, maxS, meanRuns, time.Since(start) / time.Duration(runs)
}

// successCell is "k/n (≥ lower)" with the 95% one-sided Clopper–Pearson lower bound on the
// success probability: the p with P(Bin(n, p) ≥ k) = 0.05, by bisection.
func successCell(k, n int) string {
	lower := 0.0
	if k > 0 {
		lo, hi := 0.0, 1.0
		for i := 0; i < 60; i++ {
			mid := (lo + hi) / 2
			if binomTail(n, k, mid) < 0.05 {
				lo = mid
			} else {
				hi = mid
			}
		}
		lower = lo
	}
	return fmt.Sprintf("%d/%d (≥ %.2f)", k, n, lower)
}

// binomTail is P(Bin(n, p) ≥ k).
func binomTail(n, k int, p float64) float64 {
	var s float64
	for j := k; j <= n; j++ {
		lg, _ := math.Lgamma(float64(n + 1))
		a, _ := math.Lgamma(float64(j + 1))
		c, _ := math.Lgamma(float64(n - j + 1))
		s += math.Exp(lg - a - c + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
	}
	return s
}
