package ridge

import "math"

// resolveSolver resolves Auto for a linear model of k rows of W (the intercept's included) on n
// features and d outputs, fitted on m examples whose ψ have z() non-zero coordinates on average
// (counted only when the choice needs it): the exact solver when the unknowns k·d are at most
// ExactLimit and the cost model autoExact prefers it, CG otherwise. The statistics take n + 1
// columns whether or not there is an intercept.
func resolveSolver(s Solver, m, n, k, d int, z func() float64) Solver {
	if s != Auto {
		return s
	}
	if k*d <= ExactLimit && autoExact(m, n+1, k, d, z()) {
		return Exact
	}
	return CG
}

// autoExact compares the exact solve's cost with CG's, in units of CG's time per multiply-add.
// CG costs about 4·m·k·d multiply-adds per iteration in blocked products, over some 25 iterations.
// Accumulating the statistics visits the c(c+1)/2 pairs of the c = n + 1 columns of every example
// (the constant's included), at a weight of 7 per pair of non-zero coordinates of ψ
// (z(z+1)/2 + z + 1 of them, scalar loops) and 40 for the visit itself; the factorisation and the
// normal equations cost 3.5·(kd)³. The weights
// were fitted to fits timed on 2 cores (Multilabel(10), Multilabel(20), Multiclass(10) and
// Permutations(5), 200 and 5,000 examples, 30–410 unknowns), where the former rule, exact up to
// 600 unknowns, took up to 12× CG's time (Permutations(5), 5,000 examples, 40 features: 68 ms
// against 5.7).
//
// Below autoExactFloor the exact solve wins whatever CG would cost: it is a fraction of a
// millisecond, and it keeps the statistics with which partial_fit continues a fit exactly
// (scikit-learn's estimator checks call partial_fit after fit, on 10 rows).
func autoExact(m, cols, k, d int, z float64) bool {
	mf, cf, kf, df := float64(m), float64(cols), float64(k), float64(d)
	exact := mf*cf*(cf+1)/2*(7*(z*(z+1)/2+z+1)+40) + 3.5*math.Pow(kf*df, 3)
	return exact <= max(100*mf*kf*df, autoExactFloor)
}

// autoExactFloor is the exact solve's cost, in autoExact's units (about 30 ps each on the machine
// of its measurements), below which Auto always takes it.
const autoExactFloor = 1e7

// meanNonzeros is the mean number of non-zero coordinates of ψ(y_i) = δ_i + p over p's examples,
// held densely (FitSparseY counts the ones of its sparse targets itself).
func meanNonzeros(p *Problem) float64 {
	m, _ := p.dims()
	if m == 0 {
		return 0
	}
	nnz := 0
	for i := range m {
		nnz += p.psiNonzeros(i)
	}
	return float64(nnz) / float64(m)
}
