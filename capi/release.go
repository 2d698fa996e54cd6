package main

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// releaseAbove is the allocation of one call beyond which the call's end returns the heap's free
// memory to the operating system (releaseAfter).
const releaseAbove = 64 << 20

// releasing is set while a release runs: calls ending meanwhile start none of their own.
var releasing atomic.Bool

// heapAllocs returns the bytes the Go heap has allocated since the process started.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// releaseAfter returns the heap's free memory to the operating system, on a goroutine of its own,
// when the call that began with heapAllocs() = before allocated more than releaseAbove. Go collects
// a call's temporaries only once the heap grows again by about as much, and keeps the pages of
// that peak: an rbf fit's 123 MB Gram matrix stayed resident in an idle Python process for four
// minutes, until the runtime's second forced collection (probe W). The collection it runs costs
// about the live heap's pointers, which are few (the core's large arrays hold floats).
func releaseAfter(before uint64) {
	if heapAllocs()-before <= releaseAbove || !releasing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer releasing.Store(false)
		debug.FreeOSMemory()
	}()
}
