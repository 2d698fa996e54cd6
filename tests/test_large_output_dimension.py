"""Pair spaces beyond d = 4096: StructuredRidge applies S as an operator and never stores it."""

import numpy as np
import pytest
from combpred import StructuredRidge, spaces
from combpred.metrics import kendall_tau


@pytest.fixture(scope="module")
def rankings():
    space = spaces.Permutations(100)  # d = 4950
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    scores = X @ rng.normal(size=(5, 100))  # a linear score per label; rank 1 = highest
    return space, X, np.argsort(np.argsort(-scores, axis=1), axis=1) + 1


def test_linear_fit_beyond_dense_limit(rankings):
    space, X, Y = rankings
    assert space.dim > 4096
    model = StructuredRidge(space=space, alpha=0.1).fit(X, Y)
    assert model.relative_gradient_ <= 1e-8
    assert model.coef_.shape == (space.dim, 5)
    # Rankings by linear label scores: the fit agrees with them far above chance (τ = 0). The
    # operator path's optimum itself is checked against the exact solver in Go (operator_test.go).
    predicted = model.predict(X)
    space.validate(predicted)
    assert kendall_tau(Y, predicted) > 0.5


@pytest.mark.parametrize(
    "params", [{"solver": "exact"}, {"solver": "sgd"}, {"kernel": "rbf"}], ids=["exact", "sgd", "rbf"]
)
def test_dense_paths_refused_with_reason(rankings, params):
    space, X, Y = rankings
    with pytest.raises(ValueError, match="4096"):
        StructuredRidge(space=space, **params).fit(X, Y)


def test_partial_fit_refused_with_reason(rankings):
    space, X, Y = rankings
    with pytest.raises(ValueError, match="partial_fit"):
        StructuredRidge(space=space).partial_fit(X, Y)
