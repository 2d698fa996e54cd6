"""Bundled data: the yeast loader against the statistics in its PROVENANCE file, and the ARFF reader."""

from __future__ import annotations

import numpy as np
import pytest
from combpred.datasets import load_yeast, read_arff


@pytest.fixture(scope="module")
def yeast():
    return load_yeast()


def test_yeast_shapes_and_types(yeast):
    assert yeast.X_train.shape == (1500, 103)
    assert yeast.Y_train.shape == (1500, 14)
    assert yeast.X_test.shape == (917, 103)
    assert yeast.Y_test.shape == (917, 14)
    assert yeast.X_train.dtype == np.float64 and yeast.X_train.flags.c_contiguous
    assert yeast.Y_train.dtype == np.int64
    for Y in (yeast.Y_train, yeast.Y_test):
        assert set(np.unique(Y)) == {0, 1}
    assert np.isfinite(yeast.X_train).all() and np.isfinite(yeast.X_test).all()
    assert yeast.feature_names == [f"Att{i}" for i in range(1, 104)]
    assert yeast.target_names == [f"Class{i}" for i in range(1, 15)]
    assert "yeast" in yeast.DESCR


def test_yeast_statistics_match_provenance(yeast):
    # yeast-PROVENANCE.md: cardinality 4.228 (train), 4.252 (test), 4.237 (all); 198 distinct label sets
    assert yeast.Y_train.sum(axis=1).mean() == pytest.approx(4.228, abs=5e-4)
    assert yeast.Y_test.sum(axis=1).mean() == pytest.approx(4.252, abs=5e-4)
    Y = np.vstack([yeast.Y_train, yeast.Y_test])
    assert Y.sum(axis=1).mean() == pytest.approx(4.237, abs=5e-4)
    assert len(np.unique(Y, axis=0)) == 198


def test_yeast_loads_fresh_copies(yeast):
    again = load_yeast()
    again.X_train[0, 0] = 1e9
    assert yeast.X_train[0, 0] != 1e9


GOOD = """% a comment
@relation test

@attribute a numeric
@attribute 'b' numeric
@attribute label {0,1}

@data
1.5,2,0
% another comment
-3,4e-1,1
"""


def test_read_arff_parses_a_small_document():
    names, values = read_arff(GOOD)
    assert names == ["a", "b", "label"]
    np.testing.assert_array_equal(values, [[1.5, 2.0, 0.0], [-3.0, 0.4, 1.0]])


def test_read_arff_without_rows():
    names, values = read_arff("@attribute a numeric\n@data\n")
    assert names == ["a"] and values.shape == (0, 1)


def _replace_line(text: str, lineno: int, new: str) -> str:
    lines = text.splitlines()
    lines[lineno - 1] = new
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "lineno, bad, match",
    [
        (4, "@attribute", "malformed @attribute"),
        (4, "@attribute a", "malformed @attribute"),
        (9, "1.5,2", "2 values for 3 attributes"),
        (9, "1.5,2,0,7", "4 values for 3 attributes"),
        (11, "-3,abc,1", "abc"),
        (11, "-3,,1", ""),
        (9, "{0 1.5, 2 1}", "sparse"),
    ],
)
def test_read_arff_names_the_bad_line(lineno, bad, match):
    text = _replace_line(GOOD, lineno, bad)
    with pytest.raises(ValueError, match=rf"^line {lineno}: .*{match}"):
        read_arff(text)
