"""StructuredRidge: the counting-assumption learner of Vembu's thesis, chapter 5."""

from __future__ import annotations

import contextlib
import ctypes
import numbers
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _capi
from . import spaces as _spaces

_KERNELS = {"linear": 0, "poly": 1, "rbf": 2, "precomputed": 3}


class _Model:
    """Owns one fitted Go model handle; frees it with the Python object."""

    def __init__(self, value: int):
        self.value = value

    def __del__(self):
        if _capi.usable() and _capi._lib is not None:
            _capi.lib().cp_model_free(self.value)

    def to_bytes(self) -> bytes:
        needed = _capi.out_i64()
        _capi.check(_capi.lib().cp_model_to_bytes(self.value, None, 0, needed))
        buf = (ctypes.c_uint8 * needed.value)()
        _capi.check(_capi.lib().cp_model_to_bytes(self.value, buf, needed.value, needed))
        return bytes(buf)

    @classmethod
    def from_bytes(cls, data: bytes) -> _Model:
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"model bytes must be bytes, got {type(data).__name__}")
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        out = _capi.out_i64()
        _capi.check(_capi.lib().cp_model_from_bytes(buf, len(data), out))
        return cls(out.value)


class StructuredRidge(BaseEstimator):
    """Structured ridge regression: predict combinatorial structures from feature vectors.

    Learns scores f(x, y) = ⟨u(x), ψ(y)⟩ that put the true structure one unit above the average
    structure of the output space while keeping scores steady across the whole space (the
    Taylor-expanded ranking loss of Vembu's thesis, chapter 5). Training needs only the mean and
    covariance of ψ over the output space, computed in closed form, so it never decodes; prediction
    decodes argmax_y ⟨u(x), ψ(y)⟩ with the space's decoder.

    Parameters
    ----------
    space : str or combpred.spaces.Space, default="multilabel"
        The output space. Strings size the space from the training targets: ``"multiclass"``
        (y: any labels, 1-D), ``"multilabel"`` (Y: 0/1 indicator matrix), ``"permutations"``
        (Y: rank rows, 1 = best), ``"dicycles"``, ``"ucycles"``, ``"cliques"``, ``"tournaments"``.
        Spaces needing parameters (KSubsets, Ordinal, HierarchyPaths, Subtrees) are given as objects.
    alpha : float, default=1.0
        Regularisation strength (> 0): the weight of ‖W‖² (or of the RKHS norm).
    kernel : {"linear", "poly", "rbf", "precomputed"}, default="linear"
        Input kernel. ``"linear"`` is solved in the primal and exposes ``coef_``; with
        ``"precomputed"``, X is the kernel matrix (n_samples, n_samples) at fit and
        (n_queries, n_samples_fit) at predict.
    gamma : float, default=None
        Kernel coefficient of ``"rbf"`` and ``"poly"``; None means 1 / n_features.
    degree : int, default=3
        Degree of the ``"poly"`` kernel.
    coef0 : float, default=1.0
        Independent term of the ``"poly"`` kernel.
    fit_intercept : bool, default=True
        Learn a per-coordinate offset of the scores. For the linear kernel it is unpenalised; for the
        other kernels it is the penalised bias of the kernel k(x, x') + 1.
    solver : {"auto", "exact", "cg"}, default="auto"
        ``"exact"`` solves the normal equations by Cholesky (linear kernel only; memory grows as
        (n_features · d)²); ``"cg"`` runs preconditioned conjugate gradients. ``"auto"`` uses
        ``"exact"`` when n_features · d ≤ 600 and ``"cg"`` otherwise. Kernel models always use CG.
    tol : float, default=1e-8
        CG stops when ‖∇J‖ ≤ tol · ‖∇J(0)‖.
    max_iter : int, default=1000
        Maximum number of CG iterations.
    n_jobs : int, default=None
        Threads used by the core (decoding, kernels, linear algebra). None or -1: all cores. The
        setting is process-wide: it applies to every combpred call until changed.
    verbose : int, default=0
        Print the objective and relative gradient norm after every iteration when > 0.

    Attributes
    ----------
    space_ : combpred.spaces.Space
        The output space the model predicts in.
    classes_ : ndarray of shape (n_classes,)
        Class labels for multiclass spaces; ``[0, 1]`` (the values of each label) for multilabel.
    coef_ : ndarray of shape (n_features, d)
        Weights W of the linear model (``kernel="linear"`` only): scores are X @ coef_ + intercept_.
    intercept_ : ndarray of shape (d,)
        Intercept of the linear model (zeros when ``fit_intercept=False``).
    n_features_in_ : int
        Number of features seen during fit.
    n_iter_ : int
        CG iterations run (at least 1; the exact solver's direct solve counts as one).
    objective_ : float
        The objective J at the solution.
    relative_gradient_ : float
        ‖∇J‖ / ‖∇J(0)‖ at the solution.

    Examples
    --------
    >>> import numpy as np
    >>> from combpred import StructuredRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 5))
    >>> Y = (X[:, :3] > 0).astype(int)
    >>> model = StructuredRidge(space="multilabel", alpha=0.1).fit(X, Y)
    >>> model.predict(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: dict = {
        "space": [StrOptions(set(_spaces._BY_NAME) | {"tournaments"}), _spaces.Space],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(_KERNELS))],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "exact", "cg"})],
        "tol": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        space: str | _spaces.Space = "multilabel",
        alpha: float = 1.0,
        kernel: str = "linear",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        fit_intercept: bool = True,
        solver: str = "auto",
        tol: float = 1e-8,
        max_iter: int = 1000,
        n_jobs: int | None = None,
        verbose: int = 0,
    ):
        self.space = space
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- scikit-learn conventions -------------------------------------------------------------
    def _is_classifier(self) -> bool:
        return self.space in ("multiclass", "multilabel") or type(self.space) in (
            _spaces.Multiclass,
            _spaces.Multilabel,
        )

    def _is_multilabel(self) -> bool:
        return self.space == "multilabel" or type(self.space) is _spaces.Multilabel

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.required = True
        if self._is_classifier():
            from sklearn.utils import ClassifierTags

            tags.estimator_type = "classifier"
            # A multi-label model is a set of binary (0/1) outputs, not a multi-class classifier.
            tags.classifier_tags = ClassifierTags(
                multi_class=not self._is_multilabel(), multi_label=self._is_multilabel()
            )
            tags.target_tags.multi_output = self._is_multilabel()
            tags.target_tags.single_output = not self._is_multilabel()
        else:
            tags.target_tags.multi_output = True
            tags.target_tags.single_output = False
        return tags

    # -- fitting ------------------------------------------------------------------------------
    def _targets(self, X: np.ndarray, y: Any) -> tuple[_spaces.Space, np.ndarray, np.ndarray | None]:
        """Resolve the space and encode y as int64 rows; also return classes_ (or None)."""
        y = np.asarray(y)
        if self.space == "multiclass":
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.ravel()
            if y.ndim != 1:
                raise ValueError(
                    f"y must be 1-D (one class label per sample) for space='multiclass', got shape {y.shape}"
                )
            kind = type_of_target(y, input_name="y")
            if kind not in ("binary", "multiclass"):
                raise ValueError(f"Unknown label type: y is {kind!r}; space='multiclass' needs class labels")
            classes, idx = np.unique(y, return_inverse=True)
            if len(classes) < 2:
                raise ValueError(f"y has only one class ({classes[0]!r}); StructuredRidge needs at least 2 classes")
            rows = idx.astype(np.int64).reshape(-1, 1)
            space: _spaces.Space = _spaces.Multiclass(len(classes))
        else:
            multilabel = self._is_multilabel()
            if multilabel:
                kind = type_of_target(y, input_name="y")
                if kind.startswith("continuous"):
                    raise ValueError(f"Unknown label type: y is {kind!r}; a multi-label Y holds 0/1 indicators")
            if isinstance(self.space, str):
                if y.ndim != 2:
                    hint = "; for one class label per sample use space='multiclass'" if multilabel else ""
                    raise ValueError(
                        f"Y must be 2-D (n_samples, n_columns) for space={self.space!r}, got shape {y.shape}{hint}"
                    )
                space = _spaces.from_name(self.space, y)
            else:
                space = self.space
            classes = None
            if type(space) is _spaces.Multiclass:
                classes = np.arange(space.n_classes)
            elif multilabel:
                classes = np.array([0, 1])  # the values of each label, as predict returns them
            rows = space._to_rows(y, "y")
        if rows.shape[0] != X.shape[0]:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]}, y has {rows.shape[0]}"
            )
        return space, rows, classes

    def _params_string(self, n_features: int) -> str:
        gamma = self.gamma if self.gamma is not None else 1.0 / n_features
        return (
            f"alpha={float(self.alpha)!r};kernel={self.kernel};gamma={float(gamma)!r};"
            f"degree={int(self.degree)};coef0={float(self.coef0)!r};"
            f"fit_intercept={int(bool(self.fit_intercept))};solver={self.solver};"
            f"tol={float(self.tol)!r};max_iter={int(self.max_iter)}"
        )

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> StructuredRidge:
        """Fit the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs; with ``kernel="precomputed"``, the kernel matrix (n_samples, n_samples).
        y : array-like
            Structures in the space's encoding: 1-D labels for multiclass, (n_samples, width)
            integer rows otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples.

        Returns
        -------
        self : StructuredRidge
        """
        self._validate_params()
        self._reset()
        multi = not (self.space == "multiclass" or isinstance(self.space, _spaces.Multiclass))
        X, y = validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            order="C",
            multi_output=multi,
            y_numeric=multi,
            ensure_min_features=1,
            ensure_min_samples=1,
        )
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix for kernel='precomputed', got shape {X.shape}")
        space, rows, classes = self._targets(X, y)
        sw = None
        if sample_weight is not None:
            sw = np.ascontiguousarray(_check_sample_weight(sample_weight, X, dtype=np.float64))
        _set_threads(self.n_jobs)
        captured: list[BaseException] = []
        interrupted: list[bool] = []
        verbose = self.verbose

        def progress(iteration: int, objective: float, rel_grad: float, _ctx: Any) -> int:
            try:
                if verbose:
                    print(
                        f"[StructuredRidge] iter {iteration:4d}  objective {objective:.10g}  "
                        f"relative gradient {rel_grad:.3e}",
                        file=sys.stderr,
                    )
                return 1 if interrupted else 0
            except BaseException as exc:  # KeyboardInterrupt raised while Go was running
                captured.append(exc)
                return 1

        callback = _capi.PROGRESS(progress)
        out = _capi.out_i64()
        with _sigint_as_flag(interrupted):
            status = _capi.lib().cp_ridge_fit(
                space._h(),
                _capi.f64(X),
                X.shape[0],
                X.shape[1],
                _capi.i64(rows),
                space.width,
                _capi.f64(sw) if sw is not None else None,
                self._params_string(X.shape[1]).encode(),
                0,  # no initial model
                callback,
                None,
                out,
            )
        if captured or interrupted:
            if status == _capi.OK:
                _Model(out.value)  # finished before it saw the interrupt: free the model at once
            if captured:
                raise captured[0]
            raise KeyboardInterrupt("fit cancelled")
        _capi.check(status)
        self.space_ = space
        if classes is not None:
            self.classes_ = classes
        self._set_model(_Model(out.value))
        return self

    def _reset(self) -> None:
        """Forget a previous fit, so that a fit that fails (or is interrupted) leaves no stale model."""
        for key in list(vars(self)):
            if key == "_model" or (key.endswith("_") and not key.startswith("_")):
                delattr(self, key)

    def _set_model(self, model: _Model) -> None:
        self._model = model
        lib = _capi.lib()
        ints = [_capi.out_i64() for _ in range(7)]
        objective, rel = ctypes.c_double(), ctypes.c_double()
        _capi.check(lib.cp_model_info(model.value, *ints, objective, rel))
        n_features, dim, _, _, kind, n_iter, _ = (v.value for v in ints)
        self.n_iter_ = max(n_iter, 1)  # the exact solver's single direct solve counts as one iteration
        self.objective_ = objective.value
        self.relative_gradient_ = rel.value
        if kind == _KERNELS["linear"]:
            coef, intercept = np.empty((n_features, dim)), np.empty(dim)
            _capi.check(lib.cp_model_coef(model.value, _capi.f64(coef), n_features, dim, _capi.f64(intercept)))
            self.coef_, self.intercept_ = coef, intercept

    # -- prediction ---------------------------------------------------------------------------
    def _inputs(self, X: Any) -> np.ndarray:
        """Validate prediction inputs; plain float64 arrays skip scikit-learn's slower checks
        (the core rejects non-finite values itself, naming the entry)."""
        check_is_fitted(self, "_model")
        if (
            type(X) is np.ndarray
            and X.dtype == np.float64
            and X.ndim == 2
            and X.flags.c_contiguous
            and X.shape[0] > 0
            and not hasattr(self, "feature_names_in_")
            and np.isfinite(X).all()  # else scikit-learn's check names NaN or infinity
        ):
            if X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input."
                )
            return X
        return validate_data(self, X, dtype=np.float64, order="C", reset=False)

    def _scores(self, X: Any) -> np.ndarray:
        X = self._inputs(X)
        dim = self.space_.dim
        out = np.empty((X.shape[0], dim))
        _capi.check(
            _capi.lib().cp_model_decision(self._model.value, _capi.f64(X), X.shape[0], X.shape[1], _capi.f64(out), dim)
        )
        return out

    def decision_function(self, X: Any) -> np.ndarray:
        """Return the scores u(x) in ψ-coordinates, shape (n_samples, d).

        The predicted structure maximises ⟨u(x), ψ(y)⟩. For a two-class ``space="multiclass"``
        model the result is the margin u₁ − u₀ of shape (n_samples,), as scikit-learn expects.
        """
        scores = self._scores(X)
        if self.space == "multiclass" and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X: Any) -> np.ndarray:
        """Return the decoded structure of each input, in the space's encoding.

        Multiclass models return class labels (``classes_``); multilabel models a 0/1 matrix.
        """
        X = self._inputs(X)
        width = self.space_.width
        out = np.empty((X.shape[0], width), dtype=np.int64)
        _capi.check(
            _capi.lib().cp_model_predict(self._model.value, _capi.f64(X), X.shape[0], X.shape[1], _capi.i64(out), width)
        )
        structures = self.space_._from_rows(out)
        if self.space == "multiclass":
            return self.classes_[structures]
        return structures

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean quality of the predictions on (X, y): accuracy for multiclass, 1 − Hamming loss for
        multilabel, the space's own score otherwise (see ``combpred.spaces``)."""
        pred = self.predict(X)
        if self.space == "multiclass":
            hits = (pred == np.asarray(y).ravel()).astype(float)
            return float(np.average(hits, weights=sample_weight))
        return self.space_.score(y, pred)

    # -- pickling: the Go model travels as its bytes --------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        model = state.pop("_model", None)
        if model is not None:
            state["_model_bytes"] = model.to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        data = state.pop("_model_bytes", None)
        super().__setstate__(state)
        if data is not None:
            self._model = _Model.from_bytes(data)


@contextlib.contextmanager
def _sigint_as_flag(flag: list[bool]) -> Iterator[None]:
    """Turn Ctrl-C into a flag while Go runs, when the default handler is installed.

    The default handler raises KeyboardInterrupt on entry of the progress callback, where ctypes
    can only print it and return an undefined status; with the flag the callback asks Go to stop
    and ``fit`` raises KeyboardInterrupt once the call has returned.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        flag.append(True)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _set_threads(n_jobs: int | None) -> None:
    n = 0 if n_jobs is None or n_jobs < 0 else int(n_jobs)
    _capi.check(_capi.lib().cp_set_threads(n))
