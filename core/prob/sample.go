package prob

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// SamplerKind chooses how samples from π ∝ exp(⟨u, ψ⟩) are drawn.
type SamplerKind int

// The samplers.
const (
	// SamplerCFTP draws independent exact samples by coupling from the past on the meta chain.
	SamplerCFTP SamplerKind = iota
	// SamplerChain runs Markov chains past a burn-in and keeps every Thin-th state: approximate
	// and correlated, but its cost does not grow like exp(f_max − f_min).
	SamplerChain
	// SamplerAuto chooses for each score vector u: CFTP when its proven bound on the expected
	// backward steps per sample, exp(F − f_min) (CFTP.MeanStepsBound), is at most
	// AutoCFTPFactor·DefaultThin(space) — about the cost of AutoCFTPFactor thinned chain samples —
	// and SamplerChain otherwise, except on the spaces with an exact sampler of scores
	// (samplerDirect).
	SamplerAuto
	// samplerDirect draws exact, independent samples by the space's own recursion
	// (space.ScoreSampling): what SamplerAuto resolves to where the space has one (hasDirectSampler).
	// It is a resolution only, never a choice given in SampleOptions.
	samplerDirect
)

// AutoCFTPFactor sets SamplerAuto's threshold (see SamplerAuto).
const AutoCFTPFactor = 16

var samplerNames = [...]string{"cftp", "chain", "auto", "direct"}

// String returns the name of the sampler.
func (k SamplerKind) String() string {
	if k >= 0 && int(k) < len(samplerNames) {
		return samplerNames[k]
	}
	return fmt.Sprintf("SamplerKind(%d)", int(k))
}

// ParseSamplerKind maps a name (cftp, chain, auto) to its SamplerKind.
func ParseSamplerKind(name string) (SamplerKind, error) {
	for i, n := range samplerNames[:samplerDirect] {
		if n == name {
			return SamplerKind(i), nil
		}
	}
	return 0, fmt.Errorf("prob: unknown sampler %q (want cftp, chain or auto)", name)
}

// DefaultChainMaxSteps is the default bound on the steps of one chain (burn-in plus thinning).
const DefaultChainMaxSteps = 1 << 30

// SampleOptions configure a sampler. The zero value draws exact samples by CFTP.
type SampleOptions struct {
	Sampler SamplerKind
	// Chain is the chain of SamplerChain (ChainAuto by default).
	Chain ChainKind
	// BurnIn is the number of chain steps before the first kept state; 0 means
	// DefaultBurnIn(space).
	BurnIn int
	// Thin is the number of chain steps between kept states; 0 means DefaultThin(space).
	Thin int
	// Chains is the number of independent chains (each started at the decoded mode of the scores
	// and burnt in) that share the samples, run in parallel; 0 means 1. A uniform start left
	// chains on peaked distributions far below the mode for good: on Permutations(20) with
	// scores ×100, every sample was e^126 times less likely than the mode, beyond what |Y| = 20!
	// structures can explain (e^42).
	Chains int
	// MaxSteps bounds the work: backward steps per sample for CFTP (0: DefaultCFTPMaxSteps), steps
	// per chain for SamplerChain (0: DefaultChainMaxSteps). Reaching it is an error.
	MaxSteps int
	// Stop, when set, ends the sampling early with ErrCancelled: checked before every CFTP sample
	// and every 1024 chain steps. It belongs to one call and is never stored in a model.
	Stop *cancel.Flag
	// start is where chains without a kept state start: the decoded mode (the default), or a
	// dispersed start for the diagnostic chain of the dispersed-start check (dispersed.go).
	start startKind
}

// openUnit maps 64 random bits to a uniform value in the open interval (0, 1), never 0 or 1:
// 52 of them, and a half, which float64 holds exactly (with 53 bits, k + ½ rounded to 2⁵³ at the
// top, and a Gumbel draw −log(−log 1) is +Inf).
func openUnit(bits uint64) float64 { return (float64(bits>>12) + 0.5) / (1 << 52) }

// eulerGamma is the mean of the standard Gumbel distribution.
const eulerGamma = 0.5772156649015329

// startKind says where a chain without a kept state starts.
type startKind int

const (
	startMode      startKind = iota // the decoded mode of u
	startPerturbed                  // the decoded mode of u + g, g_j standard Gumbel noise (centred): perturb-and-MAP
)

// DefaultThin is the default thinning of chain samplers: one step per coordinate of a structure,
// max(Dim, Width), so that between kept states every coordinate had a chance to move.
func DefaultThin(sp space.Space) int { return max(sp.Dim(), sp.Width(), 1) }

// DefaultBurnIn is the default burn-in of chain samplers, 100 DefaultThin(sp). It is a heuristic,
// not a proven mixing time (none is known for the local chains; the meta chain's is
// ln(1/ε)/ln(1/(1 − e^{f_min−f_max})), thesis theorem th:meta_coupling).
func DefaultBurnIn(sp space.Space) int { return 100 * DefaultThin(sp) }

// chainSteps returns the burn-in and thinning of o's chains on sp: o's own, or DefaultBurnIn and
// DefaultThin where they are 0.
func (o SampleOptions) chainSteps(sp space.Space) (burn, thin int) {
	burn, thin = o.BurnIn, o.Thin
	if burn == 0 {
		burn = DefaultBurnIn(sp)
	}
	if thin == 0 {
		thin = DefaultThin(sp)
	}
	return burn, thin
}

func (o SampleOptions) validate() error {
	if o.Sampler < SamplerCFTP || o.Sampler > samplerDirect { // a resolved option validates too
		return fmt.Errorf("prob: unknown sampler %d", int(o.Sampler))
	}
	if o.BurnIn < 0 || o.Thin < 0 || o.Chains < 0 || o.MaxSteps < 0 {
		return fmt.Errorf("prob: burn-in, thinning, chain count and max steps must be ≥ 0, got %d, %d, %d, %d",
			o.BurnIn, o.Thin, o.Chains, o.MaxSteps)
	}
	return nil
}

// autoSampler resolves SamplerAuto for the score vector u (see SamplerAuto); a set stop ends its
// decodes early (the caller then stops).
func autoSampler(sp space.Space, u []float64, stop *cancel.Flag) SamplerKind {
	if hasDirectSampler(sp, u) {
		return samplerDirect
	}
	cf, err := newCFTP(sp, u, 0, stop)
	if err == nil && cf.MeanStepsBound() <= float64(AutoCFTPFactor*DefaultThin(sp)) {
		return SamplerCFTP
	}
	return SamplerChain
}

// hasDirectSampler reports whether SamplerAuto resolves to samplerDirect for u: sp has an exact
// sampler of scores and its recursion is exact at the scale of u (a sum of scores loses about
// ‖u‖₁·2⁻⁵², space.ScaleExactPartition: beyond exactScoreLimit, as for exact marginals). The
// memory of its tables is checked when they are built, with an error rather than another sampler,
// so that the samples of a seed do not depend on the number of threads.
func hasDirectSampler(sp space.Space, u []float64) bool {
	if _, ok := space.ScoreSamplingOf(sp); !ok {
		return false
	}
	_, scaleExact := sp.(space.ScaleExactPartition)
	return scaleExact || l1Norm(u) <= exactScoreLimit
}

// resolveSampler checks the scores u and replaces SamplerAuto in opt by the sampler it stands for.
func resolveSampler(sp space.Space, u []float64, opt SampleOptions) (SampleOptions, error) {
	if err := checkScores(sp, u); err != nil {
		return opt, err
	}
	if opt.Sampler == SamplerAuto || (opt.Sampler == samplerDirect && !hasDirectSampler(sp, u)) {
		opt.Sampler = autoSampler(sp, u, opt.Stop) // samplerDirect resolved for other scores, or given
		// a stop during autoSampler's decodes left it choosing a chain: the caller's checks of
		// that chain would then report their own errors instead of the interrupt (review)
		if err := opt.Stop.Err(); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// chainBlocks is the number of chains (blocks) among which SamplerChain shares n samples.
func chainBlocks(n int, opt SampleOptions) int { return min(max(1, opt.Chains), n) }

// chainRange is the range [lo, hi) of the n samples that chain b of nBlocks draws.
func chainRange(b, n, nBlocks int) (lo, hi int) { return b * n / nBlocks, (b + 1) * n / nBlocks }

// SampleStats reports the work of a sampler.
type SampleStats struct {
	Samples int   // samples drawn
	Steps   int64 // Markov steps: CFTP backward steps, or chain transitions
	Exact   bool  // the samples are exact and independent (CFTP)
	// Unvouched counts the Metropolis chains (uniform proposals) that never left their start
	// and made too few proposals to show that it holds nearly all the mass (MetaChain.vouched):
	// their samples are that one structure, whatever π is (and sampled marginals rest on it, with
	// its pair exchanges where the space conditions).
	Unvouched int
}

// cftpBlock is the number of CFTP samples a worker draws in a row; blocks are the unit of
// parallelism and of deterministic summation.
const cftpBlock = 64

// sampleBlocks bounds the number of blocks visitSamples splits n samples into: CFTP blocks of
// cftpBlock samples, or one block per chain.
func sampleBlocks(n int, opt SampleOptions) int64 {
	return budget.Add(int64(n)/cftpBlock+1, int64(max(1, opt.Chains)))
}

// checkSampleMemory checks against the memory budget what a sampled estimate over n samples holds
// per block (visitSamples' error and step count, and perBlock bytes of the caller's own) when
// concurrent estimates run at once. n is the n_samples of the Python API, the chains its n_chains.
func checkSampleMemory(n int, opt SampleOptions, perBlock int64, concurrent int) error {
	return budget.Check(fmt.Sprintf("n_samples = %d (with n_chains = %d), for the sampler's per-block sums", n, max(1, opt.Chains)),
		budget.Mul(sampleBlocks(n, opt), budget.Add(perBlock, 24), int64(max(1, concurrent))))
}

// Sample draws n structures from π ∝ exp(⟨u, ψ⟩) on sp into out (n × Width(), row-major),
// determined by seed (and not by the number of threads).
func Sample(sp space.Space, u []float64, n int, seed uint64, opt SampleOptions, out []int64) (SampleStats, error) {
	if n < 1 {
		return SampleStats{}, fmt.Errorf("prob: the number of samples must be ≥ 1, got %d", n)
	}
	w := sp.Width()
	if len(out) != n*w {
		return SampleStats{}, fmt.Errorf("prob: the output holds %d values, want %d samples × %d", len(out), n, w)
	}
	if err := checkSampleMemory(n, opt, 0, 1); err != nil {
		return SampleStats{}, err
	}
	return visitSamples(sp, u, n, seed, opt, true, func(_, i int, y []int64, _ []float64) {
		copy(out[i*w:(i+1)*w], y)
	})
}

// visitSamples draws n samples and calls visit(block, i, y, ψ(y)) for sample i. Samples are drawn
// in blocks (CFTP: runs of cftpBlock samples; chains: one block per chain), concurrently when
// par is set; visit may only write to state owned by sample i or by its block. y and ψ are
// scratch, valid during the call. Undirected cycles are passed in canonical orientation. When a
// block fails the others stop early and one failing block's error is returned.
func visitSamples(sp space.Space, u []float64, n int, seed uint64, opt SampleOptions, par bool,
	visit func(block, i int, y []int64, psi []float64)) (SampleStats, error) {
	return visitSamplesFrom(sp, u, n, seed, opt, par, nil, visit)
}

// visitSamplesFrom is visitSamples whose chains, when states is not nil, start where the same
// chains of states stopped at the previous call (persistent chains) and leave their last state
// there: a chain with a stored state is burnt in for one thinning interval only. CFTP ignores
// states.
func visitSamplesFrom(sp space.Space, u []float64, n int, seed uint64, opt SampleOptions, par bool,
	states *chainStates, visit func(block, i int, y []int64, psi []float64)) (SampleStats, error) {
	if err := opt.validate(); err != nil {
		return SampleStats{}, err
	}
	if n < 1 {
		return SampleStats{}, fmt.Errorf("prob: the number of samples must be ≥ 1, got %d", n)
	}
	opt, err := resolveSampler(sp, u, opt)
	if err != nil {
		return SampleStats{}, err
	}
	canon, _ := sp.(space.Canonical) // undirected cycles: one orientation
	w, d := sp.Width(), sp.Dim()
	var nBlocks int
	resume := false // every chain starts from its state in states
	var blockRange func(b int) (lo, hi int)
	var direct space.ScoreSampler
	if opt.Sampler == samplerDirect {
		concurrent := int64(1) // one sampler serves every block; unparallel calls run one per row
		if !par {
			concurrent = int64(parallel.Threads())
		}
		if err := budget.Check(fmt.Sprintf("exact sampling on the %s space %v (its tables; sampler=\"mixed\" or "+
			"\"metropolis\" sample approximately without them)", sp.Kind(), sp.Params()),
			budget.Mul(closedFormBytes(sp), concurrent)); err != nil {
			return SampleStats{}, rowlessError{err} // every row meets it: which one first is the threads' timing
		}
		ss, _ := space.ScoreSamplingOf(sp)
		direct = ss.ScoreSampler(u)
	}
	if opt.Sampler == SamplerCFTP || opt.Sampler == samplerDirect {
		nBlocks = (n + cftpBlock - 1) / cftpBlock
		blockRange = func(b int) (int, int) { return b * cftpBlock, min(n, (b+1)*cftpBlock) }
	} else {
		nBlocks = chainBlocks(n, opt)
		blockRange = func(b int) (int, int) { return chainRange(b, n, nBlocks) }
		burn, thin := opt.chainSteps(sp)
		if resume = states.resumable(nBlocks); resume {
			burn = thin
		}
		opt.BurnIn, opt.Thin = burn, thin
		limit := opt.MaxSteps
		if limit == 0 {
			limit = DefaultChainMaxSteps
		}
		per := (n + nBlocks - 1) / nBlocks
		if need := float64(burn) + float64(per-1)*float64(thin); need > float64(limit) {
			return SampleStats{}, fmt.Errorf("%w: a chain would take %.0f steps (burn-in %d + %d samples × thinning %d), above the bound %d",
				ErrWorkBound, need, burn, per, thin, limit)
		}
	}
	errs := make([]error, nBlocks)
	steps := make([]int64, nBlocks)
	unvouched := make([]bool, nBlocks)
	var failed atomic.Bool // a block failed: the others stop early
	body := func(blo, bhi int) {
		y := make([]int64, w)
		psi := make([]float64, d)
		var cf *CFTP
		var drawPCG *rand.PCG // the direct sampler's generator, reseeded per sample
		var drawRand *rand.Rand
		for b := blo; b < bhi; b++ {
			lo, hi := blockRange(b)
			if opt.Sampler == samplerDirect { // sample i draws from its own seed: threads do not matter
				if drawRand == nil {
					drawPCG = rand.NewPCG(0, 0)
					drawRand = rand.New(drawPCG)
				}
				for i := lo; i < hi; i++ {
					if failed.Load() || opt.Stop.Stopped() {
						return
					}
					reseed(drawPCG, seed, uint64(i))
					direct.Draw(drawRand, y)
					sp.Embed(y, psi)
					visit(b, i, y, psi)
				}
				continue
			}
			if opt.Sampler == SamplerCFTP {
				if cf == nil {
					var err error
					if cf, err = newCFTP(sp, u, opt.MaxSteps, opt.Stop); err != nil {
						errs[b] = err
						return
					}
				}
				for i := lo; i < hi; i++ {
					if failed.Load() || opt.Stop.Stopped() {
						return
					}
					t, err := cf.SampleSeed(deriveSeed(seed, uint64(i)), y)
					steps[b] += int64(t)
					if err != nil {
						errs[b] = fmt.Errorf("sample %d: %w", i, err)
						failed.Store(true)
						return
					}
					if canon != nil {
						canon.Canonicalize(y)
					}
					sp.Embed(y, psi)
					visit(b, i, y, psi)
				}
				continue
			}
			r := newRand(seed, uint64(b))
			start := y // a chain without a kept state starts at the decoded mode (nil) or at a dispersed start
			switch {
			case resume:
				copy(y, states.y[b])
			case opt.start == startPerturbed:
				pert := make([]float64, len(u))
				for j, x := range u {
					pert[j] = x - logmath.Log(-logmath.Log(openUnit(r.Uint64()))) - eulerGamma
				}
				space.DecodeUntil(sp, pert, y, opt.Stop)
			default:
				start = nil
			}
			c, err := newChain(sp, u, opt.Chain, start, opt.Stop)
			if err != nil {
				errs[b] = err
				return
			}
			for i := lo; i < hi; i++ {
				k := opt.Thin
				if i == lo {
					k = opt.BurnIn
				}
				for j := 0; j < k; j++ {
					if j&1023 == 0 && opt.Stop.Stopped() {
						return
					}
					c.Step(r)
				}
				steps[b] += int64(k)
				copy(y, c.State())
				if canon != nil {
					canon.Canonicalize(y)
				}
				sp.Embed(y, psi)
				visit(b, i, y, psi)
			}
			states.keep(b, c.State())
			if mc, ok := c.(*MetaChain); ok && !mc.vouched(steps[b]) {
				unvouched[b] = true
			}
		}
	}
	if par {
		parallel.For(nBlocks, 1, body)
	} else {
		body(0, nBlocks)
	}
	st := SampleStats{Samples: n, Exact: opt.Sampler == SamplerCFTP || opt.Sampler == samplerDirect}
	if err := opt.Stop.Err(); err != nil {
		return st, err
	}
	for b := range steps {
		st.Steps += steps[b]
		if unvouched[b] {
			st.Unvouched++
		}
		if errs[b] != nil {
			return st, errs[b]
		}
	}
	return st, nil
}
