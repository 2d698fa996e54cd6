package prob

import (
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
)

// CycleChain is a Metropolis–Hastings chain of local moves on directed cycles (dicycles) and
// undirected cycles (ucycles) of length ≥ 3 on n vertices. The state is a successor row; an
// undirected cycle is held in either orientation. A step picks one of three move types with
// probability ⅓ each (L is the current length):
//
//   - toggle: pick a vertex v uniformly from the n vertices. If v is off the cycle, pick one of
//     the L vertices a on it uniformly and propose inserting v between a and its successor. If v
//     is on the cycle and L > 3, propose removing it. The proposal is not symmetric:
//     Q(insert) = 1/(3nL) into a cycle of length L, Q(remove) = 1/(3n), so the Hastings ratio
//     Q(reverse)/Q(forward) is L for an insertion into a cycle of length L and 1/L for a removal
//     that leaves length L: the move is accepted with probability min(1, π'/π · L^{±1}).
//   - vertex move: pick v uniformly (hold if off the cycle), remove it from between p and s and
//     re-insert it after a vertex a drawn uniformly among the L−2 vertices of the cycle other than
//     v and p. The reverse move picks v and then p among the L−2 vertices other than v and its new
//     predecessor a: both have probability 1/(3n(L−2)), and the moves y → y' and y' → y are in
//     bijection ((v, a) ↔ (v, p)), so the proposal is symmetric.
//   - 2-opt: pick an ordered pair (a, b) of distinct vertices uniformly (hold unless both are on
//     the cycle and the arcs a→s(a), b→s(b) are not adjacent), remove those two arcs and
//     reconnect a→b and s(a)→s(b), reversing the path s(a) … b. Applied to the new cycle, the pair
//     (a, s(a)) restores the old one; the pairs of both directions are in bijection and have
//     probability 1/(3n(n−1)) each: symmetric. For directed cycles the reversed path changes the
//     sign of its arcs' coordinates, and the score update walks the path.
//
// Each move type is reversible with respect to π on its own and the type is chosen with fixed
// probabilities, so the mixture is reversible. Toggles change the vertex set one vertex at a time
// (any set of size ≥ 3 reaches any other: grow, then shrink) and vertex moves generate every
// cyclic order of a fixed set, so the chain is irreducible; holds (e.g. removal proposals at
// L = 3) make it aperiodic. For undirected cycles the mechanism commutes with reversing the
// orientation (it maps the moves of a cycle one-to-one onto those of its reverse with the same
// probabilities and the same results up to orientation), so the chain on orientations lumps to
// a chain on undirected cycles with the same properties.
type CycleChain struct {
	sc       *scorer
	n        int
	directed bool
	w        []float64 // w[a·n+b]: what the arc a→b (or edge ab) adds to the score
	logInt   []float64 // logInt[k] = log k
	next     []int64   // the successor row (the state), −1 off the cycle
	prev     []int     // predecessor, −1 off the cycle
	on       []int     // the vertices on the cycle, in no particular order
	pos      []int     // pos[v]: index of v in on, −1 off the cycle
	seg      []int     // scratch for 2-opt
	f        float64
	moves    int
}

func newCycleChain(sp space.Space, u []float64) *CycleChain {
	n := sp.Width()
	c := &CycleChain{sc: newScorer(sp, u), n: n, next: make([]int64, n), prev: make([]int, n),
		on: make([]int, n), pos: make([]int, n), seg: make([]int, 0, n), logInt: make([]float64, n+1)}
	if l, ok := sp.(space.Local); ok && l.LocalMoves() == space.MovesDirectedCycle {
		c.directed = true
		c.w = orientedWeights(n, u)
	} else {
		c.w = edgeWeights(n, u)
	}
	for k := 1; k <= n; k++ {
		c.logInt[k] = logmath.Log(float64(k))
	}
	return c
}

// Step makes one transition.
func (c *CycleChain) Step(r *rand.Rand) { c.step(rngSource{r}) }

func (c *CycleChain) step(src source) {
	var accepted bool
	switch src.IntN(3) {
	case 0:
		accepted = c.toggle(src)
	case 1:
		accepted = c.vertexMove(src)
	default:
		accepted = c.twoOpt(src)
	}
	if accepted {
		if c.moves++; c.moves%resyncEvery == 0 {
			c.f = c.sc.score(c.next)
		}
	}
}

func (c *CycleChain) wt(a, b int) float64 { return c.w[a*c.n+b] }

func (c *CycleChain) toggle(src source) bool {
	v := src.IntN(c.n)
	L := len(c.on)
	if c.next[v] < 0 {
		a := c.on[src.IntN(L)]
		s := int(c.next[a])
		delta := c.wt(a, v) + c.wt(v, s) - c.wt(a, s)
		if !src.Accept(delta + c.logInt[L]) {
			return false
		}
		c.insertAfter(v, a)
		c.f += delta
		return true
	}
	if L == 3 {
		return false
	}
	p, s := c.prev[v], int(c.next[v])
	delta := c.wt(p, s) - c.wt(p, v) - c.wt(v, s)
	if !src.Accept(delta - c.logInt[L-1]) {
		return false
	}
	c.remove(v)
	c.f += delta
	return true
}

func (c *CycleChain) vertexMove(src source) bool {
	v := src.IntN(c.n)
	if c.next[v] < 0 {
		return false
	}
	L := len(c.on)
	p, s := c.prev[v], int(c.next[v])
	lo, hi := c.pos[v], c.pos[p]
	if lo > hi {
		lo, hi = hi, lo
	}
	i := src.IntN(L - 2) // the i-th vertex of on, skipping v and p
	if i >= lo {
		i++
	}
	if i >= hi {
		i++
	}
	a := c.on[i]
	// a ∉ {v, p}, so a's successor t is the same before and after removing v (at L = 3, a = s
	// and t = p: the cycle is reversed).
	t := int(c.next[a])
	delta := c.wt(p, s) - c.wt(p, v) - c.wt(v, s) + c.wt(a, v) + c.wt(v, t) - c.wt(a, t)
	if !src.Accept(delta) {
		return false
	}
	c.remove(v)
	c.insertAfter(v, a)
	c.f += delta
	return true
}

func (c *CycleChain) twoOpt(src source) bool {
	n := c.n
	a := src.IntN(n)
	b := src.IntN(n - 1)
	if b >= a {
		b++
	}
	if c.next[a] < 0 || c.next[b] < 0 {
		return false
	}
	sa, sb := int(c.next[a]), int(c.next[b])
	if b == sa || a == sb {
		return false
	}
	delta := c.wt(a, b) + c.wt(sa, sb) - c.wt(a, sa) - c.wt(b, sb)
	c.seg = c.seg[:0]
	for x := sa; ; x = int(c.next[x]) {
		c.seg = append(c.seg, x)
		if x == b {
			break
		}
	}
	if c.directed {
		for k := 0; k+1 < len(c.seg); k++ {
			x, y := c.seg[k], c.seg[k+1]
			delta += c.wt(y, x) - c.wt(x, y)
		}
	}
	if !src.Accept(delta) {
		return false
	}
	// a → b → (the path reversed) → sa → sb.
	seg := c.seg
	c.next[a], c.prev[b] = int64(b), a
	for k := len(seg) - 1; k > 0; k-- {
		c.next[seg[k]], c.prev[seg[k-1]] = int64(seg[k-1]), seg[k]
	}
	c.next[sa], c.prev[sb] = int64(sb), sa
	c.f += delta
	return true
}

func (c *CycleChain) insertAfter(v, a int) {
	s := int(c.next[a])
	c.next[a], c.next[v] = int64(v), int64(s)
	c.prev[v], c.prev[s] = a, v
	c.pos[v] = len(c.on)
	c.on = append(c.on, v)
}

func (c *CycleChain) remove(v int) {
	p, s := c.prev[v], int(c.next[v])
	c.next[p], c.prev[s] = int64(s), p
	c.next[v], c.prev[v] = -1, -1
	i, last := c.pos[v], c.on[len(c.on)-1]
	c.on[i], c.pos[last] = last, i
	c.on = c.on[:len(c.on)-1]
	c.pos[v] = -1
}

// State returns the current cycle as a successor row.
func (c *CycleChain) State() []int64 { return c.next }

// SetState moves the chain to the cycle y.
func (c *CycleChain) SetState(y []int64) error { return setState(c, c.sc, y) }

// Score returns ⟨u, ψ(State())⟩.
func (c *CycleChain) Score() float64 { return c.f }

func (c *CycleChain) load(y []int64, f float64) {
	copy(c.next, y)
	c.on = c.on[:0]
	for v := range c.prev {
		c.prev[v], c.pos[v] = -1, -1
	}
	for v, s := range y {
		if s >= 0 {
			c.prev[s] = v
			c.pos[v] = len(c.on)
			c.on = append(c.on, v)
		}
	}
	c.f = f
}
