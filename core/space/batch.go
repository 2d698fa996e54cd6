package space

import (
	"math/bits"
	"sync"
)

// batchLanes is the number of score rows a batched decoder handles at once: four float64 lanes,
// one AVX2 register.
const batchLanes = 4

// batchDecoder is implemented by spaces whose exact decoder can run batchLanes rows at once.
// Their dynamic programmes' control flow depends only on subset masks, not on the scores, so the
// rows share it and every table entry holds the rows' values side by side.
type batchDecoder interface {
	// batchable reports whether decodeBatch applies (the exact decoder, at a size where the
	// batch's tables stay reasonably small).
	batchable() bool
	// decodeBatch decodes the rows us[lane] (each Dim() scores, already rescaled by
	// scaledScores) into ys[lane·Width() : (lane+1)·Width()], as Decode would up to ties.
	decodeBatch(us *[batchLanes][]float64, ys []int64)
}

// batchDecoderOf returns s as a batchDecoder when it has one that applies on this machine.
func batchDecoderOf(s Space) (batchDecoder, bool) {
	b, ok := s.(batchDecoder)
	if !ok || !haveBatch || !b.batchable() {
		return nil, false
	}
	return b, true
}

// cycleRankOffsets returns off[T] = Σ_{T' < T} |T'| for the masks T of cycleExactMax−1 bits:
// where the Held–Karp paths through T begin in cycleDP4's table. It does not depend on the
// number of bits, so one table serves every start vertex and every n ≤ cycleExactMax.
var cycleRankOffsets = sync.OnceValue(func() []int32 {
	off := make([]int32, 1<<(cycleExactMax-1))
	for t := 1; t < len(off); t++ {
		off[t] = off[t-1] + int32(bits.OnesCount(uint(t-1)))
	}
	return off
})
