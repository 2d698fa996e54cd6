package main

import (
	"runtime"
	"testing"
)

var sink []byte

// TestGCBallastSpacesOutSmallHeapCollections: 40 allocations of 1 MB on a small live heap take
// at most two collections (without the ballast, about one per 4 MB: ten).
func TestGCBallastSpacesOutSmallHeapCollections(t *testing.T) {
	if len(gcBallast) != 32<<20 {
		t.Fatalf("gcBallast holds %d bytes", len(gcBallast))
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 40 {
		sink = make([]byte, 1<<20)
	}
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n > 2 {
		t.Errorf("%d collections for 40 MB of garbage, want at most 2", n)
	}
}
