package prob

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/combpred/combpred/core/parallel"
	"github.com/combpred/combpred/core/space"
)

// TestModelMethods: on permutations of 4 labels, ScoreSamples' probabilities sum to 1 over Y for
// each input; Marginals equal the exact marginals of the model's scores; Mode is the decoder's
// structure; LogPartition by the FPRAS is within 5% of the exact value; Sample is determined by
// the seed whatever the number of threads, and valid.
func TestModelMethods(t *testing.T) {
	sp := mustSpace(t, "permutations", 4)
	const m, n, q = 30, 3, 4
	X, ys := syntheticData(t, sp, m, n, 0.7, 21)
	md, err := Fit(sp, X, m, n, ys, nil, Options{Alpha: 0.05, Intercept: true, Tol: 1e-8, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	Xq := X[:q*n]
	U := make([]float64, q*sp.Dim())
	if err := md.Decision(Xq, q, n, U); err != nil {
		t.Fatal(err)
	}
	b := newExactDist(t, sp, U[:sp.Dim()]).b
	all := make([]int64, 0, q*len(b.Ys)*sp.Width())
	allX := make([]float64, 0, q*len(b.Ys)*n)
	for i := 0; i < q; i++ {
		for _, y := range b.Ys {
			all = append(all, y...)
			allX = append(allX, Xq[i*n:(i+1)*n]...)
		}
	}
	lp := make([]float64, q*len(b.Ys))
	if _, err := md.ScoreSamples(allX, q*len(b.Ys), n, all, LogZOptions{}, lp); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < q; i++ {
		var s float64
		for k := range b.Ys {
			s += math.Exp(lp[i*len(b.Ys)+k])
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("input %d: Σ_y p(y|x) = %.15g", i, s)
		}
	}
	marg := make([]float64, q*sp.Dim())
	if err := md.Marginals(Xq, q, n, 1, marg); err != nil {
		t.Fatal(err)
	}
	modes := make([]int64, q*sp.Width())
	if err := md.Predict(Xq, q, n, modes, nil); err != nil {
		t.Fatal(err)
	}
	lz := make([]float64, q)
	if _, err := md.LogPartition(Xq, q, n, LogZOptions{Method: LogZFPRAS, Eps: 0.1, Delta: 0.25, Samples: 2000, Seed: 4}, lz); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < q; i++ {
		u := U[i*sp.Dim() : (i+1)*sp.Dim()]
		e := newExactDist(t, sp, u)
		for j := range e.mean {
			if math.Abs(marg[i*sp.Dim()+j]-e.mean[j]) > 1e-12 {
				t.Errorf("input %d: marginal %d = %g, exact %g", i, j, marg[i*sp.Dim()+j], e.mean[j])
			}
		}
		y := make([]int64, sp.Width())
		sp.Decode(u, y)
		for j := range y {
			if y[j] != modes[i*sp.Width()+j] {
				t.Errorf("input %d: mode %v, decoder %v", i, modes[i*sp.Width():(i+1)*sp.Width()], y)
				break
			}
		}
		if math.Abs(math.Exp(lz[i]-e.logZ)-1) > 0.05 {
			t.Errorf("input %d: FPRAS log Z %.4f, exact %.4f", i, lz[i], e.logZ)
		}
	}
	const count = 50
	s1 := make([]int64, q*count*sp.Width())
	s2 := make([]int64, q*count*sp.Width())
	old := parallel.Threads()
	parallel.SetThreads(1)
	err1 := md.Sample(Xq, q, n, count, 7, SampleOptions{}, s1)
	parallel.SetThreads(4)
	err2 := md.Sample(Xq, q, n, count, 7, SampleOptions{}, s2)
	parallel.SetThreads(old)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for k := range s1 {
		if s1[k] != s2[k] {
			t.Fatal("samples depend on the number of threads")
		}
	}
	if err := space.ValidateRows(sp, s1, q*count); err != nil {
		t.Fatal(err)
	}
}

// TestModelBadInput: wrong shapes, counts and options are errors.
func TestModelBadInput(t *testing.T) {
	sp := mustSpace(t, "multiclass", 3)
	md, err := NewModel(sp, make([]float64, 3*3), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	X := []float64{1, 2}
	if err := md.Sample(X, 1, 2, 0, 1, SampleOptions{}, nil); err == nil {
		t.Error("0 samples accepted")
	}
	if err := md.Predict(X, 1, 3, make([]int64, 1), nil); err == nil {
		t.Error("wrong feature count accepted")
	}
	if err := md.Marginals(X, 1, 2, 0, make([]float64, 2)); err == nil {
		t.Error("short output accepted")
	}
	if _, err := NewModel(sp, make([]float64, 5), 2, false); err == nil {
		t.Error("wrong coefficient count accepted")
	}
	if _, err := md.ScoreSamples(X, 1, 2, []int64{5}, LogZOptions{}, make([]float64, 1)); err == nil {
		t.Error("invalid structure accepted")
	}
	if _, err := md.LogPartition(X, 1, 2, LogZOptions{Method: LogZFPRAS, Eps: 0}, make([]float64, 1)); err == nil {
		t.Error("ε = 0 accepted")
	}
}

// TestSamplerBadInput: n < 1, negative options, unknown kinds and chains whose burn-in exceeds the
// work bound are errors returned at once.
func TestSamplerBadInput(t *testing.T) {
	sp := mustSpace(t, "permutations", 5)
	u := randomScores(rand.New(rand.NewPCG(1, 2)), sp.Dim(), 1)
	for name, c := range map[string]struct {
		n   int
		opt SampleOptions
	}{
		"n = 0":        {0, SampleOptions{}},
		"n < 0":        {-3, SampleOptions{}},
		"burn-in < 0":  {5, SampleOptions{Sampler: SamplerChain, BurnIn: -1}},
		"sampler":      {5, SampleOptions{Sampler: 7}},
		"chain kind":   {5, SampleOptions{Sampler: SamplerChain, Chain: 9}},
		"mixed, none":  {5, SampleOptions{Sampler: SamplerChain, Chain: ChainMixed}},
		"work bound":   {5, SampleOptions{Sampler: SamplerChain, BurnIn: 1 << 21, MaxSteps: 1 << 20}},
		"max steps <0": {5, SampleOptions{MaxSteps: -1}},
	} {
		s := sp
		if name == "mixed, none" {
			s = mustSpace(t, "cliques", 5)
		}
		out := make([]int64, max(c.n, 0)*s.Width())
		_, err := Sample(s, u[:s.Dim()], c.n, 1, c.opt, out)
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
		if name == "work bound" && !errors.Is(err, ErrWorkBound) {
			t.Errorf("work bound: want ErrWorkBound, got %v", err)
		}
	}
	if _, err := NewChain(sp, u, ChainLocal, []int64{1, 1, 2, 3, 4}); err == nil {
		t.Error("an invalid start state was accepted")
	}
	if _, err := NewChain(mustSpace(t, "cliques", 4), make([]float64, 6), ChainLocal, nil); err == nil {
		t.Error("cliques have no local chain, but one was built")
	}
	if _, err := Marginals(sp, u, InferenceOptions{Method: InferSampled, Samples: -1}, 0, make([]float64, sp.Dim())); err == nil {
		t.Error("negative sample count accepted")
	}
}
