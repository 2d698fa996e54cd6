package prob

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The intercept of ProbabilisticStructured is not penalised: it has a finite optimum only where the
// training rows' weighted mean of ψ lies inside the hull of ψ(Y). Where it lies on the boundary
// (a label always on, a class never seen), J keeps falling as the intercept moves off to infinity,
// and the fit stops wherever its tolerance stops it (an intercept of 18.5 at tol=1e-6, 35.1 at
// 1e-9, probe CG). The fit warns of the two cases below, which cover every space whose hull is a
// box or a simplex; other faces (a transitivity facet of permutations) go unnoticed.

// unboundedIntercepts returns the coordinates a of ψ that vary over Y (positive uniform variance)
// yet take one extreme value of space.CoordRange in every training row of positive weight
// (weights nil: all 1): a label always on or off, a pair always in one order. One pass over the
// rows of psiY.
func unboundedIntercepts(sp space.Space, psiY *mat.Dense, weights []float64) []int {
	lo, hi := space.CoordRange(sp)
	m, d := psiY.Dims()
	cov := sp.Covariance()
	var top float64
	for a := 0; a < d; a++ {
		top = max(top, cov.At(a, a))
	}
	atLo, atHi := make([]bool, d), make([]bool, d)
	open := 0 // coordinates still at one extreme in every row so far
	for a := range atLo {
		if cov.At(a, a) > 1e-12*top { // else constant over Y: its intercept does not move
			atLo[a], atHi[a] = true, true
			open++
		}
	}
	rows := 0
	for i := 0; i < m && open > 0; i++ {
		if weights != nil && !(weights[i] > 0) {
			continue
		}
		rows++
		for a, v := range psiY.RawRowView(i) {
			if !atLo[a] && !atHi[a] {
				continue // settled: not at one extreme
			}
			atLo[a], atHi[a] = atLo[a] && v == lo, atHi[a] && v == hi
			if !atLo[a] && !atHi[a] {
				open--
			}
		}
	}
	var out []int
	for a := range atLo {
		if rows > 0 && (atLo[a] || atHi[a]) {
			out = append(out, a)
		}
	}
	return out
}

// unseenStructures returns, for the spaces whose ψ(Y) is affinely independent (the vertices of a
// simplex: the rank of S is |Y| − 1, space.CovRank; one class or node per structure), how many
// distinct structures the training rows of positive weight hold and |Y|; ok is false for the
// other spaces. A structure never seen puts the mean on a face of the simplex, where no
// coordinate need be constant (Ordinal(4) without its level 1, probe CH).
func unseenStructures(sp space.Space, psiY *mat.Dense, weights []float64) (seen, total int, ok bool) {
	count := math.Exp(sp.LogCount())
	if !(count <= 1<<24) {
		return 0, 0, false
	}
	if total = int(math.Round(count)); space.CovRank(sp) != total-1 {
		return 0, 0, false
	}
	m, _ := psiY.Dims()
	distinct := make(map[string]struct{}, total)
	for i := 0; i < m && len(distinct) < total; i++ {
		if weights != nil && !(weights[i] > 0) {
			continue
		}
		row := psiY.RawRowView(i)
		distinct[unsafe.String((*byte)(unsafe.Pointer(&row[0])), 8*len(row))] = struct{}{}
	}
	return len(distinct), total, len(distinct) > 0
}

// unboundedWarning is the warning of a fit with an intercept on the training rows psiY (weights
// nil: all 1), "" when every intercept has a finite optimum as far as these tests tell.
func unboundedWarning(sp space.Space, psiY *mat.Dense, weights []float64) string {
	const tail = "their intercepts, which are not penalised, have no finite optimum, so intercept_ and objective_ " +
		"are where tol stopped the fit, and the model's marginals there approach the training rows'"
	if seen, total, ok := unseenStructures(sp, psiY, weights); ok && seen < total {
		return fmt.Sprintf("%d of the space's %d structures never occur in the training rows of positive weight "+
			"(a class or node never seen): %s", total-seen, total, tail)
	}
	coords := unboundedIntercepts(sp, psiY, weights)
	if len(coords) == 0 {
		return ""
	}
	shown := make([]string, 0, 11)
	for _, a := range coords[:min(len(coords), 10)] {
		shown = append(shown, fmt.Sprint(a))
	}
	if len(coords) > 10 {
		shown = append(shown, fmt.Sprintf("… (%d in all)", len(coords)))
	}
	return fmt.Sprintf("coordinate(s) %s of ψ take the same extreme value in every training row of positive weight "+
		"(a label always on or off, a class never seen, a pair always in one order): %s", strings.Join(shown, ", "), tail)
}
