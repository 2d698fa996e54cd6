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
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
)

// fitArgs are the arguments common to cp_ridge_fit and cp_ridge_partial_fit, checked and viewed.
type fitArgs struct {
	sp      space.Space
	X       []float64
	m, n    int
	y       []int64
	weights []float64
	opt     ridge.Options
}

func readFitArgs(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*fitArgs, error) {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return nil, err
	}
	if err := outPtr("model handle", out); err != nil {
		return nil, err
	}
	a := &fitArgs{sp: sp, m: int(m), n: int(n)}
	if a.X, err = f64s("X", x, m, n); err != nil {
		return nil, err
	}
	if a.y, err = rowsOf(sp, "Y", ys, m, w); err != nil {
		return nil, err
	}
	if sampleWeight != nil {
		if a.weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return nil, err
		}
	}
	ps := ""
	if params != nil {
		ps = C.GoString(params)
	}
	if a.opt, err = parseFitParams(ps); err != nil {
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
	var md *ridge.Model
	a.opt.Stop = new(cancel.Flag)
	err = onWorker(&a.opt.Progress, a.opt.Stop, func() (err error) {
		md, err = ridge.Fit(a.sp, a.X, a.m, a.n, a.y, a.weights, a.opt)
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
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
	var md *ridge.Model
	a.opt.Stop = new(cancel.Flag)
	err = onWorker(&a.opt.Progress, a.opt.Stop, func() (err error) {
		md, err = ridge.PartialFit(pm, a.sp, a.X, a.m, a.n, a.y, a.weights, a.opt)
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

// cp_model_stream_info reports the model's Nyström components (0 without a map), the examples it
// was trained on, its SGD steps, and whether it holds the sufficient statistics with which
// cp_ridge_partial_fit continues it exactly (1) or not (0).
//
//export cp_model_stream_info
func cp_model_stream_info(h C.int64_t, nComponents, nSeen, nSteps, streaming *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	if nComponents == nil || nSeen == nil || nSteps == nil || streaming == nil {
		return status(errors.New("an output pointer is NULL"))
	}
	*nComponents, *nSeen, *nSteps = C.int64_t(md.Components()), C.int64_t(md.Seen), C.int64_t(md.Steps)
	*streaming = 0
	if md.Streaming() {
		*streaming = 1
	}
	return cpOK
}

// cp_model_free releases a StructuredRidge model handle.
//
//export cp_model_free
func cp_model_free(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(freeHandle(int64(h), "model"))
}

// cp_model_info reports the model's shapes and how its fit ended; kernelKind is 0 linear, 1 poly,
// 2 rbf, 3 precomputed. nDual is the number of training samples kept in the kernel expansion (0
// for linear and Nyström models; at most tau for SGD with truncation).
//
//export cp_model_info
func cp_model_info(h C.int64_t, nFeatures, dim, width, nDual, kernelKind, nIter, converged *C.int64_t,
	objective, relGrad *C.double) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	for _, p := range []*C.int64_t{nFeatures, dim, width, nDual, kernelKind, nIter, converged} {
		if p == nil {
			return status(errors.New("an output pointer is NULL"))
		}
	}
	if objective == nil || relGrad == nil {
		return status(errors.New("an output pointer is NULL"))
	}
	*nFeatures, *dim, *width = C.int64_t(md.NFeatures), C.int64_t(md.Space.Dim()), C.int64_t(md.Space.Width())
	*nDual = 0
	if md.Dual != nil {
		r, _ := md.Dual.Dims()
		*nDual = C.int64_t(r)
	}
	*kernelKind = C.int64_t(md.Kernel.Kind)
	*nIter = C.int64_t(md.Result.Iterations)
	*converged = 0
	if md.Result.Converged {
		*converged = 1
	}
	*objective, *relGrad = C.double(md.Result.Objective), C.double(md.Result.RelGrad)
	return cpOK
}

// cp_model_space writes a new handle of the model's own space into out.
//
//export cp_model_space
func cp_model_space(h C.int64_t, out *C.int64_t) (rc C.int) {
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
func ridgeView(h C.int64_t) (modelView, error) {
	md, err := modelOf(int64(h))
	if err != nil {
		return modelView{}, err
	}
	return modelView{space: md.Space, scores: md.Decision, mode: md.Predict, marshal: md.MarshalBinary}, nil
}

// cp_model_decision writes the scores u(x) of q inputs (q × n) into out (q × d).
//
//export cp_model_decision
func cp_model_decision(h C.int64_t, x *C.double, q, n C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(decisionCall(ridgeView, h, x, q, n, out, d))
}

// cp_model_predict writes the decoded structures of q inputs (q × n) into out (q × w), a chunk of
// rows at a time; cancellable through the interrupt poll.
//
//export cp_model_predict
func cp_model_predict(h C.int64_t, x *C.double, q, n C.int64_t, out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(predictCall(ridgeView, h, x, q, n, out, w))
}

// cp_model_marginals writes the model's estimates of E[ψ(y) | x] for q inputs (q × n) into out
// (q × d) when out is not NULL, and the structures decoded from them, argmax_y ⟨m̂(x) − p, ψ(y)⟩,
// into ys (q × w) when ys is not NULL; at least one of the two (docs/design.md §2a). A chunk of
// rows at a time; cancellable through the interrupt poll.
//
//export cp_model_marginals
func cp_model_marginals(h C.int64_t, x *C.double, q, n C.int64_t, out *C.double, d C.int64_t, ys *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := f64s("X", x, q, n)
	if err != nil {
		return status(err)
	}
	if out == nil && ys == nil {
		return status(errors.New("marginals: both outputs are NULL; pass the marginals buffer, the structures buffer or both"))
	}
	var M []float64
	if out != nil {
		if M, err = dimOut(md.Space, "marginals output", out, q, d); err != nil {
			return status(err)
		}
	}
	var Y []int64
	if ys != nil {
		if Y, err = rowsOf(md.Space, "structures output", ys, q, w); err != nil {
			return status(err)
		}
	}
	if q == 0 {
		return cpOK
	}
	return status(cancellable(q <= smallQuery, func(stop *cancel.Flag) error {
		return md.Marginals(X, int(q), int(n), M, Y, stop)
	}))
}

// cp_model_coef copies the linear model's coefficients (features × d, intercept excluded) and, when
// intercept is not NULL and the model has one, the intercept (d values).
//
//export cp_model_coef
func cp_model_coef(h C.int64_t, out *C.double, rows, cols C.int64_t, intercept *C.double) (rc C.int) {
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

// cp_model_to_bytes writes the model's bytes into buf when capacity suffices; *needed always
// receives the size, so callers ask once with capacity 0 and again with a buffer that size.
//
//export cp_model_to_bytes
func cp_model_to_bytes(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(toBytesCall(ridgeView, h, buf, capacity, needed))
}

// cp_model_from_bytes builds a StructuredRidge model from the bytes of cp_model_to_bytes (versioned
// and checksummed; corrupt bytes are an error) and writes its handle into out.
//
//export cp_model_from_bytes
func cp_model_from_bytes(buf *C.uint8_t, length C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(fromBytesCall(ridge.UnmarshalModel, buf, length, out))
}
