package prob

import (
	"math/rand/v2"
	"slices"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
)

// MetaChain is the thesis' "meta" Metropolis chain (§6.6.2): from y, propose z uniformly from Y
// (space.Sample) and move to z with probability min(1, exp(⟨u, ψ(z)⟩ − ⟨u, ψ(y)⟩)).
//
// The proposal is symmetric (Q(y, z) = 1/|Y|), so P(y, z) π(y) = min(π(y), π(z))/|Y| is symmetric:
// detailed balance holds. Every move is possible in one step (irreducible) and z = y is proposed
// with positive probability (aperiodic). Its acceptance probability is at least
// exp(f_min − f_max) ≥ exp(−2R‖u‖), which gives the thesis' mixing bound; it is the chain under
// CFTP.
type MetaChain struct {
	sc   *scorer
	y, z []int64
	f    float64
	// steps counts the transitions made, lastMove their count at the last one that changed the
	// state (0: none did), for vouched.
	steps, lastMove int64
}

func newMetaChain(sp space.Space, u []float64) *MetaChain {
	return &MetaChain{sc: newScorer(sp, u), y: make([]int64, sp.Width()), z: make([]int64, sp.Width())}
}

// Step proposes a uniform structure and accepts it by the Metropolis rule.
func (c *MetaChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *MetaChain) step(src source) {
	c.steps++
	src.Uniform(c.sc.sp, c.z)
	fz := c.sc.score(c.z)
	if src.Accept(fz - c.f) {
		if !slices.Equal(c.y, c.z) {
			c.lastMove = c.steps
		}
		copy(c.y, c.z)
		c.f = fz
	}
}

// metaVouch sets how many uniform proposals a Metropolis chain that stayed where it is must have
// made to vouch for its state: metaVouch·|Y|. Every proposal moves a chain at y with probability
// Σ_{z≠y} min(1, π(z)/π(y))/|Y| ≥ (1 − π(y))/|Y|, so T proposals without a move happen with
// probability at most exp(−T(1 − π(y))/|Y|): after 60|Y| of them, a state holding less than 95 %
// of the mass keeps the chain still with probability below 5 % (e⁻³). On Permutations(16), whose
// 2·10¹³ structures no run reaches, a chain never left the decoded mode and its "marginals" were
// ψ(mode), 1.5 from the exact ones in a coordinate, at 20 and at 2,000 samples alike.
const metaVouch = 60

// vouched reports whether the states the chain kept after its first burnIn transitions may stand
// for π: it moved after them (they are not all one structure), or it has stayed where it is for
// enough proposals to show that its state holds nearly all the mass (metaVouch). A move during
// the burn-in alone does not count: a chain that reached another structure there and stayed
// kept that one structure only.
func (c *MetaChain) vouched(burnIn int64) bool {
	still := c.steps - c.lastMove
	return c.lastMove > burnIn || still > 0 && logmath.Log(float64(still)) >= logmath.Log(metaVouch)+c.sc.sp.LogCount()
}

// State returns the current structure.
func (c *MetaChain) State() []int64 { return c.y }

// SetState moves the chain to y.
func (c *MetaChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *MetaChain) Score() float64 { return c.f }

func (c *MetaChain) load(y []int64, f float64) { copy(c.y, y); c.f = f }
