// Command capi is the flat C ABI of combpred, built with go build -buildmode=c-shared.
//
// Conventions (as LightGBM's and XGBoost's C APIs): every symbol starts with cp_; every function
// returns an int status (cpOK, or an error code whose message cp_last_error returns on the same
// thread); arrays arrive as pointer + explicit shape and are only viewed during the call; objects
// are opaque int64 handles; every entry point turns a panic into an error, because an unrecovered
// panic would kill the caller's Python process.
package main

/*
#include <stdint.h>
#include <stdlib.h>
#include "cp_helpers.h"
*/
import "C"

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/combpred/combpred/core/budget"
	"github.com/combpred/combpred/core/gemm"
	"github.com/combpred/combpred/core/parallel"
)

// maxThreadsPerCPU bounds the thread count at this multiple of the CPUs: every thread costs a
// stack and scratch memory, and beyond a few per CPU more threads only add contention. 4096
// threads under an address-space limit made the Go runtime abort (pthread_create failed).
const maxThreadsPerCPU = 4

// cp_set_threads sets the number of threads of every later call (process-wide) from an n_jobs as
// joblib reads it: n > 0 threads, clamped at 4 per CPU; a negative n means CPUs + 1 + n (-1 all
// CPUs, -2 all but one), at least one. 0 is refused: it means nothing, and joblib refuses it too.
//
//export cp_set_threads
func cp_set_threads(n C.int64_t) (rc C.int) {
	defer guard(&rc)
	t, err := threadCount(int64(n), runtime.NumCPU())
	if err != nil {
		return status(err)
	}
	useThreads(t)
	return cpOK
}

// minProcs is the fewest Ps (GOMAXPROCS) the runtime keeps, whatever the thread count: a Python
// thread that calls the core back to back keeps a P between its calls (a call from C returns to it
// as a system call, and the scheduler retakes a P only from a system call that lasts), so with one
// P a fit on another thread waited seconds for it at every chunk (probe EC: 30 partial_fit chunks
// of 2 ms each took over 20 s beside a loop on get_config). The schema passes it to Python.
const minProcs = 2

// useThreads makes t the number of threads of every later call: the goroutines of the core's
// loops, and as many Ps to run them (at least minProcs).
func useThreads(t int) {
	parallel.SetThreads(t)
	runtime.GOMAXPROCS(max(t, minProcs))
}

// cp_set_threads_default sets the number of threads of every later call (process-wide) as n_jobs =
// None asks, given omp, the value of OMP_NUM_THREADS the caller read (NULL: unset): that value
// when it holds a positive integer, else all CPUs (clamped as cp_set_threads clamps).
// OMP_NUM_THREADS is the limit users and joblib's process workers set on every native thread pool
// in a process (loky sets it to each worker's share of the cores, Dask's nanny to 1): all CPUs in
// each of k workers of GridSearchCV(n_jobs=k) ran k times as many threads as cores. The caller
// passes the value because a c-shared Go library sees the environment its process started with,
// not os.environ as the caller changed it since (Python reads it when it loads the library).
//
//export cp_set_threads_default
func cp_set_threads_default(omp *C.char) (rc C.int) {
	defer guard(&rc)
	value, err := goString(omp, "omp")
	if err != nil {
		return status(err)
	}
	useThreads(defaultThreads(value, runtime.NumCPU()))
	return cpOK
}

// cp_get_threads writes the number of threads later calls use into out.
//
//export cp_get_threads
func cp_get_threads(out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if err := outPtr("threads", out); err != nil {
		return status(err)
	}
	*out = C.int64_t(parallel.Threads())
	return cpOK
}

// defaultThreads is the number of threads of n_jobs = None on cpus CPUs, given the value of
// OMP_NUM_THREADS: a positive integer, or a list of them whose first is the outermost level's (as
// OpenMP reads it); anything else is ignored.
func defaultThreads(omp string, cpus int) int {
	first, _, _ := strings.Cut(omp, ",")
	if n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64); err == nil && n > 0 {
		t, _ := threadCount(n, cpus)
		return t
	}
	return cpus
}

// threadCount is the number of threads n_jobs = n asks for on cpus CPUs. Larger requests are
// clamped (documented at n_jobs), not refused: a setting tuned for a large machine keeps working
// on a small one.
func threadCount(n int64, cpus int) (int, error) {
	switch {
	case n == 0:
		return 0, errors.New("n_jobs=0 means no threads; use None or -1 for all cores, or a positive count")
	case n < 0:
		return int(max(int64(cpus)+1+n, 1)), nil // n ≥ −2⁶³: no overflow
	default:
		return int(min(n, int64(maxThreadsPerCPU*cpus))), nil
	}
}

// cp_set_max_memory sets the memory budget (bytes) against which every allocation sized by an
// input is checked before it is made; 0 restores the default (half the memory the process may use).
//
//export cp_set_max_memory
func cp_set_max_memory(bytes C.int64_t) (rc C.int) {
	defer guard(&rc)
	return status(budget.Set(int64(bytes)))
}

// cp_get_max_memory writes the budget as set (0: the default) into setting and the budget in force
// (bytes) into effective.
//
//export cp_get_max_memory
func cp_get_max_memory(setting, effective *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if setting == nil || effective == nil {
		return status(errors.New("an output pointer is NULL"))
	}
	*setting, *effective = C.int64_t(budget.Setting()), C.int64_t(budget.Get())
	return cpOK
}

// cp_gemm_flops writes into out the floating-point operations of the core's dense products since
// the library was loaded (gemm.Flops): benchmarks read it around a fit to report the rate it
// achieved.
//
//export cp_gemm_flops
func cp_gemm_flops(out *C.int64_t) (rc C.int) {
	defer guard(&rc)
	if out == nil {
		return status(errors.New("out is a NULL pointer"))
	}
	*out = C.int64_t(min(gemm.Flops(), math.MaxInt64))
	return cpOK
}

func main() {}
