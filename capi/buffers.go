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
	return unsafe.Slice((*G)(unsafe.Pointer(p)), n), nil
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
