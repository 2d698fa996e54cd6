"""Process-wide settings of combpred: ``set_config``, ``get_config`` and ``config_context``.

The settings live in the Go core (one source of truth); these functions only validate and pass
them on. Unlike scikit-learn's configuration, they are process-wide, not per thread, and passed to
the worker processes started afterwards through the environment (``COMBPRED_MAX_MEMORY``).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

from . import _capi, _core

_UNSET = object()

# The config_context blocks open now, oldest first: each block's token and the setting in force
# while it is the newest, and the setting from before the first opened. Blocks open in several
# threads at once close in any order: each restoring what it found on entry left the budget of a
# block closed earlier in force after all had ended (probe EC).
_open_blocks: dict[object, Any] = {}
_before_blocks: Any = None


def _settings_lock() -> Any:
    """The lock that makes a change of the settings one step: the environment and the core were
    written apart, and two threads setting at once left them holding different budgets (probe EC).
    Reentrant: a warning filter or the library's first load may set them again."""
    return _capi.process_lock(globals(), "_lock", threading.RLock)


def _max_memory_bytes(value: Any) -> int:
    """The C ABI's form of ``max_memory``: its bytes, 0 for None (the default)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"max_memory must be a positive number of bytes or None, got {value!r}")
    if isinstance(value, numbers.Integral):
        value = int(value)
    elif math.isfinite(value) and float(value).is_integer():
        # compared as a Python float: a float16's comparison cast 2**63 - 1 to its type, with
        # NumPy's overflow warning (an error under -W error; probe 85)
        value = float(value)
    else:
        raise ValueError(f"max_memory must be a whole positive number of bytes or None, got {value!r}")
    if not 0 < value <= 2**63 - 1:
        raise ValueError(f"max_memory must be between 1 and 2**63 - 1 bytes (or None for the default), got {value!r}")
    return int(value)


def set_config(max_memory: Any = _UNSET) -> None:
    """Change combpred's process-wide settings; a parameter left out keeps its value.

    While a :func:`config_context` block is open, in any thread, a change lasts until the newest
    block closes, which restores the settings from before it (as scikit-learn's does).

    Parameters
    ----------
    max_memory : int, float or None, default: unchanged
        The memory budget in bytes. Every allocation whose size an input or parameter sets
        (``n_samples`` sample buffers, ``d × d`` covariances, Gram matrices, rows × output
        dimension, ...) is estimated and checked against it before it is made; a request above it
        raises ``MemoryError`` naming the parameter and the bytes it needs, where the process would
        otherwise be killed. None restores the default: half of the memory the process may use
        (the smallest of the physical memory, the memory limits of the cgroups holding the
        process, the address-space limit and the data-segment limit), fixed when the core is first
        used: a limit raised or lifted later leaves the default as it was (set ``max_memory`` to
        go beyond it). Under a cgroup's memory limit, an address-space limit or a data-segment
        limit, a request is also refused beyond half of what the limit leaves free at the time,
        which follows a limit set or lowered later.
        It is also written to the environment variable ``COMBPRED_MAX_MEMORY``, which a process
        reads when it loads combpred's core: worker processes started afterwards (joblib's
        ``loky`` workers of ``GridSearchCV(n_jobs=2)``, ``multiprocessing``) inherit the budget;
        those already running keep theirs. joblib keeps its loky workers from one parallel call
        to the next, so a budget changed after a first parallel call does not reach the next
        search's workers: set it before, or shut them down after the change
        (``joblib.externals.loky.get_reusable_executor().shutdown(wait=True)``; the next call
        starts new ones). A change while such workers are alive warns (``UserWarning``), and so
        does the end of a :func:`config_context` block inside which they started: they keep the
        block's budget.
    """
    with _settings_lock():
        _set_max_memory(max_memory, warn_at=4)  # the warning points at set_config's caller
        if max_memory is not _UNSET and _open_blocks:  # undone, as before, when the newest block closes
            _open_blocks[next(reversed(_open_blocks))] = max_memory


def _set_max_memory(max_memory: Any, warn_at: int, workers_before: frozenset[Any] | None = None) -> None:
    """set_config's work, under the settings' lock; ``warn_at``: the stack level of the user's
    line that a warning about live loky workers points at; ``workers_before``: as
    _workers_keeping_another_budget's ``started_since``."""
    if max_memory is not _UNSET:
        n_bytes = _max_memory_bytes(max_memory)
        stale = _workers_keeping_another_budget(n_bytes, workers_before)
        # the environment first: the library, if this call loads it, reads the budget from there,
        # and a malformed COMBPRED_MAX_MEMORY refused every load, set_config's own included
        previous = os.environ.get(_capi.MAX_MEMORY_ENV)
        _set_environment_budget(n_bytes)
        try:
            _core.set_max_memory(n_bytes)
        except BaseException:
            # the core's setting, whichever it holds: a signal's exception may land after it changed
            try:
                _set_environment_budget(_core.get_max_memory()[0] if _capi.usable() else previous)
            except BaseException:
                _set_environment_budget(previous)
            raise
        # told after the change: a warning turned into an error must not leave a closing block's
        # budget in force
        _warn_running_workers(stale, warn_at)


def _loky_workers() -> frozenset[Any]:
    """The process ids of joblib's reusable loky workers alive now (none when joblib's internals
    are not the ones known here)."""
    loky = sys.modules.get("joblib.externals.loky.reusable_executor")  # never imported for this
    executor = getattr(loky, "_executor", None)
    try:
        if executor is None or executor._flags.shutdown:
            return frozenset()
        return frozenset(executor._processes)
    except (AttributeError, TypeError):  # another joblib's internals: nothing to say
        return frozenset()


def _workers_keeping_another_budget(n_bytes: int, started_since: frozenset[Any] | None) -> frozenset[Any]:
    """joblib's reusable loky workers that will keep a budget other than ``n_bytes``: they read it
    when they loaded combpred, and joblib reuses them across searches (probe CY: a search under a
    200 kB budget ran in full in workers of an earlier call). With ``started_since`` (a block's
    close), only workers not among those: the others were told of at the block's start."""
    if os.environ.get(_capi.MAX_MEMORY_ENV, "0") == str(n_bytes):
        return frozenset()
    return _loky_workers() - (started_since or frozenset())


def _warn_running_workers(workers: frozenset[Any], stacklevel: int) -> None:
    """Warn that ``workers`` (_workers_keeping_another_budget's) keep their budget."""
    if not workers:
        return
    warnings.warn(
        f"combpred's memory budget changed while {len(workers)} joblib (loky) worker "
        "process(es) are alive: they keep the budget they started with, and joblib reuses them for the "
        "next parallel call (GridSearchCV(n_jobs=...), cross_validate, ...). To apply it there, shut them "
        "down: joblib.externals.loky.get_reusable_executor().shutdown(wait=True)",
        UserWarning,
        stacklevel=stacklevel,
    )


def _set_environment_budget(n_bytes: int | str | None) -> None:
    """Write the budget to COMBPRED_MAX_MEMORY (remove it for None or 0: the default)."""
    if n_bytes:
        os.environ[_capi.MAX_MEMORY_ENV] = str(n_bytes)
    else:
        os.environ.pop(_capi.MAX_MEMORY_ENV, None)


def get_config() -> dict[str, Any]:
    """Return combpred's process-wide settings.

    Returns
    -------
    dict
        ``max_memory``: the budget as set (None for the default); ``max_memory_bytes``: the budget
        in force, in bytes.
    """
    setting, effective = _core.get_max_memory()
    return {"max_memory": setting or None, "max_memory_bytes": effective}


@contextlib.contextmanager
def config_context(*, max_memory: Any = _UNSET) -> Iterator[None]:
    """Apply settings inside a ``with`` block and restore the previous ones after it.

    The settings stay process-wide: while the block is open, calls on every thread run under
    them. Blocks open in several threads at once may close in any order: the newest block still
    open decides the settings, and once the last has closed those from before the first opened
    are back.

    Parameters
    ----------
    max_memory : int, float or None, default: unchanged
        As in :func:`set_config`. joblib's loky worker processes started inside the block (by
        ``GridSearchCV(n_jobs=2)``, ``cross_validate(n_jobs=2)``, ...) keep its budget after it
        ends, as joblib reuses them for later parallel calls: the block's end warns
        (``UserWarning``) when there are any, and shutting them down
        (``joblib.externals.loky.get_reusable_executor().shutdown(wait=True)``) lets the next
        call start new ones under the restored budget.
    """
    global _before_blocks
    if max_memory is _UNSET:
        yield
        return
    token = object()
    workers = _loky_workers()
    try:
        with _settings_lock():
            if not _open_blocks:
                try:
                    _before_blocks = get_config()["max_memory"]
                except ImportError:  # a malformed COMBPRED_MAX_MEMORY refused the load: set_config mends it
                    _before_blocks = None
            # recorded first and closed in finally: a signal's exception (Ctrl-C) between the two
            # left a block recorded that no one would close (probe ED)
            _open_blocks[token] = max_memory
            _set_max_memory(max_memory, warn_at=5)  # through contextlib's __enter__ to the with statement
        yield
    finally:
        with _settings_lock():
            if token in _open_blocks:  # else interrupted before it changed anything
                del _open_blocks[token]
                newest = next(reversed(_open_blocks.values())) if _open_blocks else _before_blocks
                # workers started inside the block keep its budget after it (probe FG: a search's
                # later n_jobs=2 fits ran under a closed block's 520 kB, and their CG left X
                # uncentred); those alive at its start were told of then
                _set_max_memory(newest, warn_at=5, workers_before=workers)
