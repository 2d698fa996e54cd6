"""Reference baselines to compare combpred's estimators against.

These are the standard methods a study of structured prediction reports next to its own: they are
here so that benchmarks and examples can run them in the same process, on the same encodings, with
scikit-learn's conventions. They are plain NumPy/scikit-learn code, kept simple and readable rather
than fast, and are **not** part of the method of Vembu's thesis.

``KNNBordaRanker``
    instance-based label ranking: the Borda count of the k nearest neighbours' rankings
    (Cheng, Hühn & Hüllermeier 2009; scikit-lr's ``KNeighborsLabelRanker``).
``PairwiseRanker``
    ranking by pairwise comparison: one binary classifier per label pair, aggregated by weighted
    voting (Hüllermeier, Fürnkranz, Cheng & Brinker 2008).
``StructuredSVM``
    a margin-rescaled structured SVM for any :mod:`combpred.spaces` space, trained by stochastic
    subgradient descent with exact loss-augmented decoding or with the best of N uniform samples
    (the approximate decoding of the thesis' dicycle experiment).

Rankings are rows of ranks, ``y[j]`` = position of label j, 1 = best, as in
:class:`combpred.spaces.Permutations`; training rankings must be complete (no ties).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import warnings
from typing import Any

import numpy as np
from scipy import sparse as _sparse
from sklearn.base import BaseEstimator, clone, is_regressor
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state, get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_parameter_constraints
from sklearn.utils.validation import column_or_1d

from . import _capi
from . import spaces as _spaces
from ._estimator_base import (
    _are_sorted_labels,
    _check_unseen_labels,
    _one_label_per_sample,
    class_label_vector,
    class_labels,
    class_rows,
    multilabel_classes,
    validate_data,
)
from ._schema import Number
from ._weights import check_sample_weight, weighted_mean
from .metrics import _check_permutations, _check_rankings, kendall_tau

__all__ = ["KNNBordaRanker", "PairwiseRanker", "StructuredSVM"]


# Label totals closer than this, relative to the row's largest, are ties: totals equal in exact
# arithmetic (votes p and 1 − p, Borda points times 1/3) differ by their sums' rounding, a few
# units of 1e-16 per term, which broke their ties by the order of the additions (probe EW).
_TIE_TOLERANCE = 1e-12


def _scores_to_ranks(scores: np.ndarray) -> np.ndarray:
    """Rank rows from label scores: the highest score gets rank 1; ties (scores within
    ``_TIE_TOLERANCE`` of the row's largest finite magnitude of the highest score of their tie)
    go to the lower label index; NaN scores rank last."""
    n = scores.shape[1]
    order = np.argsort(-scores, axis=1, kind="stable")  # NaN last
    ordered = np.take_along_axis(scores, order, axis=1)
    finite = np.where(np.isfinite(scores), np.abs(scores), 0.0)
    tol = _TIE_TOLERANCE * finite.max(axis=1, initial=0.0)
    group = np.zeros(scores.shape, dtype=np.int64)  # in sorted order: how many clear drops above
    head = ordered[:, 0].copy()  # the highest score of the current tie: closeness does not chain
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(1, n):
            drop = ~(head - ordered[:, j] <= tol)  # NaN (a NaN score, inf − inf) breaks too
            group[:, j] = group[:, j - 1] + drop
            head = np.where(drop, ordered[:, j], head)
    by_label = np.empty_like(group)
    np.put_along_axis(by_label, order, group, axis=1)
    final = np.argsort(by_label * n + np.arange(n)[None, :], axis=1, kind="stable")
    ranks = np.empty(scores.shape, dtype=np.int64)
    np.put_along_axis(ranks, final, np.arange(1, n + 1)[None, :], axis=1)
    return ranks


# An integer ≥ 1 that is no bool: the rule of the estimators' integer parameters, for fitted counts.
_COUNT = Number(numbers.Integral, 1, None, closed="left")


def _are_rankings(Y: Any, rows: int, n_labels: int) -> bool:
    """Whether Y is an integer array of ``rows`` rankings of n_labels labels (metrics' rule)."""
    if not (isinstance(Y, np.ndarray) and Y.dtype.kind in "iu" and Y.shape == (rows, n_labels)):
        return False
    try:
        _check_permutations(Y, "Y_fit_")
    except ValueError:
        return False
    return True


def _same_value(a: Any, b: Any) -> bool:
    """Whether two fitted values are equal (arrays element by element, NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    try:
        return bool(a == b)
    except Exception:  # objects without a comparison to a bool (estimators): only identity counts
        return False


class _FittedOnce:
    """A fit that is published whole and queries that read it once.

    ``fit`` builds everything in locals and hands it to ``_publish``, which sets the fitted
    attributes and then ``_state``, the dict of them a query reads once (``_snapshot``): a query
    racing a refit in another thread uses one fit or the other, never a mix (the neighbour index of
    one with the rankings of another), and a fit that fails leaves no model (``_forget`` first).
    ``_FITTED`` names the attributes of the state, from which an older pickle's is rebuilt.
    """

    _FITTED: tuple[str, ...] = ()

    def _forget(self) -> None:
        """Forget a previous fit, so that a fit that fails leaves no half-updated model."""
        vars(self).pop("_state", None)  # first: the fitted attributes are read-only while it is set
        for key in list(vars(self)):
            if key.endswith("_") and not key.startswith("_"):
                delattr(self, key)

    def _publish(self, **fitted: Any) -> None:
        """Set the fitted attributes (those that are None stay unset: StructuredSVM's ``classes_``
        outside multiclass), then the state queries read."""
        vars(self).update({key: value for key, value in fitted.items() if value is not None})
        self._state = self._state_of_attributes()  # last: what a query reads

    def _state_of_attributes(self) -> dict[str, Any]:
        return {key: vars(self).get(key) for key in (*self._FITTED, "n_features_in_")}

    def __sklearn_is_fitted__(self) -> bool:
        return "_state" in vars(self)

    def _is_locked(self, name: str) -> bool:
        """Whether ``name`` is a fitted attribute of a fit in place (read-only until the next fit)."""
        return name in (*self._FITTED, "n_features_in_") and "_state" in vars(self)

    def __setattr__(self, name: str, value: Any) -> None:
        # Queries read the fitted state, not these attributes: an assignment to one of them was
        # silently ignored (coef_ set to zeros, predictions unchanged; probe CA). Refused, as
        # StructuredRidge's read-only coef_ is; a fit sets them after _forget.
        if self._is_locked(name):
            raise AttributeError(
                f"{name} is a fitted attribute of this {type(self).__name__}, read-only: queries use the fit's "
                "own; fit again to change it"
            )
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if self._is_locked(name):
            raise AttributeError(f"{name} is a fitted attribute of this {type(self).__name__}, read-only: fit again")
        super().__delattr__(name)

    def _snapshot(self) -> dict[str, Any]:
        state = vars(self).get("_state")
        if state is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate arguments "
                "before using this estimator."
            )
        return state

    def _query(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        """Validate query rows against the fit of ``state`` (not the live attributes a refit resets)."""
        X = validate_data(self, X, reset=False, dtype=np.float64, order="C")
        if X.shape[1] != state["n_features_in_"]:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {state['n_features_in_']} "
                "features as input."
            )
        return X

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if "_state" not in vars(self) and all(key in vars(self) for key in (self._FITTED[0], "n_features_in_")):
            self._state = self._state_of_attributes()  # a pickle of a version without it
        fitted = vars(self).get("_state")
        if fitted is not None and not (isinstance(fitted, dict) and set(fitted) >= {*self._FITTED, "n_features_in_"}):
            raise ValueError(f"inconsistent pickle of {type(self).__name__}: its fitted state lacks attributes")
        if fitted is not None:
            # the fitted attributes must be one fit's: a reversed classes_ or pairs_, or rankings
            # that are no rankings, predicted other labels without a word (probe Q)
            problem = self._inconsistency(fitted) or self._differs_from_state(fitted)
            if problem:
                raise ValueError(f"inconsistent pickle of {type(self).__name__}: {problem}")

    def _differs_from_state(self, fitted: dict[str, Any]) -> str | None:
        """Which public fitted attribute is not the state's (None: all are): queries read the
        state, so an attribute altered in the pickle was shown but not used (probe CA). One pickle
        keeps them one object, so an unaltered attribute is the state's own."""
        for key in (*self._FITTED, "n_features_in_"):
            shown, used = vars(self).get(key), fitted.get(key)
            if shown is not used and not _same_value(shown, used):
                return f"{key} differs from the fitted state its queries use; the pickle was altered"
        return None

    def _inconsistency(self, state: dict[str, Any]) -> str | None:
        """What in the fitted state cannot come from one fit (None: nothing), beyond
        ``n_features_in_``, a positive integer."""
        n_features = state.get("n_features_in_")
        if not _COUNT.is_satisfied_by(n_features):
            return f"n_features_in_={n_features!r} is not a positive integer"
        return None


class _RankerMixin(_FittedOnce):
    """Tags, ``predict`` (rankings from label scores) and ``score`` (mean Kendall τ) shared by the
    label rankers; a ranker supplies its label scores through ``_label_scores``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        return tags

    def _fit_data(self, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        if y is not None and not _capi.is_sparse(y):
            # named here: a Series of rank arrays or an object array of tuples got NumPy's words
            # ("truth value of an array ... is ambiguous", "setting an array element with a sequence")
            y = _capi.numeric_objects(_capi.as_array(y, "y"))
            if y.dtype.kind not in "biuf":
                raise TypeError(
                    f"y must hold integer ranks, rows of a 2-D array (n_samples, n_labels), got dtype {y.dtype}"
                )
        X, Y = validate_data(self, X, y, multi_output=True, dtype=np.float64, y_numeric=True)
        if Y.ndim != 2:  # one ranking to the metrics, a column of one label per sample here
            raise ValueError(f"y must be 2-D (n_samples, n_labels) rank rows, got shape {Y.shape}")
        Y = _check_rankings(Y, "y")
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has {Y.shape[0]}")
        return X, Y

    def _label_scores(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        """Scores of the labels for each query, shape (n_queries, n_labels); higher is better."""
        raise NotImplementedError

    def predict(self, X: Any) -> np.ndarray:
        """Predict rankings: each query's labels by decreasing score — the Borda count of the
        neighbours' rankings (KNNBordaRanker) or the weighted votes (PairwiseRanker).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        Y : ndarray of shape (n_queries, n_labels)
            Rank rows, 1 = best; ties (totals within 1e-12 of the row's largest, the rounding of their sums) go to the lower label index.
        """
        return _scores_to_ranks(self._label_scores(X, self._snapshot()))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean Kendall τ between ``predict(X)`` and the rank rows ``y`` (1.0 is perfect).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels)
            True rank rows.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        tau : float
        """
        state = self._snapshot()
        Y = _check_rankings(y, "y")
        if Y.shape[1] != state["n_labels_"]:  # it read "Y_true row 0 is [...], not a permutation of 1..3"
            raise ValueError(f"y ranks {Y.shape[1]} labels, but the model ranks {state['n_labels_']}")
        return float(kendall_tau(Y, _scores_to_ranks(self._label_scores(X, state)), sample_weight=sample_weight))


def _check_neighbours(k: int, rows: int) -> None:
    if k > rows:
        raise ValueError(f"n_neighbors={k} exceeds the number of training samples {rows}")


class KNNBordaRanker(_RankerMixin, BaseEstimator):
    """Label ranking by the Borda count of the k nearest neighbours' rankings (baseline).

    A query gets the consensus of its ``n_neighbors`` nearest training rankings: in each neighbour's
    ranking of n labels the label at rank r receives n + 1 − r points (weighted by the neighbour's
    weight), and labels are ranked by their total, ties going to the lower label index. This is the
    instance-based label ranker of Cheng, Hühn & Hüllermeier (ICML 2009) for complete rankings, and
    what scikit-lr's ``KNeighborsLabelRanker`` computes.

    Parameters
    ----------
    n_neighbors : int, default=5
        Number of neighbours (at most the number of training samples). Like ``weights``, read
        when predicting, as scikit-learn's ``KNeighborsClassifier`` reads it: ``set_params``
        after the fit applies without a refit.
    weights : {"uniform", "distance"}, default="uniform"
        ``"distance"`` weights a neighbour by the inverse of its distance; when a query coincides with
        training points, those points alone vote (with equal weight).
    metric : str or callable, default="minkowski"
        Distance, as in :class:`sklearn.neighbors.NearestNeighbors`.
    p : float, default=2
        Power of the Minkowski metric (2: Euclidean).
    n_jobs : int, default=None
        Parallel jobs of the neighbour search (joblib's convention: -1 all cores; more jobs than
        cores use every core).

    Attributes
    ----------
    n_labels_ : int
        Number of ranked labels.
    n_features_in_ : int
        Number of features seen during fit.
    nn_ : sklearn.neighbors.NearestNeighbors
        The fitted neighbour index.
    Y_fit_ : ndarray of shape (n_samples, n_labels)
        The training rankings.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[1, 2, 3], [2, 1, 3], [1, 2, 3], [3, 1, 2]])
    >>> KNNBordaRanker(n_neighbors=3).fit(X, Y).predict([[1.1], [2.2]])
    array([[1, 2, 3],
           [2, 1, 3]])
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Number(numbers.Integral, 1, None, closed="left")],
        "weights": [StrOptions({"uniform", "distance"})],
        "metric": [str, callable],
        "p": [Number(numbers.Real, 0, None, closed="neither")],
        # joblib's: 0 has no meaning (it failed at the first predict, naming no estimator)
        "n_jobs": [
            Number(numbers.Integral, None, -1, closed="right"),
            Number(numbers.Integral, 1, None, closed="left"),
            None,
        ],
    }
    _FITTED = ("nn_", "Y_fit_", "n_labels_")

    def _inconsistency(self, state: dict[str, Any]) -> str | None:
        nn, Y, n_labels = state["nn_"], state["Y_fit_"], state["n_labels_"]
        if not _COUNT.is_satisfied_by(n_labels):
            return f"n_labels_={n_labels!r} is not a positive integer"
        if not isinstance(nn, NearestNeighbors) or not hasattr(nn, "n_samples_fit_"):
            return f"nn_ is a {type(nn).__name__}, not a fitted NearestNeighbors"
        if getattr(nn, "n_features_in_", None) != state["n_features_in_"]:
            return f"nn_ takes {getattr(nn, 'n_features_in_', None)} features, but n_features_in_={state['n_features_in_']}"
        if not _are_rankings(Y, nn.n_samples_fit_, n_labels):
            return f"Y_fit_ is not {nn.n_samples_fit_} rankings (rows of 1..{n_labels}), one per row of nn_"
        return super()._inconsistency(state)

    def __init__(
        self, n_neighbors: int = 5, weights: str = "uniform", metric: Any = "minkowski", p: float = 2, n_jobs=None
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.p = p
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a precomputed distance matrix is pairwise: cross-validation then splits its columns too,
        # as for KNeighborsClassifier (the folds got rows of it only, and every fit failed)
        tags.input_tags.pairwise = self.metric == "precomputed"
        return tags

    def fit(self, X: Any, y: Any) -> KNNBordaRanker:
        """Store the training rankings and index the inputs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels)
            Rank rows, each a permutation of 1..n_labels.

        Returns
        -------
        self : KNNBordaRanker
        """
        self._forget()
        self._validate_params()
        X, Y = self._fit_data(X, y)
        _check_neighbours(self.n_neighbors, X.shape[0])
        self._check_scale(X)
        # p as a Python float: NearestNeighbors' own check failed on p=2**64 with NumPy's words
        # n_jobs beyond the cores as all the cores: joblib refuses more than 500,000 jobs at the first
        # predict, with words that name no parameter (n_jobs=2**70)
        n_jobs = self.n_jobs if self.n_jobs is None else min(self.n_jobs, os.cpu_count() or 1)
        nn = NearestNeighbors(n_neighbors=self.n_neighbors, metric=self.metric, p=float(self.p), n_jobs=n_jobs)
        nn.fit(X)
        # a copy: the rankings a later predict reads are those checked now, whatever the caller's y becomes
        self._publish(nn_=nn, Y_fit_=Y.copy(), n_labels_=Y.shape[1])
        return self

    def _check_scale(self, X: np.ndarray) -> None:
        """Refuse training inputs so close together that a Minkowski distance's powers underflow:
        every distance was then 0 and every query got the same, arbitrary neighbours."""
        power = {"euclidean": 2.0, "l2": 2.0, "sqeuclidean": 2.0, "minkowski": float(self.p)}.get(self.metric)
        if power is None or X.shape[0] < 2:
            return
        with np.errstate(over="ignore"):
            spread = float((X.max(axis=0) - X.min(axis=0)).max())
        # below the smallest subnormal every power is 0 (between it and the smallest normal the
        # distances lose digits but still order the neighbours)
        if 0 < spread < np.finfo(np.float64).smallest_subnormal ** (1 / power):
            raise ValueError(
                f"the training inputs differ by at most {spread:.3g}: their distances' {power:g}-th powers underflow "
                "float64, so every query would get the same neighbours; scale X up, e.g. with StandardScaler"
            )
        if self.metric == "minkowski" and power != 2 and 0 < spread < math.inf:
            # the largest distance (Σ|d|^p)^(1/p) of n features: its sum of powers, then its root,
            # must stay finite (p = 1e308 gave every distance 0, every query the same neighbours;
            # at p = 1e-3 the root overflowed, and the message blamed X's scale)
            n, most = X.shape[1], math.log(np.finfo(np.float64).max)
            if power * math.log(spread) + math.log(n) > most or math.log(spread) + math.log(n) / power > most:
                raise ValueError(
                    f"p={self.p!r}: the Minkowski distances of the training inputs overflow float64 (their largest "
                    f"difference {spread:.3g} over {n} features, to the power p and back by the 1/p-th root); use a p "
                    "nearer 2, or metric='chebyshev' for the limit p → ∞"
                )

    def _label_scores(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        """The Borda count of each query's neighbours' rankings, weighted by ``weights``.

        ``n_neighbors`` and ``weights`` are read at the query, as scikit-learn's
        ``KNeighborsClassifier`` reads them (the first was fixed at the fit and the second read
        live, an invalid value as "uniform"; probe CA); ``metric`` and ``p`` are the index's."""
        k, weights = self.n_neighbors, self.weights
        validate_parameter_constraints(
            {name: self._parameter_constraints[name] for name in ("n_neighbors", "weights")},
            {"n_neighbors": k, "weights": weights},
            caller_name=type(self).__name__,
        )
        _check_neighbours(k, state["nn_"].n_samples_fit_)
        X = self._query(X, state)
        q, n_labels = X.shape[0], state["n_labels_"]
        # the neighbours' distances and indices, the scores and one neighbour's points at a time (a
        # (queries, k, labels) array took 1.7 GB under a 50 MB budget)
        _capi.check_bytes(8 * q * (2 * k + 2 * n_labels), f"the Borda counts of {q} queries × {k} neighbours")
        dist, ind = state["nn_"].kneighbors(X, n_neighbors=k)
        if not np.all(np.isfinite(dist)):  # every query then had the same, arbitrary neighbours
            i = int(np.flatnonzero(~np.isfinite(dist).all(axis=1))[0])
            if np.isnan(dist[i]).any() or callable(self.metric):  # a callable metric's answer: nothing overflowed
                bad = "NaN" if np.isnan(dist[i]).any() else "infinity"
                raise ValueError(f"the metric returned {bad} for a distance from X row {i} to the training inputs")
            raise ValueError(
                f"the distances from X row {i} to the training inputs overflow float64 (largest |value| of the row "
                f"{np.abs(X[i]).max():.3g}): scale X and the training inputs down, e.g. with StandardScaler"
                + (f", or use a p nearer 2 (p={self.p!r})" if self.metric == "minkowski" and float(self.p) != 2 else "")
            )
        if weights == "distance":
            # relative to the nearest: 1/dist overflowed for a subnormal distance, every label tied at inf
            nearest = dist.min(axis=1, keepdims=True)
            exact = dist == 0
            with np.errstate(divide="ignore", invalid="ignore"):
                w = np.where(exact.any(axis=1, keepdims=True), exact.astype(np.float64), nearest / dist)
        else:
            w = np.ones_like(dist)
        Y_fit = state["Y_fit_"]
        scores = np.zeros((q, n_labels))
        for j in range(k):
            scores += w[:, j, None] * (n_labels + 1 - Y_fit[ind[:, j]])
        return scores


class PairwiseRanker(_RankerMixin, BaseEstimator):
    """Ranking by pairwise comparison: one binary classifier per label pair (baseline).

    For every pair of labels u < v a clone of ``estimator`` learns whether u is ranked before v.
    A query's labels are ranked by weighted voting: label u collects Σ_{v ≠ u} P(u before v), with
    P(v before u) = 1 − P(u before v), and the highest total gets rank 1 (ties: lower label index)
    — the RPC method of Hüllermeier, Fürnkranz, Cheng & Brinker (Artificial Intelligence, 2008).

    Parameters
    ----------
    estimator : classifier, default=None
        Binary classifier cloned for each pair; None means
        ``sklearn.linear_model.LogisticRegression()``. Its ``predict_proba`` gives the votes; a
        classifier without it votes 0/1 through ``predict``.

    Attributes
    ----------
    estimators_ : list of classifiers
        One fitted classifier per pair, in the order of ``pairs_``. A pair whose order never varies
        in the training data gets a ``DummyClassifier`` that always answers that order.
    pairs_ : ndarray of shape (n_pairs, 2)
        The label pairs (u, v), u < v, in the order of :class:`combpred.spaces.Permutations`' ψ.
    n_labels_ : int
        Number of ranked labels.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> scores = np.c_[X[:, 0], X[:, 1], -X[:, 0]]
    >>> Y = np.argsort(np.argsort(-scores, axis=1), axis=1) + 1
    >>> PairwiseRanker().fit(X, Y).score(X, Y) > 0.9
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"]), None],
    }
    _FITTED = ("estimators_", "pairs_", "n_labels_")

    def _inconsistency(self, state: dict[str, Any]) -> str | None:
        estimators, pairs, n_labels = state["estimators_"], state["pairs_"], state["n_labels_"]
        if not _COUNT.is_satisfied_by(n_labels):
            return f"n_labels_={n_labels!r} is not a positive integer"
        iu, iv = np.triu_indices(n_labels, k=1)
        if not (isinstance(pairs, np.ndarray) and np.array_equal(pairs, np.c_[iu, iv])):
            return f"pairs_ is not the {len(iu)} label pairs u < v of {n_labels} labels in lexicographic order"
        if not isinstance(estimators, list) or len(estimators) != len(iu):
            return f"estimators_ is not a list of {len(iu)} classifiers, one per pair"
        for k, model in enumerate(estimators):
            features, classes = getattr(model, "n_features_in_", None), getattr(model, "classes_", None)
            if features is not None and features != state["n_features_in_"]:
                return f"estimators_[{k}] takes {features} features, but n_features_in_={state['n_features_in_']}"
            if classes is None or not set(np.asarray(classes).tolist()) <= {0, 1}:
                return f"estimators_[{k}] is not a fitted classifier of the classes 0 and 1"
        return super()._inconsistency(state)

    def __init__(self, estimator: Any = None):
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the inner classifier's precomputed kernel or distances are pairwise for this ranker too,
        # as OneVsRestClassifier passes the tag on
        if self.estimator is not None:
            tags.input_tags.pairwise = get_tags(self.estimator).input_tags.pairwise
        return tags

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> PairwiseRanker:
        """Fit one classifier per label pair.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels)
            Rank rows, each a permutation of 1..n_labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to every pairwise classifier's ``fit``.

        Returns
        -------
        self : PairwiseRanker
        """
        from sklearn.dummy import DummyClassifier

        self._forget()
        self._validate_params()
        X, Y = self._fit_data(X, y)
        base = LogisticRegression() if self.estimator is None else self.estimator
        if is_regressor(base):  # it was fitted, and predict met its missing classes_ (duck-typed classifiers pass)
            raise ValueError(
                f"estimator must be a classifier (it learns whether label u is ranked before v), got {base!r}"
            )
        n = Y.shape[1]
        iu, iv = np.triu_indices(n, k=1)
        sw = check_sample_weight(sample_weight, X.shape[0])  # scikit-learn took negative weights
        if sw is not None and not np.isfinite(sw.sum()):  # LogisticRegression fitted zeros, every vote 0.5
            raise ValueError(f"sample_weight sums to more than {np.finfo(np.float64).max:.3g}: rescale the weights")
        fit_kw = {} if sw is None else {"sample_weight": sw}
        if sw is not None:
            _check_takes_sample_weight(base)
        estimators = []
        for u, v in zip(iu, iv, strict=True):
            target = (Y[:, u] < Y[:, v]).astype(np.int64)
            model = DummyClassifier(strategy="prior") if np.all(target == target[0]) else clone(base)
            estimators.append(model.fit(X, target, **fit_kw))
        self._publish(estimators_=estimators, pairs_=np.c_[iu, iv], n_labels_=n)
        return self

    def predict_pair_proba(self, X: Any) -> np.ndarray:
        """Probability that u is ranked before v, for each pair u < v (the order of ``pairs_``).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        P : ndarray of shape (n_queries, n_pairs)
            2P − 1 is a score vector in the ψ-coordinates of :class:`combpred.spaces.Permutations`,
            so ``Permutations(n).decode(2 * P - 1)`` gives the ranking that agrees with the
            classifiers on the largest total probability (instead of voting).
        """
        state = self._snapshot()
        X = self._query(X, state)
        estimators = state["estimators_"]
        _capi.check_bytes(8 * X.shape[0] * len(estimators), f"the pair probabilities of {X.shape[0]} queries")
        P = np.empty((X.shape[0], len(estimators)))
        for k, model in enumerate(estimators):
            P[:, k] = _before(model, X)
        return P

    def predict_votes(self, X: Any) -> np.ndarray:
        """Weighted votes per label, Σ_{v ≠ u} P(u before v); higher is better.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        votes : ndarray of shape (n_queries, n_labels)
        """
        return self._label_scores(X, self._snapshot())

    def _label_scores(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        X = self._query(X, state)
        q, n = X.shape[0], state["n_labels_"]
        # the votes and one pair's probabilities at a time (all pairs' took 2.3 GB under a 50 MB budget)
        _capi.check_bytes(8 * q * (2 * n + 1), f"the votes of {q} queries × {n} labels")
        votes = np.zeros((n, q))
        for (u, v), model in zip(state["pairs_"], state["estimators_"], strict=True):
            p = _before(model, X)
            votes[u] += p
            votes[v] += 1.0 - p
        return votes.T.copy()


def _before(model: Any, X: np.ndarray) -> np.ndarray:
    """P(u before v) of one pair's classifier (its 0/1 vote without ``predict_proba``)."""
    classes = list(model.classes_)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)[:, classes.index(1)] if 1 in classes else np.zeros(X.shape[0])
    return (model.predict(X) == 1).astype(np.float64)


def _check_takes_sample_weight(base: Any) -> None:
    """Refuse sample_weight for a pairwise classifier whose fit cannot take it, naming both: its
    own TypeError named neither PairwiseRanker nor the parameter, and a Pipeline's advice to pass
    step__sample_weight cannot be followed through PairwiseRanker.fit (probe 84)."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import has_fit_parameter

    try:
        parameters = inspect.signature(base.fit).parameters.values()
    except (AttributeError, TypeError, ValueError):  # no fit, or one without a signature: its own error
        return
    keywords = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    if has_fit_parameter(base, "sample_weight") or (keywords and not isinstance(base, Pipeline)):
        return
    reason = (
        "a Pipeline takes fit parameters by step (step__sample_weight), which PairwiseRanker does not route"
        if isinstance(base, Pipeline)
        else f"{type(base).__name__}.fit takes no sample_weight"
    )
    raise ValueError(
        f"sample_weight is passed to every pairwise classifier's fit, and {reason}: use an estimator whose fit "
        "takes it, or fit without sample_weight"
    )


class StructuredSVM(_FittedOnce, BaseEstimator):
    """Margin-rescaled structured SVM for any combpred space, by stochastic subgradient (baseline).

    Scores are linear in ψ: f(x, y) = ⟨u(x), ψ(y)⟩ with u(x) = Wᵀx (+ b), and prediction decodes
    argmax_y f(x, y) with the space's decoder, as for :class:`combpred.StructuredRidge`. Training
    minimises

        (alpha / 2) (‖W‖² + ‖b‖² / r²) + (1/m) Σ_i max_z [Δ(y_i, z) + f(x_i, z) − f(x_i, y_i)],
        Δ(y, z) = ‖ψ(y) − ψ(z)‖² / 2,

    on X centred (with ``fit_intercept``; the intercept takes the mean back, so the model is the
    same for X shifted by a constant), b being the weight of a constant feature r, the rows' root
    mean square norm after centring, as liblinear's ``intercept_scaling`` treats it. The minimisation
    is by Pegasos-style stochastic subgradient steps: step 1/(alpha·t), mini-batches, a projection
    onto the ball (alpha/2)(‖W‖² + ‖b‖²/r²) ≤ J(0) that holds the minimiser (with
    ``decoding="sampled"``, an upper bound of J(0) from the range of ψ's coordinates), and the mean
    of the iterates weighted by their step number t. The fit ends by evaluating J at that mean and at
    the last iterate (with ``decoding="sampled"``, its estimate by the same samples for both),
    keeps the lower, and warns (``ConvergenceWarning``) when it is above J(0), the all-zero model's,
    by more than 0.1 %. Δ is 1 per wrong class for multiclass, half the Hamming distance of ψ for 0/1-ψ
    spaces and twice the number of discordant pairs for permutations; rescaling Δ is equivalent to
    rescaling ``alpha``.

    The inner maximisation ("loss-augmented decoding") is done in one of two ways:

    ``decoding="exact"``
        Δ(y, z) is linear in ψ(z) when ψ is 0/1 (‖ψ(z)‖² = ⟨1, ψ(z)⟩) or when ‖ψ(z)‖² is the same for
        every z (permutations), so the maximiser is ``space.decode(u − ψ(y) + ½·1)`` resp.
        ``space.decode(u − ψ(y))``. This covers multiclass, multilabel, k-subsets, ordinal, hierarchy
        paths, subtrees, undirected cycles, cliques and permutations. It is exact when the space's
        decoder is (``space.decoder_guarantee == 0``) and approximate otherwise. Directed cycles and
        partial tournaments (ψ in {−1, 0, 1}) are refused: use ``"sampled"``.
    ``decoding="sampled"``
        The best of ``n_samples`` uniform samples (``space.sample``) and y_i itself, scored exactly —
        the approximate decoding of the structured SVM in the thesis' dicycle experiment (25
        samples there). Works for every space with a uniform sampler (all but
        :class:`~combpred.spaces.DAGSubsets`, which refuses it; use ``"exact"`` there).

    Parameters
    ----------
    space : str or combpred.spaces.Space, default="multilabel"
        The output space. ``"multiclass"`` takes any class labels (1-D); the other names of
        :func:`combpred.spaces.from_name` size the space from Y; a space object takes y in its own
        encoding.
    alpha : float, default=1e-3
        Regularisation strength (> 0).
    max_iter : int, default=50
        Number of passes (epochs) over the training data.
    decoding : {"exact", "sampled"}, default="exact"
        Loss-augmented decoding, see above.
    n_samples : int, default=25
        Uniform samples per example and step when ``decoding="sampled"``.
    batch_size : int, default=16
        Examples per subgradient step.
    fit_intercept : bool, default=True
        Learn an offset b of the scores, the weight of a constant feature (see above); X is centred
        for the fit.
    random_state : int, RandomState instance or None, default=None
        Seeds the example order and the samples of ``decoding="sampled"``.

    Attributes
    ----------
    space_ : combpred.spaces.Space
        The output space.
    classes_ : ndarray
        Class labels (``space="multiclass"``), a Multiclass space's ids 0 … n − 1, or a multi-label
        model's label indices 0 … n_labels − 1 (as StructuredRidge's); unset on other spaces.
    coef_ : ndarray of shape (d, n_features)
        The weights (the weighted mean of the iterates, or the last iterate where its J is lower),
        one row per coordinate of ψ as in scikit-learn's linear models: scores are
        ``X @ coef_.T + intercept_``.
    intercept_ : ndarray of shape (d,)
        The offset, for X as given (b − Wᵀ·mean(X); zeros without ``fit_intercept``).
    loss_curve_ : list of float
        Mean structured hinge loss over each epoch, measured during the epoch (with the sampled
        decoder, a lower bound of the true hinge).
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        Number of features seen during fit.
    sparse_output_ : bool
        Whether ``fit`` was given a sparse Y: ``predict`` then returns a scipy.sparse CSR matrix.
    """

    _parameter_constraints: dict = {
        "space": [StrOptions(set(_spaces._BY_NAME) | {"tournaments"}), _spaces.Space],
        "alpha": [Number(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Number(numbers.Integral, 1, None, closed="left")],
        "decoding": [StrOptions({"exact", "sampled"})],
        "n_samples": [Number(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Number(numbers.Integral, 1, None, closed="left")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
    }
    _FITTED = ("space_", "coef_", "intercept_", "classes_", "loss_curve_", "n_iter_", "sparse_output_")
    # coef_ was (n_features, d) until session 46: a pickle carries the layout of its coef_, and one
    # without it is read as the old one (a square coef_ would otherwise load transposed, silently)
    _COEF_LAYOUT = "(d, n_features)"

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), "_coef_layout": self._COEF_LAYOUT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        old = state.get("coef_")
        if state.pop("_coef_layout", None) != self._COEF_LAYOUT and isinstance(old, np.ndarray) and old.ndim == 2:
            state["coef_"] = np.ascontiguousarray(old.T)
            if isinstance(state.get("_state"), dict):
                state["_state"] = {**state["_state"], "coef_": state["coef_"]}
        super().__setstate__(state)

    def _inconsistency(self, state: dict[str, Any]) -> str | None:
        space, W, b, classes = state["space_"], state["coef_"], state["intercept_"], state["classes_"]
        if not isinstance(space, _spaces.Space):
            return f"space_ is a {type(space).__name__}, not a combpred space"
        shapes = {"coef_": (space.dim, state["n_features_in_"]), "intercept_": (space.dim,)}
        for name, value in (("coef_", W), ("intercept_", b)):
            if not (isinstance(value, np.ndarray) and value.dtype == np.float64 and value.shape == shapes[name]):
                return f"{name} is not a float64 array of shape {shapes[name]}"
            if not np.isfinite(value).all():
                return f"{name} holds values that are not finite"
        # checked against the fitted space only: set_params(space=...) since the fit is legitimate
        if classes is not None and not isinstance(space, (_spaces.Multiclass, _spaces.Multilabel)):
            return f"classes_ is set, but space_ is a {type(space).__name__}, not a Multiclass or Multilabel space"
        if classes is not None and not (_are_sorted_labels(classes) and len(classes) == space.dim):
            return f"classes_ is not the {space.dim} sorted, distinct labels of space_"
        return super()._inconsistency(state)

    def __init__(
        self,
        space: Any = "multilabel",
        alpha: float = 1e-3,
        max_iter: int = 50,
        decoding: str = "exact",
        n_samples: int = 25,
        batch_size: int = 16,
        fit_intercept: bool = True,
        random_state: Any = None,
    ):
        self.space = space
        self.alpha = alpha
        self.max_iter = max_iter
        self.decoding = decoding
        self.n_samples = n_samples
        self.batch_size = batch_size
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        multi = self.space != "multiclass" and not isinstance(self.space, _spaces.Multiclass)
        tags.target_tags.multi_output = multi
        tags.target_tags.single_output = not multi
        multilabel = self.space == "multilabel" or type(self.space) is _spaces.Multilabel
        if self.space == "multiclass" or type(self.space) is _spaces.Multiclass or multilabel:
            # a classifier, as StructuredRidge on these spaces: stratified CV folds for class labels
            from sklearn.utils import ClassifierTags

            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=not multilabel, multi_label=multilabel)
        return tags

    def _targets(self, y: Any) -> tuple[_spaces.Space, Any, np.ndarray | None]:
        """Resolve the space and return y in its encoding (class labels become indices) and the
        class labels (None but for ``space="multiclass"``)."""
        if self.space == "multiclass" or isinstance(self.space, _spaces.Multiclass):
            if not _capi.is_sparse(y):  # an array-like that only converts (np.ndim refused scikit-learn's _NotAnArray)
                y = _capi.as_array(y, "y")
            # a column vector of labels is taken with scikit-learn's DataConversionWarning, as
            # StructuredRidge's fit takes it (it was taken silently)
            if not _capi.is_sparse(y) and np.ndim(y) == 2 and np.shape(y)[1] == 1:
                y = column_or_1d(y, warn=True)
        if self.space == "multiclass":
            classes, idx = class_labels(y, "at least 2 are needed")
            return _spaces.Multiclass(len(classes)), idx, classes
        if hasattr(self.space, "_one_target"):
            _one_label_per_sample(y, self.space)  # the structured estimators' words (probe 84)
        y = _spaces._densify_targets(y, "y")  # a sparse Y as the estimators take it (it was "got shape ()")
        space = _spaces.from_name(self.space, y) if isinstance(self.space, str) else self.space
        # classes_ as StructuredRidge's: a Multiclass object's ids, a multi-label model's label indices
        # (cross_val_predict(method="decision_function") matches them to the columns)
        if type(space) is _spaces.Multiclass:
            return space, y, np.arange(space.n_classes)
        if type(space) is _spaces.Multilabel:
            return space, y, multilabel_classes(space)
        return space, y, None

    def _augmentation(self, space: _spaces.Space) -> float:
        """The constant c with argmax_z Δ(y, z) + ⟨u, ψ(z)⟩ = decode(u − ψ(y) + c·1)."""
        # Δ(y, z) = ‖ψ(y) − ψ(z)‖² / 2 is linear in ψ(z) when ψ is 0/1 (‖ψ(z)‖² = ⟨1, ψ(z)⟩) or
        # ‖ψ(z)‖² is the same for every z; the core says which (cp_space_info)
        info = space._info()
        if info.zero_one:
            return 0.5
        if info.constant_norm:
            return 0.0
        raise ValueError(
            f"decoding='exact' needs Δ linear in ψ(z) (0/1 ψ or constant ‖ψ‖), which {space!r} does not "
            "have; use decoding='sampled'"
        )

    def fit(self, X: Any, y: Any) -> StructuredSVM:
        """Fit W (and b) by stochastic subgradient descent.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like
            Structures in the space's encoding (class labels for ``space="multiclass"``).

        Returns
        -------
        self : StructuredSVM
        """
        self._forget()
        self._validate_params()
        sparse_output = _capi.is_sparse(y)
        if y is None:  # scikit-learn's words (check_requires_y_none); "got shape ()" came before
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y is None.")
        # C order: the same seed gave other bits on a Fortran-ordered copy of X (BLAS sums in
        # another order; probe DQ), where the core's estimators give the same model
        X = validate_data(self, X, dtype=np.float64, order="C")
        space, y_enc, classes = self._targets(y)
        n_rows = np.asarray(y_enc).shape[0]
        if n_rows != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} samples but y has {n_rows}")
        space._checked_rows(y_enc, "y")
        shift = self._augmentation(space) if self.decoding == "exact" else None
        if self.decoding == "sampled" and space._info().uncounted:  # the core's words named another estimator
            raise ValueError(
                f"decoding='sampled' draws uniform samples, and {space!r} has no uniform sampler (its structures "
                "are not counted); use decoding='exact'"
            )
        rng = check_random_state(self.random_state)
        # Python numbers, read once: a NumPy integer's arithmetic wrapped (alpha=np.int8(100) turned
        # the steps negative, n_samples=np.int8(3) overflowed the budget's product)
        alpha, max_iter, batch_size = float(self.alpha), int(self.max_iter), int(self.batch_size)
        n_samples = int(self.n_samples)
        m, p = X.shape
        d = space.dim
        # W, its running average and a step's two temporaries (p × d each), ψ of the targets and of
        # a batch's maximisers, and the sampled maximisation's three temporaries per sample: refused
        # before numpy allocates them (12,000 labels fitted a 1.15 GB coef_ at 3.6 GB under a 300 MB
        # budget; 20,000 features gave numpy's own error)
        batch = min(m, batch_size)
        sampled = 3 * batch * n_samples if self.decoding == "sampled" else 0
        _capi.check_bytes(
            8 * d * (4 * (p + 1) + m + 2 * batch + sampled) + (8 * m * p if self.fit_intercept else 0),
            f"StructuredSVM's weights and targets: {p} features × the space's dimension d = {d}, {m} samples, "
            f"batch_size={batch_size}" + (f", n_samples={n_samples}" if sampled else ""),
        )
        Psi = space.embed(y_enc)  # (m, d)
        X_raw = X
        # With an intercept the steps run on X centred, and the intercept takes the mean back at the
        # end, so that the model is the same for X shifted by a constant: on the raw X, Pegasos' steps
        # fell from a Kendall score of 0.76 to 0.015 on X + 1e3 (probe BA). The offset is the weight
        # of a constant feature r (the rows' root mean square norm), penalised as W is: unpenalised,
        # its early steps of 1/alpha were never shrunk and it drifted for thousands of epochs
        mean = None
        if self.fit_intercept:
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, naming X
                mean = X.mean(axis=0)
                X = X - mean
            if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(X))):
                raise ValueError(
                    f"X's column means or the rows about them overflow float64 (largest |X| {np.abs(X_raw).max():.3g}): "
                    "scale X down, e.g. with StandardScaler"
                )
        r2 = float(np.mean(np.einsum("ij,ij->i", X, X))) if self.fit_intercept else 0.0
        r2 = r2 if 0.0 < r2 < np.inf else 1.0
        W = np.zeros((p, d))
        b = np.zeros(d)
        W_avg, b_avg = np.zeros_like(W), np.zeros_like(b)
        # The minimiser lies in the ball (alpha/2)(‖W‖² + ‖b‖²/r²) ≤ J(0): the steps are projected onto
        # it, as Pegasos' are, and the mean weighs step t by t (Lacoste-Julien, Schmidt & Bach 2012).
        # The first steps, of size 1/alpha, made a uniform mean worse than the all-zero model for
        # hundreds of epochs: J 5.2 against J(0) = 2.0 at alpha = 1e-3, scores of 1e299 at 1e-300
        # (probe BX). J(0) needs the exact maximisation; with sampled decoding the ball takes the
        # bound max_z Δ(y, z) ≤ (‖ψ(y)‖ + √d·c)²/2, c the largest |coordinate| of a ψ (the core's).
        # J itself is then estimated by the sampled maximisation, the same samples for every model
        # compared (one seed), which is what its steps minimise.
        objective = functools.partial(
            self._objective,
            space,
            X,
            Psi,
            shift=shift,
            alpha=alpha,
            r2=r2,
            batch=batch,
            n_samples=n_samples,
            seed=int(rng.randint(2**31)),
        )
        J0 = objective(W, b)
        bound = J0
        if shift is None:
            info = space._info()
            top = max(abs(info.coord_low), abs(info.coord_high)) * np.sqrt(d)
            bound = float(np.mean((np.sqrt(np.einsum("ij,ij->i", Psi, Psi)) + top) ** 2) / 2)
        radius = np.sqrt(2.0 * bound) / np.sqrt(alpha)  # not √(2·J0/alpha): that overflows at alpha = 1e-310
        t = 0
        loss_curve: list[float] = []
        for _ in range(max_iter):
            order = rng.permutation(m)
            total = 0.0
            for start in range(0, m, batch_size):
                batch = order[start : start + batch_size]
                t += 1
                Xb, Pb = X[batch], Psi[batch]
                with np.errstate(over="ignore", invalid="ignore"):  # refused below
                    U = Xb @ W + b
                if not np.all(np.isfinite(U)):  # the decoder's "U contains NaN" named its own variable
                    raise ValueError(
                        f"StructuredSVM's scores overflowed in epoch {len(loss_curve) + 1} (alpha={alpha!r}, "
                        f"largest |X| {np.abs(X_raw).max():.3g}): scale X down (e.g. with StandardScaler) or raise alpha"
                    )
                Pz, hinge = self._maximiser(space, U, Pb, shift, rng, n_samples)
                active = hinge > 0
                total += hinge[active].sum()
                G = (Pz - Pb) * active[:, None]  # subgradient in score space, per example
                eta = 1.0 / (alpha * t)
                with np.errstate(over="ignore", invalid="ignore"):  # refused below
                    W *= 1.0 - eta * alpha
                    W -= (eta / len(batch)) * (Xb.T @ G)
                    if self.fit_intercept:  # b = r·b̃, b̃ a weight of the constant feature r
                        b *= 1.0 - eta * alpha
                        b -= (r2 * eta / len(batch)) * G.sum(axis=0)
                    norm = self._norm(W, b, r2)
                # every iterate is checked here, so their mean, a convex combination, needs no check
                if not np.isfinite(norm):
                    raise ValueError(
                        f"StructuredSVM's weights overflowed (alpha={alpha!r}: its steps are 1/(alpha·t)): raise "
                        "alpha, or scale X down"
                    )
                if norm > radius:
                    W *= radius / norm
                    b *= radius / norm
                W_avg += (2.0 / (t + 1)) * (W - W_avg)
                b_avg += (2.0 / (t + 1)) * (b - b_avg)
            loss_curve.append(total / m)
        # the lower J of the mean and the last iterate (the last won on few steps); a warning when
        # it is above J(0), beyond rounding (at alpha = 100 on random labels both are 1 ± 1e-5)
        J_avg, J_last = objective(W_avg, b_avg), objective(W, b)
        if J_last < J_avg:
            W_avg, b_avg = W, b
        if min(J_avg, J_last) > J0 * (1 + 1e-3):
            estimated = "" if shift is not None else " (estimated by the sampled maximisation)"
            warnings.warn(
                f"StructuredSVM's objective after {max_iter} epochs, {min(J_avg, J_last):.6g}, is above the "
                f"all-zero model's, {J0:.6g}{estimated}: increase max_iter or alpha, or standardise X",
                ConvergenceWarning,
                stacklevel=2,
            )
        if mean is not None:
            b_avg = b_avg - mean @ W_avg
        self._publish(
            space_=space,
            coef_=np.ascontiguousarray(W_avg.T),
            intercept_=b_avg,
            classes_=classes,
            loss_curve_=loss_curve,
            n_iter_=max_iter,
            sparse_output_=sparse_output,
        )
        return self

    @staticmethod
    def _norm(W: np.ndarray, b: np.ndarray, r2: float) -> float:
        """√(‖W‖² + ‖b‖²/r²), through the largest entry where the squares overflow."""
        with np.errstate(over="ignore"):
            norm2 = float(np.vdot(W, W) + np.vdot(b, b) / r2)
        if norm2 < np.inf:
            return np.sqrt(norm2)
        top = max(float(np.abs(W).max(initial=0.0)), float(np.abs(b).max(initial=0.0)) / np.sqrt(r2))
        return top * np.sqrt(float(np.vdot(W / top, W / top) + np.vdot(b / top, b / top) / r2))

    def _objective(
        self,
        space: _spaces.Space,
        X: np.ndarray,
        Psi: np.ndarray,
        W: np.ndarray,
        b: np.ndarray,
        *,
        shift: float | None,
        alpha: float,
        r2: float,
        batch: int,
        n_samples: int,
        seed: int,
    ) -> float:
        """J at (W, b) on the (centred) X: its maximisation by the space's decoder (exact unless the
        decoder is approximate, then a lower bound) or, without ``shift``, by the best of
        ``n_samples`` uniform samples drawn from ``seed`` (a lower bound, the same for every model),
        ``batch`` rows at a time as the steps take them (the memory budget counted those)."""
        rng = np.random.RandomState(seed)
        total = 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            for lo in range(0, X.shape[0], batch):
                U = X[lo : lo + batch] @ W + b
                if not np.all(np.isfinite(U)):
                    return np.inf
                _, hinge = self._maximiser(space, U, Psi[lo : lo + batch], shift, rng, n_samples)
                total += float(np.maximum(hinge, 0.0).sum())
            return total / X.shape[0] + 0.5 * alpha * (float(np.vdot(W, W)) + float(np.vdot(b, b)) / r2)

    def _maximiser(
        self, space: _spaces.Space, U: np.ndarray, Pb: np.ndarray, shift: float | None, rng: Any, n_samples: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """ψ of the loss-augmented maximiser of each row (by decoding with ``shift``, else the best
        of ``n_samples`` uniform samples) and its hinge Δ(y, z) + ⟨u, ψ(z) − ψ(y)⟩."""
        if shift is not None:
            Pz = space.embed(space.decode(U - Pb + shift))
        else:
            Pz = self._best_sample(space, U, Pb, rng, n_samples)
        return Pz, 0.5 * ((Pz - Pb) ** 2).sum(axis=1) + ((Pz - Pb) * U).sum(axis=1)

    def _best_sample(self, space: _spaces.Space, U: np.ndarray, Pb: np.ndarray, rng: Any, N: int) -> np.ndarray:
        """ψ of the best of N uniform samples (and y itself) under Δ(y, z) + ⟨u, ψ(z)⟩."""
        B = U.shape[0]
        Ps = space.embed(space.sample(B * N, random_state=rng)).reshape(B, N, -1)
        value = 0.5 * ((Ps - Pb[:, None, :]) ** 2).sum(axis=2) + np.einsum("bnd,bd->bn", Ps, U)
        best = value.argmax(axis=1)
        out = Ps[np.arange(B), best]
        keep_y = value[np.arange(B), best] <= np.einsum("bd,bd->b", Pb, U)  # y itself scores higher
        out[keep_y] = Pb[keep_y]
        return out

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores in ψ-coordinates, u = Wᵀx + b.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        U : ndarray of shape (n_samples, d), or (n_samples,)
            The scores; for two class labels (``space="multiclass"``), the margin u₁ − u₀ of the
            second class over the first, as scikit-learn's binary scorers take it.
        """
        state = self._snapshot()
        U = self._scores(X, state)
        if type(state["space_"]) is _spaces.Multiclass and state["space_"].n_classes == 2:
            return U[:, 1] - U[:, 0]
        return U

    def _scores(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        X = self._query(X, state)
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, by row
            U = X @ state["coef_"].T + state["intercept_"]
        if not np.all(np.isfinite(U)):
            i = int(np.flatnonzero(~np.isfinite(U).all(axis=1))[0])
            raise ValueError(f"the scores of X row {i} overflow float64: X holds values too large for this model")
        return U

    def predict(self, X: Any) -> np.ndarray:
        """Decode argmax_y ⟨u(x), ψ(y)⟩ for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray
            Structures in the space's encoding (class labels for ``space="multiclass"``).
        """
        state = self._snapshot()
        pred = self._predict(X, state)
        # a sparse Y's model predicts CSR, as the estimators and OneVsRestClassifier do (probe 84)
        return _sparse.csr_matrix(pred) if state.get("sparse_output_", False) else pred

    def _predict(self, X: Any, state: dict[str, Any]) -> np.ndarray:
        pred = state["space_"].decode(self._scores(X, state))
        if type(state["space_"]) is _spaces.Multiclass:  # the fitted labels, whatever set_params did since
            return state["classes_"][pred]
        return pred

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean agreement of ``predict(X)`` with y: ``space_.score`` (accuracy for multiclass, a
        label the model never saw counting as a miss, as the estimators' ``score`` counts it).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like
            True structures.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the mean (validated as the estimators' fit validates them).

        Returns
        -------
        score : float
        """
        state = self._snapshot()
        pred = self._predict(X, state)
        sw = check_sample_weight(sample_weight, len(pred))
        if type(state["space_"]) is _spaces.Multiclass:  # y (n, 1) was compared by broadcasting, n × n
            y = class_label_vector(y, "y")
            if len(y) != len(pred):
                raise ValueError(f"y has {len(y)} rows but X has {len(pred)} rows")
            # as the estimators' score: a label never seen is a miss, one that cannot be a class
            # an error; a Multiclass object's classes are its ids 0 … n − 1, anything else an error
            if isinstance(self.space, str):
                _check_unseen_labels(y, state["classes_"])
            else:
                class_rows(y, state["classes_"])
            return float(accuracy_score(y, pred, sample_weight=sw))
        y = state["space_"]._checked_rows(_spaces._densify_targets(y, "y"), "y")
        if len(y) != len(pred):
            raise ValueError(f"y has {len(y)} rows but X has {len(pred)} rows")
        return weighted_mean(state["space_"].score_samples(y, pred), sw)
