package space

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("multiclass", func(p []int64) (Space, error) { return newFromOne("multiclass", p, NewMulticlass) })
}

// Multiclass is the space of one class out of d, encoded as one int64 in [0, d); ψ is one-hot.
type Multiclass struct{ d int }

// NewMulticlass returns the space of d classes (d ≥ 1).
func NewMulticlass(d int) (*Multiclass, error) {
	if d < 1 {
		return nil, fmt.Errorf("space: multiclass needs n_classes ≥ 1, got %d", d)
	}
	if err := checkSize("multiclass", "n_classes", int64(d), int64(d), 1); err != nil {
		return nil, err
	}
	return &Multiclass{d: d}, nil
}

func (s *Multiclass) Kind() string       { return "multiclass" }
func (s *Multiclass) Params() []int64    { return []int64{int64(s.d)} }
func (s *Multiclass) Dim() int           { return s.d }
func (s *Multiclass) Width() int         { return 1 }
func (s *Multiclass) LogCount() float64  { return logmath.Log(float64(s.d)) }
func (s *Multiclass) Guarantee() float64 { return 0 }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *Multiclass) PsiZeroOne() bool { return true }

// BinaryChoice reports whether there are two classes.
func (s *Multiclass) BinaryChoice() bool { return s.d == 2 }

// Mean is 1/d in every coordinate.
func (s *Multiclass) Mean(p []float64) {
	for i := range p {
		p[i] = 1 / float64(s.d)
	}
}

// Covariance is diag(1/d) − 11ᵀ/d².
func (s *Multiclass) Covariance() Operator {
	diag := make([]float64, s.d)
	for i := range diag {
		diag[i] = 1 / float64(s.d)
	}
	return diagPlusConst{diag: diag, c: -1 / float64(s.d*s.d)}
}

func (s *Multiclass) Validate(y []int64) error {
	if len(y) != 1 {
		return fmt.Errorf("a multiclass label is one integer, got %d values", len(y))
	}
	if y[0] < 0 || y[0] >= int64(s.d) {
		return fmt.Errorf("class %d is outside [0, %d)", y[0], s.d)
	}
	return nil
}

func (s *Multiclass) Embed(y []int64, psi []float64) {
	clear(psi)
	psi[y[0]] = 1
}

func (s *Multiclass) Sample(r *rand.Rand, y []int64) { y[0] = int64(r.IntN(s.d)) }

// Decode picks the largest score, the lowest index among ties.
func (s *Multiclass) Decode(u []float64, y []int64) {
	best := 0
	for j := 1; j < s.d; j++ {
		if u[j] > u[best] {
			best = j
		}
	}
	y[0] = int64(best)
}

func (s *Multiclass) Enumerate(yield func(y []int64) bool) error {
	if s.d > MaxEnumerate {
		return ErrTooLarge
	}
	y := make([]int64, 1)
	for c := 0; c < s.d; c++ {
		y[0] = int64(c)
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// newFromOne adapts a constructor with one int argument to Constructor.
func newFromOne[S Space](kind string, p []int64, ctor func(int) (S, error)) (Space, error) {
	if err := wantParams(kind, p, 1); err != nil {
		return nil, err
	}
	return ctor(int(p[0])) // the constructor checks the size's minimum and range, naming the parameter
}

// HasPartition is true: log Z and E[ψ] have a closed form.
func (s *Multiclass) HasPartition() bool { return true }

// LogPartition: Z = Σ_j e^{u_j}, E[ψ] = softmax(u).
func (s *Multiclass) LogPartition(u, mean []float64) float64 {
	lz := logmath.SumExp(u)
	for j := range mean {
		mean[j] = math.Exp(u[j] - lz)
	}
	return lz
}

// PartitionScaleExact marks LogPartition as accurate at any scale of the scores
// (ScaleExactPartition).
func (s *Multiclass) PartitionScaleExact() {}

// ScoreSampler draws class j with probability softmax(u)_j.
func (s *Multiclass) ScoreSampler(u []float64) ScoreSampler {
	return newCategorical(append([]float64(nil), u...), nil)
}
