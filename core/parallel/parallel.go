// Package parallel runs loops over rows on a bounded number of goroutines.
package parallel

import (
	"fmt"
	"runtime"
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

// MinWork is the fewest multiply-adds a loop should have before it is split across threads:
// below it, handing a chunk to another thread costs more than the split saves. The cost is
// waking that thread, parked since the previous loop: tens of microseconds on a virtual machine,
// whose idle virtual CPU must be woken too (yeast's linear fit, one loop of 156,000 multiply-adds
// per CG iteration: 40 µs slower an iteration on two threads than on one).
const MinWork = 1 << 20

// RowsPerChunk is the minChunk of For for a loop over rows of cols values each that does a few
// operations per value (a copy, a scaling, a check): enough rows for MinWork values.
func RowsPerChunk(cols int) int { return max(1, MinWork/max(cols, 1)) }

// For splits [0, n) into contiguous chunks and calls body(lo, hi) on each, concurrently on up to
// Threads() goroutines, and returns when all are done. minChunk keeps tiny loops serial. A panic
// of body on any goroutine is re-raised on the caller's, as a *Panic, once every chunk has ended.
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
	chunk := (n + w - 1) / w
	Go((n+chunk-1)/chunk, func(g int) { body(g*chunk, min((g+1)*chunk, n)) })
}

// Go calls body(0), …, body(w−1) concurrently and returns when all have returned: body(0) on the
// caller's goroutine, the others on helper goroutines kept between calls (pool.go) or, when
// every helper is busy, on goroutines of their own. A panic of body is re-raised on the caller's
// goroutine as a *Panic (the first one, when several panic): a panic on a goroutine nobody
// recovers ends the process, and the C ABI can only recover the ones raised on the goroutine
// that called it.
func Go(w int, body func(g int)) {
	var first atomic.Pointer[Panic]
	run := func(g int) {
		defer func() {
			if r := recover(); r != nil {
				first.CompareAndSwap(nil, newPanic(r))
			}
		}()
		body(g)
	}
	var left atomic.Int64
	left.Store(int64(w - 1))
	done := make(chan struct{}, 1)
	for g := 1; g < w; g++ {
		task := func() {
			run(g)
			if left.Add(-1) == 0 {
				done <- struct{}{}
			}
		}
		if !handOver(task) {
			go task()
		}
	}
	if w > 0 {
		run(0)
	}
	if w > 1 {
		awaitZero(w, &left, done)
	}
	if p := first.Load(); p != nil {
		panic(p)
	}
}

// Panic is a panic raised by a body that For or Go ran on another goroutine: its value, and the
// stack of that goroutine, which the caller's own stack would not show.
type Panic struct {
	Value any
	Stack []byte
}

func newPanic(r any) *Panic {
	if p, ok := r.(*Panic); ok {
		return p // a nested loop's panic keeps the innermost stack
	}
	buf := make([]byte, 8192)
	return &Panic{Value: r, Stack: buf[:runtime.Stack(buf, false)]}
}

// Error reports the value.
func (p *Panic) Error() string { return fmt.Sprint(p.Value) }
