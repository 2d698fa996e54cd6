//go:build linux

package budget

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

func TestMemoryCgroups(t *testing.T) {
	const v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	const v2 = "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n"
	tests := []struct {
		name, mountinfo, cgroups string
		want                     []memoryCgroup
	}{
		{
			name:      "v1, a cgroup below the root (a sandbox, a batch job)",
			mountinfo: "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n" + v1,
			cgroups:   "8:pids:/\n4:memory:/jobs/42\n1:cpu:/\n0::/\n",
			want: []memoryCgroup{
				{dir: "/sys/fs/cgroup/memory/jobs/42"}, {dir: "/sys/fs/cgroup/memory/jobs"}, {dir: "/sys/fs/cgroup/memory"},
			},
		},
		{
			name:      "v1, the controller mounted with others",
			mountinfo: "35 31 0:32 / /sys/fs/cgroup/memory,cpu rw - cgroup cgroup rw,cpu,memory\n",
			cgroups:   "4:cpu,memory:/a\n",
			want:      []memoryCgroup{{dir: "/sys/fs/cgroup/memory,cpu/a"}, {dir: "/sys/fs/cgroup/memory,cpu"}},
		},
		{
			name:      "v2 (a systemd service)",
			mountinfo: v2,
			cgroups:   "0::/system.slice/job.service\n",
			want: []memoryCgroup{
				{dir: "/sys/fs/cgroup/system.slice/job.service", v2: true},
				{dir: "/sys/fs/cgroup/system.slice", v2: true},
				{dir: "/sys/fs/cgroup", v2: true},
			},
		},
		{
			name:      "a container: its cgroup is its namespace's root",
			mountinfo: v2,
			cgroups:   "0::/\n",
			want:      []memoryCgroup{{dir: "/sys/fs/cgroup", v2: true}},
		},
		{
			name:      "a mount of a subtree: the path is taken below the mount's root",
			mountinfo: "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			cgroups:   "4:memory:/docker/abc/inner\n",
			want:      []memoryCgroup{{dir: "/sys/fs/cgroup/memory/inner"}, {dir: "/sys/fs/cgroup/memory"}},
		},
		{
			name:      "a path outside the mount's root (another namespace): where cgroup.procs lists the process",
			mountinfo: "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			cgroups:   "4:memory:/docker/abcdef\n",
			want:      []memoryCgroup{{dir: "/sys/fs/cgroup/memory/located"}, {dir: "/sys/fs/cgroup/memory"}},
		},
		{
			name:      "unshare -C after the mount: its root reads /../..",
			mountinfo: "35 31 0:32 /../.. /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			cgroups:   "4:memory:/\n",
			want:      []memoryCgroup{{dir: "/sys/fs/cgroup/memory/located"}, {dir: "/sys/fs/cgroup/memory"}},
		},
		{
			name:      "an escaped mount point",
			mountinfo: `35 31 0:32 / /mnt/my\040cgroups rw - cgroup2 none rw` + "\n",
			cgroups:   "0::/x\n",
			want:      []memoryCgroup{{dir: "/mnt/my cgroups/x", v2: true}, {dir: "/mnt/my cgroups", v2: true}},
		},
		{
			name: "hybrid: v1's memory controller and an empty unified hierarchy",
			mountinfo: v1 +
				"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
			cgroups: "4:memory:/a\n0::/\n",
			want: []memoryCgroup{
				{dir: "/sys/fs/cgroup/memory/a"}, {dir: "/sys/fs/cgroup/memory"}, {dir: "/sys/fs/cgroup/unified", v2: true},
			},
		},
		{name: "no memory controller", mountinfo: "32 31 0:29 / /c rw - cgroup cgroup rw,cpu\n", cgroups: "1:cpu:/\n"},
		{name: "malformed lines", mountinfo: "35 31 - cgroup\n\n- - -\n", cgroups: "4:memory\n::\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locate := func(mount string) string { return mount + "/located" }
			if got := memoryCgroups(tt.mountinfo, tt.cgroups, locate); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// writeFiles writes each name's content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A cgroup's room is its limit less what it uses, the page cache the kernel reclaims before it
// kills a process not counted: file pages, active or inactive, less the mapped, dirty and
// written-back ones (counting only inactive pages refused fits once a file read twice went
// active, probe EL); "max" and v1's near-MaxInt64 are no limit.
func TestCgroupRoom(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "v2"), map[string]string{
		"memory.max": "1000000000\n", "memory.current": "700000000\n",
		"memory.stat": "anon 500000000\nfile 200000000\ninactive_file 150000000\nactive_file 50000000\n" +
			"file_mapped 30000000\nfile_dirty 10000000\nfile_writeback 0\n",
	})
	writeFiles(t, filepath.Join(dir, "v2max"), map[string]string{"memory.max": "max\n", "memory.current": "5\n"})
	writeFiles(t, filepath.Join(dir, "v1"), map[string]string{
		"memory.limit_in_bytes": "2000000000\n", "memory.usage_in_bytes": "2100000000\n",
		"memory.stat": "inactive_file 9\ntotal_inactive_file 100000000\ntotal_active_file 200000000\n" +
			"total_mapped_file 50000000\n",
	})
	writeFiles(t, filepath.Join(dir, "v1mapped"), map[string]string{
		"memory.limit_in_bytes": "1000000000\n", "memory.usage_in_bytes": "400000000\n",
		"memory.stat": "total_inactive_file 10\ntotal_mapped_file 300000000\n", // mapped beyond the lists: none
	})
	writeFiles(t, filepath.Join(dir, "v1none"), map[string]string{"memory.limit_in_bytes": "9223372036854771712\n"})
	tests := []struct {
		c           memoryCgroup
		limit, room int64
		ok          bool
	}{
		{memoryCgroup{dir: filepath.Join(dir, "v2"), v2: true}, 1e9, 1e9 - (7e8 - (1.5e8 + 5e7 - 3e7 - 1e7)), true},
		{memoryCgroup{dir: filepath.Join(dir, "v2max"), v2: true}, 0, 0, false},
		{memoryCgroup{dir: filepath.Join(dir, "v1")}, 2e9, 2e9 - (2.1e9 - (1e8 + 2e8 - 5e7)), true},
		{memoryCgroup{dir: filepath.Join(dir, "v1mapped")}, 1e9, 6e8, true},
		{memoryCgroup{dir: filepath.Join(dir, "v1none")}, 0, 0, false},
		{memoryCgroup{dir: filepath.Join(dir, "missing"), v2: true}, 0, 0, false},
	}
	for _, tt := range tests {
		limit, ok := tt.c.limit()
		room, rok := tt.c.room()
		if limit != tt.limit || ok != tt.ok || room != tt.room || rok != tt.ok {
			t.Errorf("%s: limit %d (%v), room %d (%v); want %d, %d (%v)", tt.c.dir, limit, ok, room, rok, tt.limit,
				tt.room, tt.ok)
		}
	}
}

// Under a cgroup's memory limit, the default budget is half the limit, and a request the budget
// allows is refused when it exceeds half of the room the cgroup has left; the error names the
// cgroup's limit; a limit lifted lifts the refusal.
func TestCheckCgroupRoom(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"memory.max": "4000000000\n", "memory.current": "3000000000\n", "memory.stat": "inactive_file 0\n",
	})
	held := heldCgroups
	heldCgroups = func() []memoryCgroup { return []memoryCgroup{{dir: dir, v2: true}} }
	defer func() { heldCgroups = held }()
	if got := cgroupLimit(); got != 4e9 {
		t.Errorf("cgroupLimit %d, want 4e9", got)
	}
	if got := usableMemory(); got > 4e9 {
		t.Errorf("usableMemory %d, above the cgroup's limit", got)
	}
	room, _ := cgroupRoom()
	if err := Check("a fit", 200e6); err != nil {
		t.Errorf("200 MB of %d bytes of room: %v", room, err)
	}
	// the collector keeps the heap within the room: the soft limit is what it holds plus ¾ of it
	defer unlimitHeap()
	if got := debug.SetMemoryLimit(-1); got > 2e9 || got < int64(heapGrowth(room)) {
		t.Errorf("the Go soft memory limit is %d with %d bytes of room", got, room)
	}
	large := (room + freeHeapBytes()) * 7 / 10 // the heap's free spans are room too
	err := Check("n_samples: the buffers", large)
	if err == nil || !Is(err) || !strings.Contains(err.Error(), "the memory limit of the process's cgroup") ||
		!strings.HasPrefix(err.Error(), "n_samples: the buffers: needs ") {
		t.Errorf("%d bytes of %d bytes of room: %v", large, room, err)
	}
	if err := os.Remove(filepath.Join(dir, "memory.max")); err != nil {
		t.Fatal(err)
	}
	if err := Check("n_samples: the buffers", large); err != nil {
		t.Errorf("the limit lifted: %v", err)
	}
}

// holdingDir finds the directory whose cgroup.procs lists the process, in a tree it walks.
func TestHoldingDir(t *testing.T) {
	mount := t.TempDir()
	writeFiles(t, mount, map[string]string{"cgroup.procs": "1\n2\n"})
	writeFiles(t, filepath.Join(mount, "a"), map[string]string{"cgroup.procs": "3\n"})
	writeFiles(t, filepath.Join(mount, "a", "b"), map[string]string{"cgroup.procs": fmt.Sprintf("7\n%d\n", os.Getpid())})
	if got, want := holdingDir(mount), filepath.Join(mount, "a", "b"); got != want {
		t.Errorf("holdingDir %q, want %q", got, want)
	}
	if got := holdingDir(filepath.Join(mount, "a", "b", "none")); got != "" {
		t.Errorf("holdingDir of a missing tree %q, want none", got)
	}
}
