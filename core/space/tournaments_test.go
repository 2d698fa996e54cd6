package space_test

import (
	"math"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestTournamentsByEnumeration(t *testing.T) {
	for n := 2; n <= 5; n++ { // 3, 27, 729 and 59049 tournaments
		s, err := space.New("tournaments", []int64{int64(n)})
		if err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, s)
		b := spacetest.CheckCounts(t, s, 1e-12)
		trials := 1000
		if n == 5 {
			trials = 100 // each trial scans 59049 structures
		}
		spacetest.CheckDecoder(t, s, b, trials, uint64(n))
		if len(b.Ys) <= 729 {
			spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(700+n), 1e-4)
		}
	}
	s, _ := space.NewTournaments(6)
	if err := s.Enumerate(func([]int64) bool { return true }); err != space.ErrTooLarge {
		t.Errorf("Enumerate of 3^15 tournaments: %v, want ErrTooLarge", err)
	}
}

func TestTournamentsRejects(t *testing.T) {
	for _, c := range []struct {
		params []int64
		want   string
	}{
		{[]int64{1}, "n_items ≥ 2"},
		{[]int64{-2}, "n_items ≥ 2, got -2"},
		{[]int64{}, "takes 1 parameter"},
	} {
		if _, err := space.New("tournaments", c.params); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(tournaments, %v) error = %v, want it to mention %q", c.params, err, c.want)
		}
	}
	s, _ := space.NewTournaments(4) // pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
	for _, c := range []struct {
		y    []int64
		want string
	}{
		{[]int64{0, 0, 2, 0, 0, 0}, "value 2 at pair (0,3), want −1, 0 or 1"},
		{[]int64{0, 0, 0, 0, 0, -3}, "value -3 at pair (2,3)"},
		{[]int64{0, 0, 0, 0, 0}, "has 6 pair entries, got 5"},
	} {
		if err := s.Validate(c.y); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want it to mention %q", c.y, err, c.want)
		}
	}
}

// Tournaments(300): d = 44850, covariance as an O(1)-memory operator, sampler marginals.
func TestTournamentsLarge(t *testing.T) {
	s, err := space.NewTournaments(300)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dim() != 44850 {
		t.Fatalf("Dim = %d", s.Dim())
	}
	if got, want := s.LogCount(), 44850*math.Log(3); math.Abs(got-want) > 1e-9*want {
		t.Errorf("LogCount = %v, want %v", got, want)
	}
	checkLargeFinite(t, s)
	checkLinearMoments(t, s, 1000, 71, testDirections(s.Dim(), []int{0, 44849}, 2, 72))
}

// The thesis (section "Posets and Partial Tournaments") prints, with η = N(N−1)/2 and ordered
// pairs, C̃_(uv),(u'v') = +2·3^{η−2} if u = u' xor v = v' and −2·3^{η−2} if u = v' xor v = u'
// (copied from the permutation case). Different pairs of a partial tournament are independent and
// centred, so these entries are 0; only C̃_(uv),(uv) = 2·3^{η−1} and C̃_(uv),(vu) = −2·3^{η−1} are
// right.
func TestThesisTournamentOffDiagonalC(t *testing.T) {
	const n = 4
	s, _ := space.NewTournaments(n)
	b := spacetest.Enumerate(t, s)
	eta := n * (n - 1) / 2
	d := s.Dim()
	c := make([][]float64, d)
	for i := range c {
		c[i] = make([]float64, d)
	}
	for _, psi := range b.Psis {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				c[i][j] += psi[i] * psi[j]
			}
		}
	}
	// ψ_(uv) for an ordered pair from the unordered row: +ψ_{u<v}, and −ψ for (v,u).
	pair := map[[2]int]int{}
	k := 0
	for u := 0; u < n; u++ {
		for v := u + 1; v < n; v++ {
			pair[[2]int{u, v}] = k
			k++
		}
	}
	ordered := func(u, v int) (int, float64) {
		if u < v {
			return pair[[2]int{u, v}], 1
		}
		return pair[[2]int{v, u}], -1
	}
	cOrd := func(u, v, u2, v2 int) float64 {
		i, si := ordered(u, v)
		j, sj := ordered(u2, v2)
		return si * sj * c[i][j]
	}
	p1, p2 := 2*math.Pow(3, float64(eta-1)), 2*math.Pow(3, float64(eta-2))
	if got := cOrd(0, 1, 0, 1); got != p1 {
		t.Errorf("C̃_(01),(01) = %v, printed %v should be right", got, p1)
	}
	if got := cOrd(0, 1, 1, 0); got != -p1 {
		t.Errorf("C̃_(01),(10) = %v, printed %v should be right", got, -p1)
	}
	for _, q := range [][4]int{{0, 1, 0, 2}, {0, 1, 2, 1}, {0, 1, 2, 0}, {0, 1, 1, 3}} {
		got := cOrd(q[0], q[1], q[2], q[3])
		if got != 0 {
			t.Errorf("C̃_(%d%d),(%d%d) = %v, want 0", q[0], q[1], q[2], q[3], got)
		}
		if got == p2 || got == -p2 {
			t.Errorf("C̃_(%d%d),(%d%d) agrees with the printed ±2·3^(η−2)", q[0], q[1], q[2], q[3])
		}
	}
}
