package prob

import (
	"math"

	"github.com/combpred/combpred/core/space"
)

// conditioning is the Rao–Blackwellisation of sampled marginals (conditional Monte Carlo). For
// each coordinate j it pairs the structures by an involution σ_j of Y, so that the pairs
// {y, σ_j(y)} partition Y, and replaces a sample's ψ_j(y) by its mean over the sample's pair
// under π:
//
//	h_j(y) = (π(y) ψ_j(y) + π(σ_j y) ψ_j(σ_j y)) / (π(y) + π(σ_j y)).
//
// E_π[h_j] = E_π[ψ_j] for any partition (sum over the pairs), and by the law of total variance
// Var h_j ≤ Var ψ_j: the estimator stays unbiased for exact samples (and consistent for chains)
// and its variance drops by the part of ψ_j's variance that lies within the pairs. The pairs are
// chosen so that ψ_j differs within them, ψ_j(σ_j y) = −ψ_j(y), which makes
// h_j(y) = −ψ_j(y)·tanh(Δ_j(y)/2) with Δ_j(y) = ⟨u, ψ(σ_j y) − ψ(y)⟩:
//   - permutations, pair a < b: σ exchanges the positions of a and b (every ranking is paired);
//   - directed cycles, pair a < b: σ exchanges a and b when one follows the other on the cycle
//     (p→a→b→q becomes p→b→a→q; a 3-cycle is reversed); otherwise σ(y) = y and ψ_ab(y) = 0.
//
// TestConditioningByEnumeration checks Σ_y π(y) h(y) = E_π[ψ] on every structure of small spaces.
type conditioning interface {
	// condition overwrites psi = ψ(y) with h(y), using scratch it owns (one per goroutine).
	condition(y []int64, psi []float64)
}

// newConditioning returns a constructor of conditionings for π ∝ exp(⟨u, ψ⟩) on sp (one per
// goroutine; they share the weights), or nil when sp has no pairing here. Each holds
// conditioningBytes(sp).
func newConditioning(sp space.Space, u []float64) func() conditioning {
	l, ok := sp.(space.Local)
	if !ok {
		return nil
	}
	// The move families name the encodings used here: ranks (transpositions), successor rows
	// with ψ on oriented pairs (directed cycles).
	n := sp.Width()
	switch l.LocalMoves() {
	case space.MovesTransposition:
		w := orientedWeights(n, u)
		return func() conditioning {
			return &rankConditioning{n: n, w: w, order: make([]int, n), pre: make([]float64, n*(n+1))}
		}
	case space.MovesDirectedCycle:
		w := orientedWeights(n, u)
		return func() conditioning {
			return &cycleConditioning{n: n, w: w, pred: make([]int, n)}
		}
	}
	return nil
}

// visitConditioned is visitSamplesFrom whose visit sees, unless plain, the conditional mean h(y)
// of newConditioning in place of ψ(y) on the spaces that have one: the Rao–Blackwellised terms
// of a sampled mean. Each block gets its own conditioning at its first sample, as blocks run
// concurrently.
func visitConditioned(sp space.Space, u []float64, n int, seed uint64, opt SampleOptions, par bool,
	states *chainStates, plain bool, visit func(block, i int, y []int64, psi []float64)) (SampleStats, error) {
	var newCond func() conditioning
	if !plain {
		newCond = newConditioning(sp, u)
	}
	if newCond == nil {
		return visitSamplesFrom(sp, u, n, seed, opt, par, states, visit)
	}
	conds := make([]conditioning, sampleBlocks(n, opt)) // the callers check the blocks' scratch against the budget (sampleBlockBytes)
	return visitSamplesFrom(sp, u, n, seed, opt, par, states, func(b, i int, y []int64, psi []float64) {
		if conds[b] == nil {
			conds[b] = newCond()
		}
		conds[b].condition(y, psi)
		visit(b, i, y, psi)
	})
}

// conditioningBytes is what one conditioning of newConditioning holds on sp (0 without one), for
// the memory budget's checks before anything is allocated.
func conditioningBytes(sp space.Space) int64 {
	l, ok := sp.(space.Local)
	if !ok {
		return 0
	}
	n := int64(sp.Width())
	switch l.LocalMoves() {
	case space.MovesTransposition:
		return conditioningOverhead + 8*n*(n+2) // order and prefix sums
	case space.MovesDirectedCycle:
		return conditioningOverhead + 8*n // predecessors
	}
	return 0
}

// conditioningOverhead is what a block's conditioning holds besides its slices: its slot in the
// blocks' list (an interface value) and the struct itself (80 bytes for rankConditioning, the
// larger).
const conditioningOverhead = 16 + 80

// rankConditioning pairs rankings by exchanging two labels. When a at position i precedes b at
// position j, the exchange turns "a before b", "a before c" and "c before b" for the labels c
// between them around, so with w[x·n+y] what "x before y" adds to the score,
//
//	Δ_ab = 2 (w[b][a] + Σ_c w[c][a] − Σ_c w[c][b]),
//
// and the sums over c are differences of prefix sums over positions: O(n²) per sample, the cost
// of ψ itself.
type rankConditioning struct {
	n     int
	w     []float64
	order []int     // order[position] = label
	pre   []float64 // pre[x·(n+1)+k] = Σ_{positions < k} w[order[pos]][x]
}

func (c *rankConditioning) condition(y []int64, psi []float64) {
	n, w, pre := c.n, c.w, c.pre
	for label, r := range y {
		c.order[r-1] = label
	}
	for x := 0; x < n; x++ {
		row := pre[x*(n+1) : (x+1)*(n+1)]
		row[0] = 0
		for k, lab := range c.order {
			row[k+1] = row[k] + w[lab*n+x]
		}
	}
	for i := 0; i < n; i++ {
		a := c.order[i]
		pa := pre[a*(n+1) : (a+1)*(n+1)]
		for j := i + 1; j < n; j++ {
			b := c.order[j]
			pb := pre[b*(n+1) : (b+1)*(n+1)]
			delta := 2 * (w[b*n+a] + (pa[j] - pa[i+1]) - (pb[j] - pb[i+1]))
			k := pairIndex(n, min(a, b), max(a, b))
			psi[k] = -psi[k] * math.Tanh(delta/2)
		}
	}
}

// cycleConditioning pairs directed cycles by exchanging the ends of an arc v→t of the cycle:
// p→v→t→q becomes p→t→v→q, which removes the arcs p→v, v→t, t→q and adds p→t, t→v, v→q (on a
// 3-cycle p = q and the exchange reverses it). Pairs that are not arcs have ψ = 0 in the pair
// σ(y) = y, so only the cycle's arcs change: O(n) per sample.
type cycleConditioning struct {
	n    int
	w    []float64
	pred []int
}

func (c *cycleConditioning) condition(y []int64, psi []float64) {
	n, w := c.n, c.w
	for v, t := range y {
		if t >= 0 {
			c.pred[t] = v
		}
	}
	for v, t64 := range y {
		if t64 < 0 {
			continue
		}
		t := int(t64)
		p, q := c.pred[v], int(y[t])
		delta := (w[p*n+t] + w[t*n+v] + w[v*n+q]) - (w[p*n+v] + w[v*n+t] + w[t*n+q])
		k := pairIndex(n, min(v, t), max(v, t))
		psi[k] = -psi[k] * math.Tanh(delta/2)
	}
}
