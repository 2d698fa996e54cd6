package ridge

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

// A space whose ψ has no coordinates (permutations of one label) is refused by every fit with an
// error that says why; it used to reach gonum's panic on a zero-length matrix, which the C ABI
// reported as an internal error with a goroutine dump.
func TestFitsRefuseASpaceWithoutCoordinates(t *testing.T) {
	sp, err := space.NewPermutations(1)
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 4, 2
	X := []float64{1, 0, 0, 1, 1, 1, 0.5, 2}
	ys := []int64{1, 1, 1, 1}
	fits := map[string]func() error{
		"ridge.Fit": func() error { _, err := Fit(sp, X, m, n, ys, nil, baseOptions()); return err },
		"ridge.PartialFit": func() error {
			_, err := PartialFit(nil, sp, X, m, n, ys, nil, baseOptions())
			return err
		},
		"prob.Fit": func() error { _, err := prob.Fit(sp, X, m, n, ys, nil, prob.Options{Alpha: 1}); return err },
	}
	for name, fit := range fits {
		if err := fit(); err == nil || !strings.Contains(err.Error(), "nothing to learn") {
			t.Errorf("%s: error %v, want one saying there is nothing to learn", name, err)
		}
	}
}
