"""Metrics for structured outputs that scikit-learn lacks.

Only what scikit-learn does not already offer lives here. Use scikit-learn for the rest:
``sklearn.metrics.zero_one_loss`` (whole-structure errors; it compares 0/1 node rows row by row),
``sklearn.metrics.hamming_loss`` (0/1 label or node rows), ``label_ranking_loss`` and friends
(scores against label sets).

Encodings follow :mod:`combpred.spaces`:

* a **ranking** of n labels is a row of ranks, ``y[j]`` = position of label j, 1 = best
  (scikit-lr's convention); every row must be a permutation of 1..n (complete rankings, no ties);
* a **hierarchy path** is a node id of a tree given by its parent array (−1 at a root), and stands
  for the node with all its ancestors; a **multi-path label** is a 0/1 row over the nodes.

Scorers
-------
The scorers here are plain callables ``scorer(estimator, X, y) -> float`` (greater is better) that
ask the estimator for ``predict`` only, usable as ``scoring=`` in ``GridSearchCV`` and
``cross_val_score``; ``sklearn.metrics.make_scorer`` of the same metric gives the same scores. Under scikit-learn's metadata routing
they take the test folds' ``sample_weight`` once asked to, as scikit-learn's own scorers do:
``kendall_tau_scorer.set_score_request(sample_weight=True)`` (which returns a requesting copy).

* :data:`kendall_tau_scorer`, :data:`spearman_rho_scorer` — mean rank correlation;
* :func:`make_hierarchical_loss_scorer` — the negated hierarchical loss;
* :func:`make_structured_scorer` — any metric of this module (or yours) as a scorer.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from scipy import sparse as _sparse

from . import _capi
from ._docstrings import cleaned
from ._weights import check_sample_weight, weighted_mean
from .spaces import _densify_targets, _flag

__all__ = [
    "hierarchical_f1",
    "hierarchical_loss",
    "hierarchical_node_weights",
    "kendall_tau",
    "kendall_tau_scorer",
    "make_hierarchical_loss_scorer",
    "make_structured_scorer",
    "policy_cosine",
    "spearman_rho",
    "spearman_rho_scorer",
    "z_approximation_factor",
]


# --------------------------------------------------------------------------------------------
# validation helpers (also used by combpred.baselines)
# --------------------------------------------------------------------------------------------
def _as_integer_array(a: Any, name: str) -> np.ndarray:
    """Return ``a`` as an int64 array, checked as the core's integer arguments are (floats finite
    and integral, bools 0/1). A scipy.sparse matrix (what a model fitted on sparse targets
    predicts) is taken densely, within the memory budget."""
    return _capi.int64_array(_densify_targets(a, name), name)


_NOTHING = object()


def _real_array(a: Any, name: str) -> np.ndarray:
    """``a`` as a float64 array; strings and complex numbers (whose imaginary part a cast drops)
    are a ValueError naming ``name``. A scipy.sparse matrix is taken densely (it was an object
    array, "got dtype object")."""
    arr = _densify_targets(a, name)
    if np.iscomplexobj(arr) or (arr.dtype == object and any(isinstance(v, complex) for v in arr.flat)):
        raise ValueError(f"{name} must hold real numbers, got complex values")
    # A cast reads "0.9" as a number, and a date as its count of days: refused before it, as
    # sample_weight refuses them.
    if arr.dtype.kind in "USVmM" or (arr.dtype == object and any(isinstance(v, (str, bytes)) for v in arr.flat)):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.dtype == object:  # the cast made None (and pandas' NA) a NaN: named instead
        odd = next((v for v in arr.flat if not isinstance(v, numbers.Number | np.generic)), _NOTHING)
        if odd is not _NOTHING:
            raise ValueError(f"{name} must hold real numbers, got {odd!r}")
    if arr.dtype != np.float64:  # a copy sized by the caller's array (a broadcast view's too)
        _capi.check_output(arr.shape, name, "its float64 copy")
    try:
        return arr.astype(np.float64, copy=False)
    except (TypeError, ValueError):  # a string met "do not broadcast together" further on
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}") from None
    except OverflowError:  # a Python int beyond float64 (2**1100)
        raise ValueError(f"{name} holds a number too large for a float64") from None


def _node_costs(node_weights: Any, n_nodes: int) -> np.ndarray:
    """The costs c_i of the hierarchical loss, one per node: ``node_weights`` checked (finite,
    non-negative reals), or 1 per node for None. Shared by :func:`hierarchical_loss` and the Bayes
    rule of that loss (:func:`combpred.decision.bayes_decode`)."""
    if node_weights is None:
        return np.ones(n_nodes)
    costs = _real_array(node_weights, "node_weights")  # a complex array's cast dropped its imaginary part
    if costs.shape != (n_nodes,):
        raise ValueError(f"node_weights must be {n_nodes} costs, one per node, got shape {costs.shape}")
    if not np.all(np.isfinite(costs)) or np.any(costs < 0):
        bad = int(np.argmax(~np.isfinite(costs) | (costs < 0)))
        raise ValueError(f"node_weights must be finite and non-negative, got {float(costs[bad])!r} at node {bad}")
    return costs


def _check_rankings(Y: Any, name: str = "Y") -> np.ndarray:
    """Validate rank rows and return them as a 2-D int64 array.

    A 1-D array is one ranking. Every row must be a permutation of 1..n_labels (n_labels ≥ 2).
    """
    return _check_permutations(_rank_rows(Y, name), name)


def _rank_rows(Y: Any, name: str) -> np.ndarray:
    """``Y`` as 2-D int64 rows of at least two ranks (a 1-D array is one ranking), not yet checked
    to be permutations."""
    R = _as_integer_array(Y, name)
    if R.ndim == 1:
        R = R.reshape(1, -1)
    if R.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_labels) rank rows, got {R.ndim}-D")
    if R.shape[0] == 0:
        raise ValueError(f"{name} is empty: it has no rankings")
    if R.shape[1] < 2:
        raise ValueError(f"{name} must rank at least 2 labels, got {R.shape[1]}")
    return R


def _first_incomplete_ranking(R: np.ndarray) -> int | None:
    """The index of the first row of ``R`` (2-D, any real dtype) that is not a permutation of
    1..n_labels, or None."""
    ok = np.all(np.sort(R, axis=1) == np.arange(1, R.shape[1] + 1), axis=1)
    return None if ok.all() else int(np.flatnonzero(~ok)[0])


def _shown_ranks(row: list[Any]) -> str:
    """A rank row for a message, its first ten ranks beyond twelve: a row of 10⁶ ranks made a
    message of 7.9 MB."""
    return str(row) if len(row) <= 12 else f"[{', '.join(map(str, row[:10]))}, … ({len(row)} ranks)]"


def _check_permutations(R: np.ndarray, name: str) -> np.ndarray:
    i = _first_incomplete_ranking(R)
    if i is not None:
        raise ValueError(
            f"{name} row {i} is {_shown_ranks(R[i].tolist())}, not a permutation of 1..{R.shape[1]}: rows must be "
            "complete rankings (rank vectors, y[j] = position of label j, 1 = best, no ties)"
        )
    return R


def _check_pair(Y_true: Any, Y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    T, P = _rank_rows(Y_true, "Y_true"), _rank_rows(Y_pred, "Y_pred")
    if T.shape != P.shape:  # first: a ranking of 3 labels against one of 4 read "not a permutation of 1..3"
        raise ValueError(f"Y_true and Y_pred have different shapes: {T.shape} and {P.shape}")
    return _check_permutations(T, "Y_true"), _check_permutations(P, "Y_pred")


def _reduce(values: np.ndarray, sample_weight: Any, average: bool) -> float | np.ndarray:
    _flag(average, "average")
    w = check_sample_weight(sample_weight, values.shape[0])
    if not average:
        return values
    return weighted_mean(values, w)


# --------------------------------------------------------------------------------------------
# rank correlations
# --------------------------------------------------------------------------------------------
# The docstring sections of the rank correlations' shared signature, written once so that their
# documentation cannot drift apart; {symbol} and {name} name the statistic.
_RANK_CORRELATION_SECTIONS = """Parameters
----------
Y_true, Y_pred : array-like of shape (n_samples, n_labels) or (n_labels,)
    Rank rows: ``y[j]`` is the position of label j, 1 = best. Every row must be a permutation
    of 1..n_labels, n_labels ≥ 2; ties are refused. A 1-D array is a single ranking.
sample_weight : array-like of shape (n_samples,), default=None
    Weights of the rows in the mean.
average : bool, default=True
    Return the (weighted) mean over rows; False returns {symbol} of every row.

Returns
-------
{name} : float or ndarray of shape (n_samples,)

Raises
------
ValueError
    If a row is not a permutation of 1..n_labels or the shapes differ."""

_F = TypeVar("_F", bound=Callable[..., Any])


def _rank_correlation_doc(symbol: str, name: str) -> Callable[[_F], _F]:
    """Fill the ``{rank_correlation_sections}`` line of a rank correlation's docstring."""

    def fill(fn: _F) -> _F:
        if fn.__doc__ is not None:  # None under python -OO
            sections = _RANK_CORRELATION_SECTIONS.format(symbol=symbol, name=name)
            fn.__doc__ = cleaned(fn.__doc__).replace("{rank_correlation_sections}", sections)
        return fn

    return fill


def _inversions(S: np.ndarray) -> np.ndarray:
    """Number of pairs i < j with S[i] > S[j] in each row of S, a permutation of 0..n−1 per row.

    Bottom-up merge sort, vectorised over rows and blocks: at each level the blocks are sorted, and
    each element of a right block counts the elements of its left block above it; a per-block offset
    makes all left blocks one sorted array for a single ``searchsorted``.
    """
    rows, n = S.shape
    size = 1 << max(0, (n - 1).bit_length())
    A = np.empty((rows, size), dtype=np.int64)
    A[:, :n] = S
    A[:, n:] = np.arange(n, size)  # larger than every value and increasing: no inversions
    total = np.zeros(rows, dtype=np.int64)
    b = 1
    while b < size:
        blocks = rows * (size // (2 * b))
        pairs = A.reshape(blocks, 2, b)
        offset = (np.arange(blocks, dtype=np.int64) * size)[:, None]
        left = (pairs[:, 0, :] + offset).ravel()
        pos = np.searchsorted(left, (pairs[:, 1, :] + offset).ravel(), side="right")
        above = b - (pos.reshape(blocks, b) - np.arange(blocks, dtype=np.int64)[:, None] * b)
        total += above.reshape(rows, -1).sum(axis=1)
        A = np.sort(A.reshape(blocks, 2 * b), axis=1).reshape(rows, size)
        b *= 2
    return total


@_rank_correlation_doc("τ", "tau")
def kendall_tau(Y_true: Any, Y_pred: Any, *, sample_weight: Any = None, average: bool = True) -> float | np.ndarray:
    """Kendall's τ between true and predicted rankings, row by row.

    τ = (concordant − discordant) / (n(n − 1)/2) over the n(n − 1)/2 label pairs of a ranking of n
    labels: 1 for identical rankings, −1 for reversed ones, and 1 − 4/(n(n − 1)) after swapping one
    adjacent pair. Rankings are complete (no ties), so τ-a and τ-b coincide and equal
    ``scipy.stats.kendalltau`` on each row.

    {rank_correlation_sections}

    Examples
    --------
    >>> kendall_tau([[1, 2, 3, 4]], [[2, 1, 3, 4]])
    0.6666666666666666
    """
    T, P = _check_pair(Y_true, Y_pred)
    n = T.shape[1]
    # Discordant pairs are the inversions of the predicted ranks listed in the true order:
    # τ = (pairs − 2·inversions) / pairs, counted in O(n log² n) per row and O(n) memory.
    S = np.take_along_axis(P, np.argsort(T, axis=1), axis=1) - 1
    pairs = n * (n - 1) // 2
    values = np.empty(T.shape[0])
    chunk = max(1, 4_000_000 // n)  # bounds the (rows × labels) temporaries
    for s in range(0, T.shape[0], chunk):
        values[s : s + chunk] = (pairs - 2 * _inversions(S[s : s + chunk])) / pairs
    return _reduce(values, sample_weight, average)


@_rank_correlation_doc("ρ", "rho")
def spearman_rho(Y_true: Any, Y_pred: Any, *, sample_weight: Any = None, average: bool = True) -> float | np.ndarray:
    """Spearman's ρ between true and predicted rankings, row by row.

    ρ = 1 − 6 Σ_j (y_j − ŷ_j)² / (n(n² − 1)) for rankings of n labels without ties: the Pearson
    correlation of the rank vectors, equal to ``scipy.stats.spearmanr`` on each row.

    {rank_correlation_sections}

    Examples
    --------
    >>> spearman_rho([1, 2, 3], [3, 2, 1])
    -1.0
    """
    T, P = _check_pair(Y_true, Y_pred)
    n = T.shape[1]
    diff = (T - P).astype(np.float64)  # Σ (y_j − ŷ_j)² passes 2⁶³ from about 3·10⁶ labels
    d2 = np.einsum("ij,ij->i", diff, diff)
    # clipped: rounding took a reversed ranking of 10⁷ labels to −1.0000000000000262 (probe DN)
    values = np.clip(1.0 - 6.0 * d2 / (n * (n * n - 1.0)), -1.0, 1.0)
    return _reduce(values, sample_weight, average)


# --------------------------------------------------------------------------------------------
# hierarchies
# --------------------------------------------------------------------------------------------
def _check_parent(parent: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    """Validate a parent array (−1 at roots; forests allowed) and return it with its depth levels.

    ``levels[k]`` holds the nodes at depth k (roots at depth 0), so parents are handled before
    their children when the levels are visited in order.
    """
    # a DAG's parent sets failed in NumPy's "inhomogeneous shape" (probe DT)
    _capi.refuse_parent_sets(parent, "describe a DAG: the hierarchical loss and F1 are defined on trees and forests")
    if isinstance(parent, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in parent):
        raise ValueError("parent must hold node ids, not booleans (True became node 1)")  # as spaces.Subtrees says
    # an object array of integers is read as its integers, as structures are (probe 82)
    par = _capi.numeric_objects(np.asarray(parent))
    if par.ndim != 1 or par.size == 0 or par.dtype.kind not in "iu":
        raise ValueError("parent must be a non-empty 1-D integer array, with -1 at the root")
    par = _capi.int64_array(par, "parent")
    n = par.size
    bad = (par < -1) | (par >= n)
    if np.any(bad):
        v = int(np.flatnonzero(bad)[0])
        raise ValueError(f"parent[{v}] = {int(par[v])} is out of range: want -1 (a root) or a node in [0, {n})")
    if np.any(par == np.arange(n)):
        v = int(np.flatnonzero(par == np.arange(n))[0])
        raise ValueError(f"parent array has a cycle: node {v} is its own parent")
    if not np.any(par == -1):
        raise ValueError("parent array has no root (no node has parent -1), so it has a cycle")
    # Depths by pointer jumping: after round k, jump[v] is v's ancestor 2^k levels up (−1 past a
    # root) and depth[v] the distance covered, so ⌈log₂ n⌉ + 1 rounds reach every root; a node
    # still jumping then is on a cycle. (Following the levels down from the roots took one pass
    # over all nodes per level: 20 s on a chain of 100,000 nodes.)
    jump, depth = par.copy(), (par >= 0).astype(np.int64)
    for _ in range(n.bit_length() + 1):
        up = jump >= 0
        if not up.any():
            break
        depth[up] += depth[jump[up]]
        jump[up] = jump[jump[up]]
    if np.any(jump >= 0):
        v = int(np.flatnonzero(jump >= 0)[0])
        raise ValueError(f"parent array has a cycle: node {v} never reaches a root")
    order = np.argsort(depth, kind="stable")
    levels = np.split(order, np.cumsum(np.bincount(depth))[:-1])
    return par, levels


def _node_rows(y: Any, par: np.ndarray, name: str) -> np.ndarray:
    """Return 0/1 node rows (bool) from node ids (1-D: the node and its ancestors) or from rows."""
    n_nodes = par.size
    arr = _as_integer_array(y, name)
    if arr.ndim == 1:
        if arr.size and (arr.min() < 0 or arr.max() >= n_nodes):
            i = int(np.flatnonzero((arr < 0) | (arr >= n_nodes))[0])
            raise ValueError(f"{name}[{i}] = {int(arr[i])} is not a node id in [0, {n_nodes})")
        rows = np.zeros((arr.size, n_nodes), dtype=bool)
        idx = np.arange(arr.size)
        cur = arr.copy()
        while idx.size:
            rows[idx, cur] = True
            cur = par[cur]
            keep = cur >= 0
            idx, cur = idx[keep], cur[keep]
        return rows
    if arr.ndim != 2 or arr.shape[1] != n_nodes:
        raise ValueError(
            f"{name} must be node ids (1-D) or 0/1 node rows of shape (n_samples, {n_nodes}), got shape {arr.shape}"
        )
    if np.any((arr != 0) & (arr != 1)):
        raise ValueError(f"{name} node rows must hold only 0 and 1")
    return arr.astype(bool)


def _only_zeros_and_ones(y: Any) -> bool:
    """Whether the (dense) array-like y holds only the values 0 and 1."""
    a = _capi.numeric_objects(_capi.as_array(y, "y"))
    return a.dtype.kind in "biuf" and bool(np.all((a == 0) | (a == 1)))


def _node_row_pair(
    y_true: Any, y_pred: Any, parent: Any
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray]:
    """The checked parent array, its depth levels, and the true and predicted node rows (bool) of
    a hierarchical metric's arguments, with as many rows each and at least one."""
    par, levels = _check_parent(parent)
    rows = [
        np.shape(y if _sparse.issparse(y) else _capi.as_array(y, name))
        for y, name in ((y_true, "y_true"), (y_pred, "y_pred"))
    ]
    n_rows = max((shape[0] if shape else 1) for shape in rows)
    if all(len(shape) == 1 and shape[0] == par.size for shape in rows) and all(
        _only_zeros_and_ones(y) for y in (y_true, y_pred)
    ):
        # one gene's 0/1 node row, passed 1-D as kendall_tau takes one ranking, reads here as
        # node ids (n_nodes samples at the root or node 1) and scores without an error
        warnings.warn(
            f"y_true and y_pred are 1-D with {par.size} entries, one per node, holding only 0 and 1: they are "
            f"read as node ids ({par.size} samples at node 0{' or 1' if par.size > 1 else ''}); for one sample's "
            "0/1 node row pass it 2-D "
            "(y[np.newaxis, :])",
            UserWarning,
            stacklevel=3,
        )
    # the node rows and the loss's masks and costs: about 24 bytes per (row, node); 240 KB of node
    # ids on a tree of 20,000 nodes took 1.5 GB
    _capi.check_bytes(24 * n_rows * par.size, f"a hierarchical metric of {n_rows} rows × {par.size} nodes")
    T = _node_rows(y_true, par, "y_true")
    P = _node_rows(y_pred, par, "y_pred")
    if T.shape[0] != P.shape[0]:
        raise ValueError(f"y_true and y_pred have different numbers of samples: {T.shape[0]} and {P.shape[0]}")
    if T.shape[0] == 0:
        raise ValueError("y_true is empty: there is nothing to score")
    return par, levels, T, P


def hierarchical_loss(
    y_true: Any,
    y_pred: Any,
    parent: Any,
    *,
    node_weights: Any = None,
    sample_weight: Any = None,
    average: bool = True,
) -> float | np.ndarray:
    """Hierarchical loss ℓ_H of Cesa-Bianchi et al. (2006), as defined in Vembu's thesis.

    A mistake at a node is charged only when every ancestor of the node is predicted correctly:
    once a path goes wrong, further mistakes in the subtree below are not counted again. With ψ_i(y)
    the indicator of node i in the label set of y (a path: the node and all its ancestors),

        ℓ_H(y, ŷ) = Σ_i c_i · I(ψ_i(ŷ) ≠ ψ_i(y) and ψ_j(ŷ) = ψ_j(y) for all j ∈ ANC(i)),

    with node weights c_i (all 1 in the thesis, section "Empirical Results"). For node rows that are
    closed under parents (rooted subtrees), "all ancestors correct" is the same as "parent correct".
    Rows that are not closed are accepted and scored by the formula above.

    Parameters
    ----------
    y_true, y_pred : array-like
        Either node ids of shape (n_samples,) — single paths, each id standing for the node and its
        ancestors (as :class:`combpred.spaces.HierarchyPaths` encodes them) — or 0/1 node rows of
        shape (n_samples, n_nodes) — multi-path labels (as :class:`combpred.spaces.Subtrees`).
        The two forms may be mixed.
    parent : array-like of int of shape (n_nodes,)
        ``parent[v]`` is v's parent, −1 at a root. A forest (several roots) is allowed. A single
        root is the virtual root of :class:`combpred.spaces.Subtrees` and
        :class:`combpred.spaces.HierarchyPaths`, in every label set: a row without it is read with
        it, and it is never charged (as :func:`hierarchical_f1` and ``decision="hierarchical"``
        read it).
    node_weights : array-like of shape (n_nodes,), default=None
        Non-negative costs c_i; None means 1 per node. :func:`hierarchical_node_weights` builds
        the usual scaled choices.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the mean.
    average : bool, default=True
        Return the (weighted) mean loss per instance; False returns the loss of every row.

    Returns
    -------
    loss : float or ndarray of shape (n_samples,)
        0 for perfect predictions.

    Raises
    ------
    ValueError
        On a malformed parent array (out-of-range entry, cycle, no root), node ids out of range,
        rows of the wrong width or not 0/1, or mismatched numbers of samples.

    Notes
    -----
    With unit weights a single path that leaves the true path at some node costs 2 (the true node
    missed and the wrong sibling predicted) and one that stops early costs 1. The thesis' table of
    hierarchical results (quoted from Rousu et al. 2005) reports ℓ_H ≈ 0.05 per instance at 51 %
    zero-one error, which unit weights cannot produce (every wrong single path costs at least 1):
    those figures use scaled node weights or a normalisation that the thesis does not state.

    Examples
    --------
    A root 0 with children 1, 2; node 1 has children 3, 4. Predicting leaf 4 for leaf 3 errs at
    3 and 4 (their parent 1 is right): loss 2. Predicting 2 for 3 errs at 1 and 2; 3 is below the
    mistake at 1 and is not charged: loss 2.

    >>> parent = [-1, 0, 0, 1, 1]
    >>> hierarchical_loss([3, 3], [4, 2], parent, average=False)
    array([2., 2.])
    """
    par, levels, T, P = _node_row_pair(y_true, y_pred, parent)
    w = _node_costs(node_weights, par.size)
    if len(levels[0]) == 1:
        # in every set: charged where a row left it out, it hid every mistake below it, and a
        # wrong binary-relevance row without it scored below its own closure (probe 82)
        T[:, levels[0]] = P[:, levels[0]] = True
    wrong = T != P
    # ancestor_wrong[:, v]: some proper ancestor of v is wrong; built level by level from the roots.
    ancestor_wrong = np.zeros_like(wrong)
    for nodes in levels[1:]:
        ps = par[nodes]
        ancestor_wrong[:, nodes] = ancestor_wrong[:, ps] | wrong[:, ps]
    charged = wrong & ~ancestor_wrong
    values = charged.astype(np.float64) @ w
    return _reduce(values, sample_weight, average)


def hierarchical_f1(
    y_true: Any,
    y_pred: Any,
    parent: Any,
    *,
    sample_weight: Any = None,
    average: str | None = "micro",
) -> float | np.ndarray:
    """Hierarchical F1 of Kiritchenko et al. (2005), the usual F-measure of hierarchical multi-label
    classification.

    Each label set is augmented with the ancestors of its nodes, so that a prediction that stops
    short of the true node, or strays into a sibling, is credited with the ancestors it got right.
    With Y_i and Ŷ_i the augmented true and predicted node sets of row i::

        hP = Σ_i |Ŷ_i ∩ Y_i| / Σ_i |Ŷ_i|,   hR = Σ_i |Ŷ_i ∩ Y_i| / Σ_i |Y_i|,
        hF1 = 2·hP·hR / (hP + hR) = 2 Σ_i |Ŷ_i ∩ Y_i| / (Σ_i |Ŷ_i| + Σ_i |Y_i|),

    sums weighted by ``sample_weight`` (``average="micro"``, as the HMC literature pools them), or
    the mean of the rows' own ``2 |Ŷ_i ∩ Y_i| / (|Ŷ_i| + |Y_i|)`` (``average="samples"``). When the tree
    has a single root it is the virtual root of :class:`combpred.spaces.Subtrees` and
    :class:`combpred.spaces.HierarchyPaths`, in every set, and is not counted; in a forest every
    node counts. Two empty sets agree perfectly (F1 = 1).

    Parameters
    ----------
    y_true, y_pred : array-like
        Node ids of shape (n_samples,) (single paths: the node and its ancestors) or 0/1 node rows
        of shape (n_samples, n_nodes), as for :func:`hierarchical_loss`; rows need not be closed
        under parents (binary relevance's are not): the augmentation closes them.
    parent : array-like of int of shape (n_nodes,)
        ``parent[v]`` is v's parent, −1 at a root.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows in the sums (micro) or the mean (samples).
    average : {"micro", "samples"} or None, default="micro"
        Pooled counts, the mean of the rows' F1, or (None) every row's F1.

    Returns
    -------
    f1 : float or ndarray of shape (n_samples,)
        In [0, 1], 1 for perfect predictions.

    Raises
    ------
    ValueError
        On a malformed parent array, node ids out of range, rows of the wrong width or not 0/1,
        mismatched numbers of samples, or an unknown ``average``.

    Examples
    --------
    A root 0 with children 1, 2; node 1 has children 3, 4. Predicting leaf 4 for leaf 3 gets node 1
    right of the true {1, 3} and the predicted {1, 4}: F1 = 2·1 / (2 + 2) = 0.5. Predicting 1 for 3
    gets {1} of {1, 3}: 2·1 / (1 + 2).

    >>> parent = [-1, 0, 0, 1, 1]
    >>> hierarchical_f1([3, 3], [4, 1], parent, average=None)
    array([0.5       , 0.66666667])
    >>> round(hierarchical_f1([3, 3], [4, 1], parent), 4)  # 2·2 / (3 + 4)
    0.5714
    """
    if average not in ("micro", "samples", None):
        raise ValueError(f"average must be 'micro', 'samples' or None, got {average!r}")
    par, levels, T, P = _node_row_pair(y_true, y_pred, parent)
    for rows in (T, P):  # augment with ancestors: children before parents
        for nodes in reversed(levels[1:]):
            np.logical_or.at(rows, (slice(None), par[nodes]), rows[:, nodes])
    counted = np.ones(par.size, dtype=bool)
    if len(levels[0]) == 1:
        counted[levels[0]] = False
    T, P = T[:, counted], P[:, counted]
    both = np.sum(T & P, axis=1).astype(np.float64)
    sizes = (T.sum(axis=1) + P.sum(axis=1)).astype(np.float64)
    if average == "micro":
        w = check_sample_weight(sample_weight, both.size)
        # Only rows with weight and nodes count; scaling the weights of just those (one ratio of two
        # weighted sums) keeps a 1e-300 weight from vanishing beside a 1e308 one on a row with no
        # nodes, which made a wrong prediction score 1.
        scored = sizes > 0 if w is None else (sizes > 0) & (w > 0)
        if not np.any(scored):
            return 1.0
        kept = None if w is None else w[scored]
        return 2 * weighted_mean(both[scored], kept) / weighted_mean(sizes[scored], kept)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(sizes > 0, 2 * both / np.where(sizes > 0, sizes, 1), 1.0)
    return _reduce(values, sample_weight, average == "samples")


def hierarchical_node_weights(parent: Any, scheme: str = "siblings") -> np.ndarray:
    """Node costs c_i for :func:`hierarchical_loss`, in the usual scaled forms.

    Parameters
    ----------
    parent : array-like of int of shape (n_nodes,)
        ``parent[v]`` is v's parent, −1 at a root.
    scheme : {"uniform", "siblings", "subtree"}, default="siblings"
        ``"uniform"``: c_i = 1 (the thesis' formula). ``"siblings"``: c = 1 at a root and
        c_i = c_parent(i) / (number of children of parent(i)), so the costs of a node's children
        share the node's cost (Cesa-Bianchi et al. 2006; Rousu et al. 2006). ``"subtree"``:
        c_i = (number of nodes in the subtree rooted at i) / n_nodes, the fraction of the nodes
        below i, i included (Rousu et al. 2006).

    Returns
    -------
    weights : ndarray of shape (n_nodes,)

    Examples
    --------
    >>> hierarchical_node_weights([-1, 0, 0, 1, 1], "siblings")
    array([1.  , 0.5 , 0.5 , 0.25, 0.25])
    """
    par, levels = _check_parent(parent)
    n = par.size
    if scheme == "uniform":
        return np.ones(n)
    if scheme == "siblings":
        n_children = np.bincount(par[par >= 0], minlength=n)
        c = np.ones(n)
        for nodes in levels[1:]:
            ps = par[nodes]
            c[nodes] = c[ps] / n_children[ps]
        return c
    if scheme == "subtree":
        size = np.ones(n)
        for nodes in reversed(levels[1:]):
            np.add.at(size, par[nodes], size[nodes])
        return size / n
    raise ValueError(f"unknown scheme {scheme!r}: use 'uniform', 'siblings' or 'subtree'")


# --------------------------------------------------------------------------------------------
# policies and decoders
# --------------------------------------------------------------------------------------------
def _unit_scale(M: np.ndarray, axis: int | None = None) -> np.ndarray:
    """M divided by its largest absolute value (per row with axis=1): cosines do not change, and
    norms and products of values near 1e308 no longer overflow to infinity (or NaN)."""
    top = np.max(np.abs(M), axis=axis, keepdims=axis is not None)
    return M / np.where(top > 0, top, 1.0)


def _cosine_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A, B = _unit_scale(A, axis=1), _unit_scale(B, axis=1)
    na = np.linalg.norm(A, axis=1)
    nb = np.linalg.norm(B, axis=1)
    dot = np.einsum("ij,ij->i", A, B)
    out = np.zeros(A.shape[0])
    ok = (na > 0) & (nb > 0)
    out[ok] = dot[ok] / (na[ok] * nb[ok])
    return np.clip(out, -1.0, 1.0)


def policy_cosine(
    W_true: Any, W_pred: Any, X: Any = None, *, sample_weight: Any = None, average: bool = True
) -> float | np.ndarray:
    """Cosine similarity of a true and a learned policy (the thesis' dicycle experiment).

    Without ``X``: the cosine of the two weight arrays, flattened. With ``X``: the policies of the
    instances, u_i = W_true x_i and û_i = W_pred x_i (scores over the structure coordinates),
    compared row by row and averaged. The thesis scores dicycle policy estimation with
    Σ_i ⟨f_i, Σ_j x_ij A^(j)⟩ / (‖f_i‖ ‖Σ_j x_ij A^(j)‖) over the test instances; this function
    returns that sum divided by the number of instances (so it lies in [−1, 1]).

    A zero policy has cosine 0 with anything (as ``sklearn.metrics.pairwise.cosine_similarity``).

    Parameters
    ----------
    W_true, W_pred : array-like, same shape
        Policies. With ``X``: shape (d, n_features), scores ``X @ W.T``, the orientation of a
        linear model's ``coef_``. Without: any shape.
    X : array-like of shape (n_samples, n_features), default=None
        Inputs at which to compare the policies. Append a column of ones to compare models with
        intercepts (and append the intercept to W as its last column).
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights of the mean (only with ``X``).
    average : bool, default=True
        With ``X``: return the mean cosine; False returns the cosine of every instance.

    Returns
    -------
    cosine : float or ndarray of shape (n_samples,)

    Notes
    -----
    The thesis' policies are antisymmetric matrices A (A_uv = −A_vu) scoring arcs u→v.
    :class:`combpred.spaces.DirectedCycles` uses one coordinate per pair u < v with ψ_uv = +1 for
    u→v and −1 for v→u, so its scores are the upper triangle of A; the cosine of two antisymmetric
    matrices equals the cosine of their upper triangles, so either form gives the same value.

    Examples
    --------
    >>> policy_cosine([[1.0, 0.0]], [[2.0, 0.0]])
    1.0
    """
    A, B = _real_array(W_true, "W_true"), _real_array(W_pred, "W_pred")  # complex met float()'s TypeError
    if A.shape != B.shape:
        raise ValueError(f"W_true and W_pred have different shapes: {A.shape} and {B.shape}")
    if A.size == 0:
        raise ValueError("W_true is empty")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("W_true and W_pred must be finite (no NaN or infinity)")
    if X is None:
        if sample_weight is not None or not average:
            raise ValueError("sample_weight and average=False need X (per-instance policies)")
        return float(_cosine_rows(A.reshape(1, -1), B.reshape(1, -1))[0])
    Xa = _real_array(X, "X")
    if Xa.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {Xa.shape}")
    if A.ndim != 2 or A.shape[1] != Xa.shape[1]:
        raise ValueError(f"with X of {Xa.shape[1]} features, W must have shape (d, {Xa.shape[1]}), got {A.shape}")
    if Xa.shape[0] == 0:
        raise ValueError("X has no rows")
    _capi.check_output((Xa.shape[0],), "X", "the cosine of every row")
    A, B = _unit_scale(A), _unit_scale(B)
    # The policies are n_samples × d, which neither input's size bounds (X of one column against
    # W of one row), and X's finiteness mask and scaled rows are as large as X (a broadcast X
    # takes no memory: probe 85): all are formed a block of rows at a time.
    block = max(1, _POLICY_BLOCK // max(A.shape[0], Xa.shape[1]))
    cosines = np.concatenate([_policy_cosines(Xa, lo, block, A, B) for lo in range(0, Xa.shape[0], block)])
    return _reduce(cosines, sample_weight, average)


def _policy_cosines(X: np.ndarray, lo: int, block: int, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The cosines of the policies of X's rows from ``lo``, ``block`` of them."""
    rows = X[lo : lo + block]
    if not np.all(finite := np.isfinite(rows)):
        r, c = np.argwhere(~finite)[0]
        raise ValueError(f"X contains NaN or infinity at row {lo + int(r)}, column {int(c)}")
    # Scaling W or a row of X by a positive constant leaves every cosine unchanged; unit scales
    # keep X @ W.T finite for finite inputs.
    rows = _unit_scale(rows, axis=1)
    return _cosine_rows(rows @ A.T, rows @ B.T)


# Scores per block of policy_cosine (of each policy): 8 MB.
_POLICY_BLOCK = 1 << 20


def z_approximation_factor(f_decoded: Any, f_max: Any, f_min: Any, *, rtol: float = 1e-9) -> float | np.ndarray:
    """Realised z-approximation factor ν = (max f − f(ŷ)) / (max f − min f) of a decoder.

    A decoder is a z-approximation with factor ν when f(ŷ) ≥ (1 − ν) max f + ν min f
    (thesis section 5.4): ν = 0 is exact, ν = 1 is the worst structure. When max f = min f every
    structure is optimal and ν = 0.

    Parameters
    ----------
    f_decoded, f_max, f_min : array-like, broadcastable
        Score of the decoded structure and the largest and smallest scores over the space.
    rtol : float, default=1e-9
        Relative tolerance for rounding: f_decoded may exceed f_max (or fall below f_min) by
        ``rtol · max(|f_max|, |f_min|)``, and the result is clipped to [0, 1]; a span
        max f − min f within the same tolerance counts as flat (ν = 0), as scores equal but for
        rounding are. The tolerance scales with the scores, so ν does not depend on their unit;
        scores that share a large offset (an intercept: 1000 ± 1e-7) need a smaller rtol, or the
        offset removed, for their span to count.

    Returns
    -------
    nu : float or ndarray
        A float when all inputs are scalars.

    Raises
    ------
    ValueError
        If an input is not finite, f_min > f_max, or f_decoded lies outside [f_min, f_max]
        beyond the tolerance (then f_max or f_min is not the true extreme).

    Examples
    --------
    >>> z_approximation_factor([3.0, 2.0, 0.0], 3.0, -1.0)
    array([0.  , 0.25, 0.75])
    """
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not rtol >= 0:
        raise ValueError(f"rtol must be a non-negative number, got {rtol!r}")
    rtol = _capi.real_value(rtol, "rtol")
    values = [_real_array(v, name) for v, name in ((f_decoded, "f_decoded"), (f_max, "f_max"), (f_min, "f_min"))]
    try:
        f, hi, lo = np.broadcast_arrays(*values)
    except ValueError as exc:
        raise ValueError(f"f_decoded, f_max and f_min do not broadcast together: {exc}") from None
    # broadcast views cost nothing; the arithmetic below makes about ten arrays of their shape
    _capi.check_bytes(80 * f.size, f"z_approximation_factor over {f.size} scores")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
        raise ValueError("f_decoded, f_max and f_min must be finite")
    # ν does not change when the three scores are divided by one positive number: divided by the
    # power of two at or above max(|f_max|, |f_min|) (an exact division) they lie in [−1, 1] (up to
    # the tolerance), and the differences below cannot overflow (max f − min f of ±1e308 scores
    # was +inf, which gave ν = 0 or NaN). The tolerance is relative to that scale alone: a floor
    # of 1 made every span under 1e-9 flat, so the worst structure of scores 1e-10 apart got ν = 0.
    top = np.maximum(np.abs(hi), np.abs(lo))
    top = np.where(top > 0, top, 1.0)  # all three zero: flat, ν = 0
    exponent = -np.frexp(top)[1]  # 2**1024 itself overflows: scale by ldexp
    f, hi, lo = np.ldexp(f, exponent), np.ldexp(hi, exponent), np.ldexp(lo, exponent)
    tol = rtol * np.ldexp(top, exponent)
    if np.any(lo > hi + tol):
        raise ValueError("f_min exceeds f_max")
    if np.any(f > hi + tol):
        raise ValueError("f_decoded exceeds f_max: f_max is not the maximum score")
    if np.any(f < lo - tol):
        raise ValueError("f_decoded is below f_min: f_min is not the minimum score")
    span = hi - lo
    flat = span <= tol
    nu = np.where(flat, 0.0, (hi - f) / np.where(flat, 1.0, span))
    nu = np.clip(nu, 0.0, 1.0)
    return float(nu) if nu.ndim == 0 else nu


# --------------------------------------------------------------------------------------------
# scorers
# --------------------------------------------------------------------------------------------
class _StructuredScorer:
    """``scorer(estimator, X, y) -> float``: a metric of ``estimator.predict(X)`` against y.

    Lower-is-better metrics are negated, so greater is always better, as scikit-learn expects.
    """

    def __init__(self, metric: Callable[..., float], sign: float, kwargs: dict[str, Any]):
        self._metric = metric
        self._sign = sign
        self._kwargs = kwargs
        # What set_score_request asked for sample_weight (None: nothing asked; with metadata
        # routing on, scikit-learn then refuses to route it, as for its own scorers).
        self._sample_weight_request: bool | str | None = None

    def __call__(self, estimator: Any, X: Any, y_true: Any, sample_weight: Any = None) -> float:
        y_pred = estimator.predict(X)
        kwargs = dict(self._kwargs)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        value = self._metric(y_true, y_pred, **kwargs)
        if np.ndim(value) != 0:
            # average=False made NumPy's "only 0-dimensional arrays can be converted" (probe DN)
            name = _metric_name(self._metric)
            raise ValueError(
                f"metric {name} returned an array of shape {np.shape(value)}; a scorer needs one number "
                "(drop average=False or average=None from make_structured_scorer's keywords)"
            )
        return self._sign * float(value)

    def set_score_request(self, *, sample_weight: bool | str | None = None) -> _StructuredScorer:
        """Request ``sample_weight`` for scoring under scikit-learn's metadata routing.

        As for ``sklearn.metrics.make_scorer``'s scorers: with
        ``sklearn.set_config(enable_metadata_routing=True)``, ``cross_validate(...,
        params={"sample_weight": w})`` and ``GridSearchCV.fit(X, y, sample_weight=w)`` pass the
        weights of each test fold to a scorer that requested them. Unlike scikit-learn's, which
        change the scorer itself, this returns a copy, so that the module's shared scorers
        (:data:`kendall_tau_scorer`, ...) keep no request from one caller to the next.

        Parameters
        ----------
        sample_weight : bool, str or None, default=None
            True: pass ``sample_weight`` to the metric; False: do not; a string: pass the
            metadata of that name as ``sample_weight``; None: no request (routing it is an error).

        Returns
        -------
        scorer : callable
            A copy of this scorer with the request.
        """
        import sklearn

        if not sklearn.get_config().get("enable_metadata_routing", False):
            raise RuntimeError(
                "set_score_request is only available when metadata routing is enabled: "
                "sklearn.set_config(enable_metadata_routing=True)"
            )
        if not (sample_weight is None or isinstance(sample_weight, (bool, str))):
            raise ValueError(f"sample_weight must be a bool, a string or None, got {sample_weight!r}")
        scorer = _StructuredScorer(self._metric, self._sign, self._kwargs)
        scorer._sample_weight_request = sample_weight
        return scorer

    def get_metadata_routing(self) -> Any:
        """The scorer's metadata request (scikit-learn's routing reads it): see set_score_request."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="sample_weight", alias=self._sample_weight_request)
        return request

    def __repr__(self) -> str:
        args = "".join(f", {k}=..." for k in self._kwargs)
        neg = ", greater_is_better=False" if self._sign < 0 else ""
        return f"make_structured_scorer({_metric_name(self._metric)}{neg}{args})"


def make_structured_scorer(
    metric: Callable[..., float], *, greater_is_better: bool = True, **kwargs: Any
) -> Callable[..., float]:
    """Turn ``metric(y_true, y_pred, **kwargs)`` into a scorer for model selection.

    It asks the estimator for nothing but ``predict``, as ``sklearn.metrics.make_scorer`` with its
    default ``response_method="predict"`` does, and gives the same scores.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_pred, **kwargs) -> float``.
    greater_is_better : bool, default=True
        False for losses: the scorer then returns −metric.
    **kwargs
        Passed to ``metric`` on every call.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, sample_weight=None) -> float``; ``sample_weight`` is passed to
        the metric when given.
    """
    if not callable(metric):
        raise ValueError(f"metric must be callable, got {metric!r}")
    _flag(greater_is_better, "greater_is_better")
    return _StructuredScorer(metric, 1.0 if greater_is_better else -1.0, kwargs)


def make_hierarchical_loss_scorer(parent: Any, *, node_weights: Any = None) -> Callable[..., float]:
    """Scorer returning −:func:`hierarchical_loss` (greater is better) for a fixed taxonomy.

    Parameters
    ----------
    parent : array-like of int of shape (n_nodes,)
        The taxonomy, ``parent[v]`` = v's parent, −1 at a root.
    node_weights : array-like of shape (n_nodes,), default=None
        Node costs; None means 1 per node.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y) -> -hierarchical_loss(y, estimator.predict(X), parent, ...)``.
    """
    par, _ = _check_parent(parent)
    kwargs: dict[str, Any] = {"parent": par}
    if node_weights is not None:  # checked now, as hierarchical_loss checks them
        kwargs["node_weights"] = _node_costs(node_weights, par.size)
    return _StructuredScorer(hierarchical_loss, -1.0, kwargs)


#: Mean Kendall τ of ``estimator.predict(X)`` against rank rows y (greater is better).
kendall_tau_scorer = make_structured_scorer(kendall_tau)

#: Mean Spearman ρ of ``estimator.predict(X)`` against rank rows y (greater is better).
spearman_rho_scorer = make_structured_scorer(spearman_rho)


def _metric_name(metric: Any) -> str:
    """A metric's name for messages and reprs: its ``__name__``, or its repr for a callable without
    one (a ``functools.partial``, a callable object: the scorer's repr raised AttributeError, and a
    GridSearchCV holding it could not be displayed, probe EO)."""
    return getattr(metric, "__name__", None) or repr(metric)
