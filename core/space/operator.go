package space

import (
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/combpred/combpred/core/cancel"
)

// Operator is a symmetric linear operator on R^d, such as the covariance S of a space.
// Spaces whose d is large implement MulVec in less than O(d²) time and memory.
type Operator interface {
	// Dim is d.
	Dim() int
	// MulVec writes S·v into dst; dst and v have length d and do not overlap.
	MulVec(dst, v []float64)
	// At returns the entry S[i, j].
	At(i, j int) float64
}

// Dense materialises op as a d×d symmetric matrix. It costs O(d²) memory: use it only where d is
// known to be moderate.
func Dense(op Operator) *mat.SymDense {
	s, _ := DenseUntil(op, nil)
	return s
}

// DenseUntil is Dense, ended once stop is set (nil: never), which it looks at before every row;
// it then returns cancel.ErrCancelled. An entry can cost a walk over a descendant set (a DAG's
// paths: 6 s for 1,000 nodes of 100 parents each, which a fit's set-up spent deaf to Ctrl-C,
// probe CW).
func DenseUntil(op Operator, stop *cancel.Flag) (*mat.SymDense, error) {
	d := op.Dim()
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		if stop.Stopped() {
			return nil, stop.Err()
		}
		for j := i; j < d; j++ {
			s.SetSym(i, j, op.At(i, j))
		}
	}
	return s, nil
}

// diagPlusConst is the operator diag(a) + c·11ᵀ, the covariance shape of sets of independent or
// mutually exclusive indicators.
type diagPlusConst struct {
	diag []float64
	c    float64
}

// DiagonalPlusConstant is implemented by the operators diag(a) + c·11ᵀ (multi-class, multi-label,
// k-subsets), so that a solver can apply them inside a pass over its rows that does more than
// S·v (the linear solver's curvature), instead of in a pass of their own.
type DiagonalPlusConstant interface {
	Operator
	// DiagonalPlusConstant returns a and c; a must not be modified.
	DiagonalPlusConstant() (a []float64, c float64)
}

func (o diagPlusConst) DiagonalPlusConstant() ([]float64, float64) { return o.diag, o.c }

func (o diagPlusConst) Dim() int { return len(o.diag) }

func (o diagPlusConst) MulVec(dst, v []float64) {
	sum := floats.Sum(v)
	for i, x := range v {
		dst[i] = o.diag[i]*x + o.c*sum
	}
}

func (o diagPlusConst) At(i, j int) float64 {
	if i == j {
		return o.diag[i] + o.c
	}
	return o.c
}
