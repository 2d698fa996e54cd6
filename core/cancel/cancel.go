// Package cancel lets a caller stop a long computation from another goroutine: the C ABI sets a
// Flag when the Python user presses Ctrl-C, and the loops over rows, samples, stages and epochs
// check it. A nil *Flag never stops, so code that cannot be cancelled passes nil.
package cancel

import (
	"errors"
	"sync/atomic"

	"runtime"
)

// ErrCancelled is returned by a computation that stopped because its Flag was set.
var ErrCancelled = errors.New("cancelled")

// Flag is a stop request, safe for concurrent use. The zero value is not set.
type Flag struct{ set atomic.Bool }

// Stop sets the flag; it does nothing on a nil Flag.
func (f *Flag) Stop() {
	if f != nil {
		f.set.Store(true)
	}
}

// Stopped reports whether the flag is set; false for a nil Flag.
func (f *Flag) Stopped() bool { return f != nil && f.set.Load() }

// Err is ErrCancelled when the flag is set, nil otherwise.
func (f *Flag) Err() error {
	if f.Stopped() {
		return ErrCancelled
	}
	return nil
}

// Yield reports whether the flag is set after letting the scheduler run other goroutines; on a
// nil Flag it only reports false. Long loops check the flag with Yield: the goroutine that sets
// it on Ctrl-C runs locked to the caller's thread, and work that spends its time in assembly
// kernels (gemm, axpy) offers the runtime few preemption points, which kept that goroutine from
// running for up to a second.
func (f *Flag) Yield() bool {
	if f == nil {
		return false
	}
	runtime.Gosched()
	return f.set.Load()
}
