package main

import (
	"fmt"
	"unsafe"
)

// region is the memory of an array argument of a call, for disjoint: output ones are written while
// the call runs.
type region struct {
	name   string
	lo, hi uintptr
	output bool
}

// inputOf and outputOf are the regions of a viewed argument (empty ones overlap nothing).
func inputOf[T any](name string, s []T) region { return regionOf(name, s, false) }

func outputOf[T any](name string, s []T) region { return regionOf(name, s, true) }

func regionOf[T any](name string, s []T, output bool) region {
	if len(s) == 0 {
		return region{name: name, output: output}
	}
	lo := uintptr(unsafe.Pointer(&s[0]))
	return region{name: name, lo: lo, hi: lo + uintptr(len(s))*unsafe.Sizeof(s[0]), output: output}
}

// rawInput is the region of n values of width bytes at p, an argument viewed through an untyped
// pointer (a CSR matrix's indptr, indices and data).
func rawInput(name string, p unsafe.Pointer, n int, width uintptr) region {
	if p == nil || n <= 0 {
		return region{name: name}
	}
	lo := uintptr(p)
	return region{name: name, lo: lo, hi: lo + uintptr(n)*width}
}

// disjoint refuses an output that shares memory with any other array argument: the calls read
// their inputs while they write their outputs, a chunk of rows at a time, and an output laid over
// input rows not yet read gave wrong values with status 0, or made gonum's products panic
// ("bad region"), reported as an internal error (probe CQ).
func disjoint(rs ...region) error {
	for i, a := range rs {
		if !a.output || a.lo == a.hi {
			continue
		}
		for j, b := range rs {
			if j == i || b.lo == b.hi || b.output && j < i {
				continue
			}
			if a.lo < b.hi && b.lo < a.hi {
				return fmt.Errorf("%s shares memory with %s: pass an output array that overlaps no other argument", a.name, b.name)
			}
		}
	}
	return nil
}
