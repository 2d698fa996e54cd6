package ridge

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/kernel"
	"gonum.org/v1/gonum/mat"
)

// SGD on a sparse X with its weights held scaled (lazyRows) takes the same steps as SGD that
// shrinks and averages every weight row at every step, on a dense copy of the same X: epochs with
// and without the mean of the iterates, with and without an intercept, and with the scale folded
// back into the rows at every few steps (a floor of 0.9) as well as rarely (the default floor), and
// with the step's cap binding (eta0 = 1e6), where the shrink is far below 1 and the mean a·U + b·V
// lost 7 digits before it was folded while b/scale is large (probe DO).
func TestLazySGDEqualsDenseSteps(t *testing.T) {
	const m, n = 70, 9
	for _, sp := range testSpaces(t) {
		for _, intercept := range []bool{false, true} {
			for _, floor := range []float64{lazyFloor, 0.9} {
				for _, c := range []struct {
					epochs      int
					alpha, eta0 float64
				}{{1, 0.5, 0}, {6, 0.5, 0}, {8, 1e3, 1e6}} {
					epochs := c.epochs
					name := fmt.Sprintf("%s/intercept=%v/floor=%g/epochs=%d/alpha=%g/eta0=%g", sp.Kind(), intercept, floor, epochs, c.alpha, c.eta0)
					t.Run(name, func(t *testing.T) {
						defer func(f float64) { lazyFloor = f }(lazyFloor)
						lazyFloor = floor
						X, ys := synthetic(t, sp, m, n, 31)
						A := sparsify(t, X, m, n, 32, false)
						w := weights(rand.New(rand.NewPCG(5, 6)), m)
						p, err := NewProblem(sp, ys, m, w, c.alpha)
						if err != nil {
							t.Fatal(err)
						}
						opt := Options{Alpha: c.alpha, Kernel: kernel.Kernel{Kind: kernel.Linear}, Intercept: intercept, MaxIter: epochs, Seed: 3, Eta0: c.eta0}
						_, d := p.dims()
						rows := n
						if intercept {
							rows++
						}
						run := func(des design) *mat.Dense {
							W := mat.NewDense(rows, d, nil)
							W.Set(0, 0, 0.25) // a warm start: the scale must carry it
							ln := newLinearSGD(p, des, W)
							r := newSGDRun(p, ln, float64(m), 0, &opt)
							if _, err := r.fit(ln, &opt, false); err != nil {
								t.Fatal(err)
							}
							return ln.result()
						}
						dense := run(design{X: mat.NewDense(m, n, X), intercept: intercept})
						sparse := run(design{sp: A, intercept: intercept})
						if diff := relDiff(sparse, dense); !(diff <= 1e-11) {
							t.Fatalf("lazy sparse steps and dense steps differ by %.3g relative", diff)
						}
					})
				}
			}
		}
	}
}
