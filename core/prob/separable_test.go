package prob

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/xmat"
	"gonum.org/v1/gonum/mat"
)

// The columns' objectives sum to the joint J and their gradients are the columns of ∇J, at a
// random W, for dense and sparse X, with and without the intercept, with weights (one zero).
func TestColumnObjectivesSumToJoint(t *testing.T) {
	sp := mustSpace(t, "multilabel", 6)
	const m, n = 57, 5
	X, ys := syntheticData(t, sp, m, n, 1.2, 31)
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, m)
	for i := range w {
		w[i] = 0.1 + 2*r.Float64()
	}
	w[3] = 0
	for _, sparse := range []bool{false, true} {
		for _, intercept := range []bool{false, true} {
			var p *Problem
			var err error
			if sparse {
				p, err = NewProblemCSR(sp, xmat.FromDense(m, n, X), ys, w, 0.07, intercept)
			} else {
				p, err = NewProblem(sp, X, m, n, ys, w, 0.07, intercept)
			}
			if err != nil {
				t.Fatal(err)
			}
			W := mat.NewDense(p.Cols(), sp.Dim(), nil)
			for i := range W.RawMatrix().Data {
				W.RawMatrix().Data[i] = r.NormFloat64()
			}
			grad := mat.NewDense(p.Cols(), sp.Dim(), nil)
			want, err := p.Objective(W, InferenceOptions{Method: InferExact}, 0, grad)
			if err != nil {
				t.Fatal(err)
			}
			var got float64
			g := make([]float64, p.Cols())
			s := newColumnScratch(p)
			for a := 0; a < sp.Dim(); a++ {
				got += p.columnObjective(a, mat.Col(nil, a, W), g, s)
				for j, v := range g {
					if math.Abs(v-grad.At(j, a)) > 1e-13*(1+math.Abs(v)) {
						t.Errorf("sparse %v, intercept %v: ∂J/∂W[%d,%d] = %v by column, %v jointly", sparse, intercept, j, a, v, grad.At(j, a))
					}
				}
			}
			if math.Abs(got-want) > 1e-13*math.Abs(want) {
				t.Errorf("sparse %v, intercept %v: columns sum to %v, J = %v", sparse, intercept, got, want)
			}
		}
	}
}

// The column-by-column fit reaches the joint run's optimum, meets the same joint tolerance, and
// takes no more iterations than the joint run.
func TestSeparableFitEqualsJoint(t *testing.T) {
	defer func(v bool) { separableFits = v }(separableFits)
	sp := mustSpace(t, "multilabel", 9)
	const m, n = 300, 7
	X, ys := syntheticData(t, sp, m, n, 2, 32)
	for _, alpha := range []float64{1e-4, 0.05} {
		name := fmt.Sprintf("alpha=%v", alpha)
		opt := Options{Alpha: alpha, Intercept: true, Tol: 1e-9, MaxIter: 2000}
		var fits [2]*Model
		for j, on := range []bool{true, false} {
			separableFits = on
			md, err := Fit(sp, X, m, n, ys, nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !md.Result.Converged || !(md.Result.RelGrad <= opt.Tol) {
				t.Fatalf("%s, separable %v: %+v", name, on, md.Result)
			}
			fits[j] = md
		}
		var scale, diff float64
		for k, v := range fits[1].Coef.RawMatrix().Data {
			scale = math.Max(scale, math.Abs(v))
			diff = math.Max(diff, math.Abs(v-fits[0].Coef.RawMatrix().Data[k]))
		}
		if !(diff <= 1e-6*scale) {
			t.Errorf("%s: separable and joint fits differ by %.3g (scale %.3g)", name, diff, scale)
		}
		if fits[0].Result.Iterations > fits[1].Result.Iterations {
			t.Errorf("%s: %d iterations column by column, %d jointly", name, fits[0].Result.Iterations, fits[1].Result.Iterations)
		}
	}
}

// Progress counts iterations 1, 2, 3 … with the joint objective, and stopping it cancels the fit.
func TestSeparableFitProgressCancels(t *testing.T) {
	sp := mustSpace(t, "multilabel", 5)
	X, ys := syntheticData(t, sp, 80, 3, 1, 33)
	last := 0
	_, err := Fit(sp, X, 80, 3, ys, nil, Options{Alpha: 0.001, Tol: 1e-14, MaxIter: 100,
		Progress: func(it int, obj, rel float64) bool {
			if it != last+1 || math.IsNaN(obj) || !(rel > 0) {
				t.Errorf("progress %d after %d, objective %v, relative gradient %v", it, last, obj, rel)
			}
			last = it
			return it < 3
		}})
	if !errors.Is(err, ErrCancelled) || last != 3 {
		t.Errorf("got %v after %d iterations", err, last)
	}
}

// The last progress report is the fitted model's joint state, whichever column finished last.
// Columns that a worker ran after the furthest one had finished never reported: with 2 workers the
// last report held their starting objectives (3.37 for a model at 2.80).
func TestSeparableFitLastReportIsTheFittedModel(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	sp := mustSpace(t, "multilabel", 6)
	X, ys := syntheticData(t, sp, 120, 4, 1, 34)
	for _, w := range []int{1, 2} {
		parallel.SetThreads(w)
		var lastIt int
		var lastObj, lastRel float64
		md, err := Fit(sp, X, 120, 4, ys, nil, Options{Alpha: 1e-3, Tol: 1e-8, MaxIter: 500,
			Progress: func(it int, obj, rel float64) bool {
				if it < lastIt {
					t.Errorf("%d workers: progress went back from iteration %d to %d", w, lastIt, it)
				}
				lastIt, lastObj, lastRel = it, obj, rel
				return true
			}})
		if err != nil {
			t.Fatal(err)
		}
		r := md.Result
		if lastIt != r.Iterations || math.Abs(lastObj-r.Objective) > 1e-12*math.Abs(r.Objective) || lastRel != r.RelGrad {
			t.Errorf("%d workers: last report iteration %d, objective %.12g, relative gradient %.3g; fitted %d, %.12g, %.3g",
				w, lastIt, lastObj, lastRel, r.Iterations, r.Objective, r.RelGrad)
		}
	}
}

// The stop flag (Ctrl-C) cancels a separable fit whether or not Progress still reports: only the
// furthest column's iterations are reported, and the others ran to their end after an interrupt.
func TestSeparableFitStopFlagCancels(t *testing.T) {
	sp := mustSpace(t, "multilabel", 5)
	X, ys := syntheticData(t, sp, 80, 3, 1, 33)
	stopped := new(cancel.Flag)
	stopped.Stop()
	if _, err := Fit(sp, X, 80, 3, ys, nil, Options{Alpha: 0.001, Tol: 1e-14, MaxIter: 100,
		Inference: InferenceOptions{Sampler: SampleOptions{Stop: stopped}}}); !errors.Is(err, ErrCancelled) {
		t.Errorf("a fit with its stop flag set: %v, want ErrCancelled", err)
	}
	stop := new(cancel.Flag)
	reports := 0
	_, err := Fit(sp, X, 80, 3, ys, nil, Options{Alpha: 0.001, Tol: 1e-14, MaxIter: 100,
		Inference: InferenceOptions{Sampler: SampleOptions{Stop: stop}},
		Progress: func(it int, obj, rel float64) bool {
			reports++
			stop.Stop() // the flag, not the callback's answer, asks to stop
			return true
		}})
	if !errors.Is(err, ErrCancelled) || reports != 1 {
		t.Errorf("stopped at the first report: %v after %d reports", err, reports)
	}
}
