package kernel

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestGramMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	a, b := mat.NewDense(5, 3, nil), mat.NewDense(4, 3, nil)
	for _, m := range []*mat.Dense{a, b} {
		rows, cols := m.Dims()
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				m.Set(i, j, r.NormFloat64())
			}
		}
	}
	dot := func(i, j int) float64 { return mat.Dot(a.RowView(i), b.RowView(j)) }
	dist := func(i, j int) float64 {
		var s float64
		for c := 0; c < 3; c++ {
			s += (a.At(i, c) - b.At(j, c)) * (a.At(i, c) - b.At(j, c))
		}
		return s
	}
	cases := []struct {
		k    Kernel
		want func(i, j int) float64
	}{
		{Kernel{Kind: Linear}, dot},
		{Kernel{Kind: Poly, Gamma: 0.5, Degree: 3, Coef0: 1}, func(i, j int) float64 { return math.Pow(0.5*dot(i, j)+1, 3) }},
		{Kernel{Kind: RBF, Gamma: 0.3}, func(i, j int) float64 { return math.Exp(-0.3 * dist(i, j)) }},
	}
	for _, c := range cases {
		var g mat.Dense
		g.ReuseAs(5, 4)
		c.k.Gram(&g, a, b)
		for i := 0; i < 5; i++ {
			for j := 0; j < 4; j++ {
				if got, want := g.At(i, j), c.want(i, j); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("%v: K[%d,%d] = %v, want %v", c.k.Kind, i, j, got, want)
				}
			}
		}
	}
}

func TestValidateAndParse(t *testing.T) {
	bad := []Kernel{{Kind: RBF, Gamma: 0}, {Kind: RBF, Gamma: math.NaN()}, {Kind: Poly, Gamma: 1, Degree: 0}, {Kind: Poly, Gamma: 1, Degree: 2, Coef0: math.Inf(1)}, {Kind: Kind(9)}}
	for _, k := range bad {
		if k.Validate() == nil {
			t.Errorf("%+v: Validate accepted it", k)
		}
	}
	for _, name := range []string{"linear", "poly", "rbf", "precomputed"} {
		k, err := ParseKind(name)
		if err != nil || k.String() != name {
			t.Errorf("ParseKind(%q) = %v, %v", name, k, err)
		}
	}
	if _, err := ParseKind("sigmoid"); err == nil {
		t.Error("ParseKind(sigmoid) accepted")
	}
}

func TestSame(t *testing.T) {
	rbf := Kernel{Kind: RBF, Gamma: 0.5, Degree: 3, Coef0: 1}
	poly := Kernel{Kind: Poly, Gamma: 0.5, Degree: 3, Coef0: 1}
	for _, tc := range []struct {
		name string
		a, b Kernel
		want bool
	}{
		{"rbf, another degree and coef0", rbf, Kernel{Kind: RBF, Gamma: 0.5, Degree: 5, Coef0: 2}, true},
		{"rbf, another gamma", rbf, Kernel{Kind: RBF, Gamma: 0.25, Degree: 3, Coef0: 1}, false},
		{"poly, another degree", poly, Kernel{Kind: Poly, Gamma: 0.5, Degree: 5, Coef0: 1}, false},
		{"poly, another coef0", poly, Kernel{Kind: Poly, Gamma: 0.5, Degree: 3, Coef0: 2}, false},
		{"poly itself", poly, poly, true},
		{"linear, other parameters", Kernel{Kind: Linear, Gamma: 1}, Kernel{Kind: Linear, Degree: 7}, true},
		{"rbf and poly", rbf, poly, false},
	} {
		if got := tc.a.Same(tc.b); got != tc.want || tc.b.Same(tc.a) != tc.want {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// powInt agrees with math.Pow to the rounding of its repeated squaring (about 2·log₂ n units in the
// last place), keeps the sign of a negative base and overflows to ±Inf and underflows to 0 as
// math.Pow does.
func TestPowInt(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 40; n++ {
		bound := float64(2*bits.Len(uint(n))+1) * 0x1p-52
		for range 200 {
			x := (r.Float64()*4 - 2) * math.Pow(10, float64(r.IntN(7)-3))
			got, want := powInt(x, n), math.Pow(x, float64(n))
			if math.IsInf(want, 0) || want == 0 {
				if got != want {
					t.Fatalf("powInt(%v, %d) = %v, want %v", x, n, got, want)
				}
				continue
			}
			if rel := math.Abs(got-want) / math.Abs(want); rel > bound {
				t.Fatalf("powInt(%v, %d) = %v, math.Pow %v: relative difference %.3g above %.3g", x, n, got, want, rel, bound)
			}
		}
	}
	for _, c := range []struct {
		x    float64
		n    int
		want float64
	}{{0, 3, 0}, {-2, 3, -8}, {-2, 4, 16}, {1e200, 2, math.Inf(1)}, {-1e200, 3, math.Inf(-1)}, {1e-200, 2, 0}, {math.NaN(), 2, math.NaN()}, {3, 1, 3}} {
		got := powInt(c.x, c.n)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("powInt(%v, %d) = %v, want %v", c.x, c.n, got, c.want)
		}
	}
}
