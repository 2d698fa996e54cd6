package prob

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/blas/blas64"
)

// bruteChunk is the number of structures bruteForceRows embeds at a time: a chunk of Ψ (at most
// 256 × 190 values on Cliques(20), 390 KB) stays in the second level of cache while the rows go by.
const bruteChunk = 256

// bruteRows is the number of rows whose scores against a chunk one task of bruteForceRows holds
// (bruteRows × bruteChunk values, 256 KB).
const bruteRows = 128

// bruteForced reports whether exact inference on sp sums over every structure: it has no closed
// form, and at most BruteForceMax structures.
func bruteForced(sp space.Space) bool {
	return !HasClosedForm(sp) && HasExact(sp)
}

// checkScoreRows is checkScores for each of the q score vectors U (q × Dim()), in order: the first
// refused and why (−1, nil when none is), what bruteForceRows' callers check first.
func checkScoreRows(sp space.Space, U []float64, q int) (int, error) {
	d := sp.Dim()
	for k := 0; k < q; k++ {
		if err := checkScores(sp, U[k*d:(k+1)*d]); err != nil {
			return k, err
		}
	}
	return -1, nil
}

// bruteForceRows is bruteForce for the q score vectors U (q × Dim(), row-major): it writes each
// row's E[ψ] into mean (q × Dim(); nil to skip) and log Z into logZ (length q; nil to skip).
// bruteForce enumerates the space once per row and adds ψ(y) to the row's sum one structure at a
// time; here the space is enumerated once for all rows, a chunk of bruteChunk structures at a time,
// and each block of rows takes its scores against the chunk, U·Ψᵀ, and its weighted sum of the
// chunk's ψ by package gemm's products, with a running maximum per row so that nothing overflows.
// On Cliques(12), fits and marginals of 300–1,000 rows were 5–26× slower by bruteForce than NumPy's
// softmax(UΨᵀ)Ψ on a cached Ψ (probe FS), and that table is 2^n·d values: the chunks keep the
// memory at O((q + bruteChunk)·d).
//
// The scores must have passed checkScoreRows. stop is checked every bruteForceStopEvery structures
// and between the blocks of rows a chunk is added to (ErrCancelled).
func bruteForceRows(sp space.Space, U []float64, q int, mean, logZ []float64, stop *cancel.Flag) error {
	d := sp.Dim()
	if len(U) != q*d || (mean != nil && len(mean) != q*d) || (logZ != nil && len(logZ) != q) {
		return fmt.Errorf("prob: bruteForceRows: %d scores, %d marginals and %d log partitions for %d rows of %d",
			len(U), len(mean), len(logZ), q, d)
	}
	if q == 0 {
		return nil
	}
	acc := mean // the weighted sums of ψ; log Z alone (mean nil) needs none
	clear(acc)
	top, sum := make([]float64, q), make([]float64, q) // each row's running maximum score and Σ exp(f − top)
	for i := range top {
		top[i] = math.Inf(-1)
	}
	psi := make([]float64, bruteChunk*d)  // the chunk's ψ, a structure a row
	psiT := make([]float64, d*bruteChunk) // and transposed, for the scores
	blocks := (q + bruteRows - 1) / bruteRows
	workers := min(blocks, parallel.Threads()) // read once: another call may change the thread count
	scores := make([]float64, workers*bruteRows*bruteChunk)
	n := 0
	// flush adds the chunk's n structures to every row; it reports false when stop was seen set, the
	// rows' sums then partly updated (a chunk against a million rows is seconds of work).
	flush := func() bool {
		if n == 0 {
			return true
		}
		for s := 0; s < n; s++ {
			for j := 0; j < d; j++ {
				psiT[j*n+s] = psi[s*d+j]
			}
		}
		chunk := blas64.General{Rows: n, Cols: d, Stride: d, Data: psi[:n*d]}
		chunkT := blas64.General{Rows: d, Cols: n, Stride: n, Data: psiT[:d*n]}
		parallel.Go(workers, func(w int) {
			F := scores[w*bruteRows*bruteChunk : (w+1)*bruteRows*bruteChunk]
			for b := w; b < blocks && !stop.Stopped(); b += workers {
				lo, hi := b*bruteRows, min((b+1)*bruteRows, q)
				rows := hi - lo
				Fb := blas64.General{Rows: rows, Cols: n, Stride: n, Data: F[:rows*n]}
				gemm.MulPanel(Fb, blas64.General{Rows: rows, Cols: d, Stride: d, Data: U[lo*d : hi*d]}, chunkT)
				for r := 0; r < rows; r++ {
					f := Fb.Data[r*n : (r+1)*n]
					i := lo + r
					m := top[i]
					for _, v := range f {
						m = max(m, v)
					}
					if m > top[i] { // rescale what the row has summed to the new maximum
						scale := math.Exp(top[i] - m)
						sum[i] *= scale
						if acc != nil {
							row := acc[i*d : (i+1)*d]
							for j := range row {
								row[j] *= scale
							}
						}
						top[i] = m
					}
					s := 0.0
					for t, v := range f {
						e := math.Exp(v - m)
						f[t] = e
						s += e
					}
					sum[i] += s
				}
				if acc != nil {
					gemm.MulPanelAdd(blas64.General{Rows: rows, Cols: d, Stride: d, Data: acc[lo*d : hi*d]}, Fb, chunk)
				}
			}
		})
		n = 0
		return !stop.Stopped()
	}
	var seen int
	cancelled := false
	err := sp.Enumerate(func(y []int64) bool {
		if seen++; seen%bruteForceStopEvery == 0 && stop.Stopped() {
			cancelled = true
			return false
		}
		sp.Embed(y, psi[n*d:(n+1)*d])
		if n++; n == bruteChunk && !flush() {
			cancelled = true
			return false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoExact, err)
	}
	if cancelled || !flush() {
		return cancel.ErrCancelled
	}
	for i := 0; i < q; i++ {
		if mean != nil {
			row := mean[i*d : (i+1)*d]
			for j := range row {
				row[j] /= sum[i]
			}
			clipToRange(sp, row)
		}
		if logZ != nil {
			logZ[i] = top[i] + logmath.Log(sum[i])
		}
	}
	return nil
}
