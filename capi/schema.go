package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
)

// The estimators' parameters are declared once, here: their names, types, defaults, ranges, enum
// options and doc lines. The parameter strings of cp_ridge_fit and cp_prob_fit are parsed by these
// tables, and the same tables are written as JSON to python/combpred/_schema.json, from which the
// Python estimators derive their scikit-learn parameter constraints and their defaults.
// TestSchemaFile fails when the checked-in file differs from the tables;
// COMBPRED_UPDATE_SCHEMA=1 go test ./capi -run TestSchemaFile rewrites it.

// paramType is how a parameter's value is written and checked.
type paramType string

const (
	typeReal paramType = "real" // a finite float, within [Low, High] as Closed says
	typeInt  paramType = "int"  // a 32-bit integer, within [Low, High] as Closed says
	typeBool paramType = "bool" // 0 or 1
	typeEnum paramType = "enum" // one of Options
	typeSeed paramType = "seed" // an unsigned 64-bit integer (Python: random_state)
)

// param is one estimator parameter that crosses the boundary.
type param[O any] struct {
	Name string    `json:"name"`
	Type paramType `json:"type"`
	// Default is the default the user sees; nil stands for Python's None, whose meaning Doc says
	// (the key is then not sent, or sent as NoneSentinel).
	Default any `json:"default"`
	// Low and High bound a real or int (nil: unbounded); Closed says which ends are included, as
	// scikit-learn's Interval: "both", "left", "right" or "neither".
	Low    *float64 `json:"low,omitempty"`
	High   *float64 `json:"high,omitempty"`
	Closed string   `json:"closed,omitempty"`
	// Options are an enum's values, in the order of the core's codes.
	Options []string `json:"options,omitempty"`
	// None says that Python accepts None for this parameter.
	None bool `json:"none,omitempty"`
	// NoneSentinel, when set, is the value Python sends for None; it bypasses the range.
	NoneSentinel *float64 `json:"none_sentinel,omitempty"`
	// Internal parameters are set by the Python layer itself, never by users.
	Internal bool   `json:"internal,omitempty"`
	Doc      string `json:"doc"`
	// set stores a checked value: f for reals and ints, b for bools, s for enums, u for seeds.
	set func(o *O, v paramValue) error
}

// paramValue is a parsed parameter value.
type paramValue struct {
	f float64
	b bool
	s string
	u uint64
}

func ptr(v float64) *float64 { return &v }

// int32Bounded gives every int parameter without an upper bound the one its parsing sets (2³¹ − 1,
// parseInt), so that the schema states it: Python's Interval then refuses degree=2**40 by name
// before the fit, where the core refused it after checking the data, as "not a 32-bit integer".
func int32Bounded[O any](table []param[O]) []param[O] {
	for i := range table {
		p := &table[i]
		if p.Type != typeInt || p.High != nil {
			continue
		}
		p.High = ptr(math.MaxInt32)
		switch p.Closed {
		case "left":
			p.Closed = "both"
		case "neither", "":
			p.Closed = "right"
		}
	}
	return table
}

// parse reads val as p's type and checks it against p's range or options.
func (p *param[O]) parse(val string) (paramValue, error) {
	var v paramValue
	switch p.Type {
	case typeReal, typeInt:
		var err error
		if p.Type == typeReal {
			v.f, err = parseFloat(val)
		} else {
			var i int
			i, err = parseInt(val)
			v.f = float64(i)
		}
		if err != nil {
			return v, err
		}
		if p.NoneSentinel != nil && v.f == *p.NoneSentinel {
			return v, nil
		}
		if !p.inRange(v.f) {
			return v, fmt.Errorf("must be in %s", p.rangeText())
		}
	case typeBool:
		var err error
		v.b, err = parseFlag(val)
		return v, err
	case typeEnum:
		for _, o := range p.Options {
			if o == val {
				v.s = val
				return v, nil
			}
		}
		return v, fmt.Errorf("want one of %v", p.Options)
	case typeSeed:
		u, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return v, fmt.Errorf("not an unsigned 64-bit integer")
		}
		v.u = u
	}
	return v, nil
}

func (p *param[O]) inRange(x float64) bool {
	lowIn := p.Closed == "left" || p.Closed == "both"
	highIn := p.Closed == "right" || p.Closed == "both"
	if p.Low != nil && (x < *p.Low || x == *p.Low && !lowIn) {
		return false
	}
	if p.High != nil && (x > *p.High || x == *p.High && !highIn) {
		return false
	}
	return true
}

func (p *param[O]) rangeText() string {
	lo, hi, l, h := "-inf", "inf", "(", ")"
	if p.Low != nil {
		lo = strconv.FormatFloat(*p.Low, 'g', -1, 64)
		if p.Closed == "left" || p.Closed == "both" {
			l = "["
		}
	}
	if p.High != nil {
		hi = strconv.FormatFloat(*p.High, 'g', -1, 64)
		if p.Closed == "right" || p.Closed == "both" {
			h = "]"
		}
	}
	return l + lo + ", " + hi + h
}

// parseTable applies the "key=value;…" string s to opt, every key by its entry in table; unknown
// keys are errors, and values are checked by type and range before they are set.
func parseTable[O any](table []param[O], s string, opt *O) error {
	byName := make(map[string]*param[O], len(table))
	for i := range table {
		byName[table[i].Name] = &table[i]
	}
	return eachParam(s, func(key, val string) (bool, error) {
		p, ok := byName[key]
		if !ok {
			return false, nil
		}
		v, err := p.parse(val)
		if err == nil {
			err = p.set(opt, v)
		}
		return true, err
	})
}

// defaults applies every table default that is not None to opt.
func defaults[O any](table []param[O], opt *O) {
	for i := range table {
		p := &table[i]
		var v paramValue
		switch d := p.Default.(type) {
		case nil:
			continue
		case float64:
			v.f = d
		case int:
			v.f = float64(d)
		case bool:
			v.b = d
		case string:
			v.s = d
		}
		if err := p.set(opt, v); err != nil {
			panic(fmt.Sprintf("capi: the default of %s does not apply: %v", p.Name, err))
		}
	}
}

// ridgeParams are StructuredRidge's parameters (cp_ridge_fit, cp_ridge_partial_fit).
var ridgeParams = int32Bounded([]param[ridge.Options]{
	{Name: "alpha", Type: typeReal, Default: 1.0, Low: ptr(check.MinAlpha), High: ptr(check.MaxAlpha), Closed: "both",
		Doc: "regularisation strength, the weight of the penalty ‖W‖² (or ‖f‖² of the kernel expansion)",
		set: func(o *ridge.Options, v paramValue) error { o.Alpha = v.f; return nil }},
	{Name: "kernel", Type: typeEnum, Default: "linear", Options: kernel.KindNames(),
		Doc: "the kernel of the score function (Python also takes a callable)",
		set: func(o *ridge.Options, v paramValue) error {
			k, err := kernel.ParseKind(v.s)
			o.Kernel.Kind = k
			return err
		}},
	{Name: "gamma", Type: typeReal, Default: nil, None: true, Low: ptr(0), Closed: "neither",
		Doc: "the rbf and poly kernels' scale; None: 1/n_features",
		set: func(o *ridge.Options, v paramValue) error { o.Kernel.Gamma = v.f; return nil }},
	{Name: "degree", Type: typeInt, Default: 3, Low: ptr(1), Closed: "left",
		Doc: "the poly kernel's degree",
		set: func(o *ridge.Options, v paramValue) error { o.Kernel.Degree = int(v.f); return nil }},
	{Name: "coef0", Type: typeReal, Default: 1.0, Closed: "neither",
		Doc: "the poly kernel's constant term",
		set: func(o *ridge.Options, v paramValue) error { o.Kernel.Coef0 = v.f; return nil }},
	{Name: "fit_intercept", Type: typeBool, Default: true,
		Doc: "learn an unpenalised offset of the scores",
		set: func(o *ridge.Options, v paramValue) error { o.Intercept = v.b; return nil }},
	{Name: "solver", Type: typeEnum, Default: "auto", Options: ridge.SolverNames(),
		Doc: "auto, exact (a direct solve), cg (conjugate gradients) or sgd (the thesis' online gradient)",
		set: func(o *ridge.Options, v paramValue) error {
			s, err := ridge.ParseSolver(v.s)
			o.Solver = s
			return err
		}},
	{Name: "tol", Type: typeReal, Default: 1e-8, None: true, NoneSentinel: ptr(0), Low: ptr(0), High: ptr(1), Closed: "neither",
		Doc: "stop when the relative gradient (SGD: the relative change of J) is below tol; None: no tolerance stop (solver sgd only)",
		set: func(o *ridge.Options, v paramValue) error { o.Tol = v.f; return nil }},
	{Name: "max_iter", Type: typeInt, Default: 1000, Low: ptr(1), Closed: "left",
		Doc: "the most iterations (CG) or epochs (SGD)",
		set: func(o *ridge.Options, v paramValue) error { o.MaxIter = int(v.f); return nil }},
	{Name: "n_components", Type: typeInt, Default: nil, None: true, Low: ptr(1), High: ptr(ridge.MaxComponents), Closed: "both",
		Doc: "replace the rbf or poly kernel by a Nyström map of this many components; None: the exact kernel expansion; ignored by the linear and precomputed kernels",
		set: func(o *ridge.Options, v paramValue) error { o.NComponents = int(v.f); return nil }},
	{Name: "tau", Type: typeInt, Default: nil, None: true, Low: ptr(1), Closed: "left",
		Doc: "solver sgd: keep only the examples updated in the last tau steps in the kernel expansion; None: all",
		set: func(o *ridge.Options, v paramValue) error { o.Tau = int(v.f); return nil }},
	{Name: "eta0", Type: typeReal, Default: nil, None: true, Low: ptr(0), Closed: "neither",
		Doc: fmt.Sprintf("solver sgd: the step-size parameter p of η_t = p/(α·t); None: %g", ridge.DefaultEta0),
		set: func(o *ridge.Options, v paramValue) error { o.Eta0 = v.f; return nil }},
	{Name: "empirical_weight", Type: typeReal, Default: 0.0, Low: ptr(0), High: ptr(1), Closed: "both",
		Doc: "weight w of the data-driven measure D (see reference) in the reference measure (1 − w)·uniform + w·D; 0: the thesis' uniform measure over Y",
		set: func(o *ridge.Options, v paramValue) error { o.EmpiricalWeight = v.f; return nil }},
	{Name: "reference", Type: typeEnum, Default: "empirical", Options: ridge.ReferenceNames(),
		Doc: "the data-driven measure that empirical_weight mixes in: empirical (the training structures) or product (the space's measure with their marginals: independent labels, per-node fugacities of subtrees)",
		set: func(o *ridge.Options, v paramValue) error {
			r, err := ridge.ParseReference(v.s)
			o.Reference = r
			return err
		}},
	{Name: "random_state", Type: typeSeed, Default: nil, None: true,
		Doc: "seeds the Nyström landmarks and SGD's example order",
		set: func(o *ridge.Options, v paramValue) error { o.Seed = v.u; return nil }},
	{Name: "trace_objective", Type: typeBool, Default: false, Internal: true,
		Doc: "solver sgd: evaluate J after every epoch for the progress callback (set by verbose)",
		set: func(o *ridge.Options, v paramValue) error { o.TraceObjective = v.b; return nil }},
})

// probSamplers are the sampler parameter's values, in the order users read them.
var probSamplers = []string{"auto", "exact", "cftp", "metropolis", "local", "mixed"}

// probParams are ProbabilisticStructured's parameters (cp_prob_fit). The sampler keys burn_in,
// thinning and n_chains, the solver and Adam's batch_size are internal: Go callers and tests set them.
var probParams = int32Bounded([]param[prob.Options]{
	{Name: "alpha", Type: typeReal, Default: nil, None: true, NoneSentinel: ptr(0), Low: ptr(check.MinAlpha), High: ptr(check.MaxAlpha), Closed: "both",
		Doc: "regularisation strength λ, the weight of ‖W‖² against the mean negative log-likelihood; None: 1/(2·Σ sample weights) (1/Σ on two classes), the objective of scikit-learn's LogisticRegression at C = 1",
		set: func(o *prob.Options, v paramValue) error { o.Alpha = v.f; return nil }},
	{Name: "fit_intercept", Type: typeBool, Default: true,
		Doc: "learn an unpenalised offset of the scores",
		set: func(o *prob.Options, v paramValue) error { o.Intercept = v.b; return nil }},
	{Name: "sampler", Type: typeEnum, Default: "auto", Options: probSamplers,
		Doc: "how E[ψ] is computed during fit: exact inference or a sampler",
		set: func(o *prob.Options, v paramValue) error {
			_, err := setSampler(&o.Inference, "sampler", v.s, true)
			return err
		}},
	{Name: "n_samples", Type: typeInt, Default: prob.DefaultSamples, Low: ptr(1), Closed: "left",
		Doc: "samples per row and gradient when inference is sampled",
		set: func(o *prob.Options, v paramValue) error { o.Inference.Samples = int(v.f); return nil }},
	{Name: "max_iter", Type: typeInt, Default: 200, Low: ptr(1), Closed: "left",
		Doc: "the most iterations of L-BFGS or Adam",
		set: func(o *prob.Options, v paramValue) error { o.MaxIter = int(v.f); return nil }},
	{Name: "tol", Type: typeReal, Default: 1e-6, Low: ptr(0), High: ptr(1), Closed: "neither",
		Doc: "stop when the relative gradient (Adam: the averaged iterate's relative move) is below tol",
		set: func(o *prob.Options, v paramValue) error { o.Tol = v.f; return nil }},
	{Name: "learning_rate", Type: typeReal, Default: nil, None: true, Low: ptr(0), Closed: "neither",
		Doc: fmt.Sprintf("Adam's base step η (step t uses η/√t); None: %g", prob.DefaultLearningRate),
		set: func(o *prob.Options, v paramValue) error { o.LearningRate = v.f; return nil }},
	{Name: "random_state", Type: typeSeed, Default: nil, None: true,
		Doc: "seeds sampled inference and minibatches",
		set: func(o *prob.Options, v paramValue) error { o.Seed = v.u; return nil }},
	{Name: "solver", Type: typeEnum, Default: "auto", Options: prob.SolverNames(), Internal: true,
		Doc: "auto (L-BFGS with exact inference, else Adam), lbfgs or adam",
		set: func(o *prob.Options, v paramValue) error {
			s, err := prob.ParseSolver(v.s)
			o.Solver = s
			return err
		}},
	{Name: "batch_size", Type: typeInt, Default: 0, Low: ptr(0), Closed: "left", Internal: true,
		Doc: "Adam's minibatch size; 0: all rows",
		set: func(o *prob.Options, v paramValue) error { o.BatchSize = int(v.f); return nil }},
	{Name: "burn_in", Type: typeInt, Default: 0, Low: ptr(0), Closed: "left", Internal: true,
		Doc: "chain steps before the first sample; 0: the space's default",
		set: func(o *prob.Options, v paramValue) error { o.Inference.Sampler.BurnIn = int(v.f); return nil }},
	{Name: "thinning", Type: typeInt, Default: 0, Low: ptr(0), Closed: "left", Internal: true,
		Doc: "chain steps between samples; 0: the space's default",
		set: func(o *prob.Options, v paramValue) error { o.Inference.Sampler.Thin = int(v.f); return nil }},
	{Name: "n_chains", Type: typeInt, Default: nil, Low: ptr(1), Closed: "left", Internal: true,
		Doc: "independent chains per row; unset: one per block of samples",
		set: func(o *prob.Options, v paramValue) error { o.Inference.Sampler.Chains = int(v.f); return nil }},
})

// schemaJSON is the tables as the JSON document python/combpred/_schema.json holds.
func schemaJSON() ([]byte, error) {
	doc := struct {
		Note       string                 `json:"note"`
		Ridge      []param[ridge.Options] `json:"ridge"`
		Prob       []param[prob.Options]  `json:"prob"`
		Enums      map[string][]string    `json:"enums"`
		Statuses   map[string]int         `json:"statuses"`
		Defaults   map[string]float64     `json:"query_defaults"`
		Decoders   map[string][2]int      `json:"decoder_limits"`
		Partitions map[string]int         `json:"partition_limits"`
		LogZ       map[string]int         `json:"logz_limits"`
	}{
		Note:  "generated from capi/schema.go by COMBPRED_UPDATE_SCHEMA=1 go test ./capi -run TestSchemaFile; do not edit",
		Ridge: ridgeParams,
		Prob:  probParams,
		// enum values in the order of the core's codes
		Enums: map[string][]string{
			"log_z_methods":      prob.LogZMethodNames(),
			"fpras_schedules":    prob.FPRASScheduleNames(),
			"decoder_modes":      space.DecoderModeNames(),
			"marginal_scales":    ridge.MarginalScaleNames(),
			"marginal_estimates": ridge.MarginalEstimateNames(),
			"decode_sources":     ridge.DecodeSourceNames(),
		},
		Statuses: map[string]int{"ok": cpOK, "value": cpValue, "type": cpType, "cancelled": cpCancelled,
			"internal": cpInternal, "memory": cpMemory},
		// inline_rows: queries of at most this many rows run inline, not cancellable (smallQuery):
		// Python skips its Ctrl-C plumbing for them; a model's own inline_rows (its info) is
		// smaller where decoding a row is expensive. exact_unknowns: solver="auto"'s limit for the
		// exact linear solve, which StructuredRidge's docstring states (checked by a test).
		// chain_report_columns: the values per row of the chain report of cp_prob_marginals and
		// cp_prob_sample. spread_weight_floor: the least share of the largest sample weight a row
		// counts for in the features' spreads that cp_prob_fit_sums takes. symmetry_tol: the
		// relative tolerance of the symmetry check of a precomputed kernel, which Python applies to
		// a callable kernel's matrices too. brute_force_max, auto_brute_force_max: the most
		// structures exact inference sums over, and the most the automatic choices sum over.
		// max_exact_unknowns: the most unknowns solver="exact" factors; max_dense_dim: the largest
		// d for which StructuredRidge holds S densely; max_threads_per_cpu: the clamp of n_jobs;
		// max_marginal_scale, min_marginal_scale: the largest and smallest factor predict_marginals'
		// scale takes (all five stated in docstrings, checked by tests); min_procs: the fewest Ps
		// the runtime keeps, which Python's address-space check counts before it loads the core;
		// room_check_from: the least request whose room under a cgroup's memory limit the budget weighs, which Python's
		// outputs from that size on ask the core about; mapping_slack_address_space, mapping_slack_data:
		// the room the budget keeps for what a call maps besides its requests (the heap's growth, a
		// new thread) under RLIMIT_AS and RLIMIT_DATA, which Python's start-up check asks for
		// besides the runtime's own; thread_mapping: what a new thread maps under RLIMIT_AS, of
		// which that check asks for one more on a loaded machine.
		Defaults: map[string]float64{"epsilon": prob.DefaultEpsilon, "delta": prob.DefaultDelta,
			"max_samples": prob.DefaultMaxSamples, "inline_rows": smallQuery, "exact_unknowns": ridge.ExactLimit,
			"chain_report_columns": prob.MarginalsReportCols, "spread_weight_floor": prob.SpreadWeightFloor,
			"symmetry_tol": ridge.SymmetryTol, "brute_force_max": prob.BruteForceMax,
			"auto_brute_force_max": prob.AutoBruteForceMax, "max_exact_unknowns": ridge.MaxExactUnknowns,
			"max_dense_dim": ridge.MaxDim, "max_threads_per_cpu": maxThreadsPerCPU, "max_marginal_scale": ridge.MaxScaleFactor,
			"min_marginal_scale": ridge.MinScaleFactor, "min_procs": minProcs, "room_check_from": budget.RoomCheckFrom,
			"mapping_slack_address_space": float64(budget.MappingSlack[0]), "mapping_slack_data": float64(budget.MappingSlack[1]),
			"thread_mapping": budget.ThreadMapping},
		// per space kind with a decoder parameter: the largest size "auto" decodes exactly, and
		// the largest "exact" accepts, which the spaces' docstrings state (checked by a test)
		Decoders: space.DecoderLimits(),
		// per space kind whose exact log Z is a size-limited dynamic programme, its largest size;
		// ProbabilisticStructured's docstring states them (checked by a test)
		Partitions: space.PartitionLimits(),
		// per space kind that computes log Z alone beyond those sizes, its largest size
		LogZ: space.LogZLimits(),
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
