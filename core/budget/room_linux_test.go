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
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	if _, ok := addressSpaceRoom(); ok {
		t.Skip("the test process already runs under an address-space limit")
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_AS, &old); err != nil {
			t.Fatal(err)
		}
	}()
	defer func() { _ = Set(0) }()
	if err := Set(1 << 50); err != nil { // a budget that allows anything
		t.Fatal(err)
	}
	mapped, ok := mappedBytes()
	if !ok {
		t.Skip("the mapped size cannot be read")
	}
	const room = 1 << 30
	lim := unix.Rlimit{Cur: uint64(mapped + room), Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &lim); err != nil {
		t.Skip(err)
	}
	got, ok := addressSpaceRoom()
	if !ok || got > room || got < room-(64<<20) { // the test's own mappings may grow a little
		t.Fatalf("room %d (%v), want about %d", got, ok, room)
	}
	if err := Check("fit", 100<<20); err != nil {
		t.Errorf("100 MB of a 1 GB room: %v", err)
	}
	err := Check("n_samples: the buffers", 800<<20)
	if err == nil || !Is(err) || !strings.Contains(err.Error(), "address-space limit (ulimit -v) leaves it") ||
		!strings.HasPrefix(err.Error(), "n_samples: the buffers: needs 838.9 MB") {
		t.Errorf("800 MB of a 1 GB room: %v", err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_AS, &old); err != nil {
		t.Fatal(err)
	}
	if err := Check("n_samples: the buffers", 800<<20); err != nil {
		t.Errorf("without the limit: %v", err)
	}
}
