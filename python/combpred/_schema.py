"""The estimators' parameters as the core declares them (``capi/schema.go``, copied into
``_schema.json`` by a Go test that keeps it current): each parameter's type, default, range and
enum options are written once, in Go, and the scikit-learn parameter constraints and ``__init__``
defaults of :class:`~combpred.StructuredRidge` and :class:`~combpred.ProbabilisticStructured` are
derived from them here."""

from __future__ import annotations

import json
import numbers
from importlib import resources
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

_SCHEMA = json.loads(resources.files(__package__).joinpath("_schema.json").read_text(encoding="utf-8"))


def params(estimator: str) -> list[dict[str, Any]]:
    """The user-facing parameters of ``estimator`` ("ridge" or "prob"), in declaration order."""
    return [p for p in _SCHEMA[estimator] if not p.get("internal")]


def defaults(estimator: str) -> dict[str, Any]:
    """Each parameter's default (None where the core's schema says None)."""
    out = {}
    for p in params(estimator):
        value = p["default"]
        out[p["name"]] = float(value) if p["type"] == "real" and value is not None else value
    return out


def options(estimator: str, name: str) -> list[str]:
    """The values of an enum parameter, in the order of the core's codes."""
    return next(p["options"] for p in _SCHEMA[estimator] if p["name"] == name)


class Number(Interval):
    """An Interval that refuses booleans: ``True`` is an ``Integral`` to Python, and
    ``max_iter=True`` fitted one iteration where the spaces refused ``n_labels=True``. A real
    range reads any other real as the float the estimators pass on: scikit-learn's check called
    ``np.isnan`` on a ``Fraction`` and failed with NumPy's words, naming no parameter, and an
    ``np.longdouble`` of 1e-330, positive itself, reached the core as 0."""

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, (bool, np.bool_)):
            return False
        if self.type is numbers.Real and isinstance(val, numbers.Real) and type(val) not in (float, np.float64):
            try:
                val = float(val)
            except (OverflowError, ValueError, TypeError):  # 10**400: beyond every range
                return False
        return super().is_satisfied_by(val)


def _constraint(p: dict[str, Any]) -> list:
    kind = p["type"]
    if kind in ("real", "int"):
        number = numbers.Real if kind == "real" else numbers.Integral
        out: list = [Number(number, p.get("low"), p.get("high"), closed=p.get("closed", "neither"))]
    elif kind == "bool":
        out = ["boolean"]
    elif kind == "enum":
        out = [StrOptions(set(p["options"]))]
    else:  # seed
        out = ["random_state"]
    if p.get("none") and kind != "seed":  # "random_state" admits None itself
        out.append(None)
    return out


def constraints(estimator: str) -> dict[str, list]:
    """scikit-learn ``_parameter_constraints`` entries of the core-owned parameters."""
    return {p["name"]: _constraint(p) for p in params(estimator)}


def enum(name: str) -> list[str]:
    """The values of a core enum (``log_z_methods``, ``decoder_modes``), in the order of its codes."""
    return list(_SCHEMA["enums"][name])


def status(name: str) -> int:
    """The C ABI's status code called ``name`` (ok, value, type, cancelled, internal, memory)."""
    return int(_SCHEMA["statuses"][name])


def query_default(name: str) -> float:
    """The core's default of a query argument (``epsilon``, ``delta`` of the FPRAS) or limit
    (``inline_rows``: queries of at most this many rows run inline and cannot be cancelled)."""
    return float(_SCHEMA["query_defaults"][name])


def decoder_limits(kind: str) -> tuple[int, int]:
    """The largest size a space of ``kind`` (permutations, dicycles, ucycles, cliques) decodes
    exactly with ``decoder="auto"``, and the largest ``decoder="exact"`` accepts."""
    auto, exact = _SCHEMA["decoder_limits"][kind]
    return int(auto), int(exact)
