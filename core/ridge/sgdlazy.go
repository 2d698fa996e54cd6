package ridge

import (
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// lazyRows holds a linear SGD model whose weight rows W[:n] are kept as scale·V, V stored in their
// place, so that a step's shrink of every weight is one multiplication of scale, and its update
// touches only the rows of the example's stored entries. The rows from n on (the intercept) are
// neither shrunk nor scaled. This is the weight scale of Bottou's and scikit-learn's sparse SGD.
//
// The mean of the iterates is kept the same way, as a·U + b·V on the weight rows: with k iterates
// averaged and a step that adds Δ to V,
//
//	mean_k = (1 − 1/k)(a·U + b·V_old) + (1/k)·scale·V_new
//	       = a'·(U − (b/a)·Δ) + b'·V_new,   a' = (1 − 1/k)·a,   b' = (1 − 1/k)·b + scale/k,
//
// so U too changes only on the example's rows (Xu 2011, "Towards optimal one pass large scale
// learning with averaged stochastic gradient descent", section 4).
type lazyRows struct {
	W     *mat.Dense
	n     int
	scale float64
	// the running mean of the iterates, while averaging: a·U + b·V on the weight rows, rest on the
	// others, over count iterates
	averaging bool
	U         []float64
	a, b      float64
	count     float64
	rest      []float64
	// mean is the last result while averaging, until the next step (the fit's J and its returned
	// model read the same mean: computing it twice was an eighth of a 5-epoch fit on 2²⁰ columns)
	mean *mat.Dense
}

// lazyFloor (a variable for tests) is the scale below which the rows are folded back into W (as
// scikit-learn resets its weight scale below 1e-9): V = W/scale grows as the scale falls, and would
// overflow.
var lazyFloor = 1e-9

// lazyMeanFloor is the scale, relative to b, below which the rows are folded while averaging: the
// mean a·U + b·V then cancels terms about b/scale times its size, and lost eps·b/scale of its
// digits (2e-7 relative with the step's cap binding, against dense SGD's exact mean; probe DO).
const lazyMeanFloor = 1e-4

func newLazyRows(W *mat.Dense, n int) *lazyRows {
	return &lazyRows{W: W, n: n, scale: 1}
}

// weights is V, the stored weight rows.
func (z *lazyRows) weights() []float64 {
	raw := z.W.RawMatrix()
	return raw.Data[:z.n*raw.Stride]
}

// step sets W ← shrink·W + x·cᵀ on the weight rows, where entries calls add for each stored entry
// (j, x_j) of the example, adds c to the rows from n on, and folds the new iterate into the mean.
func (z *lazyRows) step(shrink float64, entries func(add func(j int, v float64)), c []float64) {
	z.mean = nil
	if s := z.scale * shrink; s >= lazyFloor && !(z.averaging && s < lazyMeanFloor*z.b) {
		z.scale = s
	} else {
		z.fold(s)
	}
	raw := z.W.RawMatrix()
	d, stride := len(c), raw.Stride
	var g, k float64
	if z.averaging {
		z.count++
		k, g = z.count, z.b/z.a
	}
	entries(func(j int, v float64) {
		f := v / z.scale
		floats.AddScaled(raw.Data[j*stride:j*stride+d], f, c)
		if z.averaging {
			floats.AddScaled(z.U[j*stride:j*stride+d], -g*f, c)
		}
	})
	rows := raw.Data[z.n*stride:]
	for r := 0; r < len(rows); r += stride {
		floats.Add(rows[r:r+d], c)
	}
	if z.averaging {
		z.a *= 1 - 1/k
		z.b = (1-1/k)*z.b + z.scale/k
		for i, v := range rows {
			z.rest[i] += (v - z.rest[i]) / k
		}
	}
}

// fold writes W = s·V into V and sets the scale to 1, moving the mean's share of V into U first.
func (z *lazyRows) fold(s float64) {
	V := z.weights()
	if z.averaging {
		floats.AddScaled(z.U, z.b/z.a, V)
		z.b = 0
	}
	floats.Scale(s, V)
	z.scale = 1
}

// average starts the mean of the iterates at the current one.
func (z *lazyRows) average() {
	raw := z.W.RawMatrix()
	if z.U == nil {
		z.U = make([]float64, z.n*raw.Stride)
	} else {
		clear(z.U)
	}
	z.averaging, z.a, z.b, z.count, z.mean = true, 1, z.scale, 1, nil
	z.rest = append(z.rest[:0], raw.Data[z.n*raw.Stride:]...)
}

// result is the mean of the iterates while averaging, in a matrix of its own (the same one until
// the next step: the caller must not change it); else W itself, with the
// scale folded into its rows (a pass over them when it is not 1, where a copy cost an allocation,
// its clearing and the pass).
func (z *lazyRows) result() *mat.Dense {
	if !z.averaging {
		if z.scale != 1 {
			z.fold(z.scale)
		}
		return z.W
	}
	if z.mean != nil {
		return z.mean
	}
	k, d := z.W.Dims()
	out := mat.NewDense(k, d, nil)
	raw, o := z.W.RawMatrix(), out.RawMatrix()
	for j := 0; j < z.n; j++ {
		dst, v := o.Data[j*o.Stride:j*o.Stride+d], raw.Data[j*raw.Stride:j*raw.Stride+d]
		floats.ScaleTo(dst, z.a, z.U[j*raw.Stride:j*raw.Stride+d])
		floats.AddScaled(dst, z.b, v)
	}
	for j := z.n; j < k; j++ {
		copy(o.Data[j*o.Stride:j*o.Stride+d], z.rest[(j-z.n)*raw.Stride:(j-z.n)*raw.Stride+d])
	}
	z.mean = out
	return out
}
