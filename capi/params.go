package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/ridge"
)

// parseFitParams reads the fit parameter string, "key=value" pairs separated by ';', as LightGBM
// does: new parameters never change the ABI. Unknown keys and bad values are errors naming the key.
//
// Keys: alpha, kernel (linear, poly, rbf, precomputed), gamma, degree, coef0, fit_intercept (0/1),
// solver (auto, exact, cg, sgd), tol (0 with solver sgd: no tolerance stop), max_iter (CG
// iterations, SGD epochs), n_components (Nyström map, 0 = none), random_state (seed of the
// landmarks and of SGD's example order, an unsigned 64-bit integer), eta0 (SGD step parameter p,
// η_t = p/(α·t); 0 = default 0.5), tau (SGD expansion truncation, 0 = none) and trace_objective
// (0/1: SGD evaluates the objective after every epoch for the progress callback even when tol = 0
// does not need it; the callback gets NaN otherwise).
func parseFitParams(s string) (ridge.Options, error) {
	opt := ridge.Options{
		Alpha:     1,
		Kernel:    kernel.Kernel{Kind: kernel.Linear, Gamma: 1, Degree: 3, Coef0: 1},
		Intercept: true,
		Tol:       1e-8,
		MaxIter:   1000,
	}
	err := eachParam(s, func(key, val string) (bool, error) {
		var err error
		switch key {
		case "alpha":
			opt.Alpha, err = parseFloat(val)
		case "gamma":
			opt.Kernel.Gamma, err = parseFloat(val)
		case "coef0":
			opt.Kernel.Coef0, err = parseFloat(val)
		case "tol":
			opt.Tol, err = parseFloat(val)
		case "degree":
			opt.Kernel.Degree, err = parseInt(val)
		case "max_iter":
			opt.MaxIter, err = parseInt(val)
		case "fit_intercept":
			opt.Intercept, err = parseFlag(val)
		case "trace_objective":
			opt.TraceObjective, err = parseFlag(val)
		case "kernel":
			opt.Kernel.Kind, err = kernel.ParseKind(val)
		case "solver":
			opt.Solver, err = ridge.ParseSolver(val)
		case "n_components":
			opt.NComponents, err = parseInt(val)
		case "tau":
			opt.Tau, err = parseInt(val)
		case "eta0":
			opt.Eta0, err = parseFloat(val)
		case "random_state":
			opt.Seed, err = strconv.ParseUint(val, 10, 64)
			if err != nil {
				err = fmt.Errorf("not an unsigned 64-bit integer")
			}
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return opt, err
	}
	return opt, opt.Validate()
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be finite")
	}
	return v, nil
}

// parseFlag reads a 0/1 flag.
func parseFlag(s string) (bool, error) {
	v, err := parseInt(s)
	if err == nil && v != 0 && v != 1 {
		err = fmt.Errorf("want 0 or 1")
	}
	return v == 1, err
}

func parseInt(s string) (int, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("not a 32-bit integer")
	}
	return int(v), nil
}

// maxParamsLen bounds a parameter string.
const maxParamsLen = 1 << 16

// eachParam splits a "key=value;key=value" string (LightGBM's habit: new parameters never change
// the ABI) and calls set for each pair, trimmed, in order. Malformed items, repeated keys and
// overlong strings are errors; set returns known = false for a key it does not take, and an error
// for a bad value, which is reported naming the key.
func eachParam(s string, set func(key, val string) (known bool, err error)) error {
	if len(s) > maxParamsLen {
		return fmt.Errorf("parameter string of %d bytes is too long", len(s))
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("parameter %q is not key=value", item)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if seen[key] {
			return fmt.Errorf("parameter %s is given twice", key)
		}
		seen[key] = true
		known, err := set(key, val)
		if !known {
			return fmt.Errorf("unknown parameter %q", key)
		}
		if err != nil {
			return fmt.Errorf("parameter %s=%q: %v", key, val, err)
		}
	}
	return nil
}
