package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// balanceSpaces are the enumerable spaces on which every chain's transition matrix is built.
func balanceSpaces(t testing.TB) []space.Space {
	return []space.Space{
		mustSpace(t, "permutations", 4),
		mustSpace(t, "dicycles", 4),
		mustSpace(t, "dicycles", 5),
		mustSpace(t, "ucycles", 4),
		mustSpace(t, "ucycles", 5),
		mustSpace(t, "multilabel", 3),
		mustSpace(t, "subtrees", smallTree...),
	}
}

// TestDetailedBalance builds the exact transition matrix P of each chain (meta, local, mixed) by
// enumerating every outcome of Step's random choices, on small spaces at several temperatures, and
// checks that rows sum to 1, that π(x)P(x,y) = π(y)P(y,x) for all pairs, that the chain is
// irreducible (every state reaches every other) and aperiodic (some P(x,x) > 0). Together these
// make π the unique limit.
func TestDetailedBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sp := range balanceSpaces(t) {
		for _, norm := range []float64{0, 0.7, 2.5} {
			u := randomScores(r, sp.Dim(), norm)
			e := newExactDist(t, sp, u)
			for _, kind := range []ChainKind{ChainMeta, ChainLocal, ChainMixed} {
				name := fmt.Sprintf("%s%v/|u|=%g/%s", sp.Kind(), sp.Params(), norm, kind)
				c, err := newLocalChain(sp, u, kind)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				P := transitionMatrix(t, c, e)
				checkReversible(t, name, P, e.pi)
			}
		}
	}
}

func checkReversible(t *testing.T, name string, P [][]float64, pi []float64) {
	t.Helper()
	n := len(P)
	lazy := false
	for i := range P {
		var s float64
		for j := range P[i] {
			s += P[i][j]
			if P[i][j] < 0 {
				t.Fatalf("%s: P[%d][%d] = %g < 0", name, i, j, P[i][j])
			}
			if a, b := pi[i]*P[i][j], pi[j]*P[j][i]; math.Abs(a-b) > 1e-12*(pi[i]+pi[j]) {
				t.Fatalf("%s: detailed balance fails for %d, %d: π P = %g, reverse %g", name, i, j, a, b)
			}
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("%s: row %d sums to %.15g", name, i, s)
		}
		lazy = lazy || P[i][i] > 0
	}
	if !lazy {
		t.Fatalf("%s: no state can stay put: the chain may be periodic", name)
	}
	seen := make([]bool, n) // reversible, so reaching every state from 0 means irreducible
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for j := range P[i] {
			if P[i][j] > 0 && !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	for j, ok := range seen {
		if !ok {
			t.Fatalf("%s: state %d is unreachable from state 0", name, j)
		}
	}
}

// TestChainMarginalsConverge runs each chain kind as a sampler and compares the mean of ψ with the
// exact marginals, with a tolerance of 5 batch-means standard errors (40 batches) plus 0.01: a
// chain with the wrong stationary law is off by far more on these sizes.
func TestChainMarginalsConverge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, batches = 40000, 40
	for _, sp := range balanceSpaces(t) {
		u := randomScores(r, sp.Dim(), 1.5)
		e := newExactDist(t, sp, u)
		d := sp.Dim()
		for _, kind := range []ChainKind{ChainMeta, ChainLocal, ChainMixed} {
			name := fmt.Sprintf("%s%v/%s", sp.Kind(), sp.Params(), kind)
			out := make([]int64, n*sp.Width())
			opt := SampleOptions{Sampler: SamplerChain, Chain: kind, BurnIn: 2000, Thin: 2}
			if _, err := Sample(sp, u, n, 11, opt, out); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			bm := make([][]float64, batches)
			psi := make([]float64, d)
			for i := 0; i < n; i++ {
				sp.Embed(out[i*sp.Width():(i+1)*sp.Width()], psi)
				b := i * batches / n
				if bm[b] == nil {
					bm[b] = make([]float64, d)
				}
				for j, x := range psi {
					bm[b][j] += x / float64(n/batches)
				}
			}
			for j := 0; j < d; j++ {
				var m, v float64
				for b := range bm {
					m += bm[b][j] / batches
				}
				for b := range bm {
					v += (bm[b][j] - m) * (bm[b][j] - m) / (batches - 1)
				}
				se := math.Sqrt(v / batches)
				if math.Abs(m-e.mean[j]) > 5*se+0.01 {
					t.Errorf("%s: E[ψ_%d] = %.4f from the chain, exact %.4f (batch-means SE %.4f)", name, j, m, e.mean[j], se)
				}
			}
		}
	}
}

// TestCanonicalCycle checks that the orientation written for undirected cycles is the one the
// space writes, and that it leaves ψ unchanged.
func TestCanonicalCycle(t *testing.T) {
	sp := mustSpace(t, "ucycles", 6)
	r := rand.New(rand.NewPCG(5, 6))
	c, err := NewChain(sp, randomScores(r, sp.Dim(), 1), ChainLocal, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]float64, sp.Dim()), make([]float64, sp.Dim())
	for k := 0; k < 2000; k++ {
		c.Step(r)
		y := append([]int64(nil), c.State()...)
		sp.Embed(y, a)
		sp.(space.Canonical).Canonicalize(y)
		sp.Embed(y, b)
		if psiKey(a) != psiKey(b) {
			t.Fatalf("Canonicalize changed the cycle %v", c.State())
		}
		// The smallest vertex on the cycle has a smaller successor than predecessor.
		v0 := 0
		for y[v0] < 0 {
			v0++
		}
		pred := -1
		for v, s := range y {
			if s == int64(v0) {
				pred = v
			}
		}
		if int(y[v0]) > pred {
			t.Fatalf("not canonical: %v", y)
		}
		if math.Abs(c.Score()-dot(c.(*CycleChain).sc.u, a)) > 1e-9 {
			t.Fatalf("incremental score %g drifted from %g", c.Score(), dot(c.(*CycleChain).sc.u, a))
		}
	}
}

// TestChainSamplesReachTheMode: on a peaked π the chain sampler's samples lie where π puts its
// mass. Under π, P(⟨u, ψ(y)⟩ ≤ f − t) ≤ |Y|·e^{−t} for the score f of any structure (Z ≥ e^f), so
// a sample more than ln|Y| + 20 + ln n below the decoded mode's score has probability below e^{−20}.
// Chains started from uniform structures stayed about 126 below it on Permutations(20), beyond
// that bound (ln 20! ≈ 42).
func TestChainSamplesReachTheMode(t *testing.T) {
	sp := mustSpace(t, "permutations", 20)
	r := rand.New(rand.NewPCG(3, 4))
	u := make([]float64, sp.Dim())
	for i := range u {
		u[i] = 30 * r.NormFloat64()
	}
	mode := make([]int64, sp.Width())
	sp.Decode(u, mode)
	sc := newScorer(sp, u)
	const n = 50
	bound := sc.score(mode) - sp.LogCount() - 20 - math.Log(n)
	for _, kind := range []ChainKind{ChainAuto, ChainLocal, ChainMeta} {
		out := make([]int64, n*sp.Width())
		if _, err := Sample(sp, u, n, 7, SampleOptions{Sampler: SamplerChain, Chain: kind, Chains: 2}, out); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if f := sc.score(out[i*sp.Width() : (i+1)*sp.Width()]); f < bound {
				t.Errorf("chain %v: sample %d scores %.1f, below %.1f (mode %.1f): π gives that region less than e^-20", kind, i, f, bound, sc.score(mode))
				break
			}
		}
	}
}

// A Metropolis chain that never moves vouches for its state only after metaVouch·|Y| proposals.
// Permutations(12) (|Y| = 4.8·10⁸) at large scores: the chain stays at the mode, whose mass is
// far from all (the exact marginals differ), and it is reported; Multiclass(8) at the same scores
// also stays, after enough proposals to vouch (the mode holds 1 − 4e-7 of the mass); moving
// chains, local chains and CFTP are not reported.
func TestUnvouchedMetropolisChains(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		space   string
		size    int64
		norm    float64
		sampler SamplerKind
		chain   ChainKind
		want    int
	}{
		{"permutations", 12, 30, SamplerChain, ChainMeta, 2},
		{"permutations", 12, 30, SamplerChain, ChainMixed, 0},
		{"permutations", 12, 30, SamplerChain, ChainLocal, 0},
		{"permutations", 12, 0.1, SamplerChain, ChainMeta, 0}, // it moves
		{"multiclass", 8, 30, SamplerChain, ChainMeta, 0},
		{"multiclass", 8, 30, SamplerCFTP, ChainMeta, 0},
	} {
		sp := mustSpace(t, c.space, c.size)
		u := randomScores(r, sp.Dim(), c.norm)
		mean := make([]float64, sp.Dim())
		opt := InferenceOptions{Method: InferSampled, Samples: 200,
			Sampler: SampleOptions{Sampler: c.sampler, Chain: c.chain, Chains: 2}}
		info, err := Marginals(sp, u, opt, 1, mean)
		if err != nil {
			t.Fatal(err)
		}
		if info.Unvouched != c.want {
			t.Errorf("%s(%d), ‖u‖ = %g, %v/%v: %d unvouched chains, want %d", c.space, c.size, c.norm, c.sampler, c.chain,
				info.Unvouched, c.want)
		}
		if c.want > 0 {
			exact := make([]float64, sp.Dim())
			if _, err := ExactMarginals(sp, u, exact); err != nil {
				t.Fatal(err)
			}
			var diff float64
			for j := range mean {
				diff = math.Max(diff, math.Abs(mean[j]-exact[j]))
			}
			if diff < 0.1 {
				t.Errorf("%s(%d): the unvouched estimate is %.3g from the exact marginals: not a case that needs the report",
					c.space, c.size, diff)
			}
		}
	}
}

// A chain that moves on a near-flat π vouches whatever the number of samples it keeps: a rule
// that asked for a move after the burn-in reported every row at n_samples = 1 (no step after the
// burn-in) and most at 2, where the window is one thinning interval.
func TestMovingMetropolisChainsVouchForFewSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	sp := mustSpace(t, "permutations", 6)
	for _, n := range []int{1, 2, 5} {
		for row := range 10 {
			u := randomScores(r, sp.Dim(), 0.5)
			opt := InferenceOptions{Method: InferSampled, Samples: n,
				Sampler: SampleOptions{Sampler: SamplerChain, Chain: ChainMeta}}
			info, err := Marginals(sp, u, opt, uint64(row), make([]float64, sp.Dim()))
			if err != nil {
				t.Fatal(err)
			}
			if info.Unvouched != 0 {
				t.Errorf("n_samples = %d, row %d: %d unvouched chains on a near-flat π", n, row, info.Unvouched)
			}
		}
	}
}
