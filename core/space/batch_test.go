package space_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// batchKinds are the spaces with a batched exact decoder (DecodeRows takes four rows at a time).
var batchKinds = []string{"permutations", "dicycles", "ucycles"}

// batchRows draws m score rows of dimension d in one of several styles that stress the batched
// path: plain Gaussian rows, rows of −1/0/1 (many ties), rows at 2^±600 (rescaled before
// decoding) and rows whose scales differ from one row of a batch to the next.
func batchRows(r *rand.Rand, style string, m, d int) []float64 {
	us := make([]float64, m*d)
	for i := 0; i < m; i++ {
		scale := 1.0
		switch style {
		case "huge":
			scale = math.Ldexp(1, 600)
		case "tiny":
			scale = math.Ldexp(1, -600)
		case "mixed":
			scale = math.Ldexp(1, []int{-700, 0, 300, 900, -20}[i%5])
		}
		for k := 0; k < d; k++ {
			if style == "ties" {
				us[i*d+k] = float64(r.IntN(3) - 1)
			} else {
				us[i*d+k] = scale * r.NormFloat64()
			}
		}
	}
	return us
}

func batchDot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// batchTol is the rounding allowance for comparing scores of different optimal structures.
func batchTol(u []float64) float64 {
	var s float64
	for _, x := range u {
		s += math.Abs(x)
	}
	return 1e-12 * s
}

// TestDecodeRowsBatchedByEnumeration: every row that DecodeRows decodes, in batches and in the
// remainder, scores the brute-force maximum, for numbers of rows that are and are not multiples
// of the batch size (n = 2 only for permutations: cycles need three vertices).
func TestDecodeRowsBatchedByEnumeration(t *testing.T) {
	for _, kind := range batchKinds {
		for n := 2; n <= 8; n++ {
			if (testing.Short() && n == 8) || (n == 2 && kind != "permutations") {
				continue
			}
			s, err := space.New(kind, []int64{int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			b := spacetest.Enumerate(t, s)
			d, w := s.Dim(), s.Width()
			for _, style := range []string{"normal", "ties", "huge", "tiny", "mixed"} {
				for _, m := range []int{1, 4, 7, 9, 70} {
					t.Run(fmt.Sprintf("%s/n=%d/%s/m=%d", kind, n, style, m), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(n), uint64(m)))
						us := batchRows(r, style, m, d)
						ys := make([]int64, m*w)
						if err := space.DecodeRows(s, us, m, ys, nil); err != nil {
							t.Fatal(err)
						}
						psi := make([]float64, d)
						for i := 0; i < m; i++ {
							u, y := us[i*d:(i+1)*d], ys[i*w:(i+1)*w]
							if err := s.Validate(y); err != nil {
								t.Fatalf("row %d: decoded %v is invalid: %v", i, y, err)
							}
							best := math.Inf(-1)
							for _, p := range b.Psis {
								best = max(best, batchDot(u, p))
							}
							s.Embed(y, psi)
							if f := batchDot(u, psi); f < best-batchTol(u) {
								t.Fatalf("row %d: decoded %v scores %.17g, the maximum is %.17g", i, y, f, best)
							}
						}
					})
				}
			}
		}
	}
}

// TestDecodeRowsBatchedMatchesDecode: at sizes too large to enumerate, DecodeRows (batched),
// Decode (one-lane kernels) and the portable decoders find structures of equal scores.
func TestDecodeRowsBatchedMatchesDecode(t *testing.T) {
	sizes := []int{10, 11, 12}
	if !testing.Short() {
		sizes = append(sizes, 13, 14)
	}
	for _, kind := range batchKinds {
		for _, n := range sizes {
			s, err := space.New(kind, []int64{int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			d, w := s.Dim(), s.Width()
			m := 23
			if n >= 13 {
				m = 6
			}
			r := rand.New(rand.NewPCG(uint64(n), 99))
			us := batchRows(r, "normal", m, d)
			ys := make([]int64, m*w)
			if err := space.DecodeRows(s, us, m, ys, nil); err != nil {
				t.Fatal(err)
			}
			portable := make([]int64, m*w)
			old := space.SetHaveBatch(false)
			for i := 0; i < m; i++ {
				s.Decode(us[i*d:(i+1)*d], portable[i*w:(i+1)*w])
			}
			space.SetHaveBatch(old)
			single := make([]int64, w)
			psi := make([]float64, d)
			for i := 0; i < m; i++ {
				u := us[i*d : (i+1)*d]
				s.Embed(portable[i*w:(i+1)*w], psi)
				want := batchDot(u, psi)
				s.Decode(u, single)
				for _, y := range [][]int64{ys[i*w : (i+1)*w], single} {
					if err := s.Validate(y); err != nil {
						t.Fatalf("%s(%d) row %d: decoded %v is invalid: %v", kind, n, i, y, err)
					}
					s.Embed(y, psi)
					if f := batchDot(u, psi); math.Abs(f-want) > batchTol(u) {
						t.Errorf("%s(%d) row %d: %v scores %.17g, the portable decoder's %v %.17g",
							kind, n, i, y, f, portable[i*w:(i+1)*w], want)
					}
				}
			}
		}
	}
}

// TestDecodeRowsBatchedNonFinite: rows with NaN and ±Inf scores decode in batches as Decode
// decodes them: NaN counts as 0 and ±Inf as ±MaxFloat64/(4n²) (permFiniteScore), so under those
// finite stand-ins both structures score the same.
func TestDecodeRowsBatchedNonFinite(t *testing.T) {
	for _, kind := range batchKinds {
		for _, n := range []int{6, 11} {
			s, _ := space.New(kind, []int64{int64(n)})
			d, w := s.Dim(), s.Width()
			r := rand.New(rand.NewPCG(uint64(n), 5))
			const m = 9
			us := batchRows(r, "normal", m, d)
			bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
			for i := 0; i < m; i++ {
				u := us[i*d : (i+1)*d]
				switch i % 3 {
				case 0:
					u[r.IntN(d)], u[r.IntN(d)] = bad[i%3], bad[(i/3)%3]
				case 1:
					u[r.IntN(d)] = bad[(i/3)%3]
				default:
					for k := range u {
						u[k] = bad[(i/3)%3]
					}
				}
			}
			ys := make([]int64, m*w)
			if err := space.DecodeRows(s, us, m, ys, nil); err != nil {
				t.Fatal(err)
			}
			lim := math.MaxFloat64 / float64(4*n*n)
			finite := make([]float64, d)
			y := make([]int64, w)
			psi := make([]float64, d)
			for i := 0; i < m; i++ {
				u := us[i*d : (i+1)*d]
				for k, x := range u {
					switch {
					case math.IsNaN(x):
						finite[k] = 0
					default:
						finite[k] = max(-lim, min(lim, x))
					}
				}
				got := ys[i*w : (i+1)*w]
				if err := s.Validate(got); err != nil {
					t.Fatalf("%s(%d) row %d: decoded %v is invalid: %v", kind, n, i, got, err)
				}
				s.Decode(u, y)
				s.Embed(y, psi)
				want := batchDot(finite, psi)
				s.Embed(got, psi)
				if f := batchDot(finite, psi); math.Abs(f-want) > batchTol(finite) {
					t.Errorf("%s(%d) row %d: batched %v scores %.17g, Decode's %v %.17g", kind, n, i, got, f, y, want)
				}
			}
		}
	}
}

// TestDecodeRowsBatchedStops: a stop set before the call leaves every row as it was.
func TestDecodeRowsBatchedStops(t *testing.T) {
	s, _ := space.NewPermutations(9)
	const m = 200
	us := batchRows(rand.New(rand.NewPCG(1, 2)), "normal", m, s.Dim())
	ys := make([]int64, m*s.Width())
	var stop cancel.Flag
	stop.Stop()
	if err := space.DecodeRows(s, us, m, ys, &stop); !errors.Is(err, cancel.ErrCancelled) {
		t.Fatalf("got %v, want cancel.ErrCancelled", err)
	}
	for i, y := range ys {
		if y != 0 {
			t.Fatalf("value %d was written (%d) after stop", i, y)
		}
	}
}

// batchBenchmark measures exact decoding on one thread, in rows/s: "row" calls Decode row by row,
// "batch" calls DecodeRows on blocks of 64 rows (one parallel chunk, so one thread, batched), and
// "portable" the same DecodeRows with the vector kernels switched off: the Go decoders, which were
// every machine's before the kernels, so that one run gives the speed-up.
func batchBenchmark(b *testing.B, kind string) {
	for _, n := range []int{10, 11, 12, 13, 14} {
		s, err := space.New(kind, []int64{int64(n)})
		if err != nil {
			b.Fatal(err)
		}
		const rows = 64
		d, w := s.Dim(), s.Width()
		us := batchRows(rand.New(rand.NewPCG(1, 1)), "normal", rows, d)
		ys := make([]int64, rows*w)
		b.Run(fmt.Sprintf("n=%d/row", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				s.Decode(us[i*d:(i+1)*d], ys[:w])
				i = (i + 1) % rows
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		for _, kernels := range []bool{true, false} {
			name := map[bool]string{true: "batch", false: "portable"}[kernels]
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				defer space.SetHaveBatch(space.SetHaveBatch(kernels))
				for b.Loop() {
					_ = space.DecodeRows(s, us, rows, ys, nil)
				}
				b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

func BenchmarkPermutationsDecodeBatch(b *testing.B) { batchBenchmark(b, "permutations") }

func BenchmarkDicyclesDecodeBatch(b *testing.B) { batchBenchmark(b, "dicycles") }

// TestExactDecodersPortable: with the vector kernels switched off, Decode and DecodeRows take
// the portable decoders (permDecodeExact, the Go Held–Karp), which must still find the
// brute-force maximum; elsewhere on amd64 they serve only sizes beyond the kernels' limits.
func TestExactDecodersPortable(t *testing.T) {
	defer space.SetHaveBatch(space.SetHaveBatch(false))
	for _, kind := range batchKinds {
		for n := 3; n <= 7; n++ {
			s, err := space.New(kind, []int64{int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			b := spacetest.Enumerate(t, s)
			spacetest.CheckDecoder(t, s, b, 200, uint64(n))
		}
	}
}

// TestDecodeRowsStopsWithinALocalSearch: the local search of a large cycle space runs up to 50n +
// 100 passes of O(n²) on one row, and DecodeRows checked its stop only between rows: one row of
// UndirectedCycles(2000) ran 43 s after Ctrl-C (probe AE). A stop set during the row now ends the
// search after the pass under way, and the row still holds a cycle.
func TestDecodeRowsStopsWithinALocalSearch(t *testing.T) {
	// sizes whose one-row search runs well past the stop: 2.1 s (ucycles, 1000 vertices) and 0.56 s
	// (dicycles, 2000; at 1000 it took 50 ms, and ended before the stop as often as not)
	for kind, n := range map[string]int64{"ucycles": 1000, "dicycles": 2000} {
		s, err := space.New(kind, []int64{n})
		if err != nil {
			t.Fatal(err)
		}
		us := batchRows(rand.New(rand.NewPCG(3, 4)), "normal", 1, s.Dim())
		ys := make([]int64, s.Width())
		var stop cancel.Flag
		timer := time.AfterFunc(50*time.Millisecond, stop.Stop)
		start := time.Now()
		err = space.DecodeRows(s, us, 1, ys, &stop)
		elapsed := time.Since(start)
		timer.Stop()
		if !errors.Is(err, cancel.ErrCancelled) {
			t.Fatalf("%s: got %v after %v, want cancel.ErrCancelled", kind, err, elapsed)
		}
		if elapsed > time.Second {
			t.Errorf("%s: the decoding stopped %v after it began, the stop being set at 50 ms", kind, elapsed)
		}
		if err := s.Validate(ys); err != nil {
			t.Errorf("%s: the stopped row holds no cycle: %v", kind, err)
		}
	}
}
