package main

/*
#include <string.h>
*/
import "C"

import (
	"fmt"
	"strings"
)

// maxStringLen bounds every string argument of the ABI: parameter strings (maxParamsLen), space
// kinds, argument names and OMP_NUM_THREADS' value.
const maxStringLen = maxParamsLen

// goString returns the C string p as a Go string ("" for NULL), refusing one longer than
// maxStringLen bytes before any of it is copied: C.GoString copied a string of any length into Go
// first, outside the memory budget, and 1.3 GB under an address-space limit aborted the process
// (probe 87). what names the argument in the error.
func goString(p *C.char, what string) (string, error) {
	if p == nil {
		return "", nil
	}
	n := C.strnlen(p, maxStringLen+1)
	if n > maxStringLen {
		return "", fmt.Errorf("%s is longer than %d bytes", what, maxStringLen)
	}
	return C.GoStringN(p, C.int(n)), nil
}

// goName is goString for a name the core puts in its messages: bytes that are not UTF-8 become
// U+FFFD, so that the error text a caller reads back is UTF-8 (probe 87).
func goName(p *C.char, what string) (string, error) {
	s, err := goString(p, what)
	return strings.ToValidUTF8(s, "\uFFFD"), err
}
