package ridge

import (
	"gonum.org/v1/gonum/mat"
)

// solveKernelCG minimises J over the expansion coefficients, stored transposed as Γ = Aᵀ (m×d) so
// that the scores are U = KΓ. With A(Γ) = 2αΓ + curvature(KΓ) and b = diag(s)Δ, the gradient is
// K(A(Γ) − b): A is self-adjoint and positive in the K-inner product, so conjugate gradients in
// that inner product (equivalently, CG on the Hessian preconditioned by K⁻¹) converge at a rate set
// by the conditioning of A alone, not of K, and need a single product with K per iteration.
func solveKernelCG(p *Problem, K, Gamma *mat.Dense, opt *Options) (Result, error) {
	m, d := Gamma.Dims()
	b := mat.NewDense(m, d, nil)
	for i := 0; i < m; i++ {
		src, dst := p.Delta.RawRowView(i), b.RawRowView(i)
		for a := range src {
			dst[a] = p.Weight[i] * src[a]
		}
	}
	var Kb mat.Dense
	Kb.Mul(K, b)
	kbNorm := mat.Norm(&Kb, 2)
	if kbNorm == 0 {
		Gamma.Zero()
		return Result{Objective: p.Constant(), Converged: true}, nil
	}
	rho, Krho := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
	P, KP := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
	AP, KAP := mat.NewDense(m, d, nil), mat.NewDense(m, d, nil)
	curv := mat.NewDense(m, d, nil)

	applyA := func(dst, V, KV *mat.Dense) { // dst = 2αV + curvature(KV)
		p.curvature(curv, KV)
		dst.Scale(2*p.Alpha, V)
		dst.Add(dst, curv)
	}
	// restart recomputes the residual from Γ, dropping the error the recurrences accumulate.
	restart := func() float64 {
		KP.Mul(K, Gamma)
		applyA(AP, Gamma, KP)
		rho.Sub(b, AP)
		Krho.Mul(K, rho)
		P.Copy(rho)
		KP.Copy(Krho)
		return mat.Sum(elemMul(rho, Krho))
	}
	objective := func() float64 {
		var t mat.Dense
		t.Add(&Kb, Krho)
		return -0.5*mat.Sum(elemMul(Gamma, &t)) + p.Constant()
	}
	const restartEvery = 50
	res := Result{}
	gamma := restart()
	for it := 1; ; it++ {
		if mat.Norm(Krho, 2)/kbNorm <= opt.Tol {
			res.Converged = true
			break
		}
		if it > opt.MaxIter || gamma <= 0 {
			break
		}
		applyA(AP, P, KP)
		KAP.Mul(K, AP)
		step := gamma / mat.Sum(elemMul(P, KAP))
		Gamma.Add(Gamma, scaled(step, P))
		rho.Sub(rho, scaled(step, AP))
		Krho.Sub(Krho, scaled(step, KAP))
		res.Iterations = it
		if opt.Progress != nil && !opt.Progress(it, objective(), mat.Norm(Krho, 2)/kbNorm) {
			return res, ErrCancelled
		}
		if it%restartEvery == 0 {
			gamma = restart()
			continue
		}
		gammaNew := mat.Sum(elemMul(rho, Krho))
		beta := gammaNew / gamma
		P.Scale(beta, P)
		P.Add(P, rho)
		KP.Scale(beta, KP)
		KP.Add(KP, Krho)
		gamma = gammaNew
	}
	restart()
	res.RelGrad = mat.Norm(Krho, 2) / kbNorm
	res.Converged = res.RelGrad <= opt.Tol
	res.Objective = objective()
	return res, nil
}
