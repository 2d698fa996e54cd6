package space

import (
	"math"
	"sync"
	"unsafe"
)

// This file gives what an estimate of the marginals E[ψ(y) | x] needs of a space beyond p and S
// (docs/design.md §2a): the interval that holds every coordinate of ψ, and the rank of S.

// CoordRange returns the interval [lo, hi] that holds every coordinate of ψ(y) for every structure
// y, hence every coordinate of E[ψ] under any distribution on Y: [−1, 1] for the spaces of
// oriented pairs (Permutations, DirectedCycles, Tournaments), whose coordinates are ±1 (or 0), and
// [0, 1] for the indicator spaces (all the others). The tests check it against enumeration for
// every registered kind.
func CoordRange(s Space) (lo, hi float64) {
	switch s.(type) {
	case *Permutations, *DirectedCycles, *Tournaments:
		return -1, 1
	}
	return 0, 1
}

// spectrumTol is the relative size below which an eigenvalue of a closed-form spectrum counts as
// zero: the exact zeros (the constant sums of Multiclass and KSubsets, the cycle space of
// DirectedCycles) come out of their formulas as rounding residues of about 1e-17.
const spectrumTol = 1e-9

// CovRank returns the rank r of the covariance S, the dimension of the affine hull of ψ(Y). It is
// the mean of δᵀS⁺δ, δ = ψ(y) − p, under the uniform distribution (E tr(S⁺δδᵀ) = tr(S⁺S) = r),
// and equals δᵀS⁺δ for every y when the symmetries of the space act transitively on Y (Multilabel,
// KSubsets, Permutations, ...) or when ψ(Y) is affinely independent (Multiclass, Ordinal,
// HierarchyPaths, DAGPaths), where it is |Y| − 1. It costs O(1) beyond the closed-form spectrum: for the
// tree and chain spaces it is counted, for the others read from the spectrum of S.
func CovRank(s Space) int {
	switch t := s.(type) {
	case *Ordinal:
		return t.Dim() // n levels, affinely independent embeddings
	case *HierarchyPaths:
		return len(t.cand) - 1 // the path indicators are linearly independent
	case *DAGPaths:
		return len(t.cand) - 1 // so are anc*(z): in topological order, z is the last node of its own
	case *Subtrees:
		return t.Dim() - 1 // ψ_root ≡ 1; {root} ∪ path(v) spans every other coordinate
	}
	if sp, ok := SpectralOf(s.Covariance()); ok {
		r := sp.Dim()
		es := sp.Spectrum()
		for _, c := range NullEigenspaces(sp) {
			r -= es[c].Dim
		}
		return r
	}
	return s.Dim() // an upper bound, for a space added without a case here (the tests list every kind)
}

// RemoveEigenspaces returns a function that removes from a vector of sp.Dim() values its
// components in the eigenspaces cs of sp (indices into sp.Spectrum()), in place.
func RemoveEigenspaces(sp Spectral, cs []int) func(v []float64) {
	buf := make([]float64, sp.Dim())
	return func(v []float64) {
		for _, c := range cs {
			sp.Project(c, buf, v)
			for i, x := range buf {
				v[i] -= x
			}
		}
	}
}

// NullEigenspaces returns the indices into sp.Spectrum() of the eigenspaces whose eigenvalue is
// zero (at most spectrumTol times the largest): the directions v along which ⟨v, ψ(y)⟩ is the same
// for every structure y, S being the covariance under the uniform distribution, whose support is
// all of Y (every eigenspace for a space of one structure).
func NullEigenspaces(sp Spectral) []int {
	es := sp.Spectrum()
	var top float64
	for _, e := range es {
		top = math.Max(top, math.Abs(e.Value))
	}
	var null []int
	for c, e := range es {
		if math.Abs(e.Value) <= spectrumTol*top {
			null = append(null, c)
		}
	}
	return null
}

// maxSimplexIndex bounds |Y|·d, the ψ values SimplexIDs enumerates to number the structures of a
// simplex space whose structures are not ids (a subtree of a chain of up to 2,048 nodes).
const maxSimplexIndex = 1 << 22

// SimplexIDs numbers the structures of the spaces whose ψ(Y) is affinely independent (the vertices
// of a simplex): id(y, ψ(y)) is in [0, k), distinct for distinct structures; ok is false for the
// other spaces. Counting the ids of a sample tells which structures it never holds, a face of the
// simplex no single coordinate of ψ shows. Multiclass, Ordinal and the path spaces are ids already
// (y[0]: a class, a level, a node); the small instances of other kinds that are simplices (a chain's
// subtrees, UndirectedCycles(4), DirectedCycles(3)) are numbered in Enumerate's order, found by
// their ψ, as long as |Y|·d ≤ maxSimplexIndex.
func SimplexIDs(s Space) (k int, id func(y []int64, psi []float64) int, ok bool) {
	first := func(y []int64, _ []float64) int { return int(y[0]) }
	switch t := s.(type) {
	case *Multiclass:
		return t.d, first, true
	case *Ordinal:
		return t.n, first, true
	case *HierarchyPaths:
		return t.t.n(), first, true
	case *DAGPaths:
		return t.g.n(), first, true
	}
	count, d := math.Exp(s.LogCount()), s.Dim()
	if !(count*float64(d) <= maxSimplexIndex) || count < 2 || CovRank(s) != int(math.Round(count))-1 || Enumerable(s) != nil {
		return 0, nil, false
	}
	// numbered at the first id asked for: k alone (BoundaryLen, the warning) needs no enumeration
	var once sync.Once
	var index map[string]int
	id = func(_ []int64, psi []float64) int {
		once.Do(func() {
			index = make(map[string]int, int(count))
			buf := make([]float64, d)
			_ = s.Enumerate(func(y []int64) bool { // Enumerable above: it enumerates all of Y
				s.Embed(y, buf)
				index[psiKey(buf)] = len(index)
				return true
			})
		})
		return index[psiKey(psi)]
	}
	return int(math.Round(count)), id, true
}

// psiKey is ψ's bytes, a map key.
func psiKey(psi []float64) string {
	if len(psi) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&psi[0])), 8*len(psi)))
}
