package prob

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// closedForm returns log Z(u) and, when mean is not nil, E[ψ], by the space's own closed form or
// dynamic programme (space.Partition). ok is false for the other spaces.
func closedForm(sp space.Space, u, mean []float64) (logZ float64, ok bool) {
	if part, ok := space.PartitionOf(sp); ok {
		return part.LogPartition(u, mean), true
	}
	return 0, false
}

// closedFormBytes bounds what closedForm allocates on sp beyond O(d) vectors
// (space.PartitionMemory).
func closedFormBytes(sp space.Space) int64 {
	if pm, ok := sp.(space.PartitionMemory); ok {
		return pm.PartitionBytes()
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
	err := budget.Check(fmt.Sprintf("exact inference on the %s space %v (its dynamic programme's tables)", sp.Kind(), sp.Params()), need)
	if err == nil {
		return nil
	}
	// the same for every row: forRows reports it without naming the one whose thread met it first
	return rowlessError{err}
}
