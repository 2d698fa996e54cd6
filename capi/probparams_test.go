package main

import (
	"strings"
	"testing"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

func TestParseProbFitParams(t *testing.T) {
	opt, err := parseProbFitParams("")
	if err != nil {
		t.Fatal(err)
	}
	if opt.Alpha != 0 || !opt.Intercept || opt.Inference.Method != prob.InferAuto || opt.Inference.Sampler.Sampler != prob.SamplerAuto {
		t.Errorf("defaults %+v", opt)
	}
	opt, err = parseProbFitParams("alpha=0.25; fit_intercept=0;sampler=metropolis;n_samples=7;max_iter=9;tol=1e-3;" +
		"random_state=18446744073709551615;learning_rate=0.5;batch_size=16;burn_in=11;thinning=3;n_chains=2;solver=adam")
	if err != nil {
		t.Fatal(err)
	}
	s := opt.Inference.Sampler
	if opt.Alpha != 0.25 || opt.Intercept || opt.Inference.Method != prob.InferSampled || s.Sampler != prob.SamplerChain ||
		s.Chain != prob.ChainMeta || opt.Inference.Samples != 7 || opt.MaxIter != 9 || opt.Tol != 1e-3 || opt.Seed != 1<<64-1 ||
		opt.LearningRate != 0.5 || opt.BatchSize != 16 || s.BurnIn != 11 || s.Thin != 3 || s.Chains != 2 || opt.Solver != prob.SolverAdam {
		t.Errorf("parsed %+v", opt)
	}
	// The sampler keys compose in any order.
	opt, _ = parseProbFitParams("burn_in=5;sampler=local")
	if opt.Inference.Sampler.BurnIn != 5 || opt.Inference.Sampler.Chain != prob.ChainLocal {
		t.Errorf("burn_in before sampler: %+v", opt.Inference.Sampler)
	}
	for name, want := range map[string]struct {
		method  prob.InferenceMethod
		sampler prob.SamplerKind
		chain   prob.ChainKind
	}{
		"auto":  {prob.InferAuto, prob.SamplerAuto, prob.ChainAuto},
		"exact": {prob.InferExact, prob.SamplerAuto, prob.ChainAuto},
		"cftp":  {prob.InferSampled, prob.SamplerCFTP, prob.ChainAuto},
		"mixed": {prob.InferSampled, prob.SamplerChain, prob.ChainMixed},
	} {
		opt, err := parseProbFitParams("sampler=" + name)
		if err != nil || opt.Inference.Method != want.method || opt.Inference.Sampler.Sampler != want.sampler ||
			opt.Inference.Sampler.Chain != want.chain {
			t.Errorf("sampler=%s: %+v, %v", name, opt.Inference, err)
		}
	}
	bad := map[string]string{
		"alpha=-1":                   "alpha",
		"alpha=inf":                  "alpha",
		"n_samples=0":                "n_samples",
		"max_iter=0":                 "max_iter",
		"tol=0":                      "tol",
		"tol=1":                      "tol",
		"sampler=gibbs":              "sampler",
		"solver=newton":              "solver",
		"learning_rate=0":            "learning_rate",
		"batch_size=-1":              "batch_size",
		"burn_in=-1":                 "burn_in",
		"thinning=-2":                "thinning",
		"n_chains=0":                 "n_chains",
		"random_state=-1":            "random_state",
		"fit_intercept=2":            "fit_intercept",
		"kernel=rbf":                 "unknown parameter",
		"alpha":                      "key=value",
		"alpha=1;alpha=2":            "twice",
		"epsilon=0.1":                "unknown parameter",
		strings.Repeat("x", 1<<16+1): "too long",
	}
	for in, want := range bad {
		if _, err := parseProbFitParams(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseProbFitParams(%.40q) error %v, want it to mention %q", in, err, want)
		}
	}
}

func TestParseProbQuery(t *testing.T) {
	base := prob.InferenceOptions{Method: prob.InferSampled, Samples: 50,
		Sampler: prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMeta, Thin: 4}}
	q, err := parseProbQuery("", queryMarginals, base)
	if err != nil || q.Inference != base {
		t.Errorf("marginals defaults %+v, %v", q.Inference, err)
	}
	q, err = parseProbQuery("method=exact;n_samples=9;random_state=4;sampler=cftp", queryMarginals, base)
	if err != nil || q.Inference.Method != prob.InferExact || q.Inference.Samples != 9 || q.Seed != 4 ||
		q.Inference.Sampler.Sampler != prob.SamplerCFTP || q.Inference.Sampler.Thin != 4 {
		t.Errorf("marginals %+v, %v", q, err)
	}
	q, err = parseProbQuery("check_mixing=1;sampler=local", queryMarginals, base)
	if err != nil || !q.Inference.DispersedCheck {
		t.Errorf("check_mixing=1: %+v, %v", q.Inference, err)
	}
	if q, err = parseProbQuery("check_mixing=1", querySample, base); err != nil || !q.Inference.DispersedCheck {
		t.Errorf("sample check_mixing=1: %+v, %v", q.Inference, err)
	}
	if _, err = parseProbQuery("check_mixing=1", queryLogZ, base); err == nil {
		t.Error("check_mixing is a marginals and sample parameter, log_partition took it")
	}
	if _, err = parseProbQuery("check_mixing=2", queryMarginals, base); err == nil || !strings.Contains(err.Error(), "check_mixing") {
		t.Errorf("check_mixing=2: %v", err)
	}
	q, err = parseProbQuery("random_state=3;sampler=mixed;burn_in=2;n_chains=3", querySample, base)
	if err != nil || q.Seed != 3 || q.Inference.Sampler.Chain != prob.ChainMixed || q.Inference.Sampler.BurnIn != 2 ||
		q.Inference.Sampler.Chains != 3 {
		t.Errorf("sample %+v, %v", q, err)
	}
	q, err = parseProbQuery("", queryLogZ, base)
	if err != nil || q.LogZ.Method != prob.LogZAuto || q.LogZ.Eps != 0.1 || q.LogZ.Delta != 0.25 ||
		q.LogZ.Sampler != (prob.SampleOptions{}) {
		t.Errorf("log Z defaults %+v, %v", q.LogZ, err)
	}
	q, err = parseProbQuery("method=fpras;epsilon=0.05;delta=0.01;n_samples=100;max_samples=1000;random_state=8;sampler=metropolis;schedule=thesis",
		queryLogZ, base)
	if err != nil || q.LogZ.Method != prob.LogZFPRAS || q.LogZ.Eps != 0.05 || q.LogZ.Delta != 0.01 || q.LogZ.Samples != 100 ||
		q.LogZ.MaxSamples != 1000 || q.LogZ.Seed != 8 || q.LogZ.Sampler.Chain != prob.ChainMeta || q.LogZ.Schedule != prob.ScheduleThesis {
		t.Errorf("log Z %+v, %v", q.LogZ, err)
	}
	if q, err = parseProbQuery("method=fpras;schedule=adaptive", queryLogZ, base); err != nil || q.LogZ.Schedule != prob.ScheduleAdaptive {
		t.Errorf("schedule=adaptive: %+v, %v", q.LogZ, err)
	}
	// the FPRAS's work-bound error invites a larger max_samples: it was read as a 32-bit integer
	if q, err = parseProbQuery("max_samples=100000000000", queryLogZ, base); err != nil || q.LogZ.MaxSamples != 1e11 {
		t.Errorf("max_samples=1e11: %+v, %v", q.LogZ, err)
	}
	bad := []struct {
		in   string
		call probQuery
		want string
	}{
		{"epsilon=0", queryLogZ, "epsilon"},
		{"schedule=tpa", queryLogZ, "schedule"},
		{"schedule=adaptive", querySample, "schedule"},
		{"epsilon=1", queryLogZ, "epsilon"},
		{"epsilon=-0.5", queryLogZ, "epsilon"},
		{"delta=0", queryLogZ, "delta"},
		{"delta=1.5", queryLogZ, "delta"},
		{"n_samples=0", queryLogZ, "n_samples"},
		{"max_samples=0", queryLogZ, "max_samples"},
		{"max_samples=9223372036854775808", queryLogZ, "max_samples"},
		{"n_samples=0", queryMarginals, "n_samples"},
		{"method=bogus", queryLogZ, "method"},
		{"method=fpras", queryMarginals, "method"},
		{"method=sampled", queryLogZ, "method"},
		{"method=exact", querySample, "unknown parameter"},
		{"epsilon=0.1", queryMarginals, "unknown parameter"},
		{"sampler=exact", querySample, "sampler"},
		{"random_state=x", querySample, "random_state"},
	}
	for _, c := range bad {
		if _, err := parseProbQuery(c.in, c.call, base); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseProbQuery(%q, %d) error %v, want it to mention %q", c.in, c.call, err, c.want)
		}
	}
}

func TestCheckSampler(t *testing.T) {
	mc, _ := space.New("multiclass", []int64{3})
	perm, _ := space.New("permutations", []int64{4})
	local := prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainLocal}
	if err := checkSampler(mc, local); err == nil || !strings.Contains(err.Error(), "sampler=local") {
		t.Errorf("local chain on multiclass: %v", err)
	}
	if err := checkSampler(perm, local); err != nil {
		t.Errorf("local chain on permutations: %v", err)
	}
	// a space no sampler serves says so, not "use auto, cftp or metropolis", which all fail (probe EB)
	dag, err := space.New("dag_subsets", []int64{4, 0, 1, 0, 1, 0, 2, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSampler(dag, local); err == nil || !strings.Contains(err.Error(), "no counting formula") {
		t.Errorf("local chain on dag_subsets: %v", err)
	}
}

// FuzzParseProbParams: parameter strings come from Python callers; no input may panic, and any
// accepted fit string yields valid options, any accepted query string in-range values.
func FuzzParseProbParams(f *testing.F) {
	f.Add("alpha=1;sampler=cftp;n_samples=10", uint8(0))
	f.Add("sampler=local;burn_in=5;thinning=2;n_chains=3;solver=adam;learning_rate=0.1", uint8(0))
	f.Add("method=fpras;epsilon=0.2;delta=0.1;n_samples=50;random_state=1", uint8(3))
	f.Add("method=sampled;n_samples=5;sampler=metropolis", uint8(1))
	f.Add("random_state=9;sampler=mixed", uint8(2))
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		if which%4 == 0 {
			opt, err := parseProbFitParams(s)
			if err == nil {
				if verr := opt.Validate(); verr != nil {
					t.Fatalf("accepted %q but options are invalid: %v", s, verr)
				}
			}
			return
		}
		q, err := parseProbQuery(s, probQuery(which%4-1), prob.InferenceOptions{})
		if err != nil {
			return
		}
		if !(q.LogZ.Eps > 0 && q.LogZ.Eps < 1 && q.LogZ.Delta > 0 && q.LogZ.Delta < 1) || q.LogZ.Samples < 0 ||
			q.Inference.Samples < 0 || q.Inference.Sampler.BurnIn < 0 || q.Inference.Sampler.Thin < 0 || q.Inference.Sampler.Chains < 0 {
			t.Fatalf("accepted %q with out-of-range values %+v", s, q)
		}
	})
}
