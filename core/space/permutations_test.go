package space_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestPermutationsByEnumeration(t *testing.T) {
	for n := 2; n <= 7; n++ {
		s, err := space.New("permutations", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		b := spacetest.CheckCounts(t, s, 1e-12)
		spacetest.CheckDecoder(t, s, b, 1000, uint64(n))
		if len(b.Ys) <= 120 {
			spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(200+n), 1e-4)
		}
	}
}

// The exact DP must agree with brute force at sizes where its table split (n/2 low labels) is
// uneven and where the tables are largest among enumerable sizes.
func TestPermutationsExactDecoderLarger(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 8! rankings")
	}
	s, _ := space.NewPermutations(8)
	b := spacetest.Enumerate(t, s)
	spacetest.CheckDecoder(t, s, b, 200, 8)
}

func TestPermutationsApproxDecoder(t *testing.T) {
	for n := 3; n <= 8; n++ {
		s, err := space.NewPermutationsApprox(n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Guarantee() != 0.5 {
			t.Fatalf("approximate permutations Guarantee = %v, want 0.5", s.Guarantee())
		}
		b := spacetest.Enumerate(t, s)
		trials := 1000
		if n == 8 {
			trials = 200
		}
		nu := spacetest.CheckDecoder(t, s, b, trials, uint64(300+n))
		worst := pcWorstRealisedNu(s, b, trials, uint64(300+n))
		t.Logf("permutations n=%d: approximate decoder, realised ν mean %.4f, worst %.4f (guarantee 0.5)", n, nu, worst)
	}
}

func TestPermutationsGuaranteeSwitch(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{2, 0}, {16, 0}, {17, 0.5}, {300, 0.5}} {
		s, _ := space.NewPermutations(c.n)
		if got := s.Guarantee(); got != c.want {
			t.Errorf("Permutations(%d).Guarantee() = %v, want %v", c.n, got, c.want)
		}
	}
}

// At sizes beyond enumeration, Decode must return valid rankings, never score below the sibling
// bound 0, and (exact path, n = 16) never score below the approximate path.
func TestPermutationsDecodeLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{12, 16, 17, 40, 120} {
		s, _ := space.NewPermutations(n)
		a, _ := space.NewPermutationsApprox(n)
		d := s.Dim()
		u, psi := make([]float64, d), make([]float64, d)
		y, ya := make([]int64, n), make([]int64, n)
		for trial := 0; trial < 5; trial++ {
			for i := range u {
				u[i] = r.NormFloat64()
			}
			s.Decode(u, y)
			if err := s.Validate(y); err != nil {
				t.Fatalf("n=%d: decoded %v invalid: %v", n, y, err)
			}
			s.Embed(y, psi)
			f := pcDot(u, psi)
			a.Decode(u, ya)
			a.Embed(ya, psi)
			fa := pcDot(u, psi)
			if f < 0 || fa < 0 {
				t.Errorf("n=%d: decoded score %g (approx %g) below the sibling bound 0", n, f, fa)
			}
			if n <= 16 && fa > f+1e-9 {
				t.Errorf("n=%d: approximate decoder %g beats the exact one %g", n, fa, f)
			}
		}
	}
}

func TestPermutationsValidate(t *testing.T) {
	s, _ := space.NewPermutations(4)
	cases := []struct {
		y    []int64
		want string
	}{
		{[]int64{1, 2, 3}, "got 3 values"},
		{[]int64{1, 2, 3, 4, 5}, "got 5 values"},
		{[]int64{1, 3, 3, 2}, "rank 3 appears twice"},
		{[]int64{0, 1, 2, 3}, "label 0 has rank 0, outside [1, 4]"},
		{[]int64{1, 2, 5, 3}, "label 2 has rank 5"},
		{[]int64{2, 2, 2, 2}, "rank 2 appears twice"},
	}
	for _, c := range cases {
		err := s.Validate(c.y)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want an error containing %q", c.y, err, c.want)
		}
	}
	if err := s.Validate([]int64{4, 1, 3, 2}); err != nil {
		t.Errorf("Validate(4 1 3 2) = %v, want nil", err)
	}
}

// The operator at a size beyond enumeration: MulVec must match the dense product of At, which the
// enumeration tests tie to brute force at small n.
func TestPermutationsOperatorLarge(t *testing.T) {
	s, _ := space.NewPermutations(60)
	pcCheckOperatorRows(t, s.Covariance(), []int{0, 1, 58, 59, 700, s.Dim() - 1}, 1e-12)
	if got, want := s.LogCount(), pcLogFactorial(61); !pcRelClose(got, want, 1e-13) {
		t.Errorf("Permutations(60).LogCount() = %v, want log 60! = %v", got, want)
	}
}

// pcCheckOperatorRows compares rows of op.MulVec(v) with Σ_j op.At(i, j)·v_j.
func pcCheckOperatorRows(t *testing.T, op space.Operator, rows []int, tol float64) {
	t.Helper()
	d := op.Dim()
	r := rand.New(rand.NewPCG(11, 12))
	v, sv := make([]float64, d), make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	op.MulVec(sv, v)
	for _, i := range rows {
		var want, scale float64
		for j := 0; j < d; j++ {
			a := op.At(i, j)
			if a != op.At(j, i) {
				t.Fatalf("operator not symmetric at (%d,%d): %g vs %g", i, j, a, op.At(j, i))
			}
			want += a * v[j]
			scale += pcAbs(a * v[j])
		}
		if pcAbs(sv[i]-want) > tol*max(1, scale) {
			t.Errorf("(S·v)[%d] = %.15g, Σ_j S[%d,j]·v_j = %.15g", i, sv[i], i, want)
		}
	}
}

func pcBenchmarkDecode(b *testing.B, s space.Space) {
	r := rand.New(rand.NewPCG(1, 1))
	const rows = 256
	us := make([]float64, rows*s.Dim())
	for i := range us {
		us[i] = r.NormFloat64()
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		y := make([]int64, s.Width())
		d := s.Dim()
		i := 0
		for pb.Next() {
			s.Decode(us[i*d:(i+1)*d], y)
			i = (i + 1) % rows
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkPermutationsDecode(b *testing.B) {
	for _, n := range []int{10, 16, 50} {
		s, _ := space.NewPermutations(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { pcBenchmarkDecode(b, s) })
	}
}

func pcDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func pcAbs(x float64) float64 { return math.Abs(x) }

func pcRelClose(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// pcLogFactorial is log((k−1)!) = Lgamma(k), as an independent reference.
func pcLogFactorial(k int) float64 {
	l, _ := math.Lgamma(float64(k))
	return l
}

// pcWorstRealisedNu replays CheckDecoder's score vectors (same seed) and returns the largest
// realised z-factor (max − f(ŷ))/(max − min), which CheckDecoder does not report.
func pcWorstRealisedNu(s space.Space, b *spacetest.Brute, trials int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	u, psi := make([]float64, s.Dim()), make([]float64, s.Dim())
	y := make([]int64, s.Width())
	var worst float64
	for trial := 0; trial < trials; trial++ {
		for i := range u {
			u[i] = r.NormFloat64()
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range b.Psis {
			f := pcDot(u, p)
			lo, hi = math.Min(lo, f), math.Max(hi, f)
		}
		s.Decode(u, y)
		s.Embed(y, psi)
		if hi > lo {
			worst = math.Max(worst, (hi-pcDot(u, psi))/(hi-lo))
		}
	}
	return worst
}

func TestPermCyclesRejectBadParameters(t *testing.T) {
	cases := []struct {
		kind   string
		params []int64
		want   string
	}{
		{"permutations", []int64{0}, "n_labels ≥ 2"},
		{"permutations", []int64{1}, "n_labels ≥ 2"},
		{"dicycles", []int64{2}, "n_vertices ≥ 3"},
		{"ucycles", []int64{-1}, "n_vertices ≥ 3, got -1"},
		{"ucycles", []int64{2}, "n_vertices ≥ 3"},
		{"dicycles", []int64{4, 5}, "decoder mode 5"},
		{"ucycles", []int64{4, 0, 0}, "takes 1 or 2 parameters"},
		{"permutations", []int64{1 << 20}, "not supported"},
	}
	for _, c := range cases {
		_, err := space.New(c.kind, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %v) error = %v, want it to mention %q", c.kind, c.params, err, c.want)
		}
	}
}

func TestPermCyclesEnumerateLimits(t *testing.T) {
	for _, c := range []struct {
		kind     string
		ok, over int
	}{{"permutations", 10, 11}, {"dicycles", 10, 11}, {"ucycles", 10, 11}} {
		s, _ := space.New(c.kind, []int64{int64(c.over)})
		if err := s.Enumerate(func([]int64) bool { t.Fatal("yield called"); return false }); err != space.ErrTooLarge {
			t.Errorf("%s(%d).Enumerate = %v, want ErrTooLarge", c.kind, c.over, err)
		}
		s, _ = space.New(c.kind, []int64{int64(c.ok)})
		calls := 0
		err := s.Enumerate(func([]int64) bool { calls++; return calls < 3 })
		if err != nil || calls != 3 {
			t.Errorf("%s(%d).Enumerate: err %v after %d calls, want nil after 3 (stop when yield says so)", c.kind, c.ok, err, calls)
		}
	}
}

// Decode is called from many goroutines at once (space.DecodeRows); pooled scratch space must not
// leak between calls. Run with -race to check the pools as well as the results.
func TestPermCyclesDecodeConcurrent(t *testing.T) {
	spaces := []space.Space{}
	for _, c := range []struct {
		kind string
		n    int64
	}{{"permutations", 9}, {"permutations", 20}, {"dicycles", 9}, {"dicycles", 20}, {"ucycles", 9}, {"ucycles", 20}} {
		s, err := space.New(c.kind, []int64{c.n})
		if err != nil {
			t.Fatal(err)
		}
		spaces = append(spaces, s)
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, s := range spaces {
		const m = 64
		d, w := s.Dim(), s.Width()
		us := make([]float64, m*d)
		for i := range us {
			us[i] = r.NormFloat64()
		}
		serial := make([]int64, m*w)
		for i := 0; i < m; i++ {
			s.Decode(us[i*d:(i+1)*d], serial[i*w:(i+1)*w])
		}
		done := make(chan []int64)
		for g := 0; g < 8; g++ {
			go func() {
				out := make([]int64, m*w)
				for k := 0; k < m; k++ {
					i := (k + g*7) % m
					s.Decode(us[i*d:(i+1)*d], out[i*w:(i+1)*w])
				}
				done <- out
			}()
		}
		for g := 0; g < 8; g++ {
			out := <-done
			for i := range out {
				if out[i] != serial[i] {
					t.Fatalf("%s%v: concurrent Decode differs from serial at row %d", s.Kind(), s.Params(), i/w)
				}
			}
		}
		if err := space.ValidateRows(s, serial, m); err != nil {
			t.Errorf("%s%v: %v", s.Kind(), s.Params(), err)
		}
	}
}

// Non-finite scores must still decode to valid structures.
func TestPermCyclesDecodeNonFinite(t *testing.T) {
	for _, c := range []struct {
		kind string
		n    int64
	}{{"permutations", 6}, {"permutations", 20}, {"dicycles", 6}, {"dicycles", 20}, {"ucycles", 6}, {"ucycles", 20}} {
		s, _ := space.New(c.kind, []int64{c.n})
		u := make([]float64, s.Dim())
		y := make([]int64, s.Width())
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			for i := range u {
				u[i] = float64(i%5) - 2
			}
			u[0], u[len(u)/2] = bad, bad
			s.Decode(u, y)
			if err := s.Validate(y); err != nil {
				t.Errorf("%s(%d) with a %v score: decoded %v invalid: %v", c.kind, c.n, bad, y, err)
			}
			for i := range u {
				u[i] = bad
			}
			s.Decode(u, y)
			if err := s.Validate(y); err != nil {
				t.Errorf("%s(%d) with all scores %v: decoded %v invalid: %v", c.kind, c.n, bad, y, err)
			}
		}
	}
}
