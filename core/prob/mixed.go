package prob

import (
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/space"
)

// MixedChain interleaves a local chain with the meta chain's global proposals: each step is a
// uniform proposal z accepted with probability min(1, π(z)/π(y)) with probability 1/global, and a
// step of the local chain otherwise. Both kernels are reversible with respect to π and the choice
// does not depend on the state, so the mixture is reversible. Global proposals move far at low
// ‖u‖, where they are accepted often; local moves keep moving at high ‖u‖, where global proposals
// are rejected.
//
// The weights balance the two kinds' time, not their counts (proposalCost): with one proposal in
// two, as before, proposals took up to 99 % of a chain's time on 40–100 labels, and at ‖u‖ = 8 on
// 40 labels the chain gave 29× fewer effective samples per second than the local chain alone.
type MixedChain struct {
	local  localChain
	sc     *scorer
	z      []int64
	global int // a step is a uniform proposal with probability 1/global
}

func newMixedChain(sp space.Space, u []float64, local localChain) *MixedChain {
	global := 1 + max(1, int(math.Round(proposalCost(sp))))
	return &MixedChain{local: local, sc: newScorer(sp, u), z: make([]int64, sp.Width()), global: global}
}

// proposalCost is the time of a uniform proposal (drawing a structure and scoring it) in local
// moves (O(1) each), as measured on a 2-core Intel Xeon (session 48): a ranking's score sums its
// n(n − 1)/2 pair signs, d/25 moves (2.1 at 6 labels, 34 at 40, 188 at 100); a cycle's its n arcs,
// w/4 (3.4 at 10 vertices, 8–11 at 40); a 0/1 row's its d entries, w/14 (3.5 at 40 labels, 72 at
// 1000). Making a proposal one step in 1 + proposalCost gives them about half of the chain's
// time; on small spaces, where a proposal costs one or two moves, one step in two.
func proposalCost(sp space.Space) float64 {
	l, ok := sp.(space.Local)
	if !ok {
		return 1 // no local chain to mix with (newLocalChain refuses it first)
	}
	switch l.LocalMoves() {
	case space.MovesTransposition:
		return float64(sp.Dim()) / 25
	case space.MovesCycle, space.MovesDirectedCycle:
		return float64(sp.Width()) / 4
	default:
		return float64(sp.Width()) / 14
	}
}

// Step makes one transition.
func (c *MixedChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *MixedChain) step(src source) {
	if src.IntN(c.global) != 0 {
		c.local.step(src)
		return
	}
	src.Uniform(c.sc.sp, c.z)
	fz := c.sc.score(c.z)
	if src.Accept(fz - c.local.Score()) {
		c.local.load(c.z, fz)
	}
}

// State returns the current structure.
func (c *MixedChain) State() []int64 { return c.local.State() }

// SetState moves the chain to y.
func (c *MixedChain) SetState(y []int64) error { return c.local.SetState(y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *MixedChain) Score() float64 { return c.local.Score() }

func (c *MixedChain) load(y []int64, f float64) { c.local.load(y, f) }
