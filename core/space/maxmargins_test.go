package space_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// smallSpaces is a small instance of every space, enumerable.
func smallSpaces(t *testing.T) []space.Space {
	t.Helper()
	var out []space.Space
	for _, c := range []struct {
		kind   string
		params []int64
	}{
		{"multiclass", []int64{4}},
		{"multilabel", []int64{3}},
		{"ksubsets", []int64{5, 2}},
		{"ordinal", []int64{4}},
		{"hierarchy_paths", []int64{0, -1, 0, 0, 1, 1}},
		{"hierarchy_paths", []int64{1, -1, 0, 0, 1, 1}},
		{"subtrees", []int64{-1, 0, 0, 1, 1, 2}},
		{"dag_paths", []int64{0, 5, 0, 1, 0, 1, 0, 2, 1, 2, 2, 0, 3}},
		{"tournaments", []int64{4}},
		{"permutations", []int64{5}},
		{"dicycles", []int64{5}},
		{"ucycles", []int64{6}},
		{"cliques", []int64{4}},
	} {
		sp, err := space.New(c.kind, c.params)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return out
}

// The margins equal brute force over Y: the best score with ψ_j at its largest value minus the best
// with it at its smallest, ±Inf for constant coordinates; and every space's ψ has integer
// coordinates in [−1, 1], which the push of MaxMarginalMargins relies on.
func TestMaxMarginalMarginsEqualBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sp := range smallSpaces(t) {
		if sp.Guarantee() != 0 {
			continue
		}
		b := spacetest.Enumerate(t, sp)
		d := sp.Dim()
		for _, psi := range b.Psis {
			for j, v := range psi {
				if v != math.Trunc(v) || math.Abs(v) > 1 {
					t.Fatalf("%s%v: ψ_%d = %v is not an integer in [−1, 1]", sp.Kind(), sp.Params(), j, v)
				}
			}
		}
		const m = 4
		us := make([]float64, m*d)
		for i := range us {
			us[i] = r.NormFloat64()
		}
		for i := 0; i < d; i++ { // one row of huge scores, one of tiny ones
			us[2*d+i] *= 1e200
			us[3*d+i] *= 1e-200
		}
		got := make([]float64, m*d)
		if err := space.MaxMarginalMargins(sp, us, m, nil, got, nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			u := us[i*d : (i+1)*d]
			for j := 0; j < d; j++ {
				want := bruteMargin(b.Psis, u, j)
				g := got[i*d+j]
				if !(g == want || math.Abs(g-want) <= 1e-9*math.Max(1e-300, math.Max(math.Abs(want), maxAbs(u)))) {
					t.Errorf("%s%v row %d coordinate %d: margin %v, brute force %v", sp.Kind(), sp.Params(), i, j, g, want)
				}
			}
		}
	}
}

// With pins, the margins equal brute force over the structures that hold every pinned coordinate
// at its end (those of a structure y0 of the space, so that some do): the pinned entries of u
// ignored, ±Inf for a coordinate those structures hold at one value, among them the pinned ones.
func TestMaxMarginalMarginsPinnedEqualBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sp := range smallSpaces(t) {
		if sp.Guarantee() != 0 {
			continue
		}
		b := spacetest.Enumerate(t, sp)
		d := sp.Dim()
		lo, hi := make([]float64, d), make([]float64, d)
		for j := range lo {
			lo[j], hi[j] = math.Inf(1), math.Inf(-1)
			for _, psi := range b.Psis {
				lo[j], hi[j] = math.Min(lo[j], psi[j]), math.Max(hi[j], psi[j])
			}
		}
		for trial := 0; trial < 6; trial++ {
			y0 := b.Psis[r.IntN(len(b.Psis))]
			var pins []space.Pin
			for a, v := range y0 {
				if lo[a] < hi[a] && (v == lo[a] || v == hi[a]) && r.IntN(3) == 0 {
					pins = append(pins, space.Pin{A: a, Dir: map[bool]float64{true: 1, false: -1}[v == hi[a]]})
				}
			}
			var allowed [][]float64
			for _, psi := range b.Psis {
				ok := true
				for _, p := range pins {
					ok = ok && psi[p.A] == map[bool]float64{true: hi[p.A], false: lo[p.A]}[p.Dir > 0]
				}
				if ok {
					allowed = append(allowed, psi)
				}
			}
			u := make([]float64, d)
			for c := range u {
				u[c] = r.NormFloat64()
			}
			for _, p := range pins { // ignored, whatever they hold
				u[p.A] = -p.Dir * 1e6
			}
			got := make([]float64, d)
			if err := space.MaxMarginalMargins(sp, u, 1, pins, got, nil); err != nil {
				t.Fatal(err)
			}
			free := slices.Clone(u) // the scores brute force counts: the pinned ones are ignored
			for _, p := range pins {
				free[p.A] = 0
			}
			for j := 0; j < d; j++ {
				want := bruteMargin(allowed, free, j)
				if g := got[j]; !(g == want || math.Abs(g-want) <= 1e-9*math.Max(1, math.Abs(want))) {
					t.Errorf("%s%v pins %v coordinate %d: margin %v, brute force over %d allowed structures %v",
						sp.Kind(), sp.Params(), pins, j, g, len(allowed), want)
				}
			}
		}
	}
}

// bruteMargin is the margin of coordinate j over the structures psis by enumeration: the best
// score ⟨u, ψ⟩ with ψ_j at its largest value among them minus the best with it at its smallest,
// ±Inf when they all hold it at one value.
func bruteMargin(psis [][]float64, u []float64, j int) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, psi := range psis {
		lo, hi = math.Min(lo, psi[j]), math.Max(hi, psi[j])
	}
	if lo == hi {
		if hi > 0 {
			return math.Inf(1)
		}
		return math.Inf(-1)
	}
	bestHi, bestLo := math.Inf(-1), math.Inf(-1)
	for _, psi := range psis {
		var f float64
		for c := range u {
			f += u[c] * psi[c]
		}
		if psi[j] == hi {
			bestHi = math.Max(bestHi, f)
		}
		if psi[j] == lo {
			bestLo = math.Max(bestLo, f)
		}
	}
	return bestHi - bestLo
}

func maxAbs(u []float64) float64 {
	var m float64
	for _, v := range u {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// Approximate decoders are refused by name.
func TestMaxMarginalMarginsRefuseApproximateDecoders(t *testing.T) {
	sp, err := space.New("dicycles", []int64{40})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Guarantee() == 0 {
		t.Skip("DirectedCycles(40) decodes exactly")
	}
	err = space.MaxMarginalMargins(sp, make([]float64, sp.Dim()), 1, nil, make([]float64, sp.Dim()), nil)
	if err == nil || !strings.Contains(err.Error(), "exact decoder") {
		t.Fatalf("got %v", err)
	}
}

// Finite scores at the ends of float64 (alternating ±1e308) gave NaN margins: two sums of them
// overflowed and were subtracted. The margins are now those of the scaled row times its scale:
// finite or ±Inf with the sign of the decoded structure, never NaN, and for moderate rows equal
// to the direct ones up to rounding.
func TestMaxMarginalMarginsOfExtremeScores(t *testing.T) {
	for _, c := range []struct {
		kind string
		n    int64
	}{{"permutations", 6}, {"tournaments", 5}, {"multilabel", 5}} {
		sp, err := space.New(c.kind, []int64{c.n})
		if err != nil {
			t.Fatal(err)
		}
		d := sp.Dim()
		u := make([]float64, d)
		for a := range u {
			u[a] = 1e308
			if a%2 == 1 {
				u[a] = -1e308
			}
		}
		out := make([]float64, d)
		if err := space.MaxMarginalMargins(sp, u, 1, nil, out, nil); err != nil {
			t.Fatal(err)
		}
		y := make([]int64, sp.Width())
		psi := make([]float64, d)
		scaled := make([]float64, d) // decoding is scale-invariant, and a decoder's own sums of ±1e308 overflow
		for a, v := range u {
			scaled[a] = v / 1e308
		}
		sp.Decode(scaled, y)
		sp.Embed(y, psi)
		for j, v := range out {
			if math.IsNaN(v) || (v > 0) != (psi[j] > 0) && v != 0 {
				t.Errorf("%s: margin %d = %v for ψ_j = %v of the decoded structure", sp.Kind(), j, v, psi[j])
			}
		}
	}
}

// The dynamic programmes of the label, class and taxonomy spaces give the margins that 2·Dim()
// decodes give, on random trees and DAGs too large to enumerate, with ties among the scores and with pins
// taken from a random structure (so that some structure holds them).
func TestMaxMarginProgrammesEqualDecoding(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 60; trial++ {
		n := 1 + r.IntN(40)
		parent := make([]int64, n)
		parent[0] = -1
		for v := 1; v < n; v++ {
			parent[v] = int64(r.IntN(v))
		}
		dag := make([][]int, n) // each node below the root takes one to three earlier parents
		for v := 1; v < n; v++ {
			for range 1 + r.IntN(3) {
				if p := r.IntN(v); !slices.Contains(dag[v], p) {
					dag[v] = append(dag[v], p)
				}
			}
		}
		var spaces []space.Space
		for _, c := range []struct {
			kind   string
			params []int64
		}{
			{"dag_paths", append([]int64{0}, space.DAGParams(dag)...)},
			{"dag_paths", append([]int64{1}, space.DAGParams(dag)...)},
			{"multiclass", []int64{int64(n)}},
			{"multilabel", []int64{int64(n)}},
			{"subtrees", parent},
			{"hierarchy_paths", append([]int64{0}, parent...)},
			{"hierarchy_paths", append([]int64{1}, parent...)},
		} {
			sp, err := space.New(c.kind, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if !space.HasMaxMarginProgramme(sp) {
				t.Fatalf("%s has no dynamic programme", c.kind)
			}
			spaces = append(spaces, sp)
		}
		for _, sp := range spaces {
			// Several rows, so that one worker's scratch is reused from a row to the next.
			const rows = 3
			d := sp.Dim()
			us := make([]float64, rows*d)
			for c := range us {
				if trial%2 == 0 {
					us[c] = float64(r.IntN(3) - 1) // ties everywhere
				} else {
					us[c] = r.NormFloat64()
				}
			}
			var pins []space.Pin
			if trial%3 != 0 {
				y0, psi0 := make([]int64, sp.Width()), make([]float64, d)
				sp.Sample(r, y0)
				sp.Embed(y0, psi0)
				for a, v := range psi0 {
					if r.IntN(4) == 0 {
						pins = append(pins, space.Pin{A: a, Dir: 2*v - 1})
						for i := range rows {
							us[i*d+a] = 0
						}
					}
				}
			}
			got, want := make([]float64, rows*d), make([]float64, rows*d)
			if err := space.MaxMarginalMargins(sp, us, rows, pins, got, nil); err != nil {
				t.Fatal(err)
			}
			if err := space.MaxMarginalMarginsByDecoding(sp, us, rows, pins, want, nil); err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if !(got[j] == want[j] || math.Abs(got[j]-want[j]) <= 1e-12*float64(d)) {
					t.Fatalf("%s%v pins %v: row %d margin %d by the programme %v, by decoding %v", sp.Kind(), sp.Params(), pins, j/d, j%d, got[j], want[j])
				}
			}
		}
	}
}

// The margins of one input, by a space's dynamic programme and by 2·d decodes, on label sets and
// on random trees of d nodes (benchmarks/max_margins.py reports them).
func BenchmarkMaxMarginalMargins(b *testing.B) {
	for _, d := range []int{500, 2000} {
		r := rand.New(rand.NewPCG(1, uint64(d)))
		parent := make([]int64, d)
		parent[0] = -1
		for v := 1; v < d; v++ {
			parent[v] = int64(r.IntN(v))
		}
		for _, c := range []struct {
			kind   string
			params []int64
		}{
			{"multilabel", []int64{int64(d)}},
			{"hierarchy_paths", append([]int64{0}, parent...)},
			{"subtrees", parent},
		} {
			sp, err := space.New(c.kind, c.params)
			if err != nil {
				b.Fatal(err)
			}
			u, out := make([]float64, d), make([]float64, d)
			for i := range u {
				u[i] = r.NormFloat64()
			}
			for _, by := range []struct {
				name    string
				margins func(space.Space, []float64, int, []space.Pin, []float64, *cancel.Flag) error
			}{{"programme", space.MaxMarginalMargins}, {"decoding", space.MaxMarginalMarginsByDecoding}} {
				b.Run(fmt.Sprintf("%s/d=%d/%s", c.kind, d, by.name), func(b *testing.B) {
					for b.Loop() {
						if err := by.margins(sp, u, 1, nil, out, nil); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
