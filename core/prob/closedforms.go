package prob

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// closedForm returns log Z(u) and, when mean is not nil, E[ψ], for the spaces where Z factorises
// or has a polynomial recursion. ok is false for the other spaces.
func closedForm(sp space.Space, u, mean []float64) (logZ float64, ok bool) {
	switch s := sp.(type) {
	case *space.Multiclass:
		return multiclassForm(u, mean), true
	case *space.Multilabel:
		return multilabelForm(u, mean), true
	case *space.Ordinal:
		return ordinalForm(u, mean), true
	case *space.HierarchyPaths:
		p := s.Params()
		return pathsForm(p[1:], p[0] == 1, u, mean), true
	case *space.Subtrees:
		return subtreesForm(s.Params(), u, mean), true
	case *space.Tournaments:
		return tournamentsForm(u, mean), true
	case *space.KSubsets:
		return ksubsetsForm(int(s.Params()[1]), u, mean), true
	}
	if part, ok := space.PartitionOf(sp); ok {
		return part.LogPartition(u, mean), true
	}
	return 0, false
}

// multiclassForm: Z = Σ_j e^{u_j}, E[ψ] = softmax(u).
func multiclassForm(u, mean []float64) float64 {
	lz := logmath.SumExp(u)
	for j := range mean {
		mean[j] = math.Exp(u[j] - lz)
	}
	return lz
}

// multilabelForm: labels are independent, Z = Π_j (1 + e^{u_j}), E[ψ_j] = σ(u_j).
func multilabelForm(u, mean []float64) float64 {
	var lz float64
	for j, x := range u {
		lz += logmath.Log1pExp(x)
		if mean != nil {
			mean[j] = logmath.Logistic(x)
		}
	}
	return lz
}

// ordinalForm: level z scores s_z = u_0 + … + u_{z−1} (prefix sums, s_0 = 0) over the d+1 levels;
// E[ψ_j] = P(z > j) is a suffix sum of the level probabilities.
func ordinalForm(u, mean []float64) float64 {
	s := make([]float64, len(u)+1)
	for z := 1; z <= len(u); z++ {
		s[z] = s[z-1] + u[z-1]
	}
	lz := logmath.SumExp(s)
	if mean != nil {
		var tail float64
		for z := len(u); z >= 1; z-- {
			tail += math.Exp(s[z] - lz)
			mean[z-1] = tail
		}
	}
	return lz
}

// treeOrder returns the nodes of the tree given by parent (root −1) in breadth-first order from
// the root, so that parents precede children.
func treeOrder(parent []int64) []int {
	n := len(parent)
	start := make([]int, n+2)
	for _, p := range parent {
		if p >= 0 {
			start[p+2]++
		}
	}
	for v := 2; v < len(start); v++ {
		start[v] += start[v-1]
	}
	kids := make([]int, n)
	order := make([]int, 0, n)
	for v, p := range parent {
		if p >= 0 {
			kids[start[p+1]] = v
			start[p+1]++
		} else {
			order = append(order, v)
		}
	}
	// start[v] .. start[v+1] now delimit v's children.
	for i := 0; i < len(order); i++ {
		v := order[i]
		order = append(order, kids[start[v]:start[v+1]]...)
	}
	return order
}

// pathsForm: the structure z scores the sum of u over its root path (computed top-down); log Z is
// the log-sum-exp over the structures (all nodes, or the leaves), and E[ψ_v] sums the
// probabilities of the structures in the subtree of v (bottom-up).
func pathsForm(parent []int64, leavesOnly bool, u, mean []float64) float64 {
	n := len(parent)
	order := treeOrder(parent)
	a := make([]float64, n)
	isLeaf := make([]bool, n)
	for v := range isLeaf {
		isLeaf[v] = true
	}
	for _, p := range parent {
		if p >= 0 {
			isLeaf[p] = false
		}
	}
	cand := make([]float64, 0, n)
	for _, v := range order {
		a[v] = u[v]
		if parent[v] >= 0 {
			a[v] += a[parent[v]]
		}
		if !leavesOnly || isLeaf[v] {
			cand = append(cand, a[v])
		}
	}
	lz := logmath.SumExp(cand)
	if mean != nil {
		clear(mean)
		for i := n - 1; i >= 0; i-- {
			v := order[i]
			if !leavesOnly || isLeaf[v] {
				mean[v] += math.Exp(a[v] - lz)
			}
			if parent[v] >= 0 {
				mean[parent[v]] += mean[v]
			}
		}
	}
	return lz
}

// subtreesForm: with G(v) = Σ over the subtrees of T_v containing v of exp(Σ u), the children are
// chosen independently, G(v) = e^{u_v} Π_c (1 + G(c)), Z = G(root). Given its parent is in, child c
// is in with probability G(c)/(1 + G(c)) = σ(log G(c)), independently of everything outside T_c,
// so E[ψ_v] is the product of these along the root path.
func subtreesForm(parent []int64, u, mean []float64) float64 {
	n := len(parent)
	order := treeOrder(parent)
	lg := make([]float64, n)
	copy(lg, u)
	for i := n - 1; i > 0; i-- { // order[0] is the root
		v := order[i]
		lg[parent[v]] += logmath.Log1pExp(lg[v])
	}
	root := order[0]
	if mean != nil {
		for _, v := range order {
			if v == root {
				mean[v] = 1
			} else {
				mean[v] = mean[parent[v]] * logmath.Logistic(lg[v])
			}
		}
	}
	return lg[root]
}

// tournamentsForm: pairs are independent with ψ ∈ {−1, 0, 1}: Z = Π_j (e^{u_j} + 1 + e^{−u_j}),
// E[ψ_j] = (e^{u_j} − e^{−u_j})/(e^{u_j} + 1 + e^{−u_j}), written with m = |u_j| to avoid overflow.
func tournamentsForm(u, mean []float64) float64 {
	var lz float64
	for j, x := range u {
		m := math.Abs(x)
		e1, e2 := math.Exp(-m), math.Exp(-2*m)
		den := 1 + e1 + e2
		lz += m + math.Log(den)
		if mean != nil {
			mean[j] = math.Copysign((1-e2)/den, x)
			if x == 0 {
				mean[j] = 0
			}
		}
	}
	return lz
}

// closedFormBytes bounds what closedForm allocates on sp beyond O(d) vectors: the forward and
// backward tables of ksubsetsForm, (n+1) rows of k+1 floats (and a slice header) each.
func closedFormBytes(sp space.Space) int64 {
	if s, ok := sp.(*space.KSubsets); ok {
		p := s.Params()
		return budget.Mul(2, budget.Add(p[0], 1), budget.Add(budget.Mul(p[1]+1, 8), 24))
	}
	return 0
}

// checkClosedFormMemory checks closedFormBytes against the memory budget for one call per row,
// Threads() at a time.
func checkClosedFormMemory(sp space.Space) error {
	need := budget.Mul(closedFormBytes(sp), int64(parallel.Threads()))
	if need >= 0 && need <= budget.Get() {
		return nil // the message is formatted only for a refusal: this runs once per row and evaluation
	}
	return budget.Check(fmt.Sprintf("exact inference on the %s space %v (its closed form's tables)", sp.Kind(), sp.Params()), need)
}

// ksubsetsForm: Z = e_k(e^{u_1}, …, e^{u_n}), the elementary symmetric polynomial, by the
// recursion e_i(x_1..x_j) = e_i(x_1..x_{j−1}) + x_j e_{i−1}(x_1..x_{j−1}) in log space, O(nk).
// E[ψ_j] = x_j e_{k−1}(all but x_j)/Z, with e_{k−1}(all but x_j) = Σ_{a+b=k−1} e_a(x_<j) e_b(x_>j)
// from forward and backward tables.
func ksubsetsForm(k int, u, mean []float64) float64 {
	n := len(u)
	neg := math.Inf(-1)
	table := func(idx func(j int) int) [][]float64 {
		t := make([][]float64, n+1)
		t[0] = make([]float64, k+1)
		for i := 1; i <= k; i++ {
			t[0][i] = neg
		}
		for j := 1; j <= n; j++ {
			x := u[idx(j)]
			t[j] = make([]float64, k+1)
			t[j][0] = 0
			for i := 1; i <= k; i++ {
				t[j][i] = logmath.AddExp(t[j-1][i], t[j-1][i-1]+x)
			}
		}
		return t
	}
	fwd := table(func(j int) int { return j - 1 }) // fwd[j]: the first j items
	lz := fwd[n][k]
	if mean == nil {
		return lz
	}
	bwd := table(func(j int) int { return n - j }) // bwd[j]: the last j items
	for j := 0; j < n; j++ {
		acc := neg
		for a := 0; a <= k-1; a++ {
			acc = logmath.AddExp(acc, fwd[j][a]+bwd[n-1-j][k-1-a])
		}
		mean[j] = math.Exp(u[j] + acc - lz)
	}
	return lz
}
