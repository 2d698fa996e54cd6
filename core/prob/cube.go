package prob

import (
	"fmt"
	"math/rand/v2"

	"github.com/combpred/combpred/core/space"
)

// CubeChain is MC_cube of thesis appendix C.3 on the 0/1 spaces whose ψ is the row itself and
// where single-bit moves connect all structures: multilabel (the whole hypercube) and rooted
// subtrees (a node can be added when its parent is in and removed when none of its children is).
//
// A step picks (i, b) ∈ [d] × {0, 1} uniformly and proposes setting bit i to b; the proposal is
// kept only when it changes the row and stays in the space, and is then accepted with
// probability min(1, π(v)/π(y)) = min(1, exp(±u_i)). So P(y, v) = min(1, π(v)/π(y))/(2d) for
// neighbours v and P(y, y) ≥ ½: the proposal is symmetric (the reverse flip has the same
// probability 1/(2d) and is legal exactly when the forward one is), detailed balance holds, and
// the chain is lazy, hence aperiodic. Subtrees are connected through the root-only subtree (remove
// leaves one at a time; add them back in the reverse order).
type CubeChain struct {
	sc     *scorer
	u      []float64
	y      []int64
	f      float64
	parent []int   // subtrees: parent of each node, −1 for the root; nil for multilabel
	kidsIn []int32 // subtrees: number of children in the subtree, per node
	moves  int
}

func newCubeChain(sp space.Space, u []float64) (*CubeChain, error) {
	c := &CubeChain{sc: newScorer(sp, u), u: u, y: make([]int64, sp.Width())}
	if l, ok := sp.(space.Local); !ok || l.LocalMoves() != space.MovesCube {
		return nil, fmt.Errorf("prob: the cube chain needs a space with cube moves (multilabel, subtrees), got %s", sp.Kind())
	}
	if r, ok := sp.(space.Rooted); ok { // a flip must keep the node set closed under parents
		c.parent = r.Parent()
		c.kidsIn = make([]int32, len(c.parent))
	}
	return c, nil
}

// Step makes one MC_cube transition.
func (c *CubeChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *CubeChain) step(src source) {
	i := src.IntN(len(c.y))
	b := int64(src.IntN(2))
	if c.y[i] == b {
		return
	}
	if c.parent != nil {
		if b == 1 && c.y[c.parent[i]] == 0 { // the root is always in, so parent[i] ≥ 0 here
			return
		}
		if b == 0 && (c.parent[i] < 0 || c.kidsIn[i] > 0) {
			return
		}
	}
	delta := c.u[i]
	if b == 0 {
		delta = -delta
	}
	if !src.Accept(delta) {
		return
	}
	c.y[i] = b
	if c.parent != nil {
		c.kidsIn[c.parent[i]] += int32(2*b - 1)
	}
	c.f += delta
	if c.moves++; c.moves%resyncEvery == 0 {
		c.f = c.sc.score(c.y)
	}
}

// State returns the current row.
func (c *CubeChain) State() []int64 { return c.y }

// SetState moves the chain to y.
func (c *CubeChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *CubeChain) Score() float64 { return c.f }

func (c *CubeChain) load(y []int64, f float64) {
	copy(c.y, y)
	c.f = f
	if c.parent != nil {
		clear(c.kidsIn)
		for v, p := range c.parent {
			if p >= 0 && y[v] == 1 {
				c.kidsIn[p]++
			}
		}
	}
}
