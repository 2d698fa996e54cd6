// Package kernel computes Gram matrices of the input kernels combpred supports.
package kernel

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/mat"
)

// Kind names an input kernel.
type Kind int

// The kernels. Linear models are solved in the primal; the others through the kernel expansion.
const (
	Linear Kind = iota
	Poly
	RBF
	Precomputed
)

var kindNames = [...]string{"linear", "poly", "rbf", "precomputed"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind maps a kernel name to its Kind.
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if n == name {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown kernel %q (want linear, poly, rbf or precomputed)", name)
}

// Kernel is an input kernel with its parameters:
// linear ⟨a,b⟩, poly (γ⟨a,b⟩ + coef0)^degree, rbf exp(−γ‖a−b‖²).
type Kernel struct {
	Kind   Kind
	Gamma  float64
	Degree int
	Coef0  float64
}

// Validate reports parameters that make the kernel meaningless.
func (k Kernel) Validate() error {
	switch k.Kind {
	case Linear, Precomputed:
	case RBF:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("gamma must be a positive finite number for the rbf kernel, got %v", k.Gamma)
		}
	case Poly:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("gamma must be a positive finite number for the poly kernel, got %v", k.Gamma)
		}
		if k.Degree < 1 {
			return fmt.Errorf("degree must be ≥ 1, got %d", k.Degree)
		}
		if math.IsNaN(k.Coef0) || math.IsInf(k.Coef0, 0) {
			return fmt.Errorf("coef0 must be finite, got %v", k.Coef0)
		}
	default:
		return fmt.Errorf("unknown kernel kind %d", int(k.Kind))
	}
	return nil
}

// Gram writes k(a_i, b_j) into dst (rows of a × rows of b). a and b have the same number of
// columns. Precomputed kernels have no Gram matrix: the caller passes the matrix itself.
func (k Kernel) Gram(dst *mat.Dense, a, b mat.Matrix) {
	dst.Mul(a, b.T())
	if k.Kind == Linear {
		return
	}
	rows, cols := dst.Dims()
	raw := dst.RawMatrix()
	switch k.Kind {
	case Poly:
		deg := float64(k.Degree)
		parallel.For(rows, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+cols]
				for j, v := range row {
					row[j] = math.Pow(k.Gamma*v+k.Coef0, deg)
				}
			}
		})
	case RBF:
		na, nb := sqNorms(a), sqNorms(b)
		parallel.For(rows, 64, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+cols]
				for j, v := range row {
					// ‖a−b‖² by the expansion can go slightly negative through rounding.
					row[j] = math.Exp(-k.Gamma * math.Max(0, na[i]+nb[j]-2*v))
				}
			}
		})
	default:
		panic("kernel: Gram called on a " + k.Kind.String() + " kernel")
	}
}

func sqNorms(a mat.Matrix) []float64 {
	r, _ := a.Dims()
	out := make([]float64, r)
	for i := range out {
		v := mat.Row(nil, i, a)
		out[i] = mat.Dot(mat.NewVecDense(len(v), v), mat.NewVecDense(len(v), v))
	}
	return out
}
