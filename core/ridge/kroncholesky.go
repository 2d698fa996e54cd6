package ridge

import (
	"math"
	"sort"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/gemm"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// kronCholPrecond applies the inverse of M = 2αE⊗I + G⊗M̃ without the eigendecomposition of G
// that kronPrecond needs. gonum's eigendecomposition is the slow part of a fit once G leaves the
// cache (spectralPrecond's note; measured beside other work: 95 ms at k = 300, 0.56 s at 600, 4.0
// s at 1,000, 33 s at 1,500), while one Cholesky inverse of a k×k block on package gemm takes 7 ms,
// 42 ms, 0.14 s and about 0.1–0.2 s.
//
// In the eigenbasis of M̄ = Q diag(ν) Qᵀ, M is block diagonal: column b of R Q meets the block
// 2αE + ν_b G, so M⁻¹R = [(2αE + ν_b G)⁻¹ (RQ)_b]_b Qᵀ. With one block per eigenvalue, M̃ = M̄ and
// this is kronPrecond's inverse exactly. A block holds k² values, so beyond a few blocks the
// smallest eigenvalues share one block at their mean (M̃ = M̄ with those eigenvalues replaced by
// it): a positive definite approximation of kronPrecond's M, still a preconditioner for CG, which
// keeps M̄'s eigenvectors and its largest eigenvalues. On bibtex (k = 1,837, d = 159, empirical_weight
// 0.3, beside another benchmark) the fit took 157 s with kronPrecond and takes 23 s with nine
// blocks, 57 CG iterations to 1e-8 either way (7 s with the uniform measure); calhousing's ranking
// of 4 labels on a 1,500-landmark Nyström map (d = 6, six exact blocks) 18–38 s against 7–10 s.
//
// newDiagPrecond's M̄ is diagonal: then the eigenvectors are unit vectors, and the columns of R are
// reordered by their eigenvalues instead of multiplied by Q.
type kronCholPrecond struct {
	qm *mat.Dense // eigenvectors of M̄ (d×d), ascending eigenvalues; nil for a diagonal M̄
	// order lists the coordinates of a diagonal M̄ by ascending eigenvalue (qm nil).
	order []int
	// inv[g] is the inverse of block g, which acts on columns first[g] to first[g+1] − 1 of R Q.
	inv    []*mat.Dense
	first  []int
	t1, t2 *mat.Dense // k×d scratch
	zero   nullDrop   // J's null directions, the blocks whose inverse is nil (nullspace.go)
}

func (pc *kronCholPrecond) nullDirections() nullDrop { return pc.zero }

// kronCholBlocks returns the number of blocks of a kronCholPrecond for a k×d problem (0: use
// kronPrecond). A block's inverse costs about 1/13 of G's eigendecomposition up to k = 600, 1/29 at
// 1,000 and 1/150 at 1,500 (the measurements above), so for k > spectralEigenMax every eigenvalue
// of M̄ gets its own block while d ≤ k/kronCholRatio, and from kronCholMergeMinK, where the
// eigendecomposition takes seconds, up to k/(2·kronCholRatio) blocks take any d, the smallest
// eigenvalues merged. The blocks hold k² values each: at most kronCholMaxBlocks of them and
// kronCholBytes in all (but one block at any k: G's eigendecomposition holds as much, and at k in
// the thousands it takes minutes), within the memory budget.
func kronCholBlocks(k, d int) int {
	if k <= spectralEigenMax {
		return 0
	}
	limit := max(1, min(kronCholMaxBlocks, int(kronCholBytes/(8*int64(k)*int64(k)))))
	var blocks int
	switch {
	case d <= min(k/kronCholRatio, limit):
		blocks = d
	case k >= kronCholMergeMinK:
		blocks = min(d, k/(2*kronCholRatio), limit)
	}
	// The inverses, and a block, its factor and their product while each is computed.
	if blocks < 1 || budget.Check("", budget.Mul(int64(blocks+3), int64(k), int64(k), 8)) != nil {
		return 0
	}
	return blocks
}

// The bounds of kronCholBlocks (variables so that tests can take every form at small sizes).
var (
	kronCholRatio     = 32
	kronCholMaxBlocks = 32
	kronCholMergeMinK = 768
	kronCholBytes     = int64(256 << 20)
)

// newKronCholPrecond is the kronCholPrecond of G (k×k) and the curvature Q diag(nu) Qᵀ (nu
// ascending, as gonum returns them), or with a nil q the diagonal curvature diag(nu) (nu in any
// order), with the given number of blocks.
func newKronCholPrecond(G *mat.SymDense, q *mat.Dense, nu []float64, blocks int, alpha float64, intercept bool, stop *cancel.Flag) (*kronCholPrecond, error) {
	k, d := G.SymmetricDim(), len(nu)
	pc := &kronCholPrecond{qm: q, t1: mat.NewDense(k, d, nil), t2: mat.NewDense(k, d, nil)}
	if q == nil {
		pc.order = make([]int, d)
		for b := range pc.order {
			pc.order[b] = b
		}
		sort.SliceStable(pc.order, func(i, j int) bool { return nu[pc.order[i]] < nu[pc.order[j]] })
		sorted := make([]float64, d)
		for b, a := range pc.order {
			sorted[b] = nu[a]
		}
		nu = sorted
	}
	values, merged := mergeSmallest(nu, blocks)
	pc.first = make([]int, len(values)+1)
	for g := 1; g < len(values); g++ {
		pc.first[g] = merged - 1 + g
	}
	pc.first[len(values)] = d
	var err error
	zero := zeroValues(values)
	if pc.inv, err = blockInverses(G, values, floats.Max(values), zero, alpha, intercept, stop); err != nil {
		return nil, err
	}
	var dirs []int // the coordinates (qm nil) or eigenvectors of the zero blocks
	for _, g := range zero {
		for b := pc.first[g]; b < pc.first[g+1]; b++ {
			if q == nil {
				dirs = append(dirs, pc.order[b])
			} else {
				dirs = append(dirs, b)
			}
		}
	}
	if q == nil {
		pc.zero = coordinatesDrop(dirs)
	} else {
		pc.zero = vectorsDrop(q, dirs)
	}
	return pc, nil
}

func (pc *kronCholPrecond) apply(dst, R *mat.Dense) {
	t1, t2 := pc.t1.RawMatrix(), pc.t2.RawMatrix()
	if pc.qm != nil {
		gemm.MulPanel(t1, R.RawMatrix(), pc.qm.RawMatrix()) // R Q
	} else {
		for j := 0; j < t1.Rows; j++ {
			row, out := R.RawRowView(j), t1.Data[j*t1.Stride:]
			for b, a := range pc.order {
				out[b] = row[a]
			}
		}
	}
	for g, inv := range pc.inv {
		block := columns(t2, pc.first[g], pc.first[g+1])
		if inv == nil { // J's null directions
			for j := 0; j < block.Rows; j++ {
				clear(block.Data[j*block.Stride : j*block.Stride+block.Cols])
			}
			continue
		}
		gemm.MulPanel(block, inv.RawMatrix(), columns(t1, pc.first[g], pc.first[g+1]))
	}
	if pc.qm != nil {
		gemm.MulT(dst.RawMatrix(), t2, pc.qm.RawMatrix()) // (…) Qᵀ
		if pc.zero != nil {
			pc.zero(dst)
		}
		return
	}
	for j := 0; j < t2.Rows; j++ {
		row, out := t2.Data[j*t2.Stride:], dst.RawRowView(j)
		for b, a := range pc.order {
			out[a] = row[b]
		}
	}
	if pc.zero != nil {
		pc.zero(dst)
	}
}

// mergeSmallest returns the eigenvalues nu (ascending, clipped at 0) in at most groups groups (at
// least one): the merged smallest share the first group at their mean, each other is a group
// alone; merged is how many share the first.
func mergeSmallest(nu []float64, groups int) (values []float64, merged int) {
	d := len(nu)
	groups = max(1, min(groups, d))
	merged = d - groups + 1
	values = make([]float64, groups)
	for b, v := range nu {
		v = math.Max(0, v)
		if b < merged {
			values[0] += v / float64(merged)
		} else {
			values[b-merged+1] = v
		}
	}
	return values, merged
}

// columns is the view of columns c0 to c1 − 1 of a.
func columns(a blas64.General, c0, c1 int) blas64.General {
	return blas64.General{Rows: a.Rows, Cols: c1 - c0, Stride: a.Stride, Data: a.Data[c0:]}
}
