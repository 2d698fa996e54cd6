package space

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/combpred/combpred/core/logmath"
)

func init() {
	Register("multilabel", func(p []int64) (Space, error) { return newFromOne("multilabel", p, NewMultilabel) })
}

// Multilabel is the space of all 2^d subsets of d labels, encoded as a 0/1 row of length d;
// ψ is the indicator vector itself.
type Multilabel struct{ d int }

// NewMultilabel returns the space of subsets of d labels (d ≥ 1).
func NewMultilabel(d int) (*Multilabel, error) {
	if d < 1 {
		return nil, fmt.Errorf("space: multilabel needs n_labels ≥ 1, got %d", d)
	}
	if err := checkSize("multilabel", "n_labels", int64(d), int64(d), int64(d)); err != nil {
		return nil, err
	}
	return &Multilabel{d: d}, nil
}

func (s *Multilabel) Kind() string       { return "multilabel" }
func (s *Multilabel) Params() []int64    { return []int64{int64(s.d)} }
func (s *Multilabel) Dim() int           { return s.d }
func (s *Multilabel) Width() int         { return s.d }
func (s *Multilabel) LogCount() float64  { return float64(s.d) * math.Ln2 }
func (s *Multilabel) Guarantee() float64 { return 0 }

// PsiZeroOne is true: ψ is an indicator vector.
func (s *Multilabel) PsiZeroOne() bool { return true }

// Mean is ½ in every coordinate: each label is in half of the subsets.
func (s *Multilabel) Mean(p []float64) {
	for i := range p {
		p[i] = 0.5
	}
}

// Covariance is I/4: labels are independent fair coins under the uniform distribution.
func (s *Multilabel) Covariance() Operator {
	diag := make([]float64, s.d)
	for i := range diag {
		diag[i] = 0.25
	}
	return diagPlusConst{diag: diag}
}

func (s *Multilabel) Validate(y []int64) error {
	if len(y) != s.d {
		return fmt.Errorf("a multilabel row has %d entries, got %d", s.d, len(y))
	}
	for j, v := range y {
		if v != 0 && v != 1 {
			return fmt.Errorf("label %d has value %d, want 0 or 1", j, v)
		}
	}
	return nil
}

func (s *Multilabel) Embed(y []int64, psi []float64) {
	for j, v := range y {
		psi[j] = float64(v)
	}
}

func (s *Multilabel) Sample(r *rand.Rand, y []int64) {
	for j := 0; j < s.d; j += 64 {
		bits := r.Uint64()
		for k := j; k < s.d && k < j+64; k++ {
			y[k] = int64(bits & 1)
			bits >>= 1
		}
	}
}

// Decode keeps the labels with a positive score; ⟨u, ψ⟩ separates over labels.
func (s *Multilabel) Decode(u []float64, y []int64) {
	for j, v := range u {
		// one store after a conditional move: a store in each branch of an if compiled to a
		// branch, which scores of either sign mispredict half the time (8.5 against 1.0 ms for
		// 2²¹ scores)
		b := int64(0)
		if v > 0 {
			b = 1
		}
		y[j] = b
	}
}

func (s *Multilabel) Enumerate(yield func(y []int64) bool) error {
	if s.d > 22 {
		return ErrTooLarge
	}
	y := make([]int64, s.d)
	for mask := 0; mask < 1<<s.d; mask++ {
		for j := range y {
			y[j] = int64(mask >> j & 1)
		}
		if !yield(y) {
			return nil
		}
	}
	return nil
}

// HasPartition is true: log Z and E[ψ] have a closed form.
func (s *Multilabel) HasPartition() bool { return true }

// LogPartition: labels are independent, Z = Π_j (1 + e^{u_j}), E[ψ_j] = σ(u_j).
func (s *Multilabel) LogPartition(u, mean []float64) float64 {
	var lz float64
	for j, x := range u {
		lz += logmath.Log1pExp(x)
		if mean != nil {
			mean[j] = logmath.Logistic(x)
		}
	}
	return lz
}

// PartitionScaleExact marks LogPartition as accurate at any scale of the scores
// (ScaleExactPartition).
func (s *Multilabel) PartitionScaleExact() {}

// ScoreSampler draws each label independently, present with probability σ(u_j).
func (s *Multilabel) ScoreSampler(u []float64) ScoreSampler { return bernoulliRow{p: logisticRow(u)} }
