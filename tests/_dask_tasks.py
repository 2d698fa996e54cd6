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
