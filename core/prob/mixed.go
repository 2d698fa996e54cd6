package prob

import (
	"math/rand/v2"

	"github.com/combpred/combpred/core/space"
)

// MixedChain interleaves a local chain with the meta chain's global proposals: each step is, with
// probability ½ each, a step of the local chain or a uniform proposal z accepted with probability
// min(1, π(z)/π(y)). Both kernels are reversible with respect to π and the choice does not depend
// on the state, so the mixture is reversible. Global proposals move far at low ‖u‖, where they
// are accepted often; local moves keep moving at high ‖u‖, where global proposals are rejected.
type MixedChain struct {
	local localChain
	sc    *scorer
	z     []int64
}

func newMixedChain(sp space.Space, u []float64, local localChain) *MixedChain {
	return &MixedChain{local: local, sc: newScorer(sp, u), z: make([]int64, sp.Width())}
}

// Step makes one transition.
func (c *MixedChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *MixedChain) step(src source) {
	if src.IntN(2) == 0 {
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
