package main

/*
#include <stdint.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// fitArgs are the arguments common to cp_ridge_fit and cp_ridge_partial_fit, checked and viewed.
type fitArgs struct {
	sp   space.Space
	X    []float64
	csr  *xmat.CSR // a sparse X (the _csr calls), X then nil
	m, n int
	y    []int64
	// yPtr and yInd are the positions of the targets' ones (the _sparse_y calls), y then nil
	yPtr, yInd []int64
	weights    []float64
	opt        ridge.Options
}

// run fits on a worker (onWorker) with a stop flag of its own, which fit reads through a.opt, and
// stores the new model's handle in *out.
func (a *fitArgs) run(out *C.int64_t, fit func() (*ridge.Model, error)) C.int {
	var md *ridge.Model
	a.opt.Stop = new(cancel.Flag)
	err := onWorker(&a.opt.Progress, a.opt.Stop, func() (err error) {
		md, err = fit()
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

func readFitArgs(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*fitArgs, error) {
	return readFitArgsOf(spaceHandle, m, n, denseX(x, m, n), denseY(ys, m, w), sampleWeight, params, progress, ctx, out)
}

// denseX views X (m × n) for readFitArgsOf.
func denseX(x *C.double, m, n C.int64_t) func(*fitArgs) error {
	return func(a *fitArgs) (err error) {
		a.X, err = f64s("X", x, m, n)
		return err
	}
}

// denseY views the structures Y (m rows of w values) for readFitArgsOf.
func denseY(ys *C.int64_t, m, w C.int64_t) func(*fitArgs) error {
	return func(a *fitArgs) (err error) {
		a.y, err = rowsOf(a.sp, "Y", ys, m, w)
		return err
	}
}

// onesY views the positions of the ones of 0/1 targets (m + 1 row pointers, nnz column indices)
// for readFitArgsOf, and checks the values stored there (ridge.CheckOnes; NULL: all 1). FitSparseY
// checks the positions.
func onesY(yIndptr *C.int64_t, nnz C.int64_t, yIndices *C.int64_t, yValues *C.double, m C.int64_t) func(*fitArgs) error {
	return func(a *fitArgs) (err error) {
		if a.yPtr, err = i64s("Y's indptr", yIndptr, m+1); err != nil {
			return err
		}
		if a.yInd, err = i64s("Y's indices", yIndices, nnz); err != nil || yValues == nil {
			return err
		}
		values, err := f64s("Y's values", yValues, nnz)
		if err != nil {
			return err
		}
		return ridge.CheckOnes(a.yPtr, a.yInd, values)
	}
}

// readFitArgsOf is readFitArgs with X (m × n) viewed by readX, dense or sparse, and Y by readY.
func readFitArgsOf(spaceHandle C.int64_t, m, n C.int64_t, readX, readY func(*fitArgs) error,
	sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*fitArgs, error) {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return nil, err
	}
	if err := outPtr("model handle", out); err != nil {
		return nil, err
	}
	a := &fitArgs{sp: sp, m: int(m), n: int(n)}
	if err := readX(a); err != nil {
		return nil, err
	}
	if err := readY(a); err != nil {
		return nil, err
	}
	if sampleWeight != nil {
		if a.weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return nil, err
		}
	}
	ps, err := goString(params, "the parameter string")
	if err != nil {
		return nil, err
	}
	if a.opt, err = parseFitParams(ps, int(n)); err != nil {
		return nil, err
	}
	a.opt.Progress = progressFunc(progress, ctx)
	return a, nil
}

// optionalModel returns the model of handle h, or nil for 0.
func optionalModel(h C.int64_t) (*ridge.Model, error) {
	if h == 0 {
		return nil, nil
	}
	return modelOf(int64(h))
}

// cp_ridge_fit fits a model; init is the handle of a model to warm-start the iterative solvers
// from (see ridge.Options.Init; an incompatible one is ignored), or 0.
//
//export cp_ridge_fit
func cp_ridge_fit(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := readFitArgs(spaceHandle, x, m, n, ys, w, sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	if a.opt.Init, err = optionalModel(init); err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) { return ridge.Fit(a.sp, a.X, a.m, a.n, a.y, a.weights, a.opt) })
}

// cp_ridge_fit_sparse_y is cp_ridge_fit for a multi-label space whose m targets are given by the
// positions of their ones: y_indptr (m + 1 values from 0 to nnz) and y_indices (nnz label indices,
// increasing within each row), with the values stored there, y_values (nnz, each 1; NULL: all 1):
// a CSR matrix of the ones. The linear model solved by
// conjugate gradients keeps them sparse (memory O(nnz) instead of m × d); other fits receive them
// as dense rows (see ridge.FitSparseY).
//
//export cp_ridge_fit_sparse_y
func cp_ridge_fit_sparse_y(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, yIndptr *C.int64_t, nnz C.int64_t, yIndices *C.int64_t,
	yValues *C.double, sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := readFitArgsOf(spaceHandle, m, n, denseX(x, m, n), onesY(yIndptr, nnz, yIndices, yValues, m), sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	if a.opt.Init, err = optionalModel(init); err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) {
		return ridge.FitSparseY(a.sp, a.X, a.m, a.n, a.yPtr, a.yInd, a.weights, a.opt)
	})
}

// cp_ridge_partial_fit continues the model prev (0 to start one) with a chunk of examples and
// returns a new model handle in *out (see ridge.PartialFit); prev is left unchanged and valid.
//
//export cp_ridge_partial_fit
func cp_ridge_partial_fit(prev C.int64_t, spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := readFitArgs(spaceHandle, x, m, n, ys, w, sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	pm, err := optionalModel(prev)
	if err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) { return ridge.PartialFit(pm, a.sp, a.X, a.m, a.n, a.y, a.weights, a.opt) })
}

// cp_ridge_check_partial_fit refuses, from the parameter string params alone, the parameters no
// partial_fit runs with (ridge.CheckPartialFit: precomputed kernels, solver=cg, solver=exact for a
// kernel expansion, the empirical measure on SGD), so that partial_fit is not offered for them.
// An invalid parameter string passes: it is no reason to withhold partial_fit, whose call refuses
// it naming the parameter, as fit does (refused here, alpha = 1e308 or tol=None with the exact
// solver hid partial_fit behind an AttributeError).
//
//export cp_ridge_check_partial_fit
func cp_ridge_check_partial_fit(params *C.char) (rc C.int) {
	defer guard(&rc)
	opt, err := paramsOf(params, 1) // the number of features sets only gamma's default
	if err != nil {
		return cpOK
	}
	return status(ridge.CheckPartialFit(opt))
}

// checkRidgeParams parses the parameter string params and applies check to the options, for the
// calls that refuse a fit from its parameters alone.
func checkRidgeParams(params *C.char, check func(ridge.Options) error) error {
	opt, err := paramsOf(params, 1) // the number of features sets only gamma's default
	if err != nil {
		return err
	}
	return check(opt)
}

// cp_ridge_free releases a StructuredRidge model handle.
//
//export cp_ridge_free
func cp_ridge_free(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(freeHandle(int64(h), "model"))
}

// cp_ridge_space writes a new handle of the model's own space into out.
//
//export cp_ridge_space
func cp_ridge_space(h C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err == nil {
		err = outPtr("space handle", out)
	}
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md.Space))
	return cpOK
}

// ridgeView resolves a StructuredRidge model handle for the calls of modelcalls.go.
func ridgeView(h C.int64_t) (model.Model, error) {
	md, err := modelOf(int64(h))
	if err != nil {
		return nil, err
	}
	return md, nil
}

// cp_ridge_decision writes the scores u(x) of q inputs (q × n) into out (q × d).
//
//export cp_ridge_decision
func cp_ridge_decision(h C.int64_t, x *C.double, q, n C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(decisionCall(ridgeView, h, x, q, n, out, d))
}

// cp_ridge_predict writes the decoded structures of q inputs (q × n) into out (q × w), a chunk of
// rows at a time; cancellable through the interrupt poll.
//
//export cp_ridge_predict
func cp_ridge_predict(h C.int64_t, x *C.double, q, n C.int64_t, out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(predictCall(ridgeView, h, x, q, n, out, w))
}

// cp_ridge_check_marginals refuses the estimate and scale codes and factor of cp_ridge_marginals
// that no model fitted over the space with the parameter string params takes, whatever its data
// (ridge.CheckFitMarginals: a factor out of range, the tilted estimate at the noise-free scale, or
// on a space without exact inference under a measure with a uniform part), so that a fit whose
// decision rule reads them refuses them before it starts.
//
//export cp_ridge_check_marginals
func cp_ridge_check_marginals(spaceHandle C.int64_t, params *C.char, estimate, scale C.int64_t, factor C.double) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return status(err)
	}
	est, sc, err := marginalCodes(estimate, scale)
	if err != nil {
		return status(err)
	}
	return status(checkRidgeParams(params, func(opt ridge.Options) error {
		return ridge.CheckFitMarginals(sp, opt, est, sc, float64(factor))
	}))
}

// marginalCodes parses the estimate and scale codes of cp_ridge_marginals.
func marginalCodes(estimate, scale C.int64_t) (ridge.MarginalEstimate, ridge.MarginalScale, error) {
	est, err := ridge.ParseMarginalEstimate(int64(estimate))
	if err != nil {
		return 0, 0, err
	}
	sc, err := ridge.ParseMarginalScale(int64(scale))
	return est, sc, err
}

// marginalQuery parses and checks the estimate and scale codes and factor of cp_ridge_marginals.
func marginalQuery(estimate, scale C.int64_t, factor C.double) (ridge.MarginalEstimate, ridge.MarginalScale, error) {
	est, sc, err := marginalCodes(estimate, scale)
	if err != nil {
		return 0, 0, err
	}
	return est, sc, ridge.CheckMarginalQuery(est, sc, float64(factor))
}

// cp_ridge_marginals writes the model's estimates of E[ψ(y) | x] for q inputs (q × n) into out
// (q × d) when out is not NULL, and the structures decoded from them, argmax_y ⟨m̂(x) − p, ψ(y)⟩,
// into ys (q × w) when ys is not NULL; at least one of the two (docs/design.md §2a). estimate is
// the code of the estimate (the schema's marginal_estimates: 0 linear, 1 tilted, §2c), scale the
// code of the estimates' scale (the schema's marginal_scales: 0 noise_free, 1 unit) and factor
// multiplies it (positive; 1 leaves it). A chunk of rows at a time; cancellable through the
// interrupt poll.
//
//export cp_ridge_marginals
func cp_ridge_marginals(h C.int64_t, x *C.double, q, n, estimate, scale C.int64_t, factor C.double, out *C.double, d C.int64_t, ys *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := f64s("X", x, q, n)
	if err != nil {
		return status(err)
	}
	return status(ridgeMarginals(md, xmat.DenseRows(X, int(q), int(n)), []region{inputOf("X", X)}, estimate, scale, factor, out, d, ys, w))
}

// ridgeMarginals is cp_ridge_marginals (and its _csr twin) once the model and X, whose memory is
// ins, are resolved.
func ridgeMarginals(md *ridge.Model, X xmat.Rows, ins []region, estimate, scale C.int64_t, factor C.double, out *C.double, d C.int64_t, ys *C.int64_t, w C.int64_t) error {
	est, sc, err := marginalQuery(estimate, scale, factor)
	if err != nil {
		return err
	}
	if out == nil && ys == nil {
		return errors.New("marginals: both outputs are NULL; pass the marginals buffer, the structures buffer or both")
	}
	q := C.int64_t(X.Q)
	var M []float64
	if out != nil {
		if M, err = dimOut(md.Space, "marginals output", out, q, d); err != nil {
			return err
		}
	}
	var Y []int64
	if ys != nil {
		if Y, err = rowsOf(md.Space, "structures output", ys, q, w); err != nil {
			return err
		}
	}
	if err := disjoint(append(ins, outputOf("marginals output", M), outputOf("structures output", Y))...); err != nil {
		return err
	}
	if q == 0 {
		return nil
	}
	return cancellable(int64(q) <= predictInlineRows(md), func(stop *cancel.Flag) error {
		return md.MarginalsRows(X, M, Y, est, sc, float64(factor), stop)
	})
}

// cp_ridge_max_margins writes into out (q × d) the max-marginal margins of the vector the model
// decodes for q inputs (q × n): per coordinate of ψ, the best objective with the coordinate at its
// largest value minus the best with it at its smallest (±Inf for coordinates constant over Y).
// from is the code of the decoded vector (the schema's decode_sources: 0 the scores, 1 the centred
// marginal estimates). It needs an exact decoder; cancellable through the interrupt poll.
//
//export cp_ridge_max_margins
func cp_ridge_max_margins(h C.int64_t, x *C.double, q, n, from C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := f64s("X", x, q, n)
	if err != nil {
		return status(err)
	}
	return status(ridgeMaxMargins(md, xmat.DenseRows(X, int(q), int(n)), []region{inputOf("X", X)}, from, out, d))
}

// ridgeMaxMargins is cp_ridge_max_margins (and its _csr twin) once the model and X are resolved.
// ins are X's memory regions, which the output may not overlap.
func ridgeMaxMargins(md *ridge.Model, X xmat.Rows, ins []region, from C.int64_t, out *C.double, d C.int64_t) error {
	src, err := ridge.ParseDecodeSource(int64(from))
	if err != nil {
		return err
	}
	M, err := dimOut(md.Space, "max margins output", out, C.int64_t(X.Q), d)
	if err != nil {
		return err
	}
	if err := disjoint(append(ins, outputOf("max margins output", M))...); err != nil {
		return err
	}
	return cancellable(X.Q == 0, func(stop *cancel.Flag) error { return md.MaxMarginsRows(X, M, src, stop) })
}

// cp_ridge_coef copies the linear model's coefficients (features × d, intercept excluded) and, when
// intercept is not NULL and the model has one, the intercept (d values).
//
//export cp_ridge_coef
func cp_ridge_coef(h C.int64_t, out *C.double, rows, cols C.int64_t, intercept *C.double) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	if md.Kernel.Kind != kernel.Linear {
		return status(fmt.Errorf("coef_ exists only for the linear kernel, this model uses %v", md.Kernel.Kind))
	}
	return status(writeCoef(md.Coef, md.NFeatures, md.Intercept, out, rows, cols, intercept))
}

// cp_ridge_to_bytes writes the model's bytes into buf when capacity suffices; *needed always
// receives the size, so callers ask once with capacity 0 and again with a buffer that size.
//
//export cp_ridge_to_bytes
func cp_ridge_to_bytes(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(toBytesCall(ridgeView, h, buf, capacity, needed))
}

// cp_ridge_from_bytes builds a StructuredRidge model from the bytes of cp_ridge_to_bytes (versioned
// and checksummed; corrupt bytes are an error) and writes its handle into out. Bytes of more than
// 32,768 are decoded cancellably, through the interrupt poll: their space (a large DAG) can take
// seconds to build.
//
//export cp_ridge_from_bytes
func cp_ridge_from_bytes(buf *C.uint8_t, length C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(fromBytesCall("model", ridge.UnmarshalModelUntil, buf, length, out))
}
