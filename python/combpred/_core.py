"""The typed layer over the C ABI: one class per handle kind, one method per ABI call.

The estimators (``_ridge``, ``_probabilistic``), the spaces and the settings call these methods;
nothing else in the package touches ``_capi.lib()`` or names an ABI function. Every ABI function
appears here under its full name (``cp_ridge_decision``, never a name assembled at run time), so
that ``grep`` finds each use. Arrays reach these methods already validated by their callers; the
methods check them once more for the call (shape and dtype, through ``_capi.f64``/``_capi.i64``,
which refuse anything else) and turn every status into an exception (``_capi.check``).

The info calls answer with a JSON object (see capi/info.go); the dataclasses below hold the fields
Python uses, and ignore the others, so that a field the core adds breaks nothing.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import dataclasses
import functools
import json
import os
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from . import _capi, _schema

# Queries of at most this many rows run inline in the core, which cannot cancel them: the Ctrl-C
# plumbing of _capi.interruptible (two signal-handler swaps) would only slow single-row predictions.
_INLINE_ROWS = int(_schema.query_default("inline_rows"))
_CHAIN_REPORT_COLUMNS = int(_schema.query_default("chain_report_columns"))


def _interruptible(rows: int, inline_rows: int = _INLINE_ROWS) -> Any:
    """Ctrl-C's plumbing for a query of ``rows`` rows, which the core runs inline (deaf to it) up to
    ``inline_rows``: the schema's value, or a model's own where decoding a row is expensive."""
    return _capi.interruptible() if rows > inline_rows else contextlib.nullcontext()


# -- info results -----------------------------------------------------------------------------------


def _from_json(cls: type, fields: dict[str, Any]) -> Any:
    """An info dataclass from the core's JSON object: the fields it declares, the rest ignored.
    Floats go through float(): the core writes NaN and ±Inf as the strings "NaN", "Infinity"."""
    return cls(**{name: float(fields[name]) if is_float else fields[name] for name, is_float in _declared(cls)})


@functools.cache
def _declared(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of an info dataclass and whether each is a float, read once per class (every fit
    and every space reads one info)."""
    return tuple((f.name, f.type == "float") for f in dataclasses.fields(cls))


@dataclasses.dataclass(frozen=True)
class SpaceInfo:
    """What ``cp_space_info`` reports of a space."""

    kind: str
    dim: int  # d, the length of ψ
    width: int  # int64 values per structure
    log_count: float  # log|Y|
    guarantee: float  # the decoder's z-approximation factor, 0 when exact
    uncounted: str  # why |Y|, the uniform moments and sampler are unknown; "" when known
    zero_one: bool  # every ψ(y) is in {0, 1}^d
    constant_norm: bool  # ‖ψ(y)‖² is the same for every y (a ψ that is not 0/1)
    coord_low: float  # every coordinate of every ψ(y) lies in [coord_low, coord_high]
    coord_high: float


@dataclasses.dataclass(frozen=True)
class FitInfo:
    """How a fit ended, as both model kinds report it."""

    n_features: int
    dim: int
    width: int
    n_iter: int
    converged: bool
    objective: float  # NaN when the probabilistic model's inference was sampled
    relative_gradient: float
    inline_rows: int  # predict runs inline (not cancellable) up to this many rows: fewer where decoding is expensive
    warnings: list  # what the fit warns of, for the estimator to issue; [] for a model read from bytes


@dataclasses.dataclass(frozen=True)
class RidgeInfo(FitInfo):
    """What ``cp_ridge_info`` reports of a StructuredRidge model."""

    kernel: str
    n_dual: int  # training samples kept in the kernel expansion (0: linear or Nyström)
    n_components: int  # of the Nyström map, 0 without one
    n_seen: int  # examples trained on (partial_fit: the running total)
    n_steps: int  # SGD steps taken
    streaming: bool  # partial_fit continues the model exactly
    solver: str  # the solver the last fit ran, "auto" resolved; "" for a model read from bytes


@dataclasses.dataclass(frozen=True)
class ProbInfo(FitInfo):
    """What ``cp_prob_info`` reports of a ProbabilisticStructured model."""

    intercept: bool
    exact: bool  # inference during the fit was exact
    solver: str  # "none" for a model built from coefficients, "lbfgs", "adam"
    relative_gradient_se: float  # Monte Carlo standard error of relative_gradient (0: exact; NaN: unknown)
    final_samples: int  # samples per row of the last sampled gradient (0: exact or unknown)


def _read_json(call: Callable[[Any, int, Any], int]) -> dict[str, Any]:
    """Read the JSON object of an info call ``call(buf, capacity, needed) -> status``: into a
    buffer that usually suffices, or a second time into one of the size the first call reported."""
    needed = _capi.out_i64()
    buf = (ctypes.c_uint8 * 1024)()
    _capi.check(call(buf, len(buf), needed))
    if needed.value > len(buf):
        buf = (ctypes.c_uint8 * needed.value)()
        _capi.check(call(buf, len(buf), needed))
    # string_at copies the bytes at once (a slice of buf is a list of ints); never past the buffer
    return json.loads(ctypes.string_at(buf, min(needed.value, len(buf))))


def _read_bytes(call: Callable[[Any, int, Any], int]) -> bytes:
    """Read the bytes of a ``*_to_bytes`` call: its size first, then the bytes."""
    needed = _capi.out_i64()
    _capi.check(call(None, 0, needed))
    buf = (ctypes.c_uint8 * needed.value)()
    _capi.check(call(buf, needed.value, needed))
    return bytes(buf)


def _byte_view(data: Any) -> tuple[Any, int]:
    """The caller's model bytes as a ctypes array (a copy: ctypes needs a writable buffer)."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"model bytes must be bytes, got {type(data).__name__}")
    return (ctypes.c_uint8 * len(data)).from_buffer_copy(data), len(data)


# -- process-wide settings --------------------------------------------------------------------------


def set_threads(n: int) -> None:
    """Set the core's thread count (process-wide) from an n_jobs as joblib reads it (-1: all cores)."""
    _capi.check(_capi.lib().cp_set_threads(n))


def get_threads() -> int:
    """The core's thread count (``cp_get_threads``)."""
    out = _capi.out_i64()
    _capi.check(_capi.lib().cp_get_threads(out))
    return out.value


def set_default_threads() -> None:
    """Set the core's thread count (process-wide) as n_jobs=None asks (``cp_set_threads_default``:
    OMP_NUM_THREADS as it was when the library was loaded, when it holds a positive integer, as
    joblib's process workers set it; else all cores)."""
    _capi.check(_capi.lib().cp_set_threads_default(_capi.omp_num_threads()))


def set_max_memory(n_bytes: int) -> None:
    """Set the core's memory budget in bytes (0: the default)."""
    try:
        _capi.check(_capi.lib().cp_set_max_memory(n_bytes))
    finally:
        _capi.forget_budget()


def get_max_memory() -> tuple[int, int]:
    """Return (the budget as set, 0 for the default; the budget in force), in bytes."""
    return _capi.max_memory()


def gemm_flops() -> int:
    """Return the floating-point operations of the core's dense products since it was loaded.

    A benchmark reads it before and after a fit: the difference over the fit's time is the rate
    the fit achieved (its products only; kernel functions and decoders are not counted).
    """
    out = _capi.out_i64()
    _capi.check(_capi.lib().cp_gemm_flops(out))
    return out.value


# -- spaces ----------------------------------------------------------------------------------------


# The space handles made last (SpaceHandle.new), by kind and parameters: spaces with a few integer
# parameters, whose handles are small; others (a hierarchy's parent array) are made each time.
# A child forked after the parent used the library starts with none: the parent's handles name
# objects of the parent's Go runtime, and a space made in the child must fail with
# ForkedChildError at once, as it did before the handles were kept (the test battery's probe).
_RECENT_SPACES: tuple[int, collections.OrderedDict[tuple[str, tuple[int, ...]], SpaceHandle]] = (
    os.getpid(),
    collections.OrderedDict(),
)
_RECENT_SPACES_LOCKS: dict[str, Any] = {}  # _capi.process_lock's: a fork() may copy it held
_RECENT_SPACES_MAX = 16


def _recent_spaces() -> collections.OrderedDict[tuple[str, tuple[int, ...]], SpaceHandle]:
    """This process's handles made last (call holding the lock)."""
    global _RECENT_SPACES
    if _RECENT_SPACES[0] != os.getpid():
        _RECENT_SPACES = (os.getpid(), collections.OrderedDict())
    return _RECENT_SPACES[1]


_RECENT_SPACE_PARAMS = 4


class SpaceHandle:
    """Owns one Go space handle (``cp_space_*``) and frees it with the Python object."""

    # 0, no handle (the core numbers them from 1): an __init__ interrupted (Ctrl-C) before it
    # stored its handle left the finalizer an AttributeError to print (probe EF)
    value: int = 0

    def __init__(self, value: int):
        self.value = value
        self.info: SpaceInfo = _from_json(
            SpaceInfo, _read_json(lambda buf, cap, needed: _capi.lib().cp_space_info(value, buf, cap, needed))
        )

    @classmethod
    def new(cls, kind: str, params: tuple[int, ...]) -> SpaceHandle:
        """Create the space ``kind`` with its integer parameters (the core checks them), or return
        the handle made for the same ones lately: a core space never changes once made, and every
        fit with a space given by name made its own (0.2 ms of a yeast-sized linear fit)."""
        key = (kind, tuple(params)) if len(params) <= _RECENT_SPACE_PARAMS else None
        if key is not None:
            with _capi.process_lock(_RECENT_SPACES_LOCKS, "recent"):
                recent = _recent_spaces()
                h = recent.get(key)
                if h is not None:
                    recent.move_to_end(key)
                    return h
        _, p = _capi.i64(np.array(params, dtype=np.int64), (len(params),), "space parameters")
        out = _capi.out_i64()
        with _capi.interruptible():  # a DAG's ancestor sets can take seconds (the core decides what is cancellable)
            _capi.check(_capi.lib().cp_space_new(kind.encode(), p, len(params), out))
        h = cls(out.value)
        if key is not None:
            with _capi.process_lock(_RECENT_SPACES_LOCKS, "recent"):
                recent = _recent_spaces()
                recent[key] = h
                if len(recent) > _RECENT_SPACES_MAX:
                    recent.popitem(last=False)
        return h

    def __del__(self, _capi: Any = _capi) -> None:  # bound now: at exit the module's globals are gone
        if self.value and _capi.usable() and _capi._lib is not None:
            _capi.lib().cp_space_free(self.value)

    # A core space never changes once made, so a copy is the handle itself: copied as an object,
    # two owners freed one handle, and the first then failed as "invalid or already freed" (probe
    # CQ). Its number means nothing in another process: the spaces of combpred.spaces pickle.
    def __copy__(self) -> SpaceHandle:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SpaceHandle:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a core space handle cannot be pickled; pickle the space (combpred.spaces) or the estimator")

    def same(self, other: SpaceHandle) -> bool:
        """Whether both handles hold the same space (kind and parameters)."""
        out = _capi.out_i64()
        _capi.check(_capi.lib().cp_space_same(self.value, other.value, out))
        return bool(out.value)

    def mean(self, what: str) -> np.ndarray:
        """p, the mean of ψ under the uniform distribution (d,); ``what`` names it for the budget."""
        d = self.info.dim
        out, p = _capi.out_f64((d,), what)
        _capi.check(_capi.lib().cp_space_mean(self.value, p, d))
        return out

    def covariance(self) -> np.ndarray:
        """S, the covariance of ψ under the uniform distribution (d, d), refused before NumPy
        allocates when the core would refuse it."""
        _capi.check(_capi.lib().cp_space_covariance_check(self.value))
        d = self.info.dim
        out, p = _capi.out_f64((d, d))
        with _capi.interruptible():
            _capi.check(_capi.lib().cp_space_covariance(self.value, p, d))
        return out

    def covariance_dot(self, v: Any) -> np.ndarray:
        """S·v (d,) without materialising S."""
        d = self.info.dim
        v, pv = _capi.f64(v, (d,), "v")
        out, p = _capi.out_f64((d,))
        _capi.check(_capi.lib().cp_space_cov_mul(self.value, pv, p, d))
        return out

    def validate(self, rows: np.ndarray, first: int = 0, name: str = "Y") -> None:
        """Raise ValueError naming the first of the int64 rows (m, width) that is no structure,
        counting the rows from ``first``; the core words the message ("Y: row 3: …", the array
        named ``name``)."""
        m, w = rows.shape[0], self.info.width
        rows, p = _capi.i64(rows, (m, w), name)
        _capi.check(_capi.lib().cp_space_validate(self.value, p, m, w, first, name.encode()))

    def embed(self, rows: np.ndarray, name: str = "the result") -> np.ndarray:
        """ψ of each structure (m, d); ``name`` is what a MemoryError calls it."""
        m, w, d = rows.shape[0], self.info.width, self.info.dim
        rows, p = _capi.i64(rows, (m, w), "Y")
        out, pout = _capi.out_f64((m, d), name)
        with _interruptible(m):  # a budget-sized embedding is seconds of work (probe 86)
            _capi.check(_capi.lib().cp_space_embed(self.value, p, m, w, pout, d))
        return out

    def sample(self, n_samples: int, seed: int) -> np.ndarray:
        """n_samples uniform structures as int64 rows; interruptible."""
        w = self.info.width
        n_samples = _capi.int64_value(n_samples, "n_samples")  # the value sized here is the one passed
        out, p = _capi.out_i64_array((n_samples, w), f"n_samples structures of width {w}")
        with _capi.interruptible():
            _capi.check(_capi.lib().cp_space_sample(self.value, n_samples, seed, p, w))
        return out

    def decode(self, U: np.ndarray) -> np.ndarray:
        """argmax_y ⟨u, ψ(y)⟩ of each row of U (q, d), as int64 rows; interruptible."""
        d, w, q = self.info.dim, self.info.width, U.shape[0]
        U, p = _capi.f64(U, (q, d), "U")
        out, pout = _capi.out_i64_array((q, w), "U (rows to decode)")
        with _capi.interruptible():
            _capi.check(_capi.lib().cp_space_decode(self.value, p, q, d, pout, w))
        return out

    def max_margins(self, U: np.ndarray) -> np.ndarray:
        """Max-marginal margin of every coordinate of ψ for each row of U (q, d); interruptible."""
        d, q = self.info.dim, U.shape[0]
        U, p = _capi.f64(U, (q, d), "U")
        out, pout = _capi.out_f64((q, d), "U (rows of max margins)")
        with _capi.interruptible():
            _capi.check(_capi.lib().cp_space_max_margins(self.value, p, q, d, pout))
        return out

    def enumerate(self) -> np.ndarray:
        """Every structure as int64 rows (the core refuses large spaces)."""
        w, count = self.info.width, _capi.out_i64()
        _capi.check(_capi.lib().cp_space_enumerate(self.value, None, 0, w, count))
        out, p = _capi.out_i64_array((count.value, w))
        _capi.check(_capi.lib().cp_space_enumerate(self.value, p, count.value, w, count))
        return out


# -- models ----------------------------------------------------------------------------------------


class Model:
    """Owns one fitted Go model handle and frees it with the Python object.

    A subclass per model kind binds the kind's ABI functions, each under its full name; the calls
    that both kinds answer alike (scores, predictions, coefficients, bytes) are written once here.
    """

    _info_class: ClassVar[type[FitInfo]] = FitInfo
    # (the library, its functions of this kind): bound once per loaded library, so that a call
    # costs no attribute lookups; a child forked after the load gets ForkedChildError from
    # _capi.lib() before the cache is read.
    _bound: ClassVar[tuple[Any, dict[str, Callable[..., int]]] | None] = None
    value: int = 0  # no handle: see SpaceHandle.value

    def __init__(self, value: int):
        self.value = value
        info = self._calls()["info"]
        self.info = _from_json(self._info_class, _read_json(lambda buf, cap, needed: info(value, buf, cap, needed)))
        # The dimensions of every call on this model come from the model itself: an estimator
        # refitted in another thread cannot change them under a call.
        self.n_features, self.dim, self.width = self.info.n_features, self.info.dim, self.info.width

    # The kind's ABI functions (each subclass binds its own).
    @staticmethod
    def _bind(lib: Any) -> dict[str, Callable[..., int]]:
        raise NotImplementedError

    @classmethod
    def _calls(cls) -> dict[str, Callable[..., int]]:
        lib = _capi.lib()
        bound = cls._bound
        if bound is None or bound[0] is not lib:
            bound = cls._bound = (lib, cls._bind(lib))
        return bound[1]

    def __del__(self, _capi: Any = _capi) -> None:  # bound now: at exit the module's globals are gone
        if self.value and _capi.usable() and _capi._lib is not None:
            self._calls()["free"](self.value)

    # A fitted model never changes, so a copy is the object itself, and a pickle carries its
    # checked bytes: copied or pickled as an object, two owners freed one handle and the first then
    # failed as "invalid or already freed" (probe CQ).
    def __copy__(self) -> Model:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Model:
        return self

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return type(self).from_bytes, (self.to_bytes(),)

    def space(self) -> SpaceHandle:
        """A new handle of the model's own space."""
        out = _capi.out_i64()
        _capi.check(self._calls()["space"](self.value, out))
        return SpaceHandle(out.value)

    def to_bytes(self) -> bytes:
        """The model's bytes (pickling goes through these)."""
        to_bytes = self._calls()["to_bytes"]
        return _read_bytes(lambda buf, cap, needed: to_bytes(self.value, buf, cap, needed))

    @classmethod
    def from_bytes(cls, data: bytes) -> Model:
        """The model of bytes that ``to_bytes`` wrote (the core checks them)."""
        buf, n = _byte_view(data)
        out = _capi.out_i64()
        with _capi.interruptible():  # the space of a large DAG takes seconds to build (the core decides)
            _capi.check(cls._calls()["from_bytes"](buf, n, out))
        return cls(out.value)

    def _inputs(self, X: Any) -> tuple[int, tuple[Any, ...]]:
        """(q, the X arguments of a call): (x, q, n) for a dense X, the seven arguments of a
        ``_csr`` call for a scipy.sparse X (whose calls are named with the suffix)."""
        q = X.shape[0]
        if _capi.is_sparse(X):
            csr = _capi.Csr(X)
            if csr.shape[1] != self.n_features:
                raise ValueError(f"X has {csr.shape[1]} features, the model was fitted with {self.n_features}")
            return q, csr.args
        _, px = _capi.f64(X, (q, self.n_features), "X")
        return q, (px, q, self.n_features)

    @staticmethod
    def _call_name(name: str, args: tuple[Any, ...]) -> str:
        return name + "_csr" if len(args) == 7 else name

    def decision(self, X: Any, out: np.ndarray | None = None) -> np.ndarray:
        """The scores u(x) of the rows of X (q, d; dense or scipy.sparse), into ``out`` (a
        writable C-contiguous view) or a new array; interruptible."""
        q, xa = self._inputs(X)
        if out is None:
            out, p = _capi.out_f64((q, self.dim))
        else:
            _, p = _capi.f64(out, (q, self.dim), "out", writable=True)
        with _interruptible(q, self.info.inline_rows):  # the core's bound for scores, as for predict
            _capi.check(self._calls()[self._call_name("decision", xa)](self.value, *xa, p, self.dim))
        return out

    def predict(self, X: Any, out: np.ndarray | None = None) -> np.ndarray:
        """The predicted structures of the rows of X (dense or scipy.sparse) as int64 rows
        (q, width), into ``out`` or a new array; interruptible."""
        q, xa = self._inputs(X)
        if out is None:
            out, p = _capi.out_i64_array((q, self.width))
        else:
            _, p = _capi.i64(out, (q, self.width), "out", writable=True)
        with _interruptible(q, self.info.inline_rows):
            _capi.check(self._calls()[self._call_name("predict", xa)](self.value, *xa, p, self.width))
        return out

    def coef(self) -> tuple[np.ndarray, np.ndarray]:
        """A linear model's coefficients Wᵀ (d, n_features), in scikit-learn's orientation of
        ``coef_`` (one row per target; a transposed view of the core's W, not a copy), and
        intercept (d,)."""
        coef, pc = _capi.out_f64((self.n_features, self.dim))
        intercept, pi = _capi.out_f64((self.dim,))
        _capi.check(self._calls()["coef"](self.value, pc, self.n_features, self.dim, pi))
        coef.flags.writeable = intercept.flags.writeable = False  # the model predicts from its own copy
        return coef.T, intercept


def _fit_arrays(X: Any, rows: Any, width: int, sample_weight: np.ndarray | None) -> tuple[Any, ...]:
    """The checked (X, m, n, Y, width, sample_weight) arguments of a fit call (each buffer keeps
    its array alive, a converted copy included); for a scipy.sparse X, the seven arguments of a
    ``_csr`` call stand for (X, m, n); for multi-label targets kept sparse (rows a canonical CSR
    matrix of their ones, ``_spaces._multilabel_ones``), (indptr, nnz, indices, values) stand for
    (Y, width): the core checks the values."""
    m, n = X.shape
    if _capi.is_sparse(X):
        xa: tuple[Any, ...] = _capi.Csr(X).args
    else:
        xa = (_capi.f64(X, (m, n), "X")[1], m, n)
    if _capi.is_sparse(rows):
        _, pp = _capi.i64(rows.indptr, (m + 1,), "y's indptr")
        _, pi = _capi.i64(rows.indices, (rows.nnz,), "y's indices")
        _, pv = _capi.f64(rows.data, (rows.nnz,), "y's values")
        ya: tuple[Any, ...] = (pp, rows.nnz, pi, pv)
    else:
        ya = (_capi.i64(rows, (m, width), "y")[1], width)
    pw = None if sample_weight is None else _capi.f64(sample_weight, (m,), "sample_weight")[1]
    return (*xa, *ya, pw)


def _fit_function(lib: Any, name: str, args: tuple[Any, ...]) -> Callable[..., int]:
    """The fit function ``name`` of the ABI, its ``_csr`` form for the arguments of a sparse X, and
    its ``_sparse_y`` forms for targets given by their ones (written out, so that every ABI function
    appears under its full name)."""
    sparse_x, sparse_y = len(args) in (10, 12), len(args) in (8, 12)
    if sparse_y:
        return {"cp_ridge_fit": lib.cp_ridge_fit_csr_sparse_y if sparse_x else lib.cp_ridge_fit_sparse_y}[name]
    return {
        "cp_ridge_fit": lib.cp_ridge_fit_csr if sparse_x else lib.cp_ridge_fit,
        "cp_ridge_partial_fit": lib.cp_ridge_partial_fit_csr if sparse_x else lib.cp_ridge_partial_fit,
        "cp_prob_fit": lib.cp_prob_fit_csr if sparse_x else lib.cp_prob_fit,
    }[name]


class _KeptException:
    """The exception of a Python callback that Go calls during a fit (a Dask worker's error,
    KeyboardInterrupt): ``with kept:`` around the callback's body keeps it and sets ``status`` to
    the nonzero return that makes Go fail the fit; ``reraise`` raises it once the call returned.

    A callback that runs a long computation for Go (a pass over a Dask array) first calls
    ``stop_if_interrupted``: Go sees the call's interrupt flag only between its own steps, and the
    callback runs on a thread of Go's, which cannot read the flag of the calling thread; ``watch``,
    on that thread before the call, hands it over."""

    def __init__(self) -> None:
        self.exception: BaseException | None = None
        self.flag: list[Any] | None = None

    def watch(self) -> None:
        self.flag = _capi.current_flag()

    def stop_if_interrupted(self) -> None:
        if self.flag:
            _capi.raise_interrupt(self.flag, "fit cancelled")

    @property
    def status(self) -> int:
        return 0 if self.exception is None else 1

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        if exc is not None:
            self.exception = exc
        return True  # never let an exception unwind into Go

    def reraise(self, status: int, model_class: type[Model], out: Any) -> None:
        if self.exception is not None:
            if status == _capi.OK:  # pragma: no cover - Go fails the fit when the callback fails
                model_class(out.value)  # frees the model
            raise self.exception


def prob_data_sums(
    space: SpaceHandle,
    X: np.ndarray,
    rows: np.ndarray,
    sample_weight: np.ndarray | None,
    intercept: bool,
    coef: np.ndarray,
    centre: np.ndarray | None = None,
    weight_exponent: int = 0,
) -> tuple[float, float, np.ndarray]:
    """The ProbabilisticStructured data term at ``coef`` (rows × d) summed over the rows of a dense
    X with structures ``rows``: ``(loss, weight, grad)`` as ``cp_prob_data_sums`` defines them, X
    centred at ``centre`` with an intercept (the same for every part; None: nowhere), each weight
    counted as ``sample_weight·2**-weight_exponent`` (the exponent :meth:`ProbModel.fit_sums_call`
    passes its ``sums``)."""
    if _capi.is_sparse(X):
        raise TypeError("prob_data_sums takes a dense X")
    args = _fit_arrays(X, rows, space.info.width, sample_weight)
    pcentre = _centre_arg(centre, X.shape[1])
    shape = coef.shape
    _, pc = _capi.f64(coef, shape, "coef")
    grad, pg = _capi.out_f64(shape, "coef")
    loss, weight = _capi.out_f64_cell(), _capi.out_f64_cell()
    _capi.check(
        _capi.lib().cp_prob_data_sums(
            space.value, *args, int(weight_exponent), int(intercept), pcentre, pc, *shape, loss, weight, pg
        )
    )
    return loss.value, weight.value, grad


def prob_boundary_counts(space: SpaceHandle, rows: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    """The boundary counts of one part of the data, its structures ``rows`` with their weights,
    as ``cp_prob_boundary_counts`` defines them: the parts' counts added up tell
    :meth:`ProbModel.fit_sums_call` where an intercept has no finite optimum. The core says how
    many values the space needs."""
    m = rows.shape[0]
    width = space.info.width
    _, py = _capi.i64(rows, (m, width), "y")
    pw = None if sample_weight is None else _capi.f64(sample_weight, (m,), "sample_weight")[1]
    need = _capi.out_i64()
    _capi.check(_capi.lib().cp_prob_boundary_counts(space.value, py, m, width, pw, None, 0, need))
    counts, pc = _capi.out_f64((need.value,), "boundary counts")
    _capi.check(_capi.lib().cp_prob_boundary_counts(space.value, py, m, width, pw, pc, need.value, need))
    return counts


def _centre_arg(centre: np.ndarray | None, n_features: int) -> Any:
    """The centre argument of the distributed CG calls: NULL, or n_features float64 values."""
    return None if centre is None else _capi.f64(centre, (n_features,), "centre")[1]


def ridge_cg_setup(
    space: SpaceHandle,
    X: np.ndarray,
    rows: np.ndarray,
    sample_weight: np.ndarray | None,
    params: bytes,
    n_rows: int,
    centre: np.ndarray | None = None,
    weight_exponent: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int, np.ndarray]:
    """The sums over the rows of a dense X that a distributed CG fit of the linear StructuredRidge
    needs first: (b, g, mm, weight, count, weight_range) as ``cp_ridge_cg_setup`` defines them
    (the parts' weight_range are combined by their maximum and minimum, not added), b of shape
    (n_rows, d) with n_rows the rows of W; ``centre`` is where X is centred (the same for every
    part; None: nowhere), and every weight counts as ``sample_weight·2**-weight_exponent``."""
    if _capi.is_sparse(X):
        raise TypeError("ridge_cg_setup takes a dense X")
    args = _fit_arrays(X, rows, space.info.width, sample_weight)
    pc = _centre_arg(centre, X.shape[1])
    d = space.info.dim
    (b, pb), (g, pg), (mm, pm) = (
        _capi.out_f64((n_rows, d), "b"),
        _capi.out_f64((n_rows, n_rows), "g"),
        _capi.out_f64((d, d), "mm"),
    )
    weight, count = _capi.out_f64_cell(), _capi.out_i64()
    span, ps = _capi.out_f64((2,), "weight_range")
    _capi.check(
        _capi.lib().cp_ridge_cg_setup(
            space.value, *args, weight_exponent, params, pc, n_rows, d, pb, pg, pm, weight, count, ps
        )
    )
    return b, g, mm, weight.value, count.value, span


def ridge_cg_product(
    space: SpaceHandle,
    X: np.ndarray,
    rows: np.ndarray,
    sample_weight: np.ndarray | None,
    params: bytes,
    V: np.ndarray,
    centre: np.ndarray | None = None,
    weight_exponent: int = 0,
) -> np.ndarray:
    """One part's share of the distributed CG product at V over the rows of a dense X
    (``cp_ridge_cg_product``; ``centre`` and ``weight_exponent`` as in :func:`ridge_cg_setup`)."""
    if _capi.is_sparse(X):
        raise TypeError("ridge_cg_product takes a dense X")
    args = _fit_arrays(X, rows, space.info.width, sample_weight)
    pc = _centre_arg(centre, X.shape[1])
    _, pv = _capi.f64(V, V.shape, "v")
    out, po = _capi.out_f64(V.shape)
    _capi.check(_capi.lib().cp_ridge_cg_product(space.value, *args, weight_exponent, params, pc, *V.shape, pv, po))
    return out


def ridge_distributed_solver(space: SpaceHandle, n_features: int, params: bytes) -> tuple[str, int]:
    """The solver a distributed fit of StructuredRidge runs for ``params``, and the rows of the
    linear model's W (both the core's rules, ``cp_ridge_distributed_solver``)."""
    out, rows = _capi.out_i64(), _capi.out_i64()
    _capi.check(_capi.lib().cp_ridge_distributed_solver(space.value, n_features, params, out, rows))
    return _schema.options("ridge", "solver")[out.value], rows.value


def ridge_check_partial_fit(params: bytes) -> None:
    """Refuse, from the parameters alone, a StructuredRidge that no partial_fit runs with
    (``cp_ridge_check_partial_fit``: precomputed kernels, solver='cg', solver='exact' for a kernel
    expansion, the empirical measure on SGD)."""
    _capi.check(_capi.lib().cp_ridge_check_partial_fit(params))


def ridge_check_distributable(params: bytes) -> None:
    """Refuse, from the parameters alone, a StructuredRidge fit that cannot run on data spread over
    machines (``cp_ridge_check_distributable``: solver='sgd', kernel expansions)."""
    _capi.check(_capi.lib().cp_ridge_check_distributable(params))


def ridge_check_marginals(space: SpaceHandle, params: bytes, estimate: int, scale: int, factor: float) -> None:
    """Refuse estimate and scale codes and a factor that no model fitted over ``space`` with the
    parameter string ``params`` would take, whatever its data (``cp_ridge_check_marginals``: the
    tilted estimate at the noise-free scale or where the space has no exact inference for the
    measure's uniform part, a factor out of range)."""
    _capi.check(_capi.lib().cp_ridge_check_marginals(space.value, params, estimate, scale, factor))


class RidgeModel(Model):
    """A fitted StructuredRidge model (``cp_ridge_*``)."""

    _info_class = RidgeInfo
    info: RidgeInfo

    @staticmethod
    def _bind(lib: Any) -> dict[str, Callable[..., int]]:
        return {
            "free": lib.cp_ridge_free,
            "info": lib.cp_ridge_info,
            "space": lib.cp_ridge_space,
            "to_bytes": lib.cp_ridge_to_bytes,
            "from_bytes": lib.cp_ridge_from_bytes,
            "decision": lib.cp_ridge_decision,
            "predict": lib.cp_ridge_predict,
            "decision_csr": lib.cp_ridge_decision_csr,
            "predict_csr": lib.cp_ridge_predict_csr,
            "coef": lib.cp_ridge_coef,
        }

    @staticmethod
    def fit_call(
        space: SpaceHandle,
        X: np.ndarray,
        rows: np.ndarray,
        sample_weight: np.ndarray | None,
        params: bytes,
        init: RidgeModel | None,
    ) -> Callable[[Any, Any], int]:
        """The call ``(progress, out) -> status`` that fits a model (warm-started from ``init``)."""
        args = _fit_arrays(X, rows, space.info.width, sample_weight)
        fit = _fit_function(_capi.lib(), "cp_ridge_fit", args)

        def call(progress: Any, out: Any) -> int:
            return fit(space.value, *args, params, init.value if init is not None else 0, progress, None, out)

        return call

    @staticmethod
    def partial_fit_call(
        previous: RidgeModel | None,
        space: SpaceHandle,
        X: np.ndarray,
        rows: np.ndarray,
        sample_weight: np.ndarray | None,
        params: bytes,
    ) -> Callable[[Any, Any], int]:
        """The call ``(progress, out) -> status`` that continues ``previous`` on a chunk."""
        args = _fit_arrays(X, rows, space.info.width, sample_weight)
        fit = _fit_function(_capi.lib(), "cp_ridge_partial_fit", args)

        def call(progress: Any, out: Any) -> int:
            return fit(previous.value if previous is not None else 0, space.value, *args, params, progress, None, out)

        return call

    @staticmethod
    def fit_cg_sums_call(
        space: SpaceHandle,
        n_features: int,
        params: bytes,
        setup: tuple[np.ndarray, np.ndarray, np.ndarray, float, int, np.ndarray],
        init: RidgeModel | None,
        products: Callable[[np.ndarray], np.ndarray],
        centre: np.ndarray | None = None,
        weight_exponent: int = 0,
    ) -> Callable[[Any, Any], int]:
        """The call ``(progress, out) -> status`` that fits the linear model by distributed
        conjugate gradients: ``setup`` is the parts' :func:`ridge_cg_setup` sums added up, and
        ``products(V)`` (V of shape (rows, d), a copy) returns their :func:`ridge_cg_product` at V
        added up, all with ``centre`` and ``weight_exponent``. An exception raised by ``products``
        stops the fit and is raised again."""
        b, g, mm, weight, count, span = setup
        pc = _centre_arg(centre, n_features)
        span, ps = _capi.f64(span, (2,), "weight_range")
        k, d = b.shape
        (b, pb), (g, pg), (mm, pm) = _capi.f64(b, (k, d), "b"), _capi.f64(g, (k, k), "g"), _capi.f64(mm, (d, d), "mm")
        kept = _KeptException()

        def callback(v: Any, rows: int, cols: int, out: Any, _ctx: Any) -> int:
            with kept:
                kept.stop_if_interrupted()
                V = np.ctypeslib.as_array(v, shape=(rows, cols)).copy()
                np.ctypeslib.as_array(out, shape=(rows, cols))[...] = products(V)
            return kept.status

        callback_c = _capi.PRODUCTS(callback)

        def call(progress: Any, out: Any) -> int:
            kept.watch()
            status = _capi.lib().cp_ridge_fit_cg_sums(
                space.value,
                n_features,
                params,
                pc,
                k,
                d,
                pb,
                pg,
                pm,
                weight,
                count,
                ps,
                weight_exponent,
                init.value if init is not None else 0,
                callback_c,
                progress,
                None,
                out,
            )
            kept.reraise(status, RidgeModel, out)
            return status

        return call

    def marginals(
        self,
        X: np.ndarray,
        marginals: np.ndarray | None,
        structures: np.ndarray | None,
        scale: int = 0,
        factor: float = 1.0,
        estimate: int = 0,
    ) -> None:
        """The marginal estimates of the rows of X into ``marginals`` (q, d) and/or the structures
        decoded from them into ``structures`` (q, width): the estimate of code ``estimate`` (the
        schema's ``marginal_estimates``) at the scale of code ``scale`` (its ``marginal_scales``)
        times ``factor``; interruptible."""
        q, xa = self._inputs(X)
        pm = None if marginals is None else _capi.f64(marginals, (q, self.dim), "out", writable=True)[1]
        ps = None if structures is None else _capi.i64(structures, (q, self.width), "out", writable=True)[1]
        d = self.dim if marginals is not None else 0
        w = self.width if structures is not None else 0
        lib = _capi.lib()
        call = lib.cp_ridge_marginals_csr if len(xa) == 7 else lib.cp_ridge_marginals
        with _interruptible(q, self.info.inline_rows):
            _capi.check(call(self.value, *xa, estimate, scale, factor, pm, d, ps, w))

    def max_margins(self, X: np.ndarray, source: int, out: np.ndarray) -> None:
        """The max-marginal margins of the vector decoded from source code ``source`` (the schema's
        ``decode_sources``) for the rows of X into ``out`` (q, d); interruptible."""
        q, xa = self._inputs(X)
        po = _capi.f64(out, (q, self.dim), "out", writable=True)[1]
        lib = _capi.lib()
        call = lib.cp_ridge_max_margins_csr if len(xa) == 7 else lib.cp_ridge_max_margins
        with _capi.interruptible():
            _capi.check(call(self.value, *xa, source, po, self.dim))


class ProbModel(Model):
    """A fitted ProbabilisticStructured model (``cp_prob_*``)."""

    _info_class = ProbInfo
    info: ProbInfo

    @staticmethod
    def _bind(lib: Any) -> dict[str, Callable[..., int]]:
        return {
            "free": lib.cp_prob_free,
            "info": lib.cp_prob_info,
            "space": lib.cp_prob_space,
            "to_bytes": lib.cp_prob_to_bytes,
            "from_bytes": lib.cp_prob_from_bytes,
            "decision": lib.cp_prob_decision,
            "predict": lib.cp_prob_predict,
            "decision_csr": lib.cp_prob_decision_csr,
            "predict_csr": lib.cp_prob_predict_csr,
            "coef": lib.cp_prob_coef,
        }

    @staticmethod
    def fit_call(
        space: SpaceHandle,
        X: np.ndarray,
        rows: np.ndarray,
        sample_weight: np.ndarray | None,
        params: bytes,
        init: ProbModel | None = None,
    ) -> Callable[[Any, Any], int]:
        """The call ``(progress, out) -> status`` that fits a model (warm-started from ``init``)."""
        args = _fit_arrays(X, rows, space.info.width, sample_weight)
        fit = _fit_function(_capi.lib(), "cp_prob_fit", args)

        def call(progress: Any, out: Any) -> int:
            return fit(space.value, *args, params, init.value if init is not None else 0, progress, None, out)

        return call

    @staticmethod
    def fit_plan(space: SpaceHandle, m: int, params: bytes) -> str:
        """How a fit with ``params`` on ``m`` examples computes E[ψ] (``cp_prob_fit_plan``)."""
        lib = _capi.lib()
        return _read_bytes(
            lambda buf, cap, needed: lib.cp_prob_fit_plan(space.value, m, params, buf, cap, needed)
        ).decode()

    @staticmethod
    def check_fit_sums(space: SpaceHandle, n_features: int, params: bytes, init: ProbModel | None) -> None:
        """Raise what :meth:`fit_sums_call`'s call would refuse before its first ``sums`` (the
        parameters, the inference, the memory of the fit), without fitting."""
        _capi.check(
            _capi.lib().cp_prob_check_fit_sums(space.value, n_features, params, init.value if init is not None else 0)
        )

    @staticmethod
    def fit_sums_call(
        space: SpaceHandle,
        n_features: int,
        params: bytes,
        init: ProbModel | None,
        sums: Callable[[np.ndarray, int], tuple[float, float, np.ndarray]],
        centre: np.ndarray | None = None,
        spread: np.ndarray | None = None,
        psi_moments: np.ndarray | None = None,
        boundary: np.ndarray | None = None,
    ) -> Callable[[Any, Any], int]:
        """The call ``(progress, out) -> status`` that fits a model from data sums: Go's L-BFGS
        asks ``sums(W, weight_exponent)`` (W of shape (rows, d), a copy) for the data term summed
        over every part of the data, as :func:`prob_data_sums` gives it for one part with that
        ``weight_exponent`` — ``(loss, weight, grad)``, all with ``centre``. ``spread``, each feature's weighted root mean square about the centre (:func:`combpred.dask._spread`)
        (about 0 without an intercept), puts the solver in the coordinates of the in-memory fit;
        ``psi_moments``, the moments of ψ over the training structures (Σ s·ψ, Σ s·ψ² and Σ s, all
        parts' added up: 2·d + 1 values), give the core the variances of ψ's coordinates that
        precondition it as the in-memory fit's is, which then takes the same steps; ``boundary``,
        the parts' :func:`prob_boundary_counts` added up, lets the fit warn where an intercept has
        no finite optimum, as the in-memory fit does.
        An exception raised by ``sums`` stops the fit and is raised again by the call."""
        kept = _KeptException()
        pcentre = _centre_arg(centre, n_features)
        pspread = None if spread is None else _capi.f64(spread, (n_features,), "spread")[1]
        pmoments = None if psi_moments is None else _capi.f64(psi_moments, (2 * space.info.dim + 1,), "psi_moments")[1]
        pboundary = None if boundary is None else _capi.f64(boundary, (len(boundary),), "boundary")[1]

        def callback(coef: Any, rows: int, d: int, exponent: int, loss: Any, weight: Any, grad: Any, _ctx: Any) -> int:
            with kept:
                kept.stop_if_interrupted()
                W = np.ctypeslib.as_array(coef, shape=(rows, d)).copy()
                total_loss, total_weight, total_grad = sums(W, exponent)
                np.ctypeslib.as_array(grad, shape=(rows, d))[...] = total_grad
                loss[0], weight[0] = float(total_loss), float(total_weight)
            return kept.status

        callback_c = _capi.SUMS(callback)

        def call(progress: Any, out: Any) -> int:
            kept.watch()
            status = _capi.lib().cp_prob_fit_sums(
                space.value,
                n_features,
                params,
                pcentre,
                pspread,
                pmoments,
                pboundary,
                0 if boundary is None else len(boundary),
                init.value if init is not None else 0,
                callback_c,
                progress,
                None,
                out,
            )
            kept.reraise(status, ProbModel, out)
            return status

        return call

    def marginals(self, X: np.ndarray, params: bytes) -> tuple[np.ndarray, np.ndarray]:
        """E[ψ(y) | x] of the rows of X (q, d), exact or sampled per ``params``, and each row's chain
        report (q, 2): its count of Metropolis chains that never moved and cannot vouch for their
        state, and 1 where the dispersed-start check disagreed; interruptible."""
        q, xa = self._inputs(X)
        (out, p), (report, pr) = _capi.out_f64((q, self.dim)), _capi.out_i64_array((q, _CHAIN_REPORT_COLUMNS))
        lib = _capi.lib()
        call = lib.cp_prob_marginals_csr if len(xa) == 7 else lib.cp_prob_marginals
        with _capi.interruptible():
            _capi.check(call(self.value, *xa, params, p, self.dim, pr))
        return out, report

    def _dense_inputs(self, X: Any, what: str) -> tuple[int, Any]:
        if _capi.is_sparse(X):
            raise TypeError(f"{what} takes a dense X; convert a sparse one with X.toarray()")
        q, (px, _, _) = self._inputs(X)
        return q, px

    def score_samples(self, X: np.ndarray, rows: np.ndarray, params: bytes) -> tuple[np.ndarray, np.ndarray]:
        """log p(y_i | x_i) of the structures ``rows`` (q, width) given the rows of X (q,), and
        whether each row's log Z has its guarantee (bool, q)."""
        q, px = self._dense_inputs(X, "score_samples")
        _, py = _capi.i64(rows, (q, self.width), "Y")
        out, p = _capi.out_f64((q,))
        valid, pv = _capi.out_i64_array((q,))
        with _capi.interruptible():
            _capi.check(
                _capi.lib().cp_prob_score_samples(self.value, px, q, self.n_features, py, self.width, params, p, pv)
            )
        return out, valid.astype(bool)

    def log_partition(self, X: np.ndarray, params: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """log Z(x) of the rows of X (q,), with per-row statistics (q, 3) and counts (q, 7) in the
        order ``cp_prob_log_partition`` documents."""
        q, px = self._dense_inputs(X, "log_partition")
        (out, p), (stats, ps), (counts, pc) = _capi.out_f64((q,)), _capi.out_f64((q, 3)), _capi.out_i64_array((q, 7))
        with _capi.interruptible():
            _capi.check(_capi.lib().cp_prob_log_partition(self.value, px, q, self.n_features, params, p, ps, pc))
        return out, stats, counts

    def sample(self, X: np.ndarray, count: int, params: bytes) -> tuple[np.ndarray, np.ndarray]:
        """``count`` structures from p(y | x) for each row of X, as int64 rows (q, count, width),
        and each row's chain report (q, 2): its Metropolis chains that never moved and cannot vouch
        for their state, and the mixing check's verdict (1 disagreed, 0 agreed, -1 not run)."""
        q, px = self._dense_inputs(X, "sample")
        count = _capi.int64_value(count, "n_samples")  # the value sized here is the one passed
        # a count below 1 is the core's to refuse, by name: the output is only sized here
        out, p = _capi.out_i64_array((q, max(count, 0), self.width), f"n_samples structures of width {self.width}")
        report, pr = _capi.out_i64_array((q, _CHAIN_REPORT_COLUMNS))
        with _capi.interruptible():
            _capi.check(
                _capi.lib().cp_prob_sample(self.value, px, q, self.n_features, count, params, p, self.width, pr)
            )
        return out, report


# -- mergeable sufficient statistics -----------------------------------------------------------------


class Stats:
    """Owns one Go statistics handle (``cp_stats_*``): the mergeable sufficient statistics of an
    exact linear (or Nyström) StructuredRidge fit, freed with the Python object. Every call
    returns new statistics and leaves its arguments unchanged."""

    def __init__(self, value: int | None, data: bytes | None = None):
        self._value, self._data = value, data  # a handle, or the bytes of one not yet loaded

    @property
    def value(self) -> int:
        """The handle, loaded from the unpickled bytes on first use: in a worker forked from a
        process that used the library, the task's first call raises ForkedChildError, which
        reaches the caller; loading them as they were unpickled failed outside any task, and the
        client saw KilledWorker."""
        if self._value is None:
            with _capi.process_lock(self.__dict__, "_lock"):  # tasks of a worker share one
                if self._value is None:
                    self._value, self._data = _stats_handle(self._data), None  # the bytes are the handle's now
        return self._value

    def __del__(self, _capi: Any = _capi) -> None:  # bound now: at exit the module's globals are gone
        if self.__dict__.get("_value") is not None and _capi.usable() and _capi._lib is not None:
            _capi.lib().cp_stats_free(self._value)

    def __reduce__(self) -> tuple[Any, tuple[None, bytes]]:
        # Statistics travel between the processes of a cluster as their checked bytes; a result
        # that stays in its worker is never serialised.
        return Stats, (None, self.to_bytes())

    @classmethod
    def new(cls, space: SpaceHandle, n_features: int, params: bytes, sample: np.ndarray | None) -> Stats:
        """Empty statistics for inputs of ``n_features`` columns; ``sample`` (rows, n_features) are the
        rows a Nyström map draws its landmarks from (None for a linear model, whose statistics
        follow the mean of the rows added; see ``cp_stats_new``)."""
        ps, rows = None, 0
        if sample is not None:
            rows = sample.shape[0]
            _, ps = _capi.f64(sample, (rows, n_features), "sample")
        out = _capi.out_i64()
        _capi.check(_capi.lib().cp_stats_new(space.value, n_features, params, ps, rows, out))
        return cls(out.value)

    def add(self, X: np.ndarray, rows: np.ndarray, width: int, sample_weight: np.ndarray | None) -> Stats:
        """These statistics plus the examples (X, rows, sample_weight); interruptible."""
        args = _fit_arrays(X, rows, width, sample_weight)
        out = _capi.out_i64()
        with _interruptible(X.shape[0]):
            _capi.check(_capi.lib().cp_stats_add(self.value, *args, out))
        return Stats(out.value)

    def merge(self, other: Stats) -> Stats:
        """The statistics of the examples of both."""
        out = _capi.out_i64()
        _capi.check(_capi.lib().cp_stats_merge(self.value, other.value, out))
        return Stats(out.value)

    def solve_call(self, params: bytes) -> Callable[[Any, Any], int]:
        """The exact fit on every example accumulated, as a ``call(progress, out) -> status`` for
        ``run_fit`` (which reports the direct solve when verbose and cancels it on Ctrl-C)."""
        return lambda progress, out: _capi.lib().cp_stats_solve(self.value, params, progress, None, out)

    def count(self) -> tuple[int, int]:
        """(examples accumulated, components of the Nyström map or 0)."""
        n, components = _capi.out_i64(), _capi.out_i64()
        _capi.check(_capi.lib().cp_stats_count(self.value, n, components))
        return n.value, components.value

    def to_bytes(self) -> bytes:
        """The statistics' bytes (versioned, checksummed), which travel between processes."""
        if self._value is None:  # passed on as they came, unread
            return self._data
        return _read_bytes(lambda buf, cap, needed: _capi.lib().cp_stats_to_bytes(self.value, buf, cap, needed))

    @classmethod
    def from_bytes(cls, data: bytes) -> Stats:
        """The statistics of bytes that ``to_bytes`` wrote (the core checks them)."""
        return cls(_stats_handle(data))


def _stats_handle(data: Any) -> int:
    """A new statistics handle of bytes that ``Stats.to_bytes`` wrote (the core checks them)."""
    buf, n = _byte_view(data)
    out = _capi.out_i64()
    with _capi.interruptible():  # the space of a large DAG takes seconds to build (the core decides)
        _capi.check(_capi.lib().cp_stats_from_bytes(buf, n, out))
    return out.value


# -- the Nyström map of a callable kernel ------------------------------------------------------------


def nystrom_landmarks(n_samples: int, n_components: int, seed: int) -> np.ndarray:
    """The sorted row indices of a Nyström map's landmarks among n_samples rows, as the core
    draws those of its own kernels' maps."""
    k = max(1, min(int(n_samples), int(n_components)))
    out, p = _capi.out_i64_array((k,), "n_components")
    n = _capi.out_i64()
    _capi.check(_capi.lib().cp_nystrom_landmarks(int(n_samples), int(n_components), seed, p, k, n))
    return out[: n.value]


def nystrom_features(K: np.ndarray, projection: np.ndarray) -> np.ndarray:
    """The Nyström features K·P (m, c) of m rows' kernel values K (m, l) against the landmarks,
    given P (l, c); each row's features do not depend on the other rows (cp_nystrom_features)."""
    (m, n_landmarks), c = K.shape, projection.shape[1]
    _, pk = _capi.f64(K, (m, n_landmarks), "kernel rows")
    _, pp = _capi.f64(projection, (n_landmarks, c), "projection")
    out, p = _capi.out_f64((m, c), "Nyström features")
    _capi.check(_capi.lib().cp_nystrom_features(pk, m, n_landmarks, pp, c, p))
    return out


def nystrom_projection(K: np.ndarray) -> np.ndarray:
    """The projection P (l, c) of a Nyström map from the landmarks' Gram matrix K (l, l), as the
    core computes that of its own kernels' maps."""
    n_landmarks = K.shape[0]
    _, pk = _capi.f64(K, (n_landmarks, n_landmarks), "kernel matrix")
    out, p = _capi.out_f64((n_landmarks, n_landmarks), "n_components")
    c = _capi.out_i64()
    _capi.check(_capi.lib().cp_nystrom_projection(pk, n_landmarks, p, c))
    return np.ascontiguousarray(out.reshape(-1)[: n_landmarks * c.value].reshape(n_landmarks, c.value))
