package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
)

// workerPanic carries a panic of the worker goroutine, with its stack, to the exported function's
// goroutine, whose guard reports it.
type workerPanic struct {
	value any
	stack []byte
}

// relayEvery is how often the calling goroutine wakes to pass the worker's progress reports on.
const relayEvery = 20 * time.Millisecond

// onWorker runs fit on a goroutine of its own and waits for it, relaying its progress reports.
//
// A function exported through cgo runs on a goroutine locked to the foreign thread that called it
// (Python's). The core's parallel loops park that goroutine at every join and must wake exactly
// that thread to resume it: a kernel context switch per loop, thousands per fit, which made a fit
// called from Python 1.7× slower than the same fit in a Go program (yeast rbf: 0.35 s against
// 0.20 s). The worker goroutine resumes on any thread.
//
// Progress reports still reach the caller's callback on the calling goroutine, hence on the
// caller's thread: Python runs its signal handlers only there, and Ctrl-C must still cancel a
// fit. The worker queues its reports without waiting; the caller wakes every relayEvery (and at
// the end) and passes each one on, in order. A callback asking to stop makes the worker's next
// report return false, and sets stop, which the fit's inner loops check, so the fit stops within
// about relayEvery. progress is replaced by the queueing function; a nil progress stays nil.
func onWorker(progress *func(iter int, objective, relGrad float64) bool, stop *cancel.Flag, fit func() error) error {
	type report struct {
		iter               int
		objective, relGrad float64
	}
	callback := *progress
	var (
		mu      sync.Mutex
		queued  []report
		stopped atomic.Bool
	)
	if callback != nil {
		*progress = func(iter int, objective, relGrad float64) bool {
			mu.Lock()
			queued = append(queued, report{iter, objective, relGrad})
			mu.Unlock()
			return !stopped.Load()
		}
	}
	relay := func() {
		mu.Lock()
		batch := queued
		queued = nil
		mu.Unlock()
		if len(batch) == 0 && !stopped.Load() && interrupted() {
			// No report to relay (an iteration can take seconds), but Ctrl-C must still reach
			// the fit's inner loops through stop.
			stopped.Store(true)
			stop.Stop()
		}
		for _, r := range batch {
			if stopped.Load() {
				return // nothing is reported after the callback asked to stop
			}
			if !callback(r.iter, r.objective, r.relGrad) {
				stopped.Store(true)
				stop.Stop()
			}
		}
	}
	done := make(chan error, 1)
	var crash *workerPanic
	go func() {
		defer recoverWorker(&crash, done)
		calls.Add(1)
		running.Add(1)
		defer running.Add(-1) // before recoverWorker's report: a panicking call still ends
		defer budget.Share()()
		before := heapAllocs()
		err := fit()
		releaseAfter(before) // a timer, which finds this call ended
		done <- err
	}()
	finished := false
	defer outliveWorker(done, &finished)
	var tick <-chan time.Time
	if callback != nil || pollRegistered() {
		ticker := time.NewTicker(relayEvery)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case <-tick:
			relay()
		case err := <-done:
			finished = true
			if crash != nil {
				panic(crash)
			}
			if callback != nil {
				relay()
				if err == nil && stopped.Load() {
					// A stop asked for in the reports of a fit that ended before they were relayed
					// (within relayEvery) still cancels it, as the header promises: the call
					// returned a model with status 0.
					return cancel.ErrCancelled
				}
			}
			return err
		}
	}
}

// describePanic is the message of the internal error a recovered panic becomes: its value and the
// stack of the goroutine that raised it, which is the fit's worker (*workerPanic) or one of the
// core's loop goroutines (*parallel.Panic, possibly inside a *workerPanic) when not the caller's.
func describePanic(r any) string {
	var stack []byte
	if wp, ok := r.(*workerPanic); ok {
		r, stack = wp.value, wp.stack
	}
	if pp, ok := r.(*parallel.Panic); ok {
		r, stack = pp.Value, pp.Stack
	}
	if stack == nil {
		buf := make([]byte, 4096)
		stack = buf[:runtime.Stack(buf, false)]
	}
	return fmt.Sprintf("internal error in combpred (please report): %v\n%s", r, stack)
}

// recoverWorker, deferred by a worker goroutine, turns its panic into *crash (with the worker's
// stack) and unblocks the caller waiting on done, which re-panics with it under its guard.
func recoverWorker(crash **workerPanic, done chan<- error) {
	if r := recover(); r != nil {
		buf := make([]byte, 4096)
		*crash = &workerPanic{value: r, stack: buf[:runtime.Stack(buf, false)]}
		done <- nil
	}
}

// outliveWorker, deferred by the calling goroutine after it started a worker, waits for the worker
// when the caller panics (in a callback, say) before the worker finished: the worker reads the
// caller's buffers, which Python frees once the call has returned, so the call must never return
// while it runs.
// finished says that the caller already received the worker's result (a worker's own panic is
// re-raised after that).
func outliveWorker(done <-chan error, finished *bool) {
	if r := recover(); r != nil {
		if !*finished {
			<-done
		}
		panic(r)
	}
}
