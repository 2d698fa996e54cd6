package ridge

import (
	"fmt"
	"sort"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// newCubeProblem is newProblem for a cube space (space.IsCube: multi-label) whose m targets are
// given by the positions of their ones (indptr, indices: a CSR matrix without its values). Δ is
// held sparsely (cubeTargets), in memory O(nnz(Y) + m + d) instead of m×d, and S only as the
// operator when d > denseMaxDim. The uniform reference is the only one: the others need Δ
// densely (densify).
func newCubeProblem(sp space.Space, m int, indptr, indices []int64, weights []float64, alpha float64) (*Problem, error) {
	if err := check.Alpha(alpha); err != nil {
		return nil, err
	}
	if !space.IsCube(sp) {
		return nil, fmt.Errorf("targets given as the positions of their ones need a space of 0/1 vectors with ψ(y) = y (multilabel), not %s", sp.Kind())
	}
	d := sp.Dim()
	if err := checkCubeTargets(m, d, indptr, indices); err != nil {
		return nil, err
	}
	w, err := sampleWeights(weights, m, false)
	if err != nil {
		return nil, err
	}
	p := make([]float64, d)
	sp.Mean(p)
	prob := &Problem{Alpha: alpha, Cov: sp.Covariance(), Weight: w, Mean: p, targets: cubeTargets(m, d, indptr, indices, p)}
	if d <= denseMaxDim {
		prob.S = space.Dense(prob.Cov)
	}
	return prob, nil
}

// checkCubeTargets checks a CSR pattern of m rows over d columns: indptr of length m + 1 from 0,
// non-decreasing, ending at len(indices); each row's indices strictly increasing in [0, d).
func checkCubeTargets(m, d int, indptr, indices []int64) error {
	if len(indptr) != m+1 || indptr[0] != 0 || indptr[m] != int64(len(indices)) {
		return fmt.Errorf("Y: the row pointers must be %d values from 0 to the number of ones (%d)", m+1, len(indices))
	}
	for i := 0; i < m; i++ {
		lo, hi := indptr[i], indptr[i+1]
		if hi < lo || hi > int64(len(indices)) {
			return fmt.Errorf("Y: the row pointers decrease, or pass the number of ones, at row %d", i)
		}
		prev := int64(-1)
		for _, a := range indices[lo:hi] {
			if a <= prev || a >= int64(d) {
				return fmt.Errorf("y: row %d: label index %d is out of range [0, %d) or not increasing", i, a, d)
			}
			prev = a
		}
	}
	return nil
}

// CheckOnes checks the values stored at the positions (indptr, indices) of a CSR matrix of 0/1
// targets, which FitSparseY receives without them: every one must be 1 (a stored 0 is not a
// position of a one, and anything else is not a 0/1 indicator).
func CheckOnes(indptr, indices []int64, values []float64) error {
	if len(values) != len(indices) {
		return fmt.Errorf("Y: %d values for %d positions", len(values), len(indices))
	}
	for k, v := range values {
		if v == 1 {
			continue
		}
		// the row holding position k (indptr is checked with the positions themselves)
		row := sort.Search(max(len(indptr)-1, 0), func(i int) bool { return indptr[i+1] > int64(k) })
		if v == 0 {
			return fmt.Errorf("y: row %d: label %d is stored as 0; only the positions of the ones may be stored", row, indices[k])
		}
		return fmt.Errorf("y: row %d: label %d has value %v, want 0 or 1", row, indices[k], v)
	}
	return nil
}

// FitSparseY is Fit for a cube space (multi-label) whose m targets are given by the positions of
// their ones (yIndptr, yIndices: a CSR matrix of m rows and Dim() columns without its values,
// the indices of each row strictly increasing). The linear model (on X or a Nyström map) solved
// by conjugate gradients under the uniform reference keeps the targets sparse when Δ would be
// large (sparseYMinEntries): Δ is c + B (cubeTargets) and every product goes through the Gram
// matrix (sparseTargetSystem), so memory and time per iteration grow with nnz(Y), never with m×d.
// Every other fit gets the targets as dense rows, after a check of their size, and is the same
// fit as Fit's.
func FitSparseY(sp space.Space, X []float64, m, n int, yIndptr, yIndices []int64, weights []float64, opt Options) (*Model, error) {
	in, err := denseInput(X, m, n)
	if err != nil {
		return nil, err
	}
	return fitSparseY(sp, in, yIndptr, yIndices, weights, opt)
}

// FitCSRSparseY is FitSparseY on a sparse X (as FitCSR).
func FitCSRSparseY(sp space.Space, X *xmat.CSR, yIndptr, yIndices []int64, weights []float64, opt Options) (*Model, error) {
	in, err := sparseInput(X)
	if err != nil {
		return nil, err
	}
	return fitSparseY(sp, in, yIndptr, yIndices, weights, opt)
}

func fitSparseY(sp space.Space, X xmat.Matrix, indptr, indices []int64, weights []float64, opt Options) (*Model, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	m, n := X.Dims()
	d := sp.Dim()
	if !space.IsCube(sp) {
		return nil, fmt.Errorf("targets given as the positions of their ones need a space of 0/1 vectors with ψ(y) = y (multilabel), not %s", sp.Kind())
	}
	if err := checkCubeTargets(m, d, indptr, indices); err != nil {
		return nil, err
	}
	features := n
	if opt.NComponents > 0 {
		features = opt.NComponents
	}
	k := features
	if opt.Intercept {
		k++
	}
	ones := func() float64 { return float64(len(indices)) / float64(max(m, 1)) } // ψ(y) = y
	solver := resolveSolver(opt.Solver, m, features, k, d, ones)
	if d > denseMaxDim && operatorOnly(&opt) {
		solver = CG
	}
	small := int64(m)*int64(d) < sparseYMinEntries && budget.Check("", budget.Mul(2, int64(m), int64(d), 8)) == nil
	if !operatorOnly(&opt) || solver != CG || opt.EmpiricalWeight != 0 || small {
		ys, err := cubeRows(m, d, indptr, indices)
		if err != nil {
			return nil, err
		}
		return fit(sp, X, ys, weights, opt)
	}
	if err := checkCounts(sp, &opt); err != nil {
		return nil, err
	}
	// the targets (B by rows and columns: 2 × nnz × (index + value), f, c) and the Gram matrix
	// with its copies (G, the sparse-target system's, the preconditioner's inverse)
	targets := budget.Add(budget.Mul(4, int64(len(indices))), int64(m+d), budget.Mul(3, int64(k), int64(k)))
	if err := checkFitMemory(sp, m, n, &opt, targets); err != nil {
		return nil, err
	}
	p, err := newCubeProblem(sp, m, indptr, indices, weights, opt.Alpha)
	if err != nil {
		return nil, err
	}
	return fitProblem(sp, X, p, opt)
}

// sparseYMinEntries is the size m×d of Δ from which FitSparseY keeps the targets sparse. Below
// it the dense rows cost little, and the dense fit picks the cheapest form of H by cost (the
// sparse-target form among them), where the sparse fit must go through the k×k Gram matrix: on
// MULAN medical (333 rows, 38 labels, 1,449 sparse features) that was a 2.3 s fit instead of
// 0.4 s. A variable so that tests reach the sparse fit on small problems.
var sparseYMinEntries int64 = 1 << 24

// cubeRows writes the targets as dense 0/1 rows (m × d), after a check of their size.
func cubeRows(m, d int, indptr, indices []int64) ([]int64, error) {
	if err := budget.Check(fmt.Sprintf("Y as dense rows of %d × %d labels", m, d), budget.Mul(int64(m), int64(d), 8)); err != nil {
		return nil, err
	}
	ys := make([]int64, m*d)
	for i := 0; i < m; i++ {
		for _, a := range indices[indptr[i]:indptr[i+1]] {
			ys[i*d+int(a)] = 1
		}
	}
	return ys, nil
}
