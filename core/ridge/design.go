package ridge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// design is the input matrix X (m×n) with an optional implicit column of ones for the intercept,
// kept implicit so that fitting never copies the caller's X.
type design struct {
	X         *mat.Dense
	intercept bool
}

// cols is the number of rows of W: n, plus one for the intercept.
func (d design) cols() int {
	_, n := d.X.Dims()
	if d.intercept {
		return n + 1
	}
	return n
}

// mul writes [X 1]·W into U (m×k).
func (d design) mul(U, W *mat.Dense) {
	_, n := d.X.Dims()
	U.Mul(d.X, W.Slice(0, n, 0, W.RawMatrix().Cols))
	if d.intercept {
		b := W.RawRowView(n)
		m, k := U.Dims()
		for i := 0; i < m; i++ {
			row := U.RawRowView(i)
			for a := 0; a < k; a++ {
				row[a] += b[a]
			}
		}
	}
}

// tmul writes [X 1]ᵀ·G into out (cols()×k).
func (d design) tmul(out, G *mat.Dense) {
	m, n := d.X.Dims()
	_, k := G.Dims()
	top := out.Slice(0, n, 0, k).(*mat.Dense)
	top.Mul(d.X.T(), G)
	if d.intercept {
		b := out.RawRowView(n)
		clear(b)
		for i := 0; i < m; i++ {
			row := G.RawRowView(i)
			for a := 0; a < k; a++ {
				b[a] += row[a]
			}
		}
	}
}

// penalty is ‖W‖²_F without the intercept row.
func (d design) penalty(W *mat.Dense) float64 {
	_, n := d.X.Dims()
	_, k := W.Dims()
	var s float64
	for j := 0; j < n; j++ {
		for _, v := range W.RawRowView(j)[:k] {
			s += v * v
		}
	}
	return s
}

// addPenaltyGrad adds f·W to grad on every row but the intercept's.
func (d design) addPenaltyGrad(grad, W *mat.Dense, f float64) {
	_, n := d.X.Dims()
	_, k := W.Dims()
	for j := 0; j < n; j++ {
		g, w := grad.RawRowView(j), W.RawRowView(j)
		for a := 0; a < k; a++ {
			g[a] += f * w[a]
		}
	}
}

// gram is [X 1]ᵀ diag(s) [X 1], accumulated over blocks of rows so that X is never copied whole.
func (d design) gram(s []float64) *mat.SymDense {
	m, n := d.X.Dims()
	const block = 4096
	xs := mat.NewDense(min(m, block), n, nil)
	top := mat.NewDense(n, n, nil)
	col := make([]float64, n)
	var total float64
	for lo := 0; lo < m; lo += block {
		hi := min(lo+block, m)
		xb := xs.Slice(0, hi-lo, 0, n).(*mat.Dense)
		for i := lo; i < hi; i++ {
			src, dst := d.X.RawRowView(i), xb.RawRowView(i-lo)
			for j := range src {
				dst[j] = src[j] * s[i]
				col[j] += dst[j]
			}
			total += s[i]
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, d.X.Slice(lo, hi, 0, n).(*mat.Dense).RawMatrix(), xb.RawMatrix(), 1, top.RawMatrix())
	}
	g := mat.NewSymDense(d.cols(), nil)
	for a := 0; a < n; a++ {
		for b := a; b < n; b++ {
			g.SetSym(a, b, top.At(a, b))
		}
	}
	if d.intercept {
		for j := 0; j < n; j++ {
			g.SetSym(j, n, col[j])
		}
		g.SetSym(n, n, total)
	}
	return g
}
