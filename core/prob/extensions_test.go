package prob

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSamplerAuto: on a space without an exact sampler of scores (directed cycles beyond 14
// vertices), SamplerAuto draws exact CFTP samples where the proven expected cost is small
// (‖u‖ = 0.1) and chain samples where CFTP would be hopeless (‖u‖ = 20); on rankings up to 16
// labels and cycles up to 14 vertices it draws them exactly by the subset programmes at any
// scale; the samples are valid either way.
func TestSamplerAuto(t *testing.T) {
	for _, c := range []struct {
		kind  string
		n     int64
		norm  float64
		exact bool
	}{{"dicycles", 15, 0.1, true}, {"dicycles", 15, 20, false}, {"permutations", 6, 20, true}, {"dicycles", 6, 20, true}} {
		sp := mustSpace(t, c.kind, c.n)
		u := randomScores(rand.New(rand.NewPCG(5, 6)), sp.Dim(), c.norm)
		out := make([]int64, 50*sp.Width())
		st, err := Sample(sp, u, 50, 1, SampleOptions{Sampler: SamplerAuto}, out)
		if err != nil {
			t.Fatal(err)
		}
		if st.Exact != c.exact {
			t.Errorf("%s, ‖u‖ = %g: exact samples %v, want %v", c.kind, c.norm, st.Exact, c.exact)
		}
		for i := 0; i < 50; i++ {
			if err := sp.Validate(out[i*sp.Width() : (i+1)*sp.Width()]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if k, err := ParseSamplerKind("auto"); err != nil || k != SamplerAuto || k.String() != "auto" {
		t.Errorf("ParseSamplerKind(auto) = %v, %v", k, err)
	}
}

// TestModelLogPartitionTaylorOutOfRange: Model.LogPartition keeps Taylor estimates outside the
// proven range, flagged invalid with their bound, instead of failing the call.
func TestModelLogPartitionTaylorOutOfRange(t *testing.T) {
	sp := mustSpace(t, "multilabel", 3)
	md, err := NewModel(sp, []float64{3, 3, 3, 0.01, 0.01, 0.01}, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 2)
	res, err := md.LogPartition([]float64{0, 1}, 2, 1, LogZOptions{Method: LogZTaylor}, out)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Valid || res[1].Valid || !(res[1].Bound > 0.307) || math.IsNaN(out[1]) || res[1].Method != LogZTaylor {
		t.Errorf("results %+v, %+v", res[0], res[1])
	}
}

// TestWeightsAreRepetitions: the data term is the weighted mean, so integer weights fit the same
// model as repeated rows and zero weights the same as removed rows (to the solver's tolerance);
// weights summing to zero are refused.
func TestWeightsAreRepetitions(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	const m, n = 12, 2
	X, ys := syntheticData(t, sp, m, n, 1, 17)
	w := []float64{2, 0, 1, 3, 1, 0, 1, 2, 1, 1, 0, 1}
	var Xr []float64
	var yr []int64
	for i, k := range w {
		for c := 0; c < int(k); c++ {
			Xr = append(Xr, X[i*n:(i+1)*n]...)
			yr = append(yr, ys[i])
		}
	}
	opt := Options{Alpha: 0.05, Intercept: true, Tol: 1e-12, MaxIter: 500}
	weighted, err := Fit(sp, X, m, n, ys, w, opt)
	if err != nil {
		t.Fatal(err)
	}
	repeated, err := Fit(sp, Xr, len(yr), n, yr, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rd := relDiff(weighted.Coef, repeated.Coef); rd > 1e-9 {
		t.Errorf("weighted and repeated fits differ by %.2g (relative)", rd)
	}
	if _, err := NewProblem(sp, X, m, n, ys, make([]float64, m), 1, false); err == nil {
		t.Error("weights summing to zero accepted")
	}
}
