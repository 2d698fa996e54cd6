"""Every output space through StructuredRidge, on data from a noisy linear score model.

Targets are the decoded structures of noisy linear scores, Y = decode(X W + b + noise), so the best
predictor decodes X W + b and a linear StructuredRidge can learn it. Each case asserts that the
predictions are valid structures and clearly beat two trivial predictors: the structure of the mean
training score repeated for every row, and uniform random structures (both by the space's score and
by the true scores of the predicted structures). Fixed seeds; the score margins (0.1 for exact
decoders, 0.02 for the large approximate ones) are about half the smallest gap seen over ten seeds
when the test was written (0.17 and 0.043: directed cycles on 16 vertices, whose ψ is mostly 0).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import StructuredRidge, spaces

TREE = [-1] + [(v - 1) // 2 for v in range(1, 15)]  # complete binary tree, 15 nodes
RANDOM_TREE = [5, 5, 0, 0, 1, -1, 1, 2, 2, 6, 6, 9, 5]

SMALL = [
    spaces.Multiclass(5),
    spaces.Multilabel(8),
    spaces.KSubsets(10, 3),
    spaces.Ordinal(6),
    spaces.HierarchyPaths(TREE),
    spaces.HierarchyPaths(RANDOM_TREE, leaves_only=True),
    spaces.Subtrees(TREE),
    spaces.Subtrees(RANDOM_TREE),
    spaces.Permutations(6),
    spaces.PartialTournaments(5),
    spaces.DirectedCycles(7),
    spaces.UndirectedCycles(7),
    spaces.Cliques(7),
]
# Sizes beyond the exact decoders: the targets and the predictions come from the approximate path.
LARGE = [
    spaces.Permutations(20),
    spaces.DirectedCycles(16),
    spaces.UndirectedCycles(16),
    spaces.Cliques(22),
]


def _problem(space: spaces.Space, seed: int, n_train: int = 300, n_test: int = 200, n_features: int = 6):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_features, space.dim))
    b = 0.5 * rng.normal(size=space.dim)
    X = rng.normal(size=(n_train + n_test, n_features))
    U = X @ W + b + 0.3 * rng.normal(size=(n_train + n_test, space.dim))
    Y = space.decode(U)
    return X[:n_train], Y[:n_train], U[:n_train], X[n_train:], Y[n_train:], U[n_train:]


def _true_score(space: spaces.Space, Y: np.ndarray, U: np.ndarray) -> float:
    """Mean of ⟨u, ψ(y)⟩ under the generating scores u: how good the structures are for the rows."""
    return float(np.mean(np.einsum("ij,ij->i", space.embed(Y), U)))


def _check_beats_baselines(space, model, X_train, U_train, X_test, Y_test, U_test, margin):
    pred = model.predict(X_test)
    space.validate(pred)
    assert np.shape(pred)[0] == len(X_test)
    constant = space.decode(U_train.mean(axis=0, keepdims=True))
    constant = np.repeat(constant, len(X_test), axis=0)
    random = space.sample(len(X_test), random_state=0)
    ours = space.score(Y_test, pred)
    baseline = max(space.score(Y_test, constant), space.score(Y_test, random))
    assert ours > baseline + margin, (ours, baseline)
    assert ours == pytest.approx(model.score(X_test, Y_test))
    # The predicted structures are also better for the (unseen) true scores than either baseline's.
    assert _true_score(space, pred, U_test) > max(
        _true_score(space, constant, U_test), _true_score(space, random, U_test)
    )
    return pred


@pytest.mark.parametrize("space", SMALL + LARGE, ids=repr)
@pytest.mark.parametrize("seed", [0, 1])
def test_structured_ridge_learns_every_space(space, seed):
    X, Y, U, X_test, Y_test, U_test = _problem(space, seed)
    model = StructuredRidge(space=space, alpha=1.0).fit(X, Y)
    assert model.space_ == space
    assert model.coef_.shape == (space.dim, X.shape[1])
    assert model.decision_function(X_test).shape == (len(X_test), space.dim)
    margin = 0.1 if space.decoder_guarantee == 0 else 0.02
    pred = _check_beats_baselines(space, model, X, U, X_test, Y_test, U_test, margin)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X_test), pred)


@pytest.mark.parametrize("space", [spaces.Permutations(6), spaces.Subtrees(RANDOM_TREE), spaces.Cliques(7)], ids=repr)
def test_structured_ridge_kernel_on_structured_spaces(space):
    X, Y, U, X_test, Y_test, U_test = _problem(space, 3)
    model = StructuredRidge(space=space, kernel="rbf", alpha=1.0).fit(X, Y)
    _check_beats_baselines(space, model, X, U, X_test, Y_test, U_test, 0.1)


@pytest.mark.parametrize(
    "name, space",
    [
        ("permutations", spaces.Permutations(6)),
        ("dicycles", spaces.DirectedCycles(7)),
        ("ucycles", spaces.UndirectedCycles(7)),
        ("cliques", spaces.Cliques(7)),
        ("tournaments", spaces.PartialTournaments(5)),
        ("multilabel", spaces.Multilabel(6)),
    ],
)
def test_string_spaces_are_sized_from_Y(name, space):
    X, Y, U, X_test, Y_test, U_test = _problem(space, 4)
    model = StructuredRidge(space=name, alpha=1.0).fit(X, Y)
    assert model.space == name  # the parameter is kept verbatim
    assert model.space_ == space
    _check_beats_baselines(space, model, X, U, X_test, Y_test, U_test, 0.1)


def test_string_multiclass_keeps_labels():
    space = spaces.Multiclass(5)
    X, Y, U, X_test, Y_test, U_test = _problem(space, 5)
    labels = np.array(["a", "b", "c", "d", "e"])
    model = StructuredRidge(space="multiclass", alpha=1.0).fit(X, labels[Y])
    assert model.space_ == space
    pred = model.predict(X_test)
    assert set(pred) <= set(labels)
    assert np.mean(pred == labels[Y_test]) > 0.6


def test_tournaments_string_rejects_non_triangular_width():
    X = np.random.default_rng(0).normal(size=(10, 3))
    # it said "must have shape (n_samples, 6) for PartialTournaments(4)", the nearest smaller size
    for columns in (7, 4, 2):
        with pytest.raises(ValueError, match=rf"y has {columns} column\(s\); space='tournaments' takes one per pair"):
            StructuredRidge(space="tournaments").fit(X, np.zeros((10, columns), dtype=int))
    with pytest.raises(
        ValueError, match=r"^y must be 2-D \(n_samples, n_columns\) for space='tournaments', got shape \(10,\)$"
    ):
        StructuredRidge(space="tournaments").fit(X, np.zeros(10, dtype=int))
    # the argument is y (the message said "Y"), with the way out for class labels on multilabel
    with pytest.raises(ValueError, match=r"^y must be 2-D .* got shape \(10,\); for one class label per sample use"):
        StructuredRidge().fit(X, np.zeros(10, dtype=int))


def test_invalid_targets_are_rejected_with_the_row():
    space = spaces.Permutations(4)
    X = np.random.default_rng(0).normal(size=(3, 2))
    Y = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [1, 1, 3, 4]])
    with pytest.raises(ValueError, match="row 2"):
        StructuredRidge(space=space).fit(X, Y)
