package prob

import (
	"fmt"
	"strings"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// unboundedIntercepts returns the coordinates a of ψ whose unpenalised intercept has no finite
// optimum: ψ_a varies over Y (its uniform variance is positive) yet takes one extreme value of
// space.CoordRange in every training row of positive weight (a label always on, a class never
// seen, a pair always in one order), so that J falls as the intercept of a moves towards ±∞ and
// the fit stops where its tolerance stops it. weights nil means all 1.
func unboundedIntercepts(sp space.Space, psiY *mat.Dense, weights []float64) []int {
	lo, hi := space.CoordRange(sp)
	m, d := psiY.Dims()
	cov := sp.Covariance()
	var top float64
	for a := 0; a < d; a++ {
		top = max(top, cov.At(a, a))
	}
	var out []int
	for a := 0; a < d; a++ {
		if !(cov.At(a, a) > 1e-12*top) {
			continue // constant over Y: the intercept does not move
		}
		atLo, atHi, rows := true, true, 0
		for i := 0; i < m && (atLo || atHi); i++ {
			if weights != nil && !(weights[i] > 0) {
				continue
			}
			v := psiY.At(i, a)
			atLo, atHi, rows = atLo && v == lo, atHi && v == hi, rows+1
		}
		if rows > 0 && (atLo || atHi) {
			out = append(out, a)
		}
	}
	return out
}

// unboundedWarning is the warning of a fit with an intercept whose coordinates coords (of ψ)
// have no finite optimum (unboundedIntercepts); "" when there are none.
func unboundedWarning(coords []int) string {
	if len(coords) == 0 {
		return ""
	}
	shown := make([]string, 0, 10)
	for _, a := range coords[:min(len(coords), 10)] {
		shown = append(shown, fmt.Sprint(a))
	}
	if len(coords) > 10 {
		shown = append(shown, fmt.Sprintf("… (%d in all)", len(coords)))
	}
	return fmt.Sprintf("coordinate(s) %s of ψ take the same extreme value in every training row of positive weight "+
		"(a label always on or off, a class never seen, a pair always in one order): their intercepts, which are not "+
		"penalised, have no finite optimum, so intercept_ and objective_ there are where tol stopped the fit, and the "+
		"model's marginals of those coordinates approach the training rows' value", strings.Join(shown, ", "))
}
