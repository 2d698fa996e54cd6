package ridge

import (
	"bufio"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/space"
)

// peakRSS returns the process' peak resident set size in bytes (VmHWM), or 0 where /proc is
// missing; resetPeakRSS makes the kernel start counting the peak again from the current size.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// largeMultilabel draws m examples of n standard normal features whose labels (multilabel(d))
// are the signs of a random linear function plus noise, about half of them on.
func largeMultilabel(m, n, d int, seed uint64) (space.Space, []float64, []int64) {
	sp, _ := space.NewMultilabel(d)
	r := rand.New(rand.NewPCG(seed, 1))
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	W := make([]float64, n*d)
	for i := range W {
		W[i] = r.NormFloat64() / 3
	}
	ys := make([]int64, m*d)
	for i := 0; i < m; i++ {
		x := X[i*n : (i+1)*n]
		for a := 0; a < d; a++ {
			u := r.NormFloat64()
			for j, v := range x {
				u += v * W[j*d+a]
			}
			if u > 0 {
				ys[i*d+a] = 1
			}
		}
	}
	return sp, X, ys
}

// BenchmarkLinear1M fits 1,000,000 × 50 multilabel(20) data with solver auto (CG here: 51·20
// unknowns) and with the exact streaming path (PartialFit over ten chunks of 100,000), logging the
// time, the peak resident memory of each fit (X and Y, 560 MB, included) and the bytes allocated.
// Run it with
//
//	go test ./core/ridge -run '^$' -bench Linear1M -benchtime 1x
func BenchmarkLinear1M(b *testing.B) {
	const m, n, d, chunk = 1000000, 50, 20, 100000
	sp, X, ys := largeMultilabel(m, n, d, 1)
	opt := baseOptions()
	opt.Alpha, opt.Tol = 1, 1e-6
	for range b.N {
		measure := func(name string, fit func() (*Model, error)) *Model {
			runtime.GC()
			resetPeakRSS()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			t0 := time.Now()
			md, err := fit()
			if err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(t0)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.Logf("%s: %v, %d iterations, objective %.10g, relative gradient %.2g; peak RSS %.2f GiB, allocated %.2f GiB, heap from the OS %.2f GiB",
				name, elapsed.Round(time.Millisecond), md.Result.Iterations, md.Result.Objective, md.Result.RelGrad,
				float64(peakRSS())/(1<<30), float64(after.TotalAlloc-before.TotalAlloc)/(1<<30), float64(after.HeapSys)/(1<<30))
			return md
		}
		measure("auto (cg)", func() (*Model, error) { return Fit(sp, X, m, n, ys, nil, opt) })
		measure("exact stream, 10 chunks", func() (*Model, error) {
			var md *Model
			for lo := 0; lo < m; lo += chunk {
				next, err := PartialFit(md, sp, X[lo*n:(lo+chunk)*n], chunk, n, ys[lo*d:(lo+chunk)*d], nil, opt)
				if err != nil {
					return nil, err
				}
				md = next
			}
			return md, nil
		})
	}
}

// BenchmarkLinearYeastSize fits a linear multilabel model of yeast's shape (1500 × 103 inputs,
// 14 labels, intercept) with the default solver, the time the foundation issue compares with
// scikit-learn's RidgeClassifier.
func BenchmarkLinearYeastSize(b *testing.B) {
	const m, n, d = 1500, 103, 14
	sp, X, ys := largeMultilabel(m, n, d, 2)
	opt := baseOptions()
	opt.Alpha = 100
	b.ResetTimer()
	for range b.N {
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(md.Result.Iterations), "iterations")
	}
}

// BenchmarkPredictOneRow times a single prediction and its scores at the yeast benchmark's size
// (1,500 training rows of 103 features, 14 labels): for the rbf model, one kernel row against the
// 1.2 MB of support vectors, its exponentials and the product with the dual coefficients, the
// core's part of issue 18's single-row latency.
func BenchmarkPredictOneRow(b *testing.B) {
	sp, _ := space.NewMultilabel(14)
	const m, n = 1500, 103
	X, ys := synthetic(b, sp, m, n, 1)
	for _, kind := range []kernel.Kind{kernel.Linear, kernel.RBF} {
		opt := baseOptions()
		opt.Alpha, opt.Tol = 0.01, 1e-8
		opt.Kernel = kernel.Kernel{Kind: kind, Gamma: 0.02}
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			b.Fatal(err)
		}
		y, u := make([]int64, 14), make([]float64, 14)
		b.Run(kind.String()+"/predict", func(b *testing.B) {
			for b.Loop() {
				if err := md.Predict(X[:n], 1, n, y, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kind.String()+"/decision", func(b *testing.B) {
			for b.Loop() {
				if err := md.Decision(X[:n], 1, n, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
