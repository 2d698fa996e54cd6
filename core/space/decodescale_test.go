package space

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDecodeRowsIsScaleInvariant decodes the same scores at the scale of the largest and of the
// smallest normal float64 as at scale 1: argmax_y ⟨u, ψ(y)⟩ does not depend on a positive scale,
// but the decoders' sums overflowed near 1e307 and returned structures that were not optimal.
func TestDecodeRowsIsScaleInvariant(t *testing.T) {
	spaces := []struct {
		kind   string
		params []int64
	}{
		{"multiclass", []int64{5}},
		{"multilabel", []int64{6}},
		{"ksubsets", []int64{6, 3}},
		{"ordinal", []int64{5}},
		{"permutations", []int64{6}},
		{"tournaments", []int64{5}},
		{"dicycles", []int64{6}},
		{"ucycles", []int64{6}},
		{"cliques", []int64{6}},
		{"subtrees", []int64{-1, 0, 0, 1, 1, 2, 2}},
		{"hierarchy_paths", []int64{0, -1, 0, 0, 1, 1, 2}},
	}
	r := rand.New(rand.NewPCG(3, 5))
	for _, tc := range spaces {
		s, err := New(tc.kind, tc.params)
		if err != nil {
			t.Fatalf("%s%v: %v", tc.kind, tc.params, err)
		}
		d, w := s.Dim(), s.Width()
		const rows = 50
		u := make([]float64, rows*d)
		for i := range u {
			u[i] = r.NormFloat64()
		}
		want := make([]int64, rows*w)
		_ = DecodeRows(s, u, rows, want, nil)
		for _, scale := range []float64{1e307, 0x1p-1000, 1e-300} {
			scaled := make([]float64, len(u))
			for i, v := range u {
				scaled[i] = v * scale
			}
			got := make([]int64, rows*w)
			_ = DecodeRows(s, scaled, rows, got, nil)
			psi := make([]float64, d)
			for i := 0; i < rows; i++ {
				score := func(y []int64) float64 {
					s.Embed(y, psi)
					var f float64
					for a, p := range psi {
						f += u[i*d+a] * p
					}
					return f
				}
				fw, fg := score(want[i*w:(i+1)*w]), score(got[i*w:(i+1)*w])
				if math.Abs(fw-fg) > 1e-9*math.Max(1, math.Abs(fw)) {
					t.Fatalf("%s%v, scores ×%g, row %d: decoded %v (score %.12g), at scale 1 %v (score %.12g)",
						tc.kind, tc.params, scale, i, got[i*w:(i+1)*w], fg, want[i*w:(i+1)*w], fw)
				}
			}
		}
	}
}

// TestDecodeRowsKeepsTinyScoresBesideHugeOnes decodes rows that mix a score far above the safe
// range with scores 1e-230 or 1e-300 in size: scaling the row until its largest entry was near 1
// flushed the small ones to zero, and the exact decoders broke the ties this made at random
// (Multilabel(2) decoded [1e-300, −1e308] as [0, 0], probe EV). The row is now scaled only to the
// top of the safe range, and an entry that still underflows keeps its sign.
func TestDecodeRowsKeepsTinyScoresBesideHugeOnes(t *testing.T) {
	for _, c := range []struct {
		kind   string
		params []int64
		u      []float64
		want   []int64
	}{
		{"multilabel", []int64{2}, []float64{1e-300, -1e308}, []int64{1, 0}},
		{"multilabel", []int64{2}, []float64{-1e-300, 1e308}, []int64{0, 1}},
		{"multilabel", []int64{3}, []float64{1e-230, -1e100, -3e-231}, []int64{1, 0, 0}},
		{"ksubsets", []int64{3, 2}, []float64{1e300, -2e-230, 2e-230}, []int64{1, 0, 1}},
	} {
		s, err := New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int64, s.Width())
		if err := DecodeRows(s, c.u, 1, got, nil); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s%v: scores %v decoded as %v, want %v", c.kind, c.params, c.u, got, c.want)
		}
	}
}

// scaledScores rescales a row by its largest magnitude, and leaves rows alone whose largest
// magnitude is zero, infinite or NaN, wherever the NaN lies.
func TestScaledScoresFindsTheLargestMagnitude(t *testing.T) {
	for _, c := range []struct {
		u      []float64
		scaled bool
	}{
		{[]float64{1e300, -1e-10, 3}, true},
		{[]float64{-3, -1e300, 2}, true}, // the largest magnitude negative
		{[]float64{1e-300, -2e-300}, true},
		{[]float64{1, 2, -3}, false},
		{[]float64{0, 0}, false},
		{[]float64{1e300, math.NaN()}, false},
		{[]float64{math.NaN(), 1e300}, false},
		{[]float64{1e300, math.Inf(-1)}, false},
	} {
		scratch := make([]float64, len(c.u))
		got := scaledScores(c.u, scratch)
		if scaled := &got[0] == &scratch[0]; scaled != c.scaled {
			t.Errorf("scaledScores(%v): rescaled %v, want %v", c.u, scaled, c.scaled)
		}
		if c.scaled {
			top := 0.0
			for _, v := range got {
				top = math.Max(top, math.Abs(v))
			}
			if _, exp := math.Frexp(top); exp < -scaleExp || exp > scaleExp {
				t.Errorf("scaledScores(%v): largest magnitude %v still outside the safe range", c.u, top)
			}
		}
	}
}
