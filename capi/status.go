package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/check"
	"github.com/combpred/combpred/core/prob"
	"github.com/combpred/combpred/core/ridge"
)

// Status codes returned by every cp_ function.
const (
	cpOK        = 0
	cpValue     = 1 // invalid argument or data: Python raises ValueError
	cpType      = 2 // wrong kind of argument (handle kind, dtype): TypeError
	cpCancelled = 3 // the progress callback or the interrupt poll asked to stop: KeyboardInterrupt
	cpInternal  = 4 // a recovered panic: RuntimeError
	cpMemory    = 5 // a request above the memory budget (budget.Check): MemoryError
)

type typeError struct{ error }

// errorText returns msg shortened to at most limit bytes by cutting out its middle, at character
// boundaries: the C buffer kept the first bytes only, which ended inside a UTF-8 character and lost
// the diagnosis behind an echoed 4 KB parameter string (probe BP). The head says which call and
// argument, the tail what went wrong.
func errorText(msg string, limit int) string {
	const cut = " … "
	if len(msg) <= limit {
		return msg
	}
	if limit <= len(cut) {
		return ""
	}
	head := (limit - len(cut)) / 2
	for head > 0 && !utf8.RuneStart(msg[head]) { // not inside a character
		head--
	}
	tail := len(msg) - (limit - len(cut) - head)
	for tail < len(msg) && !utf8.RuneStart(msg[tail]) {
		tail++
	}
	return msg[:head] + cut + msg[tail:]
}

func setError(msg string) {
	cs := C.CString(errorText(msg, C.CP_ERROR_SIZE-1))
	defer C.free(unsafe.Pointer(cs))
	C.cp_set_error(cs)
}

func status(err error) C.int {
	if err == nil {
		return cpOK
	}
	var te typeError
	code := C.int(cpValue)
	switch {
	case errors.As(err, &te):
		code = cpType
	case errors.Is(err, ridge.ErrCancelled), errors.Is(err, prob.ErrCancelled):
		code = cpCancelled
	case budget.Is(err):
		code = cpMemory
	}
	if code == cpValue || code == cpType {
		// the rows of the call are rows of a larger input from the origin on (cp_set_row_origin)
		err = check.AtRows(int(C.cp_load_row_origin()), err)
	}
	setError(err.Error())
	return code
}

// cp_set_row_origin sets the row of a larger input at which the rows passed by this thread's
// next calls begin (0 when they are the whole input, the default): a value or type error of those
// calls about one row then names the input's own row (check.RowError), and another says "in the
// rows from first on:", so that the row numbers in the message lead to the input's own row. A Dask partition's calls set the partition's first row, and set 0 after.
//
//export cp_set_row_origin
func cp_set_row_origin(first C.int64_t) (rc C.int) {
	defer guard(&rc)
	if first < 0 {
		// set directly: status would put the origin in force, which this call did not change, in
		// front of the message (probe DX)
		setError(fmt.Sprintf("row origin %d: must be non-negative", int64(first)))
		return cpValue
	}
	C.cp_store_row_origin(first)
	return cpOK
}

// guard recovers a panic into an internal-error status. Deferred first in every export.
func guard(rc *C.int) {
	if r := recover(); r != nil {
		setError(describePanic(r))
		*rc = cpInternal
	}
}
