"""Decision rules: the structure with the least expected loss, from the marginals E[ψ(y) | x].

A model that estimates the marginals (``ProbabilisticStructured.predict_marginals``, exact or
sampled) can be asked for more than its most probable structure: the structure that minimises the
expected value of the loss the user is scored on. For the losses below the expected loss is linear
in ψ(ŷ) or in a function of the marginals, so the minimiser is found by the space's own decoder
(exact where the space decodes exactly), never by enumeration:

``"hamming"``
    Hamming loss over the coordinates of a 0/1 ψ (label sets, subtrees, k-subsets, the edges of
    undirected cycles, the pairs of cliques): E[Σ_j |ψ_j(ŷ) − ψ_j(y)|] = Σ_j m_j + ⟨1 − 2m, ψ(ŷ)⟩,
    minimised by decoding the scores 2m − 1 (for sets: each label with marginal above ½).
``"kendall"``
    Kendall's distance between rankings (permutations), the number of discordant label pairs:
    E[Σ_{u<v} (1 − ψ_uv(ŷ) ψ_uv(y)) / 2] = const − ⟨m, ψ(ŷ)⟩ / 2, minimised by decoding m itself,
    the Kemeny ranking of the pairwise marginals.
``"hierarchical"``
    The hierarchical loss ℓ_H of Cesa-Bianchi, Zaniboni & Gentile (2006) on rooted subtrees
    (:func:`combpred.metrics.hierarchical_loss`: a mistake at a node counts only when its parent is
    right), with node costs c. For a rooted subtree ŷ and any distribution over rooted subtrees,
    E[ℓ_H] = Σ_{v: parent in ŷ} c_v (ŷ_v (m_parent − m_v) + (1 − ŷ_v) m_v), which depends on the
    node marginals m only (m_root = 1, whatever the marginals passed say: every rooted subtree
    holds the root): y's agreeing with ŷ above v means y contains v's parent.
    A bottom-up pass over the tree minimises it exactly: keep v when c_v (m_parent − m_v) plus the
    best cost of its children is at most c_v m_v, the cost of cutting the subtree there.
``"spearman"``
    Squared rank differences Σ_j (r_j(ŷ) − r_j(y))², Spearman's ρ up to an affine map: with the
    expected ranks r̄_j = 1 + Σ_{k≠j} P(k before j), it equals const − 2 Σ_j r_j(ŷ) r̄_j, minimised by
    ranking the labels by their expected ranks (rearrangement inequality).

``"f1"``
    Example-based F1 of label sets (:class:`~combpred.spaces.Multilabel`), 1 − F1(ŷ, y) with
    F1 = 2|ŷ ∩ y| / (|ŷ| + |y|) and F1 = 1 when both are empty (scikit-learn's
    ``f1_score(average="samples", zero_division=1.0)``). Exact when the labels are independent
    given x — as they are under ``ProbabilisticStructured(space="multilabel")``, whose ψ is the
    label indicators — and a plug-in rule for other marginal estimates: under independence the
    optimal set holds the k most probable labels for some k (Lewis 1995), and E[F1] of each top-k
    set follows from the Poisson-binomial distributions of the other labels' count,
    E[F1] = Σ_{j ∈ ŷ} p_j E[2 / (k + 1 + S_{−j})] (Jansche 2007; Dembczyński et al. 2011 treat
    dependent labels). O(d²) per row, for d labels.

Each rule is checked against brute force in ``tests/test_decision.py``: on enumerable spaces and
random distributions, the decoded structure attains the least expected loss over all structures.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from . import _capi
from . import spaces as _spaces
from .metrics import _node_costs, _real_array

__all__ = ["LOSSES", "MODE", "bayes_decode", "check_rule"]

LOSSES = ("hamming", "kendall", "spearman", "hierarchical", "f1")

#: The estimators' default ``decision``: the decoded structure (the mode), no expected loss.
MODE = "mode"


def _zero_one(space: _spaces.Space) -> bool:
    """Whether ψ takes values in {0, 1}, as the core says of the space (nothing is decoded)."""
    return space._info().zero_one


def _outside(M: np.ndarray, lo: float, hi: float) -> bool:
    """Whether some marginal lies below lo or above hi (none of zero rows does)."""
    return bool(M.size) and (M.min() < lo or M.max() > hi)


def _expected_ranks(M: np.ndarray, n: int) -> np.ndarray:
    """r̄_j = 1 + Σ_{k≠j} P(k before j) from pairwise marginals m_uv = P(u ≺ v) − P(v ≺ u) (pairs
    u < v in the space's order, that of ``np.triu_indices``)."""
    u, v = np.triu_indices(n, 1)
    before = (1.0 + M) / 2.0  # P(u before v), one column per pair
    ranks = np.ones((M.shape[0], n))
    np.add.at(ranks.T, v, before.T)  # u before v pushes v down
    np.add.at(ranks.T, u, 1.0 - before.T)  # v before u pushes u down
    return ranks


def _hierarchical(parent: np.ndarray, M: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """The rooted subtree of least expected ℓ_H per row of node marginals M (see the module doc)."""
    n = len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for v, p in enumerate(parent):
        (roots if p < 0 else children[p]).append(v)
    order, stack = [], list(roots)  # parents before children
    # Every rooted subtree holds the roots: their marginals are 1 whatever the caller's estimate
    # says (a per-node classifier's root probability of 0.2 changed the decision for the worse).
    M = M.copy()
    M[:, roots] = 1.0
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(children[v])
    above = np.where(parent[None, :] >= 0, M[:, np.maximum(parent, 0)], 1.0)  # m of the parent; 1 above a root
    # One positive factor on every cost leaves the decision as it is. A power of two, exact, brings
    # the largest to 1 where it is too small (subnormal costs lost their digits in the products c·m
    # and chose another subtree, probe CS) or so large that a sum of all n could overflow, and only
    # there: dividing by every largest cost made 1e-200 beside 1e200 underflow to a tie that kept a
    # node costing more (probe DN).
    top = costs.max(initial=0.0)
    if top > 0 and not 2.0**-900 <= top <= sys.float_info.max / (2 * n):
        costs = np.ldexp(costs, -math.frexp(top)[1])
    keep_cost = costs * (above - M)
    cut_cost = costs * M
    best = np.zeros_like(M)
    keep = np.zeros(M.shape, dtype=bool)
    for v in reversed(order):  # children before parents
        inside = keep_cost[:, v] + sum((best[:, k] for k in children[v]), np.zeros(len(M)))
        keep[:, v] = inside <= cut_cost[:, v]
        best[:, v] = np.minimum(inside, cut_cost[:, v])
    Y = np.zeros(M.shape, dtype=np.int64)
    for v in order:  # a node is kept only below a kept parent (the roots: always, a subtree is non-empty)
        on = keep[:, v] if parent[v] >= 0 else np.ones(len(M), dtype=bool)
        if parent[v] >= 0:
            on &= Y[:, parent[v]] == 1
        Y[:, v] = on
    return Y


def _f1(P: np.ndarray) -> np.ndarray:
    """The label set of largest expected F1 per row of independent label probabilities P.

    With the labels sorted by probability, q_1 ≥ … ≥ q_d, the top-k set's expected F1 is
    E_k = Σ_a P(T_k = a) · 2a · Φ_k(k + a), where T_k counts the true labels among the top k and
    Φ_k(s) = E[1 / (s + R_k)] for the count R_k of the others. Both follow from one-label
    updates: P(T_k = ·) forward from T_0 = 0, and Φ_{k−1}(s) = (1 − q_k) Φ_k(s) + q_k Φ_k(s + 1)
    backward from Φ_d(s) = 1/s. Each update is a convex combination of non-negative numbers
    (no cancellation), and all k cost O(d²) together; the sum over j of the label-wise form
    (module docstring) cost O(d³), 2.6 s per row at d = 800.
    """
    m, d = P.shape
    Y = np.zeros((m, d), dtype=np.int64)
    if d == 0:
        return Y
    # Φ_k(k + a) for a = 1 … k is kept for every k until the forward pass: a (d+1)×(d+1) table per
    # row, checked against the core's memory budget before it exists (d = 50,000 would take 20 GB).
    # Rows go in blocks (vector work for small d) whose tables stay within the budget too.
    _capi.check_output((d + 1, d + 1), f"decision='f1' on {d} labels: its work table")
    block_values = min(_F1_BLOCK_VALUES, _capi.max_memory()[1] // 8)
    step = max(1, block_values // ((d + 1) * (d + 1)))
    order = np.argsort(-P, axis=1, kind="stable")
    Q = np.take_along_axis(P, order, axis=1)
    counts = np.arange(d + 1, dtype=np.float64)
    tables = np.empty((min(step, m), d + 1, d + 1))  # one allocation: a block's is freed only after the next's
    for lo in range(0, m, step):
        q = Q[lo : lo + step]
        b = q.shape[0]
        phi = np.broadcast_to(1.0 / np.arange(1, 2 * d + 1), (b, 2 * d)).copy()  # Φ_d(s), s = 1 … 2d
        table = tables[:b]
        for k in range(d, 0, -1):
            table[:, k, 1 : k + 1] = phi[:, k : 2 * k]  # Φ_k(s) for s = k + 1 … 2k
            n, qk = d + k - 1, q[:, k - 1 : k]  # Φ_{k−1} is needed up to s = d + k − 1
            phi[:, :n] = (1 - qk) * phi[:, :n] + qk * phi[:, 1 : n + 1]
        pmf = np.zeros((b, d + 1))
        pmf[:, 0] = 1.0
        expected = np.empty((b, d))
        for k in range(1, d + 1):
            qk = q[:, k - 1 : k]
            pmf[:, 1 : k + 1] = pmf[:, 1 : k + 1] * (1 - qk) + pmf[:, :k] * qk
            pmf[:, 0] *= 1 - qk[:, 0]
            expected[:, k - 1] = 2 * np.einsum(
                "ra,a,ra->r", pmf[:, 1 : k + 1], counts[1 : k + 1], table[:, k, 1 : k + 1]
            )
        empty = np.prod(1 - q, axis=1)  # the empty set scores 1 exactly when y is empty
        best = np.argmax(expected, axis=1)
        for r in np.flatnonzero(expected[np.arange(b), best] >= empty):
            Y[lo + r, order[lo + r, : best[r] + 1]] = 1
    return Y


# The F1 rule's tables hold up to this many values per block of rows (32 MB).
_F1_BLOCK_VALUES = 1 << 22


def check_rule(space: _spaces.Space, loss: str) -> None:
    """Raise ValueError when :func:`bayes_decode` cannot minimise ``loss`` on ``space``, without
    decoding anything (the estimators check their ``decision`` before a fit with it).

    Parameters
    ----------
    space : combpred.spaces.Space
    loss : str
        One of ``combpred.decision.LOSSES``.

    Raises
    ------
    ValueError
        For an unknown loss, or one the space does not support.
    TypeError
        When ``space`` is not a space object (a name such as ``"multilabel"``: a space's size
        comes from its object).

    Examples
    --------
    >>> from combpred import spaces
    >>> check_rule(spaces.Multilabel(3), "f1")
    >>> check_rule(spaces.Multiclass(3), "kendall")
    Traceback (most recent call last):
    ...
    ValueError: loss='kendall' needs a Permutations space, got Multiclass(3); the rules for Multiclass(3): ['hamming']
    """
    if not isinstance(space, _spaces.Space):
        raise TypeError(f"space must be a combpred.spaces.Space, got {type(space).__name__}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {list(LOSSES)}, got {loss!r}")
    reason = _unsupported(space, loss)
    if reason is not None:
        rules = [name for name in LOSSES if _unsupported(space, name) is None]
        raise ValueError(f"{reason}; the rules for {space!r}: {rules if rules else 'none'}")


def _unsupported(space: _spaces.Space, loss: str) -> str | None:
    """Why :func:`bayes_decode` cannot minimise ``loss`` on ``space``, or None when it can."""
    permutations = isinstance(space, _spaces.Permutations)
    if loss == "f1":
        if type(space) is not _spaces.Multilabel:
            return f"loss='f1' needs a Multilabel space, got {space!r}"
    elif loss == "hierarchical":
        if not isinstance(space, _spaces.Subtrees):
            return f"loss='hierarchical' needs a Subtrees space, got {space!r}"
    elif loss == "hamming":
        if permutations or not _zero_one(space):
            way = " (use 'kendall' for rankings)" if permutations else ""  # the only space that takes it
            return f"loss='hamming' needs a space whose ψ is 0/1; {space!r} is not{way}"
    elif not permutations:
        return f"loss={loss!r} needs a Permutations space, got {space!r}"
    return None


def bayes_decode(space: _spaces.Space, marginals: Any, loss: str, *, node_weights: Any = None) -> np.ndarray:
    """Return, for each row of marginals, the structure with the least expected ``loss``.

    Parameters
    ----------
    space : combpred.spaces.Space
        The output space.
    marginals : array-like of shape (n_samples, space.dim)
        E[ψ(y) | x] per row, e.g. from ``ProbabilisticStructured.predict_marginals``.
    loss : {"hamming", "kendall", "spearman", "hierarchical", "f1"}
        The loss to minimise in expectation (see the module docstring): ``"hamming"`` needs a space
        whose ψ is 0/1, ``"kendall"`` and ``"spearman"`` a :class:`~combpred.spaces.Permutations`
        space, ``"hierarchical"`` a :class:`~combpred.spaces.Subtrees` space, ``"f1"`` a
        :class:`~combpred.spaces.Multilabel` space.
    node_weights : array-like of shape (n_nodes,), default=None
        The costs c of ``"hierarchical"`` (None: 1 per node, as
        :func:`combpred.metrics.hierarchical_loss`).

    Returns
    -------
    Y : ndarray of shape (n_samples, space.width), or (n_samples,) for the spaces whose structure is one integer
        (Multiclass, Ordinal, HierarchyPaths, DAGPaths)
        Structures in the space's encoding; the minimiser is exact where ``space.decode`` is exact
        (``space.decoder_guarantee == 0``), else a z-approximation of it.

    Raises
    ------
    ValueError
        For an unknown loss, a loss the space does not support, or marginals of the wrong shape,
        non-finite or outside the range of ψ.
    TypeError
        When ``space`` is not a space object (a name such as ``"multilabel"``).

    Examples
    --------
    >>> from combpred import spaces
    >>> bayes_decode(spaces.Multilabel(3), [[0.9, 0.4, 0.6]], "hamming")
    array([[1, 0, 1]])
    """
    check_rule(space, loss)
    if loss != "hierarchical" and node_weights is not None:
        raise ValueError(f"node_weights is the costs of loss='hierarchical'; loss={loss!r} takes none")
    M = _real_array(marginals, "marginals")  # complex marginals lost their imaginary part in a cast
    given = M.shape
    if M.ndim == 1:
        M = M.reshape(1, -1)
    if M.ndim != 2 or M.shape[1] != space.dim:
        one_row = " (a 1-D array is one sample's marginals)" if len(given) == 1 else ""
        raise ValueError(f"marginals must have shape (n_samples, {space.dim}), got {given}{one_row}")
    if not np.all(np.isfinite(M)):
        raise ValueError("marginals contain NaN or infinity")
    # the rules' working arrays: a few copies of the marginals (Space.decode checks its own)
    _capi.check_bytes(4 * M.nbytes, f"decision={loss!r} on marginals of shape {M.shape}")
    if loss == "f1":
        if _outside(M, -1e-9, 1 + 1e-9):
            raise ValueError("label marginals must lie in [0, 1]")
        return _f1(np.clip(M, 0.0, 1.0))
    if loss == "hierarchical":
        if _outside(M, -1e-9, 1 + 1e-9):
            raise ValueError("node marginals must lie in [0, 1]")
        return _hierarchical(np.asarray(space.parent), M, _node_costs(node_weights, space.dim))
    if loss == "hamming":
        if _outside(M, -1e-9, 1 + 1e-9):
            raise ValueError("marginals of a 0/1 ψ must lie in [0, 1]")
        return space.decode(2.0 * M - 1.0)
    if _outside(M, -1 - 1e-9, 1 + 1e-9):
        raise ValueError("marginals of rankings (ψ = ±1 per pair) must lie in [−1, 1]")
    if loss == "kendall":
        return space.decode(M)
    expected = _expected_ranks(M, space.n_labels)
    # rank 1 for the smallest expected rank; ties broken by label index (a stable sort)
    order = np.argsort(expected, axis=1, kind="stable")
    Y = np.empty_like(order)
    np.put_along_axis(Y, order, np.arange(1, space.n_labels + 1)[None, :].repeat(len(order), 0), axis=1)
    return Y.astype(np.int64)
