package space_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

func TestMulticlassMultilabelByEnumeration(t *testing.T) {
	for d := 1; d <= 10; d++ {
		for _, kind := range []string{"multiclass", "multilabel"} {
			s, err := space.New(kind, []int64{int64(d)})
			if err != nil {
				t.Fatal(err)
			}
			b := spacetest.CheckCounts(t, s, 1e-12)
			spacetest.CheckDecoder(t, s, b, 1000, uint64(d))
			if len(b.Ys) <= 256 {
				spacetest.CheckSampler(t, s, b, 40*len(b.Ys), uint64(100+d), 1e-4)
			}
		}
	}
}

func TestLargeCountsStayFinite(t *testing.T) {
	s, err := space.NewMultilabel(2000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.LogCount(), 2000*math.Ln2; math.Abs(got-want) > 1e-9 {
		t.Errorf("Multilabel(2000).LogCount() = %v, want %v", got, want)
	}
	r := rand.New(rand.NewPCG(3, 4))
	y := make([]int64, 2000)
	var ones int64
	const n = 200
	for i := 0; i < n; i++ {
		s.Sample(r, y)
		for _, v := range y {
			ones += v
		}
	}
	// 400,000 fair coins: the frequency of ones is 0.5 ± 0.0008 (one sd); allow 5 sd.
	if f := float64(ones) / (n * 2000); math.Abs(f-0.5) > 0.004 {
		t.Errorf("Multilabel(2000) sampler: frequency of ones %.4f, want 0.5", f)
	}
}

func TestNewRejectsBadParameters(t *testing.T) {
	cases := []struct {
		kind   string
		params []int64
		want   string
	}{
		{"multiclass", []int64{0}, "n_classes ≥ 1"},
		{"multilabel", []int64{-3}, "n_labels ≥ 1, got -3"},
		{"tournaments", []int64{-1 << 63}, "n_items ≥ 2, got -9223372036854775808"},
		{"permutations", []int64{-5, 1}, "n_labels ≥ 2, got -5"},
		{"multilabel", []int64{1, 2}, "takes 1 parameter"},
		{"nosuchspace", []int64{3}, "unknown kind"},
	}
	for _, c := range cases {
		_, err := space.New(c.kind, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %v) error = %v, want it to mention %q", c.kind, c.params, err, c.want)
		}
	}
}

func TestValidateNamedRowsWordsEveryRowError(t *testing.T) {
	s, _ := space.NewMultilabel(3)
	bad := []int64{0, 1, 0, 1, 2, 0}
	cases := []struct {
		name  string
		err   error
		exact string
	}{
		{"unnamed", space.ValidateRows(s, bad, 2), "row 1: label 1 has value 2, want 0 or 1"},
		{"targets", space.ValidateTargets(s, bad, 2), "y: row 1: label 1 has value 2, want 0 or 1"},
		{"named, counted from 40", space.ValidateNamedRows(s, bad, 2, 40, "Y_true"), "Y_true: row 41: label 1 has value 2, want 0 or 1"},
		{"short, unnamed", space.ValidateRows(s, bad[:5], 2), "structures: expected 2×3 values, got 5"},
		{"short, named", space.ValidateNamedRows(s, bad[:5], 2, 0, "y"), "y: expected 2×3 values, got 5"},
		{"valid", space.ValidateNamedRows(s, bad[:3], 1, 7, "y"), ""},
	}
	for _, c := range cases {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.exact {
			t.Errorf("%s: error %q, want %q", c.name, got, c.exact)
		}
	}
}

func TestValidateRowsNamesTheRow(t *testing.T) {
	s, _ := space.NewMultilabel(3)
	err := space.ValidateRows(s, []int64{0, 1, 0, 1, 2, 0}, 2)
	if err == nil || !strings.Contains(err.Error(), "row 1") || !strings.Contains(err.Error(), "label 1") {
		t.Fatalf("ValidateRows error = %v, want it to name row 1, label 1", err)
	}
	c, _ := space.NewMulticlass(4)
	if err := space.ValidateRows(c, []int64{3, 4}, 2); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Fatalf("ValidateRows error = %v, want row 1", err)
	}
}
