package main

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Model ⇄ bytes, shared by every model kind of the ABI (pickling goes through these).

// writeBytes encodes a model and copies its bytes into buf when capacity suffices; *needed always
// receives the size.
func writeBytes(marshal func() ([]byte, error), buf *C.uint8_t, capacity C.int64_t, needed *C.int64_t) error {
	if err := outPtr("needed", needed); err != nil {
		return err
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
		return errors.New("bytes output is a NULL pointer")
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), len(b)), b)
	return nil
}

// viewBytes checks the arguments of a from_bytes call and views the caller's bytes (decoders copy
// what they keep).
func viewBytes(buf *C.uint8_t, length C.int64_t, out *C.int64_t) ([]byte, error) {
	if err := outPtr("model handle", out); err != nil {
		return nil, err
	}
	if length < 0 || length > maxElems {
		return nil, fmt.Errorf("model bytes: bad length %d", int64(length))
	}
	if length > 0 && buf == nil {
		return nil, errors.New("model bytes is a NULL pointer")
	}
	if length == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(length)), nil
}
