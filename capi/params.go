package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/combpred/combpred/core/kernel"
	"github.com/combpred/combpred/core/ridge"
)

// parseFitParams reads the fit parameter string, "key=value" pairs separated by ';', as LightGBM
// does (new parameters never change the ABI), by the table ridgeParams (schema.go), which says
// each key's type, default and range, for inputs of n features. Unknown keys and bad values are
// errors naming the key; the options are then validated as a whole (ridge.Options.Validate: the
// combinations). Two rules of the parameters live here, for every caller: gamma left out is
// 1/n_features (Python's None), and n_components, like gamma and degree, is ignored by the
// kernels it does not apply to.
func parseFitParams(s string, n int) (ridge.Options, error) {
	var opt ridge.Options
	defaults(ridgeParams, &opt)
	if err := parseTable(ridgeParams, s, &opt); err != nil {
		return opt, err
	}
	if opt.Kernel.Gamma == 0 && n > 0 { // not given: the table refuses a gamma of 0
		opt.Kernel.Gamma = 1 / float64(n)
	}
	if opt.Kernel.Kind != kernel.RBF && opt.Kernel.Kind != kernel.Poly {
		opt.NComponents = 0
	}
	return opt, opt.Validate()
}

func parseFloat(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("out of float64's range")
	}
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if v == 0 && nonzeroMantissa(s) {
		// 1e-400 read as 0, which for alpha means "the default": a silent change of meaning
		return 0, fmt.Errorf("too small for float64 (it reads as 0)")
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be finite")
	}
	return v, nil
}

// nonzeroMantissa reports whether the decimal or hexadecimal literal s has a nonzero digit before
// its exponent.
func nonzeroMantissa(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, "+-"))
	hex := strings.HasPrefix(s, "0x")
	if hex {
		s = s[2:]
	}
	for _, c := range s {
		switch {
		case !hex && c == 'e', hex && c == 'p':
			return false
		case c >= '1' && c <= '9', hex && c >= 'a' && c <= 'f':
			return true
		}
	}
	return false
}

// parseFlag reads a 0/1 flag.
func parseFlag(s string) (bool, error) {
	v, err := parseInt(s)
	if err == nil && v != 0 && v != 1 {
		err = fmt.Errorf("want 0 or 1")
	}
	return v == 1, err
}

// parseInt reads a 32-bit integer.
func parseInt(s string) (int, error) {
	v, err := parseIntBits(s, 32)
	return int(v), err
}

// parseIntBits reads a signed integer of the given size in bits.
func parseIntBits(s string, bits int) (int64, error) {
	v, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("not a %d-bit integer", bits)
	}
	return v, nil
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
