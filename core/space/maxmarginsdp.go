package space

import (
	"math"
	"slices"
)

// maxMarginer is a space whose max-marginal margins (MaxMarginalMargins) of one score row come
// from one dynamic programme over all coordinates at once, in O(Dim()) time, instead of 2·Dim()
// decodes: a tree or separable structure lets the best structure with a coordinate on and the
// best with it off be read off sums computed once (bottom-up for what lies below a node, top-down
// for what lies outside it).
type maxMarginer interface {
	// maxMargins writes the margins of the score row u into out. dir holds the pins (0 free, +1
	// held on, −1 held off); u's pinned entries are 0. sc is one worker's scratch, reused across rows.
	maxMargins(u []float64, dir []int8, out []float64, sc *marginScratch)
}

// lexValue is the value of a (partial) structure in a max-marginal programme with pins: k counts
// the pinned-on coordinates it holds and s is its score over the free ones. Values compare by k
// first, so that a structure holding every pin beats any that misses one whatever the scores, and
// a structure with a pinned-off coordinate on has no value at all (k < 0): a pin is a constraint,
// not a large score, and no push has to outweigh the others.
type lexValue struct {
	k int
	s float64
}

// noStructure is the value of an empty choice: no structure satisfies the constraints.
var noStructure = lexValue{k: math.MinInt}

func (a lexValue) plus(b lexValue) lexValue {
	if a.k < 0 || b.k < 0 {
		return noStructure
	}
	return lexValue{a.k + b.k, a.s + b.s}
}

func (a lexValue) better(b lexValue) bool { return a.k > b.k || (a.k == b.k && a.s > b.s) }

func maxLex(a, b lexValue) lexValue {
	if b.better(a) {
		return b
	}
	return a
}

// coordValue is what having coordinate j on adds to a structure's value.
func coordValue(u []float64, dir []int8, j int) lexValue {
	switch {
	case dir[j] > 0:
		return lexValue{k: 1}
	case dir[j] < 0:
		return noStructure
	}
	return lexValue{s: u[j]}
}

// lexMargin is the margin between the best structure with a coordinate on and the best with it
// off, of which only those holding all pinnedOn pins count: ±Inf when one side has none (the
// coordinate is constant over the allowed structures).
func lexMargin(on, off lexValue, pinnedOn int) float64 {
	onOK, offOK := on.k == pinnedOn, off.k == pinnedOn
	switch {
	case onOK && offOK:
		return on.s - off.s
	case onOK:
		return math.Inf(1)
	}
	return math.Inf(-1)
}

func countOn(dir []int8) int {
	var n int
	for _, v := range dir {
		if v > 0 {
			n++
		}
	}
	return n
}

// marginScratch is the memory a max-marginal programme reuses from one score row to the next.
type marginScratch struct {
	lex  []lexValue
	ints []int
	cand []int
}

// values returns n lexValues of scratch (contents unspecified).
func (sc *marginScratch) values(n int) []lexValue {
	if cap(sc.lex) < n {
		sc.lex = make([]lexValue, n)
	}
	return sc.lex[:n]
}

// zeroInts returns n ints of scratch set to zero.
func (sc *marginScratch) zeroInts(n int) []int {
	if cap(sc.ints) < n {
		sc.ints = make([]int, n)
	}
	sc.ints = sc.ints[:n]
	clear(sc.ints)
	return sc.ints
}

// maxMargins: the labels are chosen independently, so a label's margin is its own score.
func (s *Multilabel) maxMargins(u []float64, dir []int8, out []float64, _ *marginScratch) {
	for j, v := range u {
		switch {
		case dir[j] > 0:
			out[j] = math.Inf(1)
		case dir[j] < 0:
			out[j] = math.Inf(-1)
		default:
			out[j] = v
		}
	}
}

// maxMargins: the best structure with class j is j itself; the best without it is the best of
// the others, read from the two best classes.
func (s *Multiclass) maxMargins(u []float64, dir []int8, out []float64, _ *marginScratch) {
	first, second := noStructure, noStructure
	best := -1
	for j := range u {
		v := coordValue(u, dir, j)
		switch {
		case v.better(first):
			first, second, best = v, first, j
		case v.better(second):
			second = v
		}
	}
	on := countOn(dir)
	for j := range u {
		off := first
		if j == best {
			off = second
		}
		out[j] = lexMargin(coordValue(u, dir, j), off, on)
	}
}

// maxMargins: in[v], the best subtree of T_v that holds v, bottom-up; up[v], the best value of
// the rest of a structure that holds v, top-down; off[v], the best structure without v: its
// parent off, or its parent on and v left out. Sums over siblings are taken from both ends so that
// no value is ever subtracted (a structure-less −∞ cannot be taken back out of a sum).
func (s *Subtrees) maxMargins(u []float64, dir []int8, out []float64, sc *marginScratch) {
	t := s.t
	n := t.n()
	b := sc.values(3 * n)
	in, up, off := b[:n], b[n:2*n], b[2*n:]
	var zero lexValue // a child left out
	for i := n - 1; i >= 0; i-- {
		v := t.pre[i]
		val := coordValue(u, dir, v)
		for _, c := range t.child[t.childStart[v]:t.childStart[v+1]] {
			val = val.plus(maxLex(zero, in[c]))
		}
		in[v] = val
	}
	up[t.root], off[t.root] = zero, noStructure
	for _, v := range t.pre {
		kids := t.child[t.childStart[v]:t.childStart[v+1]]
		acc := up[v].plus(coordValue(u, dir, v))
		for _, c := range kids { // v on, and the siblings before c
			up[c] = acc
			acc = acc.plus(maxLex(zero, in[c]))
		}
		acc = zero
		for i := len(kids) - 1; i >= 0; i-- { // and the siblings after it
			c := kids[i]
			up[c] = up[c].plus(acc)
			acc = acc.plus(maxLex(zero, in[c]))
			off[c] = maxLex(off[v], up[c])
		}
	}
	on := countOn(dir)
	for v := 0; v < n; v++ {
		out[v] = lexMargin(in[v].plus(up[v]), off[v], on)
	}
}

// maxMargins: a structure is a node z and holds v iff z lies in v's subtree, a contiguous block
// of the preorder; so the best with v on is the block's best path value, the best with v off the
// best outside the block, from prefix and suffix maxima.
func (s *HierarchyPaths) maxMargins(u []float64, dir []int8, out []float64, sc *marginScratch) {
	t := s.t
	n := t.n()
	b := sc.values(3*n + 2)
	path, pre, suf := b[:n], b[n:2*n+1], b[2*n+1:]
	for _, v := range t.pre {
		path[v] = coordValue(u, dir, v)
		if v != t.root {
			path[v] = path[v].plus(path[t.parent[v]])
		}
	}
	cand := func(i int) lexValue { // the path to the i-th node in preorder, if it is a structure
		if v := t.pre[i]; s.isCand[v] {
			return path[v]
		}
		return noStructure
	}
	pre[0], suf[n] = noStructure, noStructure
	for i := 0; i < n; i++ {
		pre[i+1] = maxLex(pre[i], cand(i))
	}
	for i := n - 1; i >= 0; i-- {
		suf[i] = maxLex(suf[i+1], cand(i))
	}
	// the best in v's block, bottom-up; path is free again once read
	in := path
	for i := n - 1; i >= 0; i-- {
		v := t.pre[i]
		best := cand(i)
		for _, c := range t.child[t.childStart[v]:t.childStart[v+1]] {
			best = maxLex(best, in[c])
		}
		in[v] = best
	}
	on := countOn(dir)
	for v := 0; v < n; v++ {
		start := t.pos[v]
		out[v] = lexMargin(in[v], maxLex(pre[start], suf[start+t.size[v]]), on)
	}
}

// maxMargins: a structure is a node z and holds v iff z ∈ desc*(v), so the best with v on is the
// best structure among v's descendants. The best with v off is the first structure, in order of
// value, outside them: marking desc*(v) and walking the sorted structures takes at most
// |desc*(v)| + 1 steps, so a row costs O(Σ_v |desc*(v)|) after one sort, as much as one decode.
func (s *DAGPaths) maxMargins(u []float64, dir []int8, out []float64, sc *marginScratch) {
	g := s.g
	n := g.n()
	val := sc.values(n)
	for _, z := range s.cand {
		v := lexValue{}
		for _, a := range g.ancestors(z) {
			v = v.plus(coordValue(u, dir, int(a)))
		}
		val[z] = v
	}
	order := append(sc.cand[:0], s.cand...)
	sc.cand = order
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case val[a].better(val[b]):
			return -1
		case val[b].better(val[a]):
			return 1
		}
		return 0
	})
	mark := sc.zeroInts(n) // mark[z] = v+1 while v's descendants are marked
	on := countOn(dir)
	for v := 0; v < n; v++ {
		best := noStructure
		for _, z := range g.descendants(v) {
			mark[z] = v + 1
			if s.isCand[z] {
				best = maxLex(best, val[z])
			}
		}
		off := noStructure
		for _, z := range order {
			if mark[z] != v+1 {
				off = val[z]
				break
			}
		}
		out[v] = lexMargin(best, off, on)
	}
}
