//go:build linux

package budget

import (
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// usableMemory is the smallest of the physical memory, the memory limits of the cgroups (v2 or v1)
// holding the process and the address-space limit, or 0 when none is known.
func usableMemory() int64 {
	var limits []int64
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		limits = append(limits, Mul(int64(si.Totalram), int64(si.Unit)))
	}
	if l := cgroupLimit(); l > 0 {
		limits = append(limits, l)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur <= math.MaxInt64 {
		limits = append(limits, int64(rl.Cur))
	}
	usable := int64(0)
	for _, l := range limits {
		if l > 0 && (usable == 0 || l < usable) {
			usable = l
		}
	}
	return usable
}

// addressSpaceRoom is the address space the process may still map, RLIMIT_AS minus the size of
// its mappings now, plus the Go heap's mapped spans that hold no objects (reusable without a new
// mapping), and false when no address-space limit is set or the size cannot be read. It is read at
// every call: the mappings grow as the process runs (Python's imports, BLAS thread stacks, the Go
// heap's arenas) and setrlimit may change the limit. The heap's arenas stay mapped once grown:
// counted as taken, they made a fit that had run twice refuse to run a third time (probe DP).
func addressSpaceRoom() (int64, bool) {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur > math.MaxInt64 {
		return 0, false
	}
	mapped, ok := mappedBytes()
	if !ok {
		return 0, false
	}
	return max(0, int64(rl.Cur)-mapped+idleHeapBytes()), true
}

// mappedBytes is the size of the process's mappings (/proc/self/statm), and false when it cannot
// be read.
func mappedBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, false
	}
	pages, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, false
	}
	return Mul(pages, int64(os.Getpagesize())), true
}
