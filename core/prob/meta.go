package prob

import (
	"math/rand/v2"

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
}

func newMetaChain(sp space.Space, u []float64) *MetaChain {
	return &MetaChain{sc: newScorer(sp, u), y: make([]int64, sp.Width()), z: make([]int64, sp.Width())}
}

// Step proposes a uniform structure and accepts it by the Metropolis rule.
func (c *MetaChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *MetaChain) step(src source) {
	src.Uniform(c.sc.sp, c.z)
	fz := c.sc.score(c.z)
	if src.Accept(fz - c.f) {
		copy(c.y, c.z)
		c.f = fz
	}
}

// State returns the current structure.
func (c *MetaChain) State() []int64 { return c.y }

// SetState moves the chain to y.
func (c *MetaChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *MetaChain) Score() float64 { return c.f }

func (c *MetaChain) load(y []int64, f float64) { copy(c.y, y); c.f = f }
