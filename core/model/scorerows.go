package model

import (
	"fmt"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/xmat"
)

// scoreChunkWork bounds the scoring work (ScoreWork units, about a nanosecond each) between two
// checks of a stop flag: about 0.1 s of a kernel expansion at a few GFLOP/s (a sixteenth of that
// cost a quarter of the speed of scoring an rbf model, whose blocks were re-allocated per chunk).
const scoreChunkWork = 1 << 28

// ScoreChunk is the number of rows ScoreRows scores between two checks of its stop flag: all q
// for cheap (linear) scores, a few hundred for a kernel expansion over thousands of support rows.
func ScoreChunk(md Model, q int) int {
	return min(q, max(1, int(scoreChunkWork/max(md.ScoreWork(), 1))))
}

// ScoreRows writes the scores of the rows X into U (X.Q × Dim()), as md.DecisionRows does, a
// chunk of rows at a time, and stops with cancel.ErrCancelled once stop is set (nil: never). A
// kernel model's 60,000 rows took a second to score in one call, deaf to Ctrl-C.
func ScoreRows(md Model, X xmat.Rows, U []float64, stop *cancel.Flag) error {
	q, d := X.Q, md.Output().Dim()
	if len(U) != q*d || (X.Sparse == nil && len(X.Dense) != q*X.N) {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features and %d scores", q, X.N, d)
	}
	chunk := ScoreChunk(md, q)
	if chunk >= q {
		return md.DecisionRows(X, U)
	}
	for lo := 0; lo < q; lo += chunk {
		if err := stop.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, q)
		if err := md.DecisionRows(X.Slice(lo, hi), U[lo*d:hi*d]); err != nil {
			return check.AtRows(lo, err)
		}
	}
	return nil
}
