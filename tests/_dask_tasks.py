"""Functions that Dask workers run in tests/test_dask.py (importable by spawned worker processes)."""

from __future__ import annotations

import multiprocessing
import os
import signal

import numpy as np


def kill_on_block(block: np.ndarray, index: int, marker: str | None, block_info=None) -> np.ndarray:
    """Pass the block through; on block ``index``, kill this worker process (SIGKILL, no cleanup)
    — every time when ``marker`` is None, else only while the marker file does not exist yet."""
    if block_info[0]["chunk-location"][0] == index:
        if marker is None:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return block
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
    return block


def library_state() -> tuple[int, str, int | None, int | None]:
    """(pid, start method, pid that loaded the library, parent pid) of the calling worker."""
    from combpred import _capi

    return os.getpid(), multiprocessing.get_start_method(allow_none=True) or "", _capi._loaded_in_pid, os.getppid()


def killing(name: str, marker: str | None, work, *args, **kwargs):
    """combpred.dask._on_partition, except that the third run of the work function ``name``
    (``_prob_sums``, ``_cg_product``) on partition 4 kills its worker (SIGKILL) while the marker
    file does not exist yet; with no marker, every such run does. Bound to name and marker with
    functools.partial in place of _on_partition."""
    from combpred import dask as cdask

    if work.__name__ == name and args[3].index == 4:  # args: X, y, weights, the partition's _Part
        if marker is None:
            os.kill(os.getpid(), signal.SIGKILL)
        with open(marker + ".count", "a+") as f:
            f.write("x")
            f.seek(0)
            seen = len(f.read())
        if seen == 3:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return cdask._on_partition(work, *args, **kwargs)
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return cdask._on_partition(work, *args, **kwargs)
