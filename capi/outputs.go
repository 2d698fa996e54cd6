package main

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"

	"github.com/combpred/combpred/core/budget"
)

// cp_check_output checks an output buffer that the caller is about to allocate for a call against
// the memory budget: bytes (saturated at 2⁶³ − 1 by the caller) for what (the argument that sets
// its size). It fails with the memory status and a message naming what and the bytes, so that a
// huge n_samples is refused before NumPy tries to allocate terabytes.
//
//export cp_check_output
func cp_check_output(bytes C.int64_t, what *C.char) (rc C.int) {
	defer guard(&rc)
	name, err := goName(what, "what")
	if err != nil {
		return status(err)
	}
	if name == "" {
		name = "an output" // a caller that names nothing still gets a subject (probe DX)
	}
	if bytes < 0 {
		return status(fmt.Errorf("%s: a negative output size", name))
	}
	return status(budget.Check(name, int64(bytes)))
}
