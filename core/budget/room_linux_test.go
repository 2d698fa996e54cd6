//go:build linux && !race

package budget

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// (Not under the race detector, whose shadow memory grows the mappings by more than the room the
// test leaves.)
//
// Under an address-space limit, a request the budget allows is refused when it exceeds half of
// the address space still free, and the error says so; lifting the limit lifts the refusal.
func TestCheckAddressSpaceRoom(t *testing.T) {
	const room = 1 << 30
	old := underLimit(t, unix.RLIMIT_AS, room)
	got, _, ok := mappingRoom()
	if want := room + idleHeapBytes() - MappingSlack[0]; !ok || got > want+(16<<20) || got < want-(64<<20) { // the test's own mappings may grow a little
		t.Fatalf("room %d (%v), want about %d (the limit's room and the heap's idle spans, less its slack)", got, ok, want)
	}
	if err := Check("fit", got/5); err != nil {
		t.Errorf("a fifth of the room: %v", err)
	}
	err := Check("n_samples: the buffers", got*7/10)
	if err == nil || !Is(err) || !strings.Contains(err.Error(), "address-space limit (ulimit -v) leaves it") ||
		!strings.HasPrefix(err.Error(), "n_samples: the buffers: needs ") {
		t.Errorf("7/10 of the room: %v", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &old); err != nil {
		t.Fatal(err)
	}
	if err := Check("n_samples: the buffers", got*7/10); err != nil {
		t.Errorf("without the limit: %v", err)
	}
}

// The Go heap's spans a previous call left free, or its garbage, are room: a fit that had run
// twice back to back grew the heap's mappings by 1.2 GB each and was refused from then on, the
// mappings counted as taken (probe DP). A request that fits only in them passes, after a
// collection.
func TestCheckCountsTheHeapsReusableSpans(t *testing.T) {
	garbage := make([]byte, 1<<30) // mapped by the heap, then garbage
	for i := 0; i < len(garbage); i += 4096 {
		garbage[i] = 1
	}
	garbage = nil
	underLimit(t, unix.RLIMIT_AS, 256<<20)
	if err := Check("a second fit", 400<<20); err != nil {
		t.Errorf("400 MB with 256 MB unmapped and 1 GB of the heap's garbage: %v", err)
	}
	b := make([]byte, 400<<20) // and the heap indeed reuses its spans under the limit
	b[len(b)-1] = 1
	if err := Check("more", 2<<30); err == nil || !Is(err) {
		t.Errorf("2 GB: %v, want a refusal", err)
	}
}

// underLimit sets a budget that allows anything and a limit of resource (RLIMIT_AS or
// RLIMIT_DATA) room bytes above what the process maps now under it, both undone when t ends, and
// returns the limit before; it skips t where no limit can be set or one is set already.
func underLimit(t *testing.T, resource int, room int64) unix.Rlimit {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(resource, &old); err != nil {
		t.Skip(err)
	}
	if _, _, ok := mappingRoom(); ok {
		t.Skip("the test process already runs under an address-space or data-segment limit")
	}
	if err := Set(1 << 50); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Set(0) })
	statm, ok := statmBytes()
	if !ok {
		t.Skip("the mapped size cannot be read")
	}
	mapped := statm[0]
	if resource == unix.RLIMIT_DATA {
		mapped = statm[1]
	}
	lim := unix.Rlimit{Cur: uint64(mapped + room), Max: old.Max}
	if err := unix.Setrlimit(resource, &lim); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(resource, &old); err != nil {
			t.Fatal(err)
		}
	})
	return old
}

// Under a data-segment limit (ulimit -d), which counts the heap and the threads' stacks, a request
// beyond half the room left is refused as under an address-space limit (probe EK: a fit the
// budget admitted aborted in the runtime's next mapping), and the error names the limit.
func TestCheckDataSegmentRoom(t *testing.T) {
	const room = 1 << 30
	underLimit(t, unix.RLIMIT_DATA, room)
	got, limit, ok := mappingRoom()
	if want := room + idleHeapBytes() - MappingSlack[1]; !ok || limit != dataSegmentLimit || got > want+(16<<20) || got < want-(64<<20) {
		t.Fatalf("room %d of %q (%v), want about %d", got, limit, ok, want)
	}
	if err := Check("fit", got/5); err != nil {
		t.Errorf("a fifth of the room: %v", err)
	}
	err := Check("n_samples: the buffers", got*7/10)
	if err == nil || !Is(err) || !strings.Contains(err.Error(), "data-segment limit (ulimit -d) leaves it") {
		t.Errorf("7/10 of the room: %v", err)
	}
}

// Calls running at once share the room: two fits checked at the same moment were each let take
// half of it, and with their garbage they filled it (probe EH: two threads fitting under
// `ulimit -v 3000000` aborted the process in 1 run of 3 to 6).
func TestCheckSharesTheRoomAmongRunningCalls(t *testing.T) {
	underLimit(t, unix.RLIMIT_AS, 1<<30)
	room, _, _ := mappingRoom() // with the heap's idle spans
	big, small := room*3/10, room/5
	if err := Check("alone", big); err != nil {
		t.Fatalf("3/10 of the room, one call: %v", err)
	}
	first, second := Share(), Share()
	err := Check("beside another", big)
	if err == nil || !strings.Contains(err.Error(), "may take 1/4, with 2 calls running at once") {
		t.Errorf("3/10 of the room, two calls: %v", err)
	}
	if err := Check("a fifth", small); err != nil {
		t.Errorf("1/5 of the room, two calls: %v", err)
	}
	second()
	first()
	if err := Check("alone again", big); err != nil {
		t.Errorf("3/10 of the room, the other call ended: %v", err)
	}
}
