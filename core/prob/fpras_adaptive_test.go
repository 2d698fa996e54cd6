package prob

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/stat/distuv"
)

// fittedScores returns scores shaped like a fitted model's: a planted structure y* (uniform) that
// the scores favour, u ∝ (ψ(y*) − mean ψ(y*)) + σ·noise with σ = 0.3, scaled to R‖u‖ = a.
func fittedScores(r *rand.Rand, sp space.Space, a float64) []float64 {
	y := make([]int64, sp.Width())
	sp.Sample(r, y)
	psi := make([]float64, sp.Dim())
	sp.Embed(y, psi)
	var m float64
	for _, x := range psi {
		m += x / float64(len(psi))
	}
	u := make([]float64, len(psi))
	for j, x := range psi {
		u[j] = x - m + 0.3*r.NormFloat64()
	}
	R, _ := psiNorm(sp)
	return scaled(u, a/(R*norm2(u)))
}

// binomialFloor returns the largest c with P(Bin(n, p) < c) ≤ alpha: a test that requires at least
// c successes out of n rejects an estimator whose success probability is ≥ p with probability
// ≤ alpha.
func binomialFloor(n int, p, alpha float64) int {
	b := distuv.Binomial{N: float64(n), P: p}
	c := 0
	for c < n && b.CDF(float64(c)) <= alpha { // CDF(c) = P(X ≤ c) = P(X < c + 1)
		c++
	}
	return c
}

// thesisCount is the number of samples the thesis schedule would draw (runs × l × S, printed S).
func thesisCount(sp space.Space, u []float64, eps, delta float64) float64 {
	n, err := FPRASThesisSamples(sp, u, LogZOptions{Eps: eps, Delta: delta})
	if err != nil {
		panic(err)
	}
	return n
}

// TestFPRASAdaptiveGuarantee runs the adaptive FPRAS (the default schedule) 40 times with seeds
// 0..39 on small enumerable spaces with scores of fitted magnitude, R‖u‖ = a ≥ 12 (the thesis
// schedule needs l = 3⌈a⌉ ≥ 36 stages and 1.6·10⁷ to 6·10⁷ samples), both random (a standard
// normal direction) and fitted-like (a planted structure, fittedScores). It requires:
//   - Z within (1 ± ε) of the exact Z (ExactLogPartition) in at least c of the 40 runs, c the
//     largest count with P(Bin(40, 1 − δ) < c) ≤ 10⁻³: an estimator meeting its guarantee fails
//     this with probability ≤ 10⁻³ (c = 21 for δ = ¼, c = 35 for δ = 0.05);
//   - the mean of Ẑ/Z within 4 standard errors of 1 (the estimator's bias, about L/(2r) ≈ 10⁻³,
//     is far below that resolution), which catches systematic errors the window would let through;
//   - at least 100× fewer samples in every run than the thesis schedule's printed count.
func TestFPRASAdaptiveGuarantee(t *testing.T) {
	type tc struct {
		name   string
		sp     space.Space
		a      float64
		fitted bool
		eps    float64
		delta  float64
	}
	cases := []tc{
		{"perm4 random", mustSpace(t, "permutations", 4), 12, false, 0.1, 0.25},
		{"perm5 fitted", mustSpace(t, "permutations", 5), 23, true, 0.1, 0.25},
		{"perm5 random δ=0.05", mustSpace(t, "permutations", 5), 15, false, 0.1, 0.05},
		{"dicycles5 random", mustSpace(t, "dicycles", 5), 15, false, 0.1, 0.25},
		{"multilabel8 fitted", mustSpace(t, "multilabel", 8), 12, true, 0.1, 0.25},
		{"subtrees random", mustSpace(t, "subtrees", smallTree...), 12, false, 0.1, 0.25},
		{"perm6 fitted", mustSpace(t, "permutations", 6), 23, true, 0.1, 0.25},
		{"dicycles6 fitted", mustSpace(t, "dicycles", 6), 20, true, 0.1, 0.25},
	}
	const runs = 40
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && i >= 6 {
				t.Skip("the 6-element spaces take a few seconds each; run without -short")
			}
			r := rand.New(rand.NewPCG(140, uint64(i)))
			var u []float64
			if c.fitted {
				u = fittedScores(r, c.sp, c.a)
			} else {
				R, _ := psiNorm(c.sp)
				u = randomScores(r, c.sp.Dim(), c.a/R)
			}
			exact, err := ExactLogPartition(c.sp, u)
			if err != nil {
				t.Fatal(err)
			}
			thesis := thesisCount(c.sp, u, c.eps, c.delta)
			ok := 0
			var sum, sum2, worst float64
			var most int64
			for s := 0; s < runs; s++ {
				res, err := LogPartition(c.sp, u, LogZOptions{Method: LogZFPRAS, Eps: c.eps, Delta: c.delta, Seed: uint64(s)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Schedule != ScheduleAdaptive || res.Stages != 0 {
					t.Fatalf("default schedule: got %v with %d stages", res.Schedule, res.Stages)
				}
				ratio := math.Exp(res.LogZ - exact)
				if math.Abs(ratio-1) <= c.eps {
					ok++
				}
				sum += ratio
				sum2 += ratio * ratio
				worst = math.Max(worst, math.Abs(ratio-1))
				most = max(most, res.Samples)
			}
			mean := sum / runs
			z := (mean - 1) / math.Sqrt((sum2/runs-mean*mean)/(runs-1))
			need := binomialFloor(runs, 1-c.delta, 1e-3)
			t.Logf("%s: R‖u‖ = %g, ln|Y| = %.2f: %d/%d within (1 ± %g) (need %d), worst |Ẑ/Z − 1| = %.4f, mean Ẑ/Z = %.5f (z = %.2f); "+
				"samples ≤ %d per estimate, thesis schedule %.3g (%.0f× more)",
				c.name, c.a, c.sp.LogCount(), ok, runs, c.eps, need, worst, mean, z, most, thesis, thesis/float64(most))
			if ok < need {
				t.Errorf("%d/%d runs within (1 ± %g), need %d for success probability ≥ %g", ok, runs, c.eps, need, 1-c.delta)
			}
			if math.Abs(z) > 4 {
				t.Errorf("biased: mean Ẑ/Z = %.5f, %.1f standard errors from 1", mean, z)
			}
			if thesis < 1e7 || float64(most)*100 > thesis {
				t.Errorf("samples: %d per estimate against the thesis' %.3g, want ≥ 100× fewer (and a case where the thesis needs ≥ 10⁷)", most, thesis)
			}
		})
	}
}

// TestTPACountIsPoisson checks the heart of the derivation: the count of one TPA run is
// Poisson(L), L = ln|Y| + F − log Z, so over n runs its mean is L and its variance L. 4000 runs
// (permutations of 5, R‖u‖ = 15) must give a mean within 4 standard errors √(L/n) of L, and a
// variance within 25% of L.
func TestTPACountIsPoisson(t *testing.T) {
	sp := mustSpace(t, "permutations", 5)
	R, _ := psiNorm(sp)
	u := randomScores(rand.New(rand.NewPCG(141, 1)), sp.Dim(), 15/R)
	exact, _ := ExactLogPartition(sp, u)
	cf, err := NewCFTP(sp, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	tp := &tpa{sp: sp, u: u, F: cf.fMax, cf: cf, opt: SampleOptions{}, seed: 7, maxSamples: math.MaxInt64}
	L := sp.LogCount() + cf.fMax - exact
	const n = 4000
	y := make([]int64, sp.Width())
	sc := newScorer(sp, u)
	var sum, sum2 float64
	for i := 0; i < n; i++ {
		k, err := tp.run(deriveSeed(7, uint64(i)), cf, sc, y)
		if err != nil {
			t.Fatal(err)
		}
		sum += float64(k)
		sum2 += float64(k * k)
	}
	mean := sum / n
	vr := sum2/n - mean*mean
	z := (mean - L) / math.Sqrt(L/n)
	t.Logf("L = %.4f: mean count %.4f (z = %.2f), variance %.4f, %d samples", L, mean, z, vr, tp.samples.Load())
	if math.Abs(z) > 4 {
		t.Errorf("mean TPA count %.4f, want L = %.4f (z = %.1f)", mean, L, z)
	}
	if math.Abs(vr/L-1) > 0.25 {
		t.Errorf("variance of the TPA count %.4f, want L = %.4f", vr, L)
	}
	if got, want := tp.samples.Load(), int64(sum)+n; got != want {
		t.Errorf("samples %d, want counts + runs = %d", got, want)
	}
}

// TestTPABounds checks the two bounds the guarantee rests on against exact Poisson
// probabilities: the phase-1 upper confidence bound μ⁺(k) (P(Poisson(μ⁺(k)) ≤ k) ≤ e^{−c}), and
// the run count r(L) (each tail of K ∼ Poisson(rL) beyond the (1 ± ε) window ≤ δ/4).
func TestTPABounds(t *testing.T) {
	for _, c := range []float64{math.Log(8), math.Log(40), 20} {
		for _, k := range []float64{0, 1, 3, 10, 100, 1000, 1e5} {
			mu := poissonUpper(k, c)
			if mu < k {
				t.Fatalf("μ⁺(%g) = %g < k", k, mu)
			}
			if p := (distuv.Poisson{Lambda: mu}).CDF(k); p > math.Exp(-c)*(1+1e-9) {
				t.Errorf("c = %g, k = %g: P(Poisson(μ⁺ = %g) ≤ k) = %g > e^{−c} = %g", c, k, mu, p, math.Exp(-c))
			}
		}
	}
	for _, eps := range []float64{0.05, 0.1, 0.3} {
		for _, delta := range []float64{0.25, 0.05, 1e-3} {
			for _, L := range []float64{0.01, 0.5, 3, 7, 20} {
				aLow, aUp := math.Log1p(eps), -math.Log1p(-eps)
				r := math.Max(1, math.Ceil(tpaRuns(L, aLow, aUp, delta)))
				p := distuv.Poisson{Lambda: r * L}
				// L̂ = K/r too small: K < r(L − aLow); too large: K > r(L + aUp).
				lowK := math.Ceil(r*(L-aLow)) - 1
				low := 0.0
				if lowK >= 0 {
					low = p.CDF(lowK)
				}
				high := p.Survival(math.Floor(r * (L + aUp)))
				if low > delta/4 || high > delta/4 {
					t.Errorf("ε = %g, δ = %g, L = %g, r = %g: tails %g, %g > δ/4", eps, delta, L, r, low, high)
				}
			}
		}
	}
}

// TestFPRASAdaptiveDeterministic: the result depends on the seed only, not on the number of
// threads; Runs, Samples and Steps are reported.
func TestFPRASAdaptiveDeterministic(t *testing.T) {
	sp := mustSpace(t, "dicycles", 5)
	u := randomScores(rand.New(rand.NewPCG(142, 1)), sp.Dim(), 4)
	defer parallel.SetThreads(parallel.Threads())
	var first LogZResult
	for i, th := range []int{1, 2, 3} {
		parallel.SetThreads(th)
		res, err := FPRAS(sp, u, LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.2, Delta: 0.1, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Runs == 0 || res.Samples < int64(res.Runs) || res.Steps < res.Samples || res.Schedule != ScheduleAdaptive {
			t.Errorf("%d threads: %+v", th, res)
		}
		if i == 0 {
			first = res
		} else if res != first {
			t.Errorf("%d threads: %+v, 1 thread: %+v", th, res, first)
		}
	}
}

// TestFPRASAdaptiveWorkAndCancel: the work bound is an error, before the first phase (MaxSamples
// below its expected count), before the second, and while sampling (a hard cap); a set Stop flag
// cancels; a CFTP step bound too small is an error wrapping ErrWorkBound. None panics.
func TestFPRASAdaptiveWorkAndCancel(t *testing.T) {
	sp := mustSpace(t, "permutations", 5)
	u := randomScores(rand.New(rand.NewPCG(143, 1)), sp.Dim(), 3)
	base := LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.1, Delta: 0.25, Seed: 1}
	for _, m := range []int64{10, 2000} { // phase 1 planned > 10; phase 2 planned > 2000
		o := base
		o.MaxSamples = m
		if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrWorkBound) {
			t.Errorf("MaxSamples = %d: want ErrWorkBound, got %v", m, err)
		}
	}
	// ε = 0.9: phase 1 plans 8·(L_max + 1) ≈ 47 samples; a cap of 50 passes that check and the
	// hard cap must stop phase 2 or its check must refuse it.
	o := base
	o.Eps, o.MaxSamples = 0.9, 50
	if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrWorkBound) {
		t.Errorf("ε = 0.9, MaxSamples = 50: want ErrWorkBound, got %v", err)
	}
	o = base
	o.Sampler.Stop = &cancel.Flag{}
	o.Sampler.Stop.Stop()
	if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrCancelled) {
		t.Errorf("stopped: want ErrCancelled, got %v", err)
	}
	// ε = 1e-9 under a work bound of 2⁶² plans 1e10 runs: the phase kept one error per run,
	// 166 GB, and the runtime's fatal out-of-memory error took the process down. It runs now,
	// in memory of its own size, until stopped.
	o = base
	o.Eps, o.MaxSamples = 1e-9, 1<<62
	o.Sampler.Stop = &cancel.Flag{}
	stopper := time.AfterFunc(100*time.Millisecond, o.Sampler.Stop.Stop)
	defer stopper.Stop()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrCancelled) {
		t.Errorf("ε = 1e-9, MaxSamples = 2⁶², stopped after 100 ms: want ErrCancelled, got %v", err)
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<30 {
		t.Errorf("ε = 1e-9: %d bytes allocated in 100 ms", grown)
	}
	big := randomScores(rand.New(rand.NewPCG(143, 2)), sp.Dim(), 40)
	o = base
	o.Sampler.MaxSteps = 2
	if _, err := FPRAS(sp, big, o); !errors.Is(err, ErrWorkBound) {
		t.Errorf("MaxSteps = 2: want ErrWorkBound, got %v", err)
	}
}

// TestFPRASAdaptiveSamplers: chain samples (warm-started per run, not guaranteed) land near the
// exact value; SamplerAuto takes CFTP where e^{L_max} is small (the steps then count CFTP
// proposals, fewer than a chain's burn-in per sample); scores far beyond the thesis schedule's
// reach (R‖u‖ = 500: 1500 stages) stay cheap, since L ≤ ln|Y| on spaces that decode exactly.
func TestFPRASAdaptiveSamplers(t *testing.T) {
	sp := mustSpace(t, "dicycles", 5)
	u := randomScores(rand.New(rand.NewPCG(144, 1)), sp.Dim(), 4)
	exact, _ := ExactLogPartition(sp, u)
	o := LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.2, Delta: 0.25, Seed: 3,
		Sampler: SampleOptions{Sampler: SamplerChain, BurnIn: 50}}
	res, err := FPRAS(sp, u, o)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(math.Exp(res.LogZ-exact)-1) > 0.2 || res.Steps != 50*(res.Samples-int64(res.Runs)) {
		t.Errorf("chain: log Z %.4f (exact %.4f), %d steps for %d samples in %d runs", res.LogZ, exact, res.Steps, res.Samples, res.Runs)
	}
	o.Sampler = SampleOptions{Sampler: SamplerAuto}
	res, err = FPRAS(sp, u, o)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(math.Exp(res.LogZ-exact)-1) > 0.2 || res.Steps >= int64(DefaultBurnIn(sp))*res.Samples/2 {
		t.Errorf("auto: log Z %.4f (exact %.4f), %d steps for %d samples", res.LogZ, exact, res.Steps, res.Samples)
	}
	R, _ := psiNorm(sp)
	huge := randomScores(rand.New(rand.NewPCG(144, 2)), sp.Dim(), 500/R)
	exact, _ = ExactLogPartition(sp, huge)
	res, err = FPRAS(sp, huge, LogZOptions{Eps: 0.1, Delta: 0.25, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(math.Exp(res.LogZ-exact)-1) > 0.1 || float64(res.Samples) > 1e5 {
		t.Errorf("R‖u‖ = 500: log Z %.4f (exact %.4f), %d samples", res.LogZ, exact, res.Samples)
	}
	if _, err := FPRAS(sp, huge, LogZOptions{Schedule: ScheduleThesis, Eps: 0.1, Delta: 0.25}); !errors.Is(err, ErrWorkBound) {
		t.Errorf("thesis schedule at R‖u‖ = 500: want ErrWorkBound, got %v", err)
	}
}

// TestFPRASScheduleNames: the names parse back to their values; auto resolves to the thesis
// schedule when Samples is set.
func TestFPRASScheduleNames(t *testing.T) {
	for i, n := range FPRASScheduleNames() {
		s, err := ParseFPRASSchedule(n)
		if err != nil || int(s) != i || s.String() != n {
			t.Errorf("%q: %v, %v", n, s, err)
		}
	}
	if _, err := ParseFPRASSchedule("tpa"); err == nil {
		t.Error("unknown schedule accepted")
	}
	sp := mustSpace(t, "permutations", 4)
	u := randomScores(rand.New(rand.NewPCG(145, 1)), sp.Dim(), 1)
	res, err := FPRAS(sp, u, LogZOptions{Eps: 0.2, Delta: 0.25, Samples: 50, Seed: 1})
	if err != nil || res.Schedule != ScheduleThesis || res.PerStage != 50 {
		t.Errorf("auto with Samples: %+v, %v", res, err)
	}
}

// TestFPRASAdaptiveWorkCountsProposals: MaxSamples bounds the structures drawn, every CFTP
// proposal counted, not the samples alone: a bound between a run's samples and its proposals is
// an error wrapping ErrWorkBound (it passed, and a row of Permutations(12) at ‖u‖ = 6 ran 382
// million proposals, 80 s, for 85,697 samples under the default bound).
func TestFPRASAdaptiveWorkCountsProposals(t *testing.T) {
	sp := mustSpace(t, "permutations", 6)
	u := randomScores(rand.New(rand.NewPCG(144, 1)), sp.Dim(), 4)
	o := LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.3, Delta: 0.25, Seed: 1, Sampler: SampleOptions{Sampler: SamplerCFTP}}
	res, err := FPRAS(sp, u, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps < 3*res.Samples {
		t.Fatalf("%d proposals for %d samples: the case needs several proposals per sample", res.Steps, res.Samples)
	}
	o.MaxSamples = (res.Samples + res.Steps) / 2
	if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrWorkBound) || !strings.Contains(err.Error(), "proposal") {
		t.Errorf("MaxSamples = %d between %d samples and %d proposals: want ErrWorkBound counting proposals, got %v",
			o.MaxSamples, res.Samples, res.Steps, err)
	}
	o.MaxSamples = res.Steps
	if again, err := FPRAS(sp, u, o); err != nil || again != res {
		t.Errorf("MaxSamples = its proposals, %d: %+v, %v; want the same estimate %+v", res.Steps, again, err, res)
	}
}

// TestFPRASAdaptiveWorkBoundStopsASample: a CFTP sample is stopped where the work left runs out
// (it ran to its own step bound, 4.2 million proposals, whatever max_samples said), and a chain
// sampler's plan counts its burn-in (a plan in samples passed bounds its steps then exceeded).
func TestFPRASAdaptiveWorkBoundStopsASample(t *testing.T) {
	sp := mustSpace(t, "permutations", 8)
	u := randomScores(rand.New(rand.NewPCG(145, 1)), sp.Dim(), 300)
	cf, err := NewCFTP(sp, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	// one run at a time, on one goroutine: the work drawn is then exactly what was charged
	const bound = 50
	tp := &tpa{sp: sp, u: u, F: cf.fMax, cf: cf, opt: SampleOptions{Sampler: SamplerCFTP}, seed: 1, maxSamples: bound}
	y, sc := make([]int64, sp.Width()), newScorer(sp, u)
	for i := uint64(0); err == nil; i++ {
		_, err = tp.run(i, cf.clone(), sc, y)
	}
	if !errors.Is(err, ErrWorkBound) || !strings.Contains(err.Error(), "drew more than max_samples = 50 structures") {
		t.Errorf("CFTP, bound %d: want the work bound's refusal, got %v", bound, err)
	}
	if steps := tp.steps.Load(); steps > bound+2 {
		t.Errorf("CFTP, bound %d: %d proposals drawn (%d samples)", bound, steps, tp.samples.Load())
	}
	small := randomScores(rand.New(rand.NewPCG(145, 2)), sp.Dim(), 2)
	o := LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.1, Delta: 0.25, Seed: 1}
	o.Sampler = SampleOptions{Sampler: SamplerChain, BurnIn: 1000}
	o.MaxSamples = 20_000 // above the runs' samples, below their chain steps
	_, err = FPRAS(sp, small, o)
	if !errors.Is(err, ErrWorkBound) || !strings.Contains(err.Error(), "first phase would draw about") {
		t.Errorf("chain, burn-in 1000, MaxSamples = 20,000: want the first phase's plan refused, got %v", err)
	}
}

// TestFPRASAdaptiveCFTPFollowsMaxSamples: without a step bound of the sampler's own, a CFTP
// sample of the adaptive FPRAS may run until the work left under MaxSamples is spent, whose
// refusal names max_samples, the argument that raises it; under the sampler's default bound it
// stopped at 4,194,304 proposals whatever max_samples said, and advised "a larger bound" that no
// argument of log_partition set (probe AP: max_samples = 10⁹ changed nothing). A given step bound
// is kept.
func TestFPRASAdaptiveCFTPFollowsMaxSamples(t *testing.T) {
	for _, c := range []struct {
		maxSteps   int
		maxSamples int64
		want       int
	}{
		{0, 1e9, 1e9 + 2},
		{0, 10, 12},
		{1000, 1e9, 1000},
		{0, math.MaxInt64, math.MaxInt64},
	} {
		if got := cftpStepsUnder(c.maxSteps, c.maxSamples); got != c.want {
			t.Errorf("cftpStepsUnder(%d, %d) = %d, want %d", c.maxSteps, c.maxSamples, got, c.want)
		}
	}
	sp := mustSpace(t, "permutations", 8)
	u := randomScores(rand.New(rand.NewPCG(146, 1)), sp.Dim(), 300)
	o := LogZOptions{Schedule: ScheduleAdaptive, Eps: 0.1, Delta: 0.25, Seed: 1, MaxSamples: 1 << 30}
	o.Sampler.MaxSteps = 1000
	if _, err := FPRAS(sp, u, o); !errors.Is(err, ErrWorkBound) || !strings.Contains(err.Error(), "within 1000 backward steps") ||
		strings.Contains(err.Error(), "larger bound") {
		t.Errorf("MaxSteps = 1000: want CFTP's own refusal, without advice no argument follows, got %v", err)
	}
}
