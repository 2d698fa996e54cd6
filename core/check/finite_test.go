package check

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/parallel"
)

// FiniteMagnitude answers as Finite and then Magnitude do, message for message, on clean inputs,
// on every kind of bad entry at every position of a row (the vector sums and the
// remainder), and on rows that overflow only in their total.
func TestFiniteMagnitudeMatchesTheTwoChecks(t *testing.T) {
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300}
	for _, cols := range []int{1, 3, 4, 5, 9, 17, 31} { // 17, 31: the vector loop and its tails
		for _, rows := range []int{1, 2, 5000} { // 5000: more than one chunk of rows per thread
			base := make([]float64, rows*cols)
			for i := range base {
				base[i] = float64(i%7) - 3
			}
			cases := map[string][]float64{"clean": base}
			for _, v := range bad {
				for j := 0; j < cols; j++ {
					x := append([]float64(nil), base...)
					x[(rows-1)*cols+j] = v
					cases["bad "+fmt.Sprint(v)+" at column "+fmt.Sprint(float64(j))] = x
				}
			}
			spread := append([]float64(nil), base...)
			for j := 0; j < cols; j++ {
				spread[j] = 1e154 * math.Sqrt(2/float64(cols)) // each square finite, their sum 2e308
			}
			cases["total overflows"] = spread
			for name, x := range cases {
				want := Finite("X", x, cols)
				if want == nil {
					want = Magnitude("X", x, cols)
				}
				got := FiniteMagnitude("X", x, cols)
				if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
					t.Errorf("cols %d rows %d %s: %v, want %v", cols, rows, name, got, want)
				}
			}
		}
	}
}

// MaxAbs is the largest magnitude, NaN when x holds a NaN or an infinity (AddMaxAbs that of x + c),
// wherever the bad entry falls (each of the four lanes, the remainder, the second chunk), and
// whatever the number of threads.
func TestMaxAbs(t *testing.T) {
	defer parallel.SetThreads(parallel.Threads())
	for _, n := range []int{0, 1, 3, 4, 7, maxAbsChunk + 5, 3*maxAbsChunk + 2} {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i)) * 10
		}
		want := 0.0
		for _, v := range x {
			want = math.Max(want, math.Abs(v))
		}
		for _, threads := range []int{1, 2, 5} {
			parallel.SetThreads(threads)
			if got := MaxAbs(x); got != want {
				t.Errorf("n %d, %d threads: MaxAbs = %v, want %v", n, threads, got, want)
			}
			shifted, wantShifted := append([]float64(nil), x...), 0.0
			for _, v := range x {
				wantShifted = math.Max(wantShifted, math.Abs(v+1))
			}
			if got := AddMaxAbs(shifted, 1); got != wantShifted {
				t.Errorf("n %d, %d threads: AddMaxAbs = %v, want %v", n, threads, got, wantShifted)
			}
			for i, v := range x {
				if shifted[i] != v+1 {
					t.Fatalf("n %d: AddMaxAbs left x[%d] = %v, want %v", n, i, shifted[i], v+1)
				}
			}
		}
		for _, pos := range []int{0, 1, 2, 3, n - 1, maxAbsChunk + 1} {
			if pos < 0 || pos >= n {
				continue
			}
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1e300} {
				y := append([]float64(nil), x...)
				y[pos] = bad
				got := MaxAbs(y)
				if math.IsNaN(bad) || math.IsInf(bad, 0) {
					if !math.IsNaN(got) {
						t.Errorf("n %d, %v at %d: MaxAbs = %v, want NaN", n, bad, pos, got)
					}
				} else if got != 1e300 {
					t.Errorf("n %d, %v at %d: MaxAbs = %v, want 1e300", n, bad, pos, got)
				}
			}
		}
	}
}

// BenchmarkMaxAbs scans a kernel matrix of yeast's size.
func BenchmarkMaxAbs(b *testing.B) {
	x := make([]float64, 1500*1500)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	for b.Loop() {
		MaxAbs(x)
	}
	b.ReportMetric(float64(len(x)*b.N)/b.Elapsed().Seconds()/1e9, "Gentries/s")
}

// A kernel matrix is scaled through its kernel, not with StandardScaler.
func TestMagnitudeAdvice(t *testing.T) {
	x := []float64{1, 2, 1e200, 3}
	for name, want := range map[string]string{
		"X":          "X row 1: its squared norm overflows (largest |value| 1e+200): X holds values too large; scale X (e.g. with StandardScaler)",
		KernelMatrix: "the kernel matrix row 1: its squared norm overflows (largest |value| 1e+200): the kernel matrix holds values too large; scale the kernel",
	} {
		if err := FiniteMagnitude(name, x, 2); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

func TestFiniteVectorNamesTheIndex(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want string
	}{
		{[]float64{0, math.NaN(), 0}, "v[1] = NaN: values must be finite"},
		{[]float64{math.Inf(-1)}, "v[0] = -Inf: values must be finite"},
		{[]float64{1, 2, 3, math.Inf(1), math.NaN()}, "v[3] = +Inf: values must be finite"},
	} {
		if err := FiniteVector("v", tc.x); err == nil || err.Error() != tc.want {
			t.Errorf("FiniteVector(%v) = %v, want %q", tc.x, err, tc.want)
		}
	}
	if err := FiniteVector("v", []float64{0, -1e308, 5}); err != nil {
		t.Errorf("finite vector refused: %v", err)
	}
}

// The checks read the sum first: finite values whose sum overflows must still pass, and a NaN or
// an infinity anywhere (infinities of both signs sum to NaN) must be named where it is.
func TestFiniteChecksBehindTheSum(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		x   []float64
		bad int // the index named, −1: accepted
	}{
		{[]float64{math.MaxFloat64, math.MaxFloat64, 1}, -1},
		{[]float64{-math.MaxFloat64, -math.MaxFloat64}, -1},
		{[]float64{0, 1, 2}, -1},
		{nil, -1},
		{[]float64{1, math.NaN(), 3}, 1},
		{[]float64{1, 2, inf, -inf}, 2},
		{[]float64{math.MaxFloat64, math.MaxFloat64, -inf}, 2},
	} {
		for _, check := range []struct {
			err  error
			want string
		}{
			{Finite("x", c.x, 1), fmt.Sprintf("x[%d, 0] = ", c.bad)},
			{FiniteVector("x", c.x), fmt.Sprintf("x[%d] = ", c.bad)},
			{Fitted("coefficients", c.x), fmt.Sprintf("(entry %d)", c.bad)},
		} {
			switch {
			case c.bad < 0 && check.err != nil:
				t.Errorf("%v: %v, want nil", c.x, check.err)
			case c.bad >= 0 && (check.err == nil || !strings.Contains(check.err.Error(), check.want)):
				t.Errorf("%v: %v, want an error naming %q", c.x, check.err, check.want)
			}
		}
	}
}
