"""Exact maxima of the pair-space decoding problems in NumPy, independent of the Go decoders.

Go decodes exactly only up to a size threshold (16 labels for permutations, 14 vertices for cycles,
20 for cliques) and approximately beyond. These dynamic programmes reach a few sizes further, so
that the *realised* z-factor ν = (max f − f(ŷ)) / (max f − min f) of the approximate path can be
measured on real instances of the sizes where it runs. They return optimal values only, not
structures. Scores u follow the spaces' ψ: one entry per unordered pair u < v in lexicographic order.
"""

from __future__ import annotations

import numpy as np


def pair_matrix(u: np.ndarray, n: int) -> np.ndarray:
    """The n×n strictly upper-triangular matrix A with A[a, b] = u_ab for a < b."""
    a = np.zeros((n, n))
    a[np.triu_indices(n, 1)] = u
    return a


def _popcount(n: int) -> np.ndarray:
    masks = np.arange(1 << n)
    bits = np.zeros(1 << n, dtype=np.int64)
    for b in range(n):
        bits += (masks >> b) & 1
    return bits


def _levels(n: int) -> list[np.ndarray]:
    """The masks of {0..n−1} grouped by number of elements (level k holds the k-element masks)."""
    bits = _popcount(n)
    order = np.argsort(bits, kind="stable")
    bounds = np.searchsorted(bits[order], np.arange(n + 2))
    return [order[bounds[k] : bounds[k + 1]] for k in range(n + 1)]


def linear_ordering_max(u: np.ndarray, n: int) -> float:
    """max over rankings of Σ_{a<b} u_ab ψ_ab (ψ_ab = +1 when a is ranked before b, −1 otherwise).

    Subset DP: best[M] is the best score of placing the labels of M first; placing v after M adds
    Σ_{a∈M} w[a, v] with w = A − Aᵀ. O(n·2^n) time, O(n·2^n) memory (n ≤ 20 or so). The minimum is
    −max (reversing a ranking negates its score).
    """
    a = pair_matrix(u, n)
    w = a - a.T
    gain = np.zeros((1 << n, n))  # gain[M, v] = Σ_{a∈M} w[a, v], built by doubling on the top bit
    for b in range(n):
        gain[1 << b : 1 << (b + 1)] = gain[: 1 << b] + w[b]
    best = np.full(1 << n, -np.inf)
    best[0] = 0.0
    for level in _levels(n)[1:]:
        for v in range(n):
            m = level[(level >> v) & 1 == 1]
            prev = m ^ (1 << v)
            best[m] = np.maximum(best[m], best[prev] + gain[prev, v])
    return float(best[-1])


def cycle_max(w: np.ndarray) -> float:
    """max over cycles of length ≥ 3 on any subset of the vertices of Σ_{arcs a→b} w[a, b].

    Held–Karp: path[M, v] is the best path that starts at min(M), visits exactly M and ends at v.
    O(n²·2^n) time, O(n·2^n) memory. Symmetric w gives the undirected cycles.
    """
    n = w.shape[0]
    path = np.full((1 << n, n), -np.inf)
    for s in range(n):
        path[1 << s, s] = 0.0
    best = -np.inf
    levels = _levels(n)
    for k in range(2, n + 1):
        level = levels[k]
        low = level & -level  # the start vertex min(M), as a bit
        start = np.log2(low).astype(np.int64)
        for v in range(n):
            sel = ((level >> v) & 1 == 1) & (start != v)
            m = level[sel]
            prev = m ^ (1 << v)
            path[m, v] = np.max(path[prev] + w[:, v], axis=1)
        if k >= 3:
            closing = path[level] + w[:, start].T  # close each path back to its start
            best = max(best, float(np.max(closing)))
    return best


def dicycle_max(u: np.ndarray, n: int) -> float:
    """max over directed cycles of Σ_{a<b} u_ab ψ_ab (ψ_ab = +1 for a→b, −1 for b→a); min = −max."""
    a = pair_matrix(u, n)
    return cycle_max(a - a.T)


def ucycle_extremes(u: np.ndarray, n: int) -> tuple[float, float]:
    """(max, min) over undirected cycles of the sum of u over the cycle's edges."""
    a = pair_matrix(u, n)
    w = a + a.T
    return cycle_max(w), -cycle_max(-w)


def clique_extremes(u: np.ndarray, n: int) -> tuple[float, float]:
    """(max, min) over vertex sets T of Σ_{a<b both in T} u_ab, by visiting all 2^n sets.

    Sets with one vertex score 0 like the empty clique, so including them changes neither extreme.
    """
    a = pair_matrix(u, n)
    sym = a + a.T
    score = np.zeros(1)
    for h in range(n):
        into = np.zeros(1)  # into[M] = Σ_{b∈M} sym[b, h] for the sets M of vertices below h
        for b in range(h):
            into = np.concatenate([into, into + sym[b, h]])
        score = np.concatenate([score, score + into])
    return float(score.max()), float(score.min())
