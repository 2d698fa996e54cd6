package main

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// The calls that every model kind of the ABI answers alike, through model.Model: StructuredRidge's
// handles (model.go) and ProbabilisticStructured's (prob.go). A kind's exports only say how to find
// its models (a resolver) or decode its bytes; the argument checks live here once, so that the
// kinds cannot drift apart in what they accept or in the messages Python shows.

// A resolver finds the model of a handle of one kind; it fails on a handle that is freed or of
// another kind.
type resolver func(h C.int64_t) (model.Model, error)

// inputsOf resolves the model of handle h and views its q inputs X (q × n): the start of the
// decision and predict calls.
func inputsOf(resolve resolver, h C.int64_t, x *C.double, q, n C.int64_t) (model.Model, []float64, error) {
	md, err := resolve(h)
	if err != nil {
		return nil, nil, err
	}
	X, err := f64s("X", x, q, n)
	return md, X, err
}

// decisionCall writes the scores of the q inputs X (q × n) into out (q × d, d the model's
// dimension), for the model of handle h.
func decisionCall(resolve resolver, h C.int64_t, x *C.double, q, n C.int64_t, out *C.double, d C.int64_t) error {
	md, X, err := inputsOf(resolve, h, x, q, n)
	if err == nil {
		err = writeScores(md, X, q, n, out, d)
	}
	return err
}

// predictCall writes the predicted structures of the q inputs X (q × n) into out (q × w, w the
// space's width), for the model of handle h.
func predictCall(resolve resolver, h C.int64_t, x *C.double, q, n C.int64_t, out *C.int64_t, w C.int64_t) error {
	md, X, err := inputsOf(resolve, h, x, q, n)
	if err == nil {
		err = writeStructures(md, X, q, n, out, w)
	}
	return err
}

// writeScores checks and views the output of a decision call and fills it with the scores of X.
func writeScores(md model.Model, X []float64, q, n C.int64_t, out *C.double, d C.int64_t) error {
	U, err := dimOut(md.Output(), "decision output", out, q, d)
	if err != nil {
		return err
	}
	if err := disjoint(inputOf("X", X), outputOf("decision output", U)); err != nil {
		return err
	}
	return scoreCall(md, xmat.DenseRows(X, int(q), int(n)), U)
}

// scoreCall writes the scores of X into U, cancellably unless the rows are few and cheap (the
// bound of a prediction's: Python sets up Ctrl-C for more rows than that).
func scoreCall(md model.Model, X xmat.Rows, U []float64) error {
	return cancellable(int64(X.Q) <= predictInlineRows(md), func(stop *cancel.Flag) error { return model.ScoreRows(md, X, U, stop) })
}

// writeStructures checks and views the output of a predict call and fills it with the structures
// predicted for X.
func writeStructures(md model.Model, X []float64, q, n C.int64_t, out *C.int64_t, w C.int64_t) error {
	y, err := rowsOf(md.Output(), "predict output", out, q, w)
	if err != nil {
		return err
	}
	if err := disjoint(inputOf("X", X), outputOf("predict output", y)); err != nil {
		return err
	}
	return cancellable(int64(q) <= predictInlineRows(md), func(stop *cancel.Flag) error { return md.Predict(X, int(q), int(n), y, stop) })
}

// dimOut views a q × d output buffer whose d must be the dimension of the model's space.
func dimOut(sp space.Space, name string, out *C.double, q, d C.int64_t) ([]float64, error) {
	if int64(d) != int64(sp.Dim()) {
		return nil, fmt.Errorf("%s has %d columns, the model has %d", name, int64(d), sp.Dim())
	}
	return f64s(name, out, q, d)
}

// writeCoef copies a linear model's W, nFeatures rows (plus an intercept row when hasIntercept) ×
// d, into out without its intercept row (rows × cols, which must be nFeatures × d) and, when
// intercept is not NULL, the intercept row into it (d values; zeros for a model without one).
func writeCoef(W *mat.Dense, nFeatures int, hasIntercept bool, out *C.double, rows, cols C.int64_t, intercept *C.double) error {
	_, d := W.Dims()
	if int64(rows) != int64(nFeatures) || int64(cols) != int64(d) {
		return fmt.Errorf("coef output is %d×%d, want %d×%d", int64(rows), int64(cols), nFeatures, d)
	}
	buf, err := f64s("coef output", out, rows, cols)
	if err != nil {
		return err
	}
	if raw := W.RawMatrix(); raw.Stride == d {
		copy(buf, raw.Data[:nFeatures*d]) // one copy: a row at a time cost 20 ns a row on 2²⁰ features
	} else {
		for j := 0; j < nFeatures; j++ {
			copy(buf[j*d:(j+1)*d], W.RawRowView(j))
		}
	}
	if intercept != nil {
		b, _ := f64s("intercept output", intercept, cols) // cols = d was checked above
		clear(b)
		if hasIntercept {
			copy(b, W.RawRowView(nFeatures))
		}
	}
	return nil
}

// toBytesCall writes the bytes of the model of handle h into buf when capacity suffices; *needed
// always receives the size (see writeBytes).
func toBytesCall(resolve resolver, h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) error {
	md, err := resolve(h)
	if err != nil {
		return err
	}
	return writeBytes("model", md.MarshalBinary, buf, capacity, needed)
}

// inlineModelBytes is the length up to which fromBytesCall decodes inline, where Ctrl-C cannot
// reach it: such bytes hold at most inlineSpaceParams space parameters, whose space builds in
// milliseconds; a model of a DAG of 10,000 nodes of 40 parents took 3 s to decode (its ancestor sets).
const inlineModelBytes = 8 * inlineSpaceParams

// fromBytesCall decodes a model (or what else what names) of the kind unmarshal reads from the
// caller's bytes and returns its new handle in *out. Long bytes are decoded cancellably, through
// the interrupt poll (unmarshal's stop).
func fromBytesCall[M any](what string, unmarshal func([]byte, *cancel.Flag) (M, error), buf *C.uint8_t, length C.int64_t, out *C.int64_t) error {
	data, err := viewBytes(what, buf, length, out)
	if err != nil {
		return err
	}
	var md M
	err = cancellable(len(data) <= inlineModelBytes, func(stop *cancel.Flag) error {
		var err error
		md, err = unmarshal(data, stop)
		return err
	})
	if err != nil {
		return err
	}
	*out = C.int64_t(newHandle(md))
	return nil
}
