package parallel

import (
	"bytes"
	"os"
	"strconv"
)

// runnable reports how many threads the system has ready to run at this moment, or −1 when it
// cannot tell.
func runnable() int {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	return parseLoadavg(b)
}

// parseLoadavg returns the running threads of a /proc/loadavg line ("0.31 1.25 2.09 1/345
// 12345": the fourth field is running/total), or −1 when the line has no such field.
func parseLoadavg(b []byte) int {
	f := bytes.Fields(b)
	if len(f) < 4 {
		return -1
	}
	running, _, ok := bytes.Cut(f[3], []byte("/"))
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(string(running))
	if err != nil || n < 0 {
		return -1
	}
	return n
}
