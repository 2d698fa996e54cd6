// Package model declares what every fitted combpred model answers, whatever estimator fitted it:
// StructuredRidge's ridge.Model and ProbabilisticStructured's prob.Model. The C ABI serves the
// calls that both answer (scores, predictions, bytes) through this one interface, so that the two
// kinds cannot drift apart in what they accept.
package model

import (
	"encoding"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/space"
	"github.com/combpred/combpred/core/xmat"
)

// Model is a fitted predictor of structures of one output space from feature vectors.
type Model interface {
	// Output is the space of the structures the model predicts.
	Output() space.Space
	// Decision writes the scores u(x) of the q inputs X (q × n, row-major) into U (q × d, d the
	// dimension of Output).
	Decision(X []float64, q, n int, U []float64) error
	// Predict writes the structure predicted for each of the q inputs X into ys (q × w, w the
	// width of Output); it stops with cancel.ErrCancelled once stop is set (nil: never).
	Predict(X []float64, q, n int, ys []int64, stop *cancel.Flag) error
	// DecisionRows and PredictRows are Decision and Predict on dense or sparse (CSR) rows.
	DecisionRows(X xmat.Rows, U []float64) error
	PredictRows(X xmat.Rows, ys []int64, stop *cancel.Flag) error
	// ScoreWork estimates the multiply-adds of scoring one input (its u(x)), to the order of
	// magnitude: with space.DecodeWork, what a prediction costs before any of it can be cancelled.
	ScoreWork() float64
	// MarshalBinary encodes the model; each kind's Unmarshal reads it back.
	encoding.BinaryMarshaler
}
