package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
)

// DefaultCFTPMaxSteps is the default bound on the backward steps of one CFTP sample.
const DefaultCFTPMaxSteps = 1 << 22

// ErrWorkBound is wrapped by every error of a sampler that stopped at its bound on work.
var ErrWorkBound = errors.New("prob: work bound reached")

// CFTP draws exact samples from π(y) ∝ exp(f(y)), f(y) = ⟨u, ψ(y)⟩, by coupling from the past
// (Propp and Wilson) on the meta chain (thesis §6.6.2, theorem th:meta_cftp).
//
// The coupling. Time runs …, −2, −1, 0; the step from time −k to −k+1 uses a proposal z_k drawn
// uniformly from Y and a U_k uniform on [0, 1), the same for every starting state, and maps state
// y to φ_k(y) = z_k if U_k < exp(f(z_k) − f(y)), else y. For each fixed y, φ_k(y) has exactly the
// meta chain's law P(y, ·) (a uniform proposal accepted with probability min(1, e^{f(z)−f(y)})),
// and the pairs (z_k, U_k) are independent across k.
//
// Coalescence. Let F ≥ max_y f(y) (the score of the decoded mode plus a rounding margin when the
// space decodes exactly, a proven upper bound otherwise). If U_k < exp(f(z_k) − F), then
// U_k < exp(f(z_k) − f(y)) for every y (since f(y) ≤ F), so φ_k maps every state to z_k: it is
// constant. (The chain is monotone in the score: a state accepts z whenever a state of higher
// score does, so "the state that is hardest to move accepts" is the event that all accept.)
//
// The sample. Let T be the smallest k ≥ 1 with U_k < exp(f(z_k) − F). The composition
// Φ_T = φ_1 ∘ φ_2 ∘ … ∘ φ_T is constant (φ_T is), and for every M ≥ T,
// φ_1 ∘ … ∘ φ_M = Φ_T ∘ (φ_{T+1} ∘ … ∘ φ_M) = Φ_T: the value does not change as we go further into
// the past. Run from time −M with M ≥ T, the chain started from a π-distributed state X (drawn
// independently of the φ's) is π-distributed at time 0, by stationarity; as M → ∞ that state
// equals Φ_T's value with probability P(T ≤ M) → 1, because T is finite almost surely. Hence
// Φ_T's value has law exactly π (Propp–Wilson theorem, thesis §6.6.1). We compute it by starting
// at z_T and applying φ_{T−1}, …, φ_1 with the same (z_k, U_k) — regenerated, not stored: step k
// draws from a generator seeded by (seed, k) in both passes.
//
// Cost. P(coalescence at a step) = E_uniform[exp(f(z) − F)] = Z/(|Y| e^F) ≥ exp(f_min − F), so T
// is geometric with E T = |Y| e^F/Z ≤ exp(f_max − f_min) ≤ exp(2R‖u‖) (Cauchy–Schwarz, R = max‖ψ‖),
// the thesis' bound exp(2BR). Each sample costs T proposals backwards and T − 1 forwards. T beyond
// MaxSteps stops the sampler with an error wrapping ErrWorkBound: no sample is returned rather
// than a biased one.
//
// Remark. The coalescence event is the acceptance test of rejection sampling with envelope e^F:
// z_T is itself distributed ∝ e^{f(z)} (P(z_T = z) ∝ |Y|⁻¹ e^{f(z) − F}), so here the forward pass
// only replaces one exact sample by another, and CFTP on the meta chain costs what rejection
// sampling costs, plus the T − 1 forward steps. We keep the forward pass: it is the construction
// whose exactness the thesis' theorem states, and the tests check its output.
type CFTP struct {
	sc       *scorer
	fMax     float64 // F, upper bound on max f, with margin
	fMin     float64 // lower bound on min f (diagnostics)
	exactMax bool
	maxSteps int
	stop     *cancel.Flag // checked every cftpStopEvery steps: a sample may take millions of them
	pcg      *rand.PCG
	r        *rand.Rand
	z        []int64
}

// NewCFTP prepares exact sampling from π ∝ exp(⟨u, ψ⟩) on sp with at most maxSteps backward
// steps per sample (DefaultCFTPMaxSteps when maxSteps ≤ 0). u is copied.
func NewCFTP(sp space.Space, u []float64, maxSteps int) (*CFTP, error) {
	return newCFTP(sp, u, maxSteps, nil)
}

// newCFTP is NewCFTP whose preparation (the decodes of the score range) and samples stop with
// cancel.ErrCancelled once stop is set (nil: never).
func newCFTP(sp space.Space, u []float64, maxSteps int, stop *cancel.Flag) (*CFTP, error) {
	if err := checkScores(sp, u); err != nil {
		return nil, err
	}
	u = append([]float64(nil), u...)
	if maxSteps <= 0 {
		maxSteps = DefaultCFTPMaxSteps
	}
	lo, hi, exact, err := scoreRange(sp, u, stop)
	if err != nil {
		return nil, err
	}
	var l1 float64
	for _, x := range u {
		l1 += math.Abs(x)
	}
	// The margin covers rounding in Decode and in the dot products of the two passes: a score sums
	// at most d terms u_j·ψ_j, ψ_j ∈ {−1, 0, 1}, so it is off by at most (d − 1)·2⁻⁵³·‖u‖₁, and F,
	// the proposal's score and the decoder's own sums each carry that much. It lowers the
	// coalescence probability by e^{−margin} ≈ 1. It was 10⁻⁹·‖u‖₁, 10⁶ times that on small
	// spaces: beyond ‖u‖₁ ≈ 10¹⁰ the factor e^{−10} and less made CFTP (and the FPRAS on it)
	// refuse even a tie between two structures of Multiclass(4) (probe AH).
	margin := 4 * float64(sp.Dim()+1) * 0x1p-53 * (1 + l1)
	pcg := rand.NewPCG(0, 0)
	return &CFTP{sc: newScorer(sp, u), fMax: hi + margin, fMin: lo, exactMax: exact, maxSteps: maxSteps,
		stop: stop, pcg: pcg, r: rand.New(pcg), z: make([]int64, sp.Width())}, nil
}

// cftpStopEvery is how often (in steps of either pass) a sample checks its stop flag: a step costs
// about a microsecond on the large spaces where samples take millions of them.
const cftpStopEvery = 4096

// MeanStepsBound returns exp(F − f_min) ≥ E T, the bound on the expected number of backward steps
// per sample (+Inf when it overflows).
func (c *CFTP) MeanStepsBound() float64 { return math.Exp(c.fMax - c.fMin) }

// Sample draws a seed from r and writes one exact sample into y (SampleSeed).
func (c *CFTP) Sample(r *rand.Rand, y []int64) (steps int, err error) {
	return c.SampleSeed(r.Uint64(), y)
}

// SampleSeed writes into y one exact sample determined by seed and returns T, the number of
// backward steps it took. It fails, writing nothing, when T would exceed the work bound.
func (c *CFTP) SampleSeed(seed uint64, y []int64) (steps int, err error) {
	steps, _, err = c.sampleAt(seed, 1, y, true, c.maxSteps)
	return steps, err
}

// sampleAt is SampleSeed for π_β ∝ exp(β f) with 0 ≤ β ≤ 1 (β = 1 with forward is SampleSeed, bit
// for bit): the same construction with f replaced by βf and F by βF, which bounds max βf because
// β ≥ 0. It returns also f(y), the unscaled score of the sample. E T = E_uniform[exp(β(f − F))]⁻¹
// grows with β, so a CFTP that is affordable at β = 1 is affordable at every β ∈ [0, 1]; at β = 0
// every proposal coalesces (T = 1) and the sample is uniform. Without forward, the sample is the
// coalescing proposal z_T itself, exact by the Remark above (rejection sampling with envelope
// e^{βF}), at half the cost: the adaptive FPRAS needs exact samples, not this construction.
// limit (at most the CFTP's own bound) is the most backward steps this sample may take: a caller
// with less work left than the bound stops it there.
func (c *CFTP) sampleAt(seed uint64, beta float64, y []int64, forward bool, limit int) (steps int, f float64, err error) {
	limit = min(limit, c.maxSteps)
	var pSum float64 // Σ exp(β(f(z_k) − F)): its mean estimates the coalescence probability
	T := 0
	for k := 1; k <= limit; k++ {
		if k%cftpStopEvery == 0 && c.stop.Yield() {
			return k, 0, cancel.ErrCancelled
		}
		fz, U := c.draw(seed, k)
		a := math.Exp(beta * (fz - c.fMax))
		pSum += a
		if U < a {
			T, f = k, fz
			copy(y, c.z)
			break
		}
	}
	if T == 0 {
		p := pSum / float64(max(limit, 1))
		return limit, 0, fmt.Errorf("%w: CFTP did not coalesce within %d backward steps; the estimated "+
			"coalescence probability per step is %.3g (expected time ≈ %.3g steps, proven bound "+
			"exp(f_max − f_min) = %.3g): the scores are too large for exact sampling; use a Markov "+
			"chain sampler (sampler=\"mixed\", \"local\" or \"metropolis\": approximate samples, and no "+
			"guarantee for the FPRAS) or smaller scores (stronger regularisation)",
			ErrWorkBound, limit, p, 1/p, math.Exp(beta*(c.fMax-c.fMin)))
	}
	for k := T - 1; k >= 1 && forward; k-- {
		if k%cftpStopEvery == 0 && c.stop.Yield() {
			return T, 0, cancel.ErrCancelled
		}
		fz, U := c.draw(seed, k)
		if U < math.Exp(beta*(fz-f)) {
			f = fz
			copy(y, c.z)
		}
	}
	return T, f, nil
}

// clone returns a CFTP for the same distribution with its own scratch space and generator, for
// use on another goroutine (the bounds are shared, not recomputed).
func (c *CFTP) clone() *CFTP {
	pcg := rand.NewPCG(0, 0)
	d := *c
	d.sc = newScorer(c.sc.sp, c.sc.u)
	d.pcg, d.r, d.z = pcg, rand.New(pcg), make([]int64, len(c.z))
	return &d
}

// draw regenerates step k's proposal (into c.z) and uniform from a generator seeded by (seed, k),
// and returns f(z_k) and U_k.
func (c *CFTP) draw(seed uint64, k int) (float64, float64) {
	reseed(c.pcg, seed, uint64(k))
	c.sc.sp.Sample(c.r, c.z)
	fz := c.sc.score(c.z)
	return fz, c.r.Float64()
}
