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
	sc    *scorer
	y, z  []int64
	f     float64
	moved bool // an accepted proposal changed the state (see vouched)
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
		c.moved = c.moved || !slices.Equal(c.y, c.z)
		copy(c.y, c.z)
		c.f = fz
	}
}

// metaVouch sets how many uniform proposals a Metropolis chain that never moved must have made
// to vouch for its state: metaVouch·|Y|. Every proposal moves a chain at y with probability
// Σ_{z≠y} min(1, π(z)/π(y))/|Y| ≥ (1 − π(y))/|Y|, so T proposals without a move happen with
// probability at most exp(−T(1 − π(y))/|Y|): after 60|Y| of them, a state holding less than 95 %
// of the mass keeps the chain still with probability below 5 % (e⁻³). On Permutations(16), whose
// 2·10¹³ structures no run reaches, a chain never left the decoded mode and its "marginals" were
// ψ(mode), 1.5 from the exact ones in a coordinate, at 20 and at 2,000 samples alike.
const metaVouch = 60

// vouched reports whether the chain may stand for π after steps transitions: it moved, or its
// proposals were enough to show that its state holds nearly all the mass (metaVouch).
func (c *MetaChain) vouched(steps int64) bool {
	return c.moved || logmath.Log(float64(steps)) >= logmath.Log(metaVouch)+c.sc.sp.LogCount()
}

// State returns the current structure.
func (c *MetaChain) State() []int64 { return c.y }

// SetState moves the chain to y.
func (c *MetaChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *MetaChain) Score() float64 { return c.f }

func (c *MetaChain) load(y []int64, f float64) { copy(c.y, y); c.f = f }
