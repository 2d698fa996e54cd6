package ridge

import (
	"errors"
	"fmt"
	"slices"

	"github.com/combpred/combpred/core/cancel"
	"gonum.org/v1/gonum/mat"
)

// solveKernelExact writes into Gamma (m×d) the expansion coefficients that solve the optimality
// condition of the kernel model directly, and returns J there.
//
// With scores U = KΓ, J is minimised where K(A(Γ) − b) = 0, A(Γ) = 2αΓ + T(KΓ), b = diag(s)Δ and
// T = blockdiag(s_i M_i), M_i = S + δ_iδ_iᵀ (see solveKernelCG). The linear system A(Γ) = b has a
// unique solution even when K is singular: its matrix 2αI + T(K ⊗ I_d) is 2αI plus a product of
// two positive semi-definite matrices, whose eigenvalues are real and ≥ 0, so every eigenvalue is
// at least 2α. It is not symmetric, hence LU rather than Cholesky; (md)² doubles of memory and
// O((md)³) time, which is why Auto never picks it: CG with deflation is far cheaper (fitKernel).
func solveKernelExact(p *Problem, K *mat.Dense, kScale float64, Gamma *mat.Dense, opt *Options) (Result, error) {
	m, d := Gamma.Dims()
	N := m * d
	if N > MaxExactUnknowns {
		return Result{}, fmt.Errorf("solver=exact would factor a %d×%d matrix (samples × output dimension > %d); use solver=\"cg\"",
			N, N, MaxExactUnknowns)
	}
	if err := checkPSD(K, kScale, opt.Stop); err != nil {
		return Result{}, err
	}
	S := p.S
	M := mat.NewDense(N, N, nil)
	Mi := make([]float64, d*d)
	b := mat.NewVecDense(N, nil)
	for i := 0; i < m; i++ {
		di, s := p.Delta.RawRowView(i), p.Weight[i]
		for a := 0; a < d; a++ {
			for c := 0; c < d; c++ {
				Mi[a*d+c] = s * (S.At(a, c) + di[a]*di[c])
			}
			b.SetVec(i*d+a, s*di[a])
		}
		kRow := K.RawRowView(i)
		for a := 0; a < d; a++ {
			row := M.RawRowView(i*d + a)
			for j, kij := range kRow {
				if kij == 0 {
					continue
				}
				block := row[j*d : j*d+d]
				for c, v := range Mi[a*d : a*d+d] {
					block[c] += kij * v
				}
			}
			row[i*d+a] += 2 * p.Alpha
		}
	}
	if err := opt.Stop.Err(); err != nil {
		return Result{}, err
	}
	g := slices.Clone(b.RawVector().Data)
	if err := solveLU(M, g, opt.Stop); err != nil {
		if errors.Is(err, ErrCancelled) {
			return Result{}, err
		}
		// Only rounding can make the matrix singular (its eigenvalues are ≥ 2α): inputs at extreme
		// scales, or weights whose lightest examples fall below the heaviest's rounding, which CG
		// would leave unfitted too (probe ET).
		if top, low := weightRange(p.Weight, p.Alpha); top/low > 1/kernelRangeEpsilon {
			return Result{}, fmt.Errorf("the kernel model's normal equations are numerically singular: %s, beyond float64's "+
				"16 digits, and no solver of a kernel model keeps the lightest examples: drop or raise the lightest weights, "+
				"or lower the heaviest (%v)", weightSpan(top/low), err)
		}
		return Result{}, fmt.Errorf("the kernel model's normal equations are numerically singular (inputs or alpha at an extreme scale?); try solver=\"cg\": %v", err)
	}
	Gamma.Copy(mat.NewDense(m, d, g))

	A := mat.DenseCopyOf(Gamma.T())
	grad := mat.NewDense(d, m, nil)
	res := Result{Iterations: 1, Objective: p.KernelObjective(K, A, grad), Converged: true}
	var kb mat.Dense // ∇J at Γ = 0 is −bᵀK
	kb.Mul(mat.NewDense(m, d, b.RawVector().Data).T(), K)
	if n0 := mat.Norm(&kb, 2); n0 > 0 {
		res.RelGrad = mat.Norm(grad, 2) / n0
	}
	// A direct solve is as good as its rounding allows: duplicated samples at alpha 1e-12 left a
	// relative gradient of 5e-3 and J at 900 times the minimum, reported converged. Judged by tol
	// like the iterative solvers, such a solve is not converged, and the caller warns (Tol = 0
	// sets no tolerance).
	res.Converged = !(opt.Tol > 0) || res.RelGrad <= opt.Tol
	return res, progressOnce(opt, res)
}

// checkPSD refuses a kernel matrix K (m×m, max |K_ij| = kScale) with an eigenvalue below
// −indefinite·kScale, the margin of CG's curvature check, by a Cholesky factorisation of
// K + indefinite·kScale·I: on an indefinite K the objective is unbounded below, and the direct
// solve returned its stationary point, a meaningless model, without a word (CG refused the same
// K). It costs m³/3, against the (md)³ of the solve it guards.
func checkPSD(K *mat.Dense, kScale float64, stop *cancel.Flag) error {
	m, _ := K.Dims()
	a := mat.DenseCopyOf(K)
	raw := a.RawMatrix()
	for i := 0; i < m; i++ {
		raw.Data[i*raw.Stride+i] += indefinite * kScale
	}
	err := factorCholesky(raw, stop)
	if errors.Is(err, errNotPositiveDefinite) {
		return fmt.Errorf("the kernel matrix is not positive semi-definite (an eigenvalue below −%g·max |K_ij| = %.3g): %s",
			indefinite, -indefinite*kScale, needPSD)
	}
	return err
}
