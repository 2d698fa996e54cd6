"""Benchmark data sets: yeast and the label-ranking sets ship with combpred, the others are read
from a data directory.

``load_yeast`` reads the copy shipped inside the package (with its provenance in ``data/``).

``load_label_ranking(name)``
    the 8 label-ranking sets of Cheng, Hühn & Hüllermeier (2009) in scikit-lr's CSV format, shipped
    gzipped inside the package (MIT-licensed, provenance in ``data/label_ranking/``); a data
    directory holding ``label_ranking/``, when given or found, is read instead;
``load_hierarchical(name)``
    the Clus HMC taxonomies ``"imclef07a"`` (single path) and ``"cellcycle_FUN"`` (multi-path),
    read from the data directory (their source repository is GPL-3.0, so they do not ship), and
    any other set of that format there, Gene Ontology DAGs (``"gasch2_GO"``) included;
``load_multilabel(name)``
    MULAN's multi-label text sets (``"medical"``, ``"enron"``, ``"bibtex"``, or any other in that
    format) from the data directory, features as a scipy.sparse CSR matrix.

The data directory is the one holding ``label_ranking/``, ``hierarchical_funcat_go/`` and
``multilabel_sparse/``. It is
looked for, in order, at the ``data_home`` argument, at the environment variable ``COMBPRED_DATA``,
and — in a source checkout — at ``../shared/datasets`` next to the repository root (the directory
holding ``go.mod``). A ``FileNotFoundError`` lists every place tried.
"""

from __future__ import annotations

import gzip
import os
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.utils import Bunch

from ._arff import read_arff
from ._fetch import fetch_file, get_data_home
from ._hmc import _closure_rows, _closure_rows_dag, _dag, _single_paths, _taxonomy, is_edge_list, read_hmc_arff
from ._mulan import read_label_names, read_sparse_arff

__all__ = [
    "LABEL_RANKING_DATASETS",
    "HIERARCHICAL_DATASETS",
    "data_home_candidates",
    "fetch_file",
    "get_data_home",
    "load_hierarchical",
    "load_label_ranking",
    "load_multilabel",
    "load_yeast",
    "read_arff",
    "read_hmc_arff",
    "read_sparse_arff",
]

MULTILABEL_DATASETS = ("medical", "enron", "bibtex")


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


# --------------------------------------------------------------------------------------------
# locating the shared data directory
# --------------------------------------------------------------------------------------------
LABEL_RANKING_DATASETS = ("authorship", "calhousing", "glass", "iris", "stock", "vehicle", "vowel", "wine")
"""Names accepted by :func:`load_label_ranking`."""

HIERARCHICAL_DATASETS = ("imclef07a", "cellcycle_FUN")
"""Names accepted by :func:`load_hierarchical`."""

_HIERARCHICAL_FILES = {
    "imclef07a": ("hierarchical_funcat_go/imclef07a", {"train": "ImCLEF07A_Train.arff", "test": "ImCLEF07A_Test.arff"}),
    "cellcycle_FUN": (
        "hierarchical_funcat_go/cellcycle_FUN",
        {
            "train": "cellcycle_FUN.train.arff",
            "valid": "cellcycle_FUN.valid.arff",
            "test": "cellcycle_FUN.test.arff",
        },
    ),
}


def _source_checkout_root() -> Path | None:
    """The repository root when the package runs from a source checkout (it holds go.mod)."""
    here = Path(__file__).resolve().parent
    for folder in here.parents:
        if (folder / "go.mod").is_file() and (folder / "python" / "combpred").is_dir():
            return folder
    return None


def data_home_candidates(data_home: str | os.PathLike | None = None) -> list[Path]:
    """Return the directories searched for the shared data, in order.

    Parameters
    ----------
    data_home : str or path-like, default=None
        An explicit data directory, tried first.

    Returns
    -------
    candidates : list of pathlib.Path
        ``data_home``, then ``$COMBPRED_DATA``, then ``<repository root>/../shared/datasets`` when
        the package runs from a source checkout; each only when given or found.
    """
    out: list[Path] = []
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(f"data_home must be a path (str or os.PathLike), got {type(data_home).__name__}")
        out.append(Path(data_home).expanduser())
    env = os.environ.get("COMBPRED_DATA")
    if env:
        out.append(Path(env).expanduser())
    root = _source_checkout_root()
    if root is not None:
        out.append((root.parent / "shared" / "datasets").resolve())
    return out


def _locate(relative: str, data_home: str | os.PathLike | None) -> Path:
    """Find ``relative`` (a path inside the data directory) in the first candidate holding it."""
    candidates = data_home_candidates(data_home)
    for folder in candidates:
        path = folder / relative
        if path.is_file():
            return path
    tried = "\n".join(f"  {folder / relative}" for folder in candidates) or "  (no candidate directory)"
    raise FileNotFoundError(
        f"combpred could not find the data file {relative!r}. Looked at:\n{tried}\n"
        "The hierarchical data sets do not ship with the package. Set the environment variable COMBPRED_DATA "
        "(or pass data_home=) to the directory holding hierarchical_funcat_go/; "
        "a source checkout also looks at ../shared/datasets next to the repository root."
    )


# --------------------------------------------------------------------------------------------
# label ranking (scikit-lr CSV)
# --------------------------------------------------------------------------------------------
def load_label_ranking(
    name: str, *, data_home: str | os.PathLike | None = None, return_X_y: bool = False
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """Load one of the 8 label-ranking benchmark sets (Cheng, Hühn & Hüllermeier, 2009).

    The files are scikit-lr's CSVs: a header ``n_samples,n_features,n_labels``, then per row the
    features and a rank vector. Every target row is a complete ranking. There is no canonical
    split; the literature reports (repeated) 10-fold cross-validation.

    ====================  ========  ========  ======
    name                  samples   features  labels
    ====================  ========  ========  ======
    ``"authorship"``      841       70        4
    ``"calhousing"``      20640     4         4
    ``"glass"``           214       9         6
    ``"iris"``            150       4         3
    ``"stock"``           950       5         5
    ``"vehicle"``         846       18        4
    ``"vowel"``           528       10        11
    ``"wine"``            178       13        3
    ====================  ========  ========  ======

    Parameters
    ----------
    name : str
        One of :data:`LABEL_RANKING_DATASETS`.
    data_home : str or path-like, default=None
        Data directory to try first (see the module docstring for the search order).
    return_X_y : bool, default=False
        Return ``(X, Y)`` instead of a Bunch.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features) float, ``Y`` (n_samples, n_labels) int64 rank rows —
        ``Y[i, j]`` is the position of label j, 1 = best (the encoding of
        :class:`combpred.spaces.Permutations`) — ``name``, ``filename`` and ``DESCR``.
    (X, Y) : tuple of ndarray
        When ``return_X_y`` is True.

    Raises
    ------
    ValueError
        For an unknown name or a malformed file.
    FileNotFoundError
        When the data directory is not found; the message lists where it looked.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a label-ranking data set name must be a plain file name, got {name!r}")
    if name not in LABEL_RANKING_DATASETS:
        # any other set in the same format, from the data directory
        try:
            _locate(f"label_ranking/{name}.csv", data_home)
        except FileNotFoundError as exc:
            raise ValueError(
                f"unknown label-ranking data set {name!r}: the shipped ones are {list(LABEL_RANKING_DATASETS)}, and no "
                f"data directory holds label_ranking/{name}.csv ({exc})"
            ) from None
    try:
        path = _locate(f"label_ranking/{name}.csv", data_home)
        opened = open(path, encoding="ascii")  # noqa: SIM115 -- closed by the with below
    except FileNotFoundError:
        # The package ships every label-ranking file (gzipped, 400 KB in all); a data directory,
        # when given or found, wins so that a user's own copy is read.
        bundled = resources.files(__package__) / "data" / "label_ranking" / f"{name}.csv.gz"
        path = Path(str(bundled))
        opened = gzip.open(path, "rt", encoding="ascii")
    with opened as fh:
        header = fh.readline().strip()
        try:
            n_samples, n_features, n_labels = (int(v) for v in header.split(","))
        except ValueError:
            raise ValueError(f"{path}: line 1 must be 'n_samples,n_features,n_labels', got {header!r}") from None
        data = np.loadtxt(fh, delimiter=",", dtype=np.float64, ndmin=2)
    if data.shape != (n_samples, n_features + n_labels):
        raise ValueError(
            f"{path}: the header promises {n_samples} rows of {n_features + n_labels} values, found shape {data.shape}"
        )
    from ..metrics import _check_rankings

    X = np.ascontiguousarray(data[:, :n_features])
    Y = _check_rankings(data[:, n_features:], f"{name} targets")
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        name=name,
        filename=str(path),
        DESCR=f"{name} (label ranking, scikit-lr CSV): {n_samples} samples, {n_features} features, "
        f"{n_labels} labels; Y rows are ranks (1 = best). No canonical split: use repeated 10-fold CV. "
        "Provenance: label_ranking/PROVENANCE.md in the data directory.",
    )


# --------------------------------------------------------------------------------------------
# multi-label text (MULAN sparse ARFF)
# --------------------------------------------------------------------------------------------
def load_multilabel(
    name: str,
    *,
    subset: str = "train",
    data_home: str | os.PathLike | None = None,
    sparse_targets: bool = True,
) -> Bunch:
    """Load a MULAN multi-label set from the data directory, features as a sparse matrix.

    ``multilabel_sparse/<name>/<name>-{train,test}.arff`` with ``<name>.xml``: the shared
    ``"medical"`` (978 clinical reports, 1449 binary word features, 45 ICD-9 codes), ``"enron"``
    (1702 e-mails, 1001 features, 53 labels) and ``"bibtex"`` (7395 entries, 1836 features, 159
    tags), or any other set in MULAN's format. Labels are the attributes the XML names, wherever
    they stand; the others are features. Rows are read as they come (sparse ``{index value}``
    rows are never densified).

    Parameters
    ----------
    name : str
        The set's folder name.
    subset : {"train", "test", "all"}, default="train"
        The split (MULAN's; "all" stacks train then test).
    data_home : str or path-like, default=None
        Data directory to try first (see the module docstring for the search order).
    sparse_targets : bool, default=True
        Return Y as a CSR matrix (as ``MultiLabelBinarizer(sparse_output=True)`` does); False gives
        a dense int64 array.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (scipy.sparse.csr_matrix, float64, n_samples × n_features), ``Y`` (0/1, CSR int64 or
        dense), ``feature_names``, ``target_names``, ``name``, ``subset``, ``DESCR``.

    Raises
    ------
    ValueError
        For a malformed file (naming it and the line), a label that is not 0/1, or an XML label
        the ARFF lacks.
    FileNotFoundError
        When no data directory holds the files; the message lists where it looked.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a multi-label data set name must be a plain folder name, got {name!r}")
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    folder = f"multilabel_sparse/{name}"
    xml = _locate(f"{folder}/{name}.xml", data_home)
    try:
        labels = read_label_names(xml.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{xml}: {exc}") from None
    parts = []
    for split in ("train", "test") if subset == "all" else (subset,):
        path = _locate(f"{folder}/{name}-{split}.arff", data_home)
        try:
            names, M = read_sparse_arff(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        if parts and names != parts[0][0]:
            raise ValueError(f"{path}: its attributes differ from the train split's")
        parts.append((names, M, path))
    from scipy import sparse as _sparse

    names = parts[0][0]
    M = _sparse.vstack([p[1] for p in parts]).tocsr() if len(parts) > 1 else parts[0][1]
    position = {n: j for j, n in enumerate(names)}
    missing = [lab for lab in labels if lab not in position]
    if missing:
        raise ValueError(f"{xml}: labels {missing[:5]} are not attributes of {parts[0][2]}")
    label_cols = np.array([position[lab] for lab in labels], dtype=np.int64)
    is_label = np.zeros(len(names), dtype=bool)
    is_label[label_cols] = True
    feature_cols = np.flatnonzero(~is_label)
    Y = M[:, label_cols]
    if Y.nnz and not np.all(Y.data == 1):
        raise ValueError(f"{parts[0][2]}: a label holds a value other than 0 and 1")
    Y = Y.astype(np.int64)
    X = M[:, feature_cols].tocsr()
    X.sort_indices()
    return Bunch(
        X=X,
        Y=Y.tocsr() if sparse_targets else Y.toarray(),
        feature_names=[names[j] for j in feature_cols],
        target_names=labels,
        name=name,
        subset=subset,
        DESCR=f"{name} (MULAN multi-label ARFF), {subset}: {X.shape[0]} samples, {X.shape[1]} features "
        f"({X.nnz / max(1, X.shape[0]):.1f} non-zero per row), {len(labels)} labels (cardinality "
        f"{Y.sum() / max(1, Y.shape[0]):.2f}). Provenance: multilabel_sparse/PROVENANCE.md in the data directory.",
    )


# --------------------------------------------------------------------------------------------
# hierarchical (Clus HMC ARFF)
# --------------------------------------------------------------------------------------------
def _hierarchical_files(name: str, data_home: str | os.PathLike | None) -> tuple[str, dict[str, str]]:
    """The folder and split files of a hierarchical set: the two named ones, or any other
    ``hierarchical_funcat_go/<name>/<name>.{train,valid,test}.arff`` a data directory holds."""
    if name in _HIERARCHICAL_FILES:
        return _HIERARCHICAL_FILES[name]
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a hierarchical data set name must be a plain folder name, got {name!r}")
    folder = f"hierarchical_funcat_go/{name}"
    candidates = data_home_candidates(data_home)
    files = {
        split: f"{name}.{split}.arff"
        for split in ("train", "valid", "test")
        if any((c / folder / f"{name}.{split}.arff").is_file() for c in candidates)
    }
    if "train" not in files:
        tried = ", ".join(str(c / folder / f"{name}.train.arff") for c in candidates) or "no data directory"
        raise ValueError(
            f"unknown hierarchical data set {name!r}: the named ones are {list(HIERARCHICAL_DATASETS)}; any other "
            f"needs {folder}/{name}.train.arff (and optionally .valid/.test) in a data directory; looked at: {tried}"
        )
    return folder, files


class _DAGBunch(Bunch):
    """The Bunch of a DAG taxonomy: asking it for a tree's ``parent`` array is an error that says
    why, not a KeyError."""

    def __getitem__(self, key: str) -> Any:
        if key == "parent" and not dict.__contains__(self, "parent"):
            v = int(np.argmax([len(p) for p in dict.__getitem__(self, "parents")]))
            names = dict.__getitem__(self, "node_names")
            ps = [names[p] for p in dict.__getitem__(self, "parents")[v]]
            raise ValueError(
                f"{dict.__getitem__(self, 'name')}: the taxonomy is a DAG (node {names[v]!r} has {len(ps)} parents: "
                f"{ps[:4]}), not a tree, so it has no parent array: Subtrees and HierarchyPaths take trees. Use the "
                "parent sets (parents) and the ancestor-closed 0/1 node rows (Y_*), e.g. with one binary model per "
                "node or a multi-label space."
            )
        return super().__getitem__(key)


def _load_dag(name: str, parsed: dict[str, Any], first: tuple) -> Bunch:
    """The Bunch of a taxonomy declared as parent/child edges (Gene Ontology)."""
    node_names, parents = _dag(first[2])
    index = {n: i for i, n in enumerate(node_names)}
    n_nodes = len(node_names)
    depth = np.zeros(n_nodes, dtype=np.int64)  # the longest path from the root
    is_leaf = np.ones(n_nodes, dtype=bool)
    for v in range(1, n_nodes):  # topological order: parents first
        depth[v] = 1 + max(depth[p] for p in parents[v])
        is_leaf[parents[v]] = False
    tree = all(len(p) <= 1 for p in parents)
    out = (Bunch if tree else _DAGBunch)(
        parents=parents,
        is_tree=tree,
        node_names=node_names,
        is_leaf=is_leaf,
        depth=depth,
        feature_names=first[0],
        splits=list(parsed),
        name=name,
    )
    if tree:
        out["parent"] = np.array([p[0] if len(p) else -1 for p in parents], dtype=np.int64)
    sizes = []
    for split, (_, X, _, labels) in parsed.items():
        out[f"X_{split}"] = X
        out[f"Y_{split}"] = _closure_rows_dag(labels, index, parents)
        sizes.append(f"{split} {X.shape[0]}")
    multi = sum(len(p) > 1 for p in parents)
    out["DESCR"] = (
        f"{name} (Clus HMC ARFF, parent/child edges): {len(first[0])} features, "
        + ("a tree" if tree else f"a DAG ({multi} nodes with several parents)")
        + f" of {n_nodes - 1} nodes plus the root (longest path {int(depth.max())}, {int(is_leaf.sum())} leaves); "
        f"Y: 0/1 node rows closed under every parent; {' / '.join(sizes)}. Missing features are NaN (not imputed). "
        "Provenance: hierarchical_funcat_go/PROVENANCE.md in the data directory."
    )
    return out


def load_hierarchical(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    cache_home: str | os.PathLike | None = None,
) -> Bunch:
    """Load a hierarchical-classification benchmark in Clus HMC format, with its taxonomy.

    The taxonomy is returned as a parent array with a **virtual root** (node 0, ``"root"``) above
    the declared top-level nodes; the other nodes follow in depth-first preorder of their codes,
    so ``parent[v] < v``. Use it with :class:`combpred.spaces.HierarchyPaths` (single paths) or
    :class:`combpred.spaces.Subtrees` (multi-path).

    ``"imclef07a"`` — ImageCLEF 2007 medical images (IRMA code, axis A), 80 edge-histogram
    features, a tree of 96 nodes (8/25/63 per level, 63 leaves; 97 with the virtual root). Every
    image has one full-depth path: ``y_train``, ``y_test`` are the node ids of the leaves.
    Split: Train 10000 (the literature's 7000 train + 3000 validation, stored together) / Test 1006.

    ``"cellcycle_FUN"`` — yeast genes (Clare & King features), 77 numeric features, the FunCat
    tree of 499 nodes (500 with the virtual root), depth 6. Genes have several paths, possibly
    stopping above a leaf: ``Y_*`` are 0/1 node rows closed under parents (root column 1).
    Split: train 1628 / valid 848 / test 1281.

    **Missing values.** cellcycle_FUN has missing features (``?`` in the files, in most rows);
    they are returned as NaN, not imputed. Impute inside the model so that validation and test rows
    are filled from training statistics only, e.g.
    ``make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(), model)``.

    Parameters
    ----------
    name : {"imclef07a", "cellcycle_FUN"}
        The data set.
    data_home : str or path-like, default=None
        Data directory to try first (see the module docstring for the search order).
    download_if_missing : bool, default=True
        When no data directory holds a file, download it from its original public source (the
        C-HMCNN repository at a pinned commit; ``COMBPRED_DATA_URL`` names a mirror), check its
        SHA-256 and cache it (:func:`fetch_file`); False raises ``FileNotFoundError`` instead.
    cache_home : str or path-like, default=None
        Where downloads are cached (:func:`get_data_home`: ``$COMBPRED_DATA_HOME`` or
        ``~/combpred_data``).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_<split>`` float (NaN = missing) and ``y_<split>`` (imclef07a: node ids) or ``Y_<split>``
        (cellcycle_FUN: int 0/1 rows of width n_nodes) for each split; ``parent`` int64
        (n_nodes,), −1 at the virtual root; ``node_names`` (the codes, ``"root"`` first);
        ``is_leaf`` bool (n_nodes,); ``depth`` int (n_nodes,), 0 at the virtual root;
        ``feature_names``; ``splits``; ``DESCR``.

    Raises
    ------
    ValueError
        For an unknown name or a malformed file (also if the splits declare different taxonomies).
    FileNotFoundError
        When no data directory holds a file and ``download_if_missing`` is False; the message lists
        where it looked.
    OSError
        When a download fails.
    """
    folder, files = _hierarchical_files(name, data_home)
    parsed: dict[str, Any] = {}
    for split, filename in files.items():
        try:
            path = _locate(f"{folder}/{filename}", data_home)
        except FileNotFoundError:
            if not download_if_missing:
                raise
            path = fetch_file(f"{folder}/{filename}", cache_home)
        try:
            parsed[split] = read_hmc_arff(path.read_text(encoding="latin-1"))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    first = next(iter(parsed.values()))
    for split, (feature_names, _, nodes, _) in parsed.items():
        if nodes != first[2] or feature_names != first[0]:
            raise ValueError(f"{name}: split {split!r} declares different features or taxonomy from the first split")
    if is_edge_list(first[2]):
        return _load_dag(name, parsed, first)
    node_names, parent = _taxonomy(first[2])
    index = {n: i for i, n in enumerate(node_names)}
    n_nodes = parent.size
    is_leaf = np.ones(n_nodes, dtype=bool)
    is_leaf[parent[parent >= 0]] = False
    depth = np.zeros(n_nodes, dtype=np.int64)
    for v in range(1, n_nodes):  # preorder: a parent's depth is known before its children's
        depth[v] = depth[parent[v]] + 1
    out = Bunch(
        parent=parent,
        parents=[np.array([p], dtype=np.int64) if p >= 0 else np.empty(0, dtype=np.int64) for p in parent],
        is_tree=True,
        node_names=node_names,
        is_leaf=is_leaf,
        depth=depth,
        feature_names=first[0],
        splits=list(files),
        name=name,
    )
    sizes = []
    single = name == "imclef07a"
    for split, (_, X, _, labels) in parsed.items():
        out[f"X_{split}"] = X
        if single:
            out[f"y_{split}"] = _single_paths(labels, index, parent, split)
        else:
            out[f"Y_{split}"] = _closure_rows(labels, index, parent)
        sizes.append(f"{split} {X.shape[0]}")
    kind = "single path (y: leaf node ids)" if single else "multi-path (Y: 0/1 node rows)"
    missing = any(np.isnan(X).any() for _, X, _, _ in parsed.values())
    out["DESCR"] = (
        f"{name} (Clus HMC ARFF): {len(first[0])} features, tree of {n_nodes - 1} nodes plus a virtual root "
        f"(depth {int(depth.max())}, {int(is_leaf.sum())} leaves), {kind}; {' / '.join(sizes)}. "
        + ("Missing features are NaN (not imputed). " if missing else "")
        + "Provenance: hierarchical_funcat_go/PROVENANCE.md in the data directory."
    )
    return out
