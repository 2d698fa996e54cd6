package prob

import (
	"math/rand/v2"

	"github.com/combpred/combpred/core/space"
)

// TranspositionChain is the adjacent-transposition chain on rankings. A step picks k uniformly in
// [0, n): for k < n−1 it proposes swapping the labels at positions k and k+1 and accepts with
// probability min(1, π(σ')/π(σ)); k = n−1 is a hold.
//
// The proposal is symmetric (the swap at k undoes itself and has probability 1/n from both
// sides), so detailed balance holds; adjacent transpositions generate the symmetric group
// (irreducible); the hold of probability 1/n makes the chain aperiodic (without it a chain at
// u = 0 would alternate between even and odd permutations). A swap changes only the coordinate
// of the two labels: ψ_ab flips sign, an O(1) update.
type TranspositionChain struct {
	sc    *scorer
	n     int
	w     []float64 // w[a·n+b]: score of a ranked before b
	y     []int64   // ranks, 1-based: y[label] = position + 1
	order []int     // order[position] = label
	f     float64
	moves int
}

func newTranspositionChain(sp space.Space, u []float64) *TranspositionChain {
	n := sp.Width()
	return &TranspositionChain{sc: newScorer(sp, u), n: n, w: orientedWeights(n, u),
		y: make([]int64, n), order: make([]int, n)}
}

// Step makes one transition.
func (c *TranspositionChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *TranspositionChain) step(src source) {
	n := c.n
	k := src.IntN(n)
	if k == n-1 {
		return
	}
	a, b := c.order[k], c.order[k+1]
	delta := c.w[b*n+a] - c.w[a*n+b]
	if !src.Accept(delta) {
		return
	}
	c.order[k], c.order[k+1] = b, a
	c.y[b], c.y[a] = int64(k+1), int64(k+2)
	c.f += delta
	if c.moves++; c.moves%resyncEvery == 0 {
		c.f = c.sc.score(c.y)
	}
}

// State returns the current ranking (row of ranks).
func (c *TranspositionChain) State() []int64 { return c.y }

// SetState moves the chain to the ranking y.
func (c *TranspositionChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *TranspositionChain) Score() float64 { return c.f }

func (c *TranspositionChain) load(y []int64, f float64) {
	copy(c.y, y)
	for label, r := range y {
		c.order[r-1] = label
	}
	c.f = f
}
