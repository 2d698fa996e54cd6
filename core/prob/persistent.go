package prob

import (
	"math"

	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// chainStates is where the chains of one row's sampled marginals stopped, carried by a sampled
// fit from one gradient to the next: persistent chains (Younes 1989; Tieleman 2008's persistent
// contrastive divergence). Between two steps of the optimiser W moves little, so a chain that
// stopped in the high-probability region of the last model starts next to that of the new one,
// and one thinning interval of burn-in replaces the full burn-in of a chain started from a
// uniform structure. The stationary distribution of every chain is that of the current W
// whatever its start, so the estimate stays consistent; what persistence trades is the
// burn-in's bias, which is small when the steps are, for time.
//
// A nil *chainStates keeps nothing: every call burns its chains in from the decoded mode.
type chainStates struct {
	y [][]int64 // per chain block; nil until that chain has run
}

// newChainStates returns empty states for chains chains (at least one) of a row.
func newChainStates(chains int) *chainStates {
	return &chainStates{y: make([][]int64, max(1, chains))}
}

// resumable reports whether each of the first blocks chains has a state to start from.
func (s *chainStates) resumable(blocks int) bool {
	if s == nil || blocks > len(s.y) {
		return false
	}
	for _, y := range s.y[:blocks] {
		if y == nil {
			return false
		}
	}
	return true
}

// keep stores the state y of chain b (copied: chains overwrite their state slices).
func (s *chainStates) keep(b int, y []int64) {
	if s == nil || b >= len(s.y) {
		return
	}
	s.y[b] = append(s.y[b][:0], y...)
}

// normTestTheta is the norm test's bound on the relative noise of a sampled gradient (Byrd,
// Chin, Nocedal & Wu 2012): while the Monte Carlo error of ĝ exceeds θ‖ĝ‖, the estimate's
// direction is mostly noise and Adam doubles the samples per row, up to its bound. Far from the
// optimum a few samples give a good direction; near it, where ‖∇J‖ → 0, the samples grow.
const normTestTheta = 0.5

// grownSamples is the doubled sample size of inf, capped at maxSamples and at what the memory
// budget allows (the current size when even one more doubling does not fit).
func grownSamples(sp space.Space, inf InferenceOptions, maxSamples int) int {
	n := min(2*inf.Samples, maxSamples)
	if checkSampleMemory(n, inf.Sampler, sampleBlockBytes(sp, inf), parallel.Threads()) != nil {
		return inf.Samples
	}
	return n
}

// newSampledGradient returns the state of a sampled fit on p: when persistent, empty chain states
// for every row; when noise is wanted (the norm test), the rows' squared norms.
func newSampledGradient(p *Problem, opt SampleOptions, persistent, noise bool) *sampledGradient {
	sg := &sampledGradient{}
	if noise {
		sg.rowNorms = p.X.SquaredNorms()
		if p.implicit && p.centre != nil { // ‖x − c‖² = ‖x‖² − 2cᵀx + ‖c‖²
			cc := floats.Dot(p.centre, p.centre)
			for i := range sg.rowNorms {
				sg.rowNorms[i] += cc - 2*p.X.Sparse.RowDot(i, p.centre)
			}
		}
		if p.intercept {
			for i := range sg.rowNorms {
				sg.rowNorms[i]++
			}
		}
	}
	if persistent && opt.Sampler != SamplerCFTP {
		sg.chains = make([]*chainStates, p.m)
		for i := range sg.chains {
			sg.chains[i] = newChainStates(opt.Chains)
		}
	}
	return sg
}

// reportReplicates is the number of independent sampled gradients whose mean and spread report
// where a sampled fit stopped.
const reportReplicates = 4

// reportGradient writes into g the mean of reportReplicates sampled gradients at W, each from
// fresh chains burnt in fully (the averaged iterate a fit returns is not where its persistent
// chains stopped), and returns the Monte Carlo standard error of that mean,
// √(Σ_r ‖ĝ_r − ḡ‖² / (R(R − 1))). Independent replicates keep it honest where batch means
// within one chain are not (see batchRuns). Both are in the coordinates of rowScales' scales
// (each gradient's rows divided by them), the coordinates in which the fit stopped.
func reportGradient(p *Problem, W *mat.Dense, inf InferenceOptions, seed uint64, scales []float64, g *mat.Dense) (float64, error) {
	rows, d := W.Dims()
	gr := mat.NewDense(rows, d, nil)
	mean, x := g.RawMatrix().Data, gr.RawMatrix().Data
	clear(mean)
	var m2 float64
	for r := 0; r < reportReplicates; r++ {
		if _, err := p.objectiveRows(W, nil, inf, deriveSeed(seed, uint64(r)), gr, nil); err != nil {
			return 0, err
		}
		scaleRows(x, scales, d, true)
		for k, v := range x { // Welford's update, summed over the coordinates
			delta := v - mean[k]
			mean[k] += delta / float64(r+1)
			m2 += delta * (v - mean[k])
		}
	}
	return math.Sqrt(m2 / float64(reportReplicates*(reportReplicates-1))), nil
}
