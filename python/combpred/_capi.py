"""ctypes bindings of the C ABI and the one place where a status code becomes an exception.

The library is loaded lazily, on first use, so that importing combpred is cheap and a process that
forks before using it is unaffected. The Go runtime does not survive ``fork()``: a child forked
after the library was loaded gets a clear error instead of a hang.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_uint8, c_uint64, c_void_p

import numpy as np

from . import _libpath
from ._version import __version__

OK, VALUE, TYPE, CANCELLED, INTERNAL, MEMORY = 0, 1, 2, 3, 4, 5

PROGRESS = ctypes.CFUNCTYPE(c_int, c_int64, c_double, c_double, c_void_p)

_i64p, _f64p = POINTER(c_int64), POINTER(c_double)

_SIGNATURES = {
    "cp_version": ([], c_char_p),
    "cp_last_error": ([], c_char_p),
    "cp_set_threads": ([c_int64], c_int),
    "cp_set_max_memory": ([c_int64], c_int),
    "cp_get_max_memory": ([_i64p, _i64p], c_int),
    "cp_space_new": ([c_char_p, _i64p, c_int64, _i64p], c_int),
    "cp_space_free": ([c_int64], c_int),
    "cp_space_info": ([c_int64, _i64p, _i64p, _f64p, _f64p], c_int),
    "cp_space_mean": ([c_int64, _f64p, c_int64], c_int),
    "cp_space_covariance": ([c_int64, _f64p, c_int64], c_int),
    "cp_space_covariance_check": ([c_int64], c_int),
    "cp_space_cov_mul": ([c_int64, _f64p, _f64p, c_int64], c_int),
    "cp_space_validate": ([c_int64, _i64p, c_int64, c_int64], c_int),
    "cp_space_embed": ([c_int64, _i64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_space_sample": ([c_int64, c_int64, c_uint64, _i64p, c_int64], c_int),
    "cp_space_decode": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_space_enumerate": ([c_int64, _i64p, c_int64, c_int64, _i64p], c_int),
    "cp_ridge_fit": (
        [c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, c_int64, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_ridge_partial_fit": (
        [c_int64, c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_model_stream_info": ([c_int64, _i64p, _i64p, _i64p, _i64p], c_int),
    "cp_model_free": ([c_int64], c_int),
    "cp_model_info": ([c_int64] + [_i64p] * 7 + [_f64p, _f64p], c_int),
    "cp_model_space": ([c_int64, _i64p], c_int),
    "cp_model_decision": ([c_int64, _f64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_model_predict": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_model_coef": ([c_int64, _f64p, c_int64, c_int64, _f64p], c_int),
    "cp_model_to_bytes": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_model_from_bytes": ([POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_prob_fit": (
        [c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, _f64p, c_char_p, PROGRESS, c_void_p, _i64p],
        c_int,
    ),
    "cp_prob_free": ([c_int64], c_int),
    "cp_prob_info": ([c_int64] + [_i64p] * 8 + [_f64p, _f64p], c_int),
    "cp_prob_coef": ([c_int64, _f64p, c_int64, c_int64, _f64p], c_int),
    "cp_prob_decision": ([c_int64, _f64p, c_int64, c_int64, _f64p, c_int64], c_int),
    "cp_prob_predict": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64], c_int),
    "cp_prob_marginals": ([c_int64, _f64p, c_int64, c_int64, c_char_p, _f64p, c_int64], c_int),
    "cp_prob_sample": ([c_int64, _f64p, c_int64, c_int64, c_int64, c_char_p, _i64p, c_int64], c_int),
    "cp_prob_score_samples": ([c_int64, _f64p, c_int64, c_int64, _i64p, c_int64, c_char_p, _f64p], c_int),
    "cp_prob_log_partition": ([c_int64, _f64p, c_int64, c_int64, c_char_p, _f64p, _f64p, _i64p], c_int),
    "cp_prob_to_bytes": ([c_int64, POINTER(c_uint8), c_int64, _i64p], c_int),
    "cp_prob_from_bytes": ([POINTER(c_uint8), c_int64, _i64p], c_int),
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded_in_pid: int | None = None


class ForkedChildError(RuntimeError):
    """combpred was used in a child process forked after the parent loaded the library."""


def _after_fork_in_child() -> None:
    global _lib
    if _lib is not None:
        _lib = None  # never call the parent's Go runtime from the child


os.register_at_fork(after_in_child=_after_fork_in_child)


def lib() -> ctypes.CDLL:
    """Return the loaded library, loading it and checking its version on first use."""
    global _lib, _loaded_in_pid
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            if _loaded_in_pid is not None and _loaded_in_pid != os.getpid():
                raise ForkedChildError(
                    "combpred cannot run in a process forked after the parent used it: the Go "
                    "runtime does not survive fork(). Use the 'spawn' or 'forkserver' start method "
                    "of multiprocessing (or joblib's default 'loky' backend)."
                )
            handle = _libpath.load()
            for name, (argtypes, restype) in _SIGNATURES.items():
                fn = getattr(handle, name)
                fn.argtypes, fn.restype = argtypes, restype
            version = handle.cp_version().decode()
            if version != __version__:
                raise ImportError(
                    f"combpred {__version__} found a core library of version {version}; "
                    "reinstall the package so that both match."
                )
            _loaded_in_pid = os.getpid()
            _lib = handle
    return _lib


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


def f64(a: np.ndarray):
    """A pointer to a C-contiguous float64 array (the caller keeps the array alive)."""
    return a.ctypes.data_as(_f64p)


def i64(a: np.ndarray):
    """A pointer to a C-contiguous int64 array (the caller keeps the array alive)."""
    return a.ctypes.data_as(_i64p)


def out_i64():
    """A fresh int64 output cell."""
    return c_int64(0)
