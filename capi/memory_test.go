package main

import (
	"fmt"
	"runtime"
	"strings"
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

// n_jobs is read as joblib reads it: positive counts are clamped at maxThreadsPerCPU per CPU
// (4096 threads made the Go runtime abort under an address-space limit: pthread_create failed),
// negative ones count back from the CPUs (-1 all, -2 all but one, never fewer than one), and 0 is
// refused.
func TestThreadCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		cpus int
		want int
	}{
		{1, 2, 1}, {8, 2, 8}, {9, 2, 8}, {4096 * 1024, 2, 8}, {1<<63 - 1, 2, 8},
		{-1, 2, 2}, {-2, 2, 1}, {-3, 2, 1}, {-1 << 63, 2, 1}, {-2, 16, 15}, {-16, 16, 1},
	} {
		got, err := threadCount(c.n, c.cpus)
		if err != nil || got != c.want {
			t.Errorf("threadCount(%d, %d) = %d, %v; want %d", c.n, c.cpus, got, err, c.want)
		}
	}
	if _, err := threadCount(0, 2); err == nil || !strings.HasPrefix(err.Error(), "n_jobs") {
		t.Errorf("threadCount(0) = %v, want an error naming n_jobs", err)
	}
}

// n_jobs = None takes OMP_NUM_THREADS when it is a positive integer (joblib's workers set it),
// clamped as a count is, and all CPUs otherwise.
func TestDefaultThreads(t *testing.T) {
	for _, c := range []struct {
		omp  string
		cpus int
		want int
	}{
		{"", 4, 4}, {"1", 4, 1}, {"2", 4, 2}, {" 3 ", 4, 3}, {"64", 4, 16}, {"0", 4, 4}, {"-2", 4, 4},
		{"two", 4, 4}, {"1.5", 4, 4}, {"99999999999999999999", 4, 4}, {"2,1", 4, 2}, {",2", 4, 4},
	} {
		if got := defaultThreads(c.omp, c.cpus); got != c.want {
			t.Errorf("defaultThreads(%q, %d) = %d, want %d", c.omp, c.cpus, got, c.want)
		}
	}
}

func TestSetThreads(t *testing.T) {
	defer cp_set_threads(-1)
	limit := maxThreadsPerCPU * runtime.NumCPU()
	for _, c := range []struct {
		n    int64
		want int
	}{{1, 1}, {1<<63 - 1, limit}, {-1, runtime.NumCPU()}, {-1 << 63, 1}} {
		if rc := cp_set_threads(_Ctype_int64_t(c.n)); rc != cpOK {
			t.Fatalf("cp_set_threads(%d) = %d", c.n, rc)
		}
		if got := parallel.Threads(); got != c.want {
			t.Errorf("cp_set_threads(%d): %d threads, want %d", c.n, got, c.want)
		}
		if got := runtime.GOMAXPROCS(0); got != max(c.want, minProcs) {
			t.Errorf("cp_set_threads(%d): GOMAXPROCS %d, want %d", c.n, got, max(c.want, minProcs))
		}
	}
	if rc := cp_set_threads(0); rc != cpValue {
		t.Errorf("cp_set_threads(0) = %d, want cpValue", rc)
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
