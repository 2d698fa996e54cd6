package main

/*
#include <stdint.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The distributed conjugate gradients of the linear StructuredRidge (core/ridge/cgsums.go): each
// part of the data sums its moments once (cp_ridge_cg_setup) and its share of H·V at every
// iteration (cp_ridge_cg_product) where it lives; cp_ridge_fit_cg_sums runs Fit's CG on the
// totals, asking the caller's callback for the summed products.

// centreOf reads the centre of a distributed CG fit: NULL (none) or n values.
func centreOf(centre *C.double, n C.int64_t) ([]float64, error) {
	if centre == nil {
		return nil, nil
	}
	return f64s("centre", centre, 1, n)
}

// weightExponentOf reads the weight_exponent of a distributed CG fit (ridge.Options.WeightExponent).
func weightExponentOf(e C.int64_t) (int, error) {
	if err := check.WeightExponent("weight_exponent", int(e)); err != nil {
		return 0, err
	}
	return int(e), nil
}

// ridgePart reads the arguments that describe one part of the data of a distributed CG fit.
func ridgePart(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t, sampleWeight *C.double,
	weightExponent C.int64_t, params *C.char, centre *C.double) (sp space.Space, X []float64, y []int64, weights []float64, opt ridge.Options, k int, err error) {
	if sp, err = spaceOf(int64(spaceHandle)); err != nil {
		return
	}
	if n < 1 || n > maxElems {
		err = fmt.Errorf("X must have at least one feature (and at most %d), got %d", maxElems, int64(n))
		return
	}
	if opt, err = paramsOf(params, int(n)); err != nil {
		return
	}
	if opt.Centre, err = centreOf(centre, n); err != nil {
		return
	}
	if opt.WeightExponent, err = weightExponentOf(weightExponent); err != nil {
		return
	}
	if X, err = f64s("X", x, m, n); err != nil {
		return
	}
	if m > 0 {
		if y, err = rowsOf(sp, "Y", ys, m, w); err != nil {
			return
		}
	}
	if sampleWeight != nil {
		if weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return
		}
	}
	k = ridge.WeightRows(int(n), opt)
	return
}

// cp_ridge_cg_setup writes the sums over one part of the data (X m × n, structures Y m × w,
// optional sample weights) that a distributed CG fit of the linear model with the parameter
// string params needs before iterating: b (k × d) = Σ s_i x̃_i δ_iᵀ, g (k × k) = Σ s_i x̃_i x̃_iᵀ,
// mm (d × d) = Σ s_i δ_i δ_iᵀ, *weight = Σ s_i and *count = m, with k = n (+1 with fit_intercept)
// and d the space's dimension; weight_range (2 values) the largest and the smallest s_i above
// 2⁻⁵²·alpha in the same units (0 and +Inf where none is), whose maximum and minimum over the
// parts cp_ridge_fit_cg_sums takes. Every sample weight counts as s_i = sample_weight_i·2^−weight_exponent
// (exactly; the same exponent for every part and for cp_ridge_fit_cg_sums: 0, or the binary
// exponent of the largest weight so that sums near 1e308 do not overflow nor subnormal ones lose
// their digits). A part may be empty or weigh nothing. centre (n values, or NULL)
// is where a fit with an intercept centres X, the same for every part and for
// cp_ridge_fit_cg_sums (an estimate of X's mean: uncentred, X + 10⁵ cost the conjugate gradients
// their accuracy); x̃_i is then (x_i − centre, 1). rows × dim is the shape the caller gave b
// (k × d), checked against X's n.
//
//export cp_ridge_cg_setup
func cp_ridge_cg_setup(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t, sampleWeight *C.double,
	weightExponent C.int64_t, params *C.char, centre *C.double, rows, dim C.int64_t, b, g, mm *C.double, weight *C.double,
	count *C.int64_t, weightRange *C.double) (rc C.int) {
	defer guard(&rc)
	sp, X, y, weights, opt, k, err := ridgePart(spaceHandle, x, m, n, ys, w, sampleWeight, weightExponent, params, centre)
	if err == nil {
		err = checkPartShape("b", rows, dim, n, k, sp.Dim())
	}
	if err != nil {
		return status(err)
	}
	d := C.int64_t(sp.Dim())
	B, err := f64s("b", b, C.int64_t(k), d)
	if err != nil {
		return status(err)
	}
	G, err := f64s("g", g, C.int64_t(k), C.int64_t(k))
	if err != nil {
		return status(err)
	}
	M, err := f64s("mm", mm, d, d)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("X", X), inputOf("Y", y), inputOf("sample_weight", weights), outputOf("b", B), outputOf("g", G),
		outputOf("mm", M)); err != nil {
		return status(err)
	}
	if err := outPtr("weight", weight); err != nil {
		return status(err)
	}
	if err := outPtr("count", count); err != nil {
		return status(err)
	}
	span, err := f64s("weight_range", weightRange, 1, 2)
	if err != nil {
		return status(err)
	}
	var st *ridge.CGSetup
	err = cancellable(false, func(stop *cancel.Flag) (err error) {
		opt.Stop = stop
		st, err = ridge.CGSetupOf(sp, X, int(m), int(n), y, weights, opt)
		return err
	})
	if err != nil {
		return status(err)
	}
	copy(B, st.B.RawMatrix().Data)
	copy(G, mat.DenseCopyOf(st.G).RawMatrix().Data)
	copy(M, mat.DenseCopyOf(st.M).RawMatrix().Data)
	*weight, *count = C.double(st.Weight), C.int64_t(st.Count)
	span[0], span[1] = st.Top, st.Low
	return cpOK
}

// cp_ridge_cg_product writes into out (k × d) one part's share of the distributed CG product at
// v (k × d): Σ s_i x̃_i [(S + δ_iδ_iᵀ) vᵀx̃_i]ᵀ over its rows (arguments as cp_ridge_cg_setup's;
// rows × dim is the shape of v and out).
//
//export cp_ridge_cg_product
func cp_ridge_cg_product(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t, sampleWeight *C.double,
	weightExponent C.int64_t, params *C.char, centre *C.double, rows, dim C.int64_t, v *C.double, out *C.double) (rc C.int) {
	defer guard(&rc)
	sp, X, y, weights, opt, k, err := ridgePart(spaceHandle, x, m, n, ys, w, sampleWeight, weightExponent, params, centre)
	if err == nil {
		err = checkPartShape("v", rows, dim, n, k, sp.Dim())
	}
	if err != nil {
		return status(err)
	}
	d := C.int64_t(sp.Dim())
	V, err := f64s("v", v, C.int64_t(k), d)
	if err != nil {
		return status(err)
	}
	O, err := f64s("out", out, C.int64_t(k), d)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("X", X), inputOf("Y", y), inputOf("sample_weight", weights), inputOf("v", V), outputOf("out", O)); err != nil {
		return status(err)
	}
	return status(cancellable(false, func(stop *cancel.Flag) error {
		opt.Stop = stop
		return ridge.CGProductOf(sp, X, int(m), int(n), y, weights, opt, mat.NewDense(k, int(d), V), mat.NewDense(k, int(d), O))
	}))
}

// cp_ridge_fit_cg_sums fits the linear StructuredRidge of params (solver cg or auto, the uniform
// reference) on n features by conjugate gradients on data spread over parts: b, g, mm, weight and
// count are the parts' cp_ridge_cg_setup sums added up, all taken with weight_exponent (the fit
// takes alpha in the weights' units, alpha·2^−weight_exponent, and reports J at their own scale),
// and products, called at every iteration on the calling thread with ctx, writes the parts'
// cp_ridge_cg_product at v added up; centre is the parts' (NULL: none). weight_range is the
// largest of the parts' weight_range[0] and the smallest of their weight_range[1] (NULL: unknown),
// from which the model warns of weights further apart than float64 resolves. init is a model to
// warm-start from, or 0; progress as cp_ridge_fit's (NULL: none).
//
//export cp_ridge_fit_cg_sums
func cp_ridge_fit_cg_sums(spaceHandle C.int64_t, n C.int64_t, params *C.char, centre *C.double, rows, dim C.int64_t, b, g, mm *C.double, weight C.double, count C.int64_t,
	weightRange *C.double, weightExponent C.int64_t, init C.int64_t, products C.cp_products_fn, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return status(err)
	}
	if err := outPtr("model handle", out); err != nil {
		return status(err)
	}
	if products == nil {
		return status(fmt.Errorf("the products callback is a NULL pointer"))
	}
	if n < 1 || n > maxElems {
		return status(fmt.Errorf("n_features must be in [1, %d], got %d", maxElems, int64(n)))
	}
	opt, err := paramsOf(params, int(n))
	if err != nil {
		return status(err)
	}
	if opt.Centre, err = centreOf(centre, n); err != nil {
		return status(err)
	}
	if opt.WeightExponent, err = weightExponentOf(weightExponent); err != nil {
		return status(err)
	}
	k := ridge.WeightRows(int(n), opt)
	d := sp.Dim()
	if err := checkPartShape("b", rows, dim, n, k, d); err != nil { // the sums of another n or fit_intercept (probe DA)
		return status(err)
	}
	if err := ridge.CheckCGSumsMemory(sp, int(n), opt.Intercept); err != nil { // before the copies below
		return status(err)
	}
	B, err := f64s("b", b, C.int64_t(k), C.int64_t(d))
	if err != nil {
		return status(err)
	}
	G, err := f64s("g", g, C.int64_t(k), C.int64_t(k))
	if err != nil {
		return status(err)
	}
	M, err := f64s("mm", mm, C.int64_t(d), C.int64_t(d))
	if err != nil {
		return status(err)
	}
	if init != 0 {
		if opt.Init, err = modelOf(int64(init)); err != nil {
			return status(err)
		}
	}
	setup := &ridge.CGSetup{B: mat.NewDense(k, d, slices.Clone(B)), G: mat.NewSymDense(k, slices.Clone(G)),
		M:      mat.NewSymDense(d, slices.Clone(M)),
		Weight: float64(weight), Count: int64(count)}
	if weightRange != nil { // NULL: the weights' range is unknown, and not warned of
		span, err := f64s("weight_range", weightRange, 1, 2)
		if err != nil {
			return status(err)
		}
		setup.Top, setup.Low = span[0], span[1]
	}
	opt.Progress = progressFunc(progress, ctx)
	call := func(V, dst *mat.Dense) error {
		r, c := V.Dims()
		if rc := C.cp_call_products(products, (*C.double)(unsafe.Pointer(&V.RawMatrix().Data[0])), C.int64_t(r), C.int64_t(c),
			(*C.double)(unsafe.Pointer(&dst.RawMatrix().Data[0])), ctx); rc != 0 {
			return fmt.Errorf("the products callback failed (status %d)", int(rc))
		}
		return nil
	}
	// The fit runs here, on the caller's thread: its work is the callback's.
	md, err := ridge.FitCGSums(sp, int(n), opt, setup, call)
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

// cp_ridge_distributed_solver writes into solver the index, in the solver parameter's options,
// of the solver a fit of data spread over machines runs for the parameter string params on n
// features in the space of spaceHandle (ridge.DistributedSolver: auto is exact, from mergeable
// statistics, up to 8,000 unknowns, and conjugate gradients beyond for a linear model), and into
// rows the number of rows k of the linear model's W (n, plus one with fit_intercept): the rows of
// the b and g buffers of cp_ridge_cg_setup. Parameters that conjugate gradients cannot run (the
// empirical reference measure) are refused here when the solver resolves to them, and so are
// solver=sgd and kernel expansions (cp_ridge_check_distributable); conjugate gradients above the
// memory budget are refused with the memory status.
//
//export cp_ridge_distributed_solver
func cp_ridge_distributed_solver(spaceHandle C.int64_t, n C.int64_t, params *C.char, solver, rows *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return status(err)
	}
	if err := outPtr("solver", solver); err != nil {
		return status(err)
	}
	if err := outPtr("rows", rows); err != nil {
		return status(err)
	}
	if n < 1 || n > maxElems {
		return status(fmt.Errorf("n_features must be in [1, %d], got %d", maxElems, int64(n)))
	}
	opt, err := paramsOf(params, int(n))
	if err != nil {
		return status(err)
	}
	resolved, err := ridge.DistributedSolver(sp, int(n), opt)
	if err != nil {
		return status(err)
	}
	if resolved == ridge.CG { // refused here, before a distributed fit reads its partitions (probe BR)
		if err := ridge.CheckCGSumsMemory(sp, int(n), opt.Intercept); err != nil {
			return status(err)
		}
	}
	*solver = C.int64_t(resolved)
	*rows = C.int64_t(ridge.WeightRows(int(n), opt))
	return cpOK
}

// cp_ridge_check_distributable refuses, from the parameter string params alone, a fit that cannot
// run on data spread over machines (ridge.CheckDistributable: solver=sgd, kernel expansions), so
// that a distributed fit refuses it before reading any partition; cp_ridge_distributed_solver
// refuses the same.
//
//export cp_ridge_check_distributable
func cp_ridge_check_distributable(params *C.char) (rc C.int) {
	defer guard(&rc)
	return status(checkRidgeParams(params, ridge.CheckDistributable))
}
