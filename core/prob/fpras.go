package prob

import (
	"fmt"
	"math"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
)

// DefaultMaxSamples is the default work bound of one FPRAS call (LogZOptions.MaxSamples): samples
// for the thesis schedule, structures drawn for the adaptive one.
const DefaultMaxSamples = 50_000_000

// FPRAS estimates log Z(u), Z within a factor (1 ± ε) with probability ≥ 1 − δ, by the schedule
// opt.Schedule: FPRASAdaptive (the default: ScheduleAuto is adaptive unless Samples or P, which
// only the thesis schedule uses, is set) or FPRASThesis.
func FPRAS(sp space.Space, u []float64, opt LogZOptions) (LogZResult, error) {
	switch opt.Schedule {
	case ScheduleAuto:
		if opt.Samples != 0 || opt.P != 0 {
			return FPRASThesis(sp, u, opt)
		}
		return FPRASAdaptive(sp, u, opt)
	case ScheduleAdaptive:
		return FPRASAdaptive(sp, u, opt)
	case ScheduleThesis:
		return FPRASThesis(sp, u, opt)
	}
	return LogZResult{}, fmt.Errorf("prob: unknown FPRAS schedule %d", int(opt.Schedule))
}

// FPRASThesis estimates log Z(u) by the thesis' fully polynomial randomised approximation scheme
// (§6.3, theorem th:fpras): a telescoping product over a cooling schedule
// 0 = β_0 < β_1 < … < β_l = 1,
//
//	Z(u) = Z(0) · Π_{i=1}^{l} Z(β_i u)/Z(β_{i−1} u),   Z(0) = |Y| (LogCount),
//
// where 1/ρ_i = Z(β_i u)/Z(β_{i−1} u) and ρ_i = E_{y∼π_{β_i}}[f_i(y)],
// f_i(y) = exp((β_{i−1} − β_i)⟨u, ψ(y)⟩), is estimated by the mean of f_i over S samples from
// π_{β_i} ∝ exp(β_i⟨u, ψ⟩). The estimate is log|Y| − Σ_i log(mean_i).
//
// Schedule. The thesis sets q = pR‖u‖ (R = max_y ‖ψ(y)‖, p ≥ 3 an integer), l = p⌈R‖u‖⌉ and
// β_j = j/q, and also lists the schedule as 0, 1/q, …, p⌊R‖u‖⌋/q, 1. Neither is consistent as
// printed: with l = p⌈R‖u‖⌉, β_{l−1} = (l−1)/q exceeds 1 whenever p⌈R‖u‖⌉ − 1 > pR‖u‖; the listed
// form ends with a gap 1 − ⌊R‖u‖⌋/(R‖u‖) that can approach 1/(R‖u‖) > 1/q. What the proof needs is
// every gap β_i − β_{i−1} ≤ 1/q, so that e^{−1/p} ≤ f_i ≤ e^{1/p}. We keep the printed l and space
// the schedule evenly, β_j = j/l: gaps 1/l ≤ 1/q.
//
// Sample size. S = ⌈65 ε⁻² l e^{2/p}⌉ per stage, as printed, unless opt.Samples overrides it. The
// constant is loose: the proof's Chebyshev step delivers (1 ± ε/4), not (1 ± ε), and bounds
// Var f_i/ρ_i² by e^{2/p} where Popoviciu's inequality and ρ_i ≥ e^{−1/p} give
// (e^{1/p} − e^{−1/p})² e^{2/p}/4 = (e^{2/p} − 1)²/4 ≈ 1/p². Samples
// are exact (CFTP) by default, as the theorem assumes; opt.Sampler may select chain samples
// instead (thesis appendix C.1 then needs the chain within ε/(5l e^{2/p}) of π in variation,
// which is not checked).
//
// Confidence. One run succeeds with probability ≥ ¾ (the thesis' guarantee); for δ < ¼ the result
// is the median of k = ⌈8 ln(1/δ)⌉ (odd) runs, which fails only if half the runs fail:
// P ≤ exp(−2k(¼)²) = exp(−k/8) ≤ δ (Hoeffding).
//
// Work. The total samples k·l·S must not exceed opt.MaxSamples (checked before sampling), and each
// CFTP sample is bounded by its own MaxSteps; both are errors, never hangs.
//
// At the scores of fitted models R‖u‖ is tens, and l·S grows like (R‖u‖)²: 6·10⁷ samples at
// R‖u‖ = 23 and ε = 0.1. FPRASAdaptive keeps the guarantee with orders of magnitude fewer.
func FPRASThesis(sp space.Space, u []float64, opt LogZOptions) (LogZResult, error) {
	if err := checkScores(sp, u); err != nil {
		return LogZResult{}, err
	}
	eps, delta := opt.Eps, opt.Delta
	if err := checkEpsDelta(eps, delta); err != nil {
		return LogZResult{}, err
	}
	p := opt.P
	if p == 0 {
		p = 3
	}
	if p < 3 {
		return LogZResult{}, fmt.Errorf("prob: the cooling-schedule constant p must be ≥ 3, got %d", p)
	}
	if opt.Samples < 0 {
		return LogZResult{}, fmt.Errorf("prob: the sample size override must be ≥ 0, got %d", opt.Samples)
	}
	maxSamples := opt.MaxSamples
	if maxSamples <= 0 {
		maxSamples = DefaultMaxSamples
	}
	if err := opt.Sampler.validate(); err != nil {
		return LogZResult{}, err
	}
	R, err := psiNorm(sp)
	if err != nil {
		return LogZResult{}, err
	}
	rf, lf, sf := thesisPlan(R*norm2(u), eps, delta, p, opt.Samples)
	// The guarantee needs the printed S per stage: an override below it voids it (n_samples = 1
	// on Permutations(5) missed (1 ± ε) in 73 % of runs, reported valid at δ = 0.25).
	_, _, need := thesisPlan(R*norm2(u), eps, delta, p, 0)
	res := LogZResult{Method: LogZFPRAS, Schedule: ScheduleThesis, Eps: eps, Delta: delta, Valid: sf >= need}
	if lf == 0 {
		res.LogZ = sp.LogCount() // Z(0) = |Y|, nothing to estimate
		return res, nil
	}
	// The plan is in floats: a tiny ε makes S infinite, which the bound refuses before it becomes
	// an int (int(+Inf) is MinInt64, whose negative total passed it).
	if total := rf * lf * sf; !(total <= float64(maxSamples)) {
		return LogZResult{}, fmt.Errorf("%w: the FPRAS would draw %.3g samples (%.3g run(s) × l = %.0f stages × S = %.3g), above the bound %d; "+
			"the printed S = ⌈65 ε⁻² l e^{2/p}⌉ is very conservative: pass n_samples to override it, raise max_samples, use the adaptive schedule or smaller scores",
			ErrWorkBound, total, rf, lf, sf, maxSamples)
	}
	runs, l, S := int(rf), int(lf), int(sf)
	res.Runs = runs
	// Every stage draws the samples of all runs at once, and each block of them keeps a sum per
	// run it touches: the budget is for runs·S samples, not S (δ = 1e-300 with n_samples = 1e8
	// made 1,900 runs and 3e9 blocks, and the runtime's fatal out-of-memory error aborted Python).
	if err := budget.Check(fmt.Sprintf("the FPRAS' %d runs × n_samples = %d per stage (with n_chains = %d), for the sampler's per-block sums",
		runs, S, max(1, opt.Sampler.Chains)), budget.Mul(sampleBlocks(runs*S, opt.Sampler), 24+16+24)); err != nil {
		return LogZResult{}, err
	}
	res.Stages, res.PerStage = l, S
	// Every run uses the same schedule, so each stage draws the samples of all runs in one call
	// (run r takes samples r·S … r·S+S−1): a stage's sampler is built once, not once per run,
	// which made δ = 1e-300 (5,527 runs of 20 samples) spend minutes building samplers.
	logX := make([]float64, runs)
	for i := 1; i <= l; i++ {
		bPrev, b := float64(i-1)/lf, float64(i)/lf
		if i == l {
			b = 1
		}
		ub := scaled(u, b)
		gap := bPrev - b
		n := runs * S
		// partial[block] holds the block's sums, one per run it touched, in order: blocks own
		// their state (visitSamples runs them concurrently) and their samples are consecutive.
		partial := make([][]runSum, max((n+cftpBlock-1)/cftpBlock, opt.Sampler.Chains, 1))
		st, err := visitSamples(sp, ub, n, deriveSeed(opt.Seed, uint64(i)), opt.Sampler, true,
			func(block, k int, _ []int64, psi []float64) {
				run, sums := k/S, partial[block]
				if len(sums) == 0 || sums[len(sums)-1].run != run {
					sums = append(sums, runSum{run: run})
				}
				sums[len(sums)-1].sum += math.Exp(gap * dot(u, psi))
				partial[block] = sums
			})
		res.Samples += int64(st.Samples)
		res.Steps += st.Steps
		res.Valid = res.Valid && st.Exact // the guarantee assumes exact samples; a chain's void it
		if err != nil {
			return LogZResult{}, fmt.Errorf("prob: FPRAS stage %d of %d (β = %.4g): %w", i, l, b, err)
		}
		means := make([]float64, runs)
		for _, sums := range partial {
			for _, rs := range sums {
				means[rs.run] += rs.sum
			}
		}
		for r := range logX {
			logX[r] += logmath.Log(means[r] / float64(S))
		}
	}
	logZs := make([]float64, runs)
	for r := range logZs {
		logZs[r] = sp.LogCount() - logX[r]
	}
	slices.Sort(logZs)
	res.LogZ = logZs[len(logZs)/2]
	return res, nil
}

// FPRASThesisSamples returns the number of samples FPRASThesis would draw on (sp, u) with the
// ε, δ, P and Samples of opt (runs × l × S), without drawing any: 0 when u = 0.
func FPRASThesisSamples(sp space.Space, u []float64, opt LogZOptions) (float64, error) {
	if err := checkScores(sp, u); err != nil {
		return 0, err
	}
	if err := checkEpsDelta(opt.Eps, opt.Delta); err != nil {
		return 0, err
	}
	p := opt.P
	if p == 0 {
		p = 3
	}
	if p < 3 || opt.Samples < 0 {
		return 0, fmt.Errorf("prob: the thesis schedule needs p ≥ 3 and Samples ≥ 0, got %d and %d", p, opt.Samples)
	}
	R, err := psiNorm(sp)
	if err != nil {
		return 0, err
	}
	runs, l, S := thesisPlan(R*norm2(u), opt.Eps, opt.Delta, p, opt.Samples)
	if l == 0 {
		return 0, nil
	}
	return runs * l * S, nil
}

// thesisPlan returns the thesis schedule's number of runs (1, or the odd ⌈8 ln(1/δ)⌉ for δ < ¼,
// taken as −8 ln δ: 1/δ overflows for a subnormal δ), its length l = p⌈R‖u‖⌉ (0 when
// a = R‖u‖ = 0) and its samples per stage S (the printed ⌈65 ε⁻² l e^{2/p}⌉, +Inf when ε⁻²
// overflows, or samples when > 0): the run draws runs·l·S samples.
func thesisPlan(a, eps, delta float64, p, samples int) (runs, l, S float64) {
	runs = 1
	if delta < 0.25 {
		runs = math.Ceil(-8 * logmath.Log(delta))
		if math.Mod(runs, 2) == 0 {
			runs++ // odd, for the median
		}
	}
	if a == 0 {
		return runs, 0, 0
	}
	l = float64(p) * math.Ceil(a)
	S = math.Ceil(65 / (eps * eps) * l * math.Exp(2/float64(p)))
	if samples > 0 {
		S = float64(samples)
	}
	return runs, l, S
}

// runSum is the sum of f_i over the samples of one run that one block of samples drew.
type runSum struct {
	run int
	sum float64
}
