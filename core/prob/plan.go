package prob

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/space"
)

// Plan describes in one sentence how Fit computes E[ψ] with opt on m examples of sp, so that a
// verbose fit says up front what an iteration costs: exact inference (and how), or the sampler,
// its samples per input and gradient, and for a Markov chain its burn-in, thinning and the Markov
// steps of the first and of each later gradient (persistent chains resume with one thinning
// interval). A sampled fit on a large space spent a minute in its first iteration with nothing
// printed.
func Plan(sp space.Space, m int, opt Options) string {
	inf := opt.Inference
	if inf.exact(sp) {
		how := "by the space's closed form or dynamic programme"
		if !HasClosedForm(sp) {
			how = fmt.Sprintf("by summing over its %.0f structures", math.Exp(sp.LogCount()))
		}
		solver := "L-BFGS"
		switch {
		case opt.Solver == SolverAdam:
			solver = "Adam"
		case separable(sp, inf) && separableFits:
			solver = "one L-BFGS per label"
		}
		return fmt.Sprintf("exact inference (E[ψ | x] %s), %s", how, solver)
	}
	n := inf.samples()
	s := inf.Sampler
	head := fmt.Sprintf("sampled inference, Adam: %d samples per input and gradient", n)
	if _, direct := space.ScoreSamplingOf(sp); direct && s.Sampler == SamplerAuto {
		return head + " drawn exactly by the space's own recursion (independent samples; CFTP or a chain only for " +
			"inputs whose scores are beyond its precision)"
	}
	if s.Sampler == SamplerCFTP {
		return head + " by CFTP (exact; a sample's cost grows as exp(f_max − f_min) with the scores)"
	}
	burn, thin := s.chainSteps(sp)
	chain := map[ChainKind]string{ChainMeta: "the Metropolis chain", ChainLocal: "the local chain", ChainMixed: "the mixed chain"}[resolveChain(sp, s.Chain)]
	if s.Sampler == SamplerAuto {
		chain = "exact CFTP samples where their proven cost is small, else " + chain
	}
	rows := m
	resume := fmt.Sprintf("resumes at the next gradient with %d", thin)
	if opt.BatchSize > 0 && opt.BatchSize < m {
		rows = opt.BatchSize
		resume = fmt.Sprintf("resumes with %d once its input has been sampled", thin)
	}
	c := min(max(1, s.Chains), n) // each of an input's chains burns in
	first := float64(rows) * (float64(c)*float64(burn) + float64(n-c)*float64(thin))
	later := float64(rows) * float64(n) * float64(thin)
	if opt.FreshChains {
		resume, later = "starts afresh at every gradient", first
	}
	return fmt.Sprintf("%s (%s); a chain burns in %d steps, then %d per sample, and %s: the chains take about "+
		"%.3g Markov steps in the first gradient and %.3g in each later one, over %d inputs",
		head, chain, burn, thin, resume, first, later, rows)
}
