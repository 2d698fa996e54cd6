package space

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSamplerTablesAgreeAcrossDomains: the exact samplers of rankings and cycles build their
// backward tables in the linear domain within the linear reach and in the log domain beyond it;
// on the same scores (within reach) the two tables give the same B to 1e-9, so that the
// chi-square tests of one domain vouch for the other.
func TestSamplerTablesAgreeAcrossDomains(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{2, 5, 8} {
		s, err := NewPermutations(n)
		if err != nil {
			t.Fatal(err)
		}
		u := make([]float64, s.Dim())
		for i := range u {
			u[i] = 3 * r.NormFloat64()
		}
		lin := s.ScoreSampler(u).(permSampler)
		if lin.scale == nil {
			t.Fatalf("permutations(%d): the scores are within reach, yet the table is in logs", n)
		}
		log := permSampler{n: lin.n, h: lin.h, lo: lin.lo, hi: lin.hi, back: make([]float64, len(lin.back))}
		full := 1<<n - 1
		for set := full - 1; set >= 0; set-- { // the log-domain loop, as ScoreSampler runs it beyond reach
			top, terms := math.Inf(-1), []float64{}
			for v := 0; v < n; v++ {
				if set&(1<<v) == 0 {
					x := log.gain(v, set) + log.back[set|1<<v]
					terms = append(terms, x)
					top = max(top, x)
				}
			}
			log.back[set] = top + math.Log(sumExpShifted(terms, top))
		}
		for set := 0; set <= full; set++ {
			if a, b := lin.logBack(set), log.logBack(set); math.Abs(a-b) > 1e-9*(1+math.Abs(b)) {
				t.Fatalf("permutations(%d), set %b: B %v linear, %v in logs", n, set, a, b)
			}
		}
	}
	for _, n := range []int{3, 6, 9} {
		w := make([]float64, n*n)
		for i := range w {
			w[i] = 3 * r.NormFloat64()
		}
		lin := newCycleSampler(n, w, false)
		if lin.scale == nil {
			t.Fatalf("cycles(%d): the scores are within reach, yet the table is in logs", n)
		}
		log := cycleSampler{n: n, w: w, back: make([]float64, n<<n)}
		cycleBackwardLog(n, w, log.back)
		for mask := 1; mask < 1<<n; mask++ {
			for v := 0; v < n; v++ {
				a, b := lin.logBack(mask, v), log.logBack(mask, v)
				if math.IsInf(b, -1) && math.IsInf(a, -1) {
					continue
				}
				if mask&(1<<v) != 0 && v != lowestBit(mask) && math.Abs(a-b) > 1e-9*(1+math.Abs(b)) {
					t.Fatalf("cycles(%d), mask %b, end %d: B %v linear, %v in logs", n, mask, v, a, b)
				}
			}
		}
	}
}

func lowestBit(mask int) int {
	for v := 0; ; v++ {
		if mask&(1<<v) != 0 {
			return v
		}
	}
}
