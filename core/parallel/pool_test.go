package parallel

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestGoRunsEachBodyOnce: every body of a call runs exactly once, whether helpers take it,
// goroutines of its own do (more bodies than helpers, nested loops) or the caller does.
func TestGoRunsEachBodyOnce(t *testing.T) {
	for _, tc := range []struct{ threads, w, inner int }{
		{2, 2, 0}, {2, 5, 0}, {4, 4, 0}, {4, 3, 2}, {2, 2, 2}, {3, 8, 3}, {1, 3, 0},
	} {
		withThreads(t, tc.threads, func() {
			for rep := 0; rep < 50; rep++ {
				inner := max(tc.inner, 1)
				runs := make([]atomic.Int32, tc.w*inner)
				Go(tc.w, func(g int) {
					if tc.inner == 0 {
						runs[g].Add(1)
						return
					}
					Go(tc.inner, func(h int) { runs[g*inner+h].Add(1) })
				})
				for k := range runs {
					if c := runs[k].Load(); c != 1 {
						t.Fatalf("%+v: body %d ran %d times", tc, k, c)
					}
				}
			}
		})
	}
}

// TestGoDoesNotWaitForAnIdleHelper: bodies handed to a helper that has not started them when the
// caller is done with its own run on the caller, once: a loop never waits for a thread to wake.
func TestGoDoesNotWaitForAnIdleHelper(t *testing.T) {
	var stuck []func()
	handOff = func(task func()) bool { stuck = append(stuck, task); return true }
	defer func() { handOff = handOver }()
	withThreads(t, 4, func() {
		runs := make([]atomic.Int32, 4)
		finished := make(chan bool)
		go func() {
			Go(4, func(g int) { runs[g].Add(1) })
			finished <- true
		}()
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			t.Fatal("Go waited for bodies no goroutine runs")
		}
		if len(stuck) != 3 {
			t.Fatalf("%d bodies handed off, want 3", len(stuck))
		}
		for _, task := range stuck { // the helper wakes late: nothing is left for it
			task()
		}
		for g := range runs {
			if c := runs[g].Load(); c != 1 {
				t.Errorf("body %d ran %d times", g, c)
			}
		}
	})
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
				// Each helper parks SpinWait after its last task once it runs; on a loaded machine
				// it may not run for a while (6 ms failed in a CI beside other work), so wait for
				// all of them to park, up to a bound far beyond the spin.
				var busy []string
				for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(SpinWait) {
					busy = busy[:0]
					helpers.Lock()
					for _, h := range helpers.all {
						if s := h.state.Load(); s != parked {
							busy = append(busy, fmt.Sprintf("helper %d in state %d", h.index, s))
						}
					}
					helpers.Unlock()
					if len(busy) == 0 || time.Now().After(deadline) {
						break
					}
				}
				if len(busy) > 0 {
					t.Errorf("%v 2s after their last task, want parked", busy)
				}
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

// TestPollingGivesWay: once two checks in a row find more threads ready than CPUs, nobody polls
// for backOff: a wait then looks once, where it would poll for SpinWait.
func TestPollingGivesWay(t *testing.T) {
	defer func() { readyOverride.Store(nil); noPollBefore.Store(0); crowded.Store(0) }()
	crowd := func() int { return runtime.NumCPU() + 2 }
	readyOverride.Store(&crowd)
	var calls atomic.Int64
	never := func() bool { calls.Add(1); return false }
	noPollBefore.Store(0)
	crowded.Store(0)
	for range 3 { // the first check only counts; the second stops the poll
		loadCheckedAt.Store(0)
		pollUntil(never)
	}
	if noPollBefore.Load() <= int64(time.Since(epoch)) {
		t.Fatal("no back-off after two crowded checks")
	}
	calls.Store(0)
	if pollUntil(never) || calls.Load() != 1 {
		t.Errorf("a wait during the back-off polled %d times", calls.Load())
	}
	idle := func() int { return 1 }
	readyOverride.Store(&idle)
	noPollBefore.Store(0)
	loadCheckedAt.Store(0)
	if !mayPoll(time.Since(epoch)) {
		t.Error("no poll allowed on an idle machine")
	}
}

// BenchmarkGo times a loop of two empty chunks, its fork and join alone: with the helper polling
// between loops (back to back), and with it asleep (a pause longer than SpinWait before each).
func BenchmarkGo(b *testing.B) {
	withThreads(b, 2, func() {
		b.Run("polling", func(b *testing.B) {
			for b.Loop() {
				Go(2, func(int) {})
			}
		})
		b.Run("asleep", func(b *testing.B) {
			var total time.Duration
			for range b.N {
				time.Sleep(2 * SpinWait)
				t0 := time.Now()
				Go(2, func(int) {})
				total += time.Since(t0)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/loop")
		})
	})
}
