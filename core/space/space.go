// Package space holds the combinatorial output spaces of combpred: finite sets Y of structures
// (label sets, rankings, cycles, subtrees, ...) with a joint feature map ψ: Y → R^d.
//
// A space knows how to count itself in closed form (log|Y|, the mean p = Ψ/|Y| and the covariance
// S = C/|Y| − ppᵀ of ψ under the uniform distribution), sample uniformly, validate and embed a
// structure, and decode scores u into argmax_y ⟨u, ψ(y)⟩. Nothing here enumerates Y except
// Enumerate, which refuses sizes above MaxEnumerate and exists for tests.
//
// A structure is encoded as a row of Width() int64 values; the encoding of each space is stated on
// its constructor. Adding a space means adding one file that implements Space and calls Register in
// its init function.
package space

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/logmath"
)

// MaxEnumerate is the largest |Y| that Enumerate accepts.
const MaxEnumerate = 1 << 22

// MaxEnumerateValues bounds |Y| × Width(), the values a full enumeration writes and, for spaces
// whose enumeration steps cost O(Width()), its time: a chain of 10⁶ nodes has only 10⁶ rooted
// subtrees, but listing them writes 10¹² values, and the count alone ran for days.
const MaxEnumerateValues = 1 << 26

// MaxDim bounds the dimension d and the width of every space. The pair spaces reach it at 65,536
// labels, items or vertices (d = n(n−1)/2 < 2³¹): one score row is then already 16 GB, and size
// arithmetic on d stays far from overflowing. What a call allocates for its rows is checked
// against the memory budget (package budget), not here.
const MaxDim = math.MaxInt32

// checkSize is the size rule of every space, applied by each constructor before it allocates:
// d and the width are at most MaxDim. param is the parameter of the Python API that sets them.
func checkSize(kind, param string, n, d, width int64) error {
	if d > MaxDim || width > MaxDim {
		return fmt.Errorf("space: %s = %d is out of range for %s: dimension d = %s and width %s are not supported beyond %d",
			param, n, kind, sizeString(d), sizeString(width), MaxDim)
	}
	return nil
}

// nodeTableBytes bounds what a tree or DAG space keeps per node (the tree's parent, preorder,
// position, size, depth and child lists, the space's per-node probabilities and counts, their
// scratch, and the parameters' copies): 120–175 bytes measured with the Go heap's overhead.
const nodeTableBytes = 192

// checkNodeTables checks the tables of a tree or DAG space of n nodes whose parameters hold
// values values against the memory budget, before they are built: a star of 8·10⁶ nodes took
// 1.2 GB under a 64 MB budget, and aborted the process under ulimit -v (probe BF).
func checkNodeTables(kind string, n, values int64) error {
	return budget.Check(fmt.Sprintf("the tables of the %s space's %d nodes", kind, n),
		budget.Add(budget.Mul(n, nodeTableBytes), budget.Mul(values, 16)))
}

// sizeString prints a size, or, at budget.Unbounded (int64's largest value, which also stands for an
// overflow), that it is at least that.
func sizeString(v int64) string {
	if v == budget.Unbounded {
		return "(2⁶³ − 1 or more)"
	}
	return fmt.Sprint(v)
}

// pairDim is n(n−1)/2, the dimension of the spaces indexed by pairs, budget.Unbounded instead of
// an overflow, so that checkSize refuses any n too large.
func pairDim(n int) int64 {
	if n < 2 {
		return 0
	}
	// Halve the even factor first: n(n−1) overflows int64 for some n whose d does not.
	a, b := int64(n), int64(n-1)
	if a%2 == 0 {
		a /= 2
	} else {
		b /= 2
	}
	return budget.Mul(a, b)
}

// ErrTooLarge is returned by Enumerate when the space has more than MaxEnumerate structures.
var ErrTooLarge = errors.New("space: too large to enumerate")

// Enumerable returns ErrTooLarge when enumerating s would exceed MaxEnumerate structures or
// MaxEnumerateValues values in all. It decides from the closed-form count, without enumerating.
func Enumerable(s Space) error {
	logCount := s.LogCount()
	if logCount > logmath.Log(MaxEnumerate)+1e-9 || logCount+logmath.Log(float64(max(s.Width(), 1))) > logmath.Log(MaxEnumerateValues)+1e-9 {
		return ErrTooLarge
	}
	return nil
}

// Space is a finite set of combinatorial structures with a joint feature map ψ.
type Space interface {
	// Kind is the registered name of the space, as given to New.
	Kind() string
	// Params are the integer parameters that rebuild the space with New(Kind(), Params()).
	Params() []int64
	// Dim is d, the length of ψ(y).
	Dim() int
	// Width is the number of int64 values that encode one structure.
	Width() int
	// LogCount is log|Y| (natural logarithm); |Y| itself may overflow a float64.
	LogCount() float64
	// Mean writes p = Ψ/|Y| = E_uniform[ψ] into p, which has length Dim().
	Mean(p []float64)
	// Covariance returns S = C/|Y| − ppᵀ, the covariance of ψ under the uniform distribution.
	Covariance() Operator
	// Validate reports why y (length Width()) is not a structure of the space, or nil.
	Validate(y []int64) error
	// Embed writes ψ(y) into psi (length Dim()). y must be valid.
	Embed(y []int64, psi []float64)
	// Sample writes a structure drawn uniformly from Y into y.
	Sample(r *rand.Rand, y []int64)
	// Decode writes a structure maximising ⟨u, ψ(y)⟩ (exactly, or within Guarantee) into y.
	Decode(u []float64, y []int64)
	// Guarantee is 0 when Decode is exact, otherwise the z-approximation factor ν of Decode:
	// f(ŷ) ≥ (1−ν) max f + ν min f.
	Guarantee() float64
	// Enumerate calls yield with every structure of Y in a fixed order until yield returns false.
	// The slice passed to yield is reused between calls. It returns ErrTooLarge, without calling
	// yield, when |Y| > MaxEnumerate.
	Enumerate(yield func(y []int64) bool) error
}

// Constructor builds a space from its integer parameters, or says why they are invalid.
type Constructor func(params []int64) (Space, error)

// StoppableConstructor is a Constructor whose work can outlast a Ctrl-C (a DAG's ancestor sets:
// tens of seconds near MaxDAGAncestry): it ends once stop is set, returning cancel.ErrCancelled.
type StoppableConstructor func(params []int64, stop *cancel.Flag) (Space, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]StoppableConstructor{}
)

// Register makes a space constructor available to New under kind. It panics when kind is taken,
// which can only happen through a programming error at init time.
func Register(kind string, c Constructor) {
	registerStoppable(kind, func(params []int64, _ *cancel.Flag) (Space, error) { return c(params) })
}

// registerStoppable is Register for a constructor that looks at a stop flag.
func registerStoppable(kind string, c StoppableConstructor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[kind]; dup {
		panic("space: Register called twice for " + kind)
	}
	registry[kind] = c
}

// Kinds lists the registered space kinds in sorted order.
func Kinds() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	ks := make([]string, 0, len(registry))
	for k := range registry {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// New builds the space of the given kind from its parameters.
func New(kind string, params []int64) (Space, error) { return NewUntil(kind, params, nil) }

// NewUntil is New, ended once stop is set (nil: never) where building the space takes long
// (the DAG spaces' ancestor sets); it then returns cancel.ErrCancelled.
func NewUntil(kind string, params []int64, stop *cancel.Flag) (Space, error) {
	registryMu.RLock()
	c, ok := registry[kind]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("space: unknown kind %q (known: %v)", kind, Kinds())
	}
	return c(params, stop)
}

// wantParams checks the number of parameters a constructor received.
func wantParams(kind string, params []int64, n int) error {
	if len(params) != n {
		return fmt.Errorf("space: %s takes %d parameter(s), got %d", kind, n, len(params))
	}
	return nil
}
