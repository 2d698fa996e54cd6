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
// below it, handing a chunk to another thread costs more than the split saves. A helper that
// polls between loops (pool.go) takes a chunk within a microsecond or two; one that has parked
// must be woken, tens of microseconds on a virtual machine, and the caller runs the chunk itself
// if the helper has not started it by then. When every loop woke a parked thread, yeast's linear
// fit was 40 µs an iteration slower on two threads than on one at 156,000 multiply-adds a loop,
// and MinWork was 2²⁰; with polling helpers, 2¹⁶ took that fit from 3.7–4.4 to 3.2–3.5 ms in Go
// (alternated runs of 200 fits).
const MinWork = 1 << 16

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

// Go calls body(0), …, body(w−1) and returns when all have returned: body(0) on the caller's
// goroutine, the others handed to helper goroutines kept between calls (pool.go) or, when every
// helper is busy, to goroutines of their own; the caller, done with body(0), runs those that have
// not started yet itself. A helper that has been idle may take a while to run (its thread, its
// virtual CPU must wake up); the loop then waits for no more than its own work. The bodies may
// thus run one after the other and must not wait for each other. A panic of body is re-raised on
// the caller's goroutine as a *Panic (the first one, when several panic): a panic on a goroutine
// nobody recovers ends the process, and the C ABI can only recover the ones raised on the
// goroutine that called it.
func Go(w int, body func(g int)) {
	if w <= 0 {
		return
	}
	var first atomic.Pointer[Panic]
	var left atomic.Int64
	left.Store(int64(w - 1))
	done := make(chan struct{}, 1)
	claimed := make([]atomic.Bool, w)
	// run runs body(g) unless it has run or is running elsewhere.
	run := func(g int) {
		if !claimed[g].CompareAndSwap(false, true) {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				first.CompareAndSwap(nil, newPanic(r))
			}
			if g > 0 && left.Add(-1) == 0 {
				done <- struct{}{}
			}
		}()
		body(g)
	}
	for g := 1; g < w; g++ {
		task := func() { run(g) }
		if !handOff(task) {
			go task()
		}
	}
	run(0)
	for g := w - 1; g > 0; g-- { // the last handed over is the least likely to have started
		run(g)
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
