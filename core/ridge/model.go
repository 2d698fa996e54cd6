package ridge

import (
	"fmt"
	"math"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// Model is a fitted StructuredRidge. Its matrices are its own (never views of caller memory), and a
// fitted Model is read-only, so Decision and Predict are safe for concurrent use.
type Model struct {
	Space     space.Space
	Kernel    kernel.Kernel
	Intercept bool
	NFeatures int        // columns of the X given to Fit (for precomputed kernels: training samples)
	Coef      *mat.Dense // linear kernel: W, NFeatures(+1 intercept row) × d
	Dual      *mat.Dense // other kernels: Γ = Aᵀ, training samples × d
	Support   *mat.Dense // rbf and poly kernels: the training inputs, samples × NFeatures
	Result    Result

	supportNorms []float64 // ‖support_i‖², set with Support
}

// setSupport stores the training inputs of a kernel model with what prediction needs from them.
func (md *Model) setSupport(s *mat.Dense) {
	md.Support = s
	md.supportNorms = kernel.SquaredNorms(s)
}

// Fit trains StructuredRidge on inputs X (m×n, row-major, not retained) and structures ys
// (m × sp.Width()), with optional sample weights.
func Fit(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if m < 1 || n < 1 {
		return nil, fmt.Errorf("X must have at least one sample and one feature, got %d×%d", m, n)
	}
	if len(X) != m*n {
		return nil, fmt.Errorf("X has %d values, want %d×%d", len(X), m, n)
	}
	if err := check.Finite("X", X, n); err != nil {
		return nil, err
	}
	p, err := NewProblem(sp, ys, m, weights, opt.Alpha)
	if err != nil {
		return nil, err
	}
	Xm := mat.NewDense(m, n, X)
	model := &Model{Space: sp, Kernel: opt.Kernel, Intercept: opt.Intercept, NFeatures: n}
	d := sp.Dim()
	if opt.Kernel.Kind == kernel.Linear {
		des := design{X: Xm, intercept: opt.Intercept}
		solver := opt.Solver
		if solver == Auto {
			solver = CG
			if des.cols()*d <= exactLimit {
				solver = Exact
			}
		}
		if solver == Exact {
			if des.cols()*d > MaxExactUnknowns {
				return nil, fmt.Errorf("solver=exact would factor a %d×%d matrix (features × output dimension > %d); use solver=\"cg\"",
					des.cols()*d, des.cols()*d, MaxExactUnknowns)
			}
			model.Coef, err = solveLinearExact(p, des)
			if err != nil {
				return nil, err
			}
			grad := mat.NewDense(des.cols(), d, nil)
			model.Result.Objective = p.LinearObjective(Xm, opt.Intercept, model.Coef, grad)
			g0 := mat.NewDense(des.cols(), d, nil)
			p.LinearObjective(Xm, opt.Intercept, mat.NewDense(des.cols(), d, nil), g0)
			model.Result.RelGrad = mat.Norm(grad, 2) / math.Max(mat.Norm(g0, 2), math.SmallestNonzeroFloat64)
			model.Result.Converged = true
			return model, nil
		}
		model.Coef = mat.NewDense(des.cols(), d, nil)
		model.Result, err = solveLinearCG(p, des, model.Coef, &opt)
		if err != nil {
			return nil, err
		}
		return model, nil
	}
	if m > MaxKernelSamples {
		return nil, fmt.Errorf("a %v kernel model on %d samples needs their %d×%d Gram matrix; at most %d samples are supported: use the linear kernel or subsample",
			opt.Kernel.Kind, m, m, m, MaxKernelSamples)
	}
	var K *mat.Dense
	if opt.Kernel.Kind == kernel.Precomputed {
		if m != n {
			return nil, fmt.Errorf("a precomputed kernel must be square (samples × samples), got %d×%d", m, n)
		}
		if err := checkSymmetric(Xm); err != nil {
			return nil, err
		}
		K = mat.DenseCopyOf(Xm)
	} else {
		model.setSupport(mat.DenseCopyOf(Xm))
		K = mat.NewDense(m, m, nil)
		opt.Kernel.Gram(K, Xm, Xm)
	}
	if opt.Intercept {
		addConstant(K, 1)
	}
	model.Dual = mat.NewDense(m, d, nil)
	model.Result, err = solveKernelCG(p, K, model.Dual, &opt)
	if err != nil {
		return nil, err
	}
	return model, nil
}

// predictBlock bounds the q×m kernel block built at prediction time.
const predictBlock = 1024

// Decision writes the scores u = Wᵀx̃ (or Γᵀk(x)) of q inputs X (q×n, row-major) into U (q×d).
func (md *Model) Decision(X []float64, q, n int, U []float64) error {
	if n != md.NFeatures {
		what := "features"
		if md.Kernel.Kind == kernel.Precomputed {
			what = "columns (training samples) in the precomputed kernel"
		}
		return fmt.Errorf("X has %d %s, the model was fitted with %d", n, what, md.NFeatures)
	}
	d := md.Space.Dim()
	if len(X) != q*n || len(U) != q*d {
		return fmt.Errorf("buffer sizes do not match %d rows of %d features and %d scores", q, n, d)
	}
	if q == 0 {
		return nil
	}
	if err := check.Finite("X", X, n); err != nil {
		return err
	}
	Xm := mat.NewDense(q, n, X)
	Um := mat.NewDense(q, d, U)
	if md.Coef != nil {
		design{X: Xm, intercept: md.Intercept}.mul(Um, md.Coef)
		return nil
	}
	m, _ := md.Dual.Dims()
	kb := mat.NewDense(min(q, predictBlock), m, nil)
	for lo := 0; lo < q; lo += predictBlock {
		hi := min(lo+predictBlock, q)
		xb := Xm.Slice(lo, hi, 0, n).(*mat.Dense)
		kx := kb.Slice(0, hi-lo, 0, m).(*mat.Dense)
		if md.Kernel.Kind == kernel.Precomputed {
			kx.Copy(xb)
		} else {
			md.Kernel.GramNorms(kx, xb, md.Support, md.supportNorms)
		}
		if md.Intercept {
			addConstant(kx, 1)
		}
		Um.Slice(lo, hi, 0, d).(*mat.Dense).Mul(kx, md.Dual)
	}
	return nil
}

// Predict decodes the scores of q inputs into structures ys (q × Width()).
func (md *Model) Predict(X []float64, q, n int, ys []int64) error {
	if len(ys) != q*md.Space.Width() {
		return fmt.Errorf("output has %d values, want %d×%d", len(ys), q, md.Space.Width())
	}
	U := make([]float64, q*md.Space.Dim())
	if err := md.Decision(X, q, n, U); err != nil {
		return err
	}
	space.DecodeRows(md.Space, U, q, ys)
	return nil
}

func addConstant(a *mat.Dense, c float64) {
	r, cols := a.Dims()
	for i := 0; i < r; i++ {
		row := a.RawRowView(i)
		for j := 0; j < cols; j++ {
			row[j] += c
		}
	}
}

func checkSymmetric(k *mat.Dense) error {
	m, _ := k.Dims()
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			a, b := k.At(i, j), k.At(j, i)
			if math.Abs(a-b) > 1e-8*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
				return fmt.Errorf("the precomputed kernel is not symmetric: K[%d, %d] = %v but K[%d, %d] = %v", i, j, a, j, i, b)
			}
		}
	}
	return nil
}
