package ridge

import (
	"fmt"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkKernelSGDEpoch times kernel SGD on data of the dicycle target's shape: n = 15
// features, d = 45 outputs, rbf γ = 1/15, α = 1, no truncation, no intercept. "fit" is Fit with
// MaxIter 1: the first epoch, whose expansion grows from none to all the examples, and J at the
// end. "epoch" is a later epoch, over all the examples from the start, and "objective" the
// evaluation of J that follows an epoch when the tolerance stop or a trace needs it. Run it with
//
//	go test ./core/ridge -run '^$' -bench KernelSGDEpoch -benchtime 1x
func BenchmarkKernelSGDEpoch(b *testing.B) {
	const n, d = 15, 45
	for _, m := range []int{5000, 20000} {
		sp, X, ys := largeMultilabel(m, n, d, 3)
		opt := baseOptions()
		opt.Alpha, opt.Intercept = 1, false
		opt.Kernel = kernel.Kernel{Kind: kernel.RBF, Gamma: 1.0 / n}
		opt.Solver, opt.MaxIter, opt.Tol = SGD, 1, 1e-8
		b.Run(fmt.Sprintf("fit/m=%d", m), func(b *testing.B) {
			for range b.N {
				if _, err := Fit(sp, X, m, n, ys, nil, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
		p, Xm, err := prepare(sp, X, m, n, ys, nil, &opt)
		if err != nil {
			b.Fatal(err)
		}
		ks := newKernelSGD(p, opt.Kernel, false, Xm, nil, nil, 0, 0)
		run := newSGDRun(p, ks, float64(m), 0, &opt)
		run.epoch(ks, nil) // the first epoch brings every example into the expansion
		b.Run(fmt.Sprintf("epoch/m=%d", m), func(b *testing.B) {
			for range b.N {
				run.epoch(ks, nil)
			}
		})
		b.Run(fmt.Sprintf("objective/m=%d", m), func(b *testing.B) {
			for range b.N {
				ks.objective()
			}
		})
	}
}

// prepare validates the options and inputs of a fit and builds its Problem, which holds S densely
// (spaces with d > MaxDim are refused).
func prepare(sp space.Space, X []float64, m, n int, ys []int64, weights []float64, opt *Options) (*Problem, *mat.Dense, error) {
	in, err := denseInput(X, m, n)
	if err != nil {
		return nil, nil, err
	}
	p, err := prepareProblem(sp, in, ys, weights, opt, 0)
	return p, in.Dense, err
}
