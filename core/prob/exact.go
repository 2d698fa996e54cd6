package prob

import (
	"errors"
	"fmt"
	"math"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
)

// BruteForceMax is the largest |Y| for which exact inference falls back to summing over every
// structure when the space has no closed form.
const BruteForceMax = 1 << 20

// ErrNoExact is wrapped by the errors of exact inference on a space that has no closed form here
// and is too large to enumerate.
var ErrNoExact = errors.New("prob: no exact inference")

// HasClosedForm reports whether log Z and E[ψ] of sp have a closed form or a dynamic programme at
// its size (space.Partition: multiclass, multilabel, ordinal, hierarchy paths, subtrees, k-subsets,
// partial tournaments; permutations up to 16 labels, cycles up to 14 vertices).
func HasClosedForm(sp space.Space) bool {
	_, ok := space.PartitionOf(sp)
	return ok
}

// AutoBruteForceMax is the largest |Y| for which the automatic choices of fits (InferAuto,
// SolverAuto) sum over every structure rather than sample: brute force costs |Y| products with
// each input's scores per gradient evaluation (bruteForceRows). LogZAuto sums up to BruteForceMax:
// once per input. 2¹⁴ until the sums took a block of rows at once; then, on 300 rows of 10
// features (2 cores), the exact fit of Cliques(15) took 7.5 s against the sampled one's 103 s (200
// Adam steps), Cliques(16) 22 s against 122 s.
const AutoBruteForceMax = 1 << 16

// HasExact reports whether ExactLogPartition and ExactMarginals succeed on sp: it has a closed
// form, or at most BruteForceMax structures.
func HasExact(sp space.Space) bool {
	return HasClosedForm(sp) || sp.LogCount() <= logmath.Log(BruteForceMax)+1e-9
}

// autoExact reports whether the automatic choices use exact inference on sp: a closed form, or at
// most AutoBruteForceMax structures.
func autoExact(sp space.Space) bool {
	return HasClosedForm(sp) || sp.LogCount() <= logmath.Log(AutoBruteForceMax)+1e-9
}

// ExactLogPartition returns log Z(u) = log Σ_y exp(⟨u, ψ(y)⟩), exactly up to rounding: by the
// space's closed form, by its programme for log Z alone beyond the closed form's sizes
// (space.LogZ: rankings of up to 19 labels, cycles of up to 16 vertices), or by summing over at most BruteForceMax structures.
func ExactLogPartition(sp space.Space, u []float64) (float64, error) {
	return exactLogPartition(sp, u, nil)
}

// exactLogPartition is ExactLogPartition that stops with cancel.ErrCancelled when stop is set
// (checked as it sums over the structures).
func exactLogPartition(sp space.Space, u []float64, stop *cancel.Flag) (float64, error) {
	if z, ok := space.LogZOf(sp); ok && !HasClosedForm(sp) {
		if err := checkScores(sp, u); err != nil {
			return 0, err
		}
		if err := checkClosedFormMemory(sp); err != nil {
			return 0, err
		}
		return z.LogZ(u), nil
	}
	return exactMarginals(sp, u, nil, stop)
}

// autoExactLogZ reports whether LogZAuto computes log Z exactly on sp: wherever ExactLogPartition
// does (HasExact: a closed form, or at most BruteForceMax structures, summed once per row, where
// the fits' AutoBruteForceMax bounds a sum paid at every gradient evaluation: Cliques(15) took the
// FPRAS, 10× the time, and refused scores of ‖u‖₁ ≈ 90 at its work bound, probe BE), and where the
// space computes log Z alone (space.LogZ), whose cost per row (a few milliseconds at 17 labels,
// BenchmarkPermutationsLogZ) is below the FPRAS' even where CFTP coalesces quickly.
func autoExactLogZ(sp space.Space) bool {
	if HasExact(sp) {
		return true
	}
	// beyond the exact marginals only where the budget takes the tables: otherwise the FPRAS, as
	// before log Z alone existed, rather than a memory error for a call that asked for no method
	_, ok := space.LogZOf(sp)
	return ok && checkClosedFormMemory(sp) == nil
}

// ExactMarginals writes E_π[ψ] into mean (length Dim(); nil to skip) and returns log Z(u), by the
// space's closed form or, for at most BruteForceMax structures, by summing over all of them. It
// returns an error wrapping ErrNoExact otherwise.
func ExactMarginals(sp space.Space, u, mean []float64) (float64, error) {
	return exactMarginals(sp, u, mean, nil)
}

// exactMarginals is ExactMarginals that stops with cancel.ErrCancelled when stop is set (checked
// as it sums over the structures).
func exactMarginals(sp space.Space, u, mean []float64, stop *cancel.Flag) (float64, error) {
	if err := checkScores(sp, u); err != nil {
		return 0, err
	}
	if mean != nil && len(mean) != sp.Dim() {
		return 0, fmt.Errorf("prob: the marginals buffer has length %d, want %d", len(mean), sp.Dim())
	}
	if err := checkClosedFormMemory(sp); err != nil {
		return 0, err
	}
	if lz, ok := closedForm(sp, u, mean); ok {
		clipToRange(sp, mean)
		return lz, nil
	}
	if !HasExact(sp) {
		return 0, fmt.Errorf("%w for the %s space with log|Y| = %.1f (more than %d structures): use fpras or taylor, and sampled marginals",
			ErrNoExact, sp.Kind(), sp.LogCount(), BruteForceMax)
	}
	lz, err := bruteForce(sp, u, mean, stop)
	clipToRange(sp, mean)
	return lz, err
}

// clipToRange clips each of the marginals (nil: none) to the range of its coordinate of ψ
// (space.CoordRange): the dynamic programmes' sums of ratios round past the ends by up to a few
// ulps times the number of terms (KSubsets, Ordinal, HierarchyPaths at scores of 100: a
// probability of 1 + 3e-13, probe AR), which a caller drawing from them would refuse.
func clipToRange(sp space.Space, mean []float64) {
	if mean == nil {
		return
	}
	lo, hi := space.CoordRange(sp)
	for j, v := range mean {
		mean[j] = min(max(v, lo), hi)
	}
}

// bruteForceStopEvery is how many structures bruteForce sums between checks of its stop flag
// (a few milliseconds of work).
const bruteForceStopEvery = 1 << 12

// bruteForce sums over every structure with a running maximum, so that nothing overflows.
func bruteForce(sp space.Space, u, mean []float64, stop *cancel.Flag) (float64, error) {
	sc := newScorer(sp, u)
	m, s := math.Inf(-1), 0.0
	if mean != nil {
		clear(mean)
	}
	// A row sums up to BruteForceMax (2²⁰) structures, about a second on Cliques(20): Ctrl-C is
	// checked every bruteForceStopEvery of them, not only between rows.
	var seen int
	cancelled := false
	err := sp.Enumerate(func(y []int64) bool {
		if seen++; seen%bruteForceStopEvery == 0 && stop.Stopped() {
			cancelled = true
			return false
		}
		f := sc.score(y)
		if mean != nil {
			sp.Embed(y, sc.psi) // a space.Scorer scores y without writing ψ
		}
		if f > m {
			scale := math.Exp(m - f)
			s *= scale
			for j := range mean {
				mean[j] *= scale
			}
			m = f
		}
		w := math.Exp(f - m)
		s += w
		for j := range mean {
			mean[j] += w * sc.psi[j]
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoExact, err)
	}
	if cancelled {
		return 0, cancel.ErrCancelled
	}
	for j := range mean {
		mean[j] /= s
	}
	return m + logmath.Log(s), nil
}
