package space

import (
	"math"

	"github.com/combpred/combpred/core/cancel"
)

// closureSolver finds a maximum-weight closure of a DAG, a node set that holds the parents of its
// every node, by a minimum s–t cut (Picard 1976): the source feeds every node of positive weight
// with capacity w_v, every node of negative weight drains into the sink with capacity −w_v, and
// each node points to its parents with infinite capacity, so that a finite cut never keeps a node
// on the source side without its parents. The source side of a minimum cut is a closure of weight
// Σ_{w_v > 0} w_v − (cut), the largest there is. The flow is Dinic's (blocking flows on BFS level
// graphs), O(V²E) in the worst case and far less on taxonomies. One solver is reused by one
// goroutine at a time.
type closureSolver struct {
	n     int // nodes of the DAG; the source is n, the sink n+1
	head  []int
	next  []int
	to    []int
	cap   []float64
	level []int
	iter  []int
	queue []int
	stack []int
}

// newClosureSolver builds the network's arcs for g (their capacities are set per solve).
func newClosureSolver(g *rootedDAG) *closureSolver {
	n := g.n()
	c := &closureSolver{n: n, head: make([]int, n+2), level: make([]int, n+2), iter: make([]int, n+2)}
	for i := range c.head {
		c.head[i] = -1
	}
	for v, ps := range g.parents {
		for _, p := range ps {
			c.arc(v, p)
		}
	}
	for v := 0; v < n; v++ {
		c.arc(n, v)   // source → v
		c.arc(v, n+1) // v → sink
	}
	return c
}

// arc adds the arc a → b and its reverse (capacities 0 until reset).
func (c *closureSolver) arc(a, b int) {
	for _, e := range [2][2]int{{a, b}, {b, a}} {
		c.to = append(c.to, e[1])
		c.cap = append(c.cap, 0)
		c.next = append(c.next, c.head[e[0]])
		c.head[e[0]] = len(c.to) - 1
	}
}

// augmentsPerStop is how many augmenting paths solve pushes between two looks at its stop flag.
const augmentsPerStop = 256

// solve writes into in the indicator of a maximum-weight closure containing root under the node
// weights w (finite), and returns its weight. Once stop is set (nil: never) it ends the flow early
// and writes the closure of the flow so far: the nodes the source reaches in the residual graph
// always hold their parents (the parent arcs' capacity is infinite), though not the heaviest set.
func (c *closureSolver) solve(g *rootedDAG, w []float64, in []bool, stop *cancel.Flag) float64 {
	n := c.n
	// Reset capacities: arcs were added in order (parent arcs, then source/sink pairs per node).
	k := 0
	for _, ps := range g.parents {
		for range ps {
			c.cap[k], c.cap[k+1] = math.Inf(1), 0
			k += 2
		}
	}
	var positive float64
	for v := 0; v < n; v++ {
		wv := w[v]
		if v == g.root {
			wv = math.Inf(1) // every structure holds the root
		}
		c.cap[k], c.cap[k+1], c.cap[k+2], c.cap[k+3] = 0, 0, 0, 0
		if wv > 0 {
			c.cap[k] = wv
			if v != g.root {
				positive += wv
			}
		} else if wv < 0 {
			c.cap[k+2] = -wv
		}
		k += 4
	}
	// Flows below this are rounding residues of capacities of the scale of the weights.
	eps := 1e-12 * math.Max(positive, 1e-300)
	for !stop.Stopped() && c.bfs(eps) {
		copy(c.iter, c.head)
		for i := 1; c.augment(eps) > 0; i++ {
			if i%augmentsPerStop == 0 && stop.Stopped() {
				break
			}
		}
	}
	// The source side of the cut: nodes still reachable from the source in the residual graph.
	clear(in)
	for i := range c.level {
		c.level[i] = -1
	}
	c.queue = append(c.queue[:0], n)
	c.level[n] = 0
	for i := 0; i < len(c.queue); i++ {
		a := c.queue[i]
		for e := c.head[a]; e >= 0; e = c.next[e] {
			if b := c.to[e]; c.cap[e] > eps && c.level[b] < 0 {
				c.level[b] = 0
				c.queue = append(c.queue, b)
			}
		}
	}
	var total float64
	for v := 0; v < n; v++ {
		if c.level[v] >= 0 {
			in[v] = true
			total += w[v]
		}
	}
	return total
}

// bfs labels the level graph from the source; false when the sink is unreachable.
func (c *closureSolver) bfs(eps float64) bool {
	for i := range c.level {
		c.level[i] = -1
	}
	c.queue = append(c.queue[:0], c.n)
	c.level[c.n] = 0
	for i := 0; i < len(c.queue); i++ {
		a := c.queue[i]
		for e := c.head[a]; e >= 0; e = c.next[e] {
			if b := c.to[e]; c.cap[e] > eps && c.level[b] < 0 {
				c.level[b] = c.level[a] + 1
				c.queue = append(c.queue, b)
			}
		}
	}
	return c.level[c.n+1] >= 0
}

// augment pushes flow along one source–sink path of the level graph (iteratively, so that deep
// DAGs cannot overflow the goroutine stack) and returns the amount, 0 when the blocking flow is
// complete.
func (c *closureSolver) augment(eps float64) float64 {
	src, sink := c.n, c.n+1
	c.stack = c.stack[:0] // arcs of the current path
	a := src
	for a != sink {
		advanced := false
		for ; c.iter[a] >= 0; c.iter[a] = c.next[c.iter[a]] {
			e := c.iter[a]
			if b := c.to[e]; c.cap[e] > eps && c.level[b] == c.level[a]+1 {
				c.stack = append(c.stack, e)
				a = b
				advanced = true
				break
			}
		}
		if advanced {
			continue
		}
		// Dead end: retreat one arc and never try this node again in this phase.
		c.level[a] = -1
		if len(c.stack) == 0 {
			return 0
		}
		e := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		a = c.to[e^1]
		c.iter[a] = c.next[c.iter[a]]
	}
	f := math.Inf(1)
	for _, e := range c.stack {
		f = math.Min(f, c.cap[e])
	}
	for _, e := range c.stack {
		c.cap[e] -= f
		c.cap[e^1] += f
	}
	return f
}
