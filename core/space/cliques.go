package space

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("cliques", func(p []int64) (Space, error) {
		return newWithMode("cliques", "n_vertices", p, CliquesExactMax, NewCliques)
	})
}

// CliquesExactMax is the largest n for which Cliques decodes exactly (by visiting all 2^n vertex
// subsets in Gray-code order, a few milliseconds at n = 20); larger spaces decode approximately.
const CliquesExactMax = 20

// Cliques is the space of cliques of the complete graph on n vertices, as graphs: a structure is a
// complete subgraph, given by its vertex set encoded as a 0/1 row of length n, and ψ has one
// coordinate per unordered pair u < v (lexicographic order, as Tournaments), 1 when both endpoints
// are in the set; d = n(n−1)/2.
//
// Which vertex sets: a set with a single vertex has no edge, so it is the same graph (ψ = 0) as
// the empty set. Y therefore holds the empty clique (the all-zero row) and every vertex set with
// at least 2 vertices, |Y| = 2^n − n, and rows with exactly one vertex are rejected by Validate
// (encode "no clique" as all zeros). The thesis counts vertex subsets, |Y| = 2^N, which lists the
// empty graph N+1 times; its Ψ and (corrected) C count only sets with at least one edge and are
// unaffected: Ψ_e = 2^{n−2} and C_{e,e'} = 2^{n−|e∪e'|} (the thesis prints
// Σ_{i=|e∩e'|}^{N} C(N−|e∩e'|, i−|e∩e'|) = 2^{N−|e∩e'|}, indexed by the intersection instead of
// the union; enumeration disagrees whenever e ≠ e').
//
// With ρ = 2^n/|Y| = 1/(1 − n 2^{−n}): p_e = ρ/4 and S_{e,e'} = ρ 2^{−|e∪e'|} − ρ²/16 (ρ/4 − ρ²/16,
// ρ/8 − ρ²/16 and ρ/16 − ρ²/16 for the same pair, pairs sharing a vertex and disjoint pairs).
// Products cost O(d): (S v)_e = (ρ/16)[(1−ρ) Σv + s_a + s_b + v_e] for e = (a, b), where s_w sums v
// over the pairs at vertex w.
//
// Sampling: fair coins per vertex, rejecting the (at most half, for n = 2) draws with one vertex;
// exactly uniform. Decoding maximises Σ_{u<v both in} u_uv, a quadratic pseudo-Boolean function:
// exact for n ≤ CliquesExactMax (O(2^n) by a split Gray-code enumeration), approximate beyond (see
// Guarantee and decodeApprox).
type Cliques struct {
	n, d   int
	rho, p float64
	mode   DecoderMode
	pool   sync.Pool // *cliquesScratch, for the approximate decoder
}

// NewCliques returns the space of cliques on n vertices, n ≥ 2.
func NewCliques(n int) (*Cliques, error) {
	if n < 2 {
		return nil, fmt.Errorf("space: cliques needs n_vertices ≥ 2, got %d", n)
	}
	if err := checkSize("cliques", "n_vertices", int64(n), pairDim(n), int64(n)); err != nil {
		return nil, err
	}
	rho := 1 / (1 - float64(n)*math.Ldexp(1, -n))
	s := &Cliques{n: n, d: n * (n - 1) / 2, rho: rho, p: rho / 4}
	s.pool.New = func() any {
		return &cliquesScratch{w: make([]float64, n*n), g: make([]float64, n), in: make([]bool, n), best: make([]bool, n)}
	}
	return s, nil
}

// Kind returns "cliques".
func (s *Cliques) Kind() string { return "cliques" }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *Cliques) PsiZeroOne() bool { return true }

// Params returns [n], or [n, decoder mode] when the mode is not auto.
func (s *Cliques) Params() []int64 { return modeParams(s.n, s.mode) }

func (s *Cliques) setMode(m DecoderMode) { s.mode = m }

func (s *Cliques) exact() bool { return s.mode.exact(s.n, CliquesExactMax) }

// Dim returns d = n(n−1)/2.
func (s *Cliques) Dim() int { return s.d }

// Width returns n: a structure is a 0/1 row over the vertices.
func (s *Cliques) Width() int { return s.n }

// LogCount returns log(2^n − n).
func (s *Cliques) LogCount() float64 {
	return float64(s.n)*math.Ln2 + math.Log1p(-float64(s.n)*math.Ldexp(1, -s.n))
}

// Guarantee returns 0 for n ≤ CliquesExactMax (exact decoding). Beyond, it returns
// ν = 1 − 1/d, which is all that can be proved for the approximate decoder: the decoded score is
// at least max(0, max_e u_e) ≥ max f / d (the optimal clique has at most d edges), and min f ≤ 0.
// Quadratic set functions have no sibling structure (ψ(T) + ψ(complement of T) is not constant), so
// the ½ factor of sibling systems does not apply. In practice the local search is far better than
// the guarantee; the tests report its realised ν on enumerable sizes.
func (s *Cliques) Guarantee() float64 {
	if s.exact() {
		return 0
	}
	return 1 - 1/float64(s.d)
}

// Mean writes p_e = 2^{n−2}/(2^n − n) = ρ/4 in every coordinate.
func (s *Cliques) Mean(p []float64) {
	for e := range p {
		p[e] = s.p
	}
}

// Covariance returns S_{e,e'} = ρ 2^{−|e∪e'|} − ρ²/16 with O(d) products.
func (s *Cliques) Covariance() Operator { return cliquesCov{s} }

// Validate checks that y is a 0/1 row of length n with no vertex or at least two.
func (s *Cliques) Validate(y []int64) error {
	if len(y) != s.n {
		return fmt.Errorf("a clique row has %d entries (one per vertex), got %d", s.n, len(y))
	}
	ones, last := 0, -1
	for v, x := range y {
		if x != 0 && x != 1 {
			return fmt.Errorf("vertex %d has value %d, want 0 or 1", v, x)
		}
		if x == 1 {
			ones, last = ones+1, v
		}
	}
	if ones == 1 {
		return fmt.Errorf("clique row has exactly one vertex (%d), which has no edge: encode the empty clique as all zeros, or give at least 2 vertices", last)
	}
	return nil
}

// Embed writes 1 for every pair with both endpoints in the set.
func (s *Cliques) Embed(y []int64, psi []float64) {
	e := 0
	for a := 0; a < s.n; a++ {
		if y[a] == 0 {
			clear(psi[e : e+s.n-1-a])
		} else {
			for b := a + 1; b < s.n; b++ {
				psi[e+b-a-1] = float64(y[b])
			}
		}
		e += s.n - 1 - a
	}
}

// Sample draws a clique uniformly: fair coins per vertex, redrawn when exactly one vertex is in.
func (s *Cliques) Sample(r *rand.Rand, y []int64) {
	for {
		ones := 0
		for j := 0; j < s.n; j += 64 {
			b := r.Uint64()
			for k := j; k < s.n && k < j+64; k++ {
				y[k] = int64(b & 1)
				ones += int(b & 1)
				b >>= 1
			}
		}
		if ones != 1 {
			return
		}
	}
}

// Decode writes a clique maximising Σ_{u<v both in} u_uv: exactly for n ≤ CliquesExactMax
// (Gray-code enumeration with incremental scores, O(2^n)), within Guarantee beyond
// (decodeApprox). The empty clique wins ties with it. It is safe for concurrent use.
func (s *Cliques) Decode(u []float64, y []int64) {
	if s.exact() {
		s.decodeExact(u, y)
		return
	}
	s.decodeApprox(u, y)
}

// decodeExact visits every vertex set. The vertices are split into a low half L (nL of them) and a
// high half H, f(T) = f(T∩L) + f(T∩H) + Σ_{a∈T∩L} G_a(T∩H) with G_a(B) = Σ_{b∈B} u_ab. The high
// sets are visited in Gray-code order, keeping f(T∩H) and G up to date in O(n) per step; for each,
// the low sets are visited in Gray-code order with the linear term kept in O(1) per step and
// f(T∩L) read from a table of all 2^nL low sets. Total O(2^n + n 2^{n/2}) time, no allocation.
func (s *Cliques) decodeExact(u []float64, y []int64) {
	n := s.n
	nL := (n + 1) / 2
	nH := n - nL
	var w [CliquesExactMax * CliquesExactMax]float64
	e := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			w[a*n+b], w[b*n+a] = u[e], u[e]
			e++
		}
	}
	// fL[m] = f(low set m): add the lowest vertex a of m to the rest of m.
	var fL [1 << ((CliquesExactMax + 1) / 2)]float64
	for m := uint32(1); m < 1<<nL; m++ {
		a := bits.TrailingZeros32(m)
		rest := m & (m - 1)
		sum := fL[rest]
		for r := rest; r != 0; r &= r - 1 {
			sum += w[a*n+bits.TrailingZeros32(r)]
		}
		fL[m] = sum
	}
	var g [CliquesExactMax]float64 // g[x] = Σ_{b∈T∩H} u_xb: G for low x, the high gains for high x
	var mH, bestL, bestH uint32
	var fH, best float64 // best starts at the empty clique's 0
	for hi := uint32(0); hi < 1<<nH; hi++ {
		if hi > 0 {
			h := bits.TrailingZeros32(hi)
			v := nL + h
			row := w[v*n : v*n+n]
			if mH&(1<<h) == 0 {
				mH |= 1 << h
				fH += g[v]
				for x, wx := range row {
					g[x] += wx
				}
			} else {
				mH &^= 1 << h
				fH -= g[v]
				for x, wx := range row {
					g[x] -= wx
				}
			}
			if fH > best && bits.OnesCount32(mH) > 1 { // the low set is empty
				best, bestL, bestH = fH, 0, mH
			}
		}
		var mL uint32
		var lin float64
		for i := uint32(1); i < 1<<nL; i++ {
			b := bits.TrailingZeros32(i)
			if mL&(1<<b) == 0 {
				mL |= 1 << b
				lin += g[b]
			} else {
				mL &^= 1 << b
				lin -= g[b]
			}
			if sc := fH + fL[mL] + lin; sc > best && bits.OnesCount32(mL)+bits.OnesCount32(mH) != 1 {
				best, bestL, bestH = sc, mL, mH
			}
		}
	}
	for v := range y {
		if v < nL {
			y[v] = int64(bestL >> v & 1)
		} else {
			y[v] = int64(bestH >> (v - nL) & 1)
		}
	}
}

// cliquesScratch holds the buffers of one approximate decoding.
type cliquesScratch struct {
	w        []float64 // n×n symmetric score matrix, zero diagonal
	g        []float64 // g_v = Σ_{x in} w_vx
	in, best []bool
}

// decodeApprox runs a best-improvement local search (add or remove one vertex while that raises
// the score) from several starts and keeps the best result: the best single edge, grown greedily
// by the vertex of largest positive gain; the full vertex set; the vertices of positive weighted
// degree Σ_x u_vx and their complement. Since the best edge is among the starts and the score
// never decreases, the result scores at least max(0, max_e u_e), which gives Guarantee's ν.
// Each start costs O(n²) plus O(n) per move, with at most 4n moves.
func (s *Cliques) decodeApprox(u []float64, y []int64) {
	n := s.n
	sc := s.pool.Get().(*cliquesScratch)
	defer s.pool.Put(sc)
	w := sc.w
	e := 0
	bestEdge, bestEdgeScore := 0, math.Inf(-1)
	var scale float64
	for a := 0; a < n; a++ {
		w[a*n+a] = 0
		for b := a + 1; b < n; b++ {
			w[a*n+b], w[b*n+a] = u[e], u[e]
			if u[e] > bestEdgeScore {
				bestEdge, bestEdgeScore = e, u[e]
			}
			scale += math.Abs(u[e])
			e++
		}
	}
	tol := 1e-14 * scale // improvements below rounding noise do not count as moves
	bestScore := 0.0     // the empty clique
	clear(sc.best)

	try := func(start func(in []bool)) {
		clear(sc.in)
		start(sc.in)
		score := s.localSearch(sc, tol)
		if score > bestScore {
			bestScore = score
			copy(sc.best, sc.in)
		}
	}
	try(func(in []bool) { // best edge, grown greedily (the local search only adds while it helps)
		a, b := pairAt(n, bestEdge)
		in[a], in[b] = true, true
	})
	try(func(in []bool) {
		for v := range in {
			in[v] = true
		}
	})
	for _, want := range []bool{true, false} {
		try(func(in []bool) {
			for v := 0; v < n; v++ {
				var deg float64
				for _, x := range w[v*n : v*n+n] {
					deg += x
				}
				in[v] = (deg > 0) == want
			}
		})
	}
	ones := 0
	for _, b := range sc.best {
		if b {
			ones++
		}
	}
	for v := range y {
		y[v] = 0
		if sc.best[v] && ones > 1 {
			y[v] = 1
		}
	}
}

// localSearch improves the vertex set sc.in by single-vertex flips, always taking the flip of
// largest gain, until no flip gains more than tol (or 4n flips were made), and returns its score.
func (s *Cliques) localSearch(sc *cliquesScratch, tol float64) float64 {
	n := s.n
	w, g, in := sc.w, sc.g, sc.in
	clear(g)
	for v := 0; v < n; v++ {
		if in[v] {
			for x, wx := range w[v*n : v*n+n] {
				g[x] += wx
			}
		}
	}
	var score float64
	for v := 0; v < n; v++ {
		if in[v] {
			score += g[v]
		}
	}
	score /= 2
	for move := 0; move < 4*n; move++ {
		bestV, bestGain := -1, tol
		for v := 0; v < n; v++ {
			gain := g[v]
			if in[v] {
				gain = -gain
			}
			if gain > bestGain {
				bestV, bestGain = v, gain
			}
		}
		if bestV < 0 {
			break
		}
		sign := 1.0
		if in[bestV] {
			sign = -1
		}
		in[bestV] = !in[bestV]
		score += bestGain
		for x, wx := range w[bestV*n : bestV*n+n] {
			g[x] += sign * wx
		}
	}
	return score
}

// Enumerate yields the empty clique and then every vertex set with at least two vertices, in
// increasing order of the bitmask (vertex v is bit v).
func (s *Cliques) Enumerate(yield func(y []int64) bool) error {
	if s.LogCount() > logmath.Log(MaxEnumerate)+1e-9 {
		return ErrTooLarge
	}
	y := make([]int64, s.n)
	for mask := uint64(0); mask < 1<<s.n; mask++ {
		if bits.OnesCount64(mask) == 1 {
			continue
		}
		for v := range y {
			y[v] = int64(mask >> v & 1)
		}
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// cliquesCov is the covariance of Cliques.
type cliquesCov struct{ s *Cliques }

// Dim returns d.
func (o cliquesCov) Dim() int { return o.s.d }

// At returns the entry S[i, j].
func (o cliquesCov) At(i, j int) float64 {
	rho := o.s.rho
	a, b := pairAt(o.s.n, i)
	c, d := pairAt(o.s.n, j)
	union := 4
	if a == c || a == d {
		union--
	}
	if b == c || b == d {
		union--
	}
	return rho*math.Ldexp(1, -union) - rho*rho/16
}

// MulVec writes S·v into dst.
func (o cliquesCov) MulVec(dst, v []float64) {
	n, rho := o.s.n, o.s.rho
	sv := make([]float64, n)
	var sum float64
	e := 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			sv[a] += v[e]
			sv[b] += v[e]
			sum += v[e]
			e++
		}
	}
	common := (1 - rho) * sum
	e = 0
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			dst[e] = rho / 16 * (common + sv[a] + sv[b] + v[e])
			e++
		}
	}
}
