"""ctypes bindings of the C ABI and the one place where a status code becomes an exception.

The library is loaded lazily, on first use, so that importing combpred is cheap and a process that
forks before using it is unaffected. The Go runtime does not survive ``fork()``: a child forked
after the library was loaded gets a clear error instead of a hang.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import math
import numbers
import os
import re
import signal
import threading
from collections.abc import Callable, Iterator
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int64, c_uint8, c_uint64, c_void_p
from typing import Any

import numpy as np

from . import _libpath, _schema
from ._version import __version__
from .exceptions import ForkedChildError

try:
    import resource
except ImportError:  # not on Windows, where no address-space limit applies either
    resource = None  # type: ignore[assignment]

# The status codes, as the core declares them (capi/main.go, through _schema.json).
OK, VALUE, TYPE, CANCELLED, INTERNAL, MEMORY = (
    _schema.status(name) for name in ("ok", "value", "type", "cancelled", "internal", "memory")
)

PROGRESS = ctypes.CFUNCTYPE(c_int, c_int64, c_double, c_double, c_void_p)
_f64ptr = POINTER(c_double)
SUMS = ctypes.CFUNCTYPE(c_int, _f64ptr, c_int64, c_int64, c_int64, _f64ptr, _f64ptr, _f64ptr, c_void_p)
PRODUCTS = ctypes.CFUNCTYPE(c_int, _f64ptr, c_int64, c_int64, _f64ptr, c_void_p)


class CheckedFloat64(c_double):
    """The ``double`` a ``double*`` parameter of the C ABI points at, as its signature declares it:
    ctypes converts only a :class:`_Buffer` of a checked float64 array (and an output cell,
    :func:`out_f64_cell`) to it, and refuses a raw pointer (``LP_c_double``), so every array that
    reaches Go has gone through the checks of :func:`f64`.

    The conversion is ctypes' own, in C: with a ``from_param`` of ours, a signal's exception (Ctrl-C)
    raised while Python ran it came out as ``ctypes.ArgumentError``, an ``Exception`` that
    ``except Exception`` swallows (probe ED).
    """


class CheckedInt64(c_int64):
    """The ``int64_t`` an ``int64_t*`` parameter points at: :class:`CheckedFloat64`'s rule, for
    :func:`i64` buffers and :func:`out_i64` cells."""


class CheckedIndex(c_uint8):
    """What the ``void*`` indptr and indices of a sparse X point at: only the arrays of a
    :class:`Csr` (int32 or int64, their width passed as ``index_bits``) are converted to it."""


class _Buffer:
    """A checked array as the C ABI receives it: a ``pointee*`` to its data (``_as_parameter_``,
    which ctypes converts natively). ``address`` places it elsewhere (tests of the core's checks)."""

    __slots__ = ("array", "_as_parameter_")

    def __init__(self, array: np.ndarray, pointee: type, address: int | None = None):
        self.array = array
        if address is None and array.size and array.flags.writeable:
            # from_buffer takes the address in a third of the time of ndarray.ctypes.data: a
            # microsecond of a single-row predict per buffer
            cell = pointee.from_buffer(array)
        else:
            cell = pointee.from_address(array.ctypes.data if address is None else address)
        self._as_parameter_ = byref(cell)


_f64p, _i64p, _idxp = POINTER(CheckedFloat64), POINTER(CheckedInt64), POINTER(CheckedIndex)

# The seven arguments of a sparse X in the _csr calls: rows, cols, nnz, index_bits, indptr,
# indices, data (capi/sparse.go).
_CSR = [c_int64, c_int64, c_int64, c_int64, _idxp, _idxp, _f64p]

_SIGNATURES = {
    "cp_version": ([], c_char_p),
    "cp_last_error": ([], c_char_p),
    "cp_set_threads": ([c_int64], c_int),
    "cp_set_threads_default": ([c_char_p], c_int),
    "cp_get_threads": ([_i64p], c_int),
    "cp_set_interrupt_poll": ([PROGRESS], c_int),
    "cp_check_output": ([c_int64, c_char_p], c_int),
    "cp_set_max_memory": ([c_int64], c_int),
    "cp_get_max_memory": ([_i64p, _i64p], c_int),
    "cp_gemm_flops": ([_i64p], c_int),
    "cp_set_row_origin": ([c_int64], c_int),
    "cp_space_new": ([c_char_p, _i64p, c_int64, _i64p], c_int),
    "cp_space_free": ([c_int64], c_int),
    "cp_space_info": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_space_mean": ([c_int64, _f64p, c_int64], c_int),
    "cp_space_covariance": ([c_int64, _f64p, c_int64], c_int),
    "cp_space_covariance_check": ([c_int64], c_int),
    "cp_space_cov_mul": ([c_int64, _f64p, _f64p, c_int64], c_int),
    "cp_space_validate": ([c_int64, _i64p, c_int64, c_int64, c_int64, c_char_p], c_int),
    "cp_space_embed": ([c_int64, _i64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_space_sample": ([c_int64, c_int64, c_uint64, _i64p, c_int64], c_int),
    "cp_space_decode": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_space_max_margins": ([c_int64, _f64p, c_int64, c_int64, _f64p], c_int),
    "cp_space_enumerate": ([c_int64, _i64p, c_int64, c_int64, _i64p], c_int),
    "cp_ridge_fit": (
        [c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_partial_fit": (
        [c_int64, c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_free": ([c_int64], c_int),
    "cp_ridge_info": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_ridge_space": ([c_int64, _i64p], c_int),
    "cp_prob_space": ([c_int64, _i64p], c_int),
    "cp_space_same": ([c_int64, c_int64, _i64p], c_int),
    "cp_ridge_decision": ([c_int64, _f64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_ridge_predict": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_ridge_marginals": (
        [c_int64, _f64p, c_int64, c_int64, c_int64, c_int64, c_double, _f64p, c_int64, _i64p, c_int64],
        c_int,
    ),
    "cp_ridge_max_margins": ([c_int64, _f64p, c_int64, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_ridge_coef": ([c_int64, _f64p, c_int64, c_int64, _f64p], c_int),
    "cp_ridge_to_bytes": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_ridge_from_bytes": ([POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_prob_fit": (
        [c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_prob_data_sums": (
        [
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            _i64p,
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            _f64p,
            _f64p,
            c_int64,
            c_int64,
            _f64p,
            _f64p,
            _f64p,
        ],
        c_int,
    ),
    "cp_prob_fit_sums": (
        [c_int64, c_int64, c_char_p, _f64p, _f64p, _f64p, _f64p, c_int64, c_int64, SUMS, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_prob_boundary_counts": ([c_int64, _i64p, c_int64, c_int64, _f64p, _f64p, c_int64, _i64p], c_int),
    "cp_prob_check_fit_sums": ([c_int64, c_int64, c_char_p, c_int64], c_int),
    "cp_prob_fit_plan": ([c_int64, c_int64, c_char_p, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_ridge_cg_setup": (
        [
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            _i64p,
            c_int64,
            _f64p,
            c_int64,
            c_char_p,
            _f64p,
            c_int64,
            c_int64,
            _f64p,
            _f64p,
            _f64p,
            _f64p,
            _i64p,
            _f64p,
        ],
        c_int,
    ),
    "cp_ridge_cg_product": (
        [
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            _i64p,
            c_int64,
            _f64p,
            c_int64,
            c_char_p,
            _f64p,
            c_int64,
            c_int64,
            _f64p,
            _f64p,
        ],
        c_int,
    ),
    "cp_ridge_fit_cg_sums": (
        [
            c_int64,
            c_int64,
            c_char_p,
            _f64p,
            c_int64,
            c_int64,
            _f64p,
            _f64p,
            _f64p,
            c_double,
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            PRODUCTS,
            PROGRESS,
            c_void_p,
            _i64p,
        ],
        c_int,
    ),
    "cp_ridge_distributed_solver": ([c_int64, c_int64, c_char_p, _i64p, _i64p], c_int),
    "cp_ridge_check_distributable": ([c_char_p], c_int),
    "cp_ridge_check_marginals": ([c_int64, c_char_p, c_int64, c_int64, c_double], c_int),
    "cp_ridge_check_partial_fit": ([c_char_p], c_int),
    "cp_prob_free": ([c_int64], c_int),
    "cp_prob_info": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_prob_coef": ([c_int64, _f64p, c_int64, c_int64, _f64p], c_int),
    "cp_prob_decision": ([c_int64, _f64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_prob_predict": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_prob_marginals": ([c_int64, _f64p, c_int64, c_int64, c_char_p, _f64p, c_int64, _i64p], c_int),
    "cp_prob_sample": ([c_int64, _f64p, c_int64, c_int64, c_int64, c_char_p, _i64p, c_int64, _i64p], c_int),
    "cp_prob_score_samples": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, c_char_p, _f64p, _i64p], c_int),
    "cp_prob_log_partition": ([c_int64, _f64p, c_int64, c_int64, c_char_p, _f64p, _f64p, _i64p], c_int),
    "cp_prob_to_bytes": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_prob_from_bytes": ([POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_ridge_fit_csr": (
        [c_int64, *_CSR, _i64p, c_int64, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_fit_sparse_y": (
        [
            c_int64,
            _f64p,
            c_int64,
            c_int64,
            _i64p,
            c_int64,
            _i64p,
            _f64p,
            _f64p,
            c_char_p,
            c_int64,
            PROGRESS,
            c_void_p,
            _i64p,
        ],
        c_int,
    ),
    "cp_ridge_fit_csr_sparse_y": (
        [c_int64, *_CSR, _i64p, c_int64, _i64p, _f64p, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_partial_fit_csr": (
        [c_int64, c_int64, *_CSR, _i64p, c_int64, _f64p, c_char_p, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_decision_csr": ([c_int64, *_CSR, _f64p, c_int64], c_int),
    "cp_ridge_predict_csr": ([c_int64, *_CSR, _i64p, c_int64], c_int),
    "cp_ridge_marginals_csr": ([c_int64, *_CSR, c_int64, c_int64, c_double, _f64p, c_int64, _i64p, c_int64], c_int),
    "cp_ridge_max_margins_csr": ([c_int64, *_CSR, c_int64, _f64p, c_int64], c_int),
    "cp_prob_fit_csr": ([c_int64, *_CSR, _i64p, c_int64, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p], c_int),
    "cp_prob_decision_csr": ([c_int64, *_CSR, _f64p, c_int64], c_int),
    "cp_prob_predict_csr": ([c_int64, *_CSR, _i64p, c_int64], c_int),
    "cp_prob_marginals_csr": ([c_int64, *_CSR, c_char_p, _f64p, c_int64, _i64p], c_int),
    "cp_nystrom_landmarks": ([c_int64, c_int64, c_uint64, _i64p, c_int64, _i64p], c_int),
    "cp_nystrom_projection": ([_f64p, c_int64, _f64p, _i64p], c_int),
    "cp_nystrom_features": ([_f64p, c_int64, c_int64, _f64p, c_int64, _f64p], c_int),
    "cp_stats_new": ([c_int64, c_int64, c_char_p, _f64p, c_int64, _i64p], c_int),
    "cp_stats_add": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, _i64p], c_int),
    "cp_stats_merge": ([c_int64, c_int64, _i64p], c_int),
    "cp_stats_solve": ([c_int64, c_char_p, PROGRESS, c_void_p, _i64p], c_int),
    "cp_stats_count": ([c_int64, _i64p, _i64p], c_int),
    "cp_stats_to_bytes": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_stats_from_bytes": ([POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_stats_free": ([c_int64], c_int),
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded_in_pid: int | None = None
# Whether this process loaded the library, which starts its Go runtime: a first call whose checks
# failed after the load left a runtime that a forked child's first fit hung in (probe 86).
_runtime_started = False
_loading = False  # a thread is inside the first load (under _lock)


def _after_fork_in_child() -> None:
    # The parent's locks may be held by threads that do not exist here: fresh ones. A load that
    # was under way started a Go runtime whose threads did not come along, as a finished one did:
    # the child must not call it either.
    global _lib, _lock, _loaded_in_pid, _locks_lock
    _lock, _locks_lock = threading.Lock(), threading.RLock()
    if _lib is not None or _loading or _runtime_started:
        _lib = None  # never call the parent's Go runtime from the child
        if _loaded_in_pid is None:
            _loaded_in_pid = -1


os.register_at_fork(after_in_child=_after_fork_in_child)

_locks_lock = threading.RLock()  # reentrant: a __del__ the GC runs while it is held may make a lock too


def process_lock(holder: dict[str, Any], key: str, factory: Callable[[], Any] = threading.Lock) -> Any:
    """The lock stored at ``holder[key]`` (an object's ``__dict__``), made by ``factory`` in this
    process: a lock that fork() copied may be held by a thread of the parent, which does not exist
    in the child, and waiting for it would hang the child's first call."""
    pid = os.getpid()
    entry = holder.get(key)
    if entry is None or entry[0] != pid:
        with _locks_lock:
            entry = holder.get(key)
            if entry is None or entry[0] != pid:
                entry = holder[key] = (pid, factory())
    return entry[1]


def lib() -> ctypes.CDLL:
    """Return the loaded library, loading it and checking its version on first use."""
    global _lib, _loaded_in_pid, _loading
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            if _loaded_in_pid is not None and _loaded_in_pid != os.getpid():
                raise ForkedChildError(
                    "combpred cannot run in a process forked after the parent used it: the Go "
                    "runtime does not survive fork(). Use the 'spawn' or 'forkserver' start method "
                    "of multiprocessing (or joblib's default 'loky' backend); with 'forkserver', keep "
                    "modules that use combpred at import out of multiprocessing.set_forkserver_preload "
                    "(the server that loaded them forks every worker)."
                )
            _loading = True
            try:
                handle = _load_checked()
            finally:
                _loading = False
            _loaded_in_pid = os.getpid()
            _lib = handle
    return _lib


# The memory budget a process starts with, in bytes: set_config(max_memory=) writes it, so that the
# worker processes started afterwards (joblib's loky workers under GridSearchCV(n_jobs=2),
# multiprocessing) inherit the parent's budget, where they started with the default (probe AW).
MAX_MEMORY_ENV = "COMBPRED_MAX_MEMORY"


def bounded_decimal(text: str, bound: int) -> int | None:
    """The value of ``text`` if it is ASCII decimal digits (leading zeros allowed), a value above
    ``bound`` read as ``bound``; None if it is not digits. int() refuses more than 4,300 digits in
    a ValueError that names nothing: a 5,000-digit GOMAXPROCS failed every first call so (probe EK)."""
    if not (text.isascii() and text.isdigit()):
        return None
    significant = text.lstrip("0")  # int() counts leading zeros among its 4,300 digits too
    if len(significant) > len(str(bound)):
        return bound
    return min(int(significant or "0"), bound)


def _environment_budget(value: str) -> int:
    """The bytes of COMBPRED_MAX_MEMORY: a whole number between 1 and 2**63 - 1."""
    text = value.strip()
    number = bounded_decimal(text, 2**63)
    if number is None or not 0 < number <= 2**63 - 1:
        raise ImportError(
            f"{MAX_MEMORY_ENV}={value!r} must be a whole number of bytes between 1 and 2**63 - 1 "
            "(set by combpred.set_config(max_memory=...) in a parent process, or by hand); unset it for the default"
        )
    return number


# What the core's Go runtime maps as it starts and runs, measured on Linux x86-64 (Go 1.26): about
# 1.1 GB reserved at once for its page allocator's summaries and scavenger index, its first heap
# arenas, and for each thread it starts a stack and, at the thread's first malloc, a glibc arena of
# 64 MB. When one of these mmaps fails the runtime aborts the process ("fatal error: out of
# memory", "pthread_create failed"), which nothing can catch. Under `ulimit -v`, limits that left
# 1.0-1.6 GiB free at the first call aborted on some runs and not on others (whether a glibc arena
# took the room first decides); 1.66 GiB and more ran every time (probe DF: 16 of 16 runs, with
# GOMAXPROCS 1 and 2). Python must judge before loading: the abort happens during the load.
_RUNTIME_ADDRESS_SPACE = 1600 * 2**20
_RUNTIME_ADDRESS_SPACE_PER_THREAD = 64 * 2**20
# Under `ulimit -d` (RLIMIT_DATA: the process's writable private mappings, thread stacks included)
# the runtime's reservations do not count until written: a first call and a small fit ran with
# 140 MiB free (GOMAXPROCS 2) and 160 MiB (8), not always with 120 (probe EK: 250 MiB free had
# aborted in pthread_create on one run). The check asks for 120 MiB and each thread's stack.
_RUNTIME_DATA = 120 * 2**20
# The thread stacks the figures above were measured with (RLIMIT_STACK of 8 MiB): glibc gives each
# new thread a stack of RLIMIT_STACK (8 MiB where unlimited or smaller), so `ulimit -s 2000000`
# made each of the runtime's threads map 2 GB and the first call aborted under `ulimit -v 8000000`
# (probe EK). Besides its GOMAXPROCS threads the runtime starts about six (sysmon, the template
# thread, threads blocked in system calls): 7 to 8 in all after a fit, with GOMAXPROCS 1 to 8.
_MEASURED_THREAD_STACK = 8 * 2**20
_RUNTIME_THREADS_BEYOND_PROCS = 6
# What the core's budget keeps under each limit for what a call maps beyond its requests (the heap's
# growth, a new thread; budget.MappingSlack), which a first request needs besides what the runtime
# takes as it starts.
# On a loaded machine the runtime's start and a small first fit mapped up to one thread more than the
# figures above (1,562-1,698 MiB on two CPUs, 5 or 6 threads; a CI run refused the first fit of a
# process given them exactly): a thread's stack and malloc arena.
_LOADED_THREAD = int(_schema.query_default("thread_mapping"))
_MAPPING_SLACK = {
    "RLIMIT_AS": int(_schema.query_default("mapping_slack_address_space")),
    "RLIMIT_DATA": int(_schema.query_default("mapping_slack_data")),
}


# The fewest Ps (threads running Go code) the core's runtime keeps, whatever GOMAXPROCS says.
_MIN_PROCS = int(_schema.query_default("min_procs"))


def _go_threads() -> int:
    """The GOMAXPROCS the core's runtime will take: the environment's when Go reads it (a positive
    32-bit integer in decimal digits; anything else it ignores, so that 2**31 asked this check for
    10¹¹ MiB of room, probe DN), else the CPUs this process may run on (an upper bound: Go also
    honours a cgroup CPU limit); at least the Ps the core keeps once loaded (``min_procs``)."""
    least = _MIN_PROCS
    value = bounded_decimal(os.environ.get("GOMAXPROCS", ""), 2**31)
    if value is not None and 0 < value < 2**31:
        return max(value, least)
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), least)
    return max(os.cpu_count() or 1, least)


def _statm() -> list[int] | None:
    """This process's /proc/self/statm in bytes (size, resident, shared, text, lib, data + stack,
    dirty), or None where it cannot be read (not Linux)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return [int(field) * os.sysconf("SC_PAGE_SIZE") for field in f.read().split()]
    except (OSError, ValueError):
        return None


def _thread_stack() -> int:
    """The stack the C library maps for each new thread: its default thread attributes' (glibc
    fixes it from RLIMIT_STACK as the process starts, and a later setrlimit does not change it:
    reading RLIMIT_STACK let a process that had lowered it from 2 GB abort, and refused one that
    had raised it, probe EN), else RLIMIT_STACK, 8 MiB where it is unlimited."""
    try:
        libc = ctypes.CDLL(None)
        attr = ctypes.create_string_buffer(256)  # pthread_attr_t: 56 bytes on x86-64 and arm64
        if libc.pthread_getattr_default_np(attr) == 0:
            size = ctypes.c_size_t()
            ok = libc.pthread_attr_getstacksize(attr, ctypes.byref(size)) == 0
            libc.pthread_attr_destroy(attr)
            if ok and size.value > 0:
                return size.value
    except (OSError, AttributeError):  # not glibc
        pass
    limit = resource.getrlimit(resource.RLIMIT_STACK)[0]
    return _MEASURED_THREAD_STACK if limit == resource.RLIM_INFINITY else max(limit, 16 * 2**10)


def _refuse_thin_memory_limits() -> None:
    """Raise MemoryError, before the core is loaded, when an address-space limit (ulimit -v) or a
    data-segment limit (ulimit -d) leaves less room than its Go runtime needs to start and run: it
    would abort the process instead."""
    if resource is None:
        return
    limits = [(kind, resource.getrlimit(kind)[0]) for kind in (resource.RLIMIT_AS, resource.RLIMIT_DATA)]
    if all(limit == resource.RLIM_INFINITY for _, limit in limits):
        return  # nothing to read
    statm = _statm()
    if statm is None or len(statm) < 6:
        return
    threads, stack = _go_threads(), _thread_stack()
    stacks = (threads + _RUNTIME_THREADS_BEYOND_PROCS) * max(stack - _MEASURED_THREAD_STACK, 0)
    mib = 2**20
    for kind, limit in limits:
        if limit == resource.RLIM_INFINITY:
            continue
        if kind == resource.RLIMIT_AS:
            name, used = f"address-space limit (ulimit -v {limit // 1024} kB)", statm[0]
            slack = _MAPPING_SLACK["RLIMIT_AS"] + _LOADED_THREAD
            need = _RUNTIME_ADDRESS_SPACE + threads * _RUNTIME_ADDRESS_SPACE_PER_THREAD + stacks + slack
            parts = (
                f"{_RUNTIME_ADDRESS_SPACE // mib} MiB, plus {_RUNTIME_ADDRESS_SPACE_PER_THREAD // mib} MiB for each of "
                f"the {threads} threads it runs Go code on, plus {slack // mib} MiB kept for a call's own mappings and a thread more"
            )
        else:
            name, used = f"data-segment limit (ulimit -d {limit // 1024} kB)", statm[5]
            slack = _MAPPING_SLACK["RLIMIT_DATA"]
            need = _RUNTIME_DATA + (threads + _RUNTIME_THREADS_BEYOND_PROCS) * stack + slack
            parts = (
                f"{_RUNTIME_DATA // mib} MiB, plus a stack of {stack // mib} MiB (ulimit -s) for each of its "
                f"{threads} + {_RUNTIME_THREADS_BEYOND_PROCS} threads, plus {slack // mib} MiB kept for a call's own mappings"
            )
        if stacks and kind == resource.RLIMIT_AS:
            parts += f", and their stacks of {stack // mib} MiB each (ulimit -s)"
        free = max(limit - used, 0)
        if free < need:
            raise MemoryError(
                f"combpred's core cannot start under this process's {name}: {free // mib} MiB of it are free, and "
                f"the core's Go runtime takes about {need // mib} MiB as it starts and runs ({parts}; it runs Go "
                f"code on GOMAXPROCS threads, at least {_MIN_PROCS}). Raise the limit by at least {-(-(need - free) // mib)} MiB, or lift it; with "
                "less room the Go runtime would abort the process."
            )


def _user_tasks(uid: int) -> int:
    """The threads of every process of real user ``uid`` this process can see in /proc (what the
    kernel counts against RLIMIT_NPROC), or 0 where /proc cannot be read."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    count = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:  # gone, or hidden
            continue
        try:
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (KeyError, ValueError, IndexError):
            continue
    return count


def _system_tasks() -> int:
    """The threads on the whole system (the total of /proc/loadavg's fourth field), or a number
    above any limit where it cannot be read."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return int(f.read().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return 2**62


def _exempt_from_nproc() -> bool:
    """Whether the kernel exempts this process from RLIMIT_NPROC: its user is root of the initial
    user namespace. A user namespace whose uid_map is the whole identity ("0 0 4294967295") can
    only sit in such namespaces all the way up; any other map may lead to an ordinary user, whose
    limit holds: root of ``unshare -Ur`` or of a rootless container was let through to the
    runtime's abort (probe EN), nested namespaces too, whose map reads "0 0 1" whatever their parent
    maps it to (probe EP). Where the map cannot be read, the threads are counted."""
    if os.getuid() != 0:
        return False
    try:
        with open("/proc/self/uid_map", encoding="ascii") as f:
            return f.read().split() == ["0", "0", "4294967295"]
    except OSError:
        return False


def _refuse_a_thin_thread_limit() -> None:
    """Raise RuntimeError, before the core is loaded, when the user's process limit (ulimit -u,
    RLIMIT_NPROC, which counts every thread of the user's processes) leaves fewer threads than
    the core's Go runtime starts: its failed pthread_create aborted the process (probes EJ, EK:
    ``ulimit -u 6`` let the first call run and aborted a fit). Root is exempt from the limit."""
    if resource is None or not hasattr(resource, "RLIMIT_NPROC") or _exempt_from_nproc():
        return
    limit = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if limit == resource.RLIM_INFINITY:
        return
    need = _go_threads() + _RUNTIME_THREADS_BEYOND_PROCS
    if _system_tasks() + need <= limit:
        return  # every thread on the machine could be the user's: no need to count theirs
    running = _user_tasks(os.getuid())
    if running + need > limit:
        raise RuntimeError(
            f"combpred's core cannot start under this user's process limit (ulimit -u {limit}): the user runs "
            f"{running} threads, and the core's Go runtime starts about {need} ({_RUNTIME_THREADS_BEYOND_PROCS} besides "
            f"the threads it runs Go code on: GOMAXPROCS, at least {_MIN_PROCS}). Raise the limit"
            f"{', or lower GOMAXPROCS' if _go_threads() > _MIN_PROCS else ''}; with fewer threads left the Go "
            "runtime would abort the process."
        )


# GOMEMLIMIT as the Go runtime parses it (runtime.parseByteCount): decimal digits and an optional
# unit; "off" and "" mean no limit. Anything else aborts the process at the core's first call.
_GOMEMLIMIT = re.compile(r"(-?)([0-9]+)(B|KiB|MiB|GiB|TiB)?")
_GOMEMLIMIT_UNITS = {None: 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _refuse_a_malformed_gomemlimit() -> None:
    """Raise ImportError, before the core is loaded, for a GOMEMLIMIT its Go runtime cannot read:
    it aborts the process with "fatal error: malformed GOMEMLIMIT" (GOMEMLIMIT=abc, 10XB or -1;
    probe DN)."""
    value = os.environ.get("GOMEMLIMIT", "")
    if value in ("", "off"):
        return
    match = _GOMEMLIMIT.fullmatch(value)
    number = bounded_decimal(match[2], 2**63) if match is not None else None
    ok = number is not None and not (match[1] and number)  # only "-0" may carry a sign
    if ok:
        ok = number < 2**63 and number * _GOMEMLIMIT_UNITS[match[3]] < 2**63
    if not ok:
        raise ImportError(
            f"GOMEMLIMIT={value!r} is not a memory limit the Go runtime of combpred's core can read (it would "
            "abort the process): give a byte count with an optional unit, B, KiB, MiB, GiB or TiB (4GiB), "
            "or 'off', or unset it"
        )


# The signals a fault raises in the thread that caused it, which no mask may hold back.
_SYNCHRONOUS_SIGNALS = {
    getattr(signal, name)
    for name in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS")
    if hasattr(signal, name)
}


@contextlib.contextmanager
def _asynchronous_signals_blocked() -> Iterator[None]:
    """Block the asynchronous signals on this thread while the library loads. The Go runtime
    starts its first thread during the load, and every thread it starts keeps that thread's mask
    (less the signals it needs itself: the faults' and SIGURG, its preemption), so that a signal
    sent to the process reaches Python's threads only. With the mask the load found, the runtime's
    threads took a SIGINT the main thread had blocked (signal.pthread_sigmask), and Python raised
    KeyboardInterrupt inside the section meant to defer it (probe EJ)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.valid_signals()) - _SYNCHRONOUS_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _load_checked() -> ctypes.CDLL:
    """Load the library, check it is ours and of our version, declare its functions and register
    the interrupt poll."""
    _refuse_a_malformed_gomemlimit()
    _refuse_thin_memory_limits()
    _refuse_a_thin_thread_limit()
    budget = os.environ.get(MAX_MEMORY_ENV)
    budget_bytes = _environment_budget(budget) if budget else None  # read before the runtime starts
    global _runtime_started
    with _asynchronous_signals_blocked():
        handle = _libpath.load(before=_refuse_second_copy)
    _runtime_started = True
    path = handle._name
    missing = [name for name in _SIGNATURES if not hasattr(handle, name)]
    if missing:
        raise ImportError(
            f"{path} is not combpred's core library (or is a foreign build): it lacks "
            f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}. Unset COMBPRED_LIBRARY or point "
            "it at a libcombpred built from this package."
        )
    for name, (argtypes, restype) in _SIGNATURES.items():
        fn = getattr(handle, name)
        fn.argtypes, fn.restype = argtypes, restype
    version = handle.cp_version().decode()
    if version != __version__:
        raise ImportError(
            f"combpred {__version__} found a core library of version {version}; "
            "reinstall the package so that both match."
        )
    if handle.cp_set_interrupt_poll(_POLL) != OK:
        raise ImportError(f"{path}: the core library refused its interrupt poll")
    if budget_bytes is not None and handle.cp_set_max_memory(budget_bytes) != OK:
        raise ImportError(f"{path}: the core library refused {MAX_MEMORY_ENV}={budget!r}")
    global _omp_at_load
    value = os.environ.get("OMP_NUM_THREADS")
    _omp_at_load = None if value is None else value.encode("utf-8", "replace")
    # the threads of n_jobs=None from the start: calls without an estimator (a space's decode) too
    if handle.cp_set_threads_default(_omp_at_load) != OK:
        raise ImportError(f"{path}: the core library refused its default thread count")
    return handle


# OMP_NUM_THREADS as os.environ held it when the library was loaded (None: unset), the value of
# n_jobs=None's thread count (cp_set_threads_default). Read once, as OpenMP runtimes read it: a
# later change does not apply, such as the OMP_NUM_THREADS=1 that distributed's nanny sets in the
# client's own process when it starts a local cluster's workers.
_omp_at_load: bytes | None = None


def omp_num_threads() -> bytes | None:
    """OMP_NUM_THREADS as it was when the library was loaded (None: unset)."""
    lib()
    return _omp_at_load


# -- Ctrl-C (and other signals) during long calls ------------------------------------------------
# A long query runs in Go on a thread of its own while the calling thread calls _poll every 20 ms
# (cp_set_interrupt_poll). Running that Python function lets the main thread run its signal
# handlers, guarded by handlers_as_flag: an interrupt marks the call's flag, _poll returns 1, and
# Go stops.

_interrupted = threading.local()  # .flag: the list a Ctrl-C appends to during this thread's call

# Work abandoned by its caller: the tokens of Dask fits interrupted on the client. A task of one
# running on a thread of this process (threaded scheduler, in-process workers) carries its fit's
# token (.token of _interrupted), and the poll stops its calls: signals reach the main thread only,
# and those calls ran to their end after Ctrl-C, taking the cores from the next fit.
# Only the latest _ABANDONED_KEPT tokens are kept (insertion-ordered): each failed fit abandons one,
# and a service that saw millions of them grew the set by about 150 bytes each. A task still
# running in this process thousands of failed fits after its own just runs to its end.
_abandoned: dict[str, None] = {}
_abandoned_lock = threading.Lock()
_ABANDONED_KEPT = 4096


def abandon(token: str) -> None:
    """Stop the calls of every task in this process that carries ``token`` (see :func:`task_token`)."""
    with _abandoned_lock:
        _abandoned[token] = None
        while len(_abandoned) > _ABANDONED_KEPT:
            del _abandoned[next(iter(_abandoned))]


def is_abandoned(token: str | None) -> bool:
    return token is not None and token in _abandoned


@contextlib.contextmanager
def task_token(token: str | None) -> Iterator[None]:
    """Mark this thread's calls in the block as part of the work of ``token``: once it is
    abandoned they stop as if interrupted (KeyboardInterrupt; a Dask task turns it into an ordinary
    exception, combpred.dask._Settings.task)."""
    outer = getattr(_interrupted, "token", None)
    _interrupted.token = token
    try:
        yield
    finally:
        _interrupted.token = outer


_origin = threading.local()  # .first: the row origin this thread last set in the core


@contextlib.contextmanager
def row_origin(first: int) -> Iterator[None]:
    """Make the row numbers of this thread's core errors in the block lead to rows of a larger
    input whose rows from ``first`` on the calls receive (a Dask partition's): the core then names
    the larger input's row ("X row 192"), or says "in the rows from first on: …" (cp_set_row_origin)."""
    outer = getattr(_origin, "first", 0)
    check(lib().cp_set_row_origin(first))
    _origin.first = first
    try:
        yield
    finally:
        lib().cp_set_row_origin(outer)
        _origin.first = outer


def rows_from(offset: int) -> contextlib.AbstractContextManager[None]:
    """:func:`row_origin` for a block of rows ``offset`` rows into the input the origin in force
    counts from (a block of a Dask partition: the partition's first row plus the offset)."""
    return row_origin(getattr(_origin, "first", 0) + offset)


# The signals whose Python handlers a long call guards: every one a handler can be set for, as
# plain ints for the C module's functions (signal's own wrap every value in an enum: 70 µs for
# the 60 signals of Linux, against 2 µs).
_GUARDED = tuple(
    sorted(
        int(s)
        for s in set(signal.valid_signals())
        - {getattr(signal, name) for name in ("SIGKILL", "SIGSTOP") if hasattr(signal, name)}
    )
)
try:
    from _signal import getsignal as _getsignal
    from _signal import signal as _setsignal
except ImportError:  # pragma: no cover - not CPython
    _getsignal, _setsignal = signal.getsignal, signal.signal

# The C library's sigaction, through which the guard keeps each signal's disposition as the kernel
# holds it: signal.signal() installs Python's C handler whatever was there, so a guard's swap of
# Python-level handlers had replaced dispositions set in C (a library's SIG_IGN for SIGINT,
# faulthandler.register's handler, the Go runtime's SIGSEGV handler) and dropped SA_RESTART
# (signal.siginterrupt), for good (probe EJ). A disposition is kept as opaque bytes, read and
# written back whole; the buffer is larger than any platform's struct sigaction (glibc's x86-64
# one takes 152 bytes).
_SIGACTION_BYTES = 1024
try:
    _sigaction = ctypes.CDLL(None).sigaction
    _sigaction.argtypes, _sigaction.restype = (ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p), ctypes.c_int
except (OSError, AttributeError, TypeError):  # pragma: no cover - no C library sigaction (Windows)
    _sigaction = None


def _kernel_action(signum: int) -> Any:
    """The disposition of ``signum`` as the kernel holds it (opaque), or None where it cannot be read."""
    if _sigaction is None:
        return None
    action = ctypes.create_string_buffer(_SIGACTION_BYTES)
    return action if _sigaction(signum, None, action) == 0 else None


def _set_python_handler(signum: int, handler: Any, action: Any) -> None:
    """Make ``handler`` the Python-level handler of ``signum``, and put the kernel's disposition
    back as ``action`` held it (:func:`_kernel_action`; None: as signal.signal leaves it)."""
    _setsignal(signum, handler)
    if action is not None:
        _sigaction(signum, action, None)


def _poll(iteration: int, objective: float, measure: float, ctx: Any) -> int:
    try:
        return 1 if getattr(_interrupted, "flag", None) or is_abandoned(getattr(_interrupted, "token", None)) else 0
    except BaseException:  # a handler's exception raised at entry (outside the main thread's guard): stop
        return 1


_POLL = PROGRESS(_poll)  # kept alive with the module: Go holds the pointer


@contextlib.contextmanager
def handlers_as_flag(flag: list[Any]) -> Iterator[None]:
    """Guard the main thread's Python signal handlers while Go runs, cancelling the call on an
    interrupt.

    Python runs a pending handler when Python code next starts, which during a long call is a
    callback Go makes (the poll, a fit's progress); an exception the handler raises there is lost:
    ctypes prints "Exception ignored on calling ctypes callback function" and returns an undefined
    status. Each handler is wrapped for the call: the default SIGINT handler appends True to
    ``flag``, any other handler runs as before and an exception it raises is appended to ``flag``
    (a SIGALRM deadline, pytest-timeout); the poll then asks Go to stop, and :func:`raise_interrupt`
    raises what was appended once the call has returned.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    original, restore = {}, {}  # the handler each guard calls, and the one put back after
    for signum in _GUARDED:
        handler = _getsignal(signum)
        if not callable(handler):
            continue
        original[signum] = restore[signum] = handler
        outer = getattr(handler, "_combpred_original", None)
        if outer is not None:
            # Another call's guard. A call made inside a handler during that call guards the
            # user's handler (the outer guard would mark the outer call and let this one run on),
            # and puts the outer guard back after; a guard left over from a call that is over is
            # replaced by the user's handler.
            original[signum] = outer[signum]
            if not handler._combpred_active:
                restore[signum] = outer[signum]

    def guarded(signum: int, frame: Any) -> None:
        handler = original[signum]
        if not active:  # the call is over: a guard the restore below missed is the handler itself
            handler(signum, frame)
        elif handler is signal.default_int_handler:
            flag.append(True)
        else:
            try:
                handler(signum, frame)
            except BaseException as exc:
                flag.append(exc)

    active = [True]
    guarded._combpred_original, guarded._combpred_active = original, active  # type: ignore[attr-defined]
    actions = {signum: _kernel_action(signum) for signum in original}
    try:
        for signum in original:
            _set_python_handler(signum, guarded, actions[signum])
        yield
    finally:
        # A signal whose own handler is back already may raise in the middle of this loop: the
        # loop goes on, and raises the first such exception once every handler is back. Should
        # one still escape, active (cleared first) makes the guards left pass everything on, and
        # the next call's scan above unwraps them.
        active.clear()
        todo, pending = list(restore.items()), None
        while todo:
            try:
                while todo:
                    signum, handler = todo[-1]
                    if _getsignal(signum) is guarded:  # a handler may have replaced itself meanwhile
                        _set_python_handler(signum, handler, actions[signum])
                    todo.pop()
            except BaseException as exc:
                pending = pending or exc
        if pending is not None:
            raise pending


def current_flag() -> list[Any] | None:
    """The interrupt flag of the call this thread is making (:func:`interrupt_flag`), for the
    callbacks Go makes on threads of its own during it, which cannot read it from there."""
    return getattr(_interrupted, "flag", None)


def _handler_exception(flag: list[Any]) -> BaseException | None:
    """The first exception a signal handler raised during the call of ``flag``, if any."""
    return next((item for item in flag if isinstance(item, BaseException)), None)


def raise_interrupt(flag: list[Any], message: str) -> None:
    """Raise what interrupted a call (``flag`` non-empty): the first exception a signal handler
    raised, else KeyboardInterrupt(message)."""
    raise _handler_exception(flag) or KeyboardInterrupt(message)


@contextlib.contextmanager
def interrupt_flag(flag: list[Any]) -> Iterator[None]:
    """Make the C calls in the block cancellable by Ctrl-C or by an exception of a signal handler,
    which append to ``flag``: the registered poll then asks Go to stop. The cancelled call's own
    KeyboardInterrupt gives way to a handler's exception."""
    outer = getattr(_interrupted, "flag", None)
    if outer is not None and True in outer:
        # A Ctrl-C already marked the enclosing call, before this one, made inside a signal handler
        # that call ran, could guard itself: it landed on the enclosing call's guard, and this call
        # ran to its end (a 1.9 s decode, then the fit stopped). It stops at once instead.
        flag.append(True)
    _interrupted.flag = flag
    try:
        with handlers_as_flag(flag):
            yield
    except KeyboardInterrupt:
        raised = _handler_exception(flag)
        if raised is None:
            raise
        raise raised from None
    finally:
        _interrupted.flag = outer


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """:func:`interrupt_flag`, raising KeyboardInterrupt (or a signal handler's exception) after the
    block when an interrupt came during it (the call then returned early, or had just finished)."""
    flag: list[Any] = []
    with interrupt_flag(flag):
        yield
    if flag:
        raise_interrupt(flag, "interrupted")


def _refuse_second_copy(path: Any) -> None:
    """Refuse to load ``path`` when another copy of the library is already mapped in this process.

    Each copy starts its own Go runtime, and two Go runtimes in one process are unsupported
    (golang/go#65050: they fight over signals and threads). A copy is another mapped file whose
    shared object mapped in this process (read from /proc/self/maps; other systems are not
    checked) that exports the C ABI, whatever its file's name: a copy loaded from a file named
    otherwise (``COMBPRED_LIBRARY=/x/core.so``) was not seen (probe EK).
    """
    try:
        with open("/proc/self/maps", "rb") as maps:  # paths in the file system's bytes
            mapped = {os.fsdecode(f[5].strip()) for f in (line.split(None, 5) for line in maps) if len(f) == 6}
    except OSError:
        return  # not Linux: nothing to inspect
    try:
        ours = os.stat(path)
    except OSError:
        return
    for other in sorted(mapped):
        if not other.startswith("/"):
            continue
        name = other.removesuffix(" (deleted)")
        if name != other:  # a copy whose file is gone: still loaded under its name (probe EN)
            same = os.path.abspath(name) == os.path.abspath(path)  # ours, replaced on disk since
        else:
            try:
                st = os.stat(other)
            except OSError:
                continue
            same = (st.st_dev, st.st_ino) == (ours.st_dev, ours.st_ino)
        if not same and _is_combpred_library(name):
            raise ImportError(
                f"another copy of combpred's core library is already loaded in this process ({other}); "
                f"loading {path} would start a second Go runtime, which Go does not support "
                "(golang/go#65050). Use one installation of combpred per process."
            )


def _is_combpred_library(path: str) -> bool:
    """Whether path is a shared object already loaded in this process that exports combpred's C
    ABI (cp_last_error). RTLD_NOLOAD finds a loaded one without loading anything (a mapped file
    that is not a loaded shared object raises), so no file is read."""
    try:
        handle = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | ctypes.RTLD_LOCAL)
    except OSError:
        return False
    return hasattr(handle, "cp_last_error")


def usable() -> bool:
    """Whether the library may be called from this process (loaded here, or not yet loaded)."""
    return _lib is not None or _loaded_in_pid is None or _loaded_in_pid == os.getpid()


def check(status: int) -> None:
    """Raise the exception that a nonzero status code of the C ABI stands for."""
    if status == OK:
        return
    message = (lib().cp_last_error() or b"unknown error").decode(errors="replace")
    if status == VALUE:
        raise ValueError(message)
    if status == TYPE:
        raise TypeError(message)
    if status == CANCELLED:
        raise KeyboardInterrupt(message)
    if status == MEMORY:
        raise MemoryError(message)
    raise RuntimeError(message)


def _checked(a: Any, dtype: np.dtype, shape: tuple[int, ...], name: str, writable: bool) -> tuple[np.ndarray, _Buffer]:
    """The checks of :func:`f64` and :func:`i64`, for ``dtype``."""
    if writable:
        # An output buffer is written in place: a converted copy would silently lose the result.
        if not (
            isinstance(a, np.ndarray)
            and a.dtype == dtype
            and a.flags.c_contiguous
            and a.flags.aligned
            and a.flags.writeable
            and a.dtype.isnative
        ):
            raise RuntimeError(f"internal error: output {name} must be a writable C-contiguous {dtype} array")
    elif not (
        type(a) is np.ndarray
        and a.dtype is dtype  # the native built-in dtype: a byte-swapped one is another object
        and a.flags.c_contiguous
        and a.flags.aligned
    ):
        # the common case, float64 rows as given, skips the conversions: a single-row predict spent
        # a fifth of its time in them
        a = _convert(a, dtype, name)
    if a.shape != shape:
        shape = tuple(int(n) for n in shape)
        if a.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {a.shape}")
    return a, _Buffer(a, _POINTEE[dtype])


# The pointee of each dtype's checked buffers.
_POINTEE = {np.dtype(np.float64): CheckedFloat64, np.dtype(np.int64): CheckedInt64}


def as_array(a: Any, name: str) -> np.ndarray:
    """``np.asarray(a)``, with a ragged nested list refused by a ValueError naming ``name`` (NumPy's
    own says only "setting an array element with a sequence"), and pandas' nullable columns
    (``Int64``, ``Float64``, ``boolean``) read as their NumPy dtypes and a DataFrame's categorical
    columns as their categories' values, as scikit-learn's ``check_array`` reads them
    (``np.asarray`` made object arrays of both, which fit took and score refused); a masked array
    that masks an entry is refused (:func:`check_unmasked`)."""
    check_unmasked(a, name)
    nullable = _pandas_nullable(a, name)
    if nullable is not None:
        return nullable
    if _has_categorical_columns(a):  # np.asarray made an object array of the frame
        columns = [as_array(a.iloc[:, j], name) for j in range(a.shape[1])]
        return np.column_stack(columns) if columns else np.empty((len(a), 0))
    try:
        return np.asarray(a)
    except ValueError as exc:
        raise ValueError(f"{name} must be a rectangular array (rows of one length): {exc}") from None


def numeric_objects(a: np.ndarray) -> np.ndarray:
    """An object array whose entries are all real numbers (a pandas column of dtype object,
    ``Y.astype(object)``) as NumPy reads the same numbers from a list; any other array unchanged.
    Structures and integer arguments are read so (fit, score, the metrics and the C ABI's integer
    buffers alike, and scores as the float buffers read them); class labels keep their objects."""
    if a.dtype == object and a.size and all(isinstance(v, numbers.Real | np.bool_) for v in a.flat):
        return np.array(a.tolist())
    return a


def check_unmasked(a: Any, name: str) -> None:
    """Refuse a NumPy masked array with a masked entry, naming ``name``: NumPy's conversions drop
    the mask, so masked rows would count in a fit at full weight (scikit-learn drops it too)."""
    if isinstance(a, np.ma.MaskedArray) and np.ma.is_masked(a):
        raise ValueError(
            f"{name} is a masked array that masks {int(np.ma.count_masked(a))} of its entries, which combpred would read "
            f"as their underlying values: fill them ({name}.filled(value)) or drop their rows"
        )


def refuse_parent_sets(parent: Any, instead: str) -> None:
    """Refuse parent sets, one list per node (``load_hierarchical``'s ``parents``), where a parent
    array is wanted, saying what takes them (``instead``)."""
    listed = isinstance(parent, (list, tuple)) or (isinstance(parent, np.ndarray) and parent.dtype == object)
    if listed and any(isinstance(v, (list, tuple, set)) or (isinstance(v, np.ndarray) and v.ndim > 0) for v in parent):
        raise ValueError(
            "parent must be a non-empty 1-D integer array of parent ids, -1 at the root (a Bunch's `parent`); "
            f"parent sets, one list per node (a Bunch's `parents`), {instead}"
        )


def check_not_dates(a: Any, name: str) -> None:
    """Refuse dates, times and durations (NumPy datetime64/timedelta64, pandas' datetime, period and
    interval columns, Arrow timestamps) and complex numbers in ``a``, naming ``name`` and the
    column: scikit-learn's
    checks read a datetime64[D] column as days and the same dates as datetime64[s] as seconds, so
    a model fitted on one predicted the other's dates with other features and no warning (probe DL)."""
    dtypes = getattr(a, "dtypes", None)
    columns = getattr(a, "columns", None)
    if columns is not None and dtypes is not None and hasattr(dtypes, "__iter__"):
        pairs = list(zip(columns, dtypes, strict=False))
    else:
        pairs = [(None, getattr(a, "dtype", None))]
    for column, dtype in pairs:
        where = f" column {column!r}" if column is not None else ""
        if getattr(dtype, "kind", "") in ("M", "m") or str(dtype).startswith(("period", "interval")):
            raise ValueError(
                f"{name}{where} has dtype {dtype}: dates, times and durations are not features combpred reads "
                "(their numbers depend on the unit); convert them to numbers first, for example days since a "
                "date, (t - t0) / np.timedelta64(1, 'D'), or calendar features"
            )
        if getattr(dtype, "kind", "") == "c":  # scikit-learn's words named no argument and printed the array
            # scikit-learn's own words close it: its estimator checks look for them
            raise ValueError(f"{name}{where} must hold real numbers, got dtype {dtype}: Complex data not supported")


def _has_categorical_columns(a: Any) -> bool:
    """Whether ``a`` is a pandas DataFrame with a categorical column, which ``as_array`` reads column
    by column as ``np.asarray`` reads a categorical Series: as its categories' values."""
    dtypes = getattr(a, "dtypes", None)
    if dtypes is None or not hasattr(a, "iloc") or not hasattr(dtypes, "__iter__"):
        return False
    return any(type(t).__name__ == "CategoricalDtype" for t in dtypes)


def _pandas_nullable(a: Any, name: str) -> np.ndarray | None:
    """A pandas Series or DataFrame with a nullable (masked) column as an array of the columns'
    common NumPy dtype, or None for anything else; a missing value is refused naming ``name``."""
    dtypes = getattr(a, "dtypes", None)
    if dtypes is None or not hasattr(a, "to_numpy") or not hasattr(a, "isna"):
        return None
    dtypes = [dtypes] if hasattr(dtypes, "kind") or hasattr(dtypes, "numpy_dtype") else list(dtypes)
    numpy_dtypes = [getattr(d, "numpy_dtype", d) for d in dtypes]
    if not any(hasattr(d, "numpy_dtype") for d in dtypes) or not all(isinstance(d, np.dtype) for d in numpy_dtypes):
        return None  # no nullable column, or one of another kind (strings, categories): as before
    if (missing := np.asarray(a.isna())).any():  # where, in the object arrays' words (probe 84)
        raise ValueError(f"{name} holds a missing value (pd.NA){_first_at(missing)}: drop its rows or fill it")
    return a.to_numpy(dtype=np.result_type(*numpy_dtypes))


def _convert(a: Any, dtype: np.dtype, name: str) -> np.ndarray:
    """``a`` as a C-contiguous, aligned, native-order array of ``dtype``, refusing lossy kinds."""
    # objects that are all real numbers as their numbers, for scores too: bayes_decode and the
    # metrics read them so, and decode refused them as "got dtype object" (probe 85)
    a = numeric_objects(as_array(a, name))
    kind = a.dtype.kind
    if dtype.kind == "f":
        if kind not in "fiub":  # long double is rounded to float64, as fit and predict round it (probe CB)
            raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    else:
        _check_integers(a, name)
    if a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned:
        return a
    # The copy is sized by the caller's array (a broadcast view can stand for terabytes): check it
    # against the budget first, so that it fails naming the argument, and the copy, not an output
    # (decode's output is one value a row, probe DM).
    check_output(a.shape, name, f"its contiguous {dtype} copy")
    return np.require(a, dtype=dtype, requirements=["C_CONTIGUOUS", "ALIGNED"])


def _first_at(mask: np.ndarray) -> str:
    """Where mask is first true, for a message: " at row r" (1-D), " at row r, column c" (2-D),
    else nothing: the spaces' docs promise errors naming the first invalid row. Inside
    :func:`row_origin` the row counts from its ``first``, as the core's errors do."""
    if mask.ndim not in (1, 2) or not mask.any():
        return ""
    at = np.unravel_index(int(np.argmax(mask)), mask.shape)
    row = int(at[0]) + getattr(_origin, "first", 0)  # a Dask partition's rows, counted as the core counts them
    return f" at row {row}" + (f", column {at[1]}" if mask.ndim == 2 else "")


def check_finite(a: np.ndarray, name: str) -> None:
    """Refuse a NaN or an infinity in the float array ``a``, naming ``name`` and where the first one
    is (:func:`_first_at`)."""
    if not np.all(finite := np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity{_first_at(~finite)}")


def _check_integers(a: np.ndarray, name: str) -> None:
    """Refuse what int64 cannot hold exactly: NaN, infinity and fractions (ValueError), values
    outside the 64-bit signed integers, which a cast wraps to other ids (a uint64 2**64 − 1 becomes
    −1, an "off" entry or a root), and kinds that are not numbers (TypeError). Every conversion of
    integer arguments — the C ABI's buffers, structures, rankings, node ids — comes through here."""
    kind = a.dtype.kind
    if kind == "f":
        check_finite(a, name)
        if np.any(fractional := a != np.round(a)):
            raise ValueError(f"{name} must hold integers, found a fractional value{_first_at(fractional)}")
        if a.size:
            # compared in the array's own precision, the test and the search for the entry alike
            # (as Python floats, a long double just below 2⁶³ was refused, and entry 0 named:
            # probe 85); 2⁶³ is exact in every float kind but float16, where it is infinity. A
            # float64 "int64 maximum" is 2⁶³ itself, which wraps in the cast.
            with np.errstate(over="ignore"):
                top = a.dtype.type(2.0**63)
            if a.max() >= top or a.min() < -top:
                outside = (a >= top) | (a < -top)  # where, and the value as Python prints it (probe CH)
                bad = a[np.unravel_index(int(np.argmax(outside)), a.shape)].item()
                raise ValueError(f"{name} holds {bad!r}, outside the 64-bit signed integers{_first_at(outside)}")
    elif kind == "u" and a.dtype.itemsize == 8:
        if a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{name} holds {a.max()!r}, outside the 64-bit signed integers")
    elif kind == "O" and (outside := _outside_int64(a)) is not None:
        # Python integers that no NumPy integer dtype holds (2**70 in a list): "got dtype object"
        # said nothing of the value (probe CE)
        raise ValueError(
            f"{name} holds {a[outside]!r}, outside the 64-bit signed integers{_first_at(_mask_at(a, outside))}"
        )
    elif kind == "O" and (odd := odd_object(a)) is not None:
        raise odd_object_error(a, odd, name)
    elif kind not in "iub":
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")


def _in_int64(value: numbers.Integral) -> bool:
    """Whether an integer fits the core's int64 (ctypes passes a Python int modulo 2**64)."""
    return -(2**63) <= value < 2**63


def int64_value(value: int, name: str) -> int:
    """``value`` as an int the core's int64 arguments take, refused by name outside their range:
    ctypes passes a Python int modulo 2**64, so -2**64 + 3 reached the core as 3, after the
    output had been sized for none (a write past its end, probe DA)."""
    if not _in_int64(value):
        raise ValueError(f"{name} must be an integer within the 64-bit range (|{name}| < 2**63), got {value!r}")
    return int(value)


def real_value(value: numbers.Real, name: str) -> float:
    """The float64 the core is given for the real number ``value``, named where the conversion
    would change what it means: an integer beyond float64 (10**400) failed with Python's unnamed
    OverflowError, and a Fraction of 10**-400 was refused as "name=0.0", a value never passed
    (probes BW, 85). Its range is the caller's rule."""
    try:
        out = float(value)
    except OverflowError:
        out = math.inf if value > 0 else -math.inf
    if value != 0 and (out == 0 or (math.isinf(out) and value not in (math.inf, -math.inf))):
        shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:20]}…{repr(value)[-8:]}"
        words = "rounds to 0.0 as a float64" if out == 0 else "is beyond float64's range"
        raise ValueError(f"{name}={shown} {words}")
    return out


def _outside_int64(a: np.ndarray) -> tuple[int, ...] | None:
    """The index of the first Python integer of the object array ``a`` outside int64, or None."""
    for at in np.ndindex(a.shape):
        v = a[at]
        if isinstance(v, numbers.Integral) and not _in_int64(v):
            return at
    return None


def is_missing_value(value: Any) -> bool:
    """Whether one object of an array stands for a missing value: None, pandas' NA, a NaN."""
    return value is None or type(value).__name__ == "NAType" or (isinstance(value, float) and value != value)


def odd_object(a: np.ndarray) -> tuple[int, ...] | None:
    """The index of the first entry of the object array ``a`` that is not a real number (None,
    pd.NA, a string), or None."""
    for at in np.ndindex(a.shape):
        if not isinstance(a[at], numbers.Real | np.bool_):
            return at
    return None


def odd_object_error(a: np.ndarray, at: tuple[int, ...], name: str, detail: str = "") -> Exception:
    """The error for the entry at ``at`` of an integer argument given as objects, which is not a
    number: a missing value (ValueError) or another object (TypeError, ``detail`` after it), named
    with where it is. "got dtype object" named neither the value nor its place, and object arrays
    of numbers are read as their numbers (probe 81)."""
    value, where = a[at], _first_at(_mask_at(a, at))
    if is_missing_value(value):
        return ValueError(f"{name} holds a missing value ({value!r}){where}: drop its rows or fill it")
    return TypeError(f"{name} must hold integers, found {value!r} ({type(value).__name__}){where}{detail}")


def _mask_at(a: np.ndarray, at: tuple[int, ...]) -> np.ndarray:
    """A boolean mask of ``a``'s shape, true at ``at`` alone (for :func:`_first_at`)."""
    mask = np.zeros(a.shape, dtype=bool)
    mask[at] = True
    return mask


def float64_array(a: Any, name: str) -> np.ndarray:
    """``a`` as a C-contiguous float64 array, checked as :func:`f64` checks (any shape)."""
    return _convert(a, np.dtype(np.float64), name)


def int64_array(a: Any, name: str) -> np.ndarray:
    """``a`` as a C-contiguous int64 array, checked as :func:`i64` checks (any shape)."""
    return _convert(a, np.dtype(np.int64), name)


def f64(a: Any, shape: tuple[int, ...], name: str, *, writable: bool = False) -> tuple[np.ndarray, _Buffer]:
    """Check and convert an array for a ``double*`` argument of the C ABI.

    Returns the array (C-contiguous, aligned, native float64: keep it alive during the call) and
    the argument to pass. Its shape must be ``shape``, the dimensions the call declares; integer and
    boolean inputs are converted, other kinds (complex, object, strings) refused naming ``name``.
    ``writable`` marks an output buffer, which must already have the exact layout (never copied).
    """
    return _checked(a, np.dtype(np.float64), shape, name, writable)


def i64(a: Any, shape: tuple[int, ...], name: str, *, writable: bool = False) -> tuple[np.ndarray, _Buffer]:
    """Check and convert an array for an ``int64_t*`` argument of the C ABI, as :func:`f64`.

    Floats must be finite and integral; unsigned values must fit int64.
    """
    return _checked(a, np.dtype(np.int64), shape, name, writable)


# The memory budget in force as the core last reported it, None until read after a change. An output
# within it passes check_output without a call into the core (a microsecond of a single-row
# predict); the core still computes the budget and words every refusal. Only set_max_memory changes
# the budget, and it calls forget_budget.
# (generation, the budget in force or None): forget_budget starts a new generation, and a budget
# read from the core is cached only if no forget came while it was read. Without the generation, a
# read that straddled set_config in another thread cached the old budget until the next set_config,
# and outputs it would refuse went through.
_budget_cache: tuple[int, int | None] = (0, None)


def forget_budget() -> None:
    """Drop the cached budget: the next check_output asks the core (after a change of the budget)."""
    global _budget_cache
    with process_lock(globals(), "_budget_lock"):
        _budget_cache = (_budget_cache[0] + 1, None)


def max_memory() -> tuple[int, int]:
    """(The budget as set, 0 for the default; the budget in force), in bytes, as the core reports them."""
    setting, effective = out_i64(), out_i64()
    check(lib().cp_get_max_memory(setting, effective))
    return setting.value, effective.value


def _budget() -> int:
    global _budget_cache
    generation, budget = _budget_cache
    if budget is None:
        budget = max_memory()[1]
        with process_lock(globals(), "_budget_lock"):
            if _budget_cache[0] == generation:
                _budget_cache = (generation, budget)
    return budget


def check_output(shape: tuple[int, ...], name: str, what: str = "an output") -> None:
    """Check ``what`` of ``shape`` (8-byte values; an output, or a copy of an argument) against the
    core's memory budget before it is allocated, naming ``name`` (the argument that sets its size)
    in the MemoryError."""
    size = 8
    for n in shape:
        size *= max(int(n), 0)
    check_bytes(size, f"{name}: {what} of shape {tuple(shape)}")


def check_bytes(size: int, what: str) -> None:
    """Check ``size`` bytes of working memory that Python code is about to allocate against the
    core's memory budget, describing them as ``what`` in the MemoryError."""
    size = min(max(int(size), 0), 2**63 - 1)
    # The core is asked only where it could refuse: beyond the budget, under an address-space or
    # data-segment limit (ulimit -v, -d), or from the size on where it weighs the room a cgroup's
    # memory limit leaves.
    if size <= _budget() and size < _ROOM_CHECK_FROM and not _mapping_limited():
        return
    check(lib().cp_check_output(size, what.encode()))


_ROOM_CHECK_FROM = int(_schema.query_default("room_check_from"))


def _mapping_limited() -> bool:
    """Whether the process runs under an address-space or a data-segment limit (RLIMIT_AS,
    RLIMIT_DATA), read at each call: a user may set one after the first call."""
    if resource is None:
        return False
    return any(
        resource.getrlimit(kind)[0] != resource.RLIM_INFINITY for kind in (resource.RLIMIT_AS, resource.RLIMIT_DATA)
    )


def out_f64(shape: tuple[int, ...], name: str = "the result") -> tuple[np.ndarray, _Buffer]:
    """A fresh float64 output array of ``shape`` and its argument, checked against the budget."""
    check_output(shape, name)
    out = np.empty(shape)  # C-contiguous, aligned, native float64: what a writable buffer needs
    return out, _Buffer(out, CheckedFloat64)


def out_i64_array(shape: tuple[int, ...], name: str = "the result") -> tuple[np.ndarray, _Buffer]:
    """A fresh int64 output array of ``shape`` and its argument, checked against the budget."""
    check_output(shape, name)
    out = np.empty(shape, dtype=np.int64)
    return out, _Buffer(out, CheckedInt64)


def out_i64() -> CheckedInt64:
    """A fresh int64 output cell (its ``value`` read after the call)."""
    return CheckedInt64(0)


def out_f64_cell() -> CheckedFloat64:
    """A fresh float64 output cell (its ``value`` read after the call)."""
    return CheckedFloat64(0)


def is_sparse(X: Any) -> bool:
    """Whether X is a scipy.sparse matrix or array (without importing scipy when it is not)."""
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocsr")


def summed_duplicates(X: Any) -> Any:
    """X, or for a scipy.sparse CSR or CSC X of another dtype than float64 with duplicate entries a
    copy whose duplicates are summed in its own dtype, as its toarray, tocsr and sum_duplicates read
    them: scikit-learn's validation casts to float64 first, so a bool CSR X stored twice held 2.0
    where its COO copy held True (1.0), and int8 entries 100 + 100 gave 200 against scipy's -56
    (probe EZ)."""
    if is_sparse(X) and X.format in ("csr", "csc") and X.dtype != np.float64 and not X.has_canonical_format:
        return _canonical_copy(X, "X")
    return X


def _canonical_copy(X: Any, name: str) -> Any:
    """A copy of a CSR or CSC X with its duplicates summed (in its own dtype) and its indices
    sorted, as scipy's sum_duplicates makes it; the copy is charged to the memory budget first."""
    check_bytes(
        X.data.nbytes + X.indices.nbytes + X.indptr.nbytes,
        f"{name}: a copy of its {X.format} arrays ({X.nnz} stored values) to sum duplicates and sort indices",
    )
    X = X.copy()
    X.sum_duplicates()
    return X


def is_pandas_sparse(X: Any) -> bool:
    """Whether X is a pandas DataFrame whose every column is sparse (pandas.SparseDtype)."""
    dtypes = getattr(X, "dtypes", None)
    if not hasattr(X, "sparse") or dtypes is None or not hasattr(dtypes, "__iter__"):
        return False
    return len(dtypes) > 0 and all(type(t).__name__ == "SparseDtype" for t in dtypes)


def check_pandas_fill_values(X: Any, name: str) -> None:
    """Refuse a DataFrame of sparse columns whose fill value is not 0, naming ``name``, the column
    and the fix: its conversion to a scipy.sparse matrix (``DataFrame.sparse.to_coo``) raised
    pandas' "fill value must be 0", which named neither (probe CB)."""
    for column, dtype in zip(X.columns, X.dtypes, strict=True):
        fill = dtype.fill_value
        if not (fill == 0):  # NaN too
            raise ValueError(
                f"{name} column {column!r} is sparse with fill value {fill!r}; a sparse {name} stores zeros "
                f"implicitly: pass {name}.sparse.to_dense(), or columns with fill_value=0"
            )


def scipy_if_pandas_sparse(Y: Any) -> Any:
    """A pandas DataFrame of sparse columns as the scipy.sparse COO matrix of its values (what
    scikit-learn's ``check_array`` makes of one), anything else unchanged: structure rows given
    so then take the path of a scipy.sparse Y (``np.asarray`` of the matrix was a 0-d object)."""
    if not is_pandas_sparse(Y):
        return Y
    check_pandas_fill_values(Y, "y")
    return Y.sparse.to_coo()


def _lil_problem(X: Any, rows: int, cols: int) -> str | None:
    """What is wrong with a list-of-lists matrix's rows of indices and of values (None: nothing)."""
    indices, values = X.rows, X.data
    if np.shape(indices) != (rows,) or np.shape(values) != (rows,):
        return f"rows and data hold {np.shape(indices)} and {np.shape(values)} lists, want ({rows},)"
    for i, (idx, val) in enumerate(zip(indices, values, strict=True)):
        if len(idx) != len(val):
            return f"row {i} has {len(idx)} indices and {len(val)} values"
        if not idx:
            continue
        if not all(_is_index(j) for j in idx):
            return f"row {i} has an index that is not an integer"
        if min(idx) < 0 or max(idx) >= cols:
            return f"row {i} has an index outside [0, {cols})"
        # repeated indices were summed by tocsr, not by toarray
        if any(a >= b for a, b in itertools.pairwise(idx)):
            return f"row {i} has indices that are not increasing"
    return None


def _is_index(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _dok_problem(X: Any, rows: int, cols: int) -> str | None:
    """What is wrong with a dictionary matrix's keys (None: nothing)."""
    for key in X.keys():
        if not (isinstance(key, tuple) and len(key) == 2 and all(_is_index(j) for j in key)):
            return f"the key {key!r} is not a pair of integers"
        if not (0 <= key[0] < rows and 0 <= key[1] < cols):
            return f"the key {key!r} is outside the shape {rows}×{cols}"
    return None


def check_sparse_structure(X: Any, name: str) -> None:
    """Refuse a scipy.sparse matrix whose index arrays contradict each other or its shape, with a
    ValueError naming ``name``, before scipy's compiled routines read them: its format conversions,
    canonicalisation and ``toarray`` trust the arrays (a CSR matrix whose ``indptr`` points past its
    entries killed the process in ``has_canonical_format``), and a list-of-lists matrix whose rows
    of indices and of values differ in length was converted on shifted values (probe CB). One pass
    over the indices (O(nnz))."""
    fmt = getattr(X, "format", None)
    if len(X.shape) != 2:  # scipy's sparse arrays may be 1-D
        raise ValueError(f"{name} must be 2-D, got a sparse array of shape {X.shape}")
    rows, cols = X.shape
    problem = None
    if fmt in ("csr", "csc", "bsr"):
        if fmt == "bsr":
            br, bc = X.blocksize
            major, minor = rows // br, cols // bc
        else:
            major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
        indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
        stored = min(indices.shape[0] if indices.ndim == 1 else -1, len(X.data))
        if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
            problem = f"its index arrays must hold integers, got dtypes {indptr.dtype} and {indices.dtype}"
        elif indptr.ndim != 1 or indptr.shape[0] != major + 1:
            problem = f"indptr has shape {indptr.shape}, want ({major + 1},)"
        elif indptr.size and indptr.dtype == np.uint64 and int(indptr.max()) >= 2**63:
            problem = f"indptr holds {int(indptr.max())}, beyond any number of entries"
        elif (indptr := indptr.astype(np.int64, copy=False))[0] != 0:
            # in int64: the differences of narrow or unsigned offsets wrapped, and offsets past
            # int16's range read as non-decreasing reached scipy's compiled code (probe DB)
            problem = f"indptr starts at {indptr[0]}, want 0"
        elif major and (np.diff(indptr) < 0).any():
            problem = "indptr decreases"
        elif indptr[-1] > stored:
            problem = f"indptr ends at {indptr[-1]}, past the {stored} stored entries"
        else:
            used = indices[: int(indptr[-1])]
            if used.size and (used.min() < 0 or used.max() >= minor):
                problem = f"an index is outside [0, {minor})"
    elif fmt == "coo":
        row, col = np.asarray(X.row), np.asarray(X.col)
        if not (row.shape == col.shape == (len(X.data),)):
            problem = f"row, col and data have {row.shape}, {col.shape} and {len(X.data)} entries"
        elif row.size and (row.min() < 0 or row.max() >= rows or col.min() < 0 or col.max() >= cols):
            problem = f"an index is outside the shape {rows}×{cols}"
    elif fmt == "dia":
        offsets = np.asarray(X.offsets)
        if offsets.shape != (np.asarray(X.data).shape[0],):
            problem = "offsets and data hold different numbers of diagonals"
        elif np.unique(offsets).size != offsets.size:  # scipy's CSR copy then holds duplicates (probe DB)
            problem = "offsets repeat"
    elif fmt == "lil":
        problem = _lil_problem(X, rows, cols)
    elif fmt == "dok":
        problem = _dok_problem(X, rows, cols)
    if problem is not None:
        raise ValueError(f"{name} is not a valid scipy.sparse {fmt} matrix: {problem}")
    if np.iscomplexobj(X.dtype.type(0)):  # scipy's conversions drop the imaginary part with a warning
        raise ValueError(f"{name}: complex data not supported, got dtype {X.dtype}")
    if fmt != "csr":
        # the CSR copy's indptr has a value per row: a 10⁸-row COO matrix with 5 entries took
        # 1.9 GB before any check, and 2³¹ rows ended in numpy's unnamed MemoryError
        nnz = int(getattr(X, "nnz", 0))
        check_bytes(
            8 * (rows + 1) + 16 * nnz,
            f"{name}: its CSR copy (a {fmt} matrix of shape {rows}×{cols}, {nnz} stored values)",
        )


class Csr:
    """A sparse X as the ``_csr`` calls of the C ABI take it: canonical CSR (sorted column
    indices without duplicates, which scipy calls ``has_canonical_format``) with float64 data and
    int32 or int64 indptr and indices of one type. A float64 CSR matrix in canonical format is
    passed without a copy; other formats are converted to CSR, other dtypes of the data to float64
    (8 bytes a value), duplicates summed and indices sorted on a copy (as scipy does), and an
    indptr whose type differs from the indices' converted (rows + 1 values).

    ``args`` are the seven arguments (rows, cols, nnz, index_bits, indptr, indices, data); the
    object keeps the arrays alive, so keep it for the duration of the call.
    """

    __slots__ = ("X", "args", "shape")

    def __init__(self, X: Any, name: str = "X"):
        check_sparse_structure(X, name)
        if X.format != "csr":
            X = X.tocsr()
        if X.dtype != np.float64 and (X.dtype.kind not in "fiub" or (X.dtype.kind == "f" and X.dtype.itemsize > 8)):
            raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
        if not X.has_canonical_format:
            # duplicates summed in X's own dtype, as tocsr, toarray and sum_duplicates do: summed
            # after the cast, a bool CSR X held 2 where its COO copy held True (probe EZ)
            X = _canonical_copy(X, name)
        if X.dtype != np.float64:
            check_bytes(8 * X.data.size, f"{name}: its values as float64 ({X.data.size} of dtype {X.dtype})")
            X = X.astype(np.float64)
        indices, indptr = X.indices, X.indptr
        if indices.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            indices = indices.astype(np.int64)
        if indptr.dtype != indices.dtype:
            if indices.dtype == np.int32 and indptr.size and indptr[-1] > np.iinfo(np.int32).max:
                indices = indices.astype(np.int64)
            indptr = indptr.astype(indices.dtype)
        # aligned copies where X's arrays are not (np.frombuffer at an offset), as a dense X is copied:
        # they were refused as "data is not aligned ... (NumPy's are)" naming neither X nor a remedy (probe EZ)
        indptr, indices, data = (np.require(a, requirements=("C", "A")) for a in (indptr, indices, X.data))
        rows, cols = X.shape
        nnz = int(indptr[-1]) if indptr.size else 0
        if data.shape[0] != nnz or indices.shape[0] != nnz:
            indices, data = indices[:nnz], data[:nnz]  # scipy may keep unused capacity beyond indptr[-1]
        bits = 8 * indices.dtype.itemsize
        self.X, self.shape = X, (rows, cols)
        self.args = (
            rows,
            cols,
            nnz,
            bits,
            _Buffer(indptr, CheckedIndex),
            _Buffer(indices, CheckedIndex),
            _Buffer(data, CheckedFloat64),
        )
