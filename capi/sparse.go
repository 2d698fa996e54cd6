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
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// The _csr calls take a sparse X in compressed sparse row form, as scipy.sparse.csr_matrix holds
// it, in place of the dense (x, rows, cols) of the other calls: seven arguments
//
//	rows, cols, nnz, index_bits, indptr (rows + 1 values), indices (nnz), data (nnz doubles),
//
// with indptr and indices both of C type int32_t (index_bits 32) or int64_t (64). The arrays are
// viewed during the call, never copied and never kept (a kernel model copies its support rows).
// Every call validates them first, in O(nnz): indptr starts at 0, is non-decreasing and ends at
// nnz; indices lie in [0, cols) and increase strictly within a row (sorted, no duplicates: scipy's
// canonical format, X.sum_duplicates()); data are finite. A malformed matrix is an error naming
// the argument, never a crash.

// csrArg checks and views a sparse X.
// namedX names X in xmat.New's refusal of its arrays ("indices[1] = 0 (row 0) does not exceed
// ..." named no argument, probe DB).
func namedX(m *xmat.CSR, err error) (*xmat.CSR, error) {
	if err != nil {
		return nil, fmt.Errorf("X: %w", err)
	}
	return m, nil
}

func csrArg(rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double) (*xmat.CSR, error) {
	if rows < 0 || cols < 0 || nnz < 0 {
		return nil, fmt.Errorf("X: negative shape or nnz (%d×%d, nnz %d)", int64(rows), int64(cols), int64(nnz))
	}
	if rows >= maxElems || cols >= maxElems || nnz > maxElems {
		return nil, errors.New("X: shape too large")
	}
	vals, err := f64s("data", data, nnz)
	if err != nil {
		return nil, err
	}
	if indptr == nil {
		return nil, errors.New("indptr is a NULL pointer")
	}
	if nnz > 0 && indices == nil {
		return nil, errors.New("indices is a NULL pointer")
	}
	width := uintptr(8)
	if indexBits == 32 {
		width = 4
	}
	if err := aligned("indptr", indptr, width); err != nil {
		return nil, err
	}
	if err := aligned("indices", indices, width); err != nil {
		return nil, err
	}
	switch indexBits {
	case 32:
		if nnz > 1<<31-1 {
			return nil, fmt.Errorf("nnz = %d does not fit int32 indices; pass int64 indptr and indices (index_bits 64)", int64(nnz))
		}
		ptr := unsafe.Slice((*int32)(indptr), int(rows)+1)
		ind := []int32{}
		if nnz > 0 {
			ind = unsafe.Slice((*int32)(indices), int(nnz))
		}
		return namedX(xmat.New(int(rows), int(cols), ptr, ind, vals))
	case 64:
		ptr := unsafe.Slice((*int64)(indptr), int(rows)+1)
		ind := []int64{}
		if nnz > 0 {
			ind = unsafe.Slice((*int64)(indices), int(nnz))
		}
		return namedX(xmat.New(int(rows), int(cols), ptr, ind, vals))
	}
	return nil, fmt.Errorf("index_bits = %d: indptr and indices must be int32 (32) or int64 (64)", int64(indexBits))
}

// csrFitArgs reads the arguments of a _csr fit call.
func csrFitArgs(spaceHandle, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*fitArgs, error) {
	return readFitArgsOf(spaceHandle, rows, cols, csrX(rows, cols, nnz, indexBits, indptr, indices, data), denseY(ys, rows, w),
		sampleWeight, params, progress, ctx, out)
}

// csrX views a sparse X for readFitArgsOf.
func csrX(rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double) func(*fitArgs) error {
	return func(a *fitArgs) (err error) {
		a.csr, err = csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
		return err
	}
}

// cp_ridge_fit_csr_sparse_y is cp_ridge_fit_sparse_y on a sparse X (rows × cols CSR: see the
// _csr calls): the targets are the positions of their ones, y_indptr (rows + 1) and y_indices
// (y_nnz), with the values stored there, y_values (y_nnz; NULL: all 1).
//
//export cp_ridge_fit_csr_sparse_y
func cp_ridge_fit_csr_sparse_y(spaceHandle C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	yIndptr *C.int64_t, yNNZ C.int64_t, yIndices *C.int64_t, yValues *C.double, sampleWeight *C.double, params *C.char, init C.int64_t,
	progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := readFitArgsOf(spaceHandle, rows, cols, csrX(rows, cols, nnz, indexBits, indptr, indices, data),
		onesY(yIndptr, yNNZ, yIndices, yValues, rows), sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	if a.opt.Init, err = optionalModel(init); err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) {
		return ridge.FitCSRSparseY(a.sp, a.csr, a.yPtr, a.yInd, a.weights, a.opt)
	})
}

// cp_ridge_fit_csr is cp_ridge_fit on a sparse X (rows × cols CSR: see the _csr calls): linear,
// kernel (rbf, poly; not precomputed) and Nyström models, by every solver but SGD on a kernel
// expansion. The model predicts sparse and dense inputs alike.
//
//export cp_ridge_fit_csr
func cp_ridge_fit_csr(spaceHandle C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	ys *C.int64_t, w C.int64_t, sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer,
	out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := csrFitArgs(spaceHandle, rows, cols, nnz, indexBits, indptr, indices, data, ys, w, sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	if a.opt.Init, err = optionalModel(init); err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) { return ridge.FitCSR(a.sp, a.csr, a.y, a.weights, a.opt) })
}

// cp_ridge_partial_fit_csr is cp_ridge_partial_fit on a sparse chunk X (rows × cols CSR: see the
// _csr calls); kernel expansions without a Nyström map are refused.
//
//export cp_ridge_partial_fit_csr
func cp_ridge_partial_fit_csr(prev C.int64_t, spaceHandle C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer,
	data *C.double, ys *C.int64_t, w C.int64_t, sampleWeight *C.double, params *C.char, progress C.cp_progress_fn, ctx unsafe.Pointer,
	out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	a, err := csrFitArgs(spaceHandle, rows, cols, nnz, indexBits, indptr, indices, data, ys, w, sampleWeight, params, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	pm, err := optionalModel(prev)
	if err != nil {
		return status(err)
	}
	return a.run(out, func() (*ridge.Model, error) { return ridge.PartialFitCSR(pm, a.sp, a.csr, a.y, a.weights, a.opt) })
}

// csrRegions are the regions of a CSR matrix argument (rows × ·, nnz values, 32- or 64-bit
// indices), once csrArg has accepted it.
func csrRegions(rows, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double) []region {
	width := uintptr(8)
	if indexBits == 32 {
		width = 4
	}
	return []region{rawInput("indptr", indptr, int(rows)+1, width), rawInput("indices", indices, int(nnz), width),
		rawInput("data", unsafe.Pointer(data), int(nnz), 8)}
}

// csrInputs resolves the model of handle h and views its sparse inputs.
func csrInputs(resolve resolver, h, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double) (model.Model, xmat.Rows, error) {
	md, err := resolve(h)
	if err != nil {
		return nil, xmat.Rows{}, err
	}
	X, err := csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return nil, xmat.Rows{}, err
	}
	return md, xmat.SparseRows(X), nil
}

// csrDecision and csrPredict are the decision and predict calls of both model kinds on sparse X.
func csrDecision(resolve resolver, h, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double, out *C.double, d C.int64_t) error {
	md, X, err := csrInputs(resolve, h, rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return err
	}
	U, err := dimOut(md.Output(), "decision output", out, rows, d)
	if err != nil {
		return err
	}
	if err := disjoint(append(csrRegions(rows, nnz, indexBits, indptr, indices, data), outputOf("decision output", U))...); err != nil {
		return err
	}
	return scoreCall(md, X, U)
}

func csrPredict(resolve resolver, h, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double, out *C.int64_t, w C.int64_t) error {
	md, X, err := csrInputs(resolve, h, rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return err
	}
	y, err := rowsOf(md.Output(), "predict output", out, rows, w)
	if err != nil {
		return err
	}
	if err := disjoint(append(csrRegions(rows, nnz, indexBits, indptr, indices, data), outputOf("predict output", y))...); err != nil {
		return err
	}
	return cancellable(int64(rows) <= predictInlineRows(md), func(stop *cancel.Flag) error { return md.PredictRows(X, y, stop) })
}

// cp_ridge_decision_csr is cp_ridge_decision on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_ridge_decision_csr
func cp_ridge_decision_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(csrDecision(ridgeView, h, rows, cols, nnz, indexBits, indptr, indices, data, out, d))
}

// cp_ridge_predict_csr is cp_ridge_predict on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_ridge_predict_csr
func cp_ridge_predict_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(csrPredict(ridgeView, h, rows, cols, nnz, indexBits, indptr, indices, data, out, w))
}

// cp_ridge_marginals_csr is cp_ridge_marginals on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_ridge_marginals_csr
func cp_ridge_marginals_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	estimate, scale C.int64_t, factor C.double, out *C.double, d C.int64_t, ys *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return status(err)
	}
	return status(ridgeMarginals(md, xmat.SparseRows(X), csrRegions(rows, nnz, indexBits, indptr, indices, data), estimate, scale, factor, out, d, ys, w))
}

// cp_ridge_max_margins_csr is cp_ridge_max_margins on a sparse X (rows × cols CSR: see the _csr
// calls).
//
//export cp_ridge_max_margins_csr
func cp_ridge_max_margins_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	from C.int64_t, out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return status(err)
	}
	return status(ridgeMaxMargins(md, xmat.SparseRows(X), csrRegions(rows, nnz, indexBits, indptr, indices, data), from, out, d))
}

// cp_prob_fit_csr is cp_prob_fit on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_prob_fit_csr
func cp_prob_fit_csr(spaceHandle C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	ys *C.int64_t, w C.int64_t, sampleWeight *C.double, params *C.char, init C.int64_t, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	X, err := csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return status(err)
	}
	md, err := probFitWith(spaceHandle, rows, ys, w, sampleWeight, params, init, progress, ctx, out,
		func(sp space.Space, opt prob.Options, y []int64, weights []float64) (*prob.Model, error) {
			return prob.FitCSR(sp, X, y, weights, opt)
		})
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

// cp_prob_decision_csr is cp_prob_decision on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_prob_decision_csr
func cp_prob_decision_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	out *C.double, d C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(csrDecision(probView, h, rows, cols, nnz, indexBits, indptr, indices, data, out, d))
}

// cp_prob_predict_csr is cp_prob_predict on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_prob_predict_csr
func cp_prob_predict_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	out *C.int64_t, w C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(csrPredict(probView, h, rows, cols, nnz, indexBits, indptr, indices, data, out, w))
}

// cp_prob_marginals_csr is cp_prob_marginals on a sparse X (rows × cols CSR: see the _csr calls).
//
//export cp_prob_marginals_csr
func cp_prob_marginals_csr(h C.int64_t, rows, cols, nnz, indexBits C.int64_t, indptr, indices unsafe.Pointer, data *C.double,
	params *C.char, out *C.double, d C.int64_t, report *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := probModelOf(int64(h))
	if err != nil {
		return status(err)
	}
	X, err := csrArg(rows, cols, nnz, indexBits, indptr, indices, data)
	if err != nil {
		return status(err)
	}
	return status(probMarginals(md, xmat.SparseRows(X), csrRegions(rows, nnz, indexBits, indptr, indices, data), params, out, d, report))
}
