"""Find and load combpred's shared library (the Go core behind the flat C ABI)."""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable
from pathlib import Path

_NAMES = {"linux": "libcombpred.so", "darwin": "libcombpred.dylib", "win32": "combpred.dll"}


def library_name() -> str:
    """Return the platform's file name of the shared library."""
    return _NAMES.get(sys.platform, "libcombpred.so")


def candidate_paths() -> list[Path]:
    """Return, in order, the places the shared library is looked for.

    When ``COMBPRED_LIBRARY`` (a file) is set, it is the only place: a library chosen explicitly is
    never silently replaced by another. Otherwise the library installed inside the package by
    ``pip install`` comes first, then ``build/`` of a source checkout (``go build -buildmode=c-shared
    -o build/libcombpred.so ./capi``).
    """
    name = library_name()
    env = os.environ.get("COMBPRED_LIBRARY")
    if env:
        return [Path(env)]
    paths = []
    here = Path(__file__).resolve().parent
    paths.append(here / "_lib" / name)
    paths.append(here.parent.parent / "build" / name)
    return paths


def load(before: Callable[[Path], None] | None = None) -> ctypes.CDLL:
    """Load the first library found in :func:`candidate_paths`; ``before(path)`` may refuse it by raising.

    Raises
    ------
    ImportError
        Listing every path tried and how to build the library.
    """
    tried = []
    for path in candidate_paths():
        if path.is_file():
            if before is not None:
                before(path)
            try:
                return ctypes.CDLL(str(path))
            except OSError as exc:
                tried.append(f"{path} (found but could not be loaded: {exc})")
        elif path.exists():
            tried.append(f"{path} (there, but not a regular file: a directory, a FIFO or a device)")
        else:
            tried.append(f"{path} (not found)")
    raise ImportError(
        "combpred could not find its compiled core. Tried:\n  "
        + "\n  ".join(tried)
        + "\nInstall the package with `pip install .` (it needs Go to build), or set "
        "COMBPRED_LIBRARY to the path of a built libcombpred."
    )
