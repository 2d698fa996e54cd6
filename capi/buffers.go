package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// maxElems bounds any array length received, so that size arithmetic cannot overflow.
const maxElems = 1 << 40

func size(name string, dims ...C.int64_t) (int, error) {
	total := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("%s: negative dimension %d", name, int64(d))
		}
		if d > 0 && total > maxElems/int64(d) {
			return 0, fmt.Errorf("%s: shape too large", name)
		}
		total *= int64(d)
	}
	return int(total), nil
}

// view checks the shape dims of an array argument and views the caller's memory as n values of
// G, the Go type of the C element type T (C.double → float64, C.int64_t → int64).
func view[G float64 | int64, T C.double | C.int64_t](name string, p *T, dims ...C.int64_t) ([]G, error) {
	n, err := size(name, dims...)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []G{}, nil
	}
	if p == nil {
		return nil, fmt.Errorf("%s is a NULL pointer", name)
	}
	if err := aligned(name, unsafe.Pointer(p), 8); err != nil {
		return nil, err
	}
	return unsafe.Slice((*G)(unsafe.Pointer(p)), n), nil
}

// aligned refuses a pointer that is not a multiple of size: the vector kernels (gonum's, the
// core's) assume the element type's alignment, and a float64 array at an odd address faulted
// inside them, a fatal error that no recover catches (the process aborted).
func aligned(name string, p unsafe.Pointer, size uintptr) error {
	if uintptr(p)%size != 0 {
		return fmt.Errorf("%s is not aligned to %d bytes (address %#x): pass an aligned array (NumPy's are)", name, size, uintptr(p))
	}
	return nil
}

func f64s(name string, p *C.double, dims ...C.int64_t) ([]float64, error) {
	return view[float64](name, p, dims...)
}

func i64s(name string, p *C.int64_t, dims ...C.int64_t) ([]int64, error) {
	return view[int64](name, p, dims...)
}

func outPtr[T any](name string, p *T) error {
	if p == nil {
		return fmt.Errorf("output %s is a NULL pointer", name)
	}
	return nil
}
