package space_test

import (
	"testing"
	"time"

	"github.com/combpred/combpred/core/space"
)

// DecodeWork is an estimate in nanoseconds to the order of magnitude: one decode of each space
// below takes no more than 100 times the estimate (and no less than a hundredth of it where the
// decode takes long enough to time), so that a caller bounding uncancellable work by it is off by
// at most that factor (measured here: 0.1–1.1 times the estimate; the margin is for the race
// detector and a loaded machine).
func TestDecodeWorkOrderOfMagnitude(t *testing.T) {
	if testing.Short() {
		t.Skip("times decodes")
	}
	for _, c := range []struct {
		kind   string
		params []int64
	}{
		{"permutations", []int64{12}},
		{"permutations", []int64{16, 1}},
		{"permutations", []int64{40}},
		{"dicycles", []int64{14, 1}},
		{"ucycles", []int64{14, 1}},
		{"cliques", []int64{20}},
		{"multilabel", []int64{1000}},
	} {
		sp, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		u := make([]float64, sp.Dim())
		for i := range u {
			u[i] = float64((i*7919)%13) - 6
		}
		y := make([]int64, sp.Width())
		sp.Decode(u, y) // warm the pools
		const reps = 3
		start := time.Now()
		for range reps {
			sp.Decode(u, y)
		}
		took := float64(time.Since(start).Nanoseconds()) / reps
		work := space.DecodeWork(sp)
		t.Logf("%s%v: %.3g ns, estimate %.3g", c.kind, c.params, took, work)
		if took > 100*work || (took > 1e6 && took < work/100) {
			t.Errorf("%s%v: a decode took %.3g ns, DecodeWork estimates %.3g", c.kind, c.params, took, work)
		}
	}
}
