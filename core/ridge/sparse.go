package ridge

import (
	"math"
	"slices"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The products of a sparse design (design.sp, CSR) and its per-row accesses, which the dense
// design reads off X's rows directly. Memory stays O(nnz + k·d): no product forms X densely, and
// the k×k Gram matrix G = X̃ᵀdiag(s)X̃ is formed only when useGram allows (else the CG
// preconditioner is built from its diagonal, diagGramPrecond).

// sparseGramEntries bounds k² for which a sparse design forms its Gram matrix G (dense k×k) for
// the CG preconditioners and the grouped Hessian; beyond, and whenever k² exceeds
// sparseGramFactor·(nnz + k·d), the preconditioner is diagonal in the features. A variable so
// that tests reach both.
var (
	sparseGramEntries = 1 << 24
	sparseGramFactor  = 8.0
)

// useGram reports whether the CG set-up forms the k×k Gram matrix of des (always for dense X).
func (d design) useGram(dim int) bool {
	if d.sp == nil {
		return true
	}
	k := float64(d.cols())
	return k*k <= float64(sparseGramEntries) && k*k <= sparseGramFactor*(float64(d.sp.NNZ())+k*float64(dim))
}

// sparseTmul writes [X 1]ᵀ·G into out (cols()×k) for a sparse X.
func (d design) sparseTmul(out, G *mat.Dense) {
	n := d.features()
	_, k := G.Dims()
	o, g := out.RawMatrix(), G.RawMatrix()
	d.sp.TMul(o.Data, o.Stride, g.Data, g.Stride, k)
	if d.intercept {
		b := out.RawRowView(n)[:k]
		clear(b)
		m := d.samples()
		for i := 0; i < m; i++ {
			floats.Add(b, G.RawRowView(i)[:k])
		}
	}
}

// sparseGram is gram for a sparse X: the upper triangle of XᵀX accumulated pair by pair of the
// entries of each row, O(Σ_i nnz_i²) time.
func (d design) sparseGram(s []float64) *mat.SymDense {
	n, k := d.features(), d.cols()
	g := mat.NewSymDense(k, nil)
	raw := g.RawSymmetric()
	col := make([]float64, n)
	d.sp.Gram(raw.Data, raw.Stride, s, col)
	if d.intercept {
		var total float64
		for _, v := range s {
			total += v
		}
		for j := 0; j < n; j++ {
			g.SetSym(j, n, col[j])
		}
		g.SetSym(n, n, total)
	}
	return g
}

// gramDiag is the diagonal of [X 1]ᵀ diag(s) [X 1], O(nnz) for a sparse X.
func (d design) gramDiag(s []float64) []float64 {
	n, k := d.features(), d.cols()
	out := make([]float64, k)
	if d.sp != nil {
		d.sp.ColumnSquareSums(s, out[:n])
	} else {
		for i := 0; i < d.samples(); i++ {
			for j, v := range d.X.RawRowView(i)[:n] {
				out[j] += s[i] * v * v
			}
		}
	}
	if d.intercept {
		for _, v := range s {
			out[n] += v
		}
	}
	return out
}

// rowInto writes row i of X (n values) into dst.
func (d design) rowInto(i int, dst []float64) {
	if d.sp != nil {
		d.sp.RowDense(i, dst)
		return
	}
	copy(dst, d.X.RawRowView(i))
}

// rowDot is ⟨x_i, v⟩ for v of n values.
func (d design) rowDot(i int, v []float64) float64 {
	if d.sp != nil {
		return d.sp.RowDot(i, v)
	}
	return floats.Dot(d.X.RawRowView(i), v)
}

// rowAxpy adds f·x_i to dst (n values).
func (d design) rowAxpy(i int, f float64, dst []float64) {
	if d.sp != nil {
		d.sp.RowAxpy(i, f, dst)
		return
	}
	floats.AddScaled(dst, f, d.X.RawRowView(i))
}

// rowSqNorm is ‖x_i‖².
func (d design) rowSqNorm(i int) float64 {
	if d.sp != nil {
		var s float64
		d.sp.RowEntries(i, func(_ int, v float64) { s += v * v })
		return s
	}
	x := d.X.RawRowView(i)
	return floats.Dot(x, x)
}

// diagGramPrecond is the CG preconditioner of a sparse design whose Gram matrix G is not formed
// (useGram): it is the preconditioner of newLinearPrecond with G replaced by its diagonal g, so
// that it needs O(k·d) memory and time per application. With a Spectral covariance
// S = Σ_c σ_c P_c it applies Σ_c diag(1/(2αe_j + σ_c g_j)) ⊗ P_c, the intercept row e_j = 0
// left unpenalised where σ_c > 0; otherwise (2αE + g ⊗ diag(S + D̄))⁻¹ as newDiagPrecond's, the
// intercept again unpenalised where the diagonal entry is positive.
type diagGramPrecond struct {
	op    space.Spectral
	inv   [][]float64 // per eigenspace (Spectral) or per coordinate of ψ (else): k values
	scale *mat.Dense  // non-Spectral: 1/(2α + g_j M_a), k×d
	proj  []float64
	zero  nullDrop // J's null directions, where inv is nil or scale zero (nullspace.go)
}

func (pc *diagGramPrecond) nullDirections() nullDrop { return pc.zero }

func newDiagGramPrecond(p *Problem, des design) *diagGramPrecond {
	g := des.gramDiag(p.Weight)
	k, n := len(g), des.features()
	_, d := p.dims()
	if sp, ok := space.SpectralOf(p.Cov); ok && linearPrecondMode != precondDiag {
		es := sp.Spectrum()
		var top float64
		for _, e := range es {
			top = math.Max(top, e.Value)
		}
		pc := &diagGramPrecond{op: sp, inv: make([][]float64, len(es)), proj: make([]float64, d)}
		M := make([]float64, len(es))
		for c, e := range es {
			M[c] = math.Max(0, e.Value)
		}
		zero := zeroSpaces(p, sp, M, top)
		pc.zero = eigenspacesDrop(sp, zero)
		for c, mc := range M {
			if slices.Contains(zero, c) {
				continue // J's null directions: zero here
			}
			iv := make([]float64, k)
			for j := range iv {
				pen := 2 * p.Alpha
				if des.intercept && j == n && mc > nullRelTol*top {
					pen = 0
				}
				iv[j] = 1 / (pen + mc*g[j])
			}
			pc.inv[c] = iv
		}
		return pc
	}
	return newDiagScalePrecond(g, p.curvatureDiag(), p.Alpha, des.intercept)
}

// newDiagScalePrecond is diagGramPrecond for the Gram diagonal g (k values, the intercept's last
// when intercept is set) and the curvature diagonal diag (d values): W's entry (j, a) scaled by
// 1/(2α + g_j·diag_a), the intercept row unpenalised where diag_a > 0.
func newDiagScalePrecond(g, diag []float64, alpha float64, intercept bool) *diagGramPrecond {
	k, d := len(g), len(diag)
	top := floats.Max(diag)
	pc := &diagGramPrecond{scale: mat.NewDense(k, d, nil)}
	zero := zeroValues(diag)
	pc.zero = coordinatesDrop(zero)
	for j := 0; j < k; j++ {
		row := pc.scale.RawRowView(j)
		for a := range row {
			if slices.Contains(zero, a) {
				continue // J's null directions: zero here
			}
			pen := 2 * alpha
			if intercept && j == k-1 && diag[a] > nullRelTol*top {
				pen = 0
			}
			row[a] = 1 / (pen + g[j]*math.Max(0, diag[a]))
		}
	}
	return pc
}

// diagOf returns the diagonal of a.
func diagOf(a *mat.SymDense) []float64 {
	out := make([]float64, a.SymmetricDim())
	for i := range out {
		out[i] = a.At(i, i)
	}
	return out
}

func (pc *diagGramPrecond) apply(dst, R *mat.Dense) {
	k, _ := R.Dims()
	if pc.scale != nil {
		dst.MulElem(R, pc.scale)
		return // zero where the scale is: no rounding to remove
	}
	if pc.zero != nil {
		defer pc.zero(dst) // what rounding leaves along the zero eigenspaces
	}
	for j := 0; j < k; j++ {
		out, r := dst.RawRowView(j), R.RawRowView(j)
		if len(pc.inv) == 1 && pc.inv[0] != nil {
			floats.ScaleTo(out, pc.inv[0][j], r)
			continue
		}
		clear(out)
		for c, iv := range pc.inv {
			if iv == nil {
				continue
			}
			pc.op.Project(c, pc.proj, r)
			floats.AddScaled(out, iv[j], pc.proj)
		}
	}
}
