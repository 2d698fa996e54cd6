package space

import (
	"fmt"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/parallel"
)

// ValidateRows checks m structures stored row-major in ys (m × Width()) and names the first bad row.
func ValidateRows(s Space, ys []int64, m int) error { return ValidateNamedRows(s, ys, m, 0, "") }

// ValidateTargets is ValidateRows for the targets of a fit, which its errors name as y (fit's
// argument): "y: row 3: label 2 has value 5, want 0 or 1".
func ValidateTargets(s Space, ys []int64, m int) error { return ValidateTargetRows(s, ys, m, 0) }

// ValidateTargetRows is ValidateTargets on rows that start at row first of the targets, which
// the errors count from: a fit validates its targets a block at a time.
func ValidateTargetRows(s Space, ys []int64, m, first int) error {
	return ValidateNamedRows(s, ys, m, first, "y")
}

// ValidateNamedRows is ValidateRows on rows that start at row first of a larger set, which the
// error counts from, held in the argument called name, which the error names first
// ("Y_true: row 3: …"; without a name, "row 3: …"). Every message that names a bad row of
// structures is written here, so that the estimators, the spaces and Dask's partitions word it
// alike.
func ValidateNamedRows(s Space, ys []int64, m, first int, name string) error {
	what, prefix := "structures", ""
	if name != "" {
		what, prefix = name, name+": "
	}
	w := s.Width()
	if len(ys) != m*w {
		return fmt.Errorf("%s: expected %d×%d values, got %d", what, m, w, len(ys))
	}
	for i := 0; i < m; i++ {
		if err := s.Validate(ys[i*w : (i+1)*w]); err != nil {
			return fmt.Errorf("%srow %d: %w", prefix, first+i, err)
		}
	}
	return nil
}

// EmbedRows writes ψ of m valid structures (ys, m × Width()) into psi (m × Dim()), row-major.
func EmbedRows(s Space, ys []int64, m int, psi []float64) {
	_ = EmbedRowsUntil(s, ys, m, psi, nil)
}

// embedStopRows is how many rows EmbedRowsUntil embeds between two looks at its stop flag.
const embedStopRows = 256

// EmbedRowsUntil is EmbedRows that looks at stop every embedStopRows rows and returns
// cancel.ErrCancelled once it is set, the rows not yet begun left as they were (a nil stop never
// stops): an embedding the size of the memory budget is seconds of work, which Ctrl-C waited for.
func EmbedRowsUntil(s Space, ys []int64, m int, psi []float64, stop *cancel.Flag) error {
	w, d := s.Width(), s.Dim()
	parallel.For(m, embedStopRows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if (i-lo)%embedStopRows == 0 && stop.Stopped() {
				return
			}
			s.Embed(ys[i*w:(i+1)*w], psi[i*d:(i+1)*d])
		}
	})
	return stop.Err()
}

// DecodeRows decodes m score rows (us, m × Dim()) into structures (ys, m × Width()) on all threads.
// Spaces with a batched exact decoder (permutations, cycles) decode batchLanes rows at a time and
// the remainder row by row. It checks stop before every batch and row, and a cycle space's local
// search between its passes (stoppableDecoder), and returns cancel.ErrCancelled once stop is set:
// the rows not yet begun are left as they were, the one under way holds a structure its search
// had not finished improving. A nil stop never stops.
func DecodeRows(s Space, us []float64, m int, ys []int64, stop *cancel.Flag) error {
	w, d := s.Width(), s.Dim()
	batch, batched := batchDecoderOf(s)
	parallel.For(m, 64, func(lo, hi int) {
		i := lo
		if batched && hi-lo >= batchLanes {
			// Each row is rescaled on its own: the rows of a batch may have different scales.
			scratch := make([]float64, batchLanes*d)
			var rows [batchLanes][]float64
			for ; i+batchLanes <= hi && !stop.Stopped(); i += batchLanes {
				for l := range rows {
					rows[l] = scaledScores(us[(i+l)*d:(i+l+1)*d], scratch[l*d:(l+1)*d])
				}
				batch.decodeBatch(&rows, ys[i*w:(i+batchLanes)*w])
			}
		}
		scratch := make([]float64, d)
		for ; i < hi && !stop.Stopped(); i++ {
			decodeScaled(s, us[i*d:(i+1)*d], ys[i*w:(i+1)*w], scratch, stop)
		}
	})
	return stop.Err()
}

// predictChunkValues bounds the scores PredictRows holds at once (16 MiB of float64).
const predictChunkValues = 1 << 21

// PredictRows decodes the scores of q inputs X (q × n, row-major) into ys (q × Width()), chunk by
// chunk: scores(Xc, rows, U) writes the scores of the rows Xc into U (rows × Dim()). Chunks bound
// the memory of the scores, whatever q, and let stop end the call between chunks (and, through
// DecodeRows, between rows); it then returns cancel.ErrCancelled. An error of a later chunk names
// its first row.
func PredictRows(s Space, X []float64, q, n int, ys []int64, scores func(Xc []float64, rows int, U []float64) error, stop *cancel.Flag) error {
	return PredictRowsBy(s, q, ys, func(lo, hi int, U []float64) error { return scores(X[lo*n:hi*n], hi-lo, U) }, stop)
}

// PredictRowsBy is PredictRows with the rows named by their range: scores(lo, hi, U) writes the
// scores of inputs [lo, hi) into U ((hi−lo) × Dim()), whatever the inputs' layout.
func PredictRowsBy(s Space, q int, ys []int64, scores func(lo, hi int, U []float64) error, stop *cancel.Flag) error {
	w, d := s.Width(), s.Dim()
	chunk := max(64, predictChunkValues/max(d, 1))
	U := make([]float64, min(chunk, q)*d)
	for lo := 0; lo < q; lo += chunk {
		if err := stop.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, q)
		if err := scores(lo, hi, U[:(hi-lo)*d]); err != nil {
			return check.AtRows(lo, err)
		}
		if err := DecodeRows(s, U[:(hi-lo)*d], hi-lo, ys[lo*w:hi*w], stop); err != nil {
			return err
		}
	}
	return nil
}

// PredictChunk is the number of rows PredictRows scores at once in s, for memory checks.
func PredictChunk(s Space, q int) int { return min(q, max(64, predictChunkValues/max(s.Dim(), 1))) }
