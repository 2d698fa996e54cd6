package main

/*
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/combpred/combpred/core/model"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
	"github.com/combpred/combpred/core/space"
)

// The info calls answer with one JSON object rather than a list of positional output pointers, so
// that a new field is an addition, not a new ABI: a caller reads the names it knows and ignores the
// rest. Every object carries "version" (infoVersion), raised only when a field changes meaning.
const infoVersion = 1

// jsonFloat is a float64 that JSON can carry when it is not finite (an objective is NaN when
// inference was sampled): NaN and ±Inf are written as the strings "NaN", "Infinity" and
// "-Infinity", which float() reads in Python; JSON has no literal for them.
type jsonFloat float64

// MarshalJSON writes f in the shortest form that reads back exactly.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// spaceInfo is what cp_space_info reports.
type spaceInfo struct {
	Version  int       `json:"version"`
	Kind     string    `json:"kind"`
	Dim      int       `json:"dim"`       // d, the length of ψ
	Width    int       `json:"width"`     // int64 values per structure
	LogCount jsonFloat `json:"log_count"` // log|Y|
	// Guarantee is the decoder's z-approximation factor, 0 when exact.
	Guarantee jsonFloat `json:"guarantee"`
	// Uncounted says why |Y|, the uniform moments and sampler are unknown; empty when known.
	Uncounted string `json:"uncounted"`
	// ZeroOne: every ψ(y) is in {0, 1}^d (space.ZeroOne), what the Hamming decision rule needs.
	ZeroOne bool `json:"zero_one"`
	// ConstantNorm: ‖ψ(y)‖² is the same for every y and ψ is not 0/1 (space.ConstantNorm):
	// exact loss-augmented decoding needs one of the two.
	ConstantNorm bool `json:"constant_norm"`
	// CoordLow and CoordHigh bound every coordinate of every ψ(y) (space.CoordRange).
	CoordLow  jsonFloat `json:"coord_low"`
	CoordHigh jsonFloat `json:"coord_high"`
}

// fitInfo is how a fit ended, common to both model kinds.
type fitInfo struct {
	Version   int  `json:"version"`
	NFeatures int  `json:"n_features"`
	Dim       int  `json:"dim"`
	Width     int  `json:"width"`
	NIter     int  `json:"n_iter"`
	Converged bool `json:"converged"`
	// Objective is J at the end of the fit; NaN when the probabilistic model's inference was sampled.
	Objective        jsonFloat `json:"objective"`
	RelativeGradient jsonFloat `json:"relative_gradient"`
	// InlineRows is the number of rows up to which predict runs inline, not cancellable
	// (inlineRows of the model's space): Python skips its Ctrl-C plumbing for them.
	InlineRows int64 `json:"inline_rows"`
	// Warnings are what the fit warns of (ridge.Model.Warnings, prob.Model.Warnings), for Python
	// to issue; empty for a model read from bytes.
	Warnings []string `json:"warnings"`
}

// ridgeInfo is what cp_ridge_info reports.
type ridgeInfo struct {
	fitInfo
	Kernel string `json:"kernel"`
	// NDual is the number of training samples kept in the kernel expansion (0 for linear and
	// Nyström models; at most tau for SGD with truncation).
	NDual       int   `json:"n_dual"`
	NComponents int   `json:"n_components"` // of the Nyström map, 0 without one
	NSeen       int64 `json:"n_seen"`       // examples trained on (partial_fit: the running total)
	NSteps      int64 `json:"n_steps"`      // SGD steps, which partial_fit's schedule continues from
	// Streaming: the model holds the sufficient statistics with which cp_ridge_partial_fit
	// continues it exactly.
	Streaming bool `json:"streaming"`
	// Solver is the solver the last fit ran ("exact", "cg" or "sgd", auto resolved); empty for a
	// model read from bytes, which do not hold it.
	Solver string `json:"solver"`
}

// probInfo is what cp_prob_info reports.
type probInfo struct {
	fitInfo
	Intercept bool   `json:"intercept"`
	Exact     bool   `json:"exact"`  // inference during the fit was exact
	Solver    string `json:"solver"` // "none" for a model built from coefficients
	// RelativeGradientSE is the Monte Carlo standard error of relative_gradient (0 when inference
	// was exact, NaN when unknown: bytes of format version 1).
	RelativeGradientSE jsonFloat `json:"relative_gradient_se"`
	// FinalSamples is the samples per row of the last sampled gradient (0 when exact or unknown).
	FinalSamples int `json:"final_samples"`
}

func newSpaceInfo(sp space.Space) spaceInfo {
	info := spaceInfo{Version: infoVersion, Kind: sp.Kind(), Dim: sp.Dim(), Width: sp.Width(),
		LogCount: jsonFloat(sp.LogCount()), Guarantee: jsonFloat(sp.Guarantee()), ZeroOne: space.IsZeroOne(sp),
		ConstantNorm: space.IsConstantNorm(sp)}
	lo, hi := space.CoordRange(sp)
	info.CoordLow, info.CoordHigh = jsonFloat(lo), jsonFloat(hi)
	if u, ok := sp.(space.Uncounted); ok {
		info.Uncounted = u.Uncounted()
	}
	return info
}

// newFitInfo fills the fields both model kinds report from their fit's outcome.
func newFitInfo(nFeatures int, md model.Model, iterations int, converged bool, objective, relGrad float64, warnings []string) fitInfo {
	sp := md.Output()
	return fitInfo{Version: infoVersion, NFeatures: nFeatures, Dim: sp.Dim(), Width: sp.Width(), NIter: iterations,
		Converged: converged, Objective: jsonFloat(objective), RelativeGradient: jsonFloat(relGrad),
		InlineRows: predictInlineRows(md), Warnings: append([]string{}, warnings...)} // [] rather than null
}

func newRidgeInfo(md *ridge.Model) ridgeInfo {
	r := md.Result
	in := ridgeInfo{
		fitInfo: newFitInfo(md.NFeatures, md, r.Iterations, r.Converged, r.Objective, r.RelGrad, md.Warnings),
		Kernel:  md.Kernel.Kind.String(), NComponents: md.Components(), NSeen: md.Seen, NSteps: md.Steps,
		Streaming: md.Streaming(),
	}
	if md.Solver != ridge.Auto {
		in.Solver = md.Solver.String()
	}
	if md.Dual != nil {
		in.NDual, _ = md.Dual.Dims()
	}
	return in
}

func newProbInfo(md *prob.Model) probInfo {
	r := md.Result
	return probInfo{
		fitInfo:   newFitInfo(md.NFeatures, md, r.Iterations, r.Converged, r.Objective, r.RelGrad, md.Warnings),
		Intercept: md.Intercept, Exact: md.Result.Exact, Solver: solverName(md.Result.Solver),
		RelativeGradientSE: jsonFloat(r.RelGradSE), FinalSamples: r.FinalSamples,
	}
}

// solverName is the solver a fit ran; a fit's result never holds SolverAuto, which therefore marks
// a model built from coefficients.
func solverName(s prob.Solver) string {
	if s == prob.SolverAuto {
		return "none"
	}
	return s.String()
}

// writeJSON encodes v and copies it into buf as writeBytes does: *needed always receives the size,
// and the bytes are written when capacity suffices (no terminating NUL).
func writeJSON(v any, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) error {
	return writeBytes("JSON", func() ([]byte, error) { return json.Marshal(v) }, buf, capacity, needed)
}

// cp_space_info writes the space's description as a JSON object into buf (capacity bytes; *needed
// receives the size, and nothing is written when it exceeds capacity): version, kind, dim (d, the
// length of ψ), width (int64 values per structure), log_count (log|Y|), guarantee (its
// decoder's z-approximation factor, 0 when exact), uncounted (why |Y| is unknown, or empty),
// zero_one (every ψ(y) is in {0, 1}^d), constant_norm (‖ψ(y)‖² is the same for every y, for a
// ψ that is not 0/1), and coord_low and coord_high (bounds of every coordinate of every ψ(y)).
//
//export cp_space_info
func cp_space_info(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	sp, err := spaceOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(writeJSON(newSpaceInfo(sp), buf, capacity, needed))
}

// cp_ridge_info writes the StructuredRidge model's shapes and how its fit ended as a JSON object
// into buf (as cp_space_info): version, n_features, dim, width, n_iter, converged, objective,
// relative_gradient, kernel (its name), n_dual (training samples kept in the kernel expansion: 0
// for linear and Nyström models), n_components (of the Nyström map, 0 without one), n_seen
// (examples trained on), n_steps (SGD steps), streaming (the model holds the statistics with
// which cp_ridge_partial_fit continues it exactly), inline_rows (queries of at most this many
// rows run on the caller's thread and cannot be cancelled: at most the schema's inline_rows,
// fewer where decoding a row is expensive) and solver (the solver the last fit ran, auto
// resolved; empty for a model read from bytes).
//
//export cp_ridge_info
func cp_ridge_info(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := modelOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(writeJSON(newRidgeInfo(md), buf, capacity, needed))
}

// cp_prob_info writes the ProbabilisticStructured model's shapes and how its fit ended as a JSON
// object into buf (as cp_space_info): version, n_features, dim, width, n_iter, converged, objective
// (NaN when inference was sampled), relative_gradient, relative_gradient_se (its Monte Carlo
// standard error: 0 when inference was exact), final_samples (per row, at the last sampled
// gradient), intercept, exact (inference during the fit was exact), solver ("none" for a model
// built from coefficients, "lbfgs", "adam") and inline_rows (as cp_ridge_info).
//
//export cp_prob_info
func cp_prob_info(h C.int64_t, buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) (rc C.int) {
	defer guard(&rc)
	md, err := probModelOf(int64(h))
	if err != nil {
		return status(err)
	}
	return status(writeJSON(newProbInfo(md), buf, capacity, needed))
}
