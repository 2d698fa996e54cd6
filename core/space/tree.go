package space

import (
	"fmt"
)

// rootedTree is a validated rooted tree on the nodes 0..N−1, given by a parent array, with the
// orders and indices that the tree spaces (HierarchyPaths, Subtrees) share. It is immutable after
// construction and safe for concurrent use.
type rootedTree struct {
	parent []int // parent[v], −1 for the root
	root   int
	// pre lists the nodes in depth-first preorder, children by increasing id: every node comes
	// after its parent, and the subtree of v is the contiguous block pre[pos[v] : pos[v]+size[v]].
	pre   []int
	pos   []int
	size  []int
	depth []int // depth[root] = 0
	// The children of v, by increasing id, are child[childStart[v]:childStart[v+1]].
	childStart []int
	child      []int
}

// newRootedTree validates a parent array: exactly one node has parent −1 (the root), every other
// parent is a node in [0, N), and following parents from any node reaches the root (no cycle).
// A forest must be given a virtual root by the caller. Errors name the offending nodes and start
// with "space: <kind>: ".
// zeroBasedHint ends the refusals that a 1-based parent array meets (node 1's parent 1, or no −1:
// they were reported as a cycle alone, probe FJ).
const zeroBasedHint = "; node ids are 0-based, and the root's parent is −1 (its parent set empty in a DAG)"

func newRootedTree(kind string, parent []int64) (*rootedTree, error) {
	n := len(parent)
	if n == 0 {
		return nil, fmt.Errorf("space: %s: the parent array is empty; a tree needs at least one node", kind)
	}
	if err := checkSize(kind, "len(parent)", int64(n), int64(n), int64(n)); err != nil {
		return nil, err
	}
	if err := checkNodeTables(kind, int64(n), int64(n)); err != nil {
		return nil, err
	}
	t := &rootedTree{parent: make([]int, n), root: -1}
	for v, p := range parent {
		switch {
		case p == -1:
			if t.root >= 0 {
				return nil, fmt.Errorf("space: %s: two roots: %d and %d (exactly one node has parent −1; give a forest a virtual root)", kind, t.root, v)
			}
			t.root = v
		case p < 0 || p >= int64(n):
			return nil, fmt.Errorf("space: %s: node %d's parent %d is out of range (want −1 for the root or a node in [0, %d))", kind, v, p, n)
		case p == int64(v):
			return nil, fmt.Errorf("space: %s: parent array has a cycle through node %d (it is its own parent)%s", kind, v, zeroBasedHint)
		}
		t.parent[v] = int(p)
	}
	if t.root < 0 {
		// Every node has a parent, so following parents from node 0 must run into a cycle.
		return nil, fmt.Errorf("space: %s: no root: no node has parent −1, so the parent array has a cycle through node %d%s", kind, cycleNode(t.parent, 0), zeroBasedHint)
	}

	// Children lists by counting sort: visiting v in increasing order keeps each list sorted.
	t.childStart = make([]int, n+1)
	for v, p := range t.parent {
		if v != t.root {
			t.childStart[p+1]++
		}
	}
	for v := 0; v < n; v++ {
		t.childStart[v+1] += t.childStart[v]
	}
	t.child = make([]int, n-1)
	fill := append([]int(nil), t.childStart[:n]...)
	for v, p := range t.parent {
		if v != t.root {
			t.child[fill[p]] = v
			fill[p]++
		}
	}

	// Iterative depth-first preorder from the root; nodes never reached lie on or above a cycle.
	t.pre = make([]int, 0, n)
	t.pos = make([]int, n)
	t.depth = make([]int, n)
	stack := []int{t.root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		t.pos[v] = len(t.pre)
		t.pre = append(t.pre, v)
		cs := t.children(v)
		for i := len(cs) - 1; i >= 0; i-- { // pushed in reverse so that the smallest id pops first
			t.depth[cs[i]] = t.depth[v] + 1
			stack = append(stack, cs[i])
		}
	}
	if len(t.pre) < n {
		seen := make([]bool, n)
		for _, v := range t.pre {
			seen[v] = true
		}
		for v := 0; v < n; v++ {
			if !seen[v] {
				return nil, fmt.Errorf("space: %s: parent array has a cycle through node %d", kind, cycleNode(t.parent, v))
			}
		}
	}
	t.size = make([]int, n)
	for i := n - 1; i >= 0; i-- {
		v := t.pre[i]
		t.size[v]++
		if v != t.root {
			t.size[t.parent[v]] += t.size[v]
		}
	}
	return t, nil
}

// cycleNode follows parents from start, which must not reach a root, and returns the smallest
// node on the cycle it runs into.
func cycleNode(parent []int, start int) int {
	seen := map[int]bool{}
	v := start
	for !seen[v] {
		seen[v] = true
		v = parent[v]
	}
	best := v
	for w := parent[v]; w != v; w = parent[w] {
		best = min(best, w)
	}
	return best
}

// n is the number of nodes.
func (t *rootedTree) n() int { return len(t.parent) }

// rootPathSums writes into a, for every node v, the sum of u over the path from the root to v.
func (t *rootedTree) rootPathSums(u, a []float64) {
	for _, v := range t.pre { // parents before children
		a[v] = u[v]
		if p := t.parent[v]; p >= 0 {
			a[v] += a[p]
		}
	}
}

// children returns the children of v by increasing id. The slice must not be modified.
func (t *rootedTree) children(v int) []int { return t.child[t.childStart[v]:t.childStart[v+1]] }

// isLeaf reports whether v has no children.
func (t *rootedTree) isLeaf(v int) bool { return t.childStart[v] == t.childStart[v+1] }

// ancestorOrSelf reports whether a lies on the path from the root to b (a = b included).
func (t *rootedTree) ancestorOrSelf(a, b int) bool {
	return t.pos[a] <= t.pos[b] && t.pos[b] < t.pos[a]+t.size[a]
}

// lca returns the lowest common ancestor of a and b, in O(depth) time.
func (t *rootedTree) lca(a, b int) int {
	for t.depth[a] > t.depth[b] {
		a = t.parent[a]
	}
	for t.depth[b] > t.depth[a] {
		b = t.parent[b]
	}
	for a != b {
		a, b = t.parent[a], t.parent[b]
	}
	return a
}

// params returns the parent array as int64 values.
func (t *rootedTree) params() []int64 {
	p := make([]int64, len(t.parent))
	for v, q := range t.parent {
		p[v] = int64(q)
	}
	return p
}
