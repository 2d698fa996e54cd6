package ridge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// linearSGD is a linear model W ((n+1)×d with an intercept, n×d without) on the rows of des.
type linearSGD struct {
	p   *Problem
	des design
	W   *mat.Dense
	avg averager
}

func (l *linearSGD) scores(i int, u []float64) {
	n := l.des.features()
	W := l.W.RawMatrix()
	if l.des.sp != nil {
		clear(u)
		l.des.sp.RowEntries(i, func(j int, v float64) { floats.AddScaled(u, v, W.Data[j*W.Stride:j*W.Stride+len(u)]) })
	} else {
		x := l.des.X.RawRowView(i)
		blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data},
			blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: len(u), Inc: 1, Data: u})
	}
	if l.des.intercept {
		floats.Add(u, l.W.RawRowView(n))
	}
}

func (l *linearSGD) kappa(i int) float64 {
	k := l.des.rowSqNorm(i)
	if l.des.intercept {
		k++
	}
	return k
}

func (l *linearSGD) step(i int, _ int64, shrink float64, c []float64) {
	n := l.des.features()
	W := l.W.RawMatrix()
	top := blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data[:n*W.Stride]}
	floats.Scale(shrink, top.Data)
	if l.des.sp != nil {
		l.des.sp.RowEntries(i, func(j int, v float64) { floats.AddScaled(top.Data[j*W.Stride:j*W.Stride+len(c)], v, c) })
	} else {
		blas64.Ger(1, blas64.Vector{N: n, Inc: 1, Data: l.des.X.RawRowView(i)}, blas64.Vector{N: len(c), Inc: 1, Data: c}, top)
	}
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
	return l.p.linearObjective(l.des, l.result(), nil)
}

// relativeGradient is ‖∇J‖ at the returned iterate over ‖∇J(0)‖, taken for the weights and for
// the intercept apart (the larger of the two; 0 for a part whose gradient at 0 vanishes): the
// stall check of sgdRun.fit, affordable for a linear model (two passes over the data, once per
// fit). The intercept is apart because at a large alpha the weights reach their optimum, near
// 0, and their gradient vanishes, while the intercept, unpenalised, has not moved.
func (l *linearSGD) relativeGradient() float64 {
	W := l.result()
	k, d := W.Dims()
	g := mat.NewDense(k, d, nil)
	l.p.linearObjective(l.des, W, g)
	now := l.gradientParts(g)
	l.p.linearObjective(l.des, mat.NewDense(k, d, nil), g)
	zero := l.gradientParts(g)
	var rel float64
	for i := range now {
		if zero[i] > 0 {
			rel = max(rel, now[i]/zero[i])
		}
	}
	return rel
}

// gradientParts returns the norms of g's weight rows and of its intercept row (0 without one).
func (l *linearSGD) gradientParts(g *mat.Dense) [2]float64 {
	n := l.des.features()
	parts := [2]float64{floats.Norm(g.RawMatrix().Data[:n*g.RawMatrix().Stride], 2), 0}
	if l.des.intercept {
		parts[1] = floats.Norm(g.RawRowView(n), 2)
	}
	return parts
}
