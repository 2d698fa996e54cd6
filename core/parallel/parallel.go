// Package parallel runs loops over rows on a bounded number of goroutines.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

var threads atomic.Int64

// SetThreads sets how many goroutines For uses; n ≤ 0 means one per CPU.
func SetThreads(n int) { threads.Store(int64(n)) }

// Threads reports how many goroutines For uses.
func Threads() int {
	if n := int(threads.Load()); n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// For splits [0, n) into contiguous chunks and calls body(lo, hi) on each, concurrently on up to
// Threads() goroutines, and returns when all are done. minChunk keeps tiny loops serial.
func For(n, minChunk int, body func(lo, hi int)) {
	w := Threads()
	if minChunk < 1 {
		minChunk = 1
	}
	if max := (n + minChunk - 1) / minChunk; w > max {
		w = max
	}
	if w <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + w - 1) / w
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
