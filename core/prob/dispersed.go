package prob

import (
	"math"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
)

// The dispersed-start check (InferenceOptions.DispersedCheck). Every chain of a sampled estimate
// starts at the decoded mode, so chains that move but do not mix agree with each other and say
// nothing (Gelman and Rubin's point). The check runs one more chain of the same kind from a
// dispersed start, burnt in like the main chains and keeping ⌈n/4⌉ samples that are not averaged
// into the estimate, and compares its mean of ψ with the estimate's coordinate by coordinate: the
// row disagrees when some coordinate j differs by more than max(dispersedFloor, dispersedZ·se_j),
// se_j² the sum of the two means' squared batch-means standard errors (dispersedBatches runs per
// chain; the chains' states are correlated, so the spread of the states would understate it).
//
// The start is perturb-and-MAP, the decoded mode of u + g with g_j standard Gumbel noise: on the
// audit's grid (13 spaces × the chain samplers × scores ×0.1…×10, 4 rows, 3 seeds; BENCHMARKS.md,
// the mixing check, has the tables) the decoded mode of −u and a uniform structure disagreed on 3.3–3.6 %
// of the rows whose estimate was within 0.05 of the exact marginals at n = 2,000 (13–15 % at
// n = 100): from there a chain on a peaked π spends its burn-in climbing through structures
// e^{-100} less likely than the mode on Permutations(16), and its mean differs from a right
// estimate. The perturbed mode starts among likely structures and disagreed on 1.1 % (3.4 %), and
// it detected as many wrong rows (44 % of those off by more than 0.1 at n = 2,000; 30 % at 100,
// 67 % of those still off at 2,000). A diagnostic chain as long as the main chains detected fewer
// (38 %, 23 %): its longer run forgets its start.

const (
	// dispersedBatches is the number of runs of batch means per chain of the check.
	dispersedBatches = 10
	// dispersedZ scales the batch-means standard error of the difference.
	dispersedZ = 4.0
	// dispersedFloor is the smallest difference of a coordinate (ψ in [−1, 1] or [0, 1]) that
	// flags a row: at n = 100, 0.15 instead of 0.1 kept the detections and cut the false alarms
	// from 4.3 % to 3.4 %.
	dispersedFloor = 0.15
	// dispersedLengthDiv: the diagnostic chain keeps ⌈n/dispersedLengthDiv⌉ samples after the
	// main chains' burn-in.
	dispersedLengthDiv = 4
)

// dispersedStats are the measurements of the check on one row.
type dispersedStats struct {
	mean           []float64 // the diagnostic chain's mean of ψ
	seMain, seDiag []float64 // batch-means standard errors of the two means, per coordinate
	steps          int64     // the diagnostic chain's steps
}

// batchSums accumulates ψ over the runs of batch means of the blocks (chains) of an estimate of
// n samples in nBlocks blocks (blockRange of visitSamplesFrom): block b's samples [lo, hi) are
// cut into dispersedBatches runs. Each block writes only its own runs.
type batchSums struct {
	n, nBlocks, d int
	sums          []float64
	count         []int
	sumSq         []float64 // Σ ψ_j² over all samples, for the floor of se
}

func newBatchSums(n, nBlocks, d int) *batchSums {
	return &batchSums{n: n, nBlocks: nBlocks, d: d, sums: make([]float64, nBlocks*dispersedBatches*d),
		count: make([]int, nBlocks*dispersedBatches), sumSq: make([]float64, d)}
}

func (s *batchSums) add(b, i int, psi []float64) {
	lo, hi := b*s.n/s.nBlocks, (b+1)*s.n/s.nBlocks
	k := b*dispersedBatches + (i-lo)*dispersedBatches/(hi-lo)
	s.count[k]++
	row := s.sums[k*s.d : (k+1)*s.d]
	for j, x := range psi {
		row[j] += x
	}
	if s.nBlocks == 1 { // blocks run concurrently: only a single block keeps the squares
		for j, x := range psi {
			s.sumSq[j] += x * x
		}
	}
}

// se returns, per coordinate, the standard error of the overall mean by batch means: the sample
// standard deviation of the non-empty runs' means over √(runs), but at least sd_j/√n, the
// standard error of n independent states (single-block sums only): ten runs of a few states each
// understate the spread of a slowly moving chain's mean, and fell below sd_j/√n on Multilabel(5)
// with the local chain. One run says nothing: +Inf.
func (s *batchSums) se() []float64 {
	out := make([]float64, s.d)
	runs := 0
	for _, c := range s.count {
		if c > 0 {
			runs++
		}
	}
	if runs < 2 {
		for j := range out {
			out[j] = math.Inf(1)
		}
		return out
	}
	for j := range out {
		var m float64
		for k, c := range s.count {
			if c > 0 {
				m += s.sums[k*s.d+j] / float64(c)
			}
		}
		m /= float64(runs)
		var v float64
		for k, c := range s.count {
			if c > 0 {
				dev := s.sums[k*s.d+j]/float64(c) - m
				v += dev * dev
			}
		}
		out[j] = math.Sqrt(v / float64(runs-1) / float64(runs))
		if s.nBlocks == 1 && s.n > 1 {
			mu := 0.0
			for k := range s.count {
				mu += s.sums[k*s.d+j]
			}
			mu /= float64(s.n)
			sd2 := max(0, s.sumSq[j]/float64(s.n)-mu*mu) * float64(s.n) / float64(s.n-1)
			out[j] = max(out[j], math.Sqrt(sd2/float64(s.n)))
		}
	}
	return out
}

// chainBlocks is the number of chains (blocks) visitSamplesFrom runs for n samples.
func chainBlocks(n int, opt SampleOptions) int { return min(max(1, opt.Chains), n) }

// checkDispersedMemory checks the runs of batch means of the check against the memory budget.
func checkDispersedMemory(n int, opt SampleOptions, d, concurrent int) error {
	return budget.Check("the runs of batch means of the dispersed-start check",
		budget.Mul(int64(chainBlocks(n, opt)+1), int64(dispersedBatches), budget.Add(8*int64(d), 8), int64(max(1, concurrent))))
}

// dispersedLength is the number of samples the diagnostic chain keeps for an estimate of n.
func dispersedLength(n int) int { return (n + dispersedLengthDiv - 1) / dispersedLengthDiv }

// runDispersed runs the diagnostic chain of the check for the estimate mean (whose batch-means
// standard errors are seMain) and returns its measurements and whether the row disagrees.
func runDispersed(sp space.Space, u []float64, opt InferenceOptions, seed uint64, mean, seMain []float64) (*dispersedStats, bool, error) {
	d := sp.Dim()
	m := dispersedLength(opt.samples())
	dopt := opt.Sampler
	dopt.Chains = 1
	dopt.start = startPerturbed
	var cond conditioning
	if !opt.PlainMeans {
		if nc := newConditioning(sp, u); nc != nil {
			cond = nc()
		}
	}
	diag := newBatchSums(m, 1, d)
	st, err := visitSamplesFrom(sp, u, m, deriveSeed(seed, 0xd15e55ed), dopt, false, nil, func(b, i int, y []int64, psi []float64) {
		if cond != nil {
			cond.condition(y, psi)
		}
		diag.add(b, i, psi)
	})
	if err != nil {
		return nil, false, err
	}
	ds := &dispersedStats{mean: make([]float64, d), seMain: seMain, seDiag: diag.se(), steps: st.Steps}
	for k := range diag.count {
		for j := range ds.mean {
			ds.mean[j] += diag.sums[k*d+j]
		}
	}
	disagrees := false
	for j := range ds.mean {
		ds.mean[j] /= float64(m)
		if dispersedDisagree(math.Abs(ds.mean[j]-mean[j]), ds.seMain[j], ds.seDiag[j]) {
			disagrees = true
		}
	}
	return ds, disagrees, nil
}

// dispersedDisagree is the check's rule for one coordinate whose means differ by gap.
func dispersedDisagree(gap, seMain, seDiag float64) bool {
	se := math.Hypot(seMain, seDiag)
	if math.IsInf(se, 1) { // one run: no estimate of the noise, the floor decides
		se = 0
	}
	return gap > max(dispersedFloor, dispersedZ*se)
}
