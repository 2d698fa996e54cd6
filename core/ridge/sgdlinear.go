package ridge

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// linearSGD is a linear model W ((n+1)×d with an intercept, n×d without) on the rows of des.
//
// On a sparse X the weight rows are held scaled (lazyRows, sgdlazy.go): a step then costs the row's
// stored entries times d, where shrinking and averaging every weight row cost n·d.
type linearSGD struct {
	p    *Problem
	des  design
	W    *mat.Dense
	avg  averager
	lazy *lazyRows // nil on a dense X
}

// newLinearSGD starts SGD from W (which it takes over: read the model back with result).
func newLinearSGD(p *Problem, des design, W *mat.Dense) *linearSGD {
	l := &linearSGD{p: p, des: des, W: W}
	if des.sp != nil {
		l.lazy = newLazyRows(W, des.features())
	}
	return l
}

func (l *linearSGD) scores(i int, u []float64) {
	n := l.des.features()
	W := l.W.RawMatrix()
	if l.des.sp != nil {
		clear(u)
		l.des.sp.RowEntries(i, func(j int, v float64) { floats.AddScaled(u, v, W.Data[j*W.Stride:j*W.Stride+len(u)]) })
		floats.Scale(l.lazy.scale, u)
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
	if l.lazy != nil {
		l.lazy.step(shrink, func(add func(j int, v float64)) { l.des.sp.RowEntries(i, add) }, c)
		return
	}
	W := l.W.RawMatrix()
	top := blas64.General{Rows: n, Cols: W.Cols, Stride: W.Stride, Data: W.Data[:n*W.Stride]}
	floats.Scale(shrink, top.Data)
	blas64.Ger(1, blas64.Vector{N: n, Inc: 1, Data: l.des.X.RawRowView(i)}, blas64.Vector{N: len(c), Inc: 1, Data: c}, top)
	if l.des.intercept {
		floats.Add(l.W.RawRowView(n), c)
	}
	l.avg.update(W.Data)
}

func (l *linearSGD) average() {
	if l.lazy != nil {
		l.lazy.average()
		return
	}
	l.avg.start(l.W.RawMatrix().Data)
}

// result is the iterate the fit returns: the mean of the iterates while averaging, else the
// current one (W itself).
func (l *linearSGD) result() *mat.Dense {
	if l.lazy != nil {
		return l.lazy.result()
	}
	if l.avg.avg == nil {
		return l.W
	}
	k, d := l.W.Dims()
	return mat.NewDense(k, d, l.avg.avg)
}

func (l *linearSGD) objective() float64 {
	return l.p.linearObjective(l.des, l.result(), nil)
}

// weightGradient is ‖∇J‖ of the weights (the intercept's left out) at the returned iterate over
// its value at 0 (0 when that vanishes): the stall check of sgdRun.fit, affordable for a linear
// model (two passes over the data, once per fit). The intercept is judged by sgdRun.moved.
func (l *linearSGD) weightGradient() float64 {
	W := l.result()
	k, d := W.Dims()
	g := mat.NewDense(k, d, nil)
	l.p.linearObjective(l.des, W, g)
	now := l.weightNorm(g)
	l.p.linearObjective(l.des, mat.NewDense(k, d, nil), g)
	if zero := l.weightNorm(g); zero > 0 {
		return now / zero
	}
	return 0
}

// weightNorm returns the norm of g's weight rows (its intercept row left out).
func (l *linearSGD) weightNorm(g *mat.Dense) float64 {
	n := l.des.features()
	return floats.Norm(g.RawMatrix().Data[:n*g.RawMatrix().Stride], 2)
}
