package prob

import (
	"errors"
	"fmt"
	"github.com/combpred/combpred/core/budget"
	"math"

	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// InferenceMethod chooses how E[ψ] (and log Z, when needed) are obtained.
type InferenceMethod int

// The inference methods.
const (
	// InferAuto is InferExact when the space has a closed form or at most AutoBruteForceMax
	// structures, InferSampled otherwise.
	InferAuto InferenceMethod = iota
	// InferExact uses closed forms or enumeration; it fails on spaces without them.
	InferExact
	// InferSampled averages ψ over samples.
	InferSampled
)

var inferNames = [...]string{"auto", "exact", "sampled"}

// String returns the name of the method.
func (m InferenceMethod) String() string {
	if m >= 0 && int(m) < len(inferNames) {
		return inferNames[m]
	}
	return fmt.Sprintf("InferenceMethod(%d)", int(m))
}

// ParseInferenceMethod maps a name (auto, exact, sampled) to its InferenceMethod.
func ParseInferenceMethod(name string) (InferenceMethod, error) {
	for i, n := range inferNames {
		if n == name {
			return InferenceMethod(i), nil
		}
	}
	return 0, fmt.Errorf("prob: unknown inference method %q (want auto, exact or sampled)", name)
}

// DefaultSamples is the default number of samples per row of sampled inference.
const DefaultSamples = 100

// InferenceOptions configure how marginals are computed.
type InferenceOptions struct {
	Method InferenceMethod
	// Samples is the number of samples per row for sampled marginals; 0 means DefaultSamples.
	Samples int
	// Sampler draws the samples (default: exact, CFTP).
	Sampler SampleOptions
	// PlainMeans averages ψ over the samples as drawn. By default permutations and directed
	// cycles average its conditional expectation within pairs of structures instead (see
	// conditioning): the same mean, with less variance.
	PlainMeans bool
	// DispersedCheck runs, for chain samplers (not CFTP, not a sampled fit's persistent
	// chains), one diagnostic chain from a dispersed start whose samples are not averaged into
	// the estimate, and reports in MarginalsInfo.Disagrees whether its mean of ψ differs from the
	// estimate beyond Monte Carlo noise (dispersed.go).
	DispersedCheck bool
}

func (o InferenceOptions) validate() error {
	if o.Method < InferAuto || o.Method > InferSampled {
		return fmt.Errorf("prob: unknown inference method %d", int(o.Method))
	}
	if o.Samples < 0 {
		return fmt.Errorf("prob: the number of samples must be ≥ 1 (or 0 for the default %d), got %d", DefaultSamples, o.Samples)
	}
	return o.Sampler.validate()
}

// samples is the number of samples of a sampled estimate: Samples, or DefaultSamples when 0.
func (o InferenceOptions) samples() int {
	if o.Samples == 0 {
		return DefaultSamples
	}
	return o.Samples
}

// exact reports whether o resolves to exact inference on sp.
func (o InferenceOptions) exact(sp space.Space) bool {
	return o.Method == InferExact || (o.Method == InferAuto && autoExact(sp))
}

// MarginalsInfo says how marginals were obtained.
type MarginalsInfo struct {
	Exact   bool
	LogZ    float64 // log Z(u) when exact, NaN otherwise
	Samples int     // samples averaged (sampled)
	Steps   int64   // Markov steps spent (sampled)
	// Unvouched counts chains that cannot stand for π (SampleStats.Unvouched).
	Unvouched int
	// Checked says that the dispersed-start check ran (InferenceOptions.DispersedCheck on a
	// chain sampler), Disagrees that its diagnostic chain's mean of ψ differed from the estimate
	// beyond the check's tolerance: the chains did not mix. CheckSteps are the diagnostic chain's
	// steps (not in Steps).
	Checked, Disagrees bool
	CheckSteps         int64
}

// Marginals writes E_π[ψ] for π ∝ exp(⟨u, ψ⟩) on sp into mean (length Dim()): exactly when opt
// resolves to exact inference, otherwise as the mean of ψ over opt.Samples samples determined by
// seed. The mean of ψ over samples is an unbiased estimate when the samples are exact (CFTP).
func Marginals(sp space.Space, u []float64, opt InferenceOptions, seed uint64, mean []float64) (MarginalsInfo, error) {
	return marginals(sp, u, opt, seed, mean, true)
}

func marginals(sp space.Space, u []float64, opt InferenceOptions, seed uint64, mean []float64, par bool) (MarginalsInfo, error) {
	return marginalsFrom(sp, u, opt, seed, mean, par, nil)
}

// rowSampling is what a sampled fit passes to marginalsFrom for one row: the row's persistent
// chains, and whether it wants the estimate's Monte Carlo variance back.
type rowSampling struct {
	chains   *chainStates
	variance bool // estimate trCov
	// trCov is set, when variance is, to an estimate of tr Cov(mean) by batch means: the n
	// samples, in the order drawn, are cut into B = batchCount(n) runs, and
	// Σ_a Σ_k (m_ka − mean_a)² / (B(B − 1)) over the runs' means m_k. For exact samples it is
	// unbiased; for a chain's correlated states it is low (see batchRuns), less so than
	// Σ_a s_a²/n, which treats the states as independent.
	trCov float64
}

// batchRuns is the number of runs of batch means. Few long runs suit correlated chains: on
// Permutations(5) with the default thinning, 3 runs estimated 60–97 % of the spread of the mean
// over seeds where ⌊√n⌋ runs estimated 52–86 % (local and meta chains, 20 and 100 samples); for
// exact samples every count is unbiased.
const batchRuns = 3

// batchCount is the number of runs of batch means for n samples (each sample its own run below
// batchRuns).
func batchCount(n int) int { return min(n, batchRuns) }

// sampleBlockBytes is what each block of a sampled estimate of E[ψ] holds: its sums of ψ and,
// unless opt asks for plain means, its conditioning scratch.
func sampleBlockBytes(sp space.Space, opt InferenceOptions) int64 {
	b := 8 * int64(sp.Dim())
	if !opt.PlainMeans {
		b += conditioningBytes(sp)
	}
	return b
}

// marginalsFrom is marginals with a sampled fit's per-row state (rs may be nil). With rs, the
// samples are drawn in one goroutine (par must be false): the runs' sums are shared by blocks.
func marginalsFrom(sp space.Space, u []float64, opt InferenceOptions, seed uint64, mean []float64, par bool, rs *rowSampling) (MarginalsInfo, error) {
	if err := opt.validate(); err != nil {
		return MarginalsInfo{}, err
	}
	if len(mean) != sp.Dim() {
		return MarginalsInfo{}, fmt.Errorf("prob: the marginals buffer has length %d, want %d", len(mean), sp.Dim())
	}
	if opt.exact(sp) {
		lz, err := exactMarginals(sp, u, mean, opt.Sampler.Stop)
		return MarginalsInfo{Exact: true, LogZ: lz}, err
	}
	n := opt.samples()
	d := sp.Dim()
	check := opt.DispersedCheck && rs == nil
	if check {
		var err error
		if opt.Sampler, err = resolveSampler(sp, u, opt.Sampler); err != nil {
			return MarginalsInfo{}, err
		}
		check = opt.Sampler.Sampler == SamplerChain
	}
	// Unparallel calls run one per row, Threads() at a time (Model.Marginals, the fit's objective).
	concurrent := 1
	if !par {
		concurrent = parallel.Threads()
	}
	var chains *chainStates
	var runs []float64 // the sums of ψ over each run of batch means, B×d
	nRuns := 0
	if rs != nil {
		if par {
			return MarginalsInfo{}, errors.New("prob: a sampled fit's marginals are drawn in one goroutine")
		}
		chains = rs.chains
		if rs.variance {
			nRuns = batchCount(n)
		}
	}
	// Every block's sums and conditioning scratch are checked before any is allocated: a refusal
	// after the sums (gigabytes at n_samples = 2³¹) left them to the garbage collector.
	if err := checkSampleMemory(n, opt.Sampler, sampleBlockBytes(sp, opt), concurrent); err != nil {
		return MarginalsInfo{}, err
	}
	if nRuns > 0 {
		if err := budget.Check(fmt.Sprintf("n_samples = %d, for the %d runs of batch means", n, nRuns),
			budget.Mul(int64(nRuns), int64(d), 8, int64(concurrent))); err != nil {
			return MarginalsInfo{}, err
		}
		runs = make([]float64, nRuns*d)
	}
	var mainRuns *batchSums // the estimate's runs of batch means for the dispersed-start check
	if check {
		if err := checkDispersed(n, opt.Sampler, d, concurrent); err != nil {
			return MarginalsInfo{}, err
		}
		mainRuns = newBatchSums(n, chainBlocks(n, opt.Sampler), d)
	}
	runSize := make([]int, nRuns)
	nb := int(sampleBlocks(n, opt.Sampler)) // within the budget checked above
	acc := make([]float64, nb*d)            // per block, summed in block order: deterministic
	st, err := visitConditioned(sp, u, n, seed, opt.Sampler, par, chains, opt.PlainMeans, func(b, i int, _ []int64, psi []float64) {
		row := acc[b*d : (b+1)*d]
		for j, x := range psi {
			row[j] += x
		}
		if mainRuns != nil {
			mainRuns.add(b, i, psi)
		}
		if runs != nil {
			k := i * nRuns / n
			runSize[k]++
			run := runs[k*d : (k+1)*d]
			for j, x := range psi {
				run[j] += x
			}
		}
	})
	info := MarginalsInfo{LogZ: math.NaN(), Samples: st.Samples, Steps: st.Steps, Unvouched: st.Unvouched}
	if err != nil {
		return info, err
	}
	clear(mean)
	for b := 0; b < nb; b++ {
		for j := range mean {
			mean[j] += acc[b*d+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	if check {
		steps, disagrees, err := runDispersed(sp, u, opt, seed, mean, mainRuns.se())
		if err != nil {
			return info, err
		}
		info.Checked, info.Disagrees, info.CheckSteps = true, disagrees, steps
	}
	if nRuns > 0 {
		rs.trCov = math.Inf(1) // one sample says nothing of its spread
		if nRuns >= 2 {
			var v float64
			for k := 0; k < nRuns; k++ {
				size := float64(runSize[k])
				for j, mu := range mean {
					dev := runs[k*d+j]/size - mu
					v += dev * dev
				}
			}
			rs.trCov = v / float64(nRuns*(nRuns-1))
		}
	}
	return info, nil
}
