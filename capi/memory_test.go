package main

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/parallel"
)

// A refusal by the memory budget has its own status, which Python raises as MemoryError.
func TestBudgetErrorsHaveTheMemoryStatus(t *testing.T) {
	err := fmt.Errorf("row 3: %w", &budget.Error{What: "n_samples = 10", Need: 2, Budget: 1})
	if rc := status(err); rc != cpMemory {
		t.Fatalf("status(%v) = %d, want cpMemory", err, rc)
	}
}

// Thread counts are clamped at maxThreadsPerCPU per CPU: 4096 threads made the Go runtime abort
// under an address-space limit (pthread_create failed).
func TestThreadsAreClamped(t *testing.T) {
	defer cp_set_threads(0)
	limit := maxThreadsPerCPU * runtime.NumCPU()
	for _, c := range []struct {
		n    int64
		want int
	}{{1, 1}, {int64(limit), limit}, {4096 * 1024, limit}, {1<<63 - 1, limit}, {0, runtime.NumCPU()}} {
		if rc := cp_set_threads(_Ctype_int64_t(c.n)); rc != cpOK {
			t.Fatalf("cp_set_threads(%d) = %d", c.n, rc)
		}
		if got := parallel.Threads(); got != c.want {
			t.Errorf("cp_set_threads(%d): %d threads, want %d", c.n, got, c.want)
		}
	}
	if rc := cp_set_threads(-1); rc != cpValue {
		t.Errorf("cp_set_threads(-1) = %d, want cpValue", rc)
	}
}

func TestMaxMemoryRoundTrips(t *testing.T) {
	defer cp_set_max_memory(0)
	var setting, effective _Ctype_int64_t
	for _, c := range []struct {
		set       int64
		rc        _Ctype_int
		setting   int64
		effective int64
	}{{1 << 30, cpOK, 1 << 30, 1 << 30}, {-1, cpValue, 1 << 30, 1 << 30}, {0, cpOK, 0, budget.Default()}} {
		if rc := cp_set_max_memory(_Ctype_int64_t(c.set)); rc != c.rc {
			t.Fatalf("cp_set_max_memory(%d) = %d, want %d", c.set, rc, c.rc)
		}
		if rc := cp_get_max_memory(&setting, &effective); rc != cpOK || int64(setting) != c.setting || int64(effective) != c.effective {
			t.Errorf("after cp_set_max_memory(%d): %d, %d (rc %d), want %d, %d", c.set, setting, effective, rc, c.setting, c.effective)
		}
	}
}
