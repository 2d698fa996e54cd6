//go:build linux

package budget

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// memoryCgroup is a directory of a memory cgroup that holds the process: its own cgroup or one
// above it, up to the hierarchy's mount point. Each one's limit applies to all the processes below
// it, so the tightest of them binds.
type memoryCgroup struct {
	dir string
	v2  bool
}

// limitFile, usageFile and statFile are the cgroup's memory limit, its usage (resident pages and
// page cache) and its statistics.
func (c memoryCgroup) limitFile() string {
	if c.v2 {
		return filepath.Join(c.dir, "memory.max")
	}
	return filepath.Join(c.dir, "memory.limit_in_bytes")
}

func (c memoryCgroup) usageFile() string {
	if c.v2 {
		return filepath.Join(c.dir, "memory.current")
	}
	return filepath.Join(c.dir, "memory.usage_in_bytes")
}

func (c memoryCgroup) statFile() string { return filepath.Join(c.dir, "memory.stat") }

// reclaimKeys are the statistics of the page cache the kernel reclaims before it kills a process
// of the cgroup: the file pages, active or inactive (the kernel deactivates active ones as it
// reclaims); unreclaimKeys those of them it cannot drop at once: pages mapped into processes (the
// libraries' code: dropping them thrashes), dirty pages and pages under writeback.
func (c memoryCgroup) reclaimKeys() (reclaim, unreclaim []string) {
	if c.v2 {
		return []string{"active_file", "inactive_file"}, []string{"file_mapped", "file_dirty", "file_writeback"}
	}
	return []string{"total_active_file", "total_inactive_file"},
		[]string{"total_mapped_file", "total_dirty", "total_writeback"}
}

// unlimitedV1 is the least value cgroup v1 reports for "no limit" (a page-rounded MaxInt64).
const unlimitedV1 = 1 << 62

// memoryCgroups returns the memory cgroups that hold the process, given /proc/self/mountinfo and
// /proc/self/cgroup: for each cgroup hierarchy mounted with the memory controller (v1) or unified
// (v2), the process's cgroup directory under the mount point and every directory above it up to
// the mount point; locate, when not nil, finds the directory where the path cannot say it. Reading only the mount point's files saw a container's limit (its cgroup is
// the root of its namespace) but not a limit set on the process's own cgroup below the root
// (systemd-run -p MemoryMax, a batch scheduler's job, a sandbox): the budget then took the
// machine's memory, and a fit it admitted was killed by the kernel's OOM killer.
func memoryCgroups(mountinfo, cgroups string, locate func(mount string) string) []memoryCgroup {
	paths := map[bool]string{} // the process's cgroup path, by v2
	for _, line := range strings.Split(cgroups, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			paths[true] = parts[2]
		} else if slices.Contains(strings.Split(parts[1], ","), "memory") {
			paths[false] = parts[2]
		}
	}
	var found []memoryCgroup
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		fstype, options := fields[sep+1], fields[sep+3]
		v2 := fstype == "cgroup2"
		if !v2 && (fstype != "cgroup" || !slices.Contains(strings.Split(options, ","), "memory")) {
			continue
		}
		path, ok := paths[v2]
		if !ok {
			continue
		}
		root, mount := unescapeMount(fields[3]), filepath.Clean(unescapeMount(fields[4]))
		// The process's path is relative to its cgroup namespace's root, the mount's root to the
		// hierarchy's. A path outside the mount's root (a namespace made after the mount, whose
		// mount root then reads "/../..": `unshare -C`) does not say where the process is under
		// the mount point: locate finds it there, or leaves the mount point alone.
		dir := mount
		switch {
		case root == "/":
			dir = filepath.Join(mount, path)
		case path == root || strings.HasPrefix(path, root+"/"):
			dir = filepath.Join(mount, path[len(root):])
		case locate != nil:
			if found := locate(mount); found != "" {
				dir = found
			}
		}
		for {
			found = append(found, memoryCgroup{dir: dir, v2: v2})
			if dir == mount || len(dir) <= len(mount) {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
	return found
}

// unescapeMount undoes the octal escapes of /proc/self/mountinfo's paths (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// heldCgroups returns the memory cgroups holding the process, found again whenever
// /proc/self/cgroup changes (a process moved by cgroup.procs, systemd-run --scope or a job
// scheduler after its first call kept the cgroups of that call, and was OOM-killed, probe EP);
// their limits are read at every check, so that a limit set or changed later counts (probe EL).
var heldCgroups = func() []memoryCgroup {
	cgroups, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	cgroupCache.Lock()
	defer cgroupCache.Unlock()
	if string(cgroups) == cgroupCache.key {
		return cgroupCache.held
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var held []memoryCgroup
	for _, c := range memoryCgroups(string(mountinfo), string(cgroups), holdingDir) {
		if _, err := os.Stat(c.limitFile()); err == nil {
			held = append(held, c)
		}
	}
	cgroupCache.key, cgroupCache.held = string(cgroups), held
	return held
}

// cgroupCache holds the cgroups heldCgroups found for the /proc/self/cgroup it read.
var cgroupCache struct {
	sync.Mutex
	key  string
	held []memoryCgroup
}

// maxCgroupDirs bounds the directories holdingDir reads: a host's hierarchy may hold thousands.
const maxCgroupDirs = 4096

// holdingDir returns the directory under mount whose cgroup.procs lists this process, "" where
// none of the first maxCgroupDirs does.
func holdingDir(mount string) string {
	pid := strconv.Itoa(os.Getpid())
	queue, seen := []string{mount}, 0
	for len(queue) > 0 && seen < maxCgroupDirs {
		dir := queue[0]
		queue = queue[1:]
		seen++
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil && slices.Contains(strings.Split(string(b), "\n"), pid) {
			return dir
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				queue = append(queue, filepath.Join(dir, e.Name()))
			}
		}
	}
	return ""
}

// limit returns the cgroup's memory limit, and false when it has none or it cannot be read.
func (c memoryCgroup) limit() (int64, bool) {
	v, ok := readCount(c.limitFile()) // v2's "max" does not parse
	if !ok || v <= 0 || (!c.v2 && v >= unlimitedV1) {
		return 0, false
	}
	return v, true
}

// room returns what the cgroup may still take before the kernel kills a process of it: its limit
// less its usage, the page cache it can reclaim not counted as used. Counting only the inactive
// page cache as free refused a fit in 44 MB of "room" where 450 MB of a data file read twice sat
// in the active list (probe EL).
func (c memoryCgroup) room() (int64, bool) {
	limit, ok := c.limit()
	if !ok {
		return 0, false
	}
	usage, ok := readCount(c.usageFile())
	if !ok {
		return 0, false
	}
	return max(0, limit-max(0, usage-c.reclaimable())), true
}

// reclaimable returns the cgroup's page cache the kernel can reclaim at once, 0 when it cannot be
// read.
func (c memoryCgroup) reclaimable() int64 {
	f, err := os.Open(c.statFile())
	if err != nil {
		return 0
	}
	defer f.Close()
	stat := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if key, value, ok := strings.Cut(sc.Text(), " "); ok {
			if v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil && v > 0 {
				stat[key] = v
			}
		}
	}
	reclaim, unreclaim := c.reclaimKeys()
	var sum int64
	for _, k := range reclaim {
		sum = Add(sum, stat[k])
	}
	for _, k := range unreclaim {
		sum -= stat[k]
	}
	return max(0, sum)
}

// readCount reads a file holding one non-negative decimal count.
func readCount(name string) (int64, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil && v >= 0
}

// cgroupLimit returns the tightest memory limit of the cgroups holding the process, or 0.
func cgroupLimit() int64 {
	tightest := int64(0)
	for _, c := range heldCgroups() {
		if l, ok := c.limit(); ok && (tightest == 0 || l < tightest) {
			tightest = l
		}
	}
	return tightest
}

// cgroupRoom returns the least room of the cgroups holding the process, and false when none has
// a limit.
func cgroupRoom() (int64, bool) {
	least, any := int64(math.MaxInt64), false
	for _, c := range heldCgroups() {
		if r, ok := c.room(); ok {
			least, any = min(least, r), true
		}
	}
	return least, any
}
