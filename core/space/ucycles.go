package space

import (
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
)

func init() {
	Register("ucycles", func(p []int64) (Space, error) {
		return newWithMode("ucycles", "n_vertices", p, cycleExactHardMax, NewUndirectedCycles)
	})
}

// UndirectedCycles is the space of undirected cycles of length ≥ 3 on any subset of n vertices
// (route prediction, thesis §4.3.1): Σ_{i=3}^{n} C(n,i)(i−1)!/2 structures.
//
// A cycle is the successor row of either of its orientations: y[v] is the vertex after v, −1 when
// v is not on the cycle. Validate and Embed accept both orientations; Sample, Decode and Enumerate
// write the one in which the smallest vertex on the cycle has a smaller successor than
// predecessor. ψ has one coordinate per unordered pair u < v in lexicographic order: 1 when the
// edge uv is on the cycle, 0 otherwise.
type UndirectedCycles struct {
	cycleBase
}

// NewUndirectedCycles returns the space of undirected cycles on n vertices (n ≥ 3).
func NewUndirectedCycles(n int) (*UndirectedCycles, error) {
	s := &UndirectedCycles{}
	if err := s.init("ucycles", n); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind is "ucycles".
func (s *UndirectedCycles) Kind() string { return "ucycles" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *UndirectedCycles) PsiZeroOne() bool { return true }

// LogCount is log Σ_{i=3}^{n} C(n,i)(i−1)!/2: half the directed cycles, each undirected cycle
// having two orientations. The thesis prints the sum from i = 2, which counts a "cycle" of two
// vertices as half a structure (see docs/errata.md).
func (s *UndirectedCycles) LogCount() float64 { return s.counts.logDirected() - math.Ln2 }

// Guarantee is 0 up to 14 vertices, where Decode is exact, and 1 beyond, which promises nothing.
// The ½ of directed cycles rests on reversal negating the score; reversing an undirected cycle
// leaves it unchanged, and with ψ ≥ 0 no sibling function exists at all: ψ(z) + ψ(r(z)) = c
// would give ⟨c, ψ(z)⟩ ≥ ‖ψ(z)‖² ≥ 3, not the 0 that a sibling system needs. The independence
// system bound does not apply either (a subset of a cycle's edges is not a cycle). Exact
// decoding is NP-hard (it decides Hamiltonicity, thesis §4.2) and we know no proof of a constant
// factor for the local search, so we claim none. The tests measure the realised factor on
// enumerable sizes (mean below 0.01, worst about 0.2 at n ≤ 8).
func (s *UndirectedCycles) Guarantee() float64 {
	if s.exact() {
		return 0
	}
	return 1
}

func (s *UndirectedCycles) exact() bool { return s.mode.exact(s.n, cycleExactMax) }

// Mean is p = Ψ_e/|Y| in every coordinate, with Ψ_e = Σ_{i=3}^{n} C(n−2,i−2)(i−2)! the number of
// cycles through an edge: as many as directed cycles through one of its arcs. The thesis prints
// the sum from i = 2, which counts the two-vertex "cycle" (see docs/errata.md).
func (s *UndirectedCycles) Mean(p []float64) {
	m := 2 * s.counts.arcShare()
	for i := range p {
		p[i] = m
	}
}

// Covariance is C/|Y| − ppᵀ with C as printed in the thesis: Ψ_e on the diagonal, the number of
// cycles through a path u–v–w for edges sharing a vertex, and the number through two disjoint
// edges otherwise. Entries depend only on how two edges overlap, so S·x needs only the sum of x
// and its sums at each vertex: O(d) time.
func (s *UndirectedCycles) Covariance() Operator {
	c := s.counts
	p := 2 * c.arcShare()
	return undirectedPairCov{
		n:        s.n,
		diag:     p - p*p,
		share:    2*c.pathShare() - p*p,
		disjoint: 4*c.twoArcShare() - p*p,
	}
}

// Validate checks that y is the successor row of one cycle of length ≥ 3, in either orientation.
func (s *UndirectedCycles) Validate(y []int64) error {
	_, err := cycleValidate(s.n, y)
	return err
}

// Embed writes 1 on the coordinate of each edge of the cycle.
func (s *UndirectedCycles) Embed(y []int64, psi []float64) {
	clear(psi)
	for v, t := range y {
		if t >= 0 {
			psi[lexPairIndex(s.n, min(v, int(t)), max(v, int(t)))] = 1
		}
	}
}

// Score returns ⟨u, ψ(y)⟩ from the cycle's edges alone (Scorer): O(n) where Embed and a dot
// product cost O(n²). The terms are summed in vertex order, not in ψ's.
func (s *UndirectedCycles) Score(u []float64, y []int64) float64 {
	var f float64
	for v, t := range y {
		if t >= 0 {
			f += u[lexPairIndex(s.n, min(v, int(t)), max(v, int(t)))]
		}
	}
	return f
}

// Sample draws a uniform undirected cycle: a uniform directed cycle (each undirected cycle has
// exactly two orientations, so the length law ∝ C(n,i)(i−1)!/2 is the same), written in the
// canonical orientation.
func (s *UndirectedCycles) Sample(r *rand.Rand, y []int64) {
	s.counts.sample(r, y)
	cycleCanonical(y)
}

// Decode finds a cycle maximising the sum of u over its edges, in the canonical orientation. Up
// to 14 vertices it is exact (Held–Karp over vertex subsets); beyond, it is the best local optimum
// (vertex insertion, removal, replacement and moves, 2-opt) reached from a greedy triangle and a
// greedy tour, without a proven factor (see Guarantee). It is safe for concurrent use.
func (s *UndirectedCycles) Decode(u []float64, y []int64) { s.decodeStop(u, y, nil) }

// decodeStop is Decode with its local search ended early once stop is set (stoppableDecoder).
func (s *UndirectedCycles) decodeStop(u []float64, y []int64, stop *cancel.Flag) {
	n := s.n
	buf := s.pool.Get().(*cycleBuf)
	defer s.pool.Put(buf)
	w := permGrow(&buf.w, n*n)
	scale := ucycleWeights(n, u, w)
	if s.exact() {
		cycleDecodeExact(n, w, buf, y)
	} else {
		cycleDecodeLocal(n, w, scale, false, stop, buf, y)
	}
	cycleCanonical(y)
}

// ucycleWeights fills w[a·n+b] with the score of the edge ab, in both directions; it returns
// max |w|, the scale of rounding tolerances.
func ucycleWeights(n int, u, w []float64) float64 {
	var scale float64
	k := 0
	for a := 0; a < n; a++ {
		w[a*n+a] = 0
		for b := a + 1; b < n; b++ {
			x := permFiniteScore(n, u[k])
			w[a*n+b], w[b*n+a] = x, x
			scale = max(scale, math.Abs(x))
			k++
		}
	}
	return scale
}

// Enumerate lists the cycles subset by subset (masks in increasing order), each once, in the
// canonical orientation.
func (s *UndirectedCycles) Enumerate(yield func(y []int64) bool) error {
	if c, ok := cycleExactDirected(s.n); !ok || c/2 > MaxEnumerate {
		return ErrTooLarge
	}
	cycleEnumerate(s.n, true, yield)
	return nil
}

// undirectedPairCov is diag on the diagonal, share between edges with one common vertex and
// disjoint between disjoint edges. With R[a] the sum of x over the edges at a and T the sum of x,
// (S·x)_uv = diag·x_uv + share·(R[u] + R[v] − 2x_uv) + disjoint·(T − R[u] − R[v] + x_uv).
type undirectedPairCov struct {
	n                     int
	diag, share, disjoint float64
}

func (o undirectedPairCov) Dim() int { return o.n * (o.n - 1) / 2 }

func (o undirectedPairCov) MulVec(dst, x []float64) {
	n := o.n
	r := make([]float64, n)
	var total float64
	k := 0
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			r[u] += x[k]
			r[v] += x[k]
			total += x[k]
			k++
		}
	}
	c := o.diag - 2*o.share + o.disjoint
	k = 0
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			ruv := r[u] + r[v]
			dst[k] = c*x[k] + o.share*ruv + o.disjoint*(total-ruv)
			k++
		}
	}
}

func (o undirectedPairCov) At(i, j int) float64 {
	if i == j {
		return o.diag
	}
	u, v := lexPair(o.n, i)
	a, b := lexPair(o.n, j)
	if u == a || u == b || v == a || v == b {
		return o.share
	}
	return o.disjoint
}

// Canonicalize rewrites a successor row in place into the orientation Sample and Decode write:
// the smallest vertex on the cycle has a smaller successor than predecessor.
func (s *UndirectedCycles) Canonicalize(y []int64) {
	v0 := -1
	for v, s := range y {
		if s >= 0 {
			v0 = v
			break
		}
	}
	if v0 < 0 {
		return
	}
	var pred int64 = -1
	for v, s := range y {
		if s == int64(v0) {
			pred = int64(v)
			break
		}
	}
	if y[v0] < pred {
		return
	}
	// Reverse every arc.
	start := int64(v0)
	cur, nxt := start, y[v0]
	for {
		after := y[nxt]
		y[nxt] = cur
		cur, nxt = nxt, after
		if cur == start {
			break
		}
	}
}
