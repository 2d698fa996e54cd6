package prob

import (
	"fmt"
	"math/rand/v2"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
)

// Chain is a Markov chain on the structures of a space whose stationary distribution is
// π(y) ∝ exp(⟨u, ψ(y)⟩) for the score vector u it was built with. Every chain here is reversible
// with respect to π (detailed balance holds exactly; the tests build the transition matrices),
// irreducible and aperiodic. A Chain is not safe for concurrent use.
type Chain interface {
	// Step makes one transition, drawing its randomness from r.
	Step(r *rand.Rand)
	// State returns the current structure. The slice belongs to the chain: it is overwritten by
	// Step and must not be modified. Undirected cycles may be in either orientation.
	State() []int64
	// SetState moves the chain to the structure y, or says why y is not a structure of the space.
	SetState(y []int64) error
	// Score returns ⟨u, ψ(State())⟩.
	Score() float64
}

// ChainKind chooses a chain.
type ChainKind int

// The chain kinds.
const (
	// ChainAuto is ChainMixed where the space has a local chain and ChainMeta otherwise.
	ChainAuto ChainKind = iota
	// ChainMeta is the Metropolis chain with uniform proposals (MetaChain), for every space.
	ChainMeta
	// ChainLocal is the space's local-move chain: CubeChain for multilabel and subtrees,
	// TranspositionChain for permutations, CycleChain for directed and undirected cycles.
	ChainLocal
	// ChainMixed alternates at random between a local move and a meta proposal (MixedChain).
	ChainMixed
)

var chainNames = [...]string{"auto", "meta", "local", "mixed"}

// String returns the name of the chain kind.
func (k ChainKind) String() string {
	if k >= 0 && int(k) < len(chainNames) {
		return chainNames[k]
	}
	return fmt.Sprintf("ChainKind(%d)", int(k))
}

// ParseChainKind maps a name (auto, meta, local, mixed) to its ChainKind.
func ParseChainKind(name string) (ChainKind, error) {
	for i, n := range chainNames {
		if n == name {
			return ChainKind(i), nil
		}
	}
	return 0, fmt.Errorf("prob: unknown chain %q (want auto, meta, local or mixed)", name)
}

// localChain is what the chains of this package share beyond Chain: a transition drawing from a
// source (so that tests can enumerate it), and loading a known-valid state with its score.
type localChain interface {
	Chain
	step(src source)
	load(y []int64, f float64)
}

// HasLocalChain reports whether sp has a local-move chain (ChainLocal).
func HasLocalChain(sp space.Space) bool {
	_, ok := sp.(space.Local)
	return ok
}

// NewChain returns a chain of the given kind for π ∝ exp(⟨u, ψ⟩) on sp, started at y0 (the
// decoded mode of u when y0 is nil). u is copied.
func NewChain(sp space.Space, u []float64, kind ChainKind, y0 []int64) (Chain, error) {
	return newChain(sp, u, kind, y0, nil)
}

// newChain is NewChain whose decode of the start stops with cancel.ErrCancelled once stop is set.
func newChain(sp space.Space, u []float64, kind ChainKind, y0 []int64, stop *cancel.Flag) (Chain, error) {
	c, err := newLocalChain(sp, u, kind)
	if err != nil {
		return nil, err
	}
	if y0 == nil {
		y0 = make([]int64, sp.Width())
		space.DecodeUntil(sp, u, y0, stop)
		if err := stop.Err(); err != nil {
			return nil, err
		}
	}
	if err := c.SetState(y0); err != nil {
		return nil, err
	}
	return c, nil
}

// newLocalChain builds the chain without a valid state: the caller must SetState or load it.
func newLocalChain(sp space.Space, u []float64, kind ChainKind) (localChain, error) {
	if err := checkScores(sp, u); err != nil {
		return nil, err
	}
	u = append([]float64(nil), u...)
	switch resolveChain(sp, kind) {
	case ChainMeta:
		return newMetaChain(sp, u), nil
	case ChainLocal:
		if l, ok := sp.(space.Local); ok {
			switch l.LocalMoves() {
			case space.MovesCube:
				return newCubeChain(sp, u)
			case space.MovesTransposition:
				return newTranspositionChain(sp, u), nil
			case space.MovesCycle, space.MovesDirectedCycle:
				return newCycleChain(sp, u), nil
			}
		}
		return nil, fmt.Errorf("prob: the %s space has no local chain (use meta or auto)", sp.Kind())
	case ChainMixed:
		if !HasLocalChain(sp) {
			return nil, fmt.Errorf("prob: the %s space has no local chain to mix (use meta or auto)", sp.Kind())
		}
		local, err := newLocalChain(sp, u, ChainLocal)
		if err != nil {
			return nil, err
		}
		return newMixedChain(sp, u, local), nil
	}
	return nil, fmt.Errorf("prob: unknown chain kind %d", int(kind))
}

// resolveChain is the chain kind stands for on sp: ChainAuto is ChainMixed where the space has a
// local chain and ChainMeta otherwise; other kinds stand for themselves.
func resolveChain(sp space.Space, kind ChainKind) ChainKind {
	switch {
	case kind != ChainAuto:
		return kind
	case HasLocalChain(sp):
		return ChainMixed
	default:
		return ChainMeta
	}
}

// setState validates y and loads it with its score.
func setState(c localChain, sc *scorer, y []int64) error {
	if len(y) != sc.sp.Width() {
		return fmt.Errorf("prob: a %s structure has %d values, got %d", sc.sp.Kind(), sc.sp.Width(), len(y))
	}
	if err := sc.sp.Validate(y); err != nil {
		return fmt.Errorf("prob: invalid start state: %w", err)
	}
	c.load(y, sc.score(y))
	return nil
}

// resyncEvery is how often (in accepted moves) chains that update their score incrementally
// recompute it from scratch, so that rounding errors cannot accumulate.
const resyncEvery = 1 << 12
