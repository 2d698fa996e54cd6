package parallel

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// withThreads runs f with SetThreads(n) and restores the default after.
func withThreads(t testing.TB, n int, f func()) {
	t.Helper()
	SetThreads(n)
	defer SetThreads(0)
	f()
}

// TestForCoversEachIndexOnce: every index of [0, n) is visited by exactly one chunk, whatever
// the number of threads and the minimum chunk.
func TestForCoversEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, minChunk, threads int }{
		{0, 1, 4}, {1, 1, 4}, {7, 1, 3}, {100, 1, 2}, {100, 64, 8}, {1000, 3, 7}, {5, 0, 2}, {5, -3, 2},
	} {
		withThreads(t, tc.threads, func() {
			seen := make([]atomic.Int32, tc.n)
			var calls atomic.Int32
			For(tc.n, tc.minChunk, func(lo, hi int) {
				calls.Add(1)
				if lo >= hi {
					t.Errorf("%+v: empty chunk [%d, %d)", tc, lo, hi)
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Errorf("%+v: index %d visited %d times", tc, i, c)
				}
			}
			if limit := int32(max(tc.threads, 1)); calls.Load() > limit {
				t.Errorf("%+v: %d chunks on %d threads", tc, calls.Load(), limit)
			}
		})
	}
}

// recovered returns what f panicked with, or nil.
func recovered(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestPanicReachesTheCaller: a panic in a body on another goroutine would end the process (the
// C ABI recovers only panics on the goroutine that called it); For and Go re-raise it on the
// caller's goroutine with the value and the stack of the goroutine that panicked.
func TestPanicReachesTheCaller(t *testing.T) {
	cases := map[string]func(){
		"For": func() {
			For(100, 1, func(lo, hi int) {
				if lo > 0 {
					panicInBody("For")
				}
			})
		},
		"Go": func() { Go(3, func(g int) { panicInBody("Go") }) },
		"nested": func() {
			For(4, 1, func(lo, hi int) { Go(2, func(g int) { panicInBody("nested") }) })
		},
	}
	withThreads(t, 4, func() {
		for name, f := range cases {
			r := recovered(f)
			p, ok := r.(*Panic)
			if !ok {
				t.Fatalf("%s: recovered %#v, want a *Panic", name, r)
			}
			if p.Value != name || p.Error() != name {
				t.Errorf("%s: value %v", name, p.Value)
			}
			if !strings.Contains(string(p.Stack), "panicInBody") {
				t.Errorf("%s: the stack does not show the body:\n%s", name, p.Stack)
			}
		}
	})
}

//go:noinline
func panicInBody(v string) { panic(v) }

// TestForSerialPanicsAsIs: a loop run on the caller's goroutine (one thread) panics with the
// body's own value, which the caller's recover sees directly.
func TestForSerialPanicsAsIs(t *testing.T) {
	withThreads(t, 1, func() {
		if r := recovered(func() { For(10, 1, func(lo, hi int) { panic("serial") }) }); r != "serial" {
			t.Fatalf("recovered %#v", r)
		}
	})
}

func ExampleFor() {
	squares := make([]int, 10)
	For(len(squares), 2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			squares[i] = i * i
		}
	})
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

// TestRowsPerChunk: chunks of rows hold MinWork values, at least one row, whatever cols.
func TestRowsPerChunk(t *testing.T) {
	for _, tc := range []struct{ cols, want int }{
		{0, MinWork}, {-5, MinWork}, {1, MinWork}, {103, MinWork / 103}, {MinWork, 1}, {4 * MinWork, 1},
	} {
		if got := RowsPerChunk(tc.cols); got != tc.want {
			t.Errorf("RowsPerChunk(%d) = %d, want %d", tc.cols, got, tc.want)
		}
	}
}
