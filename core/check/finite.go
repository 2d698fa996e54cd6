// Package check holds input checks shared by the core and the C ABI.
package check

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/combpred/combpred/core/parallel"
	"gonum.org/v1/gonum/floats"
)

// allFinite reports whether every entry of x is finite when their sum is (a NaN or an infinity
// makes the sum NaN or infinite): the vector kernel of floats.Sum reads x at memory speed, where
// a scalar test of every entry took 37 ms of a 180 ms partial_fit chunk on 2²⁰ × 20 weights.
// False says nothing: finite entries may overflow the sum, and the callers then scan.
func allFinite(x []float64) bool {
	s := floats.Sum(x)
	return !math.IsNaN(s) && !math.IsInf(s, 0)
}

// Finite names the first NaN or infinite entry of the row-major matrix x with cols columns.
func Finite(name string, x []float64, cols int) error {
	if allFinite(x) {
		return nil
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			j := i % cols
			return &RowError{Row: i / cols, message: func(row int) string {
				return fmt.Sprintf("%s[%d, %d] = %v: values must be finite", name, row, j, v)
			}}
		}
	}
	return nil
}

// FiniteVector names the first NaN or infinite entry of the vector x by its index alone (Finite on
// one row named v[1] "v[0, 1]", probe CE).
func FiniteVector(name string, x []float64) error {
	if allFinite(x) {
		return nil
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s[%d] = %v: values must be finite", name, i, v)
		}
	}
	return nil
}

// Fitted names the first non-finite value of a fitted parameter (what, e.g. "coefficients"): the
// arithmetic of a fit overflowed. A fit returns this error rather than a model that would predict
// NaN scores or a constant structure without a word.
func Fitted(what string, x []float64) error {
	if allFinite(x) {
		return nil
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("the fit overflowed: its %s hold %v (entry %d); scale X (e.g. with StandardScaler) "+
				"or check alpha and the kernel parameters", what, v, i)
		}
	}
	return nil
}

// ErrScoresOverflow is wrapped by the error of Scores: a model's finite parameters met an input
// whose scores are not finite. It is the one way a valid model can fail on valid X, since finite
// parameters do not bound the sums a kernel expansion or a Nyström map forms with them.
var ErrScoresOverflow = errors.New("scores overflow")

// Scores names the first row of scores (u, row-major with d columns) that overflowed: the
// corresponding input row holds values too large for the model, or (in a model read from bytes)
// the model's parameters are too large for any input.
func Scores(u []float64, d int) error { return ScoresFrom(u, d, 0) }

// ScoresFrom is Scores on a block of scores whose first row is row first of X.
func ScoresFrom(u []float64, d, first int) error {
	for i, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return RowErrorf(first+i/d, "X row %d: its %w (%v): X holds values too large for this model "+
				"(scale X as it was scaled for fit), or the model's parameters are too large", ErrScoresOverflow, v)
		}
	}
	return nil
}

// KernelMatrix is the name of a fit's input when it is a kernel matrix (a precomputed kernel, or
// the Gram matrix Python computes with a callable kernel): Magnitude then advises scaling the
// kernel, not the features.
const KernelMatrix = "the kernel matrix"

// NystromFeatures is the name of a callable kernel's Nyström features K(X, landmarks)·P, which
// Python computes and the core fits as its inputs: where they overflow, the kernel's values are
// too large for the map, and the advice is to scale the kernel, not X (probe DZ).
const NystromFeatures = "the Nyström features"

// Magnitude names the first row of the row-major matrix x (cols columns) whose squared norm
// overflows: fits multiply inputs with themselves (XᵀX, the curvature of the loss), so values
// beyond about 1e154 make them infinite, and a fit returned W = 0 or NaN instead of an error.
func Magnitude(name string, x []float64, cols int) error {
	for i := 0; i+cols <= len(x); i += cols {
		var s, top float64
		for _, v := range x[i : i+cols] {
			s += v * v
			top = math.Max(top, math.Abs(v))
		}
		if math.IsInf(s, 0) {
			advice, holds := "scale "+name+" (e.g. with StandardScaler)", "holds"
			if name == KernelMatrix || name == NystromFeatures {
				advice = "scale the kernel"
			}
			if name == NystromFeatures {
				holds = "hold"
			}
			return &RowError{Row: i / cols, message: func(row int) string {
				return fmt.Sprintf("%s row %d: its squared norm overflows (largest |value| %g): %s %s values too large; %s",
					name, row, top, name, holds, advice)
			}}
		}
	}
	return nil
}

// FiniteMagnitude is Finite and then Magnitude, in one pass over x on all threads: a NaN or
// infinite entry, or a row whose squared norm overflows, leaves that row's sum of squares
// non-finite, and only then do the two checks run, for their messages. The two passes took a
// tenth of a 1,000,000 × 50 linear fit.
func FiniteMagnitude(name string, x []float64, cols int) error {
	if cols <= 0 {
		return Finite(name, x, 1)
	}
	var bad atomic.Bool
	parallel.For(len(x)/cols, parallel.RowsPerChunk(cols), func(lo, hi int) {
		for i := lo; i < hi && !bad.Load(); i++ {
			if !finiteSquares(x[i*cols : (i+1)*cols]) {
				bad.Store(true)
			}
		}
	})
	if !bad.Load() {
		return nil
	}
	if err := Finite(name, x, cols); err != nil {
		return err
	}
	return Magnitude(name, x, cols)
}

// MaxAbs returns max_i |x_i| (0 for an empty x), or NaN when x holds a NaN or an infinity:
// Finite's test and a scale in one pass, on all threads. Finite's loop, one entry and two tests at
// a time, took 6.5 ms on yeast's 1,500 × 1,500 kernel matrix, a twentieth of the fit.
func MaxAbs(x []float64) float64 { return AddMaxAbs(x, 0) }

// AddMaxAbs adds c to every entry of x (nothing is written when c is 0) and returns MaxAbs of the
// result, in the same pass: a kernel fit's intercept, added to K, and the scale of K, which a
// pass of its own reads from memory again (18 MB on yeast, 1.4 ms).
func AddMaxAbs(x []float64, c float64) float64 {
	n := (len(x) + maxAbsChunk - 1) / maxAbsChunk
	parts := make([]float64, n)
	parallel.For(n, 4, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			chunk := x[k*maxAbsChunk : min(len(x), (k+1)*maxAbsChunk)]
			if c != 0 {
				for i := range chunk {
					chunk[i] += c
				}
			}
			parts[k] = maxAbs(chunk)
		}
	})
	var top float64
	for _, v := range parts {
		if math.IsNaN(v) {
			return v
		}
		top = math.Max(top, v)
	}
	return top
}

// maxAbsChunk is AddMaxAbs's unit of work (256 KB, which the addition leaves in cache for the
// maxima).
const maxAbsChunk = 1 << 15

// maxAbs is MaxAbs on one thread, in four lanes. The maxima are taken by comparisons, which skip
// NaN (the builtin max propagates it but ran at 4 ns per entry); |v| − |v|, zero for every finite
// v and NaN otherwise, summed alongside, catches NaN and the infinities.
func maxAbs(x []float64) float64 {
	var m0, m1, m2, m3, s0, s1, s2, s3 float64
	for ; len(x) >= 4; x = x[4:] {
		v := x[:4:4]
		a0, a1, a2, a3 := math.Abs(v[0]), math.Abs(v[1]), math.Abs(v[2]), math.Abs(v[3])
		s0 += a0 - a0
		s1 += a1 - a1
		s2 += a2 - a2
		s3 += a3 - a3
		if a0 > m0 {
			m0 = a0
		}
		if a1 > m1 {
			m1 = a1
		}
		if a2 > m2 {
			m2 = a2
		}
		if a3 > m3 {
			m3 = a3
		}
	}
	for _, v := range x {
		a := math.Abs(v)
		s0 += a - a
		m0 = math.Max(m0, a)
	}
	if s0+s1+s2+s3 != 0 {
		return math.NaN()
	}
	return math.Max(math.Max(m0, m1), math.Max(m2, m3))
}

// finiteSquares reports whether the sum of squares of row is finite: gonum's vector dot product,
// twice as fast as four scalar sums in Go (0.05 of 0.11 ms on yeast's X).
func finiteSquares(row []float64) bool {
	s := floats.Dot(row, row)
	return s-s == 0 // false for NaN and ±Inf
}

// MaxAlpha is the largest regularisation strength alpha: the solvers form 2α and 2α·w, which must
// stay finite (2α overflowed at alpha = 1e308, and ∞·0 made the gradient NaN).
const MaxAlpha = math.MaxFloat64 / 4

// MinAlpha is the smallest regularisation strength alpha, the smallest normal float64: the
// solvers' products with a subnormal alpha lose their digits, and linear CG at alpha = 1e-310 on
// inputs near 1e-155 (the well-posed problem at alpha = 1 and inputs near 1, rescaled) returned an
// intercept-only model without a warning, or an overflow error that blamed X (probe DJ).
const MinAlpha = 0x1p-1022

// ScaledAlpha is the range of an alpha the solvers derive, alpha over the scale of the sample
// weights or ProbabilisticStructured's default from their sum: positive and at most MaxAlpha. It
// acts against weights scaled with it, where a subnormal value is no loss; a user's alpha obeys
// Alpha.
func ScaledAlpha(alpha float64) error {
	if !(alpha > 0) || !(alpha <= MaxAlpha) {
		return fmt.Errorf("alpha must be a positive number at most %.3g, got %v", MaxAlpha, alpha)
	}
	return nil
}

// Alpha is the one rule for the regularisation strength a user sets, in both estimators: a number
// from MinAlpha to MaxAlpha.
func Alpha(alpha float64) error {
	if !(alpha >= MinAlpha) || !(alpha <= MaxAlpha) {
		return fmt.Errorf("alpha must be a positive number from %.3g (the smallest normal float64: products with a "+
			"smaller one lose their digits; rescale X by c and alpha by c² to reach it) to %.3g, got %v", MinAlpha, MaxAlpha, alpha)
	}
	return nil
}
