package space

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/combpred/combpred/core/logmath"
)

// cycleCounts holds the counting sums of cycles (length ≥ 3) on subsets of n vertices, each
// divided by its largest factorial so that it stays finite and exact to rounding for any n. With
// k = n − i the number of vertices off a cycle of length i:
//
//	t = Σ_{k=0}^{n−3} n / ((n−k)·k!)   directed cycles:  Σ_{i=3}^{n} C(n,i)(i−1)!          = (n−1)!·t
//	e = Σ_{k=0}^{n−3} 1/k!             through an arc:   Σ_{i=3}^{n} C(n−2,i−2)(i−2)!      = (n−2)!·e
//	                                   through a path:   Σ_{i=3}^{n} C(n−3,i−3)(i−3)!      = (n−3)!·e
//	f = Σ_{k=0}^{n−4} (n−3−k)/k!       through 2 arcs:   Σ_{i=4}^{n} C(n−4,i−4)(i−3)!      = (n−4)!·f
//
// (a cycle on i given vertices through a given arc, path u→v→w or two disjoint arcs is a cyclic
// order of i−1, i−2 or i−2 blocks). All are sums of positive terms that decay like 1/k!.
type cycleCounts struct {
	n       int
	t, e, f float64
	// lengthCDF[k] is P(at most k vertices off the cycle) for a uniform directed (or undirected)
	// cycle, so that the sampler picks the length with probability ∝ C(n,i)(i−1)!.
	lengthCDF []float64
}

func newCycleCounts(n int) cycleCounts {
	c := cycleCounts{n: n}
	terms := make([]float64, n-2)
	inv := 1.0 // 1/k!
	for k := 0; k <= n-3; k++ {
		if k > 0 {
			inv /= float64(k)
		}
		terms[k] = float64(n) / float64(n-k) * inv
		c.e += inv
		if k <= n-4 {
			c.f += float64(n-3-k) * inv
		}
	}
	for _, x := range terms {
		c.t += x
	}
	c.lengthCDF = make([]float64, n-2)
	var acc float64
	for k, x := range terms {
		acc += x
		c.lengthCDF[k] = acc / c.t
	}
	c.lengthCDF[n-3] = 1
	return c
}

// logDirected is log Σ_{i=3}^{n} C(n,i)(i−1)!, the log number of directed cycles.
func (c cycleCounts) logDirected() float64 { return permLogFactorial(c.n-1) + logmath.Log(c.t) }

// arcShare is the fraction of directed cycles that use a given arc u→v, Σ C(n−2,i−2)(i−2)! / |Y|.
// It is also the fraction of undirected cycles through a given edge.
func (c cycleCounts) arcShare() float64 { return c.e / (float64(c.n-1) * c.t) }

// pathShare is the fraction of directed cycles through a given path u→v→w; also the fraction of
// undirected cycles through the two edges uv and vw.
func (c cycleCounts) pathShare() float64 {
	return c.e / (float64(c.n-1) * float64(c.n-2) * c.t)
}

// twoArcShare is the fraction of directed cycles through two given disjoint arcs; an undirected
// cycle through two disjoint edges is a directed cycle through the first arc and either
// orientation of the second, so twice this fraction of directed cycles.
func (c cycleCounts) twoArcShare() float64 {
	if c.n < 4 {
		return 0
	}
	return c.f / (float64(c.n-1) * float64(c.n-2) * float64(c.n-3) * c.t)
}

// cycleExactDirected is the number of directed cycles when it fits a uint64 (n ≤ 20), else false;
// Enumerate compares it with MaxEnumerate without rounding.
func cycleExactDirected(n int) (uint64, bool) {
	if n > 20 {
		return 0, false
	}
	var total uint64
	for i := 3; i <= n; i++ {
		// C(n,i)(i−1)! = n!/((n−i)!·i) = n(n−1)…(n−i+1)/i
		term := uint64(1)
		for j := n - i + 1; j <= n; j++ {
			term *= uint64(j)
		}
		total += term / uint64(i)
	}
	return total, true
}

// sample writes a uniform directed cycle as a successor row: the number of vertices off the cycle
// k with probability ∝ C(n,n−k)(n−k−1)!, then a uniform set of n−k vertices (partial Fisher–Yates),
// then a uniform cyclic order of them (Sattolo's algorithm).
func (c cycleCounts) sample(r *rand.Rand, y []int64) {
	n := c.n
	x := r.Float64()
	k := 0
	for k < n-3 && c.lengthCDF[k] <= x {
		k++
	}
	length := n - k
	// Scratch on the stack up to 64 vertices: the chains draw a uniform cycle per global proposal,
	// and a heap slice per draw kept the garbage collector busy for most of a sampled fit.
	var stack [128]int64
	verts := stack[:]
	if 2*n > len(stack) {
		verts = make([]int64, 2*n)
	}
	verts = verts[:2*n]
	cyc := verts[n:]
	for v := range n {
		verts[v] = int64(v)
	}
	for j := 0; j < length; j++ {
		m := j + r.IntN(n-j)
		verts[j], verts[m] = verts[m], verts[j]
	}
	copy(cyc, verts[:length])
	for j := length - 1; j > 0; j-- {
		m := r.IntN(j)
		cyc[j], cyc[m] = cyc[m], cyc[j]
	}
	for v := range y {
		y[v] = -1
	}
	for j := 0; j < length; j++ {
		y[verts[j]] = cyc[j]
	}
}

// cycleValidate checks that y is the successor row of one cycle of length ≥ 3 on n vertices,
// −1 marking vertices off the cycle, and returns the cycle's length.
func cycleValidate(n int, y []int64) (int, error) {
	if len(y) != n {
		return 0, fmt.Errorf("a cycle on %d vertices is a row of %d successors, got %d values", n, n, len(y))
	}
	for v, s := range y {
		if s == -1 {
			continue
		}
		if s < 0 || s >= int64(n) {
			return 0, fmt.Errorf("vertex %d's successor %d is out of range (want −1 for off the cycle, or a vertex in [0, %d))", v, s, n)
		}
		if s == int64(v) {
			return 0, fmt.Errorf("vertex %d is its own successor: a loop is not a cycle", v)
		}
	}
	pred := make([]int32, n)
	for v := range pred {
		pred[v] = -1
	}
	on := 0
	for v, s := range y {
		if s == -1 {
			continue
		}
		on++
		if y[s] == -1 {
			return 0, fmt.Errorf("vertex %d's successor %d is not on the cycle (its successor is −1)", v, s)
		}
		if pred[s] != -1 {
			return 0, fmt.Errorf("vertex %d is the successor of both %d and %d", s, pred[s], v)
		}
		pred[s] = int32(v)
	}
	if on == 0 {
		return 0, fmt.Errorf("no vertex is on the cycle (every successor is −1)")
	}
	// Every vertex on the cycle now has exactly one predecessor and one successor on it: y permutes
	// them, and it is one cycle when walking from any of them visits all.
	start := 0
	for y[start] == -1 {
		start++
	}
	length := 1
	for v := y[start]; v != int64(start); v = y[v] {
		length++
	}
	if length < on {
		cycles := 1
		seen := pred // reused: −2 marks visited vertices
		for v := y[start]; ; v = y[v] {
			seen[v] = -2
			if v == int64(start) {
				break
			}
		}
		for v, s := range y {
			if s == -1 || seen[v] == -2 {
				continue
			}
			cycles++
			for w := int64(v); seen[w] != -2; w = y[w] {
				seen[w] = -2
			}
		}
		return 0, fmt.Errorf("the row is %s cycles, not one", cycleCountWord(cycles))
	}
	if length < 3 {
		return 0, fmt.Errorf("cycle of length %d (%d → %d → %d); a cycle needs at least 3 vertices", length, start, y[start], start)
	}
	return length, nil
}

func cycleCountWord(k int) string {
	if k >= 2 && k <= 9 {
		return [...]string{"two", "three", "four", "five", "six", "seven", "eight", "nine"}[k-2]
	}
	return fmt.Sprint(k)
}

// cycleEnumerate calls yield with every directed cycle of length ≥ 3, as a successor row, subset by
// subset; within a subset the smallest vertex comes first and the others follow in every order.
// With undirected, only one orientation of each cycle is listed: the one where the smallest
// vertex's successor is smaller than its predecessor (the orientation cycleCanonical picks).
func cycleEnumerate(n int, undirected bool, yield func(y []int64) bool) {
	y := make([]int64, n)
	verts := make([]int64, 0, n)
	for mask := 1; mask < 1<<n; mask++ {
		if bits.OnesCount(uint(mask)) < 3 {
			continue
		}
		verts = verts[:0]
		for v := 0; v < n; v++ {
			if mask>>v&1 == 1 {
				verts = append(verts, int64(v))
			}
		}
		if !cyclePermuteTail(verts, 1, undirected, y, yield) {
			return
		}
	}
}

// cyclePermuteTail runs over the orders of verts[from:] (verts[0] fixed) and yields each as a
// cycle; it reports false when yield asked to stop.
func cyclePermuteTail(verts []int64, from int, undirected bool, y []int64, yield func(y []int64) bool) bool {
	if from == len(verts) {
		if undirected && verts[1] > verts[len(verts)-1] {
			return true
		}
		for v := range y {
			y[v] = -1
		}
		for j, v := range verts {
			y[v] = verts[(j+1)%len(verts)]
		}
		return yield(y)
	}
	for j := from; j < len(verts); j++ {
		verts[from], verts[j] = verts[j], verts[from]
		ok := cyclePermuteTail(verts, from+1, undirected, y, yield)
		verts[from], verts[j] = verts[j], verts[from]
		if !ok {
			return false
		}
	}
	return true
}

// cycleCanonical reverses the valid successor row y when needed so that the smallest vertex on
// the cycle has a smaller successor than predecessor: one row per undirected cycle.
func cycleCanonical(y []int64) {
	s := 0
	for y[s] == -1 {
		s++
	}
	pred := int64(s)
	for y[pred] != int64(s) {
		pred = y[pred]
	}
	if y[s] < pred {
		return
	}
	prev, v := int64(s), y[s]
	for v != int64(s) {
		next := y[v]
		y[v] = prev
		prev, v = v, next
	}
	y[s] = prev
}

// cycleBase is what the two cycle spaces share: n vertices with their cycle counts, the decoder
// mode and the decoders' scratch buffers.
type cycleBase struct {
	n      int
	counts cycleCounts
	mode   DecoderMode // DecoderApprox forces the approximate decoder at every n
	pool   sync.Pool   // *cycleBuf
}

// init sets up the base of the kind's space on n ≥ 3 vertices.
func (b *cycleBase) init(kind string, n int) error {
	if n < 3 {
		return fmt.Errorf("space: %s needs n_vertices ≥ 3, got %d", kind, n)
	}
	if err := checkSize(kind, "n_vertices", int64(n), pairDim(n), int64(n)); err != nil {
		return err
	}
	b.n, b.counts = n, newCycleCounts(n)
	b.pool.New = func() any { return &cycleBuf{} }
	return nil
}

// Params is [n], or [n, decoder mode] when the mode is not auto.
func (b *cycleBase) Params() []int64 { return modeParams(b.n, b.mode) }

func (b *cycleBase) setMode(m DecoderMode) { b.mode = m }

// Dim is n(n−1)/2, one coordinate per unordered pair of vertices.
func (b *cycleBase) Dim() int { return b.n * (b.n - 1) / 2 }

// Width is n, one successor per vertex.
func (b *cycleBase) Width() int { return b.n }
