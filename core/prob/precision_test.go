package prob

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/space/spacetest"
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
			if _, err := bruteForce(sp, u, want, nil); err != nil {
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

// TestSummedScoresAreNotScaleExact records why ordinal levels, hierarchy and DAG paths and subtrees
// are not marked space.ScaleExactPartition (they were): a structure's score there is a sum of
// scores, and a sum whose large terms cancel loses what the small ones add, about ‖u‖₁·2⁻⁵². With
// scores 1 and ±10¹⁷ each closed form put E[ψ] 0.2–0.3 away from the enumeration in exact
// arithmetic (the review of the exact samplers found it on subtrees). Only spaces whose structures
// score one coordinate each (multiclass, multilabel, partial tournaments) keep the mark. The brute
// force (Cliques) sums each structure's score in float64 too: with scores near ±2⁵³ its E[ψ] was
// 0.4 off and decision="hamming" chose a structure of three times the least expected loss, with
// no error (probe EB), where the others refused beyond exactScoreLimit.
func TestSummedScoresAreNotScaleExact(t *testing.T) {
	for _, c := range []struct {
		sp space.Space
		u  []float64
	}{
		{mustSpace(t, "ordinal", 4), []float64{1, -1e17, 1e17}},
		{mustSpace(t, "hierarchy_paths", 0, -1, 0, 1), []float64{1, -1e17, 1e17}},
		{mustSpace(t, "dag_paths", 0, 3, 0, 1, 0, 1, 1), []float64{1, -1e17, 1e17}},
		{mustSpace(t, "subtrees", -1, 0, 1, 1), []float64{0, -1e17, 1e17, 1}},
		{mustSpace(t, "cliques", 3), []float64{1 << 53, 1<<53 + 2, -(1<<53 - 2)}},
	} {
		name := fmt.Sprintf("%s%v", c.sp.Kind(), c.sp.Params())
		if scaleExact(c.sp) {
			t.Errorf("%s is marked scale-exact", name)
		}
		got := make([]float64, c.sp.Dim())
		if _, ok := closedForm(c.sp, c.u, got); !ok {
			if _, err := bruteForce(c.sp, c.u, got, nil); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		want := exactArithmeticMarginals(t, c.sp, c.u)
		var worst float64
		for j := range got {
			worst = math.Max(worst, math.Abs(got[j]-want[j]))
		}
		if worst < 0.1 {
			t.Errorf("%s: the closed form is within %.3g of exact arithmetic: the sums no longer cancel, and the mark could come back", name, worst)
		}
	}
}

// exactArithmeticMarginals is E[ψ] by enumeration, each structure's score summed in 4096-bit
// arithmetic (exact for the scores above) and only its difference from the best one rounded.
func exactArithmeticMarginals(t *testing.T, sp space.Space, u []float64) []float64 {
	t.Helper()
	b := spacetest.Enumerate(t, sp)
	scores := make([]*big.Float, len(b.Psis))
	top := new(big.Float).SetPrec(4096).SetInf(true)
	for k, psi := range b.Psis {
		f := new(big.Float).SetPrec(4096)
		for j, v := range psi {
			f.Add(f, new(big.Float).SetPrec(4096).Mul(big.NewFloat(u[j]), big.NewFloat(v)))
		}
		scores[k] = f
		if f.Cmp(top) > 0 {
			top = f
		}
	}
	mean := make([]float64, sp.Dim())
	var z float64
	for k, psi := range b.Psis {
		diff, _ := new(big.Float).SetPrec(4096).Sub(scores[k], top).Float64()
		w := math.Exp(diff)
		z += w
		for j, v := range psi {
			mean[j] += w * v
		}
	}
	for j := range mean {
		mean[j] /= z
	}
	return mean
}

// A prediction beyond exactScoreLimit is refused, naming the row, where its result would lose
// its precision: exact marginals of a space without space.ScaleExactPartition, and log p(y | x)
// on every space. Exact marginals of a marked space are still given.
func TestPredictionsRefuseScoresBeyondTheirPrecision(t *testing.T) {
	for _, c := range []struct {
		kind        string
		args        []int64
		marginalsOK bool
	}{{"permutations", []int64{5}, false}, {"ucycles", []int64{5}, false}, {"cliques", []int64{4}, false}, {"multilabel", []int64{4}, true}} {
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
		_, err = md.ScoreSamples(large, 2, 1, ys, LogZOptions{}, make([]float64, 2))
		if err == nil || !strings.Contains(err.Error(), "X row 1") || !strings.Contains(err.Error(), "log p") {
			t.Errorf("%s: log p at ‖u‖₁ ≈ 10¹² = %v, want an error naming X row 1 and log p", c.kind, err)
		}
	}
}

// Inference on scores whose sums could overflow float64 (‖u‖₁ > scoreRangeLimit) is refused,
// naming the row, by log Z (every method), the marginals (exact and sampled) and the samplers:
// past about 10³⁰⁶ exact log Z of Permutations and DirectedCycles was below the best score (the
// decoders' clamp of single scores), that of Cliques NaN, and chains started from a clamped
// "mode" stayed far from it, all without an error. Just inside the limit exact log Z is the
// brute-force one and a chain's samples are the mode.
func TestInferenceRefusesScoresWhoseSumsOverflow(t *testing.T) {
	for _, c := range []struct {
		kind string
		args []int64
	}{{"permutations", []int64{4}}, {"dicycles", []int64{5}}, {"cliques", []int64{5}}, {"multilabel", []int64{4}}} {
		sp := mustSpace(t, c.kind, c.args...)
		d, w := sp.Dim(), sp.Width()
		u := randomScores(rand.New(rand.NewPCG(3, uint64(d))), d, 1)
		l1 := l1Norm(u)
		coef := mat.NewDense(1, d, nil)
		for j, v := range u {
			coef.Set(0, j, v/l1) // ‖u‖₁ = x for the input x
		}
		md := &Model{Space: sp, Coef: coef, NFeatures: 1, Inference: InferenceOptions{Method: InferExact}}
		limit := scoreRangeLimit(d)
		chain := SampleOptions{Sampler: SamplerChain, Chain: ChainMeta}
		over := []float64{1, 1.01 * limit}
		calls := map[string]error{}
		_, calls["exact log Z"] = md.LogPartition(over, 2, 1, LogZOptions{Method: LogZExact}, make([]float64, 2))
		_, calls["fpras"] = md.LogPartition(over, 2, 1, LogZOptions{Method: LogZFPRAS}, make([]float64, 2))
		calls["marginals"] = md.Marginals(over, 2, 1, 1, make([]float64, 2*d))
		sampled := *md
		sampled.Inference = InferenceOptions{Method: InferSampled, Samples: 10, Sampler: chain}
		calls["sampled marginals"] = sampled.Marginals(over, 2, 1, 1, make([]float64, 2*d))
		calls["samples"] = md.Sample(over, 2, 1, 3, 1, chain, make([]int64, 2*3*w))
		for what, err := range calls {
			if err == nil || !strings.Contains(err.Error(), "X row 1") || !strings.Contains(err.Error(), "overflow") {
				t.Errorf("%s: %s at ‖u‖₁ = 1.01 × the limit: %v, want an error naming X row 1 and the overflow", c.kind, what, err)
			}
		}
		inside := []float64{0.99 * limit}
		brute := newExactDist(t, sp, scaled(u, inside[0]/l1))
		lz := make([]float64, 1)
		if _, err := md.LogPartition(inside, 1, 1, LogZOptions{Method: LogZExact}, lz); err != nil {
			t.Errorf("%s: exact log Z inside the limit: %v", c.kind, err)
		} else if math.Abs(lz[0]-brute.logZ) > 1e-12*math.Abs(brute.logZ) {
			t.Errorf("%s: exact log Z inside the limit = %g, brute force %g", c.kind, lz[0], brute.logZ)
		}
		ys := make([]int64, 3*w)
		if err := md.Sample(inside, 1, 1, 3, 1, chain, ys); err != nil {
			t.Errorf("%s: samples inside the limit: %v", c.kind, err)
			continue
		}
		mode := slices.Index(brute.pi, slices.Max(brute.pi))
		for k := 0; k < 3; k++ {
			if s := brute.stateOf(t, ys[k*w:(k+1)*w]); s != mode {
				t.Errorf("%s: sample %d inside the limit is structure %d, the mode (a point mass) is %d", c.kind, k, s, mode)
			}
		}
	}
}

// The row-level inference a fit runs (its marginals, log Z, samples) refuses a score vector
// beyond scoreRangeLimit with errScoresOutOfRange, which the Adam fit reports as a divergence:
// only the models' queries checked the range, by row.
func TestRowInferenceRefusesScoresOutOfRange(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	d := sp.Dim()
	u := make([]float64, d)
	for j := range u {
		u[j] = 1.01 * scoreRangeLimit(d) / float64(d) * float64(1-2*(j%2))
	}
	calls := map[string]error{}
	_, calls["exact log Z"] = ExactLogPartition(sp, u)
	_, calls["fpras"] = FPRAS(sp, u, LogZOptions{})
	_, calls["taylor"] = Taylor(sp, u)
	_, calls["marginals"] = Marginals(sp, u, InferenceOptions{Method: InferExact}, 1, make([]float64, d))
	_, calls["samples"] = Sample(sp, u, 2, 1, SampleOptions{Sampler: SamplerChain, Chain: ChainMeta}, make([]int64, 2*sp.Width()))
	for what, err := range calls {
		if !errors.Is(err, errScoresOutOfRange) {
			t.Errorf("%s at ‖u‖₁ = 1.01 × the limit: %v, want errScoresOutOfRange", what, err)
		}
	}
	for j := range u {
		u[j] *= 0.98 / 1.01
	}
	if _, err := ExactLogPartition(sp, u); err != nil {
		t.Errorf("exact log Z inside the limit: %v", err)
	}
}
