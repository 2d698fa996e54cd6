"""Benchmark data sets bundled with combpred (each with its provenance in ``data/``)."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

__all__ = ["load_yeast", "read_arff"]


def read_arff(text: str) -> tuple[list[str], np.ndarray]:
    """Parse a dense numeric ARFF document into attribute names and a float matrix.

    Only what the bundled files use is supported: numeric and {0,1} nominal attributes, dense rows,
    ``%`` comments. Anything else raises ``ValueError`` naming the line.
    """
    names: list[str] = []
    rows: list[list[float]] = []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        lower = line.lower()
        if not in_data:
            if lower.startswith("@attribute"):
                parts = line.split(None, 2)
                if len(parts) < 3:
                    raise ValueError(f"line {lineno}: malformed @attribute")
                names.append(parts[1].strip("'\""))
            elif lower.startswith("@data"):
                in_data = True
            continue
        if line.startswith("{"):
            raise ValueError(f"line {lineno}: sparse ARFF rows are not supported")
        values = line.split(",")
        if len(values) != len(names):
            raise ValueError(f"line {lineno}: {len(values)} values for {len(names)} attributes")
        try:
            rows.append([float(v) for v in values])
        except ValueError as exc:
            raise ValueError(f"line {lineno}: {exc}") from None
    return names, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))


def _read_bundled(name: str) -> tuple[list[str], np.ndarray]:
    path = resources.files(__package__) / "data" / name
    with path.open("rb") as fh:
        return read_arff(gzip.decompress(fh.read()).decode("ascii"))


def load_yeast() -> Bunch:
    """Load the yeast multi-label data set (Elisseeff & Weston, 2001) with MULAN's split.

    2417 genes, 103 numeric features, 14 functional classes; 1500 training and 917 test examples.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train`` (1500, 103) float, ``Y_train`` (1500, 14) int 0/1, ``X_test`` (917, 103),
        ``Y_test`` (917, 14), ``feature_names``, ``target_names`` and ``DESCR``.
    """
    n_labels = 14
    names, train = _read_bundled("yeast-train.arff.gz")
    _, test = _read_bundled("yeast-test.arff.gz")
    return Bunch(
        X_train=np.ascontiguousarray(train[:, :-n_labels]),
        Y_train=train[:, -n_labels:].astype(np.int64),
        X_test=np.ascontiguousarray(test[:, :-n_labels]),
        Y_test=test[:, -n_labels:].astype(np.int64),
        feature_names=names[:-n_labels],
        target_names=names[-n_labels:],
        DESCR="yeast (MULAN split): 103 features, 14 labels; train 1500, test 917. "
        "Provenance: combpred/datasets/data/yeast-PROVENANCE.md",
    )
