// Package budget is the memory budget of combpred: every allocation whose size a caller controls
// (sample counts, output dimensions, row counts, thread counts, sizes read from model bytes) is
// estimated and passed to Check before it is made.
//
// The Go runtime cannot recover from running out of memory: "fatal error: out of memory" kills the
// whole process, the caller's Python interpreter included. A request refused by Check is an error
// the caller can handle instead.
//
// The budget defaults to DefaultFraction of the memory the process may use: the smallest of the
// physical memory, the cgroup memory limit and the address-space limit (RLIMIT_AS). Set changes
// it for the whole process. Under an address-space limit, Check also refuses a request above
// DefaultFraction of the address space still free at the time of the request, whatever the budget.
package budget

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultFraction is the share of the usable memory that the default budget allows one request.
const DefaultFraction = 0.5

// fallbackMemory is the usable memory assumed where the platform does not report it (4 GiB).
const fallbackMemory = 4 << 30

// Unbounded stands for a size whose computation overflowed int64; Check always refuses it.
const Unbounded = math.MaxInt64

var (
	setting atomic.Int64 // 0: the default

	defaultOnce  sync.Once
	defaultBytes int64
)

// Default returns the default budget: DefaultFraction of the usable memory, at least 1 MiB.
func Default() int64 {
	defaultOnce.Do(func() {
		usable := usableMemory()
		if usable <= 0 {
			usable = fallbackMemory
		}
		defaultBytes = max(int64(float64(usable)*DefaultFraction), 1<<20)
	})
	return defaultBytes
}

// Set sets the budget in bytes; 0 restores the default. A negative value is an error.
func Set(bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("max_memory must be a positive number of bytes (or None for the default), got %d", bytes)
	}
	setting.Store(bytes)
	return nil
}

// Setting returns the value given to Set, 0 for the default.
func Setting() int64 { return setting.Load() }

// Get returns the budget in force, in bytes.
func Get() int64 {
	if b := setting.Load(); b > 0 {
		return b
	}
	return Default()
}

// Error is the refusal of a request above the budget. Callers map it to Python's MemoryError.
type Error struct {
	What   string // the parameter or argument that sets the size, and what is allocated
	Need   int64  // bytes requested (Unbounded when the size overflowed)
	Budget int64  // the budget in force
	// Room, when positive, is what a limit of the process leaves it (Limit names the limit): the
	// request was refused because it exceeds DefaultFraction of it, whatever the budget, divided
	// among Sharing calls running at once (Share).
	Room    int64
	Limit   string
	Sharing int64
	// Kept is what the limit's room keeps besides for a call's own mappings (MappingSlack).
	Kept int64
}

// The limits whose room Check weighs, as Error names them.
const (
	addressSpaceLimit = "the process's address-space limit (ulimit -v)"
	dataSegmentLimit  = "the process's data-segment limit (ulimit -d)"
	cgroupMemoryLimit = "the memory limit of the process's cgroup (its container's, job's or service's)"
)

func (e *Error) Error() string {
	need := amount(e.Need)
	if e.Need == Unbounded {
		need = "more than 9.2 EB"
	}
	if e.Room > 0 {
		share := "half"
		if e.Sharing > 1 {
			share = fmt.Sprintf("1/%d, with %d calls running at once", 2*e.Sharing, e.Sharing)
		}
		left := amount(e.Room)
		if e.Room <= 1 {
			left = "nothing"
		}
		kept := ""
		if e.Kept > 0 {
			kept = fmt.Sprintf(" beyond the %s kept for the call's own mappings", Human(e.Kept))
		}
		return fmt.Sprintf("%s: needs %s, but %s leaves it %s%s, of which one request may take %s; make it "+
			"smaller, or raise the limit", e.What, need, e.Limit, left, kept, share)
	}
	return fmt.Sprintf("%s: needs %s, above the memory budget of %s; make it smaller, or raise the budget with "+
		"combpred.set_config(max_memory=...)", e.What, need, amount(e.Budget))
}

// amount is Human(b), followed by the exact count where Human rounds it: "24 bytes" read
// "24 bytes (24 bytes)".
func amount(b int64) string {
	if b < 1000 {
		return Human(b)
	}
	return fmt.Sprintf("%s (%s bytes)", Human(b), group(b))
}

// Check returns an *Error when bytes exceed the budget in force (or are negative, the mark of an
// overflowed size computation); what names the parameter or argument that sets the size.
func Check(what string, bytes int64) error {
	b := Get()
	if bytes < 0 {
		bytes = Unbounded
	}
	if bytes > b {
		return &Error{What: what, Need: bytes, Budget: b}
	}
	// Under an address-space limit the budget (a share of the limit, fixed at first use) does not
	// see what the process has mapped since: imports, thread stacks and the Go heap's arenas took
	// 2.1 of a 3 GB limit in one run, and a request the budget let through ended in the Go
	// runtime's fatal "out of memory", which no caller can recover from. Under a cgroup's memory
	// limit the same holds of what the process (NumPy's arrays among it) keeps resident, and the
	// kernel kills the process instead.
	as, asLimit, asOK := mappingRoom()
	cg, cgOK := int64(0), false
	if bytes >= RoomCheckFrom { // the cgroups' files are read for large requests only
		cg, cgOK = cgroupRoom()
	}
	// The heap's limit matters for large requests only, and reading the runtime's metrics for it
	// cost a single-row prediction under `ulimit -v` some 7 % (probe EN).
	switch {
	case bytes < RoomCheckFrom:
	case asOK || cgOK:
		limitHeap(as, asOK, cg, cgOK)
	default:
		unlimitHeap()
	}
	calls := max(1, sharing.Load())
	tooLarge := func(room int64) bool { return float64(bytes) > float64(room)*DefaultFraction/float64(calls) }
	if (asOK && tooLarge(as)) || (cgOK && tooLarge(cg+freeHeapBytes())) {
		// The garbage of the calls before (a fit right after a fit) is room once collected: two
		// fits back to back had grown the heap's mappings by 1.2 GB each (probe DP).
		runtime.GC()
		if as, asLimit, asOK = mappingRoom(); asOK && tooLarge(as) {
			kept := MappingSlack[0]
			if asLimit == dataSegmentLimit {
				kept = MappingSlack[1]
			}
			return &Error{What: what, Need: bytes, Budget: b, Room: max(as, 1), Limit: asLimit, Sharing: calls, Kept: kept}
		}
		if cg, cgOK = cgroupRoom(); cgOK && bytes >= RoomCheckFrom && tooLarge(cg+freeHeapBytes()) {
			return &Error{What: what, Need: bytes, Budget: b, Room: max(cg+freeHeapBytes(), 1), Limit: cgroupMemoryLimit,
				Sharing: calls}
		}
	}
	return nil
}

// RoomCheckFrom is the least request for which Check reads the room a cgroup's memory limit
// leaves: reading three of the cgroup's files at every request would cost a single-row prediction
// a large share of its time, and a smaller request cannot take a process to its limit alone. At
// 1 MiB, the two or three copies of X in a linear fit of yeast's size (1.2 MB each) read them,
// memory.stat parsed whole each time: 7 % of the fit's profile.
const RoomCheckFrom = 8 << 20

// sharing counts the calls running at once (Share).
var sharing atomic.Int64

// Share marks a call that may make requests as running until the returned function is called.
// Under an address-space limit the calls running at once share the room: two fits checked at the
// same moment were each let take half of it, and together with their garbage they filled it and
// the runtime aborted the process (two threads fitting, probe EH).
func Share() (done func()) {
	sharing.Add(1)
	return func() { sharing.Add(-1) }
}

// Is reports whether err is, or wraps, a refusal by Check.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Mul returns the product of non-negative factors, saturating at Unbounded instead of overflowing
// (a negative factor also gives Unbounded: it can only come from an overflow upstream).
func Mul(factors ...int64) int64 {
	p := int64(1)
	for _, f := range factors {
		if f < 0 {
			return Unbounded
		}
		hi, lo := bits.Mul64(uint64(p), uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return Unbounded
		}
		p = int64(lo)
	}
	return p
}

// Add returns the sum of non-negative terms, saturating at Unbounded.
func Add(terms ...int64) int64 {
	s := int64(0)
	for _, t := range terms {
		if t < 0 || s > math.MaxInt64-t {
			return Unbounded
		}
		s += t
	}
	return s
}

// Floats is the size in bytes of a []float64 (or []int64) with the product of dims entries.
func Floats(dims ...int) int64 {
	f := make([]int64, len(dims)+1)
	f[0] = 8
	for i, d := range dims {
		f[i+1] = int64(d)
	}
	return Mul(f...)
}

// Human formats a byte count with a decimal unit (kB, MB, GB, ...), as NumPy's messages do not.
func Human(b int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB", "EB"}
	v, u := float64(b), 0
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// group writes n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
