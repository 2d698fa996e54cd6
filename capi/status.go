package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
)

// Status codes returned by every cp_ function.
const (
	cpOK        = 0
	cpValue     = 1 // invalid argument or data: Python raises ValueError
	cpType      = 2 // wrong kind of argument (handle kind, dtype): TypeError
	cpCancelled = 3 // the progress callback asked to stop: KeyboardInterrupt
	cpInternal  = 4 // a recovered panic: RuntimeError
	cpMemory    = 5 // a request above the memory budget (budget.Check): MemoryError
)

type typeError struct{ error }

func setError(msg string) {
	cs := C.CString(msg)
	defer C.free(unsafe.Pointer(cs))
	C.cp_set_error(cs)
}

func status(err error) C.int {
	if err == nil {
		return cpOK
	}
	setError(err.Error())
	var te typeError
	switch {
	case errors.As(err, &te):
		return cpType
	case errors.Is(err, ridge.ErrCancelled), errors.Is(err, prob.ErrCancelled):
		return cpCancelled
	case budget.Is(err):
		return cpMemory
	}
	return cpValue
}

// guard recovers a panic into an internal-error status. Deferred first in every export.
func guard(rc *C.int) {
	if r := recover(); r != nil {
		setError(describePanic(r))
		*rc = cpInternal
	}
}
