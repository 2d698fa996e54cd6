package main

/*
#include <stdint.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// The C ABI of ProbabilisticStructured (core/prob): p(y | x) ∝ exp(⟨Wᵀx̃, ψ(y)⟩). Models are
// handles of their own kind ("prob model"): passing a StructuredRidge handle is a type error.
// Query calls take a "key=value;..." parameter string (see parseProbQuery); NULL means defaults.

// progressFunc adapts a C progress callback (nil: none) to the solvers' Progress option.
func progressFunc(progress C.cp_progress_fn, ctx unsafe.Pointer) func(int, float64, float64) bool {
	if progress == nil {
		return nil
	}
	return func(it int, objective, relGrad float64) bool {
		return C.cp_call_progress(progress, C.int64_t(it), C.double(objective), C.double(relGrad), ctx) == 0
	}
}

// cp_prob_fit fits a model by MAP on X (m × n) and structures Y (m × w), with optional sample
// weights (NULL: all 1), fit parameters (see parseProbFitParams), the handle of a model to
// warm-start from (see prob.Options.Init; an incompatible one is ignored), or 0, and a progress
// callback (NULL: none; a nonzero return cancels the fit with status 3).
//
//export cp_prob_fit
func cp_prob_fit(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := probFit(spaceHandle, x, m, n, ys, w, sampleWeight, params, init, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

func probFit(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*prob.Model, error) {
	X, err := f64s("X", x, m, n)
	if err != nil {
		return nil, err
	}
	return probFitWith(spaceHandle, m, ys, w, sampleWeight, params, init, progress, ctx, out,
		func(sp space.Space, opt prob.Options, y []int64, weights []float64) (*prob.Model, error) {
			return prob.Fit(sp, X, int(m), int(n), y, weights, opt)
		})
}

// probFitWith reads the arguments of a fit on m examples other than X and runs fit, which
// fits the model on X (dense or sparse), on the worker.
func probFitWith(spaceHandle C.int64_t, m C.int64_t, ys *C.int64_t, w C.int64_t, sampleWeight *C.double, params *C.char,
	init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t,
	fit func(sp space.Space, opt prob.Options, y []int64, weights []float64) (*prob.Model, error)) (*prob.Model, error) {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return nil, err
	}
	if err := outPtr("model handle", out); err != nil {
		return nil, err
	}
	y, err := rowsOf(sp, "Y", ys, m, w)
	if err != nil {
		return nil, err
	}
	var weights []float64
	if sampleWeight != nil {
		if weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return nil, err
		}
	}
	opt, err := probFitOptions(sp, params, init)
	if err != nil {
		return nil, err
	}
	if err := checkExactInference(sp, opt); err != nil {
		return nil, err
	}
	opt.Progress = progressFunc(progress, ctx)
	// Ctrl-C reaches the sampling inside an iteration (which took seconds), not only the next one.
	stop := new(cancel.Flag)
	opt.Inference.Sampler.Stop = stop
	var md *prob.Model
	err = onWorker(&opt.Progress, stop, func() (err error) {
		md, err = fit(sp, opt, y, weights)
		return err
	})
	if md != nil {
		md.Inference.Sampler.Stop = nil // the flag belongs to this call, not to the model
	}
	return md, err
}

// probFitOptions reads the parameter string of a fit on sp and the handle of the model it
// warm-starts from (0: none), and checks the sampler against the space.
func probFitOptions(sp space.Space, params *C.char, init C.int64_t) (prob.Options, error) {
	ps, err := goString(params, "the parameter string")
	if err != nil {
		return prob.Options{}, err
	}
	opt, err := parseProbFitParams(ps)
	if err != nil {
		return opt, err
	}
	if init != 0 {
		if opt.Init, err = probModelOf(int64(init)); err != nil {
			return opt, err
		}
	}
	return opt, checkSampler(sp, opt.Inference.Sampler)
}

// cp_prob_fit_plan writes, as UTF-8 text into buf (as cp_space_info: *needed receives the size),
// one sentence saying how cp_prob_fit with params would compute E[ψ] on m examples of the space:
// exact inference, or its sampler, samples per input and gradient and, for a Markov chain, the
// burn-in, the thinning and the Markov steps of a gradient. A verbose fit prints it first.
//
//export cp_prob_fit_plan
func cp_prob_fit_plan(spaceHandle C.int64_t, m C.int64_t, params *C.char, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return status(err)
	}
	if m < 1 {
		return status(fmt.Errorf("m = %d: a fit needs at least one example", int64(m)))
	}
	opt, err := probFitOptions(sp, params, 0)
	if err == nil {
		err = checkExactInference(sp, opt) // what the fit would refuse, the plan refuses
	}
	if err != nil {
		return status(err)
	}
	plan := prob.Plan(sp, int(m), opt)
	return status(writeBytes("plan", func() ([]byte, error) { return []byte(plan), nil }, buf, capacity, needed))
}

// checkExactInference refuses sampler=exact on a space without exact inference, naming the key.
func checkExactInference(sp space.Space, opt prob.Options) error {
	if opt.Inference.Method == prob.InferExact && !prob.HasExact(sp) {
		return fmt.Errorf("parameter sampler=exact: the %s space (log|Y| = %.1f) has no exact inference; use auto, cftp, metropolis or a local chain",
			sp.Kind(), sp.LogCount())
	}
	return nil
}

// cp_prob_free releases a ProbabilisticStructured model handle.
//
//export cp_prob_free
func cp_prob_free(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(freeHandle(int64(h), "prob model"))
}

// cp_prob_coef copies W without its intercept row (features × d) and, when intercept is not NULL,
// the intercept (d values; zeros without one).
//
//export cp_prob_coef
func cp_prob_coef(h C.int64_t, out *C.double, rows, cols C.int64_t, intercept *C.double) (rc C.int) {
	defer guard(&rc)
	md, err := probModelOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(writeCoef(md.Coef, md.NFeatures, md.Intercept, out, rows, cols, intercept))
}

// probInputs resolves a model handle and views q inputs of n features.
func probInputs(h C.int64_t, x *C.double, q, n C.int64_t) (*prob.Model, []float64, error) {
	md, err := probModelOf(int64(h))
	if err != nil {
		return nil, nil, err
	}
	X, err := f64s("X", x, q, n)
	return md, X, err
}

// probView resolves a ProbabilisticStructured model handle for the calls of modelcalls.go.
func probView(h C.int64_t) (model.Model, error) {
	md, err := probModelOf(int64(h))
	if err != nil {
		return nil, err
	}
	return md, nil
}

// cp_prob_decision writes the scores u = Wᵀx̃ of q inputs (q × d).
//
//export cp_prob_decision
func cp_prob_decision(h C.int64_t, x *C.double, q, n C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(decisionCall(probView, h, x, q, n, out, d))
}

// cp_prob_predict writes the mode argmax_y p(y | x) of q inputs, by the space's decoder (q × w).
//
//export cp_prob_predict
func cp_prob_predict(h C.int64_t, x *C.double, q, n C.int64_t, out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(predictCall(probView, h, x, q, n, out, w))
}

// cp_prob_marginals writes E_{p(·|x)}[ψ] of q inputs (q × d), and a chain report of each row into
// report (q × 2): the number of Metropolis chains that never moved and cannot vouch for their state
// (0 for exact marginals and other samplers), and the mixing check's verdict: 1 when a chain
// started away from the mode (check_mixing=1, chain samplers) found another mean of ψ, the chains
// did not mix; 0 when it agreed; -1 when it did not run (exact marginals, exact samples, or no check
// asked for). Parameters: method (auto, exact, sampled), n_samples, check_mixing (0 or 1, default
// 0), random_state (each row is seeded by it and the row's values, so that its estimate does not
// depend on the other rows, and blocks of rows estimate what one call on all of them does),
// sampler, burn_in, thinning, n_chains; the defaults are the model's fit-time inference options.
//
//export cp_prob_marginals
func cp_prob_marginals(h C.int64_t, x *C.double, q, n C.int64_t, params *C.char, out *C.double, d C.int64_t,
	report *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, X, err := probInputs(h, x, q, n)
	if err != nil {
		return status(err)
	}
	return status(probMarginals(md, xmat.DenseRows(X, int(q), int(n)), []region{inputOf("X", X)}, params, out, d, report))
}

// chainReportOutput names the per-row chain report of cp_prob_marginals and cp_prob_sample.
const chainReportOutput = "chain report output"

// probMarginals fills out (q × d) with E_{p(·|x)}[ψ] of the rows X (whose memory is ins), and report
// (q × 2) with their chain reports, for cp_prob_marginals and cp_prob_marginals_csr.
func probMarginals(md *prob.Model, X xmat.Rows, ins []region, params *C.char, out *C.double, d C.int64_t, report *C.int64_t) error {
	q := C.int64_t(X.Q)
	dst, err := dimOut(md.Space, "marginals output", out, q, d)
	if err != nil {
		return err
	}
	chains, err := i64s(chainReportOutput, report, q, prob.MarginalsReportCols)
	if err != nil {
		return err
	}
	if err := disjoint(append(ins, outputOf("marginals output", dst), outputOf(chainReportOutput, chains))...); err != nil {
		return err
	}
	qo, err := queryOf(md, params, queryMarginals)
	if err != nil {
		return err
	}
	if qo.Inference.Method == prob.InferExact && !prob.HasExact(md.Space) {
		return fmt.Errorf("parameter method=exact: the %s space (log|Y| = %.1f) has no exact marginals; use sampled",
			md.Space.Kind(), md.Space.LogCount())
	}
	view := *md // a read-only copy with the call's inference options
	view.Inference = qo.Inference
	return cancellable(false, func(stop *cancel.Flag) error {
		view.Inference.Sampler.Stop = stop
		return view.MarginalsRows(X, qo.Seed, dst, chains)
	})
}

// queryOf parses a query call's parameters against the model and checks its sampler.
func queryOf(md *prob.Model, params *C.char, call probQuery) (queryOptions, error) {
	ps, err := goString(params, "the parameter string")
	if err != nil {
		return queryOptions{}, err
	}
	qo, err := parseProbQuery(ps, call, md.Inference)
	if err == nil {
		err = checkSampler(md.Space, qo.Inference.Sampler)
	}
	return qo, err
}

// cp_prob_sample draws count structures from p(· | x_i) for each of q inputs into out
// (q × count × w, input i's samples first), and a chain report of each row into report (q × 2), as
// cp_prob_marginals writes it: the number of Metropolis chains that never moved and cannot vouch
// for their state, and the mixing check's verdict on the samples' mean of ψ (1 disagreed, 0
// agreed, -1 not run; its chain's samples are not returned). Parameters: check_mixing (0 or 1,
// default 0), random_state, sampler, burn_in, thinning, n_chains (defaults: the model's fit-time
// sampler).
//
//export cp_prob_sample
func cp_prob_sample(h C.int64_t, x *C.double, q, n, count C.int64_t, params *C.char, out *C.int64_t, w C.int64_t,
	report *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, X, err := probInputs(h, x, q, n)
	if err != nil {
		return status(err)
	}
	if count < 1 {
		return status(fmt.Errorf("n_samples must be ≥ 1, got %d", int64(count)))
	}
	if int64(w) != int64(md.Space.Width()) {
		return status(fmt.Errorf("sample output has %d columns, the space encodes a structure in %d", int64(w), md.Space.Width()))
	}
	dst, err := i64s("sample output", out, q, count, w)
	if err != nil {
		return status(err)
	}
	chains, err := i64s(chainReportOutput, report, q, prob.MarginalsReportCols)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("X", X), outputOf("sample output", dst), outputOf(chainReportOutput, chains)); err != nil {
		return status(err)
	}
	qo, err := queryOf(md, params, querySample)
	if err != nil {
		return status(err)
	}
	return status(cancellable(false, func(stop *cancel.Flag) error {
		opt := qo.Inference.Sampler
		opt.Stop = stop
		return md.SampleRows(xmat.DenseRows(X, int(q), int(n)), int(count), qo.Seed, opt, qo.Inference.DispersedCheck, dst, chains)
	}))
}

// cp_prob_score_samples writes log p(y_i | x_i) of q pairs (X row i, Y row i) into out (q values),
// with log Z by the parameters of cp_prob_log_partition, and into valid (q values) 1 where that
// log Z's guarantee applies and 0 where it does not (a Taylor estimate beyond its range, an FPRAS
// on a chain's samples), whose log p may lie anywhere, above 0 too.
//
//export cp_prob_score_samples
func cp_prob_score_samples(h C.int64_t, x *C.double, q, n C.int64_t, ys *C.int64_t, w C.int64_t, params *C.char, out *C.double, valid *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, X, err := probInputs(h, x, q, n)
	if err != nil {
		return status(err)
	}
	y, err := rowsOf(md.Space, "Y", ys, q, w)
	if err != nil {
		return status(err)
	}
	dst, err := f64s("score output", out, q)
	if err != nil {
		return status(err)
	}
	flags, err := i64s("validity output", valid, q)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("X", X), inputOf("Y", y), outputOf("score output", dst), outputOf("validity output", flags)); err != nil {
		return status(err)
	}
	qo, err := queryOf(md, params, queryLogZ)
	if err != nil {
		return status(err)
	}
	return status(cancellable(false, func(stop *cancel.Flag) error {
		opt := qo.LogZ
		opt.Sampler.Stop = stop
		return md.ScoreSamplesRows(xmat.DenseRows(X, int(q), int(n)), y, opt, dst, func(i int, ok bool) {
			flags[i] = 0
			if ok {
				flags[i] = 1
			}
		})
	}))
}

// The columns of cp_prob_log_partition's per-row details.
const (
	logZStatCols  = 3 // ε, δ, Taylor bound
	logZCountCols = 7 // method (1 exact, 2 fpras, 3 taylor), valid (0/1), stages, samples per stage, runs, samples, Markov steps
)

// cp_prob_log_partition writes log Z(x_i) of q inputs into out (q values) and, when not NULL, per
// row stats (q × 3: ε, δ of the FPRAS guarantee, the Taylor error bound; 0 where not applicable)
// and counts (q × 7: method used, whether its guarantee applies, FPRAS stages, samples per stage,
// runs, total samples, Markov steps or CFTP proposals). Parameters: method (auto, exact, fpras, taylor; auto is exact
// where the space allows and the FPRAS otherwise), epsilon and delta (in (0, 1); 0.1 and 0.25 by
// default), schedule (the FPRAS' schedule: auto, adaptive or thesis; auto is adaptive unless
// n_samples is given; the adaptive schedule reports 0 stages and samples per stage), n_samples
// (override of the thesis schedule's samples per stage), max_samples (the work bound: the thesis
// schedule's total samples, the adaptive one's structures drawn, every CFTP proposal and chain step),
// random_state, and the sampler keys (the FPRAS samples exactly by CFTP by default). Taylor
// estimates outside the proven range, and FPRAS estimates from Markov-chain samples, are returned
// with valid = 0.
//
//export cp_prob_log_partition
func cp_prob_log_partition(h C.int64_t, x *C.double, q, n C.int64_t, params *C.char, out *C.double,
	stats *C.double, counts *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, X, err := probInputs(h, x, q, n)
	if err != nil {
		return status(err)
	}
	dst, err := f64s("log_partition output", out, q)
	if err != nil {
		return status(err)
	}
	var s []float64
	var c []int64
	if stats != nil {
		if s, err = f64s("log_partition stats", stats, q, logZStatCols); err != nil {
			return status(err)
		}
	}
	if counts != nil {
		if c, err = i64s("log_partition counts", counts, q, logZCountCols); err != nil {
			return status(err)
		}
	}
	if err := disjoint(inputOf("X", X), outputOf("log_partition output", dst), outputOf("log_partition stats", s),
		outputOf("log_partition counts", c)); err != nil {
		return status(err)
	}
	qo, err := queryOf(md, params, queryLogZ)
	if err != nil {
		return status(err)
	}
	keep := func(i int, r prob.LogZResult) {
		if stats != nil {
			copy(s[i*logZStatCols:], []float64{r.Eps, r.Delta, r.Bound})
		}
		if counts != nil {
			valid := int64(0)
			if r.Valid {
				valid = 1
			}
			copy(c[i*logZCountCols:], []int64{int64(r.Method), valid, int64(r.Stages), int64(r.PerStage), int64(r.Runs), r.Samples, r.Steps})
		}
	}
	return status(cancellable(false, func(stop *cancel.Flag) error {
		opt := qo.LogZ
		opt.Sampler.Stop = stop
		return md.LogPartitionRows(xmat.DenseRows(X, int(q), int(n)), opt, dst, keep)
	}))
}

// cp_prob_to_bytes writes the model's bytes into buf when capacity suffices; *needed always
// receives the size, so callers ask once with capacity 0 and again with a buffer that size.
//
//export cp_prob_to_bytes
func cp_prob_to_bytes(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(toBytesCall(probView, h, buf, capacity, needed))
}

// cp_prob_from_bytes builds a ProbabilisticStructured model from the bytes of cp_prob_to_bytes
// (versioned and checksummed) and writes its handle into out. Bytes of more than 32,768 are decoded
// cancellably, through the interrupt poll: their space (a large DAG) can take seconds to build.
//
//export cp_prob_from_bytes
func cp_prob_from_bytes(buf *C.uint8_t, length C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(fromBytesCall("model", prob.UnmarshalModelUntil, buf, length, out))
}
