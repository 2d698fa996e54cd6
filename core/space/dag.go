package space

import (
	"fmt"
	"slices"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
)

// MaxDAGAncestry bounds Σ_v |anc*(v)|, the ancestor sets (each node with all its ancestors through
// every parent) that a DAG space holds, and as many descendant entries: 4 bytes an entry each, 2 GiB
// at the bound (and the memory budget applies below it). Taxonomies such as
// the Gene Ontology have tens of ancestors per node; a DAG near the bound is a long chain with
// shortcuts, for which single-path spaces are not the natural model anyway.
const MaxDAGAncestry = 1 << 28

// rootedDAG is a validated directed acyclic graph on the nodes 0..N−1 with exactly one root (the
// only node without parents), given as parent sets, with the ancestor and descendant sets of every
// node. Every node is a descendant of the root: following parents from any node cannot cycle, so
// it ends at a node without parents, the root. Immutable after construction and safe for
// concurrent use.
type rootedDAG struct {
	parents [][]int
	root    int
	topo    []int // parents before children
	// anc[v] is anc*(v): v and all its ancestors, increasing ids.
	anc [][]int32
	// desc[descOff[v]:descOff[v+1]] is desc*(v): v and all its descendants, increasing ids.
	descOff  []int
	desc     []int32
	nChild   []int
	encoding []int64 // the parameters that rebuilt it (params)
}

// parseDAG reads parent sets from params = [N, k₀, parents of 0 …, k₁, parents of 1 …, …] and
// validates them; errors name the node and start with "space: <kind>: ".
func parseDAG(kind string, params []int64, stop *cancel.Flag) (*rootedDAG, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("space: %s: no parameters; want the number of nodes N followed by, per node, its number of parents and their ids", kind)
	}
	n64 := params[0]
	if n64 < 1 {
		return nil, fmt.Errorf("space: %s: the DAG has %d nodes; it needs at least one, the root", kind, n64)
	}
	if err := checkSize(kind, "len(parents)", n64, n64, 1); err != nil {
		return nil, err
	}
	if err := checkNodeTables(kind, n64, int64(len(params))); err != nil {
		return nil, err
	}
	n := int(n64)
	if int64(len(params)-1) < n64 {
		return nil, fmt.Errorf("space: %s: %d parameters after N = %d cannot hold a parent count for every node", kind, len(params)-1, n)
	}
	g := &rootedDAG{parents: make([][]int, n), root: -1, nChild: make([]int, n), encoding: slices.Clone(params)}
	pos := 1
	seen := make([]int, n) // seen[p] = v+1 when p was listed as a parent of v
	for v := 0; v < n; v++ {
		if pos >= len(params) {
			return nil, fmt.Errorf("space: %s: the parameters end before node %d's parent count", kind, v)
		}
		k := params[pos]
		pos++
		if k < 0 || k > int64(len(params)-pos) {
			return nil, fmt.Errorf("space: %s: node %d has a parent count of %d, but %d parameters remain", kind, v, k, len(params)-pos)
		}
		if k == 0 {
			if g.root >= 0 {
				return nil, fmt.Errorf("space: %s: two roots: nodes %d and %d have no parents (exactly one node has none; give several a virtual root)", kind, g.root, v)
			}
			g.root = v
		}
		ps := make([]int, k)
		for i := range ps {
			p := params[pos]
			pos++
			switch {
			case p < 0 || p >= n64:
				return nil, fmt.Errorf("space: %s: node %d's parent %d is out of range [0, %d)", kind, v, p, n)
			case p == int64(v):
				return nil, fmt.Errorf("space: %s: node %d is its own parent%s", kind, v, zeroBasedHint)
			case seen[p] == v+1:
				return nil, fmt.Errorf("space: %s: node %d lists parent %d twice", kind, v, p)
			}
			seen[p] = v + 1
			ps[i] = int(p)
			g.nChild[p]++
		}
		slices.Sort(ps)
		g.parents[v] = ps
	}
	if pos != len(params) {
		return nil, fmt.Errorf("space: %s: %d parameters left over after the parents of all %d nodes", kind, len(params)-pos, n)
	}
	if g.root < 0 {
		return nil, fmt.Errorf("space: %s: no root: every node has a parent, so the graph has a cycle", kind)
	}
	if err := g.order(kind); err != nil {
		return nil, err
	}
	return g, g.ancestry(kind, stop)
}

// order fills topo by Kahn's algorithm, or names a node on a cycle.
func (g *rootedDAG) order(kind string) error {
	n := len(g.parents)
	children := make([][]int, n)
	waiting := make([]int, n)
	for v, ps := range g.parents {
		waiting[v] = len(ps)
		for _, p := range ps {
			children[p] = append(children[p], v)
		}
	}
	g.topo = make([]int, 0, n)
	g.topo = append(g.topo, g.root)
	for i := 0; i < len(g.topo); i++ {
		for _, c := range children[g.topo[i]] {
			if waiting[c]--; waiting[c] == 0 {
				g.topo = append(g.topo, c)
			}
		}
	}
	if len(g.topo) < n {
		for v := range waiting {
			if waiting[v] > 0 {
				return fmt.Errorf("space: %s: the parent sets have a cycle: node %d is its own ancestor or below such a cycle", kind, v)
			}
		}
	}
	return nil
}

// ancestry builds anc* and desc* in topological order, refusing ancestries above MaxDAGAncestry
// or, as they grow, above the memory budget. Each set is gathered in one scratch buffer and kept
// as an exact-size copy: no append slack and no second flat copy, so the ancestries take 4 bytes
// an entry, and desc* as much again.
func (g *rootedDAG) ancestry(kind string, stop *cancel.Flag) error {
	n := len(g.parents)
	g.anc = make([][]int32, n)
	mark := make([]int, n)
	var scratch []int32
	total, checked := 0, 0 // entries so far, and when the budget was last checked
	for _, v := range g.topo {
		// a node merges its parents' sets: in-degree × entries, 30 s on 22,000 nodes of 100
		// parents each, which a Ctrl-C waited for (probe CV)
		if stop.Stopped() {
			return stop.Err()
		}
		scratch = append(scratch[:0], int32(v))
		mark[v] = v + 1
		for _, p := range g.parents[v] {
			for _, a := range g.anc[p] {
				if mark[a] != v+1 {
					mark[a] = v + 1
					scratch = append(scratch, a)
				}
			}
		}
		slices.Sort(scratch)
		g.anc[v] = slices.Clone(scratch)
		if total += len(scratch); total > MaxDAGAncestry {
			return fmt.Errorf("space: %s: the ancestor sets of the DAG's nodes hold more than %d entries in all (at node %d); this space keeps them in memory", kind, MaxDAGAncestry, v)
		}
		if total > 2*checked && total > 1<<16 {
			// what the ancestries would take if they doubled from here, with as many descendants
			checked = total
			if err := budget.Check(fmt.Sprintf("the ancestor sets of the %s space's DAG (%d nodes; %d entries by node %d)", kind, n, total, v),
				budget.Mul(4, int64(total), 4)); err != nil {
				return err
			}
		}
	}
	g.descOff = make([]int, n+1)
	for _, set := range g.anc {
		for _, a := range set {
			g.descOff[a+1]++
		}
	}
	for v := 0; v < n; v++ {
		g.descOff[v+1] += g.descOff[v]
	}
	g.desc = make([]int32, total)
	fill := slices.Clone(g.descOff[:n])
	for v, set := range g.anc { // increasing v keeps every descendant list sorted
		for _, a := range set {
			g.desc[fill[a]] = int32(v)
			fill[a]++
		}
	}
	return nil
}

func (g *rootedDAG) n() int                    { return len(g.parents) }
func (g *rootedDAG) ancestors(v int) []int32   { return g.anc[v] }
func (g *rootedDAG) descendants(v int) []int32 { return g.desc[g.descOff[v]:g.descOff[v+1]] }
func (g *rootedDAG) isLeaf(v int) bool         { return g.nChild[v] == 0 }

// ancestorOrSelf reports whether a ∈ anc*(v).
func (g *rootedDAG) ancestorOrSelf(a, v int) bool {
	_, found := slices.BinarySearch(g.ancestors(v), int32(a))
	return found
}
