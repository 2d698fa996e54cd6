"""Sample weights: the one rule that validates them (fit, partial_fit, score and the metrics) and the
weighted mean that every score takes with them."""

from __future__ import annotations

import decimal
import numbers
from typing import Any

import numpy as np

from . import _capi


def check_weight_dtype(dtype: np.dtype) -> None:
    """Refuse weights that are not real numbers (strings, which a cast parses, complex numbers,
    whose imaginary part it drops, objects), naming sample_weight."""
    if dtype.kind not in "fiub":
        raise ValueError(f"sample_weight must hold real numbers, got dtype {dtype}")


_NONE = object()  # weight_values' "no odd value found" (None is one)


def weight_values(sample_weight: Any) -> np.ndarray:
    """``sample_weight`` as an array of real numbers of any shape, unchecked otherwise: numbers held
    as objects (which scikit-learn takes: Python and NumPy reals, decimals, fractions) as float64;
    strings (which a cast parses), None, complex numbers, dates and other objects refused naming
    sample_weight."""
    w = _capi.as_array(sample_weight, "sample_weight")
    if w.dtype == object:
        odd = next((v for v in w.flat if not isinstance(v, numbers.Real | np.bool_ | decimal.Decimal)), _NONE)
        if odd is not _NONE:  # a generator is a 0-d array holding it
            raise ValueError(f"sample_weight must hold real numbers, found {type(odd).__name__}")
        try:
            w = w.astype(np.float64)
        except OverflowError:  # an int beyond the floats
            raise ValueError("sample_weight holds a number too large for a float64") from None
    check_weight_dtype(w.dtype)
    return w


def check_sample_weight(sample_weight: Any, n_samples: int, *, all_zero: bool = False) -> np.ndarray | None:
    """Validate sample weights: the one rule of fit, partial_fit and score.

    Returns None for None, else a C-contiguous float64 array of length ``n_samples`` that is finite,
    non-negative and not all zero (all zero too with ``all_zero``: a continued partial_fit's chunk
    that counts for nothing); anything else raises ``ValueError`` naming sample_weight.
    """
    if sample_weight is None:
        return None
    w = weight_values(sample_weight)
    if w.ndim == 0:
        w = np.full(n_samples, w, dtype=np.float64)
    if w.shape != (n_samples,):  # before the copy: a broadcast weight of the wrong length took gigabytes first
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}")
    w = np.ascontiguousarray(w, dtype=np.float64)
    bad = ~np.isfinite(w) | (w < 0)
    if np.any(bad):
        i = int(np.argmax(bad))
        value = "NaN" if np.isnan(w[i]) else repr(float(w[i]))
        raise ValueError(f"sample_weight[{i}] = {value}: weights must be finite and non-negative")
    if n_samples and not all_zero and not np.any(w > 0):
        raise ValueError("sample_weight must hold at least one non-zero weight (all are zero)")
    return w


def weighted_mean(values: Any, weights: np.ndarray | None) -> float:
    """The mean of ``values`` (one per row) weighted by validated ``weights`` (None: unweighted).

    Weights are scale-free, so they are divided by a power of two near their largest first: finite
    weights whose sum overflows, 1e308 each, gave NaN through ``np.average``, where the mean of
    values in [0, 1] must stay in [0, 1]. The division is exact but for weights below about 2⁻¹⁰²²
    of the largest, which flush towards zero; their share of the mean is below rounding anyway (a
    ratio of two such means must scale only the rows that count, as micro ``hierarchical_f1`` does).
    """
    values = np.asarray(values, dtype=np.float64)
    # the values are scaled the same way, and the mean back: losses of 1e308 each (node costs of
    # hierarchical_loss) averaged to inf although their mean is representable
    top = float(np.max(np.abs(values))) if values.size else 0.0
    shift = int(np.frexp(top)[1]) if 0 < top < np.inf else 0
    values = np.ldexp(values, -shift)
    if weights is None or weights.size == 0:
        return float(np.ldexp(np.mean(values), shift))
    _, exponent = np.frexp(np.max(weights))
    w = np.ldexp(weights, -int(exponent))
    return float(np.ldexp(w @ values / np.sum(w), shift))
