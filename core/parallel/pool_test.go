package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// meet returns a function each of w bodies calls: it returns true once all w have called it,
// false when they have not within a few seconds (the bodies were not run concurrently).
func meet(w int) func() bool {
	var arrived atomic.Int32
	return func() bool {
		arrived.Add(1)
		deadline := time.Now().Add(5 * time.Second)
		for arrived.Load() < int32(w) {
			if time.Now().After(deadline) {
				return false
			}
			runtime.Gosched()
		}
		return true
	}
}

// TestGoRunsBodiesConcurrently: the bodies of one call run at the same time, each waiting for
// all the others, whether helpers take them, goroutines of their own do (more bodies than
// helpers, nested loops) or the caller does.
func TestGoRunsBodiesConcurrently(t *testing.T) {
	for _, tc := range []struct{ threads, w, inner int }{
		{2, 2, 0}, {2, 5, 0}, {4, 4, 0}, {4, 3, 2}, {2, 2, 2}, {3, 8, 3},
	} {
		withThreads(t, tc.threads, func() {
			for rep := 0; rep < 20; rep++ {
				together := meet(tc.w * max(tc.inner, 1))
				var failed atomic.Int32
				Go(tc.w, func(int) {
					if tc.inner == 0 {
						if !together() {
							failed.Add(1)
						}
						return
					}
					Go(tc.inner, func(int) {
						if !together() {
							failed.Add(1)
						}
					})
				})
				if failed.Load() > 0 {
					t.Fatalf("%+v: %d bodies did not meet the others", tc, failed.Load())
				}
			}
		})
	}
}

// TestHelpersAreKept: loops reuse the helpers of earlier loops (Threads() − 1 of them at most,
// or as many as earlier loops on more threads left), also after the helpers have stopped
// polling and parked.
func TestHelpersAreKept(t *testing.T) {
	withThreads(t, 3, func() {
		helpers.Lock()
		before := len(helpers.all)
		helpers.Unlock()
		var sum atomic.Int64
		for rep := 0; rep < 200; rep++ {
			Go(3, func(g int) { sum.Add(int64(g)) })
			if rep == 100 {
				time.Sleep(3 * SpinWait)
				helpers.Lock()
				for _, h := range helpers.all {
					if s := h.state.Load(); s != parked {
						t.Errorf("helper %d in state %d %v after its last task, want parked", h.index, s, 3*SpinWait)
					}
				}
				helpers.Unlock()
			}
		}
		if sum.Load() != 200*3 {
			t.Errorf("sum of the bodies' indices %d, want %d", sum.Load(), 200*3)
		}
		helpers.Lock()
		defer helpers.Unlock()
		if n := len(helpers.all); n > max(before, 2) {
			t.Errorf("%d helpers for 3 threads, %d before", n, before)
		}
	})
}

// TestGoFromManyGoroutines: loops started at once from several goroutines share the helpers
// and each covers its range once (run with -race).
func TestGoFromManyGoroutines(t *testing.T) {
	withThreads(t, 2, func() {
		const callers, n = 8, 1000
		errs := make(chan string, callers)
		for c := 0; c < callers; c++ {
			go func() {
				for rep := 0; rep < 50; rep++ {
					seen := make([]int32, n)
					For(n, 1, func(lo, hi int) {
						for i := lo; i < hi; i++ {
							seen[i]++
						}
					})
					for _, s := range seen {
						if s != 1 {
							errs <- "an index was not visited once"
							return
						}
					}
				}
				errs <- ""
			}()
		}
		for c := 0; c < callers; c++ {
			if e := <-errs; e != "" {
				t.Fatal(e)
			}
		}
	})
}
