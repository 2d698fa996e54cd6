"""A reader of Clus HMC ARFF documents (tree taxonomies such as FunCat and ImageCLEF) and the
taxonomy helpers of the hierarchical loaders."""

from __future__ import annotations

import numpy as np

_NUMERIC_TYPES = ("numeric", "real", "integer")


def read_hmc_arff(text: str) -> tuple[list[str], np.ndarray, list[str], list[list[str]]]:
    """Parse a dense Clus HMC ARFF document (FunCat, ImageCLEF and Gene Ontology taxonomies).

    The last attribute must be ``@ATTRIBUTE class hierarchical <list>``, whose comma-separated
    list declares the taxonomy, in one of two forms: every node as its path from the root
    (``01/01/03``, the parent being the path prefix: FunCat, ImageCLEF trees), or every edge as
    ``parent/child`` (the Gene Ontology's DAGs, where a node may have several parents; recognised
    when every entry is one ``a/b`` pair). In data rows the last field is the node set joined by
    ``@`` (paths, or node ids for edge lists). Numeric attributes become one column each; nominal
    attributes (``{a,b,c}``) one 0/1 column per value, named ``"attribute=value"``; ``?``
    (missing) becomes NaN (in every column of a nominal attribute). Duplicate declarations are
    dropped.

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
        The declared node paths (or ``parent/child`` edges), deduplicated, in declaration order.
    labels : list of list of str
        Each row's node paths (or ids) as written (ancestors are implied, not necessarily listed).

    Raises
    ------
    ValueError
        Naming the line, for anything else: string or date attributes, sparse rows, a missing or
        misplaced hierarchical attribute, wrong field counts, unknown nominal values, undeclared
        labels.
    """
    names: list[str] = []
    nominal: dict[int, list[str]] = {}  # attribute position -> its values
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
                elif parts[2].lstrip().startswith("{") and parts[2].rstrip().endswith("}"):
                    values = [v.strip().strip("'\"") for v in parts[2].strip()[1:-1].split(",")]
                    if not all(values) or len(set(values)) != len(values):
                        raise ValueError(f"line {lineno}: nominal attribute {parts[1]!r} has empty or repeated values")
                    nominal[len(names)] = values
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
                declared_set = set(_edge_endpoints(hierarchy) if is_edge_list(hierarchy) else hierarchy)
                codes = {j: {v: k for k, v in enumerate(vals)} for j, vals in nominal.items()}
            continue
        if line.startswith("{"):
            raise ValueError(f"line {lineno}: sparse ARFF rows are not supported")
        values = line.split(",")
        if len(values) != len(names) + 1:
            raise ValueError(f"line {lineno}: {len(values)} values for {len(names) + 1} attributes")
        row: list[float] = []
        for j, v in enumerate(values[:-1]):
            v = v.strip()
            if j in codes:
                onehot = [np.nan] * len(codes[j]) if v == "?" else [0.0] * len(codes[j])
                if v != "?":
                    code = codes[j].get(v.strip("'\""))
                    if code is None:
                        raise ValueError(f"line {lineno}: {v!r} is not a value of nominal attribute {names[j]!r}")
                    onehot[code] = 1.0
                row.extend(onehot)
                continue
            try:
                row.append(np.nan if v == "?" else float(v))
            except ValueError as exc:
                raise ValueError(f"line {lineno}: attribute {names[j]!r}: {exc}") from None
        rows.append(row)
        row_labels = [v.strip() for v in values[-1].split("@")]
        for lab in row_labels:
            if lab not in declared_set:
                raise ValueError(f"line {lineno}: label {lab!r} is not a node of the declared hierarchy")
        labels.append(row_labels)
    if hierarchy is None:
        raise ValueError("no '@ATTRIBUTE class hierarchical ...' declaration found")
    columns = names
    if nominal:
        columns = []
        for j, name in enumerate(names):
            columns.extend([f"{name}={v}" for v in nominal[j]] if j in nominal else [name])
    X = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(columns))
    return columns, X, hierarchy, labels


def is_edge_list(declared: list[str]) -> bool:
    """Whether a hierarchical declaration lists ``parent/child`` edges (GO) rather than root paths:
    every entry is one ``a/b`` pair (a tree written as paths declares its top-level nodes alone)."""
    return bool(declared) and all(entry.count("/") == 1 for entry in declared)


def _edge_endpoints(edges: list[str]) -> list[str]:
    return list(dict.fromkeys(v for e in edges for v in e.split("/")))


def _dag(edges: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """Node names and parent sets of a DAG declared as ``parent/child`` edges, nodes in a
    topological order (parents first; Kahn's algorithm, ties by declaration order), under a
    virtual root ``"root"`` above every node without a parent (GO files name that root
    themselves). Cycles are refused."""
    nodes = _edge_endpoints(edges)
    parents: dict[str, list[str]] = {v: [] for v in nodes}
    children: dict[str, list[str]] = {v: [] for v in nodes}
    for e in edges:
        a, b = e.split("/")
        if a == b:
            raise ValueError(f"edge {e!r} is a loop")
        parents[b].append(a)
        children[a].append(b)
    if "root" not in parents:
        for v in nodes:
            if not parents[v]:
                parents[v].append("root")
        children["root"] = [v for v in nodes if parents[v] == ["root"]]
        parents["root"] = []
        nodes = ["root", *nodes]
    tops = [v for v in nodes if not parents[v]]
    if tops != ["root"]:
        raise ValueError(f"the taxonomy has nodes without a parent other than 'root': {tops[:5]}")
    waiting = {v: len(parents[v]) for v in nodes}
    order, ready = [], ["root"]
    while ready:
        v = ready.pop(0)
        order.append(v)
        for c in children[v]:
            waiting[c] -= 1
            if waiting[c] == 0:
                ready.append(c)
    if len(order) != len(nodes):
        stuck = [v for v in nodes if waiting[v] > 0]
        raise ValueError(f"the taxonomy has a cycle through {stuck[:5]}")
    index = {v: i for i, v in enumerate(order)}
    return order, [np.array(sorted(index[p] for p in parents[v]), dtype=np.int64) for v in order]


def _closure_rows_dag(labels: list[list[str]], index: dict[str, int], parents: list[np.ndarray]) -> np.ndarray:
    """0/1 node rows closed under every parent (the ancestors of a DAG node through all paths)."""
    Y = np.zeros((len(labels), len(parents)), dtype=np.int64)
    for i, row in enumerate(labels):
        stack = [index[lab] for lab in row]
        while stack:
            v = stack.pop()
            if not Y[i, v]:
                Y[i, v] = 1
                stack.extend(parents[v].tolist())
    return Y


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
