package prob

import (
	"strings"
	"testing"
)

// TestPlan: the plan names exact inference and how (closed form, enumeration, one L-BFGS per
// label), or the sampler; for a chain its burn-in and thinning (the defaults 100·max(d, w) and
// max(d, w)) and the Markov steps of the first and later gradients, m(burn + (n − 1)·thin) and
// m·n·thin (a minibatch's rows for m).
func TestPlan(t *testing.T) {
	chain := func(c ChainKind) Options {
		return Options{Inference: InferenceOptions{Method: InferSampled, Samples: 10, Sampler: SampleOptions{Sampler: SamplerChain, Chain: c}}}
	}
	batch := chain(ChainAuto)
	batch.BatchSize = 5
	chains := chain(ChainAuto)
	chains.Inference.Sampler.Chains = 2
	adam := Options{Solver: SolverAdam}
	for _, c := range []struct {
		sp   string
		args []int64
		opt  Options
		want []string
	}{
		{"multiclass", []int64{4}, Options{}, []string{"exact inference", "closed form or dynamic programme", ", L-BFGS"}},
		{"multilabel", []int64{4}, Options{}, []string{"exact inference", "one L-BFGS per label"}},
		{"cliques", []int64{6}, Options{}, []string{"exact inference", "summing over its 58 structures"}},
		{"multiclass", []int64{4}, adam, []string{"exact inference", "), Adam"}},
		// two chains each burn in: 200 × (2 × 19000 + 8 × 190)
		{"permutations", []int64{20}, chains, []string{"about 7.9e+06 Markov steps in the first gradient and 3.8e+05"}},
		{"permutations", []int64{20}, Options{Inference: InferenceOptions{Method: InferSampled, Sampler: SampleOptions{Sampler: SamplerCFTP}}},
			[]string{"100 samples per input", "by CFTP"}},
		{"permutations", []int64{20}, chain(ChainAuto),
			[]string{"10 samples per input", "(the mixed chain)", "burns in 19000 steps, then 190 per sample", "resumes at the next gradient with 190",
				"about 4.14e+06 Markov steps in the first gradient and 3.8e+05 in each later one, over 200 inputs"}},
		{"permutations", []int64{20}, batch, []string{"resumes with 190 once its input has been sampled",
			"about 1.04e+05 Markov steps in the first gradient and 9.5e+03 in each later one, over 5 inputs"}},
		{"cliques", []int64{20}, chain(ChainAuto), []string{"(the Metropolis chain)", "burns in 19000 steps, then 190 per sample"}},
		{"dicycles", []int64{20}, Options{Inference: InferenceOptions{Method: InferSampled, Sampler: SampleOptions{Sampler: SamplerAuto, BurnIn: 7, Thin: 3}}},
			[]string{"exact CFTP samples where their proven cost is small, else the mixed chain", "burns in 7 steps, then 3 per sample"}},
		// sampled inference on a space with an exact sampler of scores: "auto" draws by it (review)
		{"permutations", []int64{8}, Options{Inference: InferenceOptions{Method: InferSampled, Sampler: SampleOptions{Sampler: SamplerAuto}}},
			[]string{"100 samples per input", "drawn exactly by the space's own recursion"}},
	} {
		got := Plan(mustSpace(t, c.sp, c.args...), 200, c.opt)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s%v: plan %q lacks %q", c.sp, c.args, got, w)
			}
		}
	}
}
