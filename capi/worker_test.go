package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/combpred/combpred/core/cancel"
	"github.com/combpred/combpred/core/parallel"
)

// TestOnWorkerNeverOutlivesItsCaller: when the caller's side panics while the worker runs (a nil
// stop flag did, in the relay), onWorker waits for the worker before the panic leaves it. Before,
// the call returned to Python, which freed X while the fit still read it (SIGSEGV at exit).
func TestOnWorkerNeverOutlivesItsCaller(t *testing.T) {
	var running atomic.Bool
	progress := func(int, float64, float64) bool { panic("callback") }
	func() {
		defer func() {
			if r := recover(); r != "callback" {
				t.Fatalf("recovered %v, want the callback's panic", r)
			}
			if running.Load() {
				t.Fatal("onWorker returned while its worker was running")
			}
		}()
		_ = onWorker(&progress, nil, func() error {
			running.Store(true)
			defer running.Store(false)
			for i := 0; i < 50; i++ {
				progress(i, 0, 0)
				time.Sleep(5 * time.Millisecond)
			}
			return nil
		})
	}()
}

// TestOnWorkerRelaysAWorkerPanic: a panic of the worker reaches the caller (whose guard reports
// it), without waiting for a worker that has already ended.
func TestOnWorkerRelaysAWorkerPanic(t *testing.T) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_ = onWorker(new(func(int, float64, float64) bool), nil, func() error { panic("worker") })
	}()
	select {
	case r := <-done:
		if wp, ok := r.(*workerPanic); !ok || wp.value != "worker" {
			t.Fatalf("recovered %v, want the worker's panic", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("onWorker hung after its worker panicked")
	}
}

// TestCancellableInlineWithoutPoll: with no poll registered, a query runs inline with a nil flag.
func TestCancellableInlineWithoutPoll(t *testing.T) {
	err := cancellable(false, func(stop *cancel.Flag) error {
		if stop != nil {
			t.Error("a flag without a poll")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOnWorkerRelaysALoopPanic: a panic on one of the core's loop goroutines, inside the fit's
// worker, reaches the caller, and the internal error names its value and the loop body's stack.
func TestOnWorkerRelaysALoopPanic(t *testing.T) {
	parallel.SetThreads(2)
	defer parallel.SetThreads(0)
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_ = onWorker(new(func(int, float64, float64) bool), nil, func() error {
			parallel.For(8, 1, func(lo, hi int) {
				if lo > 0 {
					loopBodyPanics()
				}
			})
			return nil
		})
	}()
	select {
	case r := <-done:
		msg := describePanic(r)
		if !strings.Contains(msg, "internal error") || !strings.Contains(msg, "loop body") || !strings.Contains(msg, "loopBodyPanics") {
			t.Fatalf("recovered %v, reported as:\n%s", r, msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("onWorker hung after a loop goroutine panicked")
	}
}

//go:noinline
func loopBodyPanics() { panic("loop body") }

// TestOnWorkerCancelsAFitThatEndedFirst: a callback that asks to stop on the reports of a fit that
// ended before they were relayed (a fit under relayEvery) cancels it: the call returned status 0
// and a model, where the header promises status 3.
func TestOnWorkerCancelsAFitThatEndedFirst(t *testing.T) {
	calls := 0
	progress := func(int, float64, float64) bool { calls++; return false }
	var stop cancel.Flag
	err := onWorker(&progress, &stop, func() error {
		progress(1, 0, 0)
		return nil
	})
	if err != cancel.ErrCancelled || calls != 1 {
		t.Errorf("onWorker returned %v after %d callback calls, want ErrCancelled after 1", err, calls)
	}
	keep := func(int, float64, float64) bool { return true }
	if err := onWorker(&keep, &stop, func() error { keep(1, 0, 0); return nil }); err != nil {
		t.Errorf("a callback that lets the fit go on: %v", err)
	}
}
