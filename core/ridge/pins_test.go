package ridge

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/combpred/combpred/core/space"
)

// pinScores' bound M = 1 + 2Σ|u_b| assumes that ψ lies in [−1, 1] and takes values a unit apart
// at least: checked on every structure of every small space.
func TestEverySpacesPsiIsInMinusOneOne(t *testing.T) {
	for _, sp := range everySpace(t) {
		psi := make([]float64, sp.Dim())
		err := sp.Enumerate(func(y []int64) bool {
			sp.Embed(y, psi)
			for a, v := range psi {
				if v != -1 && v != 0 && v != 1 {
					t.Errorf("%s: ψ_%d(%v) = %v, outside {−1, 0, 1}", sp.Kind(), a, y, v)
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Fatalf("%s: %v", sp.Kind(), err)
		}
	}
}

// Under the empirical measure a coordinate that every training structure holds at one value
// carries no score (J does not depend on it), and the decoder used to break the tie its own way:
// a label on in every training target was never predicted, and one distinct training structure
// came back as another. Predict keeps such coordinates where the measure holds them, and leaves
// the scores of Decision as they are.
func TestPredictKeepsCoordinatesTheReferenceHoldsConstant(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	const m, n = 60, 3
	X := make([]float64, m*n)
	for i := range X {
		X[i] = r.NormFloat64()
	}
	predict := func(sp space.Space, ys []int64, weight float64) (*Model, []int64) {
		t.Helper()
		opt := baseOptions()
		opt.EmpiricalWeight = weight
		md, err := Fit(sp, X, m, n, ys, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, m*sp.Width())
		if err := md.Predict(X, m, n, out, nil); err != nil {
			t.Fatal(err)
		}
		return md, out
	}

	// Multi-label: label 2 always on, label 3 always off, labels 0 and 1 drawn from X.
	ml, _ := space.NewMultilabel(4)
	ys := make([]int64, m*4)
	for i := 0; i < m; i++ {
		ys[i*4] = int64(boolInt(X[i*n] > 0))
		ys[i*4+1] = int64(boolInt(X[i*n+1] > 0))
		ys[i*4+2] = 1
	}
	md, out := predict(ml, ys, 1)
	for i := 0; i < m; i++ {
		if out[i*4+2] != 1 || out[i*4+3] != 0 {
			t.Fatalf("row %d: predicted %v, want label 2 on and label 3 off as in every training target", i, out[i*4:i*4+4])
		}
	}
	// Decoding the marginal estimates (decode_from="marginals") reads m̂ − p, 0 along those labels
	// too: pinned alike, while the estimates returned beside the structures stay as estimated.
	for _, withM := range []bool{false, true} {
		var M []float64
		if withM {
			M = make([]float64, m*4)
		}
		fromMarginals := make([]int64, m*4)
		if err := md.Marginals(X, m, n, M, fromMarginals, EstimateLinear, ScaleNoiseFree, 1, nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			if fromMarginals[i*4+2] != 1 || fromMarginals[i*4+3] != 0 {
				t.Fatalf("marginals (returned too: %v), row %d: decoded %v", withM, i, fromMarginals[i*4:i*4+4])
			}
			if withM && (M[i*4+2] != 1 || M[i*4+3] != 0) {
				t.Fatalf("row %d: estimates %v, want 1 and 0 for the constant labels", i, M[i*4:i*4+4])
			}
		}
	}
	U := make([]float64, m*4)
	if err := md.Decision(X, m, n, U); err != nil {
		t.Fatal(err)
	}
	if math.Abs(U[2]) > 1e-12 {
		t.Errorf("decision score of the constant label %v, want 0: Decision must not be pinned", U[2])
	}

	// One distinct ranking in the training set, and one distinct subtree: predicted for every row.
	perm, _ := space.NewPermutations(4)
	tree, _ := space.NewSubtrees([]int{-1, 0, 0, 1, 1})
	for _, c := range []struct {
		sp space.Space
		y  []int64
	}{{perm, []int64{2, 4, 1, 3}}, {tree, []int64{1, 1, 0, 0, 1}}} {
		ys := make([]int64, 0, m*len(c.y))
		for range m {
			ys = append(ys, c.y...)
		}
		_, out := predict(c.sp, ys, 1)
		w := c.sp.Width()
		for i := 0; i < m; i++ {
			if !slices.Equal(out[i*w:(i+1)*w], c.y) {
				t.Fatalf("%s row %d: predicted %v, want the only training structure %v", c.sp.Kind(), i, out[i*w:(i+1)*w], c.y)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
