"""The API reference lists every public name: what a module exports in ``__all__`` (constants and
submodules aside) has a page, either in docs/api.rst or in the Dask guide's own list. StructuredSVM,
read_arff, data_home_candidates and the two ready-made scorers had none."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
MODULES = [
    "combpred",
    "combpred.spaces",
    "combpred.decision",
    "combpred.metrics",
    "combpred.baselines",
    "combpred.datasets",
    "combpred.exceptions",
]


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_a_page(module):
    listed = (DOCS / "api.rst").read_text(encoding="utf-8") + (DOCS / "scaling_out.rst").read_text(encoding="utf-8")
    mod = importlib.import_module(module)
    missing = [
        name
        for name in mod.__all__
        if not name.isupper()
        and not name.startswith("__")
        and not isinstance(getattr(mod, name), types.ModuleType)
        and f"   {module}.{name}\n" not in listed
    ]
    assert not missing, f"{module}: {missing} are exported but not in the API reference"


def test_dask_estimators_have_pages():
    pytest.importorskip("dask")
    listed = (DOCS / "scaling_out.rst").read_text(encoding="utf-8")
    for name in importlib.import_module("combpred.dask").__all__:
        assert f"combpred.dask.{name}" in listed, name
