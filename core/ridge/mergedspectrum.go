package ridge

import (
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
)

// mergedSpectral is a Spectral operator with the eigenspaces of another that share a
// preconditioner value joined into one. Multilabel's S = I/4 arrives as span(1) and 1⊥ (the
// shape c₀I + c·11ᵀ with c = 0), and every preconditioner block costs a factorisation and a
// product with X or G per eigenspace: joined, a multi-label fit pays for one (bibtex: half the
// preconditioner's time).
type mergedSpectral struct {
	space.Spectral
	groups [][]int // the original eigenspaces in each joined one
	dims   []int
}

// mergeEqualValues returns op with its eigenspaces of equal value in M (one value per
// eigenspace of op) joined, and the joined values; op itself when no two are equal.
func mergeEqualValues(op space.Spectral, M []float64) (space.Spectral, []float64) {
	es := op.Spectrum()
	var groups [][]int
	var values []float64
	var dims []int
outer:
	for c, v := range M {
		for g, w := range values {
			if w == v {
				groups[g] = append(groups[g], c)
				dims[g] += es[c].Dim
				continue outer
			}
		}
		groups, values, dims = append(groups, []int{c}), append(values, v), append(dims, es[c].Dim)
	}
	if len(groups) == len(M) {
		return op, M
	}
	return mergedSpectral{Spectral: op, groups: groups, dims: dims}, values
}

// Spectrum returns the joined eigenspaces, each with the value of its first member.
func (o mergedSpectral) Spectrum() []space.Eigenspace {
	es := o.Spectral.Spectrum()
	out := make([]space.Eigenspace, len(o.groups))
	for g, members := range o.groups {
		out[g] = space.Eigenspace{Value: es[members[0]].Value, Dim: o.dims[g]}
	}
	return out
}

// Project writes the sum of the member projections: v itself when one group holds them all.
func (o mergedSpectral) Project(g int, dst, v []float64) {
	members := o.groups[g]
	if len(o.groups) == 1 {
		copy(dst, v)
		return
	}
	o.Spectral.Project(members[0], dst, v)
	if len(members) == 1 {
		return
	}
	buf := make([]float64, len(v))
	for _, c := range members[1:] {
		o.Spectral.Project(c, buf, v)
		floats.Add(dst, buf)
	}
}
