package prob

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
)

// The dispersed-start check (InferenceOptions.DispersedCheck). Every chain of a sampled estimate
// starts at the decoded mode, so chains that move but do not mix agree with each other and say
// nothing (Gelman and Rubin's point). The check runs one more chain of the same kind from a
// dispersed start, burnt in like the main chains and keeping n/4 samples that are not averaged
// into the estimate, and compares its mean of ψ with the estimate's coordinate by coordinate: the
// row disagrees when some coordinate j differs by more than max(dispersedFloor, dispersedZ·se_j),
// se_j² the sum of the two means' squared batch-means standard errors (dispersedBatches runs per
// chain; the chains' states are correlated, so the spread of the states would understate it).
//
// The start is perturb-and-MAP, the decoded mode of u + g with g_j standard Gumbel noise. A
// prototype measured other starts on the mixing audit's grid (BENCHMARKS.md, the mixing check):
// the decoded mode of −u or a uniform structure disagreed with right estimates several times as
// often, because from there a chain on a peaked π spends its burn-in climbing through structures
// far less likely than the mode, and its mean differs from a right estimate; the perturbed mode
// starts among likely structures. A diagnostic chain as long as the main chains detected fewer
// wrong estimates than a quarter as long: its longer run forgets its start.

const (
	// dispersedBatches is the number of runs of batch means per chain of the check.
	dispersedBatches = 10
	// dispersedZ scales the batch-means standard error of the difference.
	dispersedZ = 4.0
	// dispersedFloor is the smallest difference of a coordinate (ψ in [−1, 1] or [0, 1]) that
	// flags a row: in the prototype, 0.15 instead of 0.1 kept the detections at n = 100 and cut
	// the false alarms.
	dispersedFloor = 0.15
	// dispersedLengthDiv: the diagnostic chain keeps ⌊n/dispersedLengthDiv⌋ samples after the
	// main chains' burn-in, and no more than one main chain keeps (dispersedLength).
	dispersedLengthDiv = 4
	// dispersedMinLength is the shortest diagnostic chain the check runs: two states per run of
	// batch means. Shorter chains have no estimate of their noise (a run of one state, or of
	// equal states, has none), and the check fired on 95–100 % of well-mixing rows at
	// n_samples ≤ 4.
	dispersedMinLength = 2 * dispersedBatches
)

// MarginalsReportCols is the number of values per row in the chain report of
// Model.MarginalsRows and Model.SampleRows: unvouched chains, and the mixing check's verdict.
const MarginalsReportCols = 2

// batchSums accumulates ψ over the runs of batch means of the blocks (chains) of an estimate of
// n samples in nBlocks blocks (chainRange): block b's samples [lo, hi) are
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
	lo, hi := chainRange(b, s.n, s.nBlocks)
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

// mean returns the mean of ψ over the n samples.
func (s *batchSums) mean() []float64 {
	out := make([]float64, s.d)
	for k := range s.count {
		for j, x := range s.sums[k*s.d : (k+1)*s.d] {
			out[j] += x
		}
	}
	for j := range out {
		out[j] /= float64(s.n)
	}
	return out
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

// checkDispersed checks that the check can run for an estimate of n samples, and the memory of
// its runs of batch means against the budget. Its errors are the parameters' (rowlessError): rows
// that resolve "auto" to a chain each meet them.
func checkDispersed(n int, opt SampleOptions, d, concurrent int) error {
	// n_chains is internal (no Python parameter sets it): messages name it only when it was set.
	chains := ""
	if opt.Chains > 1 {
		chains = fmt.Sprintf(" with n_chains = %d", opt.Chains)
	}
	if dispersedLength(n, opt) < dispersedMinLength {
		keeps := fmt.Sprintf("n/%d", dispersedLengthDiv)
		if opt.Chains > 1 {
			keeps = fmt.Sprintf("min(n/%d, n/n_chains)", dispersedLengthDiv)
		}
		return rowlessError{fmt.Errorf("check_mixing needs n_samples ≥ %d%s (its chain keeps %s samples, at least %d), got %d",
			dispersedMinLength*max(dispersedLengthDiv, opt.Chains), chains, keeps, dispersedMinLength, n)}
	}
	if err := budget.Check(fmt.Sprintf("n_samples = %d%s, for the runs of batch means of check_mixing", n, chains),
		budget.Mul(int64(chainBlocks(n, opt)+1), int64(dispersedBatches), budget.Add(8*int64(d), 8), int64(max(1, concurrent)))); err != nil {
		return rowlessError{err}
	}
	return nil
}

// dispersedLength is the number of samples the diagnostic chain keeps for an estimate of n:
// a quarter of them, and no more than one main chain keeps, so that the check stays within the
// work bound the main chains met.
func dispersedLength(n int, opt SampleOptions) int {
	return min(n/dispersedLengthDiv, n/chainBlocks(n, opt))
}

// runDispersed runs the diagnostic chain of the check for the estimate mean (whose batch-means
// standard errors are seMain) and returns its steps and whether the row disagrees.
func runDispersed(sp space.Space, u []float64, opt InferenceOptions, seed uint64, mean, seMain []float64) (int64, bool, error) {
	d := sp.Dim()
	m := dispersedLength(opt.samples(), opt.Sampler)
	dopt := opt.Sampler
	dopt.Chains = 1
	dopt.start = startPerturbed
	diag := newBatchSums(m, 1, d)
	st, err := visitConditioned(sp, u, m, deriveSeed(seed, 0xd15e55ed), dopt, false, nil, opt.PlainMeans, func(b, i int, _ []int64, psi []float64) {
		diag.add(b, i, psi)
	})
	if err != nil {
		return 0, false, err
	}
	seDiag, diagMean := diag.se(), diag.mean()
	for j := range mean {
		if dispersedDisagree(math.Abs(diagMean[j]-mean[j]), seMain[j], seDiag[j]) {
			return st.Steps, true, nil
		}
	}
	return st.Steps, false, nil
}

// dispersedDisagree is the check's rule for one coordinate whose means differ by gap.
func dispersedDisagree(gap, seMain, seDiag float64) bool {
	return gap > max(dispersedFloor, dispersedZ*math.Hypot(seMain, seDiag))
}
