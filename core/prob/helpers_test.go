package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/logmath"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// mustSpace builds a registered space or fails the test.
func mustSpace(t testing.TB, kind string, params ...int64) space.Space {
	t.Helper()
	sp, err := space.New(kind, params)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// smallTree is the parent array of a 7-node tree with branching and depth 3 (21 subtrees).
var smallTree = []int64{-1, 0, 0, 1, 1, 2, 4}

// exactDist is a space enumerated with π ∝ exp(⟨u, ψ⟩) on it.
type exactDist struct {
	sp    space.Space
	b     *spacetest.Brute
	index map[string]int
	pi    []float64
	mean  []float64
	logZ  float64
}

func psiKey(psi []float64) string { return fmt.Sprint(psi) }

func newExactDist(t testing.TB, sp space.Space, u []float64) *exactDist {
	t.Helper()
	b := spacetest.Enumerate(t, sp)
	e := &exactDist{sp: sp, b: b, index: map[string]int{}, pi: make([]float64, len(b.Ys)), mean: make([]float64, sp.Dim())}
	f := make([]float64, len(b.Ys))
	for i, psi := range b.Psis {
		k := psiKey(psi)
		if _, dup := e.index[k]; dup {
			t.Fatalf("%s: ψ is not injective", sp.Kind())
		}
		e.index[k] = i
		f[i] = dot(u, psi)
	}
	e.logZ = logmath.SumExp(f)
	for i := range f {
		e.pi[i] = math.Exp(f[i] - e.logZ)
		for j, x := range b.Psis[i] {
			e.mean[j] += e.pi[i] * x
		}
	}
	return e
}

// stateOf returns the index of structure y.
func (e *exactDist) stateOf(t testing.TB, y []int64) int {
	t.Helper()
	psi := make([]float64, e.sp.Dim())
	e.sp.Embed(y, psi)
	i, ok := e.index[psiKey(psi)]
	if !ok {
		t.Fatalf("%s: %v is not an enumerated structure", e.sp.Kind(), y)
	}
	return i
}

// randomScores returns a standard normal direction scaled to ‖u‖ = norm.
func randomScores(r *rand.Rand, d int, norm float64) []float64 {
	u := make([]float64, d)
	for i := range u {
		u[i] = r.NormFloat64()
	}
	if n := norm2(u); n > 0 {
		for i := range u {
			u[i] *= norm / n
		}
	}
	return u
}

// enumSource plays a prescribed sequence of choices and records the branching at each choice
// point, so that repeated runs enumerate every outcome of one transition with its probability.
// It mirrors rngSource exactly: Accept with a log-ratio ≥ 0 takes no choice.
type enumSource struct {
	prefix  []int // choices to play; extended with 0 at new choice points
	nopts   []int // number of options at each choice point reached
	pos     int
	prob    float64
	structs [][]int64 // the space's structures, for Uniform
}

func (e *enumSource) choose(n int) int {
	if e.pos < len(e.prefix) {
		c := e.prefix[e.pos]
		e.nopts = append(e.nopts, n)
		e.pos++
		return c
	}
	e.prefix = append(e.prefix, 0)
	e.nopts = append(e.nopts, n)
	e.pos++
	return 0
}

func (e *enumSource) IntN(n int) int {
	c := e.choose(n)
	e.prob /= float64(n)
	return c
}

func (e *enumSource) Accept(lr float64) bool {
	if lr >= 0 {
		return true
	}
	a := math.Exp(lr)
	if e.choose(2) == 0 {
		e.prob *= a
		return true
	}
	e.prob *= 1 - a
	return false
}

func (e *enumSource) Uniform(_ space.Space, y []int64) {
	c := e.choose(len(e.structs))
	copy(y, e.structs[c])
	e.prob /= float64(len(e.structs))
}

// transitionMatrix builds P[i][j], the probability that one step of c moves structure i to j, by
// running c.step on every sequence of random choices.
func transitionMatrix(t testing.TB, c localChain, e *exactDist) [][]float64 {
	t.Helper()
	n := len(e.b.Ys)
	P := make([][]float64, n)
	for i := range P {
		P[i] = make([]float64, n)
		var prefix []int
		for {
			src := &enumSource{prefix: prefix, prob: 1, structs: e.b.Ys}
			if err := c.SetState(e.b.Ys[i]); err != nil {
				t.Fatal(err)
			}
			c.step(src)
			j := e.stateOf(t, c.State())
			P[i][j] += src.prob
			k := len(src.prefix) - 1
			for k >= 0 && src.prefix[k]+1 >= src.nopts[k] {
				k--
			}
			if k < 0 {
				break
			}
			prefix = append(append([]int(nil), src.prefix[:k]...), src.prefix[k]+1)
		}
	}
	return P
}
