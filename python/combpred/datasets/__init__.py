"""Benchmark data sets: yeast and the label-ranking sets ship with combpred, the others are read
from a data directory.

``load_yeast`` reads the copy shipped inside the package (with its provenance in ``data/``).

``load_label_ranking(name)``
    the 8 label-ranking sets of Cheng, Hühn & Hüllermeier (2009) in scikit-lr's CSV format, shipped
    gzipped inside the package (MIT-licensed, provenance in ``data/label_ranking/``); a data
    directory holding ``label_ranking/``, when given or found, is read instead;
``load_hierarchical(name)``
    the Clus HMC taxonomies ``"imclef07a"`` (single path), ``"cellcycle_FUN"`` (multi-path tree)
    and ``"gasch2_GO"`` (Gene Ontology DAG), read from the data directory or downloaded (their
    source repository is GPL-3.0, so they do not ship);
``load_multilabel(name)``
    MULAN multi-label sets, sparse (``"medical"``, ``"enron"``, ``"bibtex"``) or dense
    (``"scene"``, ``"yeast"``), read from the data directory with X as a scipy.sparse CSR matrix.

Every loader also reads a data set it does not know by name when its files are in the data
directory, laid out like the known ones (``label_ranking/<name>.csv``,
``hierarchical_funcat_go/<name>/*.arff``, ``multilabel_sparse/<name>/`` or ``<name>/`` holding
``<name>.xml`` and ``<name>-{train,test}.arff``).

The data directory is the one holding ``label_ranking/``, ``hierarchical_funcat_go/`` and
``multilabel_sparse/``. It is
looked for, in order, at the ``data_home`` argument, at the environment variable ``COMBPRED_DATA``,
and — in a source checkout — at ``../shared/datasets`` next to the repository root (the directory
holding ``go.mod``). A ``FileNotFoundError`` lists every place tried.
"""

from __future__ import annotations

import gzip
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse as _sparse
from sklearn.utils import Bunch

from .. import _capi
from ..spaces import _flag
from ._arff import ValueBudget, document_text, parse_number, read_arff, read_file, text_lines
from ._fetch import cached_file, fetch_file, get_data_home
from ._hmc import (
    TAXONOMY_BYTES_PER_ENTRY,
    _closure_rows,  # noqa: F401 -- the tests reach the tree closure through this module
    _closure_rows_dag,
    _dag_taxonomy,
    _single_paths,
    _taxonomy,
    hierarchy_form,
    read_hmc_arff,
)
from ._mulan import read_mulan_arff, read_mulan_xml

__all__ = [
    "LABEL_RANKING_DATASETS",
    "HIERARCHICAL_DATASETS",
    "MULTILABEL_DATASETS",
    "TaxonomyIsDAGError",
    "data_home_candidates",
    "fetch_file",
    "get_data_home",
    "load_hierarchical",
    "load_label_ranking",
    "load_multilabel",
    "load_yeast",
    "read_arff",
    "read_hmc_arff",
    "read_mulan_arff",
    "read_mulan_xml",
]


def _read_bundled(name: str) -> tuple[list[str], np.ndarray]:
    path = resources.files(__package__) / "data" / name
    with path.open("rb") as fh:
        return read_arff(gzip.decompress(fh.read()).decode("ascii"), source=name)


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

HIERARCHICAL_DATASETS = ("imclef07a", "cellcycle_FUN", "gasch2_GO")
"""Names :func:`load_hierarchical` knows (and can download); others are read when their files exist."""

MULTILABEL_DATASETS = ("bibtex", "enron", "medical", "scene", "yeast")
"""Names :func:`load_multilabel` knows; others are read when their files exist."""

_MULTILABEL_FOLDERS = {
    "bibtex": "multilabel_sparse/bibtex",
    "enron": "multilabel_sparse/enron",
    "medical": "multilabel_sparse/medical",
    "scene": "scene",
    "yeast": "yeast",
}

# A data set's name becomes part of a path: no separators, no "..", nothing hidden.
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9_+-]+)*")
# a data set's files add suffixes such as "-train.arff" to its name, within the 255 bytes of a file name
_MAX_NAME = 200


def _check_name(name: Any, kind: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"the {kind} data set's name must be a str, got {type(name).__name__}")
    if len(name) > _MAX_NAME:  # the file system refused its files' names with a raw OSError
        raise ValueError(f"the {kind} data set's name has {len(name)} characters, at most {_MAX_NAME} are allowed")
    if not _SAFE_NAME.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a valid {kind} data set name (letters, digits, '_', '-', '+' and inner dots only)"
        )
    return name


def _unknown(kind: str, name: str, known: tuple[str, ...], tried: list[Path]) -> ValueError:
    looked = "\n".join(f"  {p}" for p in tried) or "  (no candidate directory: set COMBPRED_DATA or pass data_home=)"
    return ValueError(
        f"unknown {kind} data set {name!r}: it is none of {list(known)}, and no data directory holds its files. "
        f"Looked for:\n{looked}"
    )


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
    "gasch2_GO": (
        "hierarchical_funcat_go/gasch2_GO",
        {"train": "gasch2_GO.train.arff", "valid": "gasch2_GO.valid.arff", "test": "gasch2_GO.test.arff"},
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
        An explicit data directory, tried first. It must exist: a mistyped one would otherwise
        let the data silently come from the next place searched.

    Returns
    -------
    candidates : list of pathlib.Path
        ``data_home``, then ``$COMBPRED_DATA``, then ``<repository root>/../shared/datasets`` when
        the package runs from a source checkout; each only when given or found, and once: a
        directory that an earlier one already names (through a symbolic link too) is left out.

    Raises
    ------
    ValueError
        When ``data_home`` is given but is not a directory (an empty string included).
    """
    out: list[Path] = []
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(f"data_home must be a path (str or os.PathLike), got {type(data_home).__name__}")
        folder = Path(data_home).expanduser()
        if os.fspath(data_home) == "" or not folder.is_dir():
            raise ValueError(f"data_home {os.fspath(data_home)!r} is not a directory")
        out.append(folder)
    env = os.environ.get("COMBPRED_DATA")
    if env:
        out.append(Path(env).expanduser())
    root = _source_checkout_root()
    if root is not None:
        out.append((root.parent / "shared" / "datasets").resolve())
    seen: set[str] = set()
    unique = []
    for folder in out:  # searched and listed in a refusal once each (probe CJ)
        # realpath, not Path.resolve: a symbolic link loop ($COMBPRED_DATA pointing into one) made
        # resolve raise RuntimeError (OSError on 3.13), and every loader with it (probe CL)
        key = os.path.realpath(folder)
        if key not in seen:
            seen.add(key)
            unique.append(folder)
    return unique


def _refuse_not_a_file(path: Path) -> None:
    """Raise ValueError when ``path`` exists but is not a regular file: a directory or a FIFO named
    like a data file was reported as missing, or as an unknown data set (probe DI); and
    _BrokenCopyError when it is a symbolic link to nothing, which read as absent, so that the next
    directory's copy was loaded without a word (probe 82)."""
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is there but is not a regular file (a directory, a FIFO or a device)")
    if path.is_symlink() and not path.exists():
        raise _BrokenCopyError(
            f"{path} is a symbolic link to {os.readlink(path)!r}, which does not exist: restore its target or remove the link"
        )


def _locate(relative: str, data_home: str | os.PathLike | None) -> Path:
    """Find ``relative`` (a path inside the data directory) in the first candidate holding it."""
    candidates = data_home_candidates(data_home)
    for folder in candidates:
        path = folder / relative
        _refuse_not_a_file(path)
        if path.is_file():
            return path
    tried = "\n".join(f"  {folder / relative}" for folder in candidates) or "  (no candidate directory)"
    raise FileNotFoundError(
        f"combpred could not find the data file {relative!r}. Looked at:\n{tried}\n"
        "The hierarchical data sets do not ship with the package. Set the environment variable COMBPRED_DATA "
        "(or pass data_home=) to the directory holding hierarchical_funcat_go/; "
        "a source checkout also looks at ../shared/datasets next to the repository root."
    )


class _BrokenCopyError(FileNotFoundError):
    """A data directory holds a broken copy of a data set: some of its files but not all, or a
    symbolic link to nothing in place of one. An error, never a reason to read another directory's
    copy, which the user did not point at (probes EX, 82)."""


def _locate_together(relatives: dict[str, str], data_home: str | os.PathLike | None) -> dict[str, Path]:
    """The files of a data set's splits (``relatives``: split -> path inside the data directory),
    all from the first candidate directory that holds any of them: each split was taken from
    whichever directory had it, so a data_home holding one split mixed it with another copy's
    others (probe EX). A directory holding some but not all of them is an error naming the rest."""
    for folder in data_home_candidates(data_home):
        found = {}
        for split, relative in relatives.items():
            _refuse_not_a_file(folder / relative)
            if (folder / relative).is_file():
                found[split] = folder / relative
        if found and len(found) < len(relatives):
            missing = [str(folder / relatives[s]) for s in relatives if s not in found]
            raise _BrokenCopyError(
                f"{folder} holds {', '.join(map(repr, found))} of this data set but not {', '.join(missing)}: "
                "every split is read from one directory (complete it, or remove the partial copy)"
            )
        if found:
            return found
    return {split: _locate(relative, data_home) for split, relative in relatives.items()}  # its error


# --------------------------------------------------------------------------------------------
# label ranking (scikit-lr CSV)
# --------------------------------------------------------------------------------------------
# A header count read beyond it is read as it (int() of 4,301 digits raised naming nothing, probe EK).
_COUNT_BOUND = 10**40


def _count(n: int) -> str:
    """A header's count as read (``_COUNT_BOUND`` and more: too many to say)."""
    return str(n) if n < _COUNT_BOUND else "more than 10**40"


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
        One of ``combpred.datasets.LABEL_RANKING_DATASETS``, or the name of any file ``label_ranking/<name>.csv``
        in the same format in a data directory.
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
        For a malformed file, or a name that is neither known nor has a file in a data directory
        (the message lists the known names and the paths searched).
    MemoryError
        When the values read pass the memory budget (``combpred.set_config(max_memory=)``), at 64
        bytes each (the reader's peak); the message names the file and line.
    """
    return _load_label_ranking(name, data_home, return_X_y, search=True)


def _load_label_ranking(
    name: str, data_home: str | os.PathLike | None, return_X_y: bool, search: bool
) -> Bunch | tuple[np.ndarray, np.ndarray]:
    """load_label_ranking; without ``search``, the copy the package ships, whatever the data
    directories hold (``python -m combpred demo`` promises bundled data: a user's own glass.csv of
    4 rows ended it in a traceback, probe DN)."""
    _check_name(name, "label-ranking")
    _flag(return_X_y, "return_X_y")  # a truthy "no" returned a tuple
    relative = f"label_ranking/{name}.csv"
    try:
        if not search:
            raise FileNotFoundError(relative)
        path = _locate(relative, data_home)
        data = read_file(path)
    except _BrokenCopyError:
        raise
    except FileNotFoundError:
        if name not in LABEL_RANKING_DATASETS:
            tried = [folder / relative for folder in data_home_candidates(data_home)]
            raise _unknown("label-ranking", name, LABEL_RANKING_DATASETS, tried) from None
        # The package ships every label-ranking file (gzipped, 400 KB in all); a data directory,
        # when given or found, wins so that a user's own copy is read.
        bundled = resources.files(__package__) / "data" / "label_ranking" / f"{name}.csv.gz"
        path = Path(str(bundled))
        data = read_file(path, gz=True)
    # ASCII, after an optional byte-order mark
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not an ASCII text file ({exc.reason}, byte {exc.start})") from None
    if not text.isascii():
        at = next(i for i, c in enumerate(text) if not c.isascii())
        raise ValueError(f"{path}: not an ASCII text file (character {text[at]!r} at offset {at})")
    budget = ValueBudget(str(path), _LABEL_RANKING_BYTES_PER_VALUE)
    lines = text_lines(text, budget)
    header = lines[0].strip() if lines else ""
    counts = header.split(",")
    if len(counts) != 3 or not all(c.strip().isascii() and c.strip().isdigit() for c in counts):
        # int() took "-2" (a negative slice of the rows) and "1_0"
        raise ValueError(
            f"{path}: line 1 must be 'n_samples,n_features,n_labels' (non-negative integers), got {header[:80]!r}"
        )
    n_samples, n_features, n_labels = (_capi.bounded_decimal(c.strip(), _COUNT_BOUND) for c in counts)
    width = n_features + n_labels
    # every value takes a character (numpy's reshape refused the header's shape in its own words)
    if n_samples * width > len(text) or width > 2**31:
        raise ValueError(
            f"{path}: the header promises {_count(n_samples)} rows of {_count(width)} values, more than the file's "
            f"{len(text)} characters can hold"
        )
    data, line_numbers = _label_ranking_rows(lines, path, n_features + n_labels, budget)
    if data.shape != (n_samples, n_features + n_labels):
        raise ValueError(
            f"{path}: the header promises {n_samples} rows of {n_features + n_labels} values, found shape {data.shape}"
        )
    from ..metrics import _check_rankings, _first_incomplete_ranking, _shown_ranks

    X = np.ascontiguousarray(data[:, :n_features])
    # A bad rank is reported at its line of the file: the rankings' own check counted rows from the
    # first data line and columns from the first rank ("row 2, column 0" was line 4, value 4).
    i = _first_incomplete_ranking(data[:, n_features:])
    if i is not None:
        ranks = [int(v) if v.is_integer() else v for v in data[i, n_features:].tolist()]
        raise ValueError(
            f"{path}: line {line_numbers[i]}: the ranks {_shown_ranks(ranks)} (its last {n_labels} values) are not a "
            f"permutation of 1..{n_labels}: each row must rank every label (position of label j, 1 = best, no ties)"
        )
    try:
        Y = _check_rankings(data[:, n_features:], f"{name} targets")
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if return_X_y:
        return X, Y
    return Bunch(
        X=X,
        Y=Y,
        name=name,
        filename=str(path),
        DESCR=f"{name} (label ranking, scikit-lr CSV): {n_samples} samples, {n_features} features, "
        f"{n_labels} labels; Y rows are ranks (1 = best). No canonical split: use repeated 10-fold CV. "
        + _provenance(path.parent, "label_ranking/PROVENANCE.md of the shared data sets."),
    )


def _provenance(folder: Path, otherwise: str) -> str:
    """The DESCR sentence that says where a data set comes from: the PROVENANCE.md of the folder
    it was read from, or ``otherwise`` where the folder has none (a download cache). "In the data
    directory" sent a user of the bundled copy, or of a download, to a file that was not there
    (probe 90)."""
    provenance = folder / "PROVENANCE.md"
    return f"Provenance: {provenance}." if provenance.is_file() else f"Provenance: {otherwise}"


# the label-ranking reader's peak per value: a list slot and a float object while read (32 bytes),
# then the float64 matrix (8), and the file's text and lines: 44.6 bytes measured with tracemalloc
# on rows of 500 zeros, 63 on rows of 8 (each row's own list); 19-character tokens take 79-80
_LABEL_RANKING_BYTES_PER_VALUE = 64


def _label_ranking_rows(lines: list[str], path: Path, width: int, budget: ValueBudget) -> tuple[np.ndarray, list[int]]:
    """The data rows of a label-ranking CSV (the lines after the header), each of ``width`` ARFF
    numbers, and each row's line number; a bad row raises ValueError naming the file and its line,
    and values past the memory budget (:class:`ValueBudget`) MemoryError naming them too."""
    rows = []
    line_numbers = []
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        budget.reserve(line.count(",") + 1, lineno)
        fields = line.split(",")
        if len(fields) != width:
            raise ValueError(f"{path}: line {lineno}: {len(fields)} values, the header promises {width}")
        row = [parse_number(f.strip()) for f in fields]
        if None in row:  # not "nan", "inf", "1_000" or non-ASCII digits, which float() takes
            bad = fields[row.index(None)].strip()
            raise ValueError(f"{path}: line {lineno}: {bad[:40]!r} is not a finite number")
        budget.add(width, lineno)
        rows.append(row)
        line_numbers.append(lineno)
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), width), line_numbers


# --------------------------------------------------------------------------------------------
# hierarchical (Clus HMC ARFF)
# --------------------------------------------------------------------------------------------


class TaxonomyIsDAGError(ValueError, AttributeError):
    """Raised when a tree representation (a ``parent`` array, single paths) of a DAG is asked for.

    A ``ValueError``; also an ``AttributeError``, so that ``hasattr(data, "parent")`` is False on a
    DAG's Bunch.
    """


def _dag_message(name: str, node_names: list[str], parents: list[np.ndarray], wanted: str) -> str:
    v = next(v for v, ps in enumerate(parents) if ps.size > 1)
    n_multi = sum(ps.size > 1 for ps in parents)
    listed = ", ".join(repr(node_names[p]) for p in parents[v][:4]) + (", ..." if parents[v].size > 4 else "")
    return (
        f"{name}: {wanted} needs a tree, but the taxonomy is a DAG: node {node_names[v]!r} has "
        f"{parents[v].size} parents ({listed})"
        + (", and it is the only node with several. " if n_multi == 1 else f", and {n_multi} nodes have several. ")
        + "spaces.HierarchyPaths and spaces.Subtrees take trees only. What works instead: targets='nodes' "
        "(Y_<split>: 0/1 node rows closed under every parent) with the Bunch's `parents` (one array of "
        "parent ids per node), e.g. a multi-label model over the node columns (spaces.Multilabel) whose "
        "predictions you close under `parents`; for one node per instance, spaces.DAGPaths(data.parents)."
    )


class _TaxonomyBunch(Bunch):
    """A Bunch whose ``parent`` attribute, on a DAG, explains why there is none."""

    def __getattr__(self, key: str) -> Any:
        if key == "parent" and "parent" not in self and self.get("is_tree") is False:
            raise TaxonomyIsDAGError(
                _dag_message(self.get("name", "this data set"), self["node_names"], self["parents"], "a parent array")
            )
        return super().__getattr__(key)


def _split_of(filename: str, name: str) -> str:
    """The split a Clus HMC file holds, from its name: ``x.train.arff``, ``X_Train.arff`` -> ``"train"``;
    the last part of what follows the set's name (``cellcycle_FUN.train.arff`` in a folder named
    ``cellcycle``: "train", where the whole "fun.train" made keys no attribute reaches, probe EX)."""
    stem = filename[: -len(".arff")]
    rest = stem[len(name) :] if stem.lower().startswith(name.lower()) and len(stem) > len(name) else stem
    suffix = re.split(r"[._-]", rest.strip("._-"))[-1]
    return suffix.lower() or stem.lower()


def _hierarchical_files(name: str, data_home: str | os.PathLike | None) -> tuple[str, dict[str, str]] | None:
    """The folder and split files of a data set the loader does not know, from the first data
    directory holding ``hierarchical_funcat_go/<name>/*.arff``; None if none does."""
    folder = f"hierarchical_funcat_go/{name}"
    for base in data_home_candidates(data_home):
        arff = sorted((base / folder).glob("*.arff")) if (base / folder).is_dir() else []
        for p in arff:
            _refuse_not_a_file(p)
        found = [p.name for p in arff]
        if not found:
            continue
        files: dict[str, str] = {}
        for filename in found:
            split = _split_of(filename, name)
            if split in files:
                raise ValueError(f"{base / folder}: {files[split]!r} and {filename!r} both look like split {split!r}")
            files[split] = filename
        order = {"train": 0, "valid": 1, "test": 2}
        ordered = sorted(files, key=lambda k: (order.get(k, 3), k))
        return folder, {split: str(base / folder / files[split]) for split in ordered}
    return None


def _first_difference(names: list[str], first: list[str]) -> str:
    """Where two lists of declared names part, for an error message."""
    for i, (a, b) in enumerate(zip(names, first, strict=False)):
        if a != b:
            return f"{a!r} where the other has {b!r} (attribute {i + 1})"
    return f"{len(names)} attributes against {len(first)}"


def load_hierarchical(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    download_if_missing: bool = True,
    cache_home: str | os.PathLike | None = None,
    targets: str = "auto",
) -> Bunch:
    """Load a hierarchical-classification benchmark in Clus HMC format, with its taxonomy.

    The taxonomy's node 0 is the **root**: a virtual root (``"root"``) above the declared
    top-level nodes of a tree, or the ``root`` of a GO edge list. The other nodes follow parents
    first: for a tree declared by paths, in depth-first preorder of their codes; for a DAG, in a
    topological order (ties broken by name). So every parent id is smaller than its child's.

    The taxonomy is returned as parent **sets** (``parents``), which hold for trees and DAGs alike,
    and, for a tree (``is_tree``), as a parent array (``parent``) for
    :class:`combpred.spaces.HierarchyPaths` (single paths) or :class:`combpred.spaces.Subtrees`
    (multi-path). A DAG has no parent array: reading ``data.parent``, or asking for
    ``targets="paths"``, raises a ``ValueError`` that names a node with several parents.

    ``"imclef07a"`` — ImageCLEF 2007 medical images (IRMA code, axis A), 80 edge-histogram
    features, a tree of 96 nodes (8/25/63 per level, 63 leaves; 97 with the virtual root). Every
    image has one full-depth path: ``y_train``, ``y_test`` are the node ids of the leaves.
    Split: Train 10000 (the literature's 7000 train + 3000 validation, stored together) / Test 1006.

    ``"cellcycle_FUN"`` — yeast genes (Clare & King features), 77 numeric features, the FunCat
    tree of 499 nodes (500 with the virtual root), depth 6. Genes have several paths, possibly
    stopping above a leaf: ``Y_*`` are 0/1 node rows closed under parents (root column 1).
    Split: train 1628 / valid 848 / test 1281.

    ``"gasch2_GO"`` — yeast genes (Gasch et al. stress-response microarrays), 52 numeric features,
    a Gene Ontology **DAG** of 4131 terms plus its root (5837 ``parent/child`` edges; 1480 terms
    have several parents). ``Y_*`` are 0/1 node rows closed under every parent.
    Split: train 1636 / valid 849 / test 1288.

    Any other name is read from ``hierarchical_funcat_go/<name>/`` in a data directory: every
    ``.arff`` file there is a split, named from the file name (``<name>.train.arff`` or
    ``<name>_Train.arff`` -> ``"train"``), ordered train, valid, test, then the others. Files are
    read as UTF-8 (a leading byte-order mark ignored), or as Latin-1 when they are not UTF-8.

    **Missing values.** cellcycle_FUN and gasch2_GO have missing features (``?`` in the files);
    they are returned as NaN, not imputed. Impute inside the model so that validation and test rows
    are filled from training statistics only, e.g.
    ``make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(), model)``. Nominal
    features are one-hot encoded (see :func:`read_hmc_arff`).

    Parameters
    ----------
    name : str
        ``"imclef07a"``, ``"cellcycle_FUN"``, ``"gasch2_GO"``, or a folder of
        ``hierarchical_funcat_go/`` in a data directory.
    data_home : str or path-like, default=None
        Data directory to try first (see the module docstring for the search order).
    download_if_missing : bool, default=True
        For the known names: when no data directory holds a file, download it from its original
        public source (the C-HMCNN repository at a pinned commit; ``COMBPRED_DATA_URL`` names a
        mirror), check its SHA-256 and cache it (:func:`fetch_file`). False reads what is local
        alone, the data directories and the files an earlier download cached (checked by their
        SHA-256), and raises ``FileNotFoundError`` where neither holds them.
    cache_home : str or path-like, default=None
        Where downloads are cached (:func:`get_data_home`: ``$COMBPRED_DATA_HOME`` or
        ``~/combpred_data``).
    targets : {"auto", "nodes", "paths"}, default="auto"
        ``"nodes"``: ``Y_<split>``, int 0/1 rows of width n_nodes, each row's labels closed under
        every parent (root column 1). ``"paths"``: ``y_<split>``, one node id per row, the end of
        the row's single path from the root (a tree only, and rows that are one chain).
        ``"auto"``: ``"paths"`` for imclef07a, ``"nodes"`` otherwise.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_<split>`` float (NaN = missing) and ``y_<split>`` or ``Y_<split>`` (see ``targets``)
        for each split; ``parents``, a list of int64 arrays (the parent ids of each node, empty at
        the root); ``is_tree`` bool; ``parent`` int64 (n_nodes,), −1 at the root (trees only);
        ``node_names`` (``"root"`` first, then the node codes or ids); ``is_leaf`` bool
        (n_nodes,); ``depth`` int (n_nodes,), the longest path from the root, 0 at the root;
        ``feature_names``; ``splits``; ``name``; ``targets``; ``DESCR``.

    Raises
    ------
    ValueError
        For a malformed file (also if the splits declare different taxonomies); a name that is
        neither known nor has files in a data directory (the message lists the known names and
        the paths searched); ``targets="paths"`` on a DAG (:class:`TaxonomyIsDAGError`, naming a
        node with several parents) or on rows that are not single paths.
    FileNotFoundError
        For a known name, when no data directory holds a file and ``download_if_missing`` is
        False; the message lists where it looked. Also when the first directory holding any of
        its split files lacks others: every split is read from one directory.
    OSError
        When a download fails.
    """
    _check_name(name, "hierarchical")
    _flag(download_if_missing, "download_if_missing")
    if targets not in ("auto", "nodes", "paths"):
        raise ValueError(f"targets must be 'auto', 'nodes' or 'paths', got {targets!r}")
    paths: dict[str, Path] = {}
    if name in _HIERARCHICAL_FILES:
        folder, files = _HIERARCHICAL_FILES[name]
        relatives = {split: f"{folder}/{filename}" for split, filename in files.items()}
        try:
            paths = _locate_together(relatives, data_home)
        except _BrokenCopyError:
            raise
        except FileNotFoundError as exc:
            if download_if_missing:
                paths = {split: fetch_file(relative, cache_home) for split, relative in relatives.items()}
            else:  # what an earlier download cached is local: offline jobs read it (probe 90)
                cached = {split: cached_file(relative, cache_home) for split, relative in relatives.items()}
                if any(path is None for path in cached.values()):
                    raise FileNotFoundError(
                        f"{exc}\nNor does the download cache {get_data_home(cache_home)} hold it "
                        "(download_if_missing=False)"
                    ) from None
                paths = cached
    else:
        found = _hierarchical_files(name, data_home)
        if found is None:
            tried = [folder / f"hierarchical_funcat_go/{name}/*.arff" for folder in data_home_candidates(data_home)]
            raise _unknown("hierarchical", name, HIERARCHICAL_DATASETS, tried)
        paths = {split: Path(path) for split, path in found[1].items()}
    parsed: dict[str, Any] = {}
    not_utf8: dict[str, str] = {}  # split -> why it was read as Latin-1
    for split, path in paths.items():
        text, why = _hmc_text(read_file(path), str(path))
        if why:
            not_utf8[split] = why
        parsed[split] = read_hmc_arff(text, source=str(path))
    first_split, first = next(iter(parsed.items()))
    for split, (feature_names, _, nodes, _) in parsed.items():
        if feature_names != first[0]:
            raise ValueError(
                f"{name}: split {split!r} declares other features than split {first_split!r}: "
                f"{_first_difference(feature_names, first[0])}"
            )
        # the nodes are named in each row, and the taxonomy is built from the set of them: the
        # order of a declaration does not matter (two splits listing it in two orders were refused)
        if set(nodes) != set(first[2]):
            only = sorted(set(nodes) ^ set(first[2]))[:3]
            # one stray byte makes a whole file Latin-1, and its non-ASCII names then differ (probe EG)
            latin1 = "".join(
                f"; split {s!r} was read as Latin-1, being {why}, which changes its non-ASCII names"
                for s, why in not_utf8.items()
                if s in (split, first_split)
            )
            raise ValueError(
                f"{name}: split {split!r} declares another taxonomy than split {first_split!r}: "
                f"{', '.join(map(repr, only))} in one of them only{latin1}"
            )
    form = hierarchy_form(first[2])
    _capi.check_bytes(
        len(first[2]) * TAXONOMY_BYTES_PER_ENTRY,
        f"{paths[first_split]}: the taxonomy of its {len(first[2])} declared {'edges' if form == 'edges' else 'nodes'}",
    )
    try:
        if form == "paths":
            node_names, parent = _taxonomy(first[2])
            parents = [parent[v : v + 1] if v else parent[:0] for v in range(parent.size)]
        else:
            node_names, parents = _dag_taxonomy(first[2])
    except ValueError as exc:
        raise ValueError(f"{paths[next(iter(parsed))]}: {exc}") from None
    n_nodes = len(parents)
    is_tree = all(ps.size <= 1 for ps in parents)
    index = {n: i for i, n in enumerate(node_names)}
    is_leaf = np.ones(n_nodes, dtype=bool)
    depth = np.zeros(n_nodes, dtype=np.int64)
    for v in range(1, n_nodes):  # parents first: their depths are known
        is_leaf[parents[v]] = False
        depth[v] = depth[parents[v]].max() + 1
    if targets == "auto":
        targets = "paths" if name == "imclef07a" else "nodes"
    if targets == "paths" and not is_tree:
        raise TaxonomyIsDAGError(_dag_message(name, node_names, parents, "targets='paths' (single paths)"))
    out = _TaxonomyBunch(
        parents=parents,
        is_tree=is_tree,
        node_names=node_names,
        is_leaf=is_leaf,
        depth=depth,
        feature_names=first[0],
        splits=list(paths),
        name=name,
        targets=targets,
    )
    if is_tree:
        parent = np.full(n_nodes, -1, dtype=np.int64)
        for v in range(1, n_nodes):
            parent[v] = parents[v][0]
        out["parent"] = parent
    sizes = []
    for split, (_, X, _, labels) in parsed.items():
        out[f"X_{split}"] = X
        if targets == "paths":
            out[f"y_{split}"] = _single_paths(labels, index, out["parent"], split)
        else:
            out[f"Y_{split}"] = _closure_rows_dag(labels, index, parents)
        sizes.append(f"{split} {X.shape[0]}")
    n_multi = sum(ps.size > 1 for ps in parents)
    shape = (
        f"tree of {n_nodes - 1} nodes plus a root"
        if is_tree
        else f"DAG of {n_nodes - 1} nodes plus a root ({n_multi} with several parents)"
    )
    kind = "single path (y: node ids)" if targets == "paths" else "multi-path (Y: 0/1 node rows closed under parents)"
    missing = any(np.isnan(X).any() for _, X, _, _ in parsed.values())
    out["DESCR"] = (
        f"{name} (Clus HMC ARFF): {len(first[0])} features, {shape} "
        f"(depth {int(depth.max())}, {int(is_leaf.sum())} leaves), {kind}; {' / '.join(sizes)}. "
        + ("Missing features are NaN (not imputed). " if missing else "")
        + _provenance(
            Path(next(iter(paths.values()))).parent.parent,
            "downloaded from the C-HMCNN repository at a pinned commit (combpred.datasets._fetch.REMOTE_FILES "
            "lists the files and their SHA-256).",
        )
    )
    return out


# --------------------------------------------------------------------------------------------
# multi-label (MULAN ARFF + XML)
# --------------------------------------------------------------------------------------------
def _mulan_file(name: str, split: str) -> str:
    """The file name of a MULAN set's part: its label file (split "xml"), a split's ARFF file
    (``<name>-train.arff``) or its single ARFF file (split "")."""
    if split == "xml":
        return f"{name}.xml"
    return f"{name}-{split}.arff" if split else f"{name}.arff"


def _multilabel_folder(name: str, data_home: str | os.PathLike | None) -> tuple[Path, list[Path]]:
    """The first folder holding ``<name>.xml`` (and the list of places tried)."""
    # a known name's own folder first, then both documented layouts: a data_home laid out the other
    # way was passed over for the next directory's copy (probe EX)
    relatives = list(
        dict.fromkeys([_MULTILABEL_FOLDERS.get(name, f"multilabel_sparse/{name}"), f"multilabel_sparse/{name}", name])
    )
    tried: list[Path] = []
    for base in data_home_candidates(data_home):
        for relative in relatives:
            folder = base / relative
            label_file = folder / _mulan_file(name, "xml")
            tried.append(label_file)
            _refuse_not_a_file(label_file)
            if label_file.is_file():
                return folder, tried
            splits = [_mulan_file(name, split) for split in ("train", "test", "")]
            for split in splits:
                _refuse_not_a_file(folder / split)
            if found := [split for split in splits if (folder / split).is_file()]:
                # the label file alone decided, and the next directory's copy was read (probe 82)
                raise _BrokenCopyError(
                    f"{folder} holds {', '.join(map(repr, found))} of {name!r} but not {label_file.name}, its label file: every "
                    "file is read from one directory (complete it, or remove the partial copy)"
                )
    if name in _MULTILABEL_FOLDERS:
        looked = "\n".join(f"  {p}" for p in tried) or "  (no candidate directory)"
        raise FileNotFoundError(
            f"combpred could not find the label file of {name!r}. Looked at:\n{looked}\n"
            "The multi-label text sets do not ship with the package. Set the environment variable COMBPRED_DATA "
            "(or pass data_home=) to the directory holding multilabel_sparse/; a source checkout also looks at "
            "../shared/datasets next to the repository root."
        )
    raise _unknown("multi-label", name, MULTILABEL_DATASETS, tried)


def _hmc_text(data: bytes, source: str) -> tuple[str, str]:
    """A hierarchical data file's text: the readers' UTF-8 (document_text: a byte-order mark
    dropped), as every shared file is, or Latin-1 for a file that is not UTF-8 (any bytes are
    Latin-1 text), with why (its first byte that is not UTF-8; "" for UTF-8). Read as Latin-1 first,
    UTF-8 names came back garbled and a byte-order mark made the first line unreadable."""
    try:
        return document_text(data, source), ""
    except ValueError as exc:  # "<source>: not UTF-8 text (byte N: ...)"
        return data.decode("latin-1"), str(exc).removeprefix(f"{source}: ")


def load_multilabel(
    name: str,
    *,
    subset: str = "train",
    data_home: str | os.PathLike | None = None,
    sparse: bool = True,
) -> Bunch:
    """Load a MULAN multi-label data set (sparse or dense ARFF plus its XML label file).

    The features come back as a scipy.sparse CSR matrix, parsed straight from the sparse ARFF
    rows (``{index value, ...}``) without ever building a dense matrix; ``scipy.io.arff`` cannot
    read these files. The labels are the attributes the XML file names (by name, wherever they
    stand in the ARFF), kept in the ARFF's attribute order. Feature encoding is that of
    :func:`read_mulan_arff`: numeric and 0/1 attributes one column each, other nominal attributes
    one-hot (``"attr=value"``), ``?`` as NaN.

    ==============  =============  ========  ======  ===========
    name            train / test   features  labels  cardinality
    ==============  =============  ========  ======  ===========
    ``"medical"``   333 / 645      1449      45      1.25
    ``"enron"``     1123 / 579     1001      53      3.38
    ``"bibtex"``    4880 / 2515    1836      159     2.40
    ``"scene"``     1211 / 1196    294       6       1.07 (dense)
    ``"yeast"``     1500 / 917     103       14      4.24 (dense)
    ==============  =============  ========  ======  ===========

    medical's train file is the smaller one, as MULAN distributes it. Any other name is read from
    ``multilabel_sparse/<name>/`` or ``<name>/`` in a data directory, holding ``<name>.xml`` and
    ``<name>-train.arff``, ``<name>-test.arff`` (or a single ``<name>.arff``, for
    ``subset="all"``).

    Parameters
    ----------
    name : str
        One of ``combpred.datasets.MULTILABEL_DATASETS`` or a folder laid out as above.
    subset : {"train", "test", "all"}, default="train"
        Which split; ``"all"`` stacks train over test.
    data_home : str or path-like, default=None
        Data directory to try first (see the module docstring for the search order).
    sparse : bool, default=True
        True: X is CSR float64 and Y CSR int64. False: X a dense C-contiguous float64 array and
        Y a dense int64 array (densified after parsing; bibtex's X is then 72 MB).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features), ``Y`` (n_samples, n_labels) 0/1, ``feature_names``,
        ``target_names`` (the label attributes, ARFF order), ``name``, ``subset``, ``filenames``
        and ``DESCR``.

    Raises
    ------
    ValueError
        For a malformed file (the message names the file and line), a bad ``subset``, or a name
        that is neither known nor has files in a data directory (the message lists the known
        names and the paths searched).
    FileNotFoundError
        For a known name whose files no data directory holds; the message lists where it looked.
    """
    _check_name(name, "multi-label")
    _flag(sparse, "sparse")
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all', got {subset!r}")
    folder, _ = _multilabel_folder(name, data_home)
    xml = folder / _mulan_file(name, "xml")
    label_names = read_mulan_xml(read_file(xml), source=str(xml))
    wanted = ["train", "test"] if subset == "all" else [subset]
    files = [folder / _mulan_file(name, s) for s in wanted]
    if subset == "all" and not all(f.is_file() for f in files) and (folder / _mulan_file(name, "")).is_file():
        files = [folder / _mulan_file(name, "")]
    for f in files:
        _refuse_not_a_file(f)
        if not f.is_file():
            raise FileNotFoundError(f"{name}: {f} is missing (the label file {xml} is there)")
    parts = [read_mulan_arff(read_file(f), label_names, source=str(f)) for f in files]
    for f, part in zip(files[1:], parts[1:], strict=True):
        if part.feature_names != parts[0].feature_names or part.target_names != parts[0].target_names:
            raise ValueError(f"{f}: declares different attributes from {files[0]}")
    X = _sparse.vstack([p.X for p in parts], format="csr") if len(parts) > 1 else parts[0].X
    Y = _sparse.vstack([p.Y for p in parts], format="csr") if len(parts) > 1 else parts[0].Y
    if not sparse:
        # The file's size bounds the non-zeros, not the dense arrays: rows of {} over many
        # attributes are a few bytes each.
        _capi.check_output(X.shape, f"{name}: the dense X (sparse=False)")
        _capi.check_output(Y.shape, f"{name}: the dense Y (sparse=False)")
        X = np.ascontiguousarray(X.toarray())
        Y = Y.toarray()
    n, p = X.shape
    k = Y.shape[1]
    cardinality = float(Y.sum()) / n if n else 0.0
    return Bunch(
        X=X,
        Y=Y,
        feature_names=parts[0].feature_names,
        target_names=parts[0].target_names,
        name=name,
        subset=subset,
        filenames=[str(f) for f in files],
        DESCR=f"{name} (MULAN multi-label, {subset}): {n} samples, {p} features, {k} labels, "
        f"label cardinality {cardinality:.3f}. Provenance: PROVENANCE.md next to the files.",
    )
