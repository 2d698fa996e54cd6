package space

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
)

// decodeScratch is what one decoding holds per coordinate of ψ at most, in float64s: the pair
// spaces' n×n score matrices, two of them for cycles, are about 4 per pair. The exact decoders'
// dynamic programmes are bounded by their hard size limits (tens of MB) and not counted.
const decodeScratch = 4

// CheckScores checks q rows of d scores (the decision values of q inputs) against the memory
// budget, before they are allocated.
func CheckScores(s Space, q int) error {
	return budget.Check(fmt.Sprintf("the scores of X's %d rows in the %s space of dimension d = %d", q, s.Kind(), s.Dim()),
		budget.Floats(q, s.Dim()))
}

// CheckDecode checks the scratch that DecodeRows of q rows holds at once (one decoding per
// thread) against the memory budget.
func CheckDecode(s Space, q int) error {
	concurrent := min(q, parallel.Threads())
	return budget.Check(fmt.Sprintf("decoding %d rows in the %s space of dimension d = %d on %d threads", q, s.Kind(), s.Dim(), concurrent),
		budget.Mul(budget.Add(budget.Mul(decodeScratch, int64(s.Dim())), 2*int64(s.Width())), int64(concurrent), 8))
}
