package prob

import (
	"fmt"
	"math"
	"strings"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/space"
)

// The intercept of ProbabilisticStructured is not penalised: it has a finite optimum only where the
// training rows' weighted mean of ψ lies inside the hull of ψ(Y). Where it lies on the boundary
// (a label always on, a class never seen), J keeps falling as the intercept moves off to infinity,
// and the fit stops wherever its tolerance stops it (an intercept of 18.5 at tol=1e-6, 35.1 at
// 1e-9, probe CG). The fit warns of two cases, decided by counts of the training rows of positive
// weight that parts of the data add up (a fit on Dask sums them over its partitions):
//   - a coordinate of ψ that varies over Y but takes one extreme value of space.CoordRange in
//     every row (a label always on or off, a pair always in one order): every space whose hull is a
//     box;
//   - a structure never seen, on the spaces whose ψ(Y) is a simplex and whose structures are ids
//     (space.SimplexIDs: Multiclass, Ordinal and the path spaces), where the mean can sit on a face
//     that no coordinate shows (Ordinal(4) without its level 1, probe CH).
// Other faces (a transitivity facet of permutations) go unnoticed.

// BoundaryLen returns the number of values of sp's boundary counts: the rows counted, then for
// each of the d coordinates of ψ the rows off its lower and off its upper end, then, on the spaces
// with space.SimplexIDs, the rows of each id.
func BoundaryLen(sp space.Space) int {
	k, _, _ := space.SimplexIDs(sp)
	return 1 + 2*sp.Dim() + k
}

// AddBoundaryCounts adds to counts (BoundaryLen(sp) values) the boundary counts of m valid
// structures ys (m × Width(), row-major) with weights (nil: all 1); rows of weight 0 (or NaN) do
// not count. The counts of two parts of the data add up to those of the whole.
func AddBoundaryCounts(sp space.Space, counts []float64, ys []int64, m int, weights []float64) {
	d, w := sp.Dim(), sp.Width()
	lo, hi := space.CoordRange(sp)
	k, id, ids := space.SimplexIDs(sp)
	notLo, notHi, seen := counts[1:1+d], counts[1+d:1+2*d], counts[1+2*d:1+2*d+k]
	var psi []float64 // allocated at the first row that counts: an empty part needs none
	for i := 0; i < m; i++ {
		if weights != nil && !(weights[i] > 0) {
			continue
		}
		if psi == nil {
			psi = make([]float64, d)
		}
		y := ys[i*w : (i+1)*w]
		sp.Embed(y, psi)
		counts[0]++
		for a, v := range psi {
			if v != lo {
				notLo[a]++
			}
			if v != hi {
				notHi[a]++
			}
		}
		if ids {
			seen[id(y, psi)]++
		}
	}
}

// BoundaryCountsInto writes into counts (BoundaryLen(sp) values) the boundary counts of one part
// of a data set, its m structures ys (m × Width(), row-major) with weights (nil: all 1), both
// checked as NewProblem checks them. A part may be empty. FitSums takes the parts' counts added
// up (Options.Boundary).
func BoundaryCountsInto(sp space.Space, counts []float64, ys []int64, m int, weights []float64) error {
	if err := checkBoundaryLen(sp, len(counts)); err != nil {
		return err
	}
	if m < 0 {
		return fmt.Errorf("prob: a part of the data has %d rows", m)
	}
	if err := space.ValidateTargets(sp, ys, m); err != nil {
		return err
	}
	if weights != nil {
		if _, err := checkWeightValues(weights, m); err != nil {
			return err
		}
	}
	if m > 0 { // ψ of one row, beside rows that hold as many values at least
		if err := budget.Check(fmt.Sprintf("ψ of one structure of the %s space (d = %d)", sp.Kind(), sp.Dim()), budget.Mul(int64(sp.Dim()), 8)); err != nil {
			return err
		}
	}
	clear(counts)
	AddBoundaryCounts(sp, counts, ys, m, weights)
	return nil
}

// checkBoundaryLen refuses n values where sp's boundary counts have another number.
func checkBoundaryLen(sp space.Space, n int) error {
	if want := BoundaryLen(sp); n != want {
		return fmt.Errorf("prob: boundary counts: expected %d values for the %s space, got %d", want, sp.Kind(), n)
	}
	return nil
}

// checkBoundaryCounts checks counts summed over parts of the data: BoundaryLen(sp) values, each a
// whole number of rows no larger than the first, the rows counted.
func checkBoundaryCounts(sp space.Space, counts []float64) error {
	if err := checkBoundaryLen(sp, len(counts)); err != nil {
		return err
	}
	if rows := counts[0]; !(rows >= 0 && rows == math.Trunc(rows) && !math.IsInf(rows, 0)) {
		return fmt.Errorf("prob: boundary counts: the rows counted (value 0) are %v, want a whole number ≥ 0", rows)
	}
	for i, c := range counts {
		if !(c >= 0 && c <= counts[0] && c == math.Trunc(c)) {
			return fmt.Errorf("prob: boundary counts: value %d is %v, want a whole number of rows in [0, %v]", i, c, counts[0])
		}
	}
	return nil
}

// unboundedWarning is the warning of a fit with an intercept whose training rows have the boundary
// counts counts, "" when every intercept has a finite optimum as far as these counts tell.
func unboundedWarning(sp space.Space, counts []float64) string {
	const tail = "their intercepts, which are not penalised, have no finite optimum, so intercept_ and objective_ " +
		"are where tol stopped the fit, and the model's marginals there approach the training rows'"
	rows := counts[0]
	if rows == 0 {
		return ""
	}
	d := sp.Dim()
	if k, _, ok := space.SimplexIDs(sp); ok {
		total := int(math.Round(math.Exp(sp.LogCount())))
		seen := 0
		for _, c := range counts[1+2*d : 1+2*d+k] {
			if c > 0 {
				seen++
			}
		}
		if seen < total {
			return fmt.Sprintf("%d of the space's %d structures never occur in the training rows of positive weight "+
				"(a class or node never seen): %s", total-seen, total, tail)
		}
	}
	coords := unboundedIntercepts(sp, counts)
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

// unboundedIntercepts returns the coordinates a of ψ that vary over Y (positive uniform variance)
// yet take one extreme value of space.CoordRange in every counted row: no row is off that end.
func unboundedIntercepts(sp space.Space, counts []float64) []int {
	d := sp.Dim()
	cov := sp.Covariance()
	var top float64
	for a := 0; a < d; a++ {
		top = max(top, cov.At(a, a))
	}
	var out []int
	for a := 0; a < d; a++ {
		// a coordinate constant over Y (a subtree's root) has no intercept that moves
		if cov.At(a, a) > 1e-12*top && (counts[1+a] == 0 || counts[1+d+a] == 0) {
			out = append(out, a)
		}
	}
	return out
}
