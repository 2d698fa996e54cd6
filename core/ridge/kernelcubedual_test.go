package ridge

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// dualCases are the kernel cases with the dual's structure: all of them, multi-label and
// multi-class under the uniform measure.
func dualCases(t *testing.T) []kernelCase {
	var out []kernelCase
	for _, c := range kernelCases(t) {
		if _, _, ok := kernelDualSigma(c.p); ok {
			out = append(out, c)
		} else {
			t.Errorf("%s: not the dual's structure", c.name)
		}
	}
	if len(out) < 15 {
		t.Fatalf("%d cases with the dual's structure", len(out))
	}
	return out
}

// dualSetUp returns the kernel system of c, its σ, Kb and ‖Kb‖.
func dualSetUp(c kernelCase) (*kernelSystem, float64, *mat.Dense, float64) {
	m, d := c.p.dims()
	sigma, _, _ := kernelDualSigma(c.p)
	ks := newKernelSystem(c.p, c.K)
	Kb := mat.NewDense(d, m, nil)
	ks.kmul(Kb, ks.bT)
	return ks, sigma, Kb, norm(Kb.RawMatrix().Data)
}

// The dual reaches the optimum that unpreconditioned CG reaches far past any tolerance, on every
// multi-label kernel case (zero weights, singular and constant Gram matrices, α from 1e-4 to 1e4),
// and reports the relative gradient and J of the Γ it returns.
func TestKernelCubeDualReachesTheOptimum(t *testing.T) {
	for _, c := range dualCases(t) {
		m, d := c.p.dims()
		ks, sigma, Kb, kbNorm := dualSetUp(c)
		opt := Options{Alpha: c.p.Alpha, Tol: 1e-8, MaxIter: 1000}
		Gamma := mat.NewDense(m, d, nil)
		res, done, err := solveKernelCubeDual(ks, c.p, c.K, Kb, kbNorm, sigma, Gamma, &opt)
		if err != nil || !done || !res.Converged {
			t.Errorf("%s: done %v, %+v, %v", c.name, done, res, err)
			continue
		}
		j, rel := kernelRelGrad(c.p, c.K, Gamma)
		// The tolerances of kernel CG's own test (TestKernelSolverReachesTheOptimum).
		if rel > 1.05*opt.Tol || math.Abs(res.RelGrad-rel) > 1e-3*opt.Tol || math.Abs(res.Objective-j) > 1e-10*math.Abs(j) {
			t.Errorf("%s: reported J %.15g, relative gradient %.3g; true %.15g, %.3g", c.name, res.Objective, res.RelGrad, j, rel)
		}
		// Run to the reference's tolerance, the two must agree on the optimum.
		opt.Tol = 1e-12
		Gamma.Zero()
		if _, _, err := solveKernelCubeDual(ks, c.p, c.K, Kb, kbNorm, sigma, Gamma, &opt); err != nil {
			t.Fatal(err)
		}
		checkReferenceOptimum(t, c, Gamma, 1e-11)
		t.Logf("%s: %d dual iterations", c.name, res.Iterations)
	}
}

// The identities the dual's iteration rests on, at arbitrary t̃: b − A(Γ) = Q diag(r̃) Δ for
// Γ = Q C̃⁻¹ diag(t̃) Δ and r̃ = q − H̃ t̃; J(Γ) = −½ Σ_i (q_i − t̃_i − r̃_i)(q_i + r̃_i) + c; and
// J(Γ) − J* ≤ ½‖r̃‖².
func TestKernelCubeDualIdentities(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range dualCases(t) {
		m, d := c.p.dims()
		ks, sigma, Kb, kbNorm := dualSetUp(c)
		opt := Options{Alpha: c.p.Alpha, Tol: 1e-12, MaxIter: 1000}
		kd, err := newKernelCubeDual(ks, c.K, sigma, &opt)
		if kd == nil || err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The optimum, for J*.
		best := mat.NewDense(m, d, nil)
		if _, _, err := solveKernelCubeDual(ks, c.p, c.K, Kb, kbNorm, sigma, best, &opt); err != nil {
			t.Fatal(err)
		}
		jStar, _ := kernelRelGrad(c.p, c.K, best)
		for trial := 0; trial < 3; trial++ {
			tv, ht := make([]float64, m), make([]float64, m)
			for i := range tv {
				tv[i] = kd.q[i] * (1 + 0.3*r.NormFloat64())
			}
			kd.applyH(ht, tv)
			res := make([]float64, m)
			var formula, rr float64
			for i := range res {
				res[i] = kd.q[i] - ht[i]
				formula += (kd.q[i] - tv[i] - res[i]) * (kd.q[i] + res[i])
				rr += res[i] * res[i]
			}
			formula = -0.5*formula + c.p.Constant()
			Gamma := mat.NewDense(m, d, nil)
			if _, err := kd.judge(c.p, c.K, Kb, 1, tv, Gamma, &opt); err != nil {
				t.Fatal(err)
			}
			j, _ := kernelRelGrad(c.p, c.K, Gamma)
			scale := math.Abs(j) + math.Abs(c.p.Constant())
			if math.Abs(formula-j) > 1e-9*scale {
				t.Errorf("%s: J from the dual's residual %.12g, J(Γ) %.12g", c.name, formula, j)
			}
			if gap := j - jStar; gap > 0.5*rr*(1+1e-9)+1e-10*scale {
				t.Errorf("%s: J − J* = %.6g above ½‖r̃‖² = %.6g", c.name, gap, 0.5*rr)
			}
			// b − A(Γ) against Q diag(r̃) Δ.
			G := mat.DenseCopyOf(Gamma.T())
			KG, AG := mat.NewDense(d, m, nil), mat.NewDense(d, m, nil)
			ks.kmul(KG, G)
			ks.applyA(AG, G, KG)
			AG.Sub(ks.bT, AG)
			var worst, size float64
			for a := 0; a < d; a++ {
				for i := 0; i < m; i++ {
					want := kd.q[i] * res[i] * ks.DT.At(a, i)
					worst = math.Max(worst, math.Abs(AG.At(a, i)-want))
					size = math.Max(size, math.Abs(ks.bT.At(a, i)))
				}
			}
			if worst > 1e-8*math.Max(size, 1) {
				t.Errorf("%s: b − A(Γ) differs from Q diag(r̃) Δ by %.3g", c.name, worst)
			}
		}
	}
}

// The blocked triangular solves give C̃⁻¹V, across block boundaries (m = 700: blocks of 64 in
// blocks of 256, the last ones partial), for right-hand sides in one chunk of at most 8 (the
// eight-row panel kernels' one register), of 9–16, and in two chunks (70 > kernelDualCols).
func TestKernelCubeDualSolve(t *testing.T) {
	for _, d := range []int{7, 14, 70} {
		testKernelCubeDualSolve(t, d)
	}
}

func testKernelCubeDualSolve(t *testing.T, d int) {
	const m = 700
	r := rand.New(rand.NewPCG(5, uint64(d)))
	Xd := mat.NewDense(m, 3, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < 3; j++ {
			Xd.Set(i, j, r.NormFloat64())
		}
	}
	K := mat.NewDense(m, m, nil)
	kernel.Kernel{Kind: kernel.RBF, Gamma: 0.5}.Gram(K, Xd, Xd)
	ks := &kernelSystem{m: m, d: d, twoAlpha: 0.02, w: weights(r, m), DT: mat.NewDense(d, m, nil)}
	kd := &kernelCubeDual{ks: ks, m: m, d: d, twoAlpha: 0.02, sig: 0.25, q: make([]float64, m)}
	for i, w := range ks.w {
		kd.q[i] = math.Sqrt(w)
	}
	if ok, err := kd.factor(K, &Options{}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	kd.buffers()
	C := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := 0.25 * kd.q[i] * kd.q[j] * K.At(i, j)
			if i == j {
				v += 0.02
			}
			C.SetSym(i, j, v)
		}
	}
	VT := mat.NewDense(d, m, nil)
	for a := 0; a < d; a++ {
		for i := 0; i < m; i++ {
			VT.Set(a, i, r.NormFloat64())
		}
	}
	XT := mat.NewDense(d, m, nil)
	kd.solve(XT, VT)
	var back mat.Dense
	back.Mul(XT, C) // XT·C = VT
	var diff mat.Dense
	diff.Sub(&back, VT)
	if e := mat.Norm(&diff, math.Inf(1)) / mat.Norm(VT, math.Inf(1)); e > 1e-10 {
		t.Errorf("d = %d: ‖X C − V‖/‖V‖ = %.3g", d, e)
	}
}

// At MaxIter the dual returns its Γ, judged (not converged); a progress report asking to stop
// cancels it.
func TestKernelCubeDualStops(t *testing.T) {
	c := dualCases(t)[0]
	m, d := c.p.dims()
	ks, sigma, Kb, kbNorm := dualSetUp(c)
	opt := Options{Alpha: c.p.Alpha, Tol: 1e-12, MaxIter: 2}
	Gamma := mat.NewDense(m, d, nil)
	res, done, err := solveKernelCubeDual(ks, c.p, c.K, Kb, kbNorm, sigma, Gamma, &opt)
	j, rel := kernelRelGrad(c.p, c.K, Gamma)
	if err != nil || !done || res.Converged || res.Iterations != 2 || math.Abs(res.RelGrad-rel) > 1e-6*rel || math.Abs(res.Objective-j) > 1e-10*math.Abs(j) {
		t.Errorf("MaxIter 2: done %v, %+v (true J %.15g, relative gradient %.3g), %v", done, res, j, rel, err)
	}
	calls := 0
	opt = Options{Alpha: c.p.Alpha, Tol: 1e-12, MaxIter: 100, Progress: func(int, float64, float64) bool { calls++; return calls < 2 }}
	if _, _, err := solveKernelCubeDual(ks, c.p, c.K, Kb, kbNorm, sigma, Gamma, &opt); !errors.Is(err, ErrCancelled) || calls != 2 {
		t.Errorf("progress stop: %v after %d calls", err, calls)
	}
}

// The choice follows the measured costs: the dual first at small α, where kernel CG needs many
// iterations, while the factorisation is cheap against them; kernel CG first otherwise, with the
// dual taking over after a share of its cost.
func TestUseKernelCubeDual(t *testing.T) {
	for _, c := range []struct {
		kind  string
		m, d  int
		alpha float64
		want  bool
	}{
		{"multilabel", 1500, 14, 0.01, true}, {"multilabel", 1500, 14, 0.03, true}, {"multilabel", 1500, 14, 1, false},
		{"multilabel", 500, 14, 0.1, true}, {"multilabel", 500, 6, 0.01, true}, {"multilabel", 500, 6, 1, false},
		{"multilabel", 1500, 6, 0.01, false}, {"multilabel", 20000, 14, 0.001, false},
		{"multiclass", 1500, 10, 0.1, false}, {"multiclass", 1500, 10, 0.003, true}, {"multiclass", 1500, 10, 0.001, true},
	} {
		sp, err := space.New(c.kind, []int64{int64(c.d)})
		if err != nil {
			t.Fatal(err)
		}
		_, ys := synthetic(t, sp, c.m, 1, 1)
		p, err := NewProblem(sp, ys, c.m, nil, c.alpha)
		if err != nil {
			t.Fatal(err)
		}
		plan := planKernelDual(p, 2, &Options{Alpha: c.alpha, Kernel: kernel.Kernel{Kind: kernel.RBF}, Tol: 1e-8, MaxIter: 1000})
		if !plan.use || plan.first != c.want || plan.primalIters < 1 {
			t.Errorf("%s, m = %d, d = %d, α = %v: %+v, want the dual first: %v", c.kind, c.m, c.d, c.alpha, plan, c.want)
		}
	}
}

// The dual's structure: S = σI on the span of the δ_i, under the uniform measure only.
func TestKernelDualSigma(t *testing.T) {
	for _, c := range []struct {
		kind  string
		shape []int64
		ref   bool
		sigma float64
		ok    bool
	}{
		{"multilabel", []int64{5}, false, 0.25, true},
		{"multiclass", []int64{4}, false, 0.25, true},
		{"multiclass", []int64{8}, false, 0.125, true},
		{"ksubsets", []int64{6, 2}, false, 0, true},
		{"permutations", []int64{4}, false, 0, false},
		{"multilabel", []int64{5}, true, 0, false},
	} {
		sp, err := space.New(c.kind, c.shape)
		if err != nil {
			t.Fatal(err)
		}
		const m = 30
		_, ys := synthetic(t, sp, m, 2, 3)
		p, err := NewProblem(sp, ys, m, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if c.ref { // any reference measure set on the problem, even the uniform one's moments
			d := sp.Dim()
			S := mat.NewSymDense(d, nil)
			for a := 0; a < d; a++ {
				for b := a; b < d; b++ {
					S.SetSym(a, b, p.S.At(a, b))
				}
			}
			p.setReference(newReference(append([]float64(nil), p.Mean...), S, d))
		}
		sigma, _, ok := kernelDualSigma(p)
		if ok != c.ok || c.sigma != 0 && sigma != c.sigma {
			t.Errorf("%s %v (reference %v): σ = %v, %v", c.kind, c.shape, c.ref, sigma, ok)
		}
		if ok { // S u = σu on the δ_i
			u := mat.NewVecDense(sp.Dim(), nil)
			u.MulVec(p.S, mat.NewVecDense(sp.Dim(), p.Delta.RawRowView(0)))
			for a := 0; a < sp.Dim(); a++ {
				if math.Abs(u.AtVec(a)-sigma*p.Delta.At(0, a)) > 1e-12 {
					t.Errorf("%s: S δ_0 ≠ σ δ_0", c.kind)
					break
				}
			}
		}
	}
}

// When kernel CG goes first and has not converged within its share of the iterations, the dual
// takes over from Γ = 0: the fit converges to the optimum, its iterations counted across both,
// and progress reports numbered on.
func TestKernelDualTakesOverFromKernelCG(t *testing.T) {
	for _, c := range dualCases(t)[:4] {
		m, d := c.p.dims()
		sigma, _, _ := kernelDualSigma(c.p)
		var calls []int
		opt := Options{Alpha: c.p.Alpha, Tol: 1e-10, MaxIter: 1000, Progress: func(it int, _, _ float64) bool {
			calls = append(calls, it)
			return true
		}}
		Gamma := mat.NewDense(m, d, nil)
		plan := kernelDualPlan{sigma: sigma, use: true, primalIters: 2}
		res, err := solveKernelPlanned(c.p, newKernelSystem(c.p, c.K), c.K, check.MaxAbs(c.K.RawMatrix().Data), Gamma, &opt, plan)
		if err != nil {
			t.Fatal(err)
		}
		j, rel := kernelRelGrad(c.p, c.K, Gamma)
		if !res.Converged || res.Iterations <= 2 || rel > 1.05*opt.Tol || math.Abs(res.Objective-j) > 1e-10*math.Abs(j) {
			t.Errorf("%s: %+v, true J %.15g, relative gradient %.3g", c.name, res, j, rel)
		}
		if len(calls) != res.Iterations {
			t.Errorf("%s: %d progress calls for %d iterations", c.name, len(calls), res.Iterations)
		}
		for i, it := range calls {
			if it != i+1 {
				t.Errorf("%s: progress call %d reports iteration %d", c.name, i, it)
				break
			}
		}
	}
}

// The plan reads α over the mean weight (weights c·s_i with α give the model of s_i with α/c),
// and leaves weights more than kernelDualWeightRange apart to kernel CG.
func TestPlanKernelDualWeights(t *testing.T) {
	sp, _ := space.NewMultilabel(14)
	const m = 1500
	_, ys := synthetic(t, sp, m, 1, 1)
	opt := &Options{Kernel: kernel.Kernel{Kind: kernel.RBF}, Tol: 1e-8, MaxIter: 1000}
	plan := func(alpha float64, w []float64) kernelDualPlan {
		p, err := NewProblem(sp, ys, m, w, alpha)
		if err != nil {
			t.Fatal(err)
		}
		return planKernelDual(p, 2, opt)
	}
	scaled := make([]float64, m)
	for i := range scaled {
		scaled[i] = 1e4
	}
	if a, b := plan(1, scaled), plan(1e-4, nil); a != b || !a.first {
		t.Errorf("weights 1e4 at α = 1: %+v; unit weights at α = 1e-4: %+v", a, b)
	}
	spread := make([]float64, m)
	for i := range spread {
		spread[i] = 1
	}
	spread[0] = 1e13
	if p := plan(1e-4, spread); p.use {
		t.Errorf("weights 1 and 1e13: %+v, want kernel CG alone", p)
	}
}
