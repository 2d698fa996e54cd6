package space

import (
	"math"
	"math/bits"
	"slices"

	"github.com/combpred/combpred/core/cancel"
)

// cycleExactMax is the largest n whose cycles are decoded exactly: the Held–Karp DP holds about
// (n−1)·2^(n−1) floats (cycleDecodeVector; n·2^n in the portable cycleDecodeExact, 1.8 MB at
// n = 14) and takes a fraction of a millisecond there, more than doubling per vertex.
const cycleExactMax = 14

// cycleExactHardMax is the largest n decoded exactly on demand (DecoderExact): the DP then holds
// 18·2^18 floats (38 MiB) per concurrent decoding and takes a fraction of a second per row.
const cycleExactHardMax = 18

// cycleBuf is the scratch space of one Decode call of a cycle space.
type cycleBuf struct {
	w  []float64 // w[a·n+b]: the score of the arc a→b
	wt []float64 // w transposed (LogPartition: e^w)
	dp []float64
	ls cycleSearch

	// LogPartition's continuations, level rescalings, cycle sums per level and arc marginals
	back, scaleF, scaleB, closed, arcs []float64
}

// cycleDecodeExact writes a maximum-weight cycle of length ≥ 3 under arc weights w into y, by the
// Held–Karp dynamic programme: dp[mask·n+v] is the best path that starts at the smallest vertex s
// of mask, visits exactly mask and ends at v ≠ s. Fixing the start at the smallest vertex lists
// every cycle once per orientation instead of once per vertex.
//
// Each entry is pulled from the row of mask∖{v} with a branch-free max, so that the inner loop has
// no unpredictable branches and writes once; entries of vertices outside a mask are never read
// and need no initialisation. wt is w transposed, so that the weights into v are contiguous.
//
// Where the vector kernels run (haveBatch) and n ≤ cycleExactMax, it hands the row to
// cycleDecodeVector instead, whose table is about half as large and stays in L2 longer.
func cycleDecodeExact(n int, w []float64, buf *cycleBuf, y []int64) {
	if haveBatch && n <= cycleExactMax {
		cycleLaneWeights(n, w, permGrow(&buf.wt, n*n), 1)
		cycleDecodeVector(n, 1, buf, y)
		return
	}
	size := n << n
	if cap(buf.dp) < size {
		buf.dp = make([]float64, size)
	}
	dp := buf.dp[:size]
	wt := permGrow(&buf.wt, n*n)
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			wt[b*n+a] = w[a*n+b]
		}
	}
	full := 1<<n - 1
	best, bestMask, bestLast := math.Inf(-1), 0, 0
	for mask := 1; mask <= full; mask++ {
		s := bits.TrailingZeros(uint(mask))
		inner := mask &^ (1 << s) // possible ends
		if inner == 0 {
			continue
		}
		closable := bits.OnesCount(uint(mask)) >= 3
		row := dp[mask*n : mask*n+n]
		for rest := inner; rest != 0; rest &= rest - 1 {
			v := bits.TrailingZeros(uint(rest))
			prev := inner &^ (1 << v) // ends of mask∖{v}
			var val float64
			if prev == 0 {
				val = w[s*n+v]
			} else {
				prow := dp[(mask&^(1<<v))*n:]
				into := wt[v*n : v*n+n]
				// Two running maxima, so that the latency of max does not chain through every
				// candidate.
				v0, v1 := math.Inf(-1), math.Inf(-1)
				for p := prev; p != 0; {
					l := bits.TrailingZeros(uint(p))
					p &= p - 1
					v0 = max(v0, prow[l]+into[l])
					if p == 0 {
						break
					}
					l = bits.TrailingZeros(uint(p))
					p &= p - 1
					v1 = max(v1, prow[l]+into[l])
				}
				val = max(v0, v1)
			}
			row[v] = val
			if closable {
				if c := val + w[v*n+s]; c > best {
					best, bestMask, bestLast = c, mask, v
				}
			}
		}
	}
	// Walk back: the max picked one of the sums it compared, so recomputing them finds it exactly.
	for v := range y {
		y[v] = -1
	}
	s := bits.TrailingZeros(uint(bestMask))
	y[bestLast] = int64(s)
	mask, last := bestMask, bestLast
	for last != s {
		prevMask := mask &^ (1 << last)
		prev := s
		if ends := prevMask &^ (1 << s); ends != 0 {
			target := dp[mask*n+last]
			for p := ends; p != 0; p &= p - 1 {
				l := bits.TrailingZeros(uint(p))
				if dp[prevMask*n+l]+wt[last*n+l] == target {
					prev = l
					break
				}
			}
		}
		y[prev] = int64(last)
		mask, last = prevMask, prev
	}
}

// cycleSearch improves a cycle by local moves under arc weights w (directed; symmetric w gives
// undirected cycles). Every accepted move raises the score by more than tol, so it ends.
type cycleSearch struct {
	n          int
	w          []float64
	tol        float64
	succ, pred []int // −1 off the cycle
	length     int
	order      []int // the cycle from some vertex, for segment reversals
	fwd, bwd   []float64
	// stop, when set, ends run after the pass under way: up to 50n + 100 passes of O(n²) each
	// made one row of UndirectedCycles(2000) deaf to Ctrl-C for 43 s (probe AE).
	stop *cancel.Flag
}

func (c *cycleSearch) reset(n int, w []float64, tol float64) {
	c.n, c.w, c.tol = n, w, tol
	c.succ = permGrowInt(&c.succ, n)
	c.pred = permGrowInt(&c.pred, n)
	c.order = permGrowInt(&c.order, n)
	c.fwd = permGrow(&c.fwd, n+1)
	c.bwd = permGrow(&c.bwd, n+1)
}

// load sets the cycle to verts in order (verts[last] → verts[0] closes it).
func (c *cycleSearch) load(verts []int) {
	for v := range c.succ {
		c.succ[v], c.pred[v] = -1, -1
	}
	for j, v := range verts {
		nx := verts[(j+1)%len(verts)]
		c.succ[v], c.pred[nx] = nx, v
	}
	c.length = len(verts)
}

func (c *cycleSearch) score() float64 {
	var f float64
	for v, s := range c.succ {
		if s >= 0 {
			f += c.w[v*c.n+s]
		}
	}
	return f
}

// reverse turns the cycle around; for antisymmetric weights that negates its score.
func (c *cycleSearch) reverse() { c.succ, c.pred = c.pred, c.succ }

func (c *cycleSearch) write(y []int64) {
	for v, s := range c.succ {
		y[v] = int64(s)
	}
}

// run applies improving moves until none gains more than tol: insert a vertex into an arc,
// remove one, replace one by an outside vertex, move one elsewhere on the cycle, reverse a
// segment (2-opt). The pass limit only guards against pathological rounding. Within a pass 2-opt
// runs until it gains no more: at one reversal a pass, the greedy start tour of
// UndirectedCycles(1000) took 496 passes, each paying the O(n²) vertex moves again (2.5 s a row,
// now 1.25 s; 30 random rows at n = 16–300 reach local optima as good on average).
func (c *cycleSearch) run() {
	for pass := 0; pass < 50*c.n+100 && !c.stop.Stopped(); pass++ {
		improved := c.insertPass()
		improved = c.removePass() || improved
		improved = c.replacePass() || improved
		improved = c.movePass() || improved
		for k := 0; c.twoOptPass(pass+k) && !c.stop.Stopped(); k++ {
			improved = true
		}
		if !improved {
			return
		}
	}
}

func (c *cycleSearch) insertPass() bool {
	n, w := c.n, c.w
	improved := false
	for x := 0; x < n; x++ {
		if c.succ[x] >= 0 {
			continue
		}
		best, at := c.tol, -1
		for a := 0; a < n; a++ {
			b := c.succ[a]
			if b < 0 {
				continue
			}
			if g := w[a*n+x] + w[x*n+b] - w[a*n+b]; g > best {
				best, at = g, a
			}
		}
		if at >= 0 {
			b := c.succ[at]
			c.succ[at], c.succ[x] = x, b
			c.pred[b], c.pred[x] = x, at
			c.length++
			improved = true
		}
	}
	return improved
}

func (c *cycleSearch) removePass() bool {
	n, w := c.n, c.w
	improved := false
	for v := 0; v < n && c.length > 3; v++ {
		b := c.succ[v]
		if b < 0 {
			continue
		}
		a := c.pred[v]
		if w[a*n+b]-w[a*n+v]-w[v*n+b] > c.tol {
			c.cut(v)
			improved = true
		}
	}
	return improved
}

// cut takes v off the cycle, joining its neighbours.
func (c *cycleSearch) cut(v int) {
	a, b := c.pred[v], c.succ[v]
	c.succ[a], c.pred[b] = b, a
	c.succ[v], c.pred[v] = -1, -1
	c.length--
}

func (c *cycleSearch) replacePass() bool {
	n, w := c.n, c.w
	if c.length == n {
		return false
	}
	improved := false
	for v := 0; v < n; v++ {
		b := c.succ[v]
		if b < 0 {
			continue
		}
		a := c.pred[v]
		old := w[a*n+v] + w[v*n+b]
		best, with := c.tol, -1
		for x := 0; x < n; x++ {
			if c.succ[x] >= 0 {
				continue
			}
			if g := w[a*n+x] + w[x*n+b] - old; g > best {
				best, with = g, x
			}
		}
		if with >= 0 {
			c.succ[v], c.pred[v] = -1, -1
			c.succ[a], c.succ[with] = with, b
			c.pred[b], c.pred[with] = with, a
			improved = true
		}
	}
	return improved
}

func (c *cycleSearch) movePass() bool {
	n, w := c.n, c.w
	improved := false
	for v := 0; v < n; v++ {
		b := c.succ[v]
		if b < 0 {
			continue
		}
		a := c.pred[v]
		gain := w[a*n+b] - w[a*n+v] - w[v*n+b]
		best, at := c.tol, -1
		// Arcs x→z of the cycle without v; the arc a→b it leaves behind would put v back.
		for x := 0; x < n; x++ {
			z := c.succ[x]
			if z < 0 || x == v || x == a {
				continue
			}
			if g := gain + w[x*n+v] + w[v*n+z] - w[x*n+z]; g > best {
				best, at = g, x
			}
		}
		if at >= 0 {
			c.cut(v)
			z := c.succ[at]
			c.succ[at], c.succ[v] = v, z
			c.pred[z], c.pred[v] = v, at
			c.length++
			improved = true
		}
	}
	return improved
}

// twoOptPass reverses the best segment order[i..j] of the cycle listed from a vertex that changes
// with the pass, so that segments through any vertex get their turn.
func (c *cycleSearch) twoOptPass(pass int) bool {
	n, w := c.n, c.w
	L := c.length
	if L < 4 {
		return false
	}
	start := -1
	for k, skip := 0, pass%L; k < n; k++ {
		if c.succ[k] >= 0 {
			if skip == 0 {
				start = k
				break
			}
			skip--
		}
	}
	o := c.order[:L]
	for j, v := 0, start; j < L; j, v = j+1, c.succ[v] {
		o[j] = v
	}
	c.fwd[0], c.bwd[0] = 0, 0
	for t := 0; t+1 < L; t++ {
		c.fwd[t+1] = c.fwd[t] + w[o[t]*n+o[t+1]]
		c.bwd[t+1] = c.bwd[t] + w[o[t+1]*n+o[t]]
	}
	best, bi, bj := c.tol, -1, -1
	for i := 1; i < L-1; i++ {
		a, ci := o[i-1], o[i]
		for j := i + 1; j < L; j++ {
			cj, b := o[j], o[(j+1)%L]
			g := w[a*n+cj] + (c.bwd[j] - c.bwd[i]) + w[ci*n+b] -
				w[a*n+ci] - (c.fwd[j] - c.fwd[i]) - w[cj*n+b]
			if g > best {
				best, bi, bj = g, i, j
			}
		}
	}
	if bi < 0 {
		return false
	}
	slices.Reverse(o[bi : bj+1])
	for j, v := range o {
		nx := o[(j+1)%L]
		c.succ[v], c.pred[nx] = nx, v
	}
	return true
}

// cycleStarts calls try with two starting cycles, cheap to build and different in kind so that
// the local search explores both short and long cycles: the triangle closing the heaviest arc
// through its best third vertex, and the greedy tour through all vertices that leaves each vertex
// by its heaviest arc to an unvisited one, starting where the heaviest arc starts.
func cycleStarts(n int, w []float64, scratch []int, try func(verts []int)) {
	a, b := 0, 1
	for u := 0; u < n; u++ {
		for v := 0; v < n; v++ {
			if u != v && w[u*n+v] > w[a*n+b] {
				a, b = u, v
			}
		}
	}
	x, bx := -1, math.Inf(-1)
	for v := 0; v < n; v++ {
		if v != a && v != b {
			if g := w[b*n+v] + w[v*n+a]; g > bx {
				x, bx = v, g
			}
		}
	}
	try([]int{a, b, x})
	tour := scratch[:0]
	visited := make([]bool, n)
	for v := a; v >= 0; {
		tour = append(tour, v)
		visited[v] = true
		next, bn := -1, math.Inf(-1)
		for z := 0; z < n; z++ {
			if !visited[z] && w[v*n+z] > bn {
				next, bn = z, w[v*n+z]
			}
		}
		v = next
	}
	try(tour)
}
