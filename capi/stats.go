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
	"github.com/combpred/combpred/core/ridge"
)

// Mergeable sufficient statistics of the exact linear (or Nyström) StructuredRidge fit
// (core/ridge/mergestats.go): computed chunk by chunk wherever the data are, merged pairwise, solved
// once. The handles are of their own kind ("stats"); every call returns a new handle and leaves
// its arguments unchanged.

func statsOf(h int64) (*ridge.Stats, error) { return objectOf[*ridge.Stats](h, "stats") }

func paramsOf(params *C.char, n int) (ridge.Options, error) {
	ps, err := goString(params, "the parameter string")
	if err != nil {
		return ridge.Options{}, err
	}
	return parseFitParams(ps, n)
}

// cp_stats_new writes into out the handle of empty statistics for fits with the parameter string
// params (as cp_ridge_fit's: the kernel, its parameters, fit_intercept, n_components and
// random_state matter here; alpha, solver, empirical_weight and reference are given to cp_stats_solve,
// though empirical_weight > 0 with reference=empirical also keeps the distinct training structures
// for the solved model's tilted marginal estimate) on
// inputs of n features in the space of spaceHandle. With n_components (rbf and poly kernels) the
// Nyström map is built from the ms rows of sample (ms × n) as cp_ridge_fit builds it from its X;
// a linear model takes none (NULL and ms 0): with an intercept its statistics follow the running
// mean of the rows added, and cp_stats_merge moves both operands to their common mean.
//
//export cp_stats_new
func cp_stats_new(spaceHandle C.int64_t, n C.int64_t, params *C.char, sample *C.double, ms C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return status(err)
	}
	if err := outPtr("statistics handle", out); err != nil {
		return status(err)
	}
	if n < 1 || n > maxElems { // first: an omitted gamma is 1/n_features
		return status(fmt.Errorf("statistics need 1 to %d features, got %d", maxElems, int64(n)))
	}
	opt, err := paramsOf(params, int(n))
	if err != nil {
		return status(err)
	}
	var X []float64
	if sample != nil || ms != 0 {
		if X, err = f64s("sample", sample, ms, n); err != nil {
			return status(err)
		}
	}
	s, err := ridge.NewStats(sp, int(n), X, int(ms), opt)
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(s))
	return cpOK
}

// cp_stats_add writes into out the handle of the statistics of prev plus a chunk of m examples:
// inputs x (m × n), structures ys (m × w) and sample_weight (m values, or NULL). m may be 0. prev
// is left unchanged; cancellable through the interrupt poll.
//
//export cp_stats_add
func cp_stats_add(prev C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t, sampleWeight *C.double, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	s, err := statsOf(int64(prev))
	if err != nil {
		return status(err)
	}
	if err := outPtr("statistics handle", out); err != nil {
		return status(err)
	}
	X, err := f64s("X", x, m, n)
	if err != nil {
		return status(err)
	}
	y, err := rowsOf(s.Space, "Y", ys, m, w)
	if err != nil {
		return status(err)
	}
	var weights []float64
	if sampleWeight != nil {
		if weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return status(err)
		}
	}
	var next *ridge.Stats
	err = cancellable(m <= smallQuery, func(stop *cancel.Flag) (err error) {
		next, err = s.Add(X, int(m), int(n), y, weights, stop)
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(next))
	return cpOK
}

// cp_stats_merge writes into out the handle of the statistics of the examples of a and b together;
// they must be of the same space, features, kernel, intercept and Nyström map.
//
//export cp_stats_merge
func cp_stats_merge(a, b C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sa, err := statsOf(int64(a))
	if err != nil {
		return status(err)
	}
	sb, err := statsOf(int64(b))
	if err != nil {
		return status(err)
	}
	if err := outPtr("statistics handle", out); err != nil {
		return status(err)
	}
	s, err := ridge.MergeStats(sa, sb)
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(s))
	return cpOK
}

// cp_stats_solve writes into out the handle of the StructuredRidge model that cp_ridge_fit with
// solver=exact gives on all the examples of the statistics h, with the parameter string params
// (alpha, empirical_weight and reference apply; kernel, fit_intercept and n_components must be those of the
// statistics; solver auto or exact), and a progress callback (NULL: none), called once after the
// direct solve as cp_ridge_fit's exact solver calls it (a nonzero return cancels with status 3).
// The model continues exactly with cp_ridge_partial_fit.
//
//export cp_stats_solve
func cp_stats_solve(h C.int64_t, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	s, err := statsOf(int64(h))
	if err != nil {
		return status(err)
	}
	if err := outPtr("model handle", out); err != nil {
		return status(err)
	}
	opt, err := paramsOf(params, s.NFeatures)
	if err != nil {
		return status(err)
	}
	opt.Progress = progressFunc(progress, ctx)
	// on a worker, as cp_ridge_fit's fits: the progress reaches the callback on this thread
	var md *ridge.Model
	opt.Stop = new(cancel.Flag)
	err = onWorker(&opt.Progress, opt.Stop, func() (err error) {
		md, err = s.Solve(opt)
		return err
	})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

// cp_stats_count writes into out the number of examples the statistics h hold, and into
// components the dimension of their Nyström map (0 without one).
//
//export cp_stats_count
func cp_stats_count(h C.int64_t, out, components *C.int64_t) (rc C.int) {
	defer guard(&rc)
	s, err := statsOf(int64(h))
	if err != nil {
		return status(err)
	}
	if out == nil || components == nil {
		return status(errors.New("output count or components is a NULL pointer"))
	}
	*out, *components = C.int64_t(s.Count()), C.int64_t(s.Components())
	return cpOK
}

// cp_stats_to_bytes writes the statistics' bytes (versioned and checksummed) into buf when
// capacity suffices; *needed always receives the size.
//
//export cp_stats_to_bytes
func cp_stats_to_bytes(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	s, err := statsOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(writeBytes("statistics", s.MarshalBinary, buf, capacity, needed))
}

// cp_stats_from_bytes builds statistics from the bytes of cp_stats_to_bytes (corrupt bytes are an
// error) and writes their handle into out. Bytes of more than 32,768 are decoded
// cancellably, through the interrupt poll: their space (a large DAG) can take seconds to build.
//
//export cp_stats_from_bytes
func cp_stats_from_bytes(buf *C.uint8_t, length C.int64_t, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(fromBytesCall("statistics", ridge.UnmarshalStatsUntil, buf, length, out))
}

// cp_stats_free releases a statistics handle.
//
//export cp_stats_free
func cp_stats_free(h C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(freeHandle(int64(h), "stats"))
}
