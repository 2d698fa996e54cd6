"""StructuredRidge: the counting-assumption learner of Vembu's thesis, chapter 5."""

from __future__ import annotations

import ctypes
import numbers
from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, validate_data

from . import _capi
from . import spaces as _spaces
from ._estimator_base import StructuredEstimator, _Model, class_rows, run_fit

__all__ = ["StructuredRidge"]

_KERNELS = {"linear": 0, "poly": 1, "rbf": 2, "precomputed": 3}


class StructuredRidge(StructuredEstimator):
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
    solver : {"auto", "exact", "cg", "sgd"}, default="auto"
        ``"exact"`` solves the normal equations by Cholesky (linear kernel only; memory grows as
        (n_features · d)²); ``"cg"`` runs preconditioned conjugate gradients (deflated CG in the
        kernel's inner product for kernel models); ``"sgd"`` is the thesis' online stochastic
        gradient (section 5.3.2), step ``eta0 / (alpha · t)``, with truncation ``tau`` for kernel
        expansions. ``"auto"`` uses ``"exact"`` when n_features · d ≤ 600 and ``"cg"`` otherwise.
    tol : float, default=1e-8
        CG stops when ‖∇J‖ ≤ tol · ‖∇J(0)‖; SGD stops when J changes by less than tol (relative)
        over an epoch.
    max_iter : int, default=1000
        Maximum number of CG iterations, or of SGD epochs.
    warm_start : bool, default=False
        Start ``fit`` from the previous solution (linear models; kernel models on the same X, e.g.
        along a path of alpha values).
    n_components : int, default=None
        For ``"rbf"`` and ``"poly"`` (ignored by the other kernels): fit the linear model on a Nyström map of this many landmark
        samples (thesis appendix A) instead of the full kernel expansion, so that training scales
        to 100,000s of samples. None: the exact kernel model.
    tau : int, default=None
        SGD on kernel models keeps only the last ``tau`` expansion terms (None: all).
    eta0 : float, default=None
        The constant p of the SGD step p/(alpha · t); None means 0.5.
    random_state : int, RandomState instance or None, default=None
        Seeds SGD's shuffling and the Nyström landmarks.
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
        "solver": [StrOptions({"auto", "exact", "cg", "sgd"})],
        "tol": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "n_components": [Interval(numbers.Integral, 1, 10000, closed="both"), None],
        "tau": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "eta0": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
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
        warm_start: bool = False,
        n_components: int | None = None,
        tau: int | None = None,
        eta0: float | None = None,
        random_state: Any = None,
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
        self.warm_start = warm_start
        self.n_components = n_components
        self.tau = tau
        self.eta0 = eta0
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # -- fitting ------------------------------------------------------------------------------
    def _params_string(self, n_features: int) -> str:
        gamma = self.gamma if self.gamma is not None else 1.0 / n_features
        return (
            f"alpha={float(self.alpha)!r};kernel={self.kernel};gamma={float(gamma)!r};"
            f"degree={int(self.degree)};coef0={float(self.coef0)!r};"
            f"fit_intercept={int(bool(self.fit_intercept))};solver={self.solver};"
            f"tol={float(self.tol)!r};max_iter={int(self.max_iter)};random_state={_seed(self.random_state)}"
            # like gamma and degree, n_components is ignored by the kernels it does not apply to
            + (
                f";n_components={int(self.n_components)}"
                if self.n_components and self.kernel in ("rbf", "poly")
                else ""
            )
            + (f";tau={int(self.tau)}" if self.tau is not None else "")
            + (f";eta0={float(self.eta0)!r}" if self.eta0 is not None else "")
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
        previous = self.__dict__.get("_model") if self.warm_start else None  # _fit_data forgets it
        X, space, rows, classes, sw = self._fit_data(X, y, sample_weight)
        params = self._params_string(X.shape[1]).encode()
        self._fit_model("cp_ridge_fit", X, space, rows, classes, sw, params, previous.value if previous else 0)
        return self

    @available_if(lambda self: self.kernel != "precomputed" and self.solver != "cg")
    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> StructuredRidge:
        """Update the model with one more chunk of examples.

        Linear models (and Nyström models, ``n_components`` set) with solver ``"auto"`` or
        ``"exact"`` are updated exactly: the model keeps sufficient statistics of every example seen
        (memory independent of their number), and any sequence of chunks gives the model ``fit``
        would give on all of them. With ``solver="sgd"``, and for kernel models without
        ``n_components``, each call makes one SGD pass over the chunk. The method does not exist
        for precomputed kernels (the expansion lives on the fit samples) nor for ``solver="cg"``
        (a batch method: use ``"exact"`` or ``"sgd"`` to stream).

        Parameters
        ----------
        X, y, sample_weight
            As in :meth:`fit`, for the new chunk.
        classes : array-like, default=None
            All class labels, required in the first call with ``space="multiclass"`` (a chunk may
            lack some classes); ignored afterwards.

        Returns
        -------
        self : StructuredRidge
        """
        previous = self.__dict__.get("_model")
        if previous is None:
            if self._is_multiclass() and classes is None:
                raise ValueError("classes must be given in the first call to partial_fit with space='multiclass'")
            X, space, rows, fitted_classes, sw = self._fit_data(X, y, sample_weight, classes)
        else:
            self._validate_params()
            multi = not self._is_multiclass()
            X, y = validate_data(
                self, X, y, dtype=np.float64, order="C", multi_output=multi, y_numeric=multi, reset=False
            )
            space, fitted_classes = self.space_, getattr(self, "classes_", None)
            rows = class_rows(y, fitted_classes) if self._is_multiclass() else space._to_rows(y, "y")
            sw = None if sample_weight is None else np.ascontiguousarray(_check_sample_weight(sample_weight, X))
        params = self._params_string(X.shape[1]).encode()
        fn = _capi.lib().cp_ridge_partial_fit
        model = run_fit(
            self._model_class,
            type(self).__name__,
            self.verbose,
            lambda callback, out: fn(
                previous.value if previous is not None else 0,
                space._h(),
                _capi.f64(X),
                X.shape[0],
                X.shape[1],
                _capi.i64(rows),
                space.width,
                _capi.f64(sw) if sw is not None else None,
                params,
                callback,
                None,
                out,
            ),
        )
        self.space_ = space
        if fitted_classes is not None:
            self.classes_ = fitted_classes
        self._set_model(model)
        return self

    def _check_fit_X(self, X: np.ndarray) -> None:
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix for kernel='precomputed', got shape {X.shape}")

    def _set_model(self, model: _Model) -> None:
        self._model = model
        lib = _capi.lib()
        ints = [_capi.out_i64() for _ in range(7)]
        objective, rel = ctypes.c_double(), ctypes.c_double()
        _capi.check(lib.cp_model_info(model.value, *ints, objective, rel))
        n_features, dim, _, _, kind, n_iter, _ = (v.value for v in ints)
        self.n_iter_ = max(n_iter, 1)  # the exact solver's single direct solve counts as one iteration
        stream = [_capi.out_i64() for _ in range(4)]
        _capi.check(lib.cp_model_stream_info(model.value, *stream))
        n_components, n_seen = stream[0].value, stream[1].value
        self.n_samples_seen_ = n_seen
        if n_components:
            self.n_components_ = n_components
        self.objective_ = objective.value
        self.relative_gradient_ = rel.value
        if kind == _KERNELS["linear"]:
            coef, intercept = np.empty((n_features, dim)), np.empty(dim)
            _capi.check(lib.cp_model_coef(model.value, _capi.f64(coef), n_features, dim, _capi.f64(intercept)))
            self.coef_, self.intercept_ = coef, intercept

    # -- prediction ---------------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Return the scores u(x) in ψ-coordinates, shape (n_samples, d).

        The predicted structure maximises ⟨u(x), ψ(y)⟩. For a two-class ``space="multiclass"``
        model the result is the margin u₁ − u₀ of shape (n_samples,), as scikit-learn expects.
        """
        return self._margin(self._scores(X))

    def predict(self, X: Any) -> np.ndarray:
        """Return the decoded structure of each input, in the space's encoding.

        Multiclass models return class labels (``classes_``); multilabel models a 0/1 matrix.
        """
        return self._predict(X)


def _seed(random_state: Any) -> int:
    """A 63-bit seed for the core from a scikit-learn random_state."""
    return int(check_random_state(random_state).randint(0, 2**63 - 1, dtype=np.int64))
