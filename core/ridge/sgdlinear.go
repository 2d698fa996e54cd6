package ridge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// linearSGD is a linear model W ((n+1)×d with an intercept, n×d without) on the rows of des.X.
type linearSGD struct {
	p   *Problem
	des design
	W   *mat.Dense
	avg averager
}

func (l *linearSGD) scores(i int, u []float64) {
	_, n := l.des.X.Dims()
	x := l.des.X.RawRowView(i)
	W := l.W.RawMatrix()
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data},
		blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: len(u), Inc: 1, Data: u})
	if l.des.intercept {
		floats.Add(u, l.W.RawRowView(n))
	}
}

func (l *linearSGD) kappa(i int) float64 {
	x := l.des.X.RawRowView(i)
	k := floats.Dot(x, x)
	if l.des.intercept {
		k++
	}
	return k
}

func (l *linearSGD) step(i int, _ int64, shrink float64, c []float64) {
	_, n := l.des.X.Dims()
	W := l.W.RawMatrix()
	top := blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data[:n*W.Stride]}
	floats.Scale(shrink, top.Data)
	blas64.Ger(1, blas64.Vector{N: n, Inc: 1, Data: l.des.X.RawRowView(i)}, blas64.Vector{N: len(c), Inc: 1, Data: c}, top)
	if l.des.intercept {
		floats.Add(l.W.RawRowView(n), c)
	}
	l.avg.update(W.Data)
}

func (l *linearSGD) average() { l.avg.start(l.W.RawMatrix().Data) }

// result is the iterate the fit returns.
func (l *linearSGD) result() *mat.Dense {
	if l.avg.avg == nil {
		return l.W
	}
	k, d := l.W.Dims()
	return mat.NewDense(k, d, l.avg.avg)
}

func (l *linearSGD) objective() float64 {
	return l.p.LinearObjective(l.des.X, l.des.intercept, l.result(), nil)
}
