"""Max-marginal margins (issue 13, item 4): per coordinate j of ψ, the best score with ψ_j at its
largest value minus the best with it at its smallest — checked against enumeration, against the
closed forms of the separable spaces, and against the estimator's own predictions."""

from __future__ import annotations

import numpy as np
import pytest
from _synthetic import linear_multiclass, linear_multilabel
from combpred import StructuredRidge, spaces

SMALL = [
    spaces.Multiclass(4),
    spaces.Multilabel(4),
    spaces.KSubsets(5, 2),
    spaces.Ordinal(5),
    spaces.HierarchyPaths([-1, 0, 0, 1, 1, 2]),
    spaces.Subtrees([-1, 0, 0, 1, 1, 2]),
    spaces.Permutations(4),
    spaces.PartialTournaments(4),
    spaces.DirectedCycles(5),
    spaces.UndirectedCycles(5),
    spaces.Cliques(4),
]


def _brute(space: spaces.Space, U: np.ndarray) -> np.ndarray:
    P = space.embed(space.enumerate()).astype(float)
    F = U @ P.T  # (rows, |Y|)
    out = np.empty_like(U)
    for j in range(P.shape[1]):
        hi, lo = P[:, j] == P[:, j].max(), P[:, j] == P[:, j].min()
        if P[:, j].min() == P[:, j].max():
            out[:, j] = np.inf if P[0, j] > 0 else -np.inf
        else:
            out[:, j] = F[:, hi].max(axis=1) - F[:, lo].max(axis=1)
    return out


@pytest.mark.parametrize("space", SMALL, ids=repr)
def test_space_max_margins_equal_enumeration(space):
    rng = np.random.default_rng(0)
    U = rng.normal(size=(6, space.dim))
    U[4] *= 1e250
    U[5] *= 1e-250
    got = space.max_margins(U)
    want = _brute(space, U)
    finite = np.isfinite(want)
    assert np.array_equal(np.isinf(got), ~finite) and np.array_equal(got[~finite], want[~finite])
    scale = np.abs(U).max(axis=1, keepdims=True) * np.ones_like(U)
    np.testing.assert_array_less(np.abs(got[finite] - want[finite]), 1e-9 * scale[finite])


def test_separable_spaces_have_closed_form_margins():
    rng = np.random.default_rng(1)
    U = rng.normal(size=(5, 6))
    # a label set: the label's own score
    np.testing.assert_allclose(spaces.Multilabel(6).max_margins(U), U, rtol=1e-12)
    # one class: its score minus the best other class's
    other = np.array([[np.delete(u, j).max() for j in range(6)] for u in U])
    np.testing.assert_allclose(spaces.Multiclass(6).max_margins(U), U - other, rtol=1e-12)


@pytest.mark.parametrize("decode_from", ["scores", "marginals"])
def test_estimator_margins_agree_with_its_predictions(decode_from):
    X, Y = linear_multilabel(120, n_labels=5, seed=3)
    est = StructuredRidge(alpha=0.1, decode_from=decode_from).fit(X, Y)
    margins = est.max_marginal_margins(X)
    assert margins.shape == Y.shape
    pred = est.predict(X)
    assert np.all(margins[pred == 1] >= 0) and np.all(margins[pred == 0] <= 0)
    if decode_from == "scores":  # label sets: the margin of label j is u_j itself
        np.testing.assert_allclose(margins, est.decision_function(X), rtol=1e-12, atol=1e-15)


def test_ranking_margins_agree_with_predicted_rankings():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 4))
    space = spaces.Permutations(5)
    Y = space.decode(X @ rng.normal(size=(4, space.dim)))
    est = StructuredRidge(space=space, alpha=0.1).fit(X, Y)
    margins = est.max_marginal_margins(X[:10])
    psi = space.embed(est.predict(X[:10]))
    assert np.all(margins[psi == 1] >= 0) and np.all(margins[psi == -1] <= 0)
    np.testing.assert_array_equal(margins, space.max_margins(est.decision_function(X[:10])))


@pytest.mark.parametrize("decode_from", ["scores", "marginals"])
def test_margins_range_over_the_empirical_measures_support(decode_from):
    """With empirical_weight=1, predict keeps the coordinates every training structure holds at one
    value there (a node that is never a target stays out); the margins range over the same
    structures: their signs agree with the predictions, those coordinates get ±inf, and the rest
    equal enumeration over the structures that hold them (a probe found margins over the whole
    space: nodes the prediction left out, on the never-seen node's only path, had positive ones)."""
    dag = [[], [0], [0], [1, 2], [3], [1], [5, 2]]
    space = spaces.DAGPaths(dag)
    rng = np.random.default_rng(0)
    y = rng.choice(6, size=40)  # node 6 is never a target
    X = rng.normal(size=(40, 3))
    est = StructuredRidge(space=space, alpha=0.7, empirical_weight=1.0, solver="exact", decode_from=decode_from)
    est.fit(X, y)
    Xq = 2 * rng.normal(size=(60, 3))
    margins, psi = est.max_marginal_margins(Xq), space.embed(est.predict(Xq))
    assert np.all(margins[psi == 1] > 0) and np.all(margins[psi == 0] < 0)
    assert np.all(margins[:, 6] == -np.inf)  # held off by every training target
    assert np.all(margins[:, 0] == np.inf)  # the root, on in every structure
    if decode_from == "marginals":
        return
    # the rest: enumeration over the training targets' support
    P = space.embed(space.enumerate()).astype(float)
    allowed = P[P[:, 6] == 0]
    V = est.decision_function(Xq)
    V[:, 6] = 0
    F = V @ allowed.T
    for j in range(1, 6):
        hi, lo = allowed[:, j] == allowed[:, j].max(), allowed[:, j] == allowed[:, j].min()
        np.testing.assert_allclose(margins[:, j], F[:, hi].max(axis=1) - F[:, lo].max(axis=1), rtol=1e-9, atol=1e-12)


def test_multiclass_estimator_and_precomputed_kernel():
    X, y = linear_multiclass(90, n_classes=3, seed=5)
    est = StructuredRidge(space="multiclass", kernel="rbf", alpha=0.1).fit(X, y)
    m = est.max_marginal_margins(X)
    np.testing.assert_array_equal(est.classes_[m.argmax(axis=1)], est.predict(X))
    K = X @ X.T
    pre = StructuredRidge(space="multiclass", kernel="precomputed", alpha=0.1).fit(K, y)
    scores = pre._scores(K[:7])  # (7, 3) even where decision_function gives a binary margin
    np.testing.assert_array_equal(pre.max_marginal_margins(K[:7]), pre.space_.max_margins(scores))


def test_approximate_decoders_are_refused():
    space = spaces.DirectedCycles(6, decoder="approximate")
    with pytest.raises(ValueError, match="exact decoder"):
        space.max_margins(np.ones((1, space.dim)))
    # at 17 labels "auto" decodes approximately; the message sent users to another quantity where
    # decoder="exact" gives the one asked for (probe DS)
    with pytest.raises(ValueError, match=r'use predict_marginals, or build the space with decoder="exact"'):
        spaces.Permutations(17).max_margins(np.ones((1, 136)))
    assert spaces.Permutations(17, decoder="exact").max_margins(np.ones((1, 136))).shape == (1, 136)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_scores_are_refused(bad):
    U = np.zeros((2, 4))
    U[1, 2] = bad
    with pytest.raises(ValueError, match="U"):
        spaces.Multilabel(4).max_margins(U)


def test_empty_input():
    assert spaces.Multilabel(3).max_margins(np.empty((0, 3))).shape == (0, 3)
