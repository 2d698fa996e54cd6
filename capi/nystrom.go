package main

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/ridge"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The Nyström map of a callable kernel: Python evaluates the kernel (it is a Python function), the
// core chooses the landmarks and computes the projection, by the same rules as the maps of the
// built-in kernels (core/ridge/nystrom.go).

// cp_nystrom_landmarks writes the landmarks of a Nyström map of count components on m training
// rows into out (capacity entries, at least min(count, m)): sorted distinct row indices drawn
// uniformly without replacement from seed; *n receives their number, min(count, m).
//
//export cp_nystrom_landmarks
func cp_nystrom_landmarks(m, count C.int64_t, seed C.uint64_t, out *C.int64_t, capacity C.int64_t, n *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if err := outPtr("count", n); err != nil {
		return status(err)
	}
	if m < 1 || m > maxElems {
		return status(fmt.Errorf("n_samples: a Nyström map needs 1 to %d training rows, got %d", int64(maxElems), int64(m)))
	}
	if count < 1 {
		return status(fmt.Errorf("n_components must be at least 1, got %d", int64(count)))
	}
	k := min(m, count)
	if capacity < k {
		return status(fmt.Errorf("landmarks output holds %d entries, want %d", int64(capacity), int64(k)))
	}
	buf, err := i64s("landmarks output", out, k)
	if err == nil {
		err = budget.Check("n_samples (landmark draw)", 8*int64(m))
	}
	if err != nil {
		return status(err)
	}
	for i, r := range ridge.NystromLandmarks(int(m), int(k), uint64(seed)) {
		buf[i] = int64(r)
	}
	*n = k
	return cpOK
}

// cp_nystrom_projection computes the projection P of a Nyström map from the landmarks' Gram matrix
// K (l × l, finite; its symmetric part is used), so that the map is φ(x) = K(x, landmarks)·P. P
// has l rows and c ≤ l columns; it is written row-major into the first l·c entries of out (l × l)
// and *c receives c.
//
//export cp_nystrom_projection
func cp_nystrom_projection(k *C.double, l C.int64_t, out *C.double, c *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if err := outPtr("components", c); err != nil {
		return status(err)
	}
	if l < 1 {
		return status(fmt.Errorf("n_components: the landmarks' Gram matrix needs at least 1 row, got %d", int64(l)))
	}
	K, err := f64s("kernel matrix", k, l, l)
	if err != nil {
		return status(err)
	}
	P, err := f64s("projection output", out, l, l)
	if err == nil {
		err = check.Finite("kernel matrix", K, int(l))
	}
	if err == nil {
		err = budget.Check("n_components (Nyström projection)", 4*8*int64(l)*int64(l))
	}
	if err != nil {
		return status(err)
	}
	L := int(l)
	proj, err := ridge.NystromProjection(mat.NewDense(L, L, K))
	if err != nil {
		return status(err)
	}
	_, cols := proj.Dims()
	for i := 0; i < L; i++ {
		copy(P[i*cols:(i+1)*cols], proj.RawRowView(i))
	}
	*c = C.int64_t(cols)
	return cpOK
}

// cp_nystrom_features writes the Nyström features φ = K·P of m rows into out (m × c), given their
// kernel values against the l landmarks, k (m × l, finite), and the projection p (l × c, as
// cp_nystrom_projection gives it). It is the product of the core's own Nyström maps (gemm.Mul):
// every entry is accumulated in the same order whatever m, so a row's features do not depend on
// the rows scored with it, as NumPy's products do, whose blocking changes with the number of rows.
//
//export cp_nystrom_features
func cp_nystrom_features(k *C.double, m, l C.int64_t, p *C.double, c C.int64_t, out *C.double) (rc C.int) {
	defer guard(&rc)
	if m < 0 || l < 1 || c < 1 {
		return status(fmt.Errorf("Nyström features: shapes (%d, %d) and (%d, %d) of the kernel rows and the projection",
			int64(m), int64(l), int64(l), int64(c)))
	}
	K, err := f64s("kernel rows", k, m, l)
	if err != nil {
		return status(err)
	}
	P, err := f64s("projection", p, l, c)
	if err != nil {
		return status(err)
	}
	dst, err := f64s("features output", out, m, c)
	if err != nil {
		return status(err)
	}
	if err := disjoint(inputOf("kernel rows", K), inputOf("projection", P), outputOf("features output", dst)); err != nil {
		return status(err)
	}
	if err := check.Finite("kernel rows", K, int(l)); err != nil {
		return status(err)
	}
	if m == 0 {
		return cpOK
	}
	gemm.Mul(blas64.General{Rows: int(m), Cols: int(c), Stride: int(c), Data: dst},
		blas64.General{Rows: int(m), Cols: int(l), Stride: int(l), Data: K},
		blas64.General{Rows: int(l), Cols: int(c), Stride: int(c), Data: P})
	// checked here, where they are made: the fit and the scores check them as their X, and said
	// "X[0, 3] = +Inf" of a user's X with three columns and no infinity (probe DZ)
	return status(check.FiniteMagnitude(check.NystromFeatures, dst, int(c)))
}
