"""Small synthetic problems whose labels are a (noiseless) function of X, and brute-force moments."""

from __future__ import annotations

import numpy as np
from combpred import spaces


def linear_multilabel(n_samples: int, n_features: int = 5, n_labels: int = 4, seed: int = 0):
    """Labels are the signs of a random linear function of X: a linear model can be near perfect."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_features, n_labels))
    b = 0.3 * rng.normal(size=n_labels)
    X = rng.normal(size=(n_samples, n_features))
    Y = (X @ W + b > 0).astype(np.int64)
    return X, Y


def linear_multiclass(n_samples: int, n_features: int = 5, n_classes: int = 3, seed: int = 0):
    """The class is the argmax of a random linear function of X."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(n_features, n_classes))
    X = rng.normal(size=(n_samples, n_features))
    y = np.argmax(X @ W, axis=1)
    return X, y


def multilabel_split():
    """(X_train, Y_train, X_test, Y_test) of a 4-label problem with 5 features."""
    X, Y = linear_multilabel(400, seed=1)
    return X[:200], Y[:200], X[200:], Y[200:]


def multiclass_split():
    """(X_train, y_train, X_test, y_test) of a 3-class problem with 5 features."""
    X, y = linear_multiclass(400, seed=2)
    return X[:200], y[:200], X[200:], y[200:]


def brute_moments(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of ψ under the uniform distribution, by enumerating the space."""
    E = space.embed(space.enumerate())
    return E.mean(axis=0), np.cov(E.T, bias=True).reshape(space.dim, space.dim)
