"""A reader of Clus HMC ARFF documents (tree taxonomies such as FunCat and ImageCLEF) and the
taxonomy helpers of the hierarchical loaders."""

from __future__ import annotations

import numpy as np

_NUMERIC_TYPES = ("numeric", "real", "integer")


def read_hmc_arff(text: str) -> tuple[list[str], np.ndarray, list[str], list[list[str]]]:
    """Parse a dense Clus HMC ARFF document (tree taxonomies such as FunCat and ImageCLEF).

    The last attribute must be ``@ATTRIBUTE class hierarchical <list>``, whose comma-separated
    list declares the taxonomy: every node as its path from the root (``01/01/03``), the parent
    being the path prefix. In data rows the last field is the node set joined by ``@``. The other
    attributes must be numeric; ``?`` (missing) becomes NaN. Duplicate declarations are dropped.

    Parameters
    ----------
    text : str
        The file's contents.

    Returns
    -------
    feature_names : list of str
    X : ndarray of shape (n_samples, n_features)
        Features, NaN where the file has ``?``.
    nodes : list of str
        The declared node paths, deduplicated, in declaration order.
    labels : list of list of str
        Each row's node paths as written (ancestors are implied, not necessarily listed).

    Raises
    ------
    ValueError
        Naming the line, for anything else: nominal or string attributes, sparse rows, a missing or
        misplaced hierarchical attribute, wrong field counts, undeclared labels.
    """
    names: list[str] = []
    hierarchy: list[str] | None = None
    rows: list[list[float]] = []
    labels: list[list[str]] = []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            lower = line.lower()
            if lower.startswith("@attribute"):
                if hierarchy is not None:
                    raise ValueError(f"line {lineno}: the hierarchical attribute must be the last attribute")
                parts = line.split(None, 2)
                if len(parts) < 3:
                    raise ValueError(f"line {lineno}: malformed @ATTRIBUTE")
                kind = parts[2].split(None, 1)
                if kind[0].lower() == "hierarchical":
                    if len(kind) < 2:
                        raise ValueError(f"line {lineno}: the hierarchical attribute declares no nodes")
                    declared = [v.strip() for v in kind[1].split(",") if v.strip()]
                    hierarchy = list(dict.fromkeys(declared))
                elif kind[0].lower() in _NUMERIC_TYPES:
                    names.append(parts[1].strip("'\""))
                else:
                    raise ValueError(
                        f"line {lineno}: attribute {parts[1]!r} has type {parts[2][:40]!r}; only numeric "
                        "features and the final hierarchical attribute are supported"
                    )
            elif lower.startswith("@data"):
                if hierarchy is None:
                    raise ValueError(f"line {lineno}: @DATA before any 'hierarchical' class attribute")
                in_data = True
                declared_set = set(hierarchy)
            continue
        if line.startswith("{"):
            raise ValueError(f"line {lineno}: sparse ARFF rows are not supported")
        values = line.split(",")
        if len(values) != len(names) + 1:
            raise ValueError(f"line {lineno}: {len(values)} values for {len(names) + 1} attributes")
        try:
            rows.append([np.nan if v.strip() == "?" else float(v) for v in values[:-1]])
        except ValueError as exc:
            raise ValueError(f"line {lineno}: {exc}") from None
        row_labels = [v.strip() for v in values[-1].split("@")]
        for lab in row_labels:
            if lab not in declared_set:
                raise ValueError(f"line {lineno}: label {lab!r} is not a declared node of the hierarchy")
        labels.append(row_labels)
    if hierarchy is None:
        raise ValueError("no '@ATTRIBUTE class hierarchical ...' declaration found")
    X = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))
    return names, X, hierarchy, labels


def _path_key(path: str) -> tuple:
    # Natural order of the components: numbers numerically, other codes (e.g. "a") after them.
    return tuple((0, int(c), "") if c.isdigit() else (1, 0, c) for c in path.split("/"))


def _taxonomy(nodes: list[str]) -> tuple[list[str], np.ndarray]:
    """Node names (virtual root first, then the paths in depth-first preorder) and parent array."""
    ordered = sorted(nodes, key=_path_key)
    names = ["root", *ordered]
    index = {name: i for i, name in enumerate(names)}
    parent = np.empty(len(names), dtype=np.int64)
    parent[0] = -1
    for i, path in enumerate(ordered, 1):
        prefix = path.rpartition("/")[0]
        if not prefix:
            parent[i] = 0
        elif prefix in index:
            parent[i] = index[prefix]
        else:
            raise ValueError(
                f"node {path!r}: its parent {prefix!r} is not declared (only tree taxonomies written as "
                "root paths are supported, not DAG edge lists such as the GO files')"
            )
    return names, parent


def _closure_rows(labels: list[list[str]], index: dict[str, int], parent: np.ndarray) -> np.ndarray:
    Y = np.zeros((len(labels), parent.size), dtype=np.int64)
    for i, row in enumerate(labels):
        for lab in row:
            v = index[lab]
            while v >= 0 and not Y[i, v]:
                Y[i, v] = 1
                v = parent[v]
    return Y


def _single_paths(labels: list[list[str]], index: dict[str, int], parent: np.ndarray, split: str) -> np.ndarray:
    y = np.empty(len(labels), dtype=np.int64)
    for i, row in enumerate(labels):
        deepest = max(row, key=lambda p: p.count("/"))
        v = index[deepest]
        chain = set()
        while v > 0:
            chain.add(v)
            v = parent[v]
        if not {index[lab] for lab in row} <= chain:
            raise ValueError(f"{split} row {i}: labels {row} are not one path from the root")
        y[i] = index[deepest]
    return y
