package prob

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
)

// TestConstantDirectionsAreConstantOverY: what constantDirections removes from a vector r changes
// ⟨r, ψ(y)⟩ by the same amount for every structure y (enumerated), it removes everything along
// those directions (idempotent), and it finds the kernels the closed forms have: span(1) for
// multiclass and k-subsets, the n − 1 potentials of directed cycles, none for multilabel.
func TestConstantDirectionsAreConstantOverY(t *testing.T) {
	cases := []struct {
		sp      space.Space
		removes bool
	}{
		{mustSpace(t, "multiclass", 4), true},
		{mustSpace(t, "ksubsets", 5, 2), true},
		{mustSpace(t, "dicycles", 5), true},
		{mustSpace(t, "multilabel", 4), false},
		{mustSpace(t, "permutations", 4), false},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range cases {
		name := c.sp.Kind()
		drop := constantDirections(c.sp)
		if (drop != nil) != c.removes {
			t.Fatalf("%s: constantDirections found a kernel: %v, want %v", name, drop != nil, c.removes)
		}
		if drop == nil {
			continue
		}
		b := spacetest.Enumerate(t, c.sp)
		d := c.sp.Dim()
		v := make([]float64, d)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		kept := append([]float64(nil), v...)
		drop(kept)
		var removed float64
		for i := range v {
			removed += (v[i] - kept[i]) * (v[i] - kept[i])
		}
		if removed < 1e-6 {
			t.Errorf("%s: removed nothing from a random vector (‖Δ‖² = %g)", name, removed)
		}
		first := dot(subVec(v, kept), b.Psis[0])
		for k, psi := range b.Psis {
			if got := dot(subVec(v, kept), psi); math.Abs(got-first) > 1e-12 {
				t.Fatalf("%s: the removed part scores structure %d %g and structure 0 %g", name, k, got, first)
			}
		}
		again := append([]float64(nil), kept...)
		drop(again)
		for i := range again {
			if math.Abs(again[i]-kept[i]) > 1e-14 {
				t.Fatalf("%s: a second projection moved coordinate %d by %g", name, i, again[i]-kept[i])
			}
		}
	}
}

func subVec(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// TestAdamLeavesNothingAlongConstantDirections: Adam's coordinate-wise steps turned gradients
// orthogonal to the constant directions of directed cycles into steps along them (probe X: 0.09 of
// a sampled fit's intercept; the exact L-BFGS fit leaves 1e-16). Every row of the fitted W is
// now orthogonal to them, with exact and with sampled inference, and a warm start from a W with
// components there loses them.
func TestAdamLeavesNothingAlongConstantDirections(t *testing.T) {
	sp := mustSpace(t, "dicycles", 5)
	const m, n = 80, 2
	X, ys := syntheticData(t, sp, m, n, 1, 31)
	drop := constantDirections(sp)
	along := func(W []float64, d int) float64 {
		var worst float64
		for i := 0; i+d <= len(W); i += d {
			row := append([]float64(nil), W[i:i+d]...)
			kept := append([]float64(nil), row...)
			drop(kept)
			for a := range row {
				worst = math.Max(worst, math.Abs(row[a]-kept[a]))
			}
		}
		return worst
	}
	d := sp.Dim()
	for _, inf := range []InferenceOptions{{Method: InferExact}, {Method: InferSampled, Samples: 20}} {
		md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 0.05, Tol: 1e-8, MaxIter: 150, Seed: 2,
			Intercept: true, Solver: SolverAdam, Inference: inf})
		if err != nil {
			t.Fatal(err)
		}
		if a := along(md.Coef.RawMatrix().Data, d); a > 1e-12 {
			t.Errorf("%v: W has %g along the constant directions", inf.Method, a)
		}
	}
	init, err := NewModel(sp, make([]float64, (n+1)*d), n, true)
	if err != nil {
		t.Fatal(err)
	}
	row := init.Coef.RawRowView(n)
	for a := range row {
		row[a] = float64(a%3) - 1 // has components along the potentials
	}
	if along(row, d) < 0.1 {
		t.Fatal("the warm start has nothing to lose")
	}
	md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 0.05, Tol: 1e-10, MaxIter: 200, Intercept: true, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	if a := along(md.Coef.RawMatrix().Data, d); a > 1e-10 {
		t.Errorf("L-BFGS from the warm start kept %g along the constant directions", a)
	}
}
