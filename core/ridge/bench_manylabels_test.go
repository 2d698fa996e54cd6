package ridge

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/floats"
)

// manyLabels draws benchmarks/many_labels.py's data: m examples of n standard normal features and
// d labels, label a on for the share `on` of the examples with the largest noisy linear scores.
func manyLabels(m, n, d int, on float64, seed uint64) (space.Space, []float64, []int64) {
	sp, _ := space.NewMultilabel(d)
	r := rand.New(rand.NewPCG(seed, 3))
	X := randDense(r, m, n).RawMatrix().Data
	W := randDense(r, n, d).RawMatrix().Data
	floats.Scale(1/math.Sqrt(float64(n)), W)
	scores := make([]float64, m*d)
	for i := 0; i < m; i++ {
		for a := 0; a < d; a++ {
			u := r.NormFloat64()
			for j, v := range X[i*n : (i+1)*n] {
				u += v * W[j*d+a]
			}
			scores[i*d+a] = u
		}
	}
	ys := make([]int64, m*d)
	col := make([]float64, m)
	for a := 0; a < d; a++ {
		for i := range col {
			col[i] = scores[i*d+a]
		}
		sort.Float64s(col)
		cut := col[int(float64(m)*(1-on))]
		for i := 0; i < m; i++ {
			if scores[i*d+a] >= cut {
				ys[i*d+a] = 1
			}
		}
	}
	return sp, X, ys
}

// BenchmarkManyLabels fits the many-label benchmark's d = 1000 problems (5000 × 100, 30 % and 2 %
// of labels on, alpha = 1, tol 1e-8 as StructuredRidge's default), the fit issue 18 compares
// with RidgeClassifier, in the form the cost model picks and in the primal (/primal).
func BenchmarkManyLabels(b *testing.B) {
	for _, c := range []struct {
		name string
		on   float64
	}{{"on30", 0.3}, {"on2", 0.02}} {
		const m, n, d = 5000, 100, 1000
		sp, X, ys := manyLabels(m, n, d, c.on, 1)
		opt := baseOptions()
		opt.Alpha, opt.Tol = 1, 1e-8
		for _, form := range []struct {
			name string
			mode int
		}{{"", cubeDualAuto}, {"/primal", cubeDualNever}} {
			b.Run(c.name+form.name, func(b *testing.B) {
				defer func(old int) { cubeDualMode = old }(cubeDualMode)
				cubeDualMode = form.mode
				for range b.N {
					md, err := Fit(sp, X, m, n, ys, nil, opt)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(md.Result.Iterations), "iterations")
				}
			})
		}
	}
}
