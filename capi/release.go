package main

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// releaseAbove is the allocation of one call beyond which the heap's free memory goes back to the
// operating system once no call has run for releaseIdle (releaseAfter).
const (
	releaseAbove = 64 << 20
	releaseIdle  = time.Second
)

var (
	releasing atomic.Bool   // a release is pending: calls ending meanwhile arm none of their own
	calls     atomic.Uint64 // the calls begun on a worker (onWorker)
	running   atomic.Int64  // the calls running on a worker now
)

// heapAllocs returns the bytes the Go heap has allocated since the process started.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// releaseAfter returns the heap's free memory to the operating system once no call has run for
// releaseIdle (none running, none begun), when the call that began with heapAllocs() = before
// allocated more than releaseAbove. Go collects a call's temporaries only once the heap grows
// again by about as much, and keeps the pages of that peak: an rbf fit's 123 MB Gram matrix stayed
// resident in an idle Python process for four minutes, until the runtime's second forced
// collection (probe W). Waiting for idleness leaves the pages to a loop of large fits, which would
// otherwise fault them in again every time; the collection costs about the live heap's pointers,
// which are few (the core's large arrays hold floats).
func releaseAfter(before uint64) {
	if heapAllocs()-before <= releaseAbove || !releasing.CompareAndSwap(false, true) {
		return
	}
	var wait func(seen uint64)
	wait = func(seen uint64) {
		time.AfterFunc(releaseIdle, func() {
			if now := calls.Load(); now != seen || running.Load() != 0 {
				wait(now) // still busy: look again later
				return
			}
			debug.FreeOSMemory()
			releasing.Store(false)
		})
	}
	wait(calls.Load())
}
