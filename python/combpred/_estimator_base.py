"""What the estimators share: Go model handles, fitting with a progress callback and Ctrl-C,
validation of inputs and targets, the fast prediction path, scoring and pickling through bytes."""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse as _sparse
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils._param_validation import StrOptions, make_constraint, validate_parameter_constraints
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted
from sklearn.utils.validation import validate_data as _sklearn_validate_data

from . import _capi, _core
from . import decision as _decision
from . import spaces as _spaces
from ._schema import Number
from ._weights import check_sample_weight, weighted_mean
from .metrics import _node_costs

# Entries of dense predictions decoded at a time when predict returns a sparse matrix (64 MiB of int64).
_SPARSE_OUTPUT_BLOCK = 1 << 23


def validate_data(estimator: Any, X: Any, y: Any = "no_validation", **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data``, with masked arrays that mask an entry refused first
    (:func:`_capi.check_unmasked`: its conversions drop the mask), and sparse DataFrames filled with
    other than 0 (:func:`_capi.check_pandas_fill_values`: its conversion raised pandas' words)."""
    _capi.check_unmasked(X, "X")
    _capi.check_unmasked(y, "y")
    _capi.check_not_dates(X, "X")
    if _capi.is_pandas_sparse(X):
        _capi.check_pandas_fill_values(X, "X")
    if isinstance(X, Iterator | Mapping) and not _capi.is_sparse(X):  # a DOK matrix is a Mapping
        # scikit-learn's float() of the whole object named neither X nor what to pass (probe DL)
        fix = "pandas.DataFrame(X)" if isinstance(X, Mapping) else "np.asarray(list(X))"
        raise TypeError(f"X must be an array of rows (2-D), got a {type(X).__name__}; pass {fix}")
    if (
        isinstance(X, np.ndarray)
        and X.ndim == 2
        and kwargs.get("dtype") is np.float64
        and not (X.dtype == np.float64 and X.flags.c_contiguous and X.flags.aligned)
    ):
        # the copy of a float32, strided or broadcast X (a view can stand for gigabytes) is sized by
        # the caller: checked before it is made, naming X (the output's check named "the result",
        # after the copy; probe 85)
        _capi.check_output(X.shape, "X", "its contiguous float64 copy")
    try:
        if isinstance(y, str) and y == "no_validation":
            return _sklearn_validate_data(estimator, X, **kwargs)
        return _sklearn_validate_data(estimator, X, y, **kwargs)
    except (TypeError, OverflowError) as exc:
        # float() of an entry that is no real number (an iterator, a Period, an int beyond float64):
        # the targets are numbers or labels by now, so the entry is X's
        text = str(exc)
        if not (text.startswith("float() argument") or "too large to convert to float" in text):
            raise
        raise type(exc)(f"X must hold real numbers: {text}") from None


def _check_fitted(estimator: Any) -> None:
    """scikit-learn's ``check_is_fitted(estimator, "_model")``, answered from the instance's own
    attributes when it is fitted: scikit-learn's reads the estimator's tags, a third of a
    single-row predict (about 9 µs of 70). An unfitted estimator gets scikit-learn's error."""
    state = estimator.__dict__
    if "_model_obj" not in state and "_model_bytes" not in state:  # the stores of the _model property
        fitting = state.get("_fitting")  # one_fit_at_a_time's: the thread whose fit runs now
        if fitting is not None and fitting != threading.get_ident():
            # scikit-learn's "not fitted yet. Call 'fit'" misled a thread predicting with a model
            # that another thread refits (probe 81)
            raise NotFittedError(_BEING_FITTED.format(type(estimator).__name__))
        check_is_fitted(estimator, "_model")


_BEING_FITTED = (
    "this {} is being fitted in another thread, which dropped its previous model; call again once it is fitted"
)


class _SetDuringOwnFit(RuntimeError):
    """A parameter set, or a fit started, from inside the estimator's own fit (its callable kernel, a
    callback): the fit raises it as it is, not as the error of the kernel that made it."""


_USER_CODE = threading.local()  # active: the callbacks this thread is inside (their ids)


@contextlib.contextmanager
def user_code(callback: Any, name: str) -> Iterator[None]:
    """Mark the user's code the library calls (a callable kernel, named ``name``): a fit of the
    estimator being fitted, started from there, is refused by :func:`one_fit_at_a_time`, and so is
    the same callback called again from inside itself (a kernel that predicts with its own
    estimator recursed to Python's limit: an 11 KB error naming the kernel 99 times, probe DZ)."""
    active = _USER_CODE.__dict__.setdefault("active", [])
    if id(callback) in active:
        raise _SetDuringOwnFit(
            f"{name} was called again from inside its own call (it uses the estimator it belongs to, whose fit or "
            "predict calls it): a callable kernel must not use its own estimator; use a copy (sklearn.base.clone)"
        )
    active.append(id(callback))
    try:
        yield
    finally:
        active.pop()


class _Fitted(NamedTuple):
    """The fitted state one call uses, read once: a refit in another thread replaces the estimator's
    attributes, never this snapshot (the model handle stays alive while the snapshot does)."""

    model: _core.Model
    space: _spaces.Space
    classes: Any
    sparse_output: bool  # predict returns CSR (the training targets were sparse)
    # StructuredRidge with a callable kernel: the fitted kernel, and the training inputs of an exact
    # (not Nyström) model, whose kernel rows against X are the core model's inputs
    kernel: Any = None
    X_fit: Any = None
    named_classes: bool = False  # class labels by name (space="multiclass"), not a Multiclass's ids
    # ProbabilisticStructured: the seed its fit drew, which seeds its sampled marginals (and the
    # predictions read from them) when neither the call nor an integer random_state gives one
    query_seed: int | None = None

    @property
    def dim(self) -> int:
        return self.model.dim

    @property
    def labels(self) -> Any:
        """The class labels a multi-class model predicts (``classes_``; the ids themselves for a
        Multiclass object), or None for every other space. Read from the fit, not from ``space``:
        a value set after the fit (set_params) does not change what the model predicts."""
        return self.classes if type(self.space) is _spaces.Multiclass else None

    @property
    def width(self) -> int:
        return self.model.width


def class_label_values(y: Any, name: str) -> np.ndarray:
    """Class labels as an array read the one way fit, partial_fit and score read them: an object
    array of real numbers (a pandas column after ``dropna``) as those numbers, and a missing label
    (NaN, None, pd.NA) refused naming ``name`` and the row. Integers in an object array were "not
    class labels" to fit, "not comparable" to score and taken by partial_fit; a missing label was
    scikit-learn's "Input contains NaN" or pandas' "boolean value of NA is ambiguous" (probe DL)."""
    if _capi.is_sparse(y):  # else numpy saw a 0-d object array
        raise ValueError(f"{name} must be 1-D class labels, not a sparse matrix")
    y = _capi.numeric_objects(_capi.as_array(y, name))
    if y.dtype == object:
        missing = np.fromiter((_capi.is_missing_value(v) for v in y.flat), bool, count=y.size).reshape(y.shape)
    elif y.dtype.kind == "f":
        missing = np.isnan(y)
    else:
        return y
    if missing.any():
        label = y[np.unravel_index(int(np.argmax(missing)), y.shape)]
        label = label.item() if isinstance(label, np.generic) else label
        raise ValueError(
            f"{name} holds a missing class label ({label!r}){_capi._first_at(missing)}: drop its rows, or give "
            "the missing ones a label of their own"
        )
    return y


def class_label_vector(y: Any, name: str) -> np.ndarray:
    """The 1-D class labels a multi-class model scores, from a 1-D array or one column."""
    y = class_label_values(y, name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or np.iscomplexobj(y):
        raise ValueError(f"{name} must be a 1-D array of class labels, got shape {y.shape} and dtype {y.dtype}")
    return y


_NO_PROGRESS = _capi.PROGRESS()  # a NULL callback: the core reports no progress


def run_fit(
    model_class: type[_core.Model],
    name: str,
    verbose: int,
    call: Callable[[Any, Any], int],
    measure: str = "relative gradient",
) -> _core.Model:
    """Run a fit, ``call(progress_callback, out_handle) -> status``, and return its model.

    When verbose, the callback prints the objective and the solver's convergence measure
    (``measure`` names it: the relative gradient, or SGD's relative change of J) after every
    iteration, and asks Go to stop on Ctrl-C. Otherwise no callback is passed: the interrupt poll
    (:func:`_capi.interrupt_flag`) stops the fit alone, and Go makes no call into Python per
    iteration (23 of them cost a fortieth of a yeast-sized linear fit). Either way the fit then
    raises KeyboardInterrupt once the call has returned, leaving no model behind.
    """
    captured: list[BaseException] = []
    interrupted: list[Any] = []

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

    callback = _capi.PROGRESS(progress) if verbose else _NO_PROGRESS
    out = _capi.out_i64()
    with _capi.interrupt_flag(interrupted):
        status = call(callback, out)
    if captured or interrupted:
        if status == _capi.OK:
            model_class(out.value)  # finished before it saw the interrupt: free the model at once
        if captured:
            raise captured[0]
        _capi.raise_interrupt(interrupted, "fit cancelled")
    _capi.check(status)
    return model_class(out.value)


def multilabel_classes(space: Any) -> np.ndarray:
    """``classes_`` of a multi-label model: the labels' indices 0 … n_labels − 1, as for
    scikit-learn's multi-label classifiers (RidgeClassifier, OneVsRestClassifier, MLPClassifier);
    ``cross_val_predict(method="decision_function" or "predict_proba")`` matches them to the
    columns. (Before 0.2 it was [0, 1], the values of each label.)"""
    return np.arange(space.n_labels)


def fitted_labels(space: Any, classes: Any, named_classes: bool) -> dict[str, Any]:
    """``space_`` and, when given, ``classes_``: the fitted attributes a fit stores with its model.

    With them, ``named_classes``: whether the fit took class labels by name (``space="multiclass"``)
    rather than as a Multiclass object's ids. ``score`` counts a label never seen as a miss in the
    first case and refuses it in the second; ``space_``, a Multiclass either way, cannot tell the
    two apart, and the ``space`` parameter may have been set anew since (probe CA)."""
    return {"space_": space, "_named_classes": named_classes} | ({"classes_": classes} if classes is not None else {})


def one_fit_at_a_time(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a fitting method holding the estimator's fit lock: two threads fitting one estimator
    (``fit``, ``partial_fit``) take turns, a whole fit or chunk each, instead of mixing their
    states (the attributes of one fit beside the model of the other, or chunks lost). Reentrant,
    for fits that call another."""

    @functools.wraps(method)
    def fit_alone(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _capi.process_lock(self.__dict__, "_fit_lock", threading.RLock):
            state = self.__dict__
            outer = state.get("_fitting")
            if outer == threading.get_ident() and _USER_CODE.__dict__.get("active"):
                # a kernel that fits its own estimator recursed to Python's limit, and the error
                # repeated the kernel's name 197 times (23 KB, probe DU)
                raise _SetDuringOwnFit(
                    f"{method.__name__} cannot be called during this {type(self).__name__}'s own fit (from its "
                    "kernel): the fit would start itself again; fit a copy (sklearn.base.clone) instead"
                )
            state["_fitting"] = threading.get_ident()  # parameters are not set from inside (__setattr__)
            try:
                return method(self, *args, **kwargs)
            except BaseException:
                if "_model_obj" not in state and "_model_bytes" not in state:
                    # unfitted: no attribute of the failed call's inputs either (n_features_in_,
                    # feature_names_in_ and sparse_output_ of an X that never made a model, probe DC)
                    self._reset()
                raise
            finally:
                if outer is None:
                    state.pop("_fitting", None)

    return fit_alone


def set_threads(n_jobs: int | None) -> None:
    """Set the core's thread count (process-wide) from ``n_jobs``; None is the core's default
    (OMP_NUM_THREADS when set, else all cores).

    The core reads the count as joblib does and clamps larger counts to 4 threads per CPU.
    """
    if n_jobs is None:
        _core.set_default_threads()
        return
    _core.set_threads(max(min(int(n_jobs), 2**63 - 1), -(2**63)))  # the C ABI takes an int64


def _plain_float64(X: Any) -> bool:
    """Whether X is a C-contiguous, aligned, finite float64 ndarray with rows and columns, which
    scikit-learn's checks would return as it is: fit and predict then skip them (0.5–1 ms of a
    yeast-sized linear fit, a fifth of its Python time, issue 18)."""
    return (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.flags.aligned
        and X.shape[0] > 0
        and X.shape[1] > 0
        and bool(np.isfinite(X).all())  # else scikit-learn's check names NaN or infinity
    )


def _plain_fit_inputs(X: Any, y: Any) -> bool:
    """Whether X is plain (:func:`_plain_float64`) and y holds 2-D integer or boolean structure
    rows, one per row of X: scikit-learn's fit checks would return both as they are."""
    return (
        type(y) is np.ndarray
        and y.ndim == 2
        and y.dtype.kind in "iub"
        and y.shape[1] > 0
        and _plain_float64(X)  # first: X may be anything (None, a scalar: scikit-learn names it)
        and y.shape[0] == X.shape[0]
    )


@functools.cache
def _param_names(cls: type) -> tuple[str, ...]:
    return tuple(BaseEstimator._get_param_names.__func__(cls))  # type: ignore[attr-defined]


@functools.cache
def _param_set(cls: type) -> frozenset[str]:
    """The parameters of ``cls`` that its ``__setattr__`` holds back during a fit."""
    return frozenset(cls._get_param_names())


_Made = tuple[tuple[str, tuple[Any, ...]], ...]
_MADE: dict[type, tuple[Any, _Made, int]] = {}  # class -> (its table as seen, constraints made, generation)
_GENERATIONS = itertools.count()

# Values whose admission depends on the value alone: (generation, class, parameter, type, value)
# once admitted stays admitted while the class's constraints are those of that generation. A grid
# search refits with the same few values, and checking them again took half of a fit's parameter
# validation. A validation that ran on constraints since replaced adds a key of its own generation,
# which no later validation looks up (probe CN).
_VALUE_TYPES = frozenset({int, float, str, bool, type(None)})
_SATISFIED: set[tuple[int, type, str, type, Any]] = set()
_SATISFIED_MAX = 4096  # then forgotten at once: a search over many floats


def _table_snapshot(table: dict[str, Any]) -> tuple[Any, tuple[tuple[str, Any, tuple[Any, ...] | None], ...]]:
    """The constraint table, each entry, and each entry's items, as objects: compared by identity,
    so that a table, list or list item replaced since is seen even where a new object took the
    address of a freed one (probe CN: keys of id() were reused)."""
    return table, tuple((name, c, tuple(c) if isinstance(c, list) else None) for name, c in table.items())


def _same_table(snapshot: tuple[Any, Any], table: dict[str, Any]) -> bool:
    seen, entries = snapshot
    if seen is not table or len(entries) != len(table):
        return False
    get = table.get
    for name, c, items in entries:
        if get(name) is not c:
            return False
        if items is not None:
            if len(c) != len(items):
                return False
            for a, b in zip(c, items, strict=True):
                if a is not b:
                    return False
    return True


def _made_constraints(cls: type) -> tuple[_Made, int]:
    """Each validated parameter of ``cls`` (its ``_get_param_names``, which a subclass may extend)
    with its constraint objects (scikit-learn's ``make_constraint``), as
    ``validate_parameter_constraints`` makes them at every call, and their generation: made again
    when the class's ``_parameter_constraints``, its entries or their items were replaced or
    resized since (probe CM: a constraint set on the class after its first fit was ignored)."""
    table = cls._parameter_constraints
    cached = _MADE.get(cls)
    if cached is not None and _same_table(cached[0], table):
        return cached[1], cached[2]
    _SATISFIED.clear()  # the admitted values were judged by constraints replaced (memory only)
    out = []
    for name in cls._get_param_names():
        constraints = table.get(name)
        if constraints is None or constraints == "no_validation":
            continue
        out.append((name, tuple(make_constraint(c) for c in constraints)))
    made = (_table_snapshot(table), tuple(out), next(_GENERATIONS))
    _MADE[cls] = made
    return made[1], made[2]


class StructuredEstimator(BaseEstimator):
    """Base of the estimators over an output space (``self.space``) backed by one Go model.

    Subclasses set ``_model_class`` (their kind of :class:`_core.Model`), fit through
    :meth:`_fit_data` and :meth:`_fit_model`, and read their fitted attributes in :meth:`_model_attributes`.
    """

    _model_class: type[_core.Model] = _core.Model

    # The parameters every estimator over a space takes, with the same meaning and range; a
    # subclass extends this dict with its own (``{**StructuredEstimator._parameter_constraints, ...}``).
    # Only the parameters that live in Python: those the core parses (alpha, tol, ...) come from
    # its schema (_schema.py), in each estimator's own dict.
    _parameter_constraints: dict = {
        "space": [StrOptions(set(_spaces._BY_NAME) | {"tournaments"}), _spaces.Space],
        "n_jobs": [Number(numbers.Integral, None, None, closed="neither"), None],  # not True (one thread)
        "verbose": ["verbose"],
        "decision": [StrOptions({_decision.MODE, *_decision.LOSSES})],  # Python-only: combpred.decision
        "node_weights": ["array-like", None],  # decision="hierarchical"'s costs, as bayes_decode takes them
    }

    # -- scikit-learn conventions -------------------------------------------------------------
    @classmethod
    def _get_param_names(cls) -> list[str]:
        """scikit-learn's list of the ``__init__`` parameters, read from the signature once per class
        (``get_params``, ``clone`` and every fit's validation asked ``inspect.signature`` again)."""
        return list(_param_names(cls))

    def set_params(self, **params: Any) -> StructuredEstimator:
        """Set the parameters of this estimator (scikit-learn's ``set_params``).

        A space is replaced whole: spaces are immutable, so a nested ``space__...`` name (which
        scikit-learn's own rule sent to a ``set_params`` spaces do not have) is refused by name.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
        """
        nested = sorted(key for key in params if key.startswith("space__"))
        if nested:
            raise ValueError(
                f"{nested[0]}: a space's own parameters cannot be set (spaces are immutable); replace the "
                "space whole, as in set_params(space=spaces.Permutations(5)), or in a parameter grid "
                "{'space': [spaces.Permutations(4), spaces.Permutations(5)]}"
            )
        return super().set_params(**params)

    def _validate_params(self) -> None:
        """scikit-learn's parameter validation, against constraint objects made once per class,
        and skipping values of plain types already admitted: made at every fit, with the
        signature read again, it took 0.3 ms, a twentieth of a yeast-sized linear fit (issue 18).
        A value no constraint admits is reported by scikit-learn's own validation, in its words."""
        cls = type(self)
        made, generation = _made_constraints(cls)
        for name, constraints in made:
            value = getattr(self, name)
            key = (generation, cls, name, type(value), value) if type(value) in _VALUE_TYPES else None
            if key is not None and key in _SATISFIED:
                continue
            if not any(c.is_satisfied_by(value) for c in constraints):
                super()._validate_params()  # raises InvalidParameterError
                return
            if key is not None:
                if len(_SATISFIED) >= _SATISFIED_MAX:
                    _SATISFIED.clear()
                _SATISFIED.add(key)

    def _space_in_use(self) -> str | _spaces.Space:
        """The fitted ``space_`` once fitted, else the ``space`` parameter: a space set since the
        fit applies at the next one, so what the model offers (``predict_proba``, its tags) follows
        the fitted space (a ranking model set to space="multiclass" offered its pair signs as class
        probabilities, probe CA)."""
        return self.__dict__.get("space_", self.space)

    def _is_classifier(self) -> bool:
        space = self._space_in_use()
        return space in ("multiclass", "multilabel") or type(space) in (_spaces.Multiclass, _spaces.Multilabel)

    def _is_multilabel(self) -> bool:
        space = self._space_in_use()
        return space == "multilabel" or type(space) is _spaces.Multilabel

    def _is_multiclass(self) -> bool:
        """Targets are class labels (1-D), whatever their values (``space="multiclass"``)."""
        return self.space == "multiclass"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = self._sparse_refusal(fitting=True) is None
        if self._is_classifier():
            from sklearn.utils import ClassifierTags

            tags.estimator_type = "classifier"
            # A multi-label model is a set of binary (0/1) outputs, not a multi-class classifier.
            tags.classifier_tags = ClassifierTags(
                multi_class=not self._is_multilabel(), multi_label=self._is_multilabel()
            )
            tags.target_tags.multi_output = self._is_multilabel()
            tags.target_tags.single_output = not self._is_multilabel()
        else:  # Ordinal, HierarchyPaths and DAGPaths take one label or node id per sample, as StructuredSVM says
            one_label = isinstance(self._space_in_use(), _spaces.Multiclass)
            tags.target_tags.multi_output = not one_label
            tags.target_tags.single_output = one_label
        return tags

    # -- sparse inputs ---------------------------------------------------------------------
    def _sparse_refusal(self, fitting: bool) -> str | None:
        """Why this configuration refuses a scipy.sparse X (None: it accepts one), for fitting
        (``fitting``) or for prediction."""
        return None

    def _accept_sparse(self, X: Any, fitting: bool) -> str | bool:
        """validate_data's ``accept_sparse`` for X: ``"csr"`` (other formats are converted to it)
        where the configuration takes sparse inputs; a sparse X it refuses is a TypeError naming
        the reason."""
        if _capi.is_pandas_sparse(X):  # scikit-learn converts it (DataFrame.sparse.to_coo) where sparse X is taken
            reason = self._sparse_refusal(fitting)
            if reason is not None:
                raise TypeError(
                    f"{type(self).__name__} does not take a sparse X {reason}; pass a dense array (X.sparse.to_dense())"
                )
            return "csr"
        if not _capi.is_sparse(X):
            return False
        _capi.check_sparse_structure(X, "X")
        reason = self._sparse_refusal(fitting)
        if reason is not None:
            raise TypeError(
                f"{type(self).__name__} does not take a sparse X {reason}; pass a dense array (X.toarray())"
            )
        return "csr"

    # -- fitting ------------------------------------------------------------------------------
    def _check_fit_X(self, X: np.ndarray) -> None:
        """Further checks of the validated training inputs (none by default)."""

    def _fit_data(
        self, X: Any, y: Any, sample_weight: Any, classes: Any = None, sparse_targets: bool = False
    ) -> tuple[np.ndarray, Any, Any, Any, Any]:
        """Validate the parameters and the data of a fit, forgetting any previous fit.

        Returns (X, space, rows, classes, sample_weight): X as C-contiguous float64 (or a float64
        scipy.sparse CSR matrix where the configuration takes sparse inputs), the resolved
        space, y encoded as int64 rows, classes_ (or None) and the weights (or None). With
        ``sparse_targets``, a sparse multi-label y stays sparse: rows is then its canonical CSR
        form (``_spaces._multilabel_ones``).
        """
        self._reset()  # first: a fit refused for its parameters leaves no model either
        self._validate_params()
        multi = not (self.space == "multiclass" or isinstance(self.space, _spaces.Multiclass))
        y = _capi.scipy_if_pandas_sparse(y)
        sparse_y = _capi.is_sparse(y)
        if sparse_y and sparse_targets and self._is_multilabel():
            return self._fit_data_sparse_y(X, y, sample_weight)
        y = self._dense_targets(y)
        if not multi:
            _one_label_per_sample(y, self.space)
        if multi and _plain_fit_inputs(X, y):
            self.n_features_in_ = X.shape[1]  # all validate_data would do (_reset dropped the names)
        else:
            X = _capi.summed_duplicates(X)
            X, y = validate_data(
                self,
                X,
                y,
                accept_sparse=self._accept_sparse(X, fitting=True),
                dtype=np.float64,
                order="C",
                multi_output=multi,
                y_numeric=multi,
                ensure_min_features=1,
                ensure_min_samples=1,
            )
        self._check_fit_X(X)
        space, rows, classes = self._targets(X, y, classes)
        sw = check_sample_weight(sample_weight, X.shape[0])
        set_threads(self.n_jobs)
        self.sparse_output_ = sparse_y
        return X, space, rows, classes, sw

    def _fit_data_sparse_y(self, X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any, Any, Any, Any]:
        """_fit_data for a sparse multi-label Y kept sparse: rows is its canonical CSR form."""
        ones = _spaces._multilabel_ones(y, "y")
        X = validate_data(
            self,
            _capi.summed_duplicates(X),
            accept_sparse=self._accept_sparse(X, fitting=True),
            dtype=np.float64,
            order="C",
            ensure_min_features=1,
            ensure_min_samples=1,
        )
        if ones.shape[0] != X.shape[0]:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]}, y has {ones.shape[0]}"
            )
        self._check_fit_X(X)
        space = self.space if isinstance(self.space, _spaces.Space) else _spaces.Multilabel(ones.shape[1])
        if space.dim != ones.shape[1]:
            raise ValueError(f"y has {ones.shape[1]} labels, the space {space!r} has {space.dim}")
        sw = check_sample_weight(sample_weight, X.shape[0])
        set_threads(self.n_jobs)
        self.sparse_output_ = True
        return X, space, ones, multilabel_classes(space), sw

    def _dense_targets(self, y: Any) -> Any:
        """A scipy.sparse Y of structure rows as the dense rows the core reads (checked against the
        memory budget first); class labels are 1-D and never sparse. Dense structure targets come
        as a numeric array (``_structure_targets``), as fit, partial_fit and score read them."""
        y = _capi.scipy_if_pandas_sparse(y)
        if not _capi.is_sparse(y):
            if not self._is_multiclass():
                return self._structure_targets(y)
            return y if y is None else class_label_values(y, "y")  # None: scikit-learn's "requires y" follows
        if self.space == "multiclass" or isinstance(self.space, _spaces.Multiclass):
            raise ValueError(f"space={self.space!r} takes 1-D class labels or node ids, not a sparse matrix")
        return _spaces._densify_targets(y, "y")

    def _structure_targets(self, y: Any) -> np.ndarray | None:
        """Dense structure targets as a numeric array, or an error naming ``y`` that says what to
        pass. scikit-learn's checks, which fit ran first, read an object array's strings as numbers
        (``"1"`` as 1.0) where score refused them, so that cross-validation on a Y of dtype object
        scored NaN; a list of label sets failed in ``float()``, and ragged rows in NumPy, with
        messages that named neither ``y`` nor the form wanted (probe AQ)."""
        if y is None:
            return y  # scikit-learn's "requires y to be passed" follows
        hint = (
            "; sklearn.preprocessing.MultiLabelBinarizer turns label sets into 0/1 indicator rows"
            if self._is_multilabel()
            else ""
        )
        try:
            y = _capi.numeric_objects(_capi.as_array(y, "y"))
        except ValueError as exc:  # the hint is for label sets, not a missing entry (probe 84)
            raise ValueError(f"{exc}{'' if 'missing value' in str(exc) else hint}") from None
        if y.dtype.kind not in "biufc":  # complex: scikit-learn's "Complex data not supported" follows
            if y.dtype == object:  # integers beyond int64 are named by value (ValueError, probe CH)
                if (odd := _capi.odd_object(y)) is not None:  # a missing value or a string, by place
                    raise _capi.odd_object_error(
                        y, odd, "y", f", the structures' encoding for space={self.space!r}{hint}"
                    )
                with contextlib.suppress(TypeError):  # no entry at all: the message below, with its hint
                    _capi.int64_array(y, "y")
            raise TypeError(
                f"y must hold integers, the structures' encoding for space={self.space!r}, got dtype {y.dtype}{hint}"
            )
        if y.ndim == 2 and y.shape[1] == 0:
            raise ValueError(f"y has no columns (shape {y.shape}); space={self.space!r} needs its structures' encoding")
        return y

    def _progress_measure(self, partial: bool) -> str:
        """What the progress callback's third number is, for verbose output."""
        return "relative gradient"

    def _fit_model(self, call: Any, **fitted: Any) -> None:
        """Run a fit call of the core layer (``call(progress, out) -> status``, see
        ``_core.RidgeModel.fit_call``) through :func:`run_fit` and store the model with the
        ``fitted`` attributes (``space_``, ``classes_``, ...: see :meth:`_set_model`)."""
        model = run_fit(
            self._model_class, type(self).__name__, self.verbose, call, self._progress_measure(partial=False)
        )
        self._set_model(model, **fitted)

    def _set_model(self, model: _core.Model, **fitted: Any) -> None:
        """Store a fitted model with the attributes read from it (:meth:`_model_attributes`) and the
        ``fitted`` ones given (``space_``, ``classes_``, ...) in one step: a Ctrl-C, or another
        thread reading the estimator, finds the state before or after, never a mix of two models."""
        state = {**fitted, **self._model_attributes(model, fitted), "_model_obj": model}
        _freeze_arrays(state)
        # One call into C, which runs no Python code (no signal handler, no other thread) as long as
        # no value it replaces is freed with a __del__: a fit has reset the estimator, and a
        # partial_fit still holds the previous model.
        self.__dict__.update(state)
        self.__dict__.pop("_model_bytes", None)  # _model_obj now answers first

    def _model_attributes(self, model: _core.Model, fitted: dict[str, Any]) -> dict[str, Any]:
        """The fitted attributes read from a model (stored with ``fitted``, see :meth:`_set_model`):
        ``objective_`` and ``relative_gradient_`` (how its fit ended), and those of the subclass
        (coef_, n_iter_, ...)."""
        return {"objective_": model.info.objective, "relative_gradient_": model.info.relative_gradient}

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
            classes = _sorted_labels(np.asarray(classes), "classes")
            if classes.dtype.kind == "c" or (classes.dtype.kind == "f" and np.isnan(classes).any()):
                raise ValueError(f"classes must be 1-D real or string labels without NaN, got {classes!r}")
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
                space = _spaces.from_name(self.space, y)
            else:
                space = self.space
            classes = None
            if type(space) is _spaces.Multiclass:
                classes = np.arange(space.n_classes)
            elif multilabel:
                classes = multilabel_classes(space)
                if type(space) is _spaces.Multilabel and space.n_labels == 1 and not isinstance(self.space, str):
                    _spaces.warn_single_label_column(repr(space))
            rows = space._to_rows(y, "y")
        if rows.shape[0] != X.shape[0]:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]}, y has {rows.shape[0]}"
            )
        return space, rows, classes

    def __sklearn_is_fitted__(self) -> bool:
        """Whether a model is held: scikit-learn's ``check_is_fitted`` asks this, not the trailing
        underscores, which a fit that failed after validating its data (``n_features_in_``) leaves."""
        state = self.__dict__
        return "_model_obj" in state or "_model_bytes" in state

    # Read from the fitted model, which predicts from its own copy: an edit of coef_ in place, or a
    # new array set, changed no prediction and was lost in a pickle (probe AW). The arrays are
    # read-only, and setting them is refused.
    _MODEL_ARRAYS = frozenset({"coef_", "intercept_"})
    # What a prediction reads beside the model: its space, class labels and output layout, the
    # training inputs of a callable kernel, and what X must look like. Set or deleted on a fitted
    # estimator they made another model's predictions: a Permutations model with space_ set to
    # Multiclass(3) returned class ids, and a reordered classes_ relabelled every prediction, where
    # the pickle check refused both edits (probe DK). Read-only, like the model's arrays.
    _FITTED_STATE = frozenset({"space_", "classes_", "sparse_output_", "X_fit_", "n_features_in_", "feature_names_in_"})

    def _refuse_fitted_edit(self, name: str) -> None:
        """Raise if ``name`` is part of the fitted model and a model is held (a fit forgets it first)."""
        if name in self._MODEL_ARRAYS and self.__sklearn_is_fitted__():
            raise AttributeError(
                f"{name} is read from the fitted model, which predicts from its own copy: setting it would change no "
                "prediction; fit again to change the model"
            )
        if name in self._FITTED_STATE and self.__sklearn_is_fitted__():
            raise AttributeError(
                f"{name} is part of the fitted model of this {type(self).__name__}, read-only: predictions read it "
                "with the model, and another value would make them another model's; fit again to change it"
            )

    def __delattr__(self, name: str) -> None:
        self._refuse_fitted_edit(name)
        super().__delattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._refuse_fitted_edit(name)
        if name in _param_set(type(self)):
            # A parameter set while another thread fits this estimator waits for that fit (or chunk)
            # to end: a fit reads its parameters more than once, and a kernel set between two reads
            # made a model of neither configuration (probe CT). The lock is the estimator's own and
            # reentrant: the old value's __del__, run here, may set parameters of any estimator.
            with _capi.process_lock(self.__dict__, "_fit_lock", threading.RLock):
                if self.__dict__.get("_fitting") == threading.get_ident():
                    raise _SetDuringOwnFit(
                        f"{name} cannot be set during this estimator's own fit (from its kernel, a callback or a "
                        "finalizer on the fitting thread): the fit would mix two configurations; set it before or after"
                    )
                super().__setattr__(name, value)
            return
        super().__setattr__(name, value)

    def _reset(self) -> None:
        """Forget a previous fit, so that a fit that fails (or is interrupted) leaves no stale model."""
        self.__dict__.pop("_model_obj", None)  # first: the fitted attributes are read-only while it is held
        self.__dict__.pop("_model_bytes", None)
        for key in list(vars(self)):
            if key.endswith("_") and not key.startswith("_"):
                delattr(self, key)

    # -- prediction ---------------------------------------------------------------------------
    def _inputs(self, X: Any) -> np.ndarray:
        """Validate prediction inputs; plain float64 arrays skip scikit-learn's slower checks
        (the core rejects non-finite values itself, naming the entry)."""
        _check_fitted(self)
        if not hasattr(self, "feature_names_in_") and _plain_float64(X):
            n_features = self.__dict__.get("n_features_in_")  # read once: a refit may reset it
            if n_features is not None and X.shape[1] != n_features:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{n_features} features as input."
                )
            return X
        return validate_data(
            self,
            _capi.summed_duplicates(X),
            accept_sparse=self._accept_sparse(X, fitting=False),
            dtype=np.float64,
            order="C",
            reset=False,
        )

    def _fitted(self) -> _Fitted:
        """The fitted state of one call (see :class:`_Fitted`), read once; sets the core's threads
        from ``n_jobs``, as fit does (the last fit's count applied to every later call, probe Y)."""
        _check_fitted(self)
        n_jobs = self.n_jobs
        # set since the fit: checked as fit checks it (probe CA); Python's and NumPy's integers need
        # no check (the check cost a NumPy integer's single-row predict 18 µs of 55)
        if n_jobs is not None and type(n_jobs) is not int and not isinstance(n_jobs, np.integer):
            validate_parameter_constraints(
                {"n_jobs": self._parameter_constraints["n_jobs"]}, {"n_jobs": n_jobs}, caller_name=type(self).__name__
            )
        set_threads(n_jobs)
        for _ in range(2):
            try:
                state = self.__dict__
                return _Fitted(
                    self._model,
                    self.space_,
                    state.get("classes_"),
                    state.get("sparse_output_", False),
                    state.get("_callable"),
                    state.get("X_fit_"),
                    # pickles from before it was kept: the space parameter, as score read it then
                    state.get("_named_classes", isinstance(self.space, str)),
                    state.get("_query_seed"),
                )
            except AttributeError:  # a fit in another thread has just reset the estimator
                _check_fitted(self)  # NotFittedError while it runs; once done, read again
        raise NotFittedError(_BEING_FITTED.format(type(self).__name__))

    def _scores(self, X: Any, fitted: _Fitted | None = None) -> np.ndarray:
        """The scores ⟨w, φ(x)⟩ of every ψ coordinate for each row of X, from ``fitted`` (a snapshot
        taken by the caller) or else from one taken now."""
        fitted = fitted or self._fitted()
        return fitted.model.decision(self._inputs(X))

    def _decision_function(self, X: Any) -> np.ndarray:
        fitted = self._fitted()  # one snapshot: a refit in another thread cannot mix two models
        return self._margin(fitted, self._scores(X, fitted))

    def _margin(self, fitted: _Fitted, scores: np.ndarray) -> np.ndarray:
        """scikit-learn's shape of a decision function: the margin u₁ − u₀ for two classes, for
        every model fitted as a multi-class classifier (``space="multiclass"`` or a Multiclass
        object), so that scikit-learn's binary scorers (roc_auc, average_precision) take it."""
        if type(fitted.space) is _spaces.Multiclass and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def _structures(self, fitted: _Fitted, rows: np.ndarray) -> np.ndarray:
        """Structures in the space's encoding from int64 rows (class labels for multiclass)."""
        return self._labelled(fitted, fitted.space._from_rows(rows))

    def _labelled(self, fitted: _Fitted, structures: np.ndarray) -> np.ndarray:
        """Structures in the space's encoding as predict returns them: class labels for multiclass."""
        if fitted.labels is not None:
            return fitted.labels[structures]
        return structures

    def _predict(self, X: Any, fitted: _Fitted | None = None) -> Any:
        fitted = fitted or self._fitted()
        X = self._inputs(X)
        return self._output(fitted, lambda rows: self._structures(fitted, fitted.model.predict(rows)), X)

    def _check_decision(self, space: Any) -> None:
        """Refuse, before the fit, a ``decision`` rule the space cannot take."""
        if self.decision != _decision.MODE:
            try:
                _decision.check_rule(space, self.decision)
            except ValueError as exc:
                raise ValueError(f"decision={self.decision!r}: {exc} (and 'mode', the decoded structure)") from None
        if self.decision == "hierarchical":
            _node_costs(self.node_weights, space.dim)  # a ValueError naming node_weights, before the fit

    def _decision_rule(self) -> tuple[Any, Any]:
        """``decision`` and ``node_weights``, read once (set_params in another thread may change
        them meanwhile), the rule validated as fit would: predict needs no refit, so a value set
        after fit is checked here."""
        decision, node_weights = self.decision, self.node_weights
        if not (isinstance(decision, str) and (decision == _decision.MODE or decision in _decision.LOSSES)):
            validate_parameter_constraints(  # raises, with scikit-learn's message
                {"decision": self._parameter_constraints["decision"]},
                {"decision": decision},
                caller_name=type(self).__name__,
            )
        return decision, node_weights

    def _decision_marginals(self, fitted: _Fitted, X: Any) -> np.ndarray:
        """The marginals the rules of ``decision`` read, each estimator's own."""
        raise NotImplementedError

    def _decide(self, X: Any, fitted: _Fitted | None = None) -> Any:
        """What ``predict`` returns under ``decision``: the decoder's structure (``_predict``) for
        ``"mode"``, else the structure of least expected loss from ``predict_marginals``, from the
        snapshot ``fitted`` (or one taken now). A value set after fit (set_params) is validated
        here, as fit would, since predict needs no refit."""
        decision, node_weights = self._decision_rule()
        fitted = fitted if fitted is not None else self._fitted()  # one snapshot for the marginals and their decoding
        if decision == _decision.MODE:
            return self._predict(X, fitted)
        marginals = self._decision_marginals(fitted, X)
        try:
            # in the space's encoding already (ids, not the core's rows, for the multiclass family)
            costs = {"node_weights": node_weights} if decision == "hierarchical" else {}
            structures = _decision.bayes_decode(fitted.space, marginals, decision, **costs)
        except ValueError as exc:  # a rule set after fit (set_params) that the space cannot take
            raise ValueError(f"decision={decision!r}: {exc}") from None
        return self._output(fitted, lambda s: self._labelled(fitted, s), structures)

    @staticmethod
    def _output(fitted: _Fitted, structures_of: Callable[[Any], np.ndarray], X: Any) -> Any:
        """``structures_of(X)`` as predict returns it: a scipy.sparse CSR matrix when the training
        targets were sparse (``sparse_output_``, as OneVsRestClassifier does), decoded and converted
        a block of rows at a time so that the dense predictions never exist whole; else as is."""
        if not fitted.sparse_output:
            return structures_of(X)
        q = X.shape[0]
        step = max(1, _SPARSE_OUTPUT_BLOCK // max(1, fitted.width))
        blocks = [_sparse.csr_matrix(structures_of(X[lo : lo + step])) for lo in range(0, q, step)]
        return _sparse.vstack(blocks, format="csr")

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean quality of the predictions on (X, y): accuracy for multiclass (a label the model
        never saw counts as a miss), 1 − Hamming loss for multilabel, mean Kendall τ for
        permutations, the space's own score otherwise (see ``combpred.spaces``), weighted by
        ``sample_weight`` (validated as in :meth:`fit`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like
            True structures (class labels for multiclass), one per row of X.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        fitted = self._fitted()
        if hasattr(X, "__dask_graph__"):  # the Dask wrappers' lazy predict, which takes its own snapshot
            pred = self.predict(X)
            if self._fitted().model is not fitted.model:  # y would be read in one fit's space, pred come from another's
                raise RuntimeError(f"this {type(self).__name__} was refitted in another thread while score ran")
        else:
            # from the same snapshot as y's space: a partial_fit in another thread made 9 % of a
            # monitoring thread's scores raise "refitted in another thread" (probe 86)
            pred = self._decide(X, fitted)
        if _capi.is_sparse(pred):
            pred = pred.toarray()
        # a lazy prediction (a Dask X) computed: of unknown chunk sizes it has no len (probe CZ)
        pred = np.asarray(pred)
        if len(pred) == 0:  # a Dask X of no rows, which the in-memory validation refuses (its score was nan, probe FN)
            raise ValueError(
                f"Found array with 0 sample(s) (shape {pred.shape}) while a minimum of 1 is required by score."
            )
        sw = check_sample_weight(sample_weight, len(pred))
        if fitted.labels is not None:
            y = class_label_vector(y, "y")
            if y.shape[0] != len(pred):
                raise ValueError(f"y has {y.shape[0]} labels but X has {len(pred)} rows")
            if fitted.named_classes:
                _check_unseen_labels(y, fitted.labels)
            else:  # a Multiclass object: its labels are 0 … n − 1, anything else is not a class
                class_rows(y, fitted.labels)
            return weighted_mean(pred == y, sw)
        y = self._dense_targets(y)
        if len(np.asarray(y)) != len(pred):
            raise ValueError(f"y has {len(np.asarray(y))} rows but X has {len(pred)} rows")
        y = fitted.space._checked_rows(y, "y")  # an invalid structure is an error, not a low score
        return weighted_mean(fitted.space.score_samples(y, pred), sw)

    # -- pickling: the Go model travels as its bytes --------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        state.pop("_model_lock", None)
        state.pop("_fit_lock", None)
        state.pop("_fitting", None)
        model = state.pop("_model_obj", None)  # else "_model_bytes" not yet built travels as it came
        if model is not None:
            state["_model_bytes"] = model.to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # The model bytes are the one source of truth: the fitted attributes pickled beside them are
        # re-read from the model, and the space is checked against the model's own. In a process
        # that cannot call the core (a child forked after the parent loaded it), the model is built
        # on first use instead, so that unpickling a task succeeds and its call raises
        # ForkedChildError, which reaches the caller as the task's exception.
        # pickles from before node_weights existed decide as they did: with unit costs
        super().__setstate__({"node_weights": None, **state})
        if "_model_bytes" in state and _capi.usable():
            self._model  # noqa: B018 -- build (and check) now

    @property
    def _model(self) -> _core.Model:
        model = self.__dict__.get("_model_obj")
        if model is not None:
            return model
        if "_model_bytes" not in self.__dict__:
            raise AttributeError("_model")
        with _capi.process_lock(self.__dict__, "_model_lock"):
            model = self.__dict__.get("_model_obj")
            if model is None:
                model = self._load_model(self.__dict__["_model_bytes"])
        return model

    @_model.setter
    def _model(self, model: _core.Model) -> None:
        self.__dict__["_model_obj"] = model
        self.__dict__.pop("_model_bytes", None)

    def _check_pickled_inputs(self, model: _core.Model) -> None:
        """Refuse a pickle whose ``n_features_in_`` is not what its model bytes take."""
        n_features = self.__dict__.get("n_features_in_")
        if n_features != model.n_features:
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: n_features_in_={n_features!r} but its model "
                f"bytes take {model.n_features} features; the pickle was altered"
            )

    def _load_model(self, data: bytes) -> _core.Model:
        """Build the model of pickled bytes and derive the fitted attributes from it."""
        model = self._model_class.from_bytes(data)
        space = self.__dict__.get("space_")
        if not isinstance(space, _spaces.Space) or not model.space().same(space._handle()):
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: its model bytes hold another space than "
                f"space_={space!r}; the pickle was altered"
            )
        self._check_pickled_inputs(model)
        classes = self.__dict__.get("classes_")
        # predict maps the ids of every Multiclass model through classes_ (Multiclass objects too)
        labelled = classes is not None and type(space) is _spaces.Multiclass
        # judged by the fitted space_, not the space parameter, which set_params may have changed
        # since the fit (a Permutations model after set_params(space="multiclass") was refused)
        if (type(space) is _spaces.Multiclass and classes is None) or (
            labelled and not (_are_sorted_labels(classes) and len(classes) == model.dim)
        ):
            # classes_ is np.unique's: reordered or repeated labels predicted the wrong ones silently
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: classes_ is not the sorted, distinct labels of "
                f"the model's {model.dim} classes; the pickle was altered"
            )
        if type(space) is _spaces.Multilabel and classes is not None:
            # pickles before 0.2 hold [0, 1], each label's values: partial_fit(classes=labels) then
            # refused the labels' indices that classes_ documents now
            self.__dict__["classes_"] = multilabel_classes(space)
        _freeze_arrays(self.__dict__)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # warned when it was fitted
            self._set_model(model)
        return model


def _freeze_arrays(state: dict[str, Any]) -> None:
    """Make the fitted arrays beside the model read-only (see ``_FITTED_STATE``): ``classes_[0] = 5``
    relabelled every prediction in place. Each is the estimator's own array (np.unique's classes, a
    copy of X), never the caller's."""
    for key in ("classes_", "X_fit_"):
        value = state.get(key)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False


def _are_sorted_labels(classes: Any) -> bool:
    """Whether ``classes`` is what np.unique returns of them: a 1-D array, sorted, no repeats."""
    if not isinstance(classes, np.ndarray) or classes.ndim != 1:
        return False
    try:
        unique = np.unique(classes)
    except TypeError:
        return False
    return unique.shape == classes.shape and bool(np.all(unique == classes))


def _one_label_per_sample(y: Any, space: Any) -> None:
    """Refuse a y of several columns for a space of one label per sample, saying what it takes:
    scikit-learn's "y should be a 1d array" did not, and 0/1 node rows are another space's
    encoding (probe FJ)."""
    try:
        shape = np.shape(y)
    except ValueError:  # ragged: validate_data names it
        return
    if len(shape) == 2 and shape[1] > 1:
        what = "class label" if isinstance(space, str) else space._one_target
        raise ValueError(f"y has shape {shape}: space={space!r} takes a 1-D y, one {what} per sample")


def class_labels(y: Any, too_few: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate the class labels of space='multiclass' (1-D, or one column; discrete) and return
    the sorted classes and each label's int64 index into them; ``too_few`` ends the message when
    y has a single class."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one class label per sample) for space='multiclass', got shape {y.shape}")
    # sorted first: type_of_target's own np.unique raised numpy's TypeError on labels that cannot be
    # ordered (None among strings)
    classes, idx = _sorted_labels(y, "y", return_inverse=True)
    kind = type_of_target(y, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type: y is {kind!r}; space='multiclass' needs class labels")
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); {too_few}")
    return classes, idx.astype(np.int64)


def _sorted_labels(labels: np.ndarray, name: str, return_inverse: bool = False) -> Any:
    """np.unique of class labels, refusing with a ValueError naming ``name`` labels that cannot be
    ordered against each other (None among strings: numpy's TypeError named neither)."""
    try:
        return np.unique(labels, return_inverse=return_inverse)
    except TypeError as exc:
        raise ValueError(f"{name} holds class labels that cannot be sorted together: {exc}") from None


def _check_unseen_labels(y: np.ndarray, classes: np.ndarray) -> None:
    """Refuse labels that cannot be classes of a ``space="multiclass"`` model, and let through
    those it merely never saw: ``score`` counts them as misses, as scikit-learn's accuracy does (a
    cross-validation fold with a class absent from its training rows scored NaN). NaN and infinity,
    a fraction among integer classes, and text among numbers (or the reverse) are errors."""
    _check_label_kind(y, classes, "y")
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y) | ((classes.dtype.kind in "iub") & (y != np.round(y)))
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(f"y row {i} holds {y[i].item()!r}, which cannot be one of the classes {classes.tolist()}")
    try:
        np.searchsorted(classes, y)
    except TypeError as exc:  # labels NumPy cannot compare with the classes (None, say)
        raise ValueError(f"y holds labels that are not comparable with classes {classes.tolist()}: {exc}") from None


def _check_label_kind(y: np.ndarray, classes: np.ndarray, name: str) -> None:
    """Refuse text labels for numeric classes or the reverse: ``0`` against classes ``['0', '1']``
    was reported as a label not among them (probe FJ)."""
    if (classes.dtype.kind in "iufb") != (y.dtype.kind in "iufb"):
        raise ValueError(
            f"{name} holds labels of dtype {y.dtype}, which are not comparable with classes {classes.tolist()}"
        )


def class_rows(y: Any, classes: np.ndarray, name: str = "y") -> np.ndarray:
    """Encode class labels as int64 rows of indices into sorted classes, naming an unknown label
    and the argument ``name`` that holds it."""
    y = np.asarray(y).ravel()
    known = classes.tolist()  # Python values: their reprs, not NumPy's np.str_('a')
    if np.iscomplexobj(y):
        raise ValueError(f"{name} holds complex values; class labels are those of classes {known}")
    if y.dtype.kind != "O" and classes.dtype.kind != "O":
        _check_label_kind(y, classes, name)
    try:
        idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    except TypeError as exc:  # labels NumPy cannot compare with the classes (None, say)
        raise ValueError(f"{name} holds labels that are not comparable with classes {known}: {exc}") from None
    bad = classes[idx] != y
    if np.any(bad):
        label = y[np.argmax(bad)]
        label = label.item() if isinstance(label, np.generic) else label  # an object array's own value
        # the row, as the spaces' own checks name it (a Dask partition's counted from X's first row)
        raise ValueError(f"{name} contains label {label!r}{_capi._first_at(bad)}, which is not in classes {known}")
    return idx.astype(np.int64).reshape(-1, 1)
