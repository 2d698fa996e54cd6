"""Test configuration: point the data loaders at the shared benchmark data beside the checkout.

The installed package cannot know where a source checkout's ../shared/datasets is; tests can.
"""

import os
from pathlib import Path

import pytest
from _synthetic import multiclass_split, multilabel_split

_SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
if _SHARED.is_dir():
    os.environ.setdefault("COMBPRED_DATA", str(_SHARED))


@pytest.fixture(scope="module")
def multilabel_data():
    """A seeded multi-label train/test split (tests/_synthetic.py), fresh for each test module."""
    return multilabel_split()


@pytest.fixture(scope="module")
def multiclass_data():
    """A seeded multi-class train/test split (tests/_synthetic.py), fresh for each test module."""
    return multiclass_split()
