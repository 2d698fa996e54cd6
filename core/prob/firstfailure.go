package prob

import (
	"sync"
	"sync/atomic"
)

// firstFailure keeps, of the rows a parallel loop found failing, the lowest one and its error:
// the loop's goroutines stop at the first failure (failed), and which of them met one first is
// their timing, not the rows' order.
type firstFailure struct {
	failed atomic.Bool
	mu     sync.Mutex
	row    int
	err    error
}

// record notes that row failed with err.
func (f *firstFailure) record(row int, err error) {
	f.failed.Store(true)
	f.mu.Lock()
	if f.err == nil || row < f.row {
		f.row, f.err = row, err
	}
	f.mu.Unlock()
}
