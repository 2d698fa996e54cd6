package prob

import (
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/space"
)

// source is the randomness a chain transition consumes. Chains draw only through it, so that
// tests can replace it by an enumerator of every outcome and build the exact transition matrix
// from the same code that Step runs.
type source interface {
	// IntN returns a uniform integer in [0, n), n ≥ 1.
	IntN(n int) int
	// Accept returns true with probability min(1, exp(logRatio)) (never for NaN).
	Accept(logRatio float64) bool
	// Uniform writes a structure drawn uniformly from sp into y.
	Uniform(sp space.Space, y []int64)
}

// rngSource is the source backed by a *rand.Rand.
type rngSource struct{ r *rand.Rand }

// IntN returns a uniform integer in [0, n).
func (s rngSource) IntN(n int) int { return s.r.IntN(n) }

// Accept draws U uniform in [0, 1) and accepts when logRatio ≥ 0 or U < exp(logRatio). U is
// drawn for every ratio, so that a ratio at zero rounding to either side consumes the same stream:
// the mixed chain compares a fresh score with an updated one, which rounding puts a few ulps apart
// when the two structures are one, and a seeded estimate from a dense X and from the same X in
// CSR (scores 1 ulp apart) took different paths, 0.07 apart (probe ER).
func (s rngSource) Accept(logRatio float64) bool {
	u := s.r.Float64()
	return logRatio >= 0 || u < math.Exp(logRatio)
}

// Uniform draws a uniform structure of sp with the space's own sampler.
func (s rngSource) Uniform(sp space.Space, y []int64) { sp.Sample(s.r, y) }

// splitmix64 is the finaliser of SplitMix64, a bijective mixer of 64-bit words.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// deriveSeed mixes a seed with a path of keys (row, stage, sample, ...) into a new seed, so that
// every independent piece of work has its own reproducible stream.
func deriveSeed(seed uint64, keys ...uint64) uint64 {
	h := splitmix64(seed)
	for _, k := range keys {
		h = splitmix64(h ^ splitmix64(k+0x632be59bd9b4e019))
	}
	return h
}

// newRand returns a generator seeded from seed and keys.
func newRand(seed uint64, keys ...uint64) *rand.Rand {
	s := deriveSeed(seed, keys...)
	return rand.New(rand.NewPCG(s, splitmix64(s^0xda942042e4dd58b5)))
}

// reseed reseeds an existing PCG in place from seed and keys (no allocation).
func reseed(p *rand.PCG, seed uint64, keys ...uint64) {
	s := deriveSeed(seed, keys...)
	p.Seed(s, splitmix64(s^0xda942042e4dd58b5))
}
