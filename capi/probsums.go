package main

/*
#include <stdint.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/space"
	"gonum.org/v1/gonum/mat"
)

// The distributed fit of ProbabilisticStructured: every part of the data (a partition, on the
// machine that holds it) sums its data term at the current coefficients with cp_prob_data_sums;
// the caller adds the parts' sums up in the callback it gives cp_prob_fit_sums, which runs Fit's
// L-BFGS on them (prob.FitSums).

// cp_prob_data_sums writes the data term of the ProbabilisticStructured objective at the
// coefficients coef (rows × d: n feature rows, then the intercept's row when intercept is nonzero)
// summed over one part of the data, X (m × n) with structures Y (m × w) and optional sample
// weights (NULL: all 1), each counted as s_i = sample_weight_i·2^−weight_exponent (exactly; pass
// the exponent cp_prob_fit_sums gives its callback, 0 elsewhere): *loss = Σ_i s_i [log Z(x_i) −
// ⟨u_i, ψ(y_i)⟩], *weight = Σ_i s_i and grad (rows × d) = Σ_i s_i x̃_i (E[ψ] − ψ(y_i))ᵀ, by exact
// inference. A part may be empty (m = 0) or weigh nothing; its sums are then zero. centre (n
// values, or NULL) is where a fit with an intercept centres X, the same for every part and for
// cp_prob_fit_sums (an estimate of X's mean: uncentred, L-BFGS stopped at X + 10³ with
// probabilities 0.07 from the minimum's); x̃_i is then (x_i − centre, 1) and coef holds
// coefficients in those coordinates.
//
//export cp_prob_data_sums
func cp_prob_data_sums(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, weightExponent C.int64_t, intercept C.int64_t, centre *C.double, coef *C.double, rows, d C.int64_t,
	loss, weight *C.double, grad *C.double) (rc C.int) {
	defer guard(&rc)
	return status(probDataSums(spaceHandle, x, m, n, ys, w, sampleWeight, weightExponent, intercept, centre, coef, rows, d, loss, weight, grad))
}

func probDataSums(spaceHandle C.int64_t, x *C.double, m, n C.int64_t, ys *C.int64_t, w C.int64_t,
	sampleWeight *C.double, weightExponent C.int64_t, intercept C.int64_t, centre *C.double, coef *C.double, rows, d C.int64_t,
	loss, weight *C.double, grad *C.double) error {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return err
	}
	if n < 1 || n > maxElems {
		return fmt.Errorf("X must have at least one feature (and at most %d), got %d", maxElems, int64(n))
	}
	k := int(n)
	if intercept != 0 {
		k++
	}
	if err := checkPartShape("coef", rows, d, n, k, sp.Dim()); err != nil {
		return err
	}
	X, err := f64s("X", x, m, n)
	if err != nil {
		return err
	}
	y, weights, err := partRows(sp, ys, m, w, sampleWeight)
	if err != nil {
		return err
	}
	W, err := f64s("coef", coef, rows, d)
	if err != nil {
		return err
	}
	G, err := f64s("grad", grad, rows, d)
	if err != nil {
		return err
	}
	if err := outPtr("loss", loss); err != nil {
		return err
	}
	if err := outPtr("weight", weight); err != nil {
		return err
	}
	c, err := centreOf(centre, n)
	if err != nil {
		return err
	}
	if err := check.WeightExponent("weight_exponent", int(weightExponent)); err != nil {
		return err
	}
	l, s, err := prob.DataSumsOf(sp, X, int(m), int(n), y, weights, int(weightExponent), intercept != 0, c, prob.InferenceOptions{Method: prob.InferExact},
		mat.NewDense(int(rows), int(d), W), mat.NewDense(int(rows), int(d), G))
	if err != nil {
		return err
	}
	*loss, *weight = C.double(l), C.double(s)
	return nil
}

// partRows reads one part's m structures (m × w; none when m is 0) and its optional weights.
func partRows(sp space.Space, ys *C.int64_t, m, w C.int64_t, sampleWeight *C.double) ([]int64, []float64, error) {
	var y []int64
	var err error
	if m > 0 {
		if y, err = rowsOf(sp, "Y", ys, m, w); err != nil {
			return nil, nil, err
		}
	}
	var weights []float64
	if sampleWeight != nil {
		if weights, err = f64s("sample_weight", sampleWeight, m); err != nil {
			return nil, nil, err
		}
	}
	return y, weights, nil
}

// cp_prob_boundary_counts writes the boundary counts of one part of the data, its m structures Y
// (m × w) with optional sample weights (NULL: all 1), into counts (len values): the rows of
// positive weight, then per coordinate of ψ those off its lower and off its upper end of the
// coordinates' range, then per structure id on the spaces whose structures are the vertices of a
// simplex (a class, a level, a node). The parts' counts added up tell cp_prob_fit_sums where an
// intercept has no finite optimum, which it warns of as cp_prob_fit does. *out_len receives the
// number of values the space needs; with counts NULL nothing else is done (len is ignored).
//
//export cp_prob_boundary_counts
func cp_prob_boundary_counts(spaceHandle C.int64_t, ys *C.int64_t, m, w C.int64_t, sampleWeight *C.double,
	counts *C.double, length C.int64_t, outLen *C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(probBoundaryCounts(spaceHandle, ys, m, w, sampleWeight, counts, length, outLen))
}

func probBoundaryCounts(spaceHandle C.int64_t, ys *C.int64_t, m, w C.int64_t, sampleWeight *C.double,
	counts *C.double, length C.int64_t, outLen *C.int64_t) error {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return err
	}
	if err := outPtr("out_len", outLen); err != nil {
		return err
	}
	need := prob.BoundaryLen(sp)
	*outLen = C.int64_t(need)
	if counts == nil {
		return nil
	}
	if int64(length) != int64(need) {
		return fmt.Errorf("counts holds %d values, the %s space's boundary counts %d", int64(length), sp.Kind(), need)
	}
	out, err := f64s("counts", counts, length)
	if err != nil {
		return err
	}
	if m < 0 || m > maxElems {
		return fmt.Errorf("Y must have between 0 and %d rows, got %d", maxElems, int64(m))
	}
	y, weights, err := partRows(sp, ys, m, w, sampleWeight)
	if err != nil {
		return err
	}
	return prob.BoundaryCountsInto(sp, out, y, int(m), weights)
}

// cp_prob_fit_sums fits a ProbabilisticStructured model on n features whose data are spread over
// parts: at each coefficient vector Fit's L-BFGS needs, it calls sums, which adds up the parts'
// cp_prob_data_sums with the weight_exponent it is given (0, except for weights summing beyond
// 2^±512, where the first sums are asked again in the units that keep every sum finite). Fit parameters as cp_prob_fit's (the sampler must resolve to exact
// inference); centre is the parts' (NULL: none); spread (n values, NULL: none) is each feature's
// weighted root mean square about centre (about 0 without an intercept; see spread_weight_floor),
// which puts the solver in the coordinates cp_prob_fit works in; psi_moments (2·d + 1 values for
// the space's dimension d, NULL: none) are the moments of ψ over the training structures, each
// part's Σ s·ψ (d values), Σ s·ψ² (d values) and Σ s added up, from which the core takes the
// variances of ψ's coordinates that precondition L-BFGS (with spread) as cp_prob_fit's is, so that
// the two take the same steps; boundary (boundary_len values, NULL: none) are the parts'
// cp_prob_boundary_counts added up, from which a fit with an intercept warns (cp_model_info's
// warnings) where an intercept has no finite optimum, as cp_prob_fit's does; init is a model to warm-start from, or 0; progress as cp_prob_fit's
// (NULL: none). Both callbacks run on the calling thread and receive ctx.
//
//export cp_prob_fit_sums
func cp_prob_fit_sums(spaceHandle C.int64_t, n C.int64_t, params *C.char, centre, spread, psiMoments, boundary *C.double,
	boundaryLen C.int64_t, init C.int64_t, sums C.cp_sums_fn, progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := probFitSums(spaceHandle, n, params, centre, spread, psiMoments, boundary, boundaryLen, init, sums, progress, ctx, out)
	if err != nil {
		return status(err)
	}
	*out = C.int64_t(newHandle(md))
	return cpOK
}

// cp_prob_check_fit_sums reports what cp_prob_fit_sums with these arguments would refuse before it
// calls sums (its parameters, the inference it needs, the memory of the fit), without fitting: a
// caller whose sums read data spread over machines asks first, so that a refused fit reads none.
//
//export cp_prob_check_fit_sums
func cp_prob_check_fit_sums(spaceHandle C.int64_t, n C.int64_t, params *C.char, init C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(spaceHandle))
	if err == nil {
		err = checkFeatureCount(n)
	}
	var opt prob.Options
	if err == nil {
		opt, err = probFitOptions(sp, params, init)
	}
	if err == nil {
		err = prob.CheckFitSums(sp, int(n), opt)
	}
	return status(err)
}

// checkFeatureCount refuses a number of features outside [1, maxElems].
func checkFeatureCount(n C.int64_t) error {
	if n < 1 || n > maxElems {
		return fmt.Errorf("n_features must be in [1, %d], got %d", maxElems, int64(n))
	}
	return nil
}

func probFitSums(spaceHandle C.int64_t, n C.int64_t, params *C.char, centre, spread, psiMoments, boundary *C.double, boundaryLen C.int64_t,
	init C.int64_t, sums C.cp_sums_fn,
	progress C.cp_progress_fn, ctx unsafe.Pointer, out *C.int64_t) (*prob.Model, error) {
	sp, err := spaceOf(int64(spaceHandle))
	if err != nil {
		return nil, err
	}
	if err := outPtr("model handle", out); err != nil {
		return nil, err
	}
	if sums == nil {
		return nil, fmt.Errorf("the sums callback is a NULL pointer")
	}
	if err := checkFeatureCount(n); err != nil {
		return nil, err
	}
	opt, err := probFitOptions(sp, params, init)
	if err != nil {
		return nil, err
	}
	if opt.Centre, err = centreOf(centre, n); err != nil {
		return nil, err
	}
	if spread != nil {
		if opt.Spread, err = f64s("spread", spread, 1, n); err != nil {
			return nil, err
		}
	}
	if psiMoments != nil {
		moments, err := f64s("psi_moments", psiMoments, 1, C.int64_t(2*sp.Dim()+1))
		if err != nil {
			return nil, err
		}
		if opt.Variances, err = prob.VariancesOfMoments(moments, sp.Dim()); err != nil {
			return nil, fmt.Errorf("psi_moments: %w", err)
		}
	}
	if boundary != nil {
		if int64(boundaryLen) != int64(prob.BoundaryLen(sp)) {
			return nil, fmt.Errorf("boundary holds %d values, the %s space's boundary counts %d", int64(boundaryLen), sp.Kind(), prob.BoundaryLen(sp))
		}
		if opt.Boundary, err = f64s("boundary", boundary, boundaryLen); err != nil {
			return nil, err
		}
	}
	opt.Progress = progressFunc(progress, ctx)
	call := func(W, grad *mat.Dense, exponent int) (float64, float64, error) {
		r, c := W.Dims()
		var loss, weight C.double
		data := W.RawMatrix().Data
		if rc := C.cp_call_sums(sums, (*C.double)(unsafe.Pointer(&data[0])), C.int64_t(r), C.int64_t(c), C.int64_t(exponent), &loss, &weight,
			(*C.double)(unsafe.Pointer(&grad.RawMatrix().Data[0])), ctx); rc != 0 {
			return 0, 0, fmt.Errorf("the sums callback failed (status %d)", int(rc))
		}
		return float64(loss), float64(weight), nil
	}
	// The fit runs here, on the caller's thread: its work is the callback's.
	return prob.FitSums(sp, int(n), opt, call)
}
