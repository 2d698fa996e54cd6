package space

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
)

// decodeScratch is what one decoding holds per coordinate of ψ at most, in float64s: the pair
// spaces' n×n score matrices, two of them for cycles, are about 4 per pair. The exact decoders'
// dynamic programmes come on top (exactTables).
const decodeScratch = 4

// exactTables is implemented by the spaces whose exact decoder holds a dynamic programme: its
// size in float64s, 0 when the space decodes approximately.
type exactTables interface{ exactTables() int64 }

func (s *Permutations) exactTables() int64 {
	if !s.exact() {
		return 0
	}
	h := s.n / 2
	t := budget.Add(int64(s.n)<<h, int64(s.n)<<(s.n-h), 1<<s.n+1)
	if s.batchable() {
		t = budget.Mul(t, batchLanes) // decodeBatch's tables, one lane per row
	}
	return t
}

func (s *DirectedCycles) exactTables() int64 { return cycleExactTables(s.n, s.exact()) }

func (s *UndirectedCycles) exactTables() int64 { return cycleExactTables(s.n, s.exact()) }

// cycleExactTables is the larger of the Held–Karp tables of cycleDecodeExact, n·2^n floats, and
// of a batch (cycleDecodeVector): batchLanes·Σ_s m·2^(m−1) with m = n−1−s, about
// batchLanes·(n−1)·2^(n−1), and the batch's transposed weights.
func cycleExactTables(n int, exact bool) int64 {
	if !exact {
		return 0
	}
	t := int64(n) << n
	if n <= cycleExactMax {
		var batch int64
		for m := 2; m < n; m++ {
			batch += int64(m) << (m - 1)
		}
		t = max(t, batchLanes*(batch+int64(n*n)))
	}
	return t
}

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
	per := budget.Add(budget.Mul(decodeScratch, int64(s.Dim())), 2*int64(s.Width()))
	if t, ok := s.(exactTables); ok {
		per = budget.Add(per, t.exactTables())
	}
	if _, ok := batchDecoderOf(s); ok {
		per = budget.Add(per, budget.Mul(batchLanes, int64(s.Dim()))) // the rescaled rows of a batch
	}
	return budget.Check(fmt.Sprintf("decoding %d rows in the %s space of dimension d = %d on %d threads", q, s.Kind(), s.Dim(), concurrent),
		budget.Mul(per, int64(concurrent), 8))
}
