package space

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
)

// Every space obeys one size rule (d and width ≤ MaxDim), named by its Python parameter; Cliques
// and Tournaments of 10⁶ used to be accepted while Permutations stopped at 65,536.
func TestSizeRuleIsTheSameForEverySpace(t *testing.T) {
	for _, c := range []struct {
		kind   string
		params []int64
		param  string // "" when accepted
	}{
		{"permutations", []int64{65536}, ""},
		{"permutations", []int64{65537}, "n_labels"},
		{"dicycles", []int64{65537}, "n_vertices"},
		{"ucycles", []int64{65537}, "n_vertices"},
		{"cliques", []int64{65536}, ""},
		{"cliques", []int64{1_000_000}, "n_vertices"},
		{"cliques", []int64{1 << 62}, "n_vertices"},
		{"tournaments", []int64{65536}, ""},
		{"tournaments", []int64{1_000_000}, "n_items"},
		{"multilabel", []int64{MaxDim}, ""},
		{"multilabel", []int64{MaxDim + 1}, "n_labels"},
		{"multiclass", []int64{1 << 40}, "n_classes"},
		{"ordinal", []int64{MaxDim + 1}, ""}, // d = n − 1
		{"ordinal", []int64{MaxDim + 2}, "n_levels"},
		{"ksubsets", []int64{1 << 40, 2}, "n_labels"},
		{"permutations", []int64{1<<63 - 1}, "n_labels"},
	} {
		_, err := New(c.kind, c.params)
		if c.param == "" {
			if err != nil {
				t.Errorf("New(%s, %v) = %v, want accepted", c.kind, c.params, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.param+" = ") || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("New(%s, %v) = %v, want an out-of-range error naming %s", c.kind, c.params, err, c.param)
		}
	}
}

func TestCheckScoresAndDecodeFollowTheBudget(t *testing.T) {
	defer func() { _ = budget.Set(0) }()
	sp, err := New("cliques", []int64{1000}) // d = 499,500
	if err != nil {
		t.Fatal(err)
	}
	if err := budget.Set(100 << 20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"scores of 10 rows (40 MB)", CheckScores(sp, 10), true},
		{"scores of 100 rows (400 MB)", CheckScores(sp, 100), false},
		{"decoding 1 row (16 MB)", CheckDecode(sp, 1), true},
		{"decoding 2⁴⁰ rows, one per thread at a time", CheckDecode(sp, 1<<40), parallel.Threads() <= 8},
	} {
		if (c.err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, c.err, c.ok)
		}
		if c.err != nil && (!budget.Is(c.err) || !strings.Contains(c.err.Error(), "d = 499500")) {
			t.Errorf("%s: %v, want a budget error naming d", c.name, c.err)
		}
	}
}

// The exact decoders' dynamic programmes count: a demanded exact decoding of 18 vertices holds
// 18·2¹⁸ floats (38 MB) per thread.
func TestCheckDecodeCountsExactTables(t *testing.T) {
	defer func() { _ = budget.Set(0) }()
	if err := budget.Set(30 << 20); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind   string
		params []int64
		ok     bool
	}{
		{"dicycles", []int64{18, int64(DecoderExact)}, false},
		{"dicycles", []int64{18}, true}, // approximate beyond 14 vertices
		{"ucycles", []int64{18, int64(DecoderExact)}, false},
		{"permutations", []int64{22, int64(DecoderExact)}, false},
		{"permutations", []int64{16}, true},
	} {
		sp, err := New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDecode(sp, 1); (err == nil) != c.ok {
			t.Errorf("CheckDecode(%s %v) = %v, want ok=%v", c.kind, c.params, err, c.ok)
		}
	}
}

// pairDim is exact wherever n(n−1)/2 fits in int64, although n(n−1) itself may not: the
// error for Permutations(2³²−1) said d was "more than 2⁶³" where d = 2⁶³ − 3·2³¹ + 1.
func TestPairDimAtTheInt64Edge(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64
	}{
		{0, 0}, {1, 0}, {2, 1}, {5, 10}, {6, 15},
		{1<<32 - 1, 1<<63 - 3<<31 + 1},
		{1 << 32, 1<<63 - 1<<31},
		{1<<32 + 1, budget.Unbounded},
	} {
		if got := pairDim(c.n); got != c.want {
			t.Errorf("pairDim(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// A size of exactly 2⁶³ − 1 (Multiclass(2⁶³ − 1)) is int64's largest value, the one that also
// stands for an overflow: the message said "more than 2⁶³" of it.
func TestSizeStringAtTheInt64Edge(t *testing.T) {
	if got := sizeString(budget.Unbounded); got != "(2⁶³ − 1 or more)" {
		t.Errorf("sizeString(2⁶³ − 1) = %q", got)
	}
	if got := sizeString(1 << 62); got != "4611686018427387904" {
		t.Errorf("sizeString(2⁶²) = %q", got)
	}
}
