//go:build race

package ridge

// raceEnabled reports whether the tests run under the race detector, whose sync.Pool drops a
// quarter of what is put back (to expose reuse bugs): gemm's packing buffers are then allocated
// again, so tests that count allocations cannot hold.
const raceEnabled = true
