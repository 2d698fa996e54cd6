"""What the estimators share: Go model handles, fitting with a progress callback and Ctrl-C,
validation of inputs and targets, the fast prediction path, scoring and pickling through bytes."""

from __future__ import annotations

import contextlib
import ctypes
import numbers
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _capi
from . import spaces as _spaces


class _Model:
    """Owns one fitted Go model handle; frees it with the Python object.

    The C functions are ``{prefix}_free``, ``{prefix}_to_bytes`` and ``{prefix}_from_bytes``; each
    model kind (a subclass) names its prefix.
    """

    prefix = "cp_model"

    def __init__(self, value: int):
        self.value = value

    def __del__(self):
        if _capi.usable() and _capi._lib is not None:
            getattr(_capi.lib(), f"{self.prefix}_free")(self.value)

    def to_bytes(self) -> bytes:
        to_bytes = getattr(_capi.lib(), f"{self.prefix}_to_bytes")
        needed = _capi.out_i64()
        _capi.check(to_bytes(self.value, None, 0, needed))
        buf = (ctypes.c_uint8 * needed.value)()
        _capi.check(to_bytes(self.value, buf, needed.value, needed))
        return bytes(buf)

    @classmethod
    def from_bytes(cls, data: bytes) -> _Model:
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"model bytes must be bytes, got {type(data).__name__}")
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        out = _capi.out_i64()
        _capi.check(getattr(_capi.lib(), f"{cls.prefix}_from_bytes")(buf, len(data), out))
        return cls(out.value)


def run_fit(
    model_class: type[_Model],
    name: str,
    verbose: int,
    call: Callable[[Any, Any], int],
    measure: str = "relative gradient",
) -> _Model:
    """Run a fit, ``call(progress_callback, out_handle) -> status``, and return its model.

    The callback prints the objective and the solver's convergence measure (``measure`` names it:
    the relative gradient, or SGD's relative change of J) after every iteration when verbose, and
    asks Go to stop on Ctrl-C (see :func:`_sigint_as_flag`); the fit then raises KeyboardInterrupt
    once the call has returned, leaving no model behind.
    """
    captured: list[BaseException] = []
    interrupted: list[bool] = []

    def progress(iteration: int, objective: float, rel_grad: float, _ctx: Any) -> int:
        try:
            if verbose:
                print(
                    f"[{name}] iter {iteration:4d}  objective {objective:.10g}  {measure} {rel_grad:.3e}",
                    file=sys.stderr,
                )
            return 1 if interrupted else 0
        except BaseException as exc:  # KeyboardInterrupt raised while Go was running
            captured.append(exc)
            return 1

    callback = _capi.PROGRESS(progress)
    out = _capi.out_i64()
    with _sigint_as_flag(interrupted):
        status = call(callback, out)
    if captured or interrupted:
        if status == _capi.OK:
            model_class(out.value)  # finished before it saw the interrupt: free the model at once
        if captured:
            raise captured[0]
        raise KeyboardInterrupt("fit cancelled")
    _capi.check(status)
    return model_class(out.value)


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


def set_threads(n_jobs: int | None) -> None:
    """Set the core's thread count (process-wide): None or negative means all cores.

    The core clamps larger counts to 4 threads per CPU; any integer is accepted.
    """
    n = 0 if n_jobs is None or n_jobs < 0 else min(int(n_jobs), 2**63 - 1)  # the C ABI takes an int64
    _capi.check(_capi.lib().cp_set_threads(n))


class StructuredEstimator(BaseEstimator):
    """Base of the estimators over an output space (``self.space``) backed by one Go model.

    Subclasses set ``_model_class``, fit through :meth:`_fit_data` and :meth:`_fit_model`, and read
    their fitted attributes in :meth:`_set_model`; the C functions of their model kind are named by
    ``_model_class.prefix`` (``{prefix}_decision``, ``{prefix}_predict``, ...).
    """

    _model_class: type[_Model] = _Model

    # The parameters every estimator over a space takes, with the same meaning and range; a
    # subclass extends this dict with its own (``{**StructuredEstimator._parameter_constraints, ...}``).
    _parameter_constraints: dict = {
        "space": [StrOptions(set(_spaces._BY_NAME) | {"tournaments"}), _spaces.Space],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(numbers.Real, 0, 1, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
    }

    # -- scikit-learn conventions -------------------------------------------------------------
    def _is_classifier(self) -> bool:
        return self.space in ("multiclass", "multilabel") or type(self.space) in (
            _spaces.Multiclass,
            _spaces.Multilabel,
        )

    def _is_multilabel(self) -> bool:
        return self.space == "multilabel" or type(self.space) is _spaces.Multilabel

    def _is_multiclass(self) -> bool:
        """Targets are class labels (1-D), whatever their values (``space="multiclass"``)."""
        return self.space == "multiclass"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
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
    def _check_fit_X(self, X: np.ndarray) -> None:
        """Further checks of the validated training inputs (none by default)."""

    def _fit_data(
        self, X: Any, y: Any, sample_weight: Any, classes: Any = None
    ) -> tuple[np.ndarray, Any, np.ndarray, Any, Any]:
        """Validate the parameters and the data of a fit, forgetting any previous fit.

        Returns (X, space, rows, classes, sample_weight): X as C-contiguous float64, the resolved
        space, y encoded as int64 rows, classes_ (or None) and the weights (or None).
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
        self._check_fit_X(X)
        space, rows, classes = self._targets(X, y, classes)
        sw = None
        if sample_weight is not None:
            sw = np.ascontiguousarray(_check_sample_weight(sample_weight, X, dtype=np.float64))
        set_threads(self.n_jobs)
        return X, space, rows, classes, sw

    def _progress_measure(self, partial: bool) -> str:
        """What the progress callback's third number is, for verbose output."""
        return "relative gradient"

    def _fit_model(self, fit: str, X: np.ndarray, space: Any, rows: np.ndarray, classes: Any, sw: Any, *args: Any):
        """Run ``fit(space, X, m, n, Y, w, sample_weight, *args, progress, ctx, out)`` of the C ABI
        through :func:`run_fit` and store the fitted state (``space_``, ``classes_``, the model)."""
        fn = getattr(_capi.lib(), fit)
        model = run_fit(
            self._model_class,
            type(self).__name__,
            self.verbose,
            lambda callback, out: fn(
                space._h(),
                _capi.f64(X),
                X.shape[0],
                X.shape[1],
                _capi.i64(rows),
                space.width,
                _capi.f64(sw) if sw is not None else None,
                *args,
                callback,
                None,
                out,
            ),
            self._progress_measure(partial=False),
        )
        self.space_ = space
        if classes is not None:
            self.classes_ = classes
        self._set_model(model)

    def _set_model(self, model: _Model) -> None:
        """Store a fitted model and read its attributes (coef_, n_iter_, ...)."""
        self._model = model

    def _read_info(self, n_counts: int) -> list[int]:
        """Read how the model's fit ended through ``{prefix}_info``: set ``objective_`` and
        ``relative_gradient_``, and return the model kind's ``n_counts`` integer fields."""
        counts = [_capi.out_i64() for _ in range(n_counts)]
        objective, rel = ctypes.c_double(), ctypes.c_double()
        info = getattr(_capi.lib(), f"{self._model_class.prefix}_info")
        _capi.check(info(self._model.value, *counts, objective, rel))
        self.objective_ = objective.value
        self.relative_gradient_ = rel.value
        return [c.value for c in counts]

    def _read_coef(self, n_features: int, dim: int) -> None:
        """Read a linear model's W and b through ``{prefix}_coef`` into ``coef_`` and ``intercept_``."""
        coef, intercept = np.empty((n_features, dim)), np.empty(dim)
        read = getattr(_capi.lib(), f"{self._model_class.prefix}_coef")
        _capi.check(read(self._model.value, _capi.f64(coef), n_features, dim, _capi.f64(intercept)))
        self.coef_, self.intercept_ = coef, intercept

    def _targets(
        self, X: np.ndarray, y: Any, classes: Any = None
    ) -> tuple[_spaces.Space, np.ndarray, np.ndarray | None]:
        """Resolve the space and encode y as int64 rows; also return classes_ (or None).

        ``classes`` declares every class label of ``space="multiclass"`` up front (partial_fit's
        first chunk may lack some); by default they are those of y.
        """
        y = np.asarray(y)
        if self.space == "multiclass" and classes is not None:
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.ravel()
            classes = np.unique(np.asarray(classes))
            if len(classes) < 2:
                raise ValueError(f"classes must hold at least 2 labels, got {list(classes)}")
            return _spaces.Multiclass(len(classes)), class_rows(y, classes), classes
        if self.space == "multiclass":
            classes, idx = class_labels(y, f"{type(self).__name__} needs at least 2 classes")
            rows = idx.reshape(-1, 1)
            space: _spaces.Space = _spaces.Multiclass(len(classes))
        else:
            multilabel = self._is_multilabel()
            # scikit-learn's type_of_target would say the same, but its np.unique costs a twentieth
            # of a yeast-sized linear fit; y is finite here (validate_data).
            if multilabel and y.dtype.kind == "f" and np.any(y != np.round(y)):
                kind = "continuous-multioutput" if y.ndim == 2 and y.shape[1] > 1 else "continuous"
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

    def _reset(self) -> None:
        """Forget a previous fit, so that a fit that fails (or is interrupted) leaves no stale model."""
        for key in list(vars(self)):
            if key == "_model" or (key.endswith("_") and not key.startswith("_")):
                delattr(self, key)

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

    def _call(self, name: str, X: np.ndarray, *args: Any) -> None:
        """Call ``{prefix}_{name}(model, X, q, n, *args)`` and raise on error."""
        fn = getattr(_capi.lib(), f"{self._model_class.prefix}_{name}")
        _capi.check(fn(self._model.value, _capi.f64(X), X.shape[0], X.shape[1], *args))

    def _scores(self, X: Any) -> np.ndarray:
        X = self._inputs(X)
        out = np.empty((X.shape[0], self.space_.dim))
        self._call("decision", X, _capi.f64(out), self.space_.dim)
        return out

    def _margin(self, scores: np.ndarray) -> np.ndarray:
        """scikit-learn's shape of a decision function: the margin u₁ − u₀ for two classes."""
        if self._is_multiclass() and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def _structures(self, rows: np.ndarray) -> np.ndarray:
        """Structures in the space's encoding from int64 rows (class labels for multiclass)."""
        structures = self.space_._from_rows(rows)
        if self._is_multiclass():
            return self.classes_[structures]
        return structures

    def _predict(self, X: Any) -> np.ndarray:
        X = self._inputs(X)
        out = np.empty((X.shape[0], self.space_.width), dtype=np.int64)
        self._call("predict", X, _capi.i64(out), self.space_.width)
        return self._structures(out)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean quality of the predictions on (X, y): accuracy for multiclass, 1 − Hamming loss for
        multilabel, the space's own score otherwise (see ``combpred.spaces``)."""
        pred = self.predict(X)
        if self._is_multiclass():
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
            self._model = self._model_class.from_bytes(data)


def class_labels(y: Any, too_few: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate the class labels of space='multiclass' (1-D, or one column; discrete) and return
    the sorted classes and each label's int64 index into them; ``too_few`` ends the message when
    y has a single class."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one class label per sample) for space='multiclass', got shape {y.shape}")
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type: y is {kind!r}; space='multiclass' needs class labels")
    classes, idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); {too_few}")
    return classes, idx.astype(np.int64)


def class_rows(y: Any, classes: np.ndarray) -> np.ndarray:
    """Encode class labels as int64 rows of indices into sorted classes, naming an unknown label."""
    y = np.asarray(y).ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one class label per sample), got shape {np.shape(y)}")
    idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    bad = classes[idx] != y
    if np.any(bad):
        raise ValueError(f"y contains label {y[np.argmax(bad)]!r}, which is not in classes {list(classes)}")
    return idx.astype(np.int64).reshape(-1, 1)
