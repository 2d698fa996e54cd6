package budget

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// heapRoomFraction is the share of the free address space the Go runtime may map before its
// garbage collector works to stay within it (limitHeap), less heapArenaBytes; the rest is left to
// the threads and malloc arenas the process may still start, and to Python.
const heapRoomFraction = 0.75

// heapArenaBytes is the unit in which the Go heap reserves address space (64 MiB on 64-bit
// Linux): the limit counts the pages in use, the address-space limit whole reservations.
const heapArenaBytes = 64 << 20

// MappingSlack is what a call may map under RLIMIT_AS and under RLIMIT_DATA beyond the bytes it
// asks the budget for, which the room leaves out. The heap maps address space a whole aligned
// arena at a time (a 72 MB request grew the mappings by 128 MB) and writes metadata as it grows
// (the arenas' bitmaps, the collector's queues); the runtime may start a thread, with its stack
// and, under RLIMIT_AS, a malloc arena. With the limit set after a small first call and a few
// hundred MB left, requests admitted at half of the room ended in the runtime's fatal "out of
// memory" or a fault in its collector (probe EL: 2 of 4 runs, 4 of 6 under RLIMIT_DATA; none in 36
// with two arenas kept), and with 150 MB left a call's new thread failed (probe EP: 3 of 20).
var MappingSlack = [2]int64{2*heapArenaBytes + ThreadMapping, heapArenaBytes + threadStack}

// ThreadMapping is what a new thread maps under RLIMIT_AS: its stack (threadStack, glibc's
// default) and its malloc arena (64 MiB on 64-bit Linux, reserved at its first malloc); under
// RLIMIT_DATA only the stack counts.
const ThreadMapping = threadStack + 64<<20

// threadStack is glibc's default thread stack (8 MiB, from the usual RLIMIT_STACK).
const threadStack = 8 << 20

var (
	userLimitOnce sync.Once
	userLimit     int64       // the memory limit the process started with (GOMEMLIMIT; MaxInt64: none)
	limited       atomic.Bool // limitHeap has set a limit of its own
)

// limitHeap sets the Go runtime's soft memory limit to what the runtime holds plus
// heapRoomFraction of the room a limit leaves (less heapArenaBytes), the tighter where both an
// address-space limit (as: what it has mapped) and a cgroup's memory limit (cg: what it keeps in
// use) apply, or to the user's GOMEMLIMIT when that is lower. The budget bounds each request, but
// the heap grows to twice its live size before the collector runs (GOGC = 100): a fit whose
// working set the budget admitted, at half the room, filled the rest with garbage and the runtime
// aborted the process on its next mapping (a KSubsets(8, 3) fit of 3.5M rows under
// `ulimit -v 4000000`). With the limit the collector runs before that.
func limitHeap(as int64, asOK bool, cg int64, cgOK bool) {
	userLimitOnce.Do(func() { userLimit = debug.SetMemoryLimit(-1) })
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 || sample[1].Value.Kind() != metrics.KindUint64 {
		return
	}
	mapped := int64(min(sample[0].Value.Uint64(), math.MaxInt64/2))
	inUse := max(0, mapped-int64(min(sample[1].Value.Uint64(), math.MaxInt64/2)))
	limit := userLimit
	if asOK {
		limit = min(limit, Add(mapped, heapGrowth(as)))
	}
	if cgOK {
		limit = min(limit, Add(inUse, heapGrowth(cg)))
	}
	debug.SetMemoryLimit(limit)
	limited.Store(true)
}

// heapGrowth is how far limitHeap lets the heap grow into room: heapRoomFraction of it less an
// arena, never below half of it, what a request the budget admits may take (Check).
func heapGrowth(room int64) int64 {
	return max(int64(float64(room)*heapRoomFraction)-heapArenaBytes, int64(float64(room)*DefaultFraction), 0)
}

// unlimitHeap puts back the user's memory limit once no address-space limit applies (lifted by
// setrlimit after a call).
func unlimitHeap() {
	if limited.CompareAndSwap(true, false) {
		debug.SetMemoryLimit(userLimit)
	}
}
