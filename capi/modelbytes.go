package main

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Model ⇄ bytes, shared by every model kind of the ABI (pickling goes through these).

// writeBytes encodes a model (or what else what names: statistics, JSON) and copies its bytes
// into buf when capacity suffices; *needed always receives the size.
func writeBytes(what string, marshal func() ([]byte, error), buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) error {
	if err := outPtr("needed", needed); err != nil {
		return err
	}
	if capacity < 0 {
		return fmt.Errorf("the %s bytes' buffer capacity %d is negative (0 asks for the size)", what, int64(capacity))
	}
	b, err := marshal()
	if err != nil {
		return err
	}
	*needed = C.int64_t(len(b))
	if int64(capacity) < int64(len(b)) {
		return nil
	}
	if buf == nil {
		return fmt.Errorf("the %s bytes' output buffer is a NULL pointer", what)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(b)), b)
	return nil
}

// viewBytes checks the arguments of a from_bytes call of a model (or what else what names) and
// views the caller's bytes (decoders copy what they keep).
func viewBytes(what string, buf *C.uint8_t, length C.int64_t, out *C.int64_t) ([]byte, error) {
	if err := outPtr(what+" handle", out); err != nil {
		return nil, err
	}
	if length < 0 || length > maxElems {
		return nil, fmt.Errorf("%s bytes: bad length %d", what, int64(length))
	}
	if length > 0 && buf == nil {
		return nil, fmt.Errorf("%s bytes is a NULL pointer", what)
	}
	if length == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(length)), nil
}
