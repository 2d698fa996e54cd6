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


def killing(name: str, marker: str | None, *args, **kwargs):
    """combpred.dask's block function ``name`` (``_block_sums``, ``_block_cg_product``), except
    that the third call on partition 4 kills its worker (SIGKILL) while the marker file does not
    exist yet; with no marker, every call on partition 4 does. Bound with functools.partial in
    place of that function."""
    from combpred import dask as cdask

    if args[3] == 4:
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
                return getattr(cdask, name)(*args, **kwargs)
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return getattr(cdask, name)(*args, **kwargs)
