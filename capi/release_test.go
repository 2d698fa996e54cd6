package main

import (
	"runtime/metrics"
	"testing"
	"time"
)

// TestACallThatAllocatedMuchReturnsTheMemory: after a call whose temporaries took 256 MB, the
// heap's free pages go back to the operating system once no call has begun for releaseIdle, not
// while calls go on; a small call starts no release.
func TestACallThatAllocatedMuchReturnsTheMemory(t *testing.T) {
	held := func() uint64 { // heap pages neither in use nor released
		s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64() + s[1].Value.Uint64()
	}
	settle := func() { // a release of an earlier call (another -count run) ends first
		for deadline := time.Now().Add(10 * time.Second); releasing.Load(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("a release still runs after 10 s")
			}
		}
	}
	settle()
	var progress func(int, float64, float64) bool
	var sink float64
	small := func() error {
		buf := make([]float64, 1<<10)
		sink += buf[0]
		return nil
	}
	if err := onWorker(&progress, nil, small); err != nil {
		t.Fatal(err)
	}
	if releasing.Load() {
		t.Fatal("a call of 8 KB started a release")
	}
	large := func() error {
		buf := make([]float64, 32<<20) // 256 MB
		for i := range buf {
			buf[i] = float64(i)
		}
		sink += buf[len(buf)-1]
		return nil
	}
	if err := onWorker(&progress, nil, large); err != nil {
		t.Fatal(err)
	}
	for range 3 { // busy: nothing is released
		time.Sleep(releaseIdle / 2)
		if err := onWorker(&progress, nil, small); err != nil {
			t.Fatal(err)
		}
		if held() < 128<<20 {
			t.Fatal("the memory was released while calls went on")
		}
	}
	// one call running for three idle periods: nothing is released while it runs
	long := make(chan struct{})
	go func() {
		defer close(long)
		_ = onWorker(&progress, nil, func() error {
			time.Sleep(3 * releaseIdle)
			if held() < 128<<20 {
				t.Error("the memory was released while a call ran")
			}
			return nil
		})
	}()
	<-long
	deadline := time.Now().Add(10 * time.Second)
	for held() > 128<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the heap still holds %d MB 10 s after the call", held()>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
	settle()
	_ = sink
}
