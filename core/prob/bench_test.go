package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/dsp/fourier"
)

// integratedAutocorrTime returns τ = 1 + 2 Σ_{k=1}^{W} ρ_k for the series x, with Sokal's automatic
// window (the smallest W ≥ 5τ(W)), autocorrelations by FFT. The effective sample size is len(x)/τ.
func integratedAutocorrTime(x []float64) float64 {
	n := len(x)
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	m := 1
	for m < 2*n {
		m <<= 1
	}
	buf := make([]float64, m)
	for i, v := range x {
		buf[i] = v - mean
	}
	fft := fourier.NewFFT(m)
	coef := fft.Coefficients(nil, buf)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	acf := fft.Sequence(nil, coef)
	if acf[0] <= 0 {
		return 1 // constant series
	}
	tau := 1.0
	for k := 1; k < n/2; k++ {
		tau += 2 * acf[k] / acf[0]
		if float64(k) >= 5*tau {
			break
		}
	}
	return math.Max(tau, 1)
}

// The lengths of the series BenchmarkChainESS estimates τ from: at least minRecord steps, and the
// benchmark's own count up to maxRecord (128 MB of series).
const (
	minRecord = 1 << 21
	maxRecord = 1 << 23
)

// BenchmarkChainESS measures effective samples per second of each chain on permutations of 10
// labels and directed cycles on 10 vertices at ‖u‖ = 0.5, 2 and 8 (u a fixed random direction):
// one benchmark op is one chain step; ess/s is the number of steps per second divided by the
// larger integrated autocorrelation time of two statistics, the score ⟨u, ψ(y)⟩ and y[0] (the rank
// of label 0, or the successor of vertex 0). CFTP's ops are whole exact samples (independent: one
// effective sample each). Run with e.g. -bench ChainESS -benchtime 3s.
func BenchmarkChainESS(b *testing.B) {
	for _, c := range []struct {
		kind string
		n    int64
	}{{"permutations", 10}, {"dicycles", 10}, {"permutations", 40}, {"dicycles", 40}} {
		kind, sp := c.kind, mustSpace(b, c.kind, c.n)
		for _, norm := range []float64{0.5, 2, 8} {
			u := randomScores(rand.New(rand.NewPCG(99, 100)), sp.Dim(), norm)
			for _, ck := range []ChainKind{ChainMeta, ChainLocal, ChainMixed} {
				b.Run(fmt.Sprintf("%s%d/u=%g/%s", kind, c.n, norm, ck), func(b *testing.B) {
					r := rand.New(rand.NewPCG(1, 2))
					c, err := NewChain(sp, u, ck, nil)
					if err != nil {
						b.Fatal(err)
					}
					for k := 0; k < 20000; k++ {
						c.Step(r)
					}
					b.ResetTimer()
					start := time.Now()
					for i := 0; i < b.N; i++ {
						c.Step(r)
					}
					el := time.Since(start).Seconds()
					b.StopTimer()
					// τ from a series of every step, recorded after the timed steps: a series of
					// every k-th step has τ ≥ 1, so k times its τ made a chain whose τ is below k
					// look like τ ≈ k (k = 3–5 at -benchtime 1s: permutations(10)'s meta chain at
					// u = 0.5 reported 4.4 where every step gives 2.5; probe FR).
					n := min(max(b.N, minRecord), maxRecord)
					f := make([]float64, n)
					y0 := make([]float64, n)
					for i := range n {
						c.Step(r)
						f[i], y0[i] = c.Score(), float64(c.State()[0])
					}
					tau := math.Max(integratedAutocorrTime(f), integratedAutocorrTime(y0))
					b.ReportMetric(tau, "tau")
					b.ReportMetric(float64(b.N)/tau/el, "ess/s")
				})
			}
			b.Run(fmt.Sprintf("%s%d/u=%g/cftp", kind, c.n, norm), func(b *testing.B) {
				cf, err := NewCFTP(sp, u, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				y := make([]int64, sp.Width())
				var steps int
				start := time.Now()
				for k := 0; k < b.N; k++ {
					t, err := cf.SampleSeed(uint64(k), y)
					if err != nil {
						b.Skip(err)
					}
					steps += t
				}
				el := time.Since(start).Seconds()
				b.ReportMetric(float64(steps)/float64(b.N), "backsteps/sample")
				b.ReportMetric(float64(b.N)/el, "ess/s")
			})
		}
	}
}
