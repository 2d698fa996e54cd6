package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// FPRASAdaptive estimates log Z(u) within a factor (1 ± ε) of Z with probability ≥ 1 − δ by
// Huber's tootsie-pop algorithm (TPA; Huber and Schott 2010, Huber 2015, "Approximation
// algorithms for the normalizing constant of Gibbs distributions", Ann. Appl. Probab.): an
// adaptive, random cooling schedule whose length follows the scores instead of the worst case
// R‖u‖ of the thesis' fixed schedule (FPRASThesis).
//
// The monotone family. Let f(y) = ⟨u, ψ(y)⟩ and F ≥ max_y f(y) (the CFTP envelope: the decoded
// mode's score plus a rounding margin on spaces that decode exactly, a proven bound otherwise), and
// H(y) = F − f(y) ≥ 0. Then
//
//	Z̃(β) = Σ_y exp(−β H(y)) = e^{−βF} Z(βu),   Z̃(0) = |Y| (LogCount),   log Z(u) = F + log Z̃(1),
//
// and Z̃ is continuous and non-increasing in β because H ≥ 0 (⟨u, ψ⟩ may have either sign: the
// shift by F is what makes the family monotone, and it changes log Z by the known constant F).
// Z̃(β) is the measure of A(β) = {(y, w): 0 ≤ w ≤ exp(−βH(y))} (counting measure on y times
// Lebesgue on w), and the sets are nested: A(β′) ⊆ A(β) for β′ ≥ β.
//
// One TPA run. Start at β_0 = 0. Given β_i, draw y ∼ π_{β_i} ∝ exp(β_i f) (exactly, by the coalescence
// step of CFTP at temperature β_i: see CFTP.sampleAt) and w uniform on [0, exp(−β_i H(y))]: (y, w) is
// uniform on A(β_i). The largest β with (y, w) ∈ A(β) is β_{i+1} = −ln w / H(y) = β_i + E/H(y), E = −ln U
// exponential with mean 1 (β_{i+1} = ∞ when H(y) = 0). Stop at the first i with β_{i+1} ≥ 1; the
// run's count is k = i, the number of points that fell strictly before β = 1. Because
// P(β_{i+1} ≥ b | β_i) = P((y, w) ∈ A(b)) = Z̃(b)/Z̃(β_i) for b ≥ β_i, the variables
// t_i = ln(Z̃(0)/Z̃(β_i)) are the arrival times of a Poisson process of rate 1 (each increment is
// −ln of a uniform on (0, 1], i.e. Exp(1), independent of the past), so k ∼ Poisson(L) with
//
//	L = ln(Z̃(0)/Z̃(1)) = ln|Y| + F − log Z(u) ≥ 0.
//
// A run draws k + 1 samples, L + 1 in expectation. L is also ln E T of CFTP at β = 1, so it is
// small whenever exact sampling is cheap; since Z ≥ e^{f(ŷ)} for the decoded ŷ,
// L ≤ L_max = min(F − f_min, ln|Y| + F − f(ŷ)), which is ≈ ln|Y| on spaces that decode exactly,
// however large the scores: the thesis schedule's l = p⌈R‖u‖⌉ grows with ‖u‖, this does not.
//
// The estimate. r runs give K = Σ k ∼ Poisson(rL); L̂ = K/r and log Ẑ = ln|Y| + F − L̂, so
// Ẑ/Z = exp(L − L̂). Z within (1 ± ε) ⟺ L − a_l ≤ L̂ ≤ L + a_u with a_l = ln(1 + ε) and
// a_u = −ln(1 − ε) (a_u > a_l: the interval is not symmetric in L̂). By the Chernoff bounds for a
// Poisson variable of mean μ = rL,
//
//	P(K ≥ μ(1 + a)) ≤ exp(−μa²/(2(1 + a/3)))   (a > 0; Bernstein),
//	P(K ≤ μ(1 − a)) ≤ exp(−μa²/2)              (0 < a ≤ 1; trivially 0 for a > 1),
//
// with a = a_u/L and a = a_l/L, each tail is ≤ δ/4 when
//
//	r ≥ ln(4/δ) · max(2L/a_l², (2L + 2a_u/3)/a_u²),
//
// a bound increasing in L. (For L = 0 every k is 0 and L̂ is exact.)
//
// Two phases. L is unknown, so phase 1 runs r_1 = ⌈5 ln(2/δ)/a_l⌉ TPA runs (a few per cent of
// phase 2) and turns their count K_1 into an upper confidence bound: μ⁺(K_1) is the root μ ≥ K_1
// of μ − K_1 − K_1 ln(μ/K_1) = ln(2/δ) (μ⁺(0) = ln(2/δ)), and L⁺ = min(μ⁺(K_1)/r_1, L_max).
// P(L > L⁺) ≤ δ/2: for k < μ, P(Poisson(μ) ≤ k) ≤ exp(−(μ − k − k ln(μ/k))) (Chernoff), μ⁺ is
// increasing in k, and L > μ⁺(K_1)/r_1 happens only when K_1 is at most the largest k0 with
// μ⁺(k0) < r_1 L, whose probability is ≤ exp(−(r_1 L − k0 − k0 ln(r_1 L/k0))) < δ/2. Phase 2 runs
// r_2 = r(L⁺) fresh runs (independent of phase 1, so the bound above holds given r_2) and its
// count alone gives L̂; phase 1's count is used only to choose r_2. Failure probability
// ≤ δ/2 + δ/4 + δ/4 = δ, for every δ ∈ (0, 1): no median of runs is needed. The expected number of
// samples is (r_1 + r_2)(L + 1) ≈ 2L(L + 1) ln(4/δ)/a_l², against the thesis schedule's
// ⌈R‖u‖⌉² · 65 p² e^{2/p} ε⁻² (6·10⁷ at R‖u‖ = 23, ε = 0.1).
//
// Sampling. The guarantee needs exact samples: SamplerCFTP (the default) draws each one at β_i by
// the coalescence step of CFTP, which is rejection sampling from uniform proposals with envelope
// e^{β_i F} (CFTP.sampleAt without its forward pass, exact by the remark in CFTP's comment); its
// expected proposals, 1/E_uniform[exp(β_i(f − F))], grow with β_i and are at most
// e^L ≤ e^{L_max}. SamplerChain warm-starts each run's chain at the run's previous sample (the first
// is uniform, exact at β = 0) and runs BurnIn steps at every new β_i; like the thesis' chain
// variant it voids the guarantee unless the chain has mixed. SamplerAuto takes CFTP when
// e^{L_max} ≤ AutoCFTPFactor · BurnIn and chains otherwise. Chains is ignored: runs are the
// unit of parallelism, each seeded by (Seed, phase, run), so the result does not depend on the
// number of threads.
//
// Work. MaxSamples bounds the structures drawn: every proposal of a CFTP sample (a uniform draw
// and its score, what a sample costs when it is accepted at once) and every step of a chain, at
// least one per sample. Each phase's plan, r(1 + L·c) structures for its r runs (L_max in phase
// 1, L⁺ in phase 2, after phase 1's count) with c the burn-in of a chain's sample or 1 for CFTP
// (a lower bound: a CFTP sample takes E T ≥ 1 proposals), must not exceed it before the phase
// runs; the structures are counted as they are drawn, and the call fails with ErrWorkBound once
// they exceed it, a CFTP sample being stopped there too. Counting samples alone let a row of
// Permutations(12) at ‖u‖ = 6 run 382 million proposals (80 s) for 85,697 samples under the
// default bound. Each CFTP sample is also bounded by MaxSteps, each chain by MaxSteps steps per
// temperature. Stop is checked before every sample (and every 1024 chain steps).
func FPRASAdaptive(sp space.Space, u []float64, opt LogZOptions) (LogZResult, error) {
	if err := checkScores(sp, u); err != nil {
		return LogZResult{}, err
	}
	eps, delta := opt.Eps, opt.Delta
	if err := checkEpsDelta(eps, delta); err != nil {
		return LogZResult{}, err
	}
	if opt.Samples != 0 { // named as the Python argument that sets it
		return LogZResult{}, fmt.Errorf("prob: n_samples = %d, the sample size per stage, belongs to the thesis schedule, "+
			"not the adaptive one: leave n_samples unset or pass schedule=\"thesis\"", opt.Samples)
	}
	if opt.P != 0 {
		return LogZResult{}, fmt.Errorf("prob: the cooling-schedule constant p = %d belongs to the thesis schedule, not the adaptive one", opt.P)
	}
	maxSamples := opt.MaxSamples
	if maxSamples <= 0 {
		maxSamples = DefaultMaxSamples
	}
	if err := opt.Sampler.validate(); err != nil {
		return LogZResult{}, err
	}
	res := LogZResult{Method: LogZFPRAS, Schedule: ScheduleAdaptive, Eps: eps, Delta: delta, Valid: true}
	logY := sp.LogCount()
	if norm2(u) == 0 {
		res.LogZ = logY // Z(0) = |Y|, nothing to estimate
		return res, nil
	}
	cf, err := newCFTP(sp, u, cftpStepsUnder(opt.Sampler.MaxSteps, maxSamples), opt.Sampler.Stop)
	if err != nil {
		return LogZResult{}, err
	}
	F := cf.fMax
	yDec := make([]int64, sp.Width())
	space.DecodeUntil(sp, u, yDec, opt.Sampler.Stop)
	if err := opt.Sampler.Stop.Err(); err != nil {
		return LogZResult{}, err
	}
	lMax := math.Max(0, math.Min(F-cf.fMin, logY+F-newScorer(sp, u).score(yDec)))

	t := &tpa{sp: sp, u: u, F: F, cf: cf, opt: opt.Sampler, seed: opt.Seed, maxSamples: maxSamples}
	if t.opt.Sampler == SamplerAuto || t.opt.Sampler == samplerDirect {
		t.opt.Sampler = SamplerChain
		if math.Exp(lMax) <= float64(AutoCFTPFactor)*float64(t.burnIn()) {
			t.opt.Sampler = SamplerCFTP
		}
	}
	if t.opt.Sampler == SamplerChain {
		limit := t.opt.MaxSteps
		if limit == 0 {
			limit = DefaultChainMaxSteps
		}
		if b := t.burnIn(); b > limit {
			return LogZResult{}, fmt.Errorf("%w: a chain would take %d burn-in steps per temperature, above the bound %d",
				ErrWorkBound, b, limit)
		}
	}

	aLow, aUp := math.Log1p(eps), -math.Log1p(-eps)
	r1 := math.Ceil(5 * logmath.Log(2/delta) / aLow)
	// A run's first sample is uniform (one structure); each of its other samples costs a chain's
	// burn-in, or at least one CFTP proposal (the plans are then lower bounds of the work).
	perSample := 1.0
	if t.opt.Sampler == SamplerChain {
		perSample = float64(t.burnIn())
	}
	if planned := r1 * (1 + lMax*perSample); planned > float64(maxSamples) {
		return LogZResult{}, fmt.Errorf("%w: the adaptive FPRAS' first phase would draw about %.3g structures (%.3g runs × (1 + (L ≤ %.3g) × %.0f)), "+
			"above the bound %d: raise epsilon or max_samples", ErrWorkBound, planned, r1, lMax, perSample, maxSamples)
	}
	k1, err := t.phase(1, int(r1))
	if err != nil {
		return LogZResult{}, err
	}
	lUp := math.Min(poissonUpper(float64(k1), logmath.Log(2/delta))/r1, lMax)
	r2 := math.Max(1, math.Ceil(tpaRuns(lUp, aLow, aUp, delta)))
	if planned := float64(t.work.Load()) + r2*(1+lUp*perSample); planned > float64(maxSamples) {
		return LogZResult{}, fmt.Errorf("%w: the adaptive FPRAS would draw about %.3g structures (%.3g runs × (1 + (L ≤ %.3g) × %.0f), after %d "+
			"in its first phase), above the bound %d: raise epsilon or max_samples", ErrWorkBound, planned, r2, lUp, perSample,
			t.work.Load(), maxSamples)
	}
	k2, err := t.phase(2, int(r2))
	if err != nil {
		return LogZResult{}, err
	}
	res.LogZ = logY + F - float64(k2)/r2
	res.Valid = t.opt.Sampler == SamplerCFTP // the guarantee assumes exact samples; a chain's void it
	res.Runs = int(r1 + r2)
	res.Samples, res.Steps = t.samples.Load(), t.steps.Load()
	return res, nil
}

// checkEpsDelta checks the (ε, δ) of an FPRAS.
func checkEpsDelta(eps, delta float64) error {
	if !(eps > 0 && eps < 1) {
		return fmt.Errorf("prob: the FPRAS needs 0 < ε < 1, got ε = %v", eps)
	}
	if !(delta > 0 && delta < 1) {
		return fmt.Errorf("prob: the FPRAS needs 0 < δ < 1, got δ = %v", delta)
	}
	return nil
}

// tpaRuns is the number of TPA runs r that puts L̂ = K/r, K ∼ Poisson(rL), within
// [L − aLow, L + aUp] with probability ≥ 1 − δ/2 (see FPRASAdaptive).
func tpaRuns(L, aLow, aUp, delta float64) float64 {
	c := logmath.Log(4 / delta)
	return c * math.Max(2*L/(aLow*aLow), (2*L+2*aUp/3)/(aUp*aUp))
}

// poissonUpper returns μ⁺ ≥ k with μ⁺ − k − k ln(μ⁺/k) ≥ c (the root, rounded up; c for k = 0):
// the upper confidence bound on a Poisson mean from the count k at level e^{−c}.
func poissonUpper(k, c float64) float64 {
	if k == 0 {
		return c
	}
	g := func(mu float64) float64 { return mu - k - k*logmath.Log(mu/k) }
	lo, hi := k, k+c+math.Sqrt(2*k*c)+1
	for g(hi) < c {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := lo + (hi-lo)/2
		if g(mid) < c {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// tpa holds what the runs of FPRASAdaptive share.
type tpa struct {
	sp         space.Space
	u          []float64
	F          float64
	cf         *CFTP // prepared for u; each worker clones it
	opt        SampleOptions
	seed       uint64
	maxSamples int64
	samples    atomic.Int64
	steps      atomic.Int64
	work       atomic.Int64 // structures drawn: samples, with every CFTP proposal and chain step
}

// charge adds n structures drawn to the call's work and refuses once it exceeds maxSamples.
func (t *tpa) charge(n int64) error {
	if w := t.work.Add(n); w > t.maxSamples {
		return fmt.Errorf("%w: the adaptive FPRAS drew more than max_samples = %d structures (%d samples so far, every proposal "+
			"of an exact sample and every chain step counted): raise max_samples or epsilon, or use smaller scores",
			ErrWorkBound, t.maxSamples, t.samples.Load())
	}
	return nil
}

func (t *tpa) burnIn() int {
	burn, _ := t.opt.chainSteps(t.sp)
	return burn
}

// phase runs n TPA runs in parallel, run i seeded by (seed, phase, i), and returns their total
// count K (an integer sum: the same for every number of threads). Of several failed runs it
// reports the first by index; it keeps no record per run, because n is bounded by max_samples
// only (1e10 runs at epsilon = 1e-9), not by memory.
func (t *tpa) phase(phase uint64, n int) (int64, error) {
	var K atomic.Int64
	var (
		mu       sync.Mutex
		firstErr error
		firstRun = n
	)
	var failed atomic.Bool
	parallel.For(n, 1, func(lo, hi int) {
		var cf *CFTP
		if t.opt.Sampler == SamplerCFTP {
			cf = t.cf.clone()
		}
		y := make([]int64, t.sp.Width())
		sc := newScorer(t.sp, t.u)
		for i := lo; i < hi; i++ {
			if failed.Load() || t.opt.Stop.Stopped() {
				return
			}
			k, err := t.run(deriveSeed(t.seed, phase, uint64(i)), cf, sc, y)
			if err != nil {
				mu.Lock()
				if i < firstRun {
					firstRun, firstErr = i, fmt.Errorf("prob: adaptive FPRAS, phase %d, run %d: %w", phase, i, err)
				}
				mu.Unlock()
				failed.Store(true)
				return
			}
			K.Add(k)
		}
	})
	if err := t.opt.Stop.Err(); err != nil {
		return 0, err
	}
	if firstErr != nil {
		return 0, firstErr
	}
	return K.Load(), nil
}

// cftpStepsUnder is the step bound of the adaptive FPRAS' CFTP samples: the sampler's own when
// given (maxSteps > 0), else the work bound, so that a sample runs until the work left under
// max_samples is spent (run), which the caller sets. Under the sampler's default step bound,
// which no argument of log_partition reaches, max_samples = 10⁹ stopped a sample at 4,194,304
// proposals all the same (probe AP, Permutations(20)).
func cftpStepsUnder(maxSteps int, maxSamples int64) int {
	if maxSteps > 0 {
		return maxSteps
	}
	return int(min(maxSamples, math.MaxInt64-2)) + 2
}

// run is one TPA run: it returns the number of points β_i it placed in (0, 1).
func (t *tpa) run(seed uint64, cf *CFTP, sc *scorer, y []int64) (int64, error) {
	r := newRand(seed)
	beta := 0.0
	for k := int64(0); ; k++ {
		if t.opt.Stop.Stopped() {
			return 0, ErrCancelled
		}
		t.samples.Add(1)
		if err := t.charge(1); err != nil {
			return 0, err
		}
		var f float64
		if cf != nil {
			// stopped one proposal past the work left, so that a sample the bound cuts short is
			// charged beyond it and refused as the work bound, not as a CFTP that did not coalesce
			limit := cf.maxSteps
			if left := t.maxSamples - t.work.Load(); left < int64(limit)-2 {
				limit = int(max(left, 0)) + 2
			}
			steps, fy, err := cf.sampleAt(r.Uint64(), beta, y, false, limit)
			t.steps.Add(int64(steps))
			if err := t.charge(max(int64(steps)-1, 0)); err != nil { // its first proposal was charged above
				return 0, err
			}
			if err != nil {
				return 0, fmt.Errorf("β = %.4g: %w", beta, err)
			}
			f = fy
		} else {
			if k == 0 {
				t.sp.Sample(r, y) // exact at β = 0
			} else if err := t.chainAt(r, beta, y); err != nil {
				return 0, fmt.Errorf("β = %.4g: %w", beta, err)
			}
			f = sc.score(y)
		}
		h := t.F - f
		if h <= 0 {
			return k, nil // β_{k+1} = ∞
		}
		beta += r.ExpFloat64() / h
		if beta >= 1 {
			return k, nil
		}
	}
}

// chainAt moves y by BurnIn steps of a chain for π_β started at y, charged before they run.
func (t *tpa) chainAt(r *rand.Rand, beta float64, y []int64) error {
	c, err := NewChain(t.sp, scaled(t.u, beta), t.opt.Chain, y)
	if err != nil {
		return err
	}
	burn := t.burnIn()
	if err := t.charge(max(int64(burn)-1, 0)); err != nil { // the sample's own charge counts one
		return err
	}
	for j := 0; j < burn; j++ {
		if j&1023 == 0 && t.opt.Stop.Stopped() {
			return ErrCancelled
		}
		c.Step(r)
	}
	t.steps.Add(int64(burn))
	copy(y, c.State())
	return nil
}
