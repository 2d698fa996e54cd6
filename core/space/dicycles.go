package space

import (
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
)

func init() {
	Register("dicycles", func(p []int64) (Space, error) {
		return newWithMode("dicycles", "n_vertices", p, cycleExactHardMax, NewDirectedCycles)
	})
}

// DirectedCycles is the space of directed cycles of length ≥ 3 on any subset of n vertices
// (route prediction, thesis appendix B): Σ_{i=3}^{n} C(n,i)(i−1)! structures.
//
// A cycle is a successor row of length n: y[v] is the vertex after v on the cycle, −1 when v is not
// on it. ψ has one coordinate per unordered pair u < v in lexicographic order: +1 when u→v is an
// arc of the cycle, −1 when v→u is, 0 otherwise (the thesis' ordered pairs, halved since
// ψ_vu = −ψ_uv).
type DirectedCycles struct {
	cycleBase
}

// NewDirectedCycles returns the space of directed cycles on n vertices (n ≥ 3).
func NewDirectedCycles(n int) (*DirectedCycles, error) {
	s := &DirectedCycles{}
	if err := s.init("dicycles", n); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind is "dicycles".
func (s *DirectedCycles) Kind() string { return "dicycles" }

// LogCount is log Σ_{i=3}^{n} C(n,i)(i−1)!, computed as log (n−1)! + log t with t ≤ e (see
// cycleCounts), so that it is finite and exact to rounding at any n.
func (s *DirectedCycles) LogCount() float64 { return s.counts.logDirected() }

// Guarantee is 0 up to 14 vertices, where Decode is exact, and ½ beyond: the approximate decoder
// starts from the better of a cycle and its reverse, whose scores are opposite (a sibling system,
// thesis §5.4), so its score is at least 0 = (max + min)/2, and local search only raises it.
func (s *DirectedCycles) Guarantee() float64 {
	if s.exact() {
		return 0
	}
	return 0.5
}

func (s *DirectedCycles) exact() bool { return s.mode.exact(s.n, cycleExactMax) }

// Mean is zero: reversing a cycle negates ψ.
func (s *DirectedCycles) Mean(p []float64) { clear(p) }

// Covariance is C/|Y| with C from thesis appendix B (correct as printed): 2a on the diagonal with a
// the fraction of cycles through a given arc; for pairs sharing one vertex, +2b when the shared
// vertex is the larger of one pair and the smaller of the other (the two arcs can chain u→v→w in
// either direction, both giving +1) and −2b when it is at the same end of both, with b the fraction
// of cycles through a given path u→v→w; 0 for disjoint pairs.
func (s *DirectedCycles) Covariance() Operator {
	return orientedPairCov{n: s.n, diag: 2 * s.counts.arcShare(), beta: 2 * s.counts.pathShare()}
}

// Validate checks that y is the successor row of one cycle of length ≥ 3.
func (s *DirectedCycles) Validate(y []int64) error {
	_, err := cycleValidate(s.n, y)
	return err
}

// Embed writes +1 for each arc u→v with u < v and −1 for each with u > v, on the pair's coordinate.
func (s *DirectedCycles) Embed(y []int64, psi []float64) {
	clear(psi)
	for v, t := range y {
		if t < 0 {
			continue
		}
		if w := int(t); v < w {
			psi[lexPairIndex(s.n, v, w)] = 1
		} else {
			psi[lexPairIndex(s.n, w, v)] = -1
		}
	}
}

// Score returns ⟨u, ψ(y)⟩ from the cycle's arcs alone (Scorer): O(n) where Embed and a dot product
// cost O(n²). The terms are summed in vertex order, not in ψ's.
func (s *DirectedCycles) Score(u []float64, y []int64) float64 {
	var f float64
	for v, t := range y {
		if t < 0 {
			continue
		}
		if w := int(t); v < w {
			f += u[lexPairIndex(s.n, v, w)]
		} else {
			f -= u[lexPairIndex(s.n, w, v)]
		}
	}
	return f
}

// Sample draws a uniform directed cycle: its length i with probability ∝ C(n,i)(i−1)!, then a
// uniform set of i vertices and a uniform cyclic order of them (Sattolo's algorithm).
func (s *DirectedCycles) Sample(r *rand.Rand, y []int64) { s.counts.sample(r, y) }

// Decode finds a cycle maximising Σ_arcs w(u→v) with w(u→v) = u_uv for u < v and −u_vu otherwise.
// Up to 14 vertices it is exact (Held–Karp over vertex subsets); beyond, it is the
// ½-approximation of Guarantee: from each of two starting cycles (a greedy triangle and a greedy
// tour), the better orientation, improved by vertex insertion, removal, replacement and moves and
// by segment reversals until none improves. It is safe for concurrent use.
func (s *DirectedCycles) Decode(u []float64, y []int64) { s.decodeStop(u, y, nil) }

// decodeStop is Decode with its local search ended early once stop is set (stoppableDecoder).
func (s *DirectedCycles) decodeStop(u []float64, y []int64, stop *cancel.Flag) {
	n := s.n
	buf := s.pool.Get().(*cycleBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	scale := permGainMatrix(n, u, w)
	if s.exact() {
		cycleDecodeExact(n, w, buf, y)
		return
	}
	cycleDecodeLocal(n, w, scale, true, stop, buf, y)
}

// Enumerate lists the cycles subset by subset (masks in increasing order), the smallest vertex of
// each first and the others in every order.
func (s *DirectedCycles) Enumerate(yield func(y []int64) bool) error {
	if c, ok := cycleExactDirected(s.n); !ok || c > MaxEnumerate {
		return ErrTooLarge
	}
	cycleEnumerate(s.n, false, yield)
	return nil
}

// cycleDecodeLocal writes into y the best local optimum reached from the starts of cycleStarts.
// With orient, each start is first turned to its better orientation, which for antisymmetric
// weights scores at least 0. Once stop is set the searches end early: y is still a cycle.
func cycleDecodeLocal(n int, w []float64, scale float64, orient bool, stop *cancel.Flag, buf *cycleBuf, y []int64) {
	ls := &buf.ls
	ls.reset(n, w, 1e-12*scale)
	ls.stop = stop
	defer func() { ls.stop = nil }() // buf goes back to the space's pool
	best := math.Inf(-1)
	scratch := make([]int, n)
	cycleStarts(n, w, scratch, func(verts []int) {
		ls.load(verts)
		if orient && ls.score() < 0 {
			ls.reverse()
		}
		ls.run()
		if f := ls.score(); f > best {
			best = f
			ls.write(y)
		}
	})
}
