package prob

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The spaces marked space.ScaleExactPartition keep their exact marginals at every scale of the
// scores up to 10³⁰⁰ (checked against the brute force, whose sums are relative to the largest
// structure's score); the others stay within 10⁻⁵ of it up to exactScoreLimit, the largest ‖u‖₁
// a prediction accepts. Beyond it they do not: Permutations(5) was off by 0.06 at ‖u‖₁ ≈ 10¹³,
// KSubsets(7, 3) returned infinite marginals from 10¹⁹.
func TestExactMarginalsAtLargeScores(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	spaces := append(closedFormSpaces(t), mustSpace(t, "dag_paths", 0, 5, 0, 1, 0, 1, 0, 2, 1, 2, 2, 0, 3))
	var marked []string
	for _, sp := range spaces {
		name := fmt.Sprintf("%s%v", sp.Kind(), sp.Params())
		d := sp.Dim()
		u0 := randomScores(r, d, 1)
		var l1 float64
		for _, v := range u0 {
			l1 += math.Abs(v)
		}
		scales := []float64{exactScoreLimit / l1}
		tol := 1e-5
		if scaleExact(sp) {
			marked = append(marked, sp.Kind())
			for e := 0; e <= 300; e += 7 {
				scales = append(scales, math.Pow(10, float64(e)))
			}
			tol = 1e-9
		}
		for _, s := range scales {
			u := scaled(u0, s)
			got, want := make([]float64, d), make([]float64, d)
			if _, ok := closedForm(sp, u, got); !ok {
				t.Fatalf("%s: no closed form", name)
			}
			if _, err := bruteForce(sp, u, want); err != nil {
				t.Fatal(err)
			}
			for j := range got {
				if !(math.Abs(got[j]-want[j]) <= tol) {
					t.Errorf("%s at scale %.3g: E[ψ_%d] = %v, brute force %v", name, s, j, got[j], want[j])
					break
				}
			}
		}
	}
	if len(marked) == 0 {
		t.Fatal("no space is marked scale-exact")
	}
}

// A prediction beyond exactScoreLimit is refused, naming the row, where its result would lose
// its precision: exact marginals of a space without space.ScaleExactPartition, and log p(y | x)
// on every space. Exact marginals of a marked space are still given.
func TestPredictionsRefuseScoresBeyondTheirPrecision(t *testing.T) {
	for _, c := range []struct {
		kind        string
		args        []int64
		marginalsOK bool
	}{{"permutations", []int64{5}, false}, {"ucycles", []int64{5}, false}, {"multilabel", []int64{4}, true}} {
		sp := mustSpace(t, c.kind, c.args...)
		d, w := sp.Dim(), sp.Width()
		coef := mat.NewDense(1, d, nil)
		for j := 0; j < d; j++ {
			coef.Set(0, j, float64(j%3)-1)
		}
		md := &Model{Space: sp, Coef: coef, NFeatures: 1, Inference: InferenceOptions{Method: InferExact}}
		ys := make([]int64, 2*w)
		sp.Sample(newRand(1, 2), ys[:w])
		sp.Sample(newRand(1, 3), ys[w:])
		small, large := []float64{1, 1e12}, []float64{1, 1e12}
		small[1] = 2
		if err := md.Marginals(small, 2, 1, 1, make([]float64, 2*d)); err != nil {
			t.Errorf("%s: marginals at small scores: %v", c.kind, err)
		}
		err := md.Marginals(large, 2, 1, 1, make([]float64, 2*d))
		if c.marginalsOK && err != nil {
			t.Errorf("%s: marginals at ‖u‖₁ ≈ 10¹²: %v", c.kind, err)
		}
		if !c.marginalsOK && (err == nil || !strings.Contains(err.Error(), "X row 1")) {
			t.Errorf("%s: marginals at ‖u‖₁ ≈ 10¹² = %v, want an error naming X row 1", c.kind, err)
		}
		err = md.ScoreSamples(large, 2, 1, ys, LogZOptions{}, make([]float64, 2))
		if err == nil || !strings.Contains(err.Error(), "X row 1") || !strings.Contains(err.Error(), "log p") {
			t.Errorf("%s: log p at ‖u‖₁ ≈ 10¹² = %v, want an error naming X row 1 and log p", c.kind, err)
		}
	}
}
