package space_test

import (
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestKSubsetsByEnumeration(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for k := 1; k <= n; k++ {
			s, err := space.New("ksubsets", []int64{int64(n), int64(k)})
			if err != nil {
				t.Fatal(err)
			}
			checkRoundTrip(t, s)
			b := spacetest.CheckCounts(t, s, 1e-12)
			if n <= 7 {
				spacetest.CheckDecoder(t, s, b, 1000, uint64(10*n+k))
			}
			if len(b.Ys) <= 300 {
				spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(100*n+k), 1e-4)
			}
		}
	}
}

func TestKSubsetsRejects(t *testing.T) {
	bad := []struct {
		params []int64
		want   string
	}{
		{[]int64{3, 4}, "1 ≤ k ≤ n_labels = 3, got k = 4"},
		{[]int64{3, 0}, "got k = 0"},
		{[]int64{3, -1}, "got k = -1"},
		{[]int64{0, 0}, "n_labels ≥ 1"},
		{[]int64{3}, "takes 2 parameter"},
		{[]int64{1 << 40, 2}, "out of range"},
	}
	for _, c := range bad {
		if _, err := space.New("ksubsets", c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(ksubsets, %v) error = %v, want it to mention %q", c.params, err, c.want)
		}
	}
	s, _ := space.NewKSubsets(5, 2)
	rows := []struct {
		y    []int64
		want string
	}{
		{[]int64{1, 1, 1, 0, 0}, "k-subset has 3 labels, want 2"},
		{[]int64{0, 0, 0, 0, 0}, "k-subset has 0 labels, want 2"},
		{[]int64{1, 0, 2, 0, 0}, "label 2 has value 2"},
		{[]int64{1, 1, 0, 0}, "has 5 entries"},
	}
	for _, c := range rows {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
}

func TestKSubsetsLarge(t *testing.T) {
	s, err := space.NewKSubsets(2000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	checkLargeFinite(t, s)
	// log C(2000, 1000) = Σ_{i=1}^{1000} log((1000+i)/i), summed independently of LogCount.
	var want float64
	for i := 1; i <= 1000; i++ {
		want += math.Log(float64(1000+i) / float64(i))
	}
	if got := s.LogCount(); math.Abs(got-want) > 1e-9*want {
		t.Errorf("KSubsets(2000,1000).LogCount() = %.15g, want %.15g", got, want)
	}
	if err := s.Enumerate(func([]int64) bool { return true }); err != space.ErrTooLarge {
		t.Errorf("Enumerate on C(2000,1000) structures: %v, want ErrTooLarge", err)
	}
	checkLinearMoments(t, s, 2000, 21, testDirections(s.Dim(), []int{0, 1999}, 2, 22))
	s2, _ := space.NewKSubsets(300, 7)
	checkLinearMoments(t, s2, 4000, 23, testDirections(s2.Dim(), []int{5}, 2, 24))
}

// The thesis (section "Simple Set System Cases") prints, for ℓ-label prediction,
// C = 1·C(d−2, ℓ−2) + I·C(d−1, ℓ−1). Its diagonal, C(d−2, ℓ−2) + C(d−1, ℓ−1), overstates the
// number of ℓ-subsets containing a label, C(d−1, ℓ−1); the coefficient of I must be C(d−2, ℓ−1).
// (The special cases it lists, C = I for multiclass and C = 2^{d−2}(I + 11ᵀ) for multilabel, are
// right; only the general ℓ formula is not.)
func TestThesisKSubsetsSecondMomentDiagonal(t *testing.T) {
	for _, c := range [][2]int{{5, 2}, {6, 3}, {7, 4}} {
		d, l := c[0], c[1]
		s, _ := space.NewKSubsets(d, l)
		b := spacetest.Enumerate(t, s)
		var cii, cij float64
		for _, psi := range b.Psis {
			cii += psi[0] * psi[0]
			cij += psi[0] * psi[1]
		}
		printedDiag := binom(d-2, l-2) + binom(d-1, l-1)
		if cii == printedDiag {
			t.Errorf("d=%d ℓ=%d: enumeration agrees with the printed diagonal %v", d, l, printedDiag)
		}
		if cii != binom(d-1, l-1) || cij != binom(d-2, l-2) || cii-cij != binom(d-2, l-1) {
			t.Errorf("d=%d ℓ=%d: C_ii = %v, C_ij = %v; want C(d−1,ℓ−1) = %v, C(d−2,ℓ−2) = %v", d, l, cii, cij, binom(d-1, l-1), binom(d-2, l-2))
		}
	}
}

func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}
