package main

import (
	"fmt"
	"strconv"

	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
)

// intAtLeast parses a 32-bit integer ≥ lo.
func intAtLeast(val string, lo int) (int, error) {
	v, err := int64AtLeast(val, int64(lo), 32)
	return int(v), err
}

// int64AtLeast parses an integer of the given size in bits that is ≥ lo: 64 bits for a work bound
// (max_samples), which the FPRAS's own error invites the caller to raise past 2³¹ − 1.
func int64AtLeast(val string, lo int64, bits int) (int64, error) {
	v, err := parseIntBits(val, bits)
	if err == nil && v < lo {
		err = fmt.Errorf("must be an integer ≥ %d", lo)
	}
	return v, err
}

// floatIn parses a number in the open interval (lo, hi).
func floatIn(val string, lo, hi float64) (float64, error) {
	v, err := parseFloat(val)
	if err == nil && !(v > lo && v < hi) {
		err = fmt.Errorf("must be in (%g, %g)", lo, hi)
	}
	return v, err
}

func parseSeed(val string) (uint64, error) {
	v, err := strconv.ParseUint(val, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an unsigned 64-bit integer")
	}
	return v, nil
}

// samplerNames maps the sampler parameter of ProbabilisticStructured to core/prob's options.
// "exact" is for fitting only (exact inference; sampling then chooses as "auto").
var samplerNames = map[string]struct {
	method prob.InferenceMethod
	opt    prob.SampleOptions
}{
	"auto":       {prob.InferAuto, prob.SampleOptions{Sampler: prob.SamplerAuto}},
	"exact":      {prob.InferExact, prob.SampleOptions{Sampler: prob.SamplerAuto}},
	"cftp":       {prob.InferSampled, prob.SampleOptions{Sampler: prob.SamplerCFTP}},
	"metropolis": {prob.InferSampled, prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMeta}},
	"local":      {prob.InferSampled, prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainLocal}},
	"mixed":      {prob.InferSampled, prob.SampleOptions{Sampler: prob.SamplerChain, Chain: prob.ChainMixed}},
}

// setSampler applies one of the sampler keys shared by every call (sampler, burn_in, thinning,
// n_chains) to inf; fit says whether "exact" is accepted. It returns known = false for other keys.
func setSampler(inf *prob.InferenceOptions, key, val string, fit bool) (bool, error) {
	var err error
	switch key {
	case "sampler":
		s, ok := samplerNames[val]
		if !ok || (val == "exact" && !fit) {
			names := "auto, cftp, metropolis, local or mixed"
			if fit {
				names = "auto, exact, cftp, metropolis, local or mixed"
			}
			return true, fmt.Errorf("want %s", names)
		}
		keep := inf.Sampler
		inf.Sampler.Sampler, inf.Sampler.Chain = s.opt.Sampler, s.opt.Chain
		inf.Sampler.BurnIn, inf.Sampler.Thin, inf.Sampler.Chains = keep.BurnIn, keep.Thin, keep.Chains
		if fit {
			inf.Method = s.method
		}
	case "burn_in":
		inf.Sampler.BurnIn, err = intAtLeast(val, 0)
	case "thinning":
		inf.Sampler.Thin, err = intAtLeast(val, 0)
	case "n_chains":
		inf.Sampler.Chains, err = intAtLeast(val, 1)
	default:
		return false, nil
	}
	return true, err
}

// checkSampler refuses a local or mixed chain on a space without local moves, naming the key,
// after a space no sampler serves (no counting formula), which the fit would refuse whatever the
// sampler: naming the other samplers there sent the user to three refusals (probe EB).
func checkSampler(sp space.Space, o prob.SampleOptions) error {
	if err := prob.Modelable(sp); err != nil {
		return err
	}
	if o.Sampler == prob.SamplerChain && (o.Chain == prob.ChainLocal || o.Chain == prob.ChainMixed) && !prob.HasLocalChain(sp) {
		return fmt.Errorf("parameter sampler=%s: the %s space has no local chain; use auto, cftp or metropolis",
			map[prob.ChainKind]string{prob.ChainLocal: "local", prob.ChainMixed: "mixed"}[o.Chain], sp.Kind())
	}
	return nil
}

// parseProbFitParams reads the fit parameters of cp_prob_fit by the table probParams (schema.go).
// Unknown keys and bad values are errors naming the key.
func parseProbFitParams(s string) (prob.Options, error) {
	opt := prob.Options{Inference: prob.InferenceOptions{Sampler: prob.SampleOptions{Sampler: prob.SamplerAuto}}}
	defaults(probParams, &opt)
	if err := parseTable(probParams, s, &opt); err != nil {
		return opt, err
	}
	return opt, opt.Validate()
}

// probQuery names the cp_prob_* call whose parameters are parsed; each takes its own keys.
type probQuery int

const (
	queryMarginals probQuery = iota // method (auto, exact, sampled), n_samples, check_mixing, random_state, sampler keys
	querySample                     // check_mixing, random_state, sampler keys
	queryLogZ                       // method (auto, exact, fpras, taylor), epsilon, delta, schedule, n_samples, max_samples, random_state, sampler keys
)

// queryOptions are the parsed parameters of a query call.
type queryOptions struct {
	Inference prob.InferenceOptions // marginals: method and n_samples; every call: the sampler
	LogZ      prob.LogZOptions      // log_partition and score_samples
	Seed      uint64
}

// parseProbQuery reads the parameters of a query call on a model whose fit-time inference options
// are base (the defaults of marginals and sample). The FPRAS samples exactly (CFTP) unless a
// sampler is given. Bad values are errors naming the key (epsilon and delta must be in (0, 1),
// n_samples ≥ 1).
func parseProbQuery(s string, call probQuery, base prob.InferenceOptions) (queryOptions, error) {
	q := queryOptions{Inference: base, LogZ: prob.LogZOptions{Eps: prob.DefaultEpsilon, Delta: prob.DefaultDelta}}
	if call == queryLogZ {
		q.Inference = prob.InferenceOptions{}
	}
	err := eachParam(s, func(key, val string) (bool, error) {
		var err error
		switch {
		case key == "random_state":
			q.Seed, err = parseSeed(val)
		case key == "method" && call == queryMarginals:
			q.Inference.Method, err = prob.ParseInferenceMethod(val)
		case key == "method" && call == queryLogZ:
			q.LogZ.Method, err = prob.ParseLogZMethod(val)
		case key == "n_samples" && call == queryMarginals:
			q.Inference.Samples, err = intAtLeast(val, 1)
		case key == "check_mixing" && (call == queryMarginals || call == querySample):
			q.Inference.DispersedCheck, err = parseFlag(val)
		case key == "n_samples" && call == queryLogZ:
			q.LogZ.Samples, err = intAtLeast(val, 1)
		case key == "max_samples" && call == queryLogZ:
			q.LogZ.MaxSamples, err = int64AtLeast(val, 1, 64)
		case key == "epsilon" && call == queryLogZ:
			q.LogZ.Eps, err = floatIn(val, 0, 1)
		case key == "delta" && call == queryLogZ:
			q.LogZ.Delta, err = floatIn(val, 0, 1)
		case key == "schedule" && call == queryLogZ:
			q.LogZ.Schedule, err = prob.ParseFPRASSchedule(val)
		default:
			return setSampler(&q.Inference, key, val, false)
		}
		return true, err
	})
	q.LogZ.Seed = q.Seed
	q.LogZ.Sampler = q.Inference.Sampler
	return q, err
}
