"""Buffers for tests that call the C ABI directly (e.g. with dimensions that lie, to test the
core's own checks): an array of its own shape through combpred._capi's one choke point."""

from __future__ import annotations

import numpy as np
from combpred import _capi


def f64(a):
    """The ``double*`` argument for ``a`` (float64, C-contiguous: written in place when an output)."""
    a = np.asarray(a)
    return _capi.f64(a, a.shape, "a")[1]


def i64(a):
    """The ``int64_t*`` argument for ``a`` (int64, C-contiguous: written in place when an output)."""
    a = np.asarray(a)
    return _capi.i64(a, a.shape, "a")[1]
