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
// holding the process, the address-space limit and the data-segment limit, or 0 when none is known.
func usableMemory() int64 {
	var limits []int64
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		limits = append(limits, Mul(int64(si.Totalram), int64(si.Unit)))
	}
	if l := cgroupLimit(); l > 0 {
		limits = append(limits, l)
	}
	for _, resource := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		var rl unix.Rlimit
		if unix.Getrlimit(resource, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && rl.Cur <= math.MaxInt64 {
			limits = append(limits, int64(rl.Cur))
		}
	}
	usable := int64(0)
	for _, l := range limits {
		if l > 0 && (usable == 0 || l < usable) {
			usable = l
		}
	}
	return usable
}

// mappingRoom is what the process may still map under its address-space limit (RLIMIT_AS, less
// the size of its mappings now) and its data-segment limit (RLIMIT_DATA, less its writable private
// mappings now), the smaller where both are set, plus the Go heap's mapped spans that hold no
// objects (reusable without a new mapping), less MappingSlack; limit names the one that binds, and
// ok is false when neither is set or the sizes cannot be read. It is read at every call: the
// mappings grow as the process runs (Python's imports, BLAS thread stacks, the Go heap's arenas)
// and setrlimit may change the limits. The heap's arenas stay mapped once grown: counted as taken, they made a fit
// that had run twice refuse to run a third time (probe DP). RLIMIT_DATA counts the heap and every
// thread's stack: a fit the budget admitted under `ulimit -d` aborted in the runtime's next
// mapping (probe EK).
func mappingRoom() (room int64, limit string, ok bool) {
	var rl [2]unix.Rlimit
	set := [2]bool{}
	for i, resource := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		set[i] = unix.Getrlimit(resource, &rl[i]) == nil && rl[i].Cur != unix.RLIM_INFINITY && rl[i].Cur <= math.MaxInt64
	}
	if !set[0] && !set[1] {
		return 0, "", false
	}
	statm, ok := statmBytes()
	if !ok {
		return 0, "", false
	}
	idle := idleHeapBytes()
	room = math.MaxInt64
	for i, name := range []string{addressSpaceLimit, dataSegmentLimit} {
		if r := max(0, int64(rl[i].Cur)-statm[i]+idle-MappingSlack[i]); set[i] && r < room {
			room, limit = r, name
		}
	}
	return room, limit, true
}

// statmBytes returns the size of the process's mappings and of its writable private ones (data
// and stack) in bytes, from /proc/self/statm, and false when they cannot be read.
func statmBytes() ([2]int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return [2]int64{}, false
	}
	fields := strings.Fields(string(b))
	if len(fields) < 6 {
		return [2]int64{}, false
	}
	var out [2]int64
	for i, f := range []string{fields[0], fields[5]} {
		pages, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return [2]int64{}, false
		}
		out[i] = Mul(pages, int64(os.Getpagesize()))
	}
	return out, true
}
