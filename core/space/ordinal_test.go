package space_test

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestOrdinalByEnumeration(t *testing.T) {
	for n := 2; n <= 40; n++ {
		s, err := space.New("ordinal", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, s)
		b := spacetest.CheckCounts(t, s, 1e-12)
		spacetest.CheckDecoder(t, s, b, 1000, uint64(n))
		spacetest.CheckSampler(t, s, b, 50*n, uint64(200+n), 1e-4)
	}
}

func TestOrdinalRejects(t *testing.T) {
	bad := []struct {
		params []int64
		want   string
	}{
		{[]int64{1}, "n_levels ≥ 2"},
		{[]int64{0}, "n_levels ≥ 2"},
		{[]int64{-4}, "n_levels ≥ 2 (one level leaves nothing to predict and d = n−1 = 0), got -4"},
		{[]int64{3, 4}, "takes 1 parameter"},
	}
	for _, c := range bad {
		if _, err := space.New("ordinal", c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(ordinal, %v) error = %v, want it to mention %q", c.params, err, c.want)
		}
	}
	s, _ := space.NewOrdinal(5)
	rows := []struct {
		y    []int64
		want string
	}{
		{[]int64{7}, "level 7 outside [0, 5)"},
		{[]int64{-1}, "level -1 outside [0, 5)"},
		{[]int64{1, 2}, "one integer level, got 2 values"},
	}
	for _, c := range rows {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
}

func TestOrdinalLarge(t *testing.T) {
	s, err := space.NewOrdinal(100000)
	if err != nil {
		t.Fatal(err)
	}
	checkLargeFinite(t, s)
	s2, _ := space.NewOrdinal(1000)
	checkLinearMoments(t, s2, 4000, 31, testDirections(s2.Dim(), []int{100, 500}, 2, 32))
}

// The thesis (section "Simple Non-Set System Cases") takes Y = Σ = [d] = {1, …, d} (its notation,
// introduced with the label ranking problem) and ψ_i(z) = 1 if z ≥ i, and prints Ψ_i = |Σ| − i and
// C_ij = |Σ| − max(i, j). Counting levels 1..d gives Ψ_i = d − i + 1 and C_ij = d − max(i,j) + 1;
// the printed values hold only for levels numbered 0..d−1.
func TestThesisOrdinalCountsOffByOne(t *testing.T) {
	const d = 6
	var psiSum [d + 1]int
	var c [d + 1][d + 1]int
	for z := 1; z <= d; z++ { // levels 1..d, thresholds i = 1..d
		for i := 1; i <= d; i++ {
			if z >= i {
				psiSum[i]++
				for j := 1; j <= d; j++ {
					if z >= j {
						c[i][j]++
					}
				}
			}
		}
	}
	for i := 1; i <= d; i++ {
		if psiSum[i] != d-i+1 || psiSum[i] == d-i {
			t.Errorf("Ψ_%d = %d, want d−i+1 = %d (printed d−i = %d)", i, psiSum[i], d-i+1, d-i)
		}
		for j := 1; j <= d; j++ {
			if c[i][j] != d-max(i, j)+1 {
				t.Errorf("C_%d%d = %d, want %d", i, j, c[i][j], d-max(i, j)+1)
			}
		}
	}
}
