"""StructuredRidge and ProbabilisticStructured on Dask collections: the single-machine answer from
data spread over a cluster.

The exact solution of the linear StructuredRidge needs only sums over examples (docs/design.md §2):
the normal equations' blocks are moments of (x, ψ(y)) pairs. Each partition's moments are computed
where the partition lives, merged pairwise up a tree, and the small merged system is solved on the
client — so :class:`DaskStructuredRidge` gives, to rounding, the coefficients that
``StructuredRidge(solver="exact").fit`` gives on the concatenated data, whatever the partitioning,
with O((n_features · d)²) memory per task whatever the number of rows. Beyond the exact solve's
size, its conjugate gradients sum each Hessian product over the partitions in the same way.

ProbabilisticStructured's objective and gradient are sums over examples too: at every iteration of
the core's L-BFGS, :class:`DaskProbabilisticStructured` sums each partition's data term where the
partition lives (exact inference), adds the sums up a tree and returns them to the solver, which
runs on the client exactly as in ``ProbabilisticStructured.fit``.

Install with ``pip install "combpred[dask]"``. The same code runs on a local cluster, on a
multi-machine cluster (``Client("scheduler-address:8786")``), or on Dask's local schedulers.

Workers load the Go library themselves, on first use. The Go runtime does not survive ``fork()``:
distributed starts worker processes by spawn (its default ``distributed.worker.multiprocessing-method``),
which is safe; a worker forked from a process that had loaded the library raises
:class:`combpred.exceptions.ForkedChildError` on its first call instead of hanging.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import numbers
import operator
import os
import secrets
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
from sklearn.utils.validation import _get_feature_names

try:
    import dask
    import dask.array as da
except ImportError as exc:  # pragma: no cover - the optional extra
    raise ImportError('combpred.dask needs Dask: pip install "combpred[dask]"') from exc

from . import _capi, _core, _probabilistic, _schema
from . import decision as _decision
from . import spaces as _spaces
from ._docstrings import cleaned
from ._estimator_base import (
    _check_fitted,
    class_label_values,
    class_labels,
    class_rows,
    fitted_labels,
    multilabel_classes,
    one_fit_at_a_time,
    run_fit,
    set_threads,
)
from ._probabilistic import ProbabilisticStructured
from ._ridge import StructuredRidge
from ._weights import check_weight_dtype, weight_values
from .exceptions import MixingWarning

__all__ = ["DaskProbabilisticStructured", "DaskStructuredRidge"]


def _is_dask(obj: Any) -> bool:
    """Whether obj is a Dask collection (array, DataFrame or Series)."""
    return dask.is_dask_collection(obj)


def _as_array(data: Any, name: str, known: bool = True) -> da.Array:
    """A Dask array of ``data`` (a Dask array, DataFrame or Series), with known row chunks when
    ``known`` (a fit aligns y and the weights with X's rows); without it, the chunks are left as
    they come: a lazy prediction reads nothing to learn their sizes (it read all of X once for
    them, then again to compute, probe BC)."""
    if isinstance(data, da.Array):
        arr = data
    elif hasattr(data, "to_dask_array"):  # dask.dataframe DataFrame or Series
        arr = _numpy_partitions(data, name).to_dask_array(lengths=True if known else None)
    else:
        raise TypeError(f"{name} must be a Dask array, DataFrame or Series, got {type(data).__name__}")
    if not isinstance(getattr(arr, "_meta", None), np.ndarray):  # the type of its chunks
        raise TypeError(
            f"{name} must have NumPy chunks, got {type(arr._meta).__module__}.{type(arr._meta).__name__} chunks: "
            + _densify(name)
        )
    if known and any(np.isnan(c) for c in arr.chunks[0]):
        # on a new array object: compute_chunk_sizes sets them in place, and the caller's array
        # changed under it (probe 89)
        arr = da.Array(arr.dask, arr.name, arr.chunks, meta=arr._meta).compute_chunk_sizes()
    return arr


def _computed(data: Any) -> Any:
    """``data`` computed when it is a Dask collection, for a fit in memory: NumPy's conversion of a
    Dask array dropped the masks of masked chunks, which the in-memory fit refuses to drop."""
    return data.compute() if _is_dask(data) else data


def _numpy_partitions(data: Any, name: str) -> Any:
    """A Dask DataFrame or Series whose partitions have NumPy dtypes, each read as the in-memory fit
    reads a pandas object (``_capi.as_array``: nullable and pyarrow columns as their NumPy dtypes,
    categorical ones as their categories' values, a missing value refused naming ``name``):
    ``to_dask_array`` made object chunks of such columns, which the partitions' checks refused as
    not integers ("must hold integers, got dtype object")."""
    dtypes = data.dtypes if hasattr(data.dtypes, "__iter__") else [data.dtypes]
    if all(isinstance(t, np.dtype) for t in dtypes):
        return data

    def convert(part: Any) -> Any:
        values = _capi.as_array(part, name)
        if values.ndim == 1:
            return type(part)(values, index=part.index, name=part.name)
        return type(part)(values, index=part.index, columns=part.columns)

    return data.map_partitions(convert, meta=convert(data._meta))


def _align(data: Any, row_chunks: tuple[int, ...], name: str) -> da.Array | None:
    """``data`` (Dask or NumPy, 1-D or 2-D) as a Dask array chunked along rows as X is, with all its
    columns in one chunk: each task then sees matching rows of X and of ``data``."""
    if data is None:
        return None
    lazy = _is_dask(data)
    if lazy and name == "sample_weight" and getattr(data, "ndim", None) == 0:  # one weight, as a Dask scalar
        data, lazy = np.asarray(data.compute()), False
    if lazy:
        arr = _as_array(data, name)
        if name == "sample_weight" and arr.dtype == object:  # numbers held as objects, as in memory
            arr = arr.map_blocks(weight_values, dtype=np.float64)
    elif _capi.is_sparse(data := _capi.scipy_if_pandas_sparse(data)):  # as the in-memory fit takes it
        _capi.check_sparse_structure(data, name)
        _capi.check_output(data.shape, f"{name}, densified")
        arr = data.toarray()
    elif name == "sample_weight":  # a cast in the partitions parsed strings and dropped imaginary parts
        arr = weight_values(data)
    else:
        arr = _capi.as_array(data, name)  # pandas' nullable columns as the in-memory fit reads them
    if name == "sample_weight":
        check_weight_dtype(arr.dtype)
        if arr.ndim == 0:  # one weight for every sample, as in memory: lazily (np.full was X's length on the client)
            return da.full(sum(row_chunks), float(arr), chunks=(row_chunks,), dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D, got {arr.ndim} dimensions")
    if arr.shape[0] != sum(row_chunks):  # before from_array, whose chunks would not add up
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: X has {sum(row_chunks)}, {name} has {arr.shape[0]}"
        )
    chunks = (row_chunks,) + tuple((c,) for c in arr.shape[1:])
    return arr.rechunk(chunks) if lazy else da.from_array(arr, chunks=chunks)


class _Part(NamedTuple):
    """Where a row partition lies: its index, its first global row, and the columns X declares
    (which its block must hold: the core sized a distributed fit's buffers by them, probe CZ)."""

    index: int
    lo: int
    n_features: int


def _partition_error(index: int, lo: int | None, m: int, message: str, kind: type[Exception] = ValueError) -> Exception:
    """An error (a ``kind``) in a partition of X: its index and rows (lo None: its place in X is
    unknown, a prediction on unknown chunks)."""
    where = (
        f"{m} rows; X's chunk sizes are unknown, so not their rows in X" if lo is None else f"rows {lo} to {lo + m - 1}"
    )
    return kind(f"partition {index} ({where}): {message}")


def _numpy_block(block: Any, name: str) -> None:
    """Refuse a block that is not a NumPy array in an array whose meta says NumPy (a block function
    that returned scipy.sparse blocks): NumPy's own conversion said only "setting an array element
    with a sequence" (probe EI)."""
    if not isinstance(block, np.ndarray):
        raise ValueError(
            f"{name}'s block is a {type(block).__module__}.{type(block).__name__}, but {name} declares NumPy "
            "chunks: " + _densify(name)
        )


def _densify(name: str) -> str:
    """The way out for sparse chunks of ``name``, which the Dask estimators fit and predict dense."""
    return f"densify them ({name}.map_blocks(lambda b: b.toarray())), or fit a sparse {name} in memory"


# This process, for _Settings: a process id can repeat across machines and containers (PID 1).
_process = secrets.token_hex(16)


def _new_process() -> None:
    global _process
    _process = secrets.token_hex(16)


os.register_at_fork(after_in_child=_new_process)


# The token of the Dask fit the client is running in this context, which its tasks carry (_Settings).
_fit_token: contextvars.ContextVar[str | None] = contextvars.ContextVar("combpred_dask_fit", default=None)


def _tasks_stop_with_the_fit(method: Any) -> Any:
    """Give a Dask fit a token its tasks carry, and abandon it when the fit ends with an exception
    (Ctrl-C, or a partition's error): the tasks still running on threads of this process then stop
    at their next poll, and those not yet started do not start. They ran to their end, and the next
    fit waited for the cores (probe N: 7–10 CPU-seconds in the 5 s after Ctrl-C). Workers in other
    processes are not reached."""

    @functools.wraps(method)
    def fit(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_dask(X):
            return method(self, X, *args, **kwargs)
        token = secrets.token_hex(16)
        outer = _fit_token.set(token)
        try:
            return method(self, X, *args, **kwargs)
        except BaseException:
            _capi.abandon(token)
            raise
        finally:
            _fit_token.reset(outer)

    return fit


@dataclasses.dataclass(frozen=True)
class _Settings:
    """What a task sets in the worker process it runs in: the estimator's ``n_jobs`` (the core's
    threads) and the memory budget of the process that built the graph (``max_memory``, as set: 0
    for the default), which a worker process would not know otherwise: a fit refused in memory ran
    on the workers. In the client's own process (threaded scheduler) the budget is left alone: a
    lazy result computed after a ``config_context`` must not set that context's budget again."""

    n_jobs: int | None
    max_memory: int
    process: str
    token: str | None = None  # the fit's (see _tasks_stop_with_the_fit); None for predictions
    sets_threads: bool = True  # False for predictions, whose estimator's methods set them

    @classmethod
    def of(cls, n_jobs: int | None, *, sets_threads: bool = True) -> _Settings:
        return cls(n_jobs, _core.get_max_memory()[0], _process, _fit_token.get(), sets_threads)

    def apply(self) -> None:
        if self.sets_threads:  # None too: the worker's own default (its OMP_NUM_THREADS)
            set_threads(self.n_jobs)
        if self.process != _process and _core.get_max_memory()[0] != self.max_memory:
            _core.set_max_memory(self.max_memory)

    @contextlib.contextmanager
    def task(self) -> Iterator[None]:
        """Run a task of a fit: not at all once the fit is abandoned, and with its calls stopped
        when it is abandoned meanwhile. Either way it fails with ``_FitAbandoned``, an ordinary
        exception: the core's calls stop with KeyboardInterrupt, which in a thread of a
        distributed worker in the client's process (``LocalCluster(processes=False)``) escaped
        into the worker's event loop and closed it, client and cluster with it (probe AS)."""
        if _capi.is_abandoned(self.token):
            raise _FitAbandoned("the Dask fit of this task was interrupted, or failed")
        self.apply()
        try:
            with _capi.task_token(self.token):
                yield
        except KeyboardInterrupt as exc:
            if not _capi.is_abandoned(self.token):
                raise
            raise _FitAbandoned("the Dask fit of this task was interrupted, or failed") from exc


def _evaluate(graph: Any) -> Any:
    """``dask.compute(graph)`` of one evaluation that the core's solver asked for in a callback,
    waited for in slices of 50 ms on the calling thread: there the core's signal guard only marks
    the call's interrupt flag on Ctrl-C, and a wait inside ``dask.compute`` ran to the end of the
    evaluation (7–16 s on 40,000 rows, unbounded on more; probe BF). On an interrupt the wait
    stops at once with KeyboardInterrupt, and the fit, ending, abandons the evaluation's tasks."""
    flag = _capi.current_flag()
    if flag is None:  # not inside a call of the core: Ctrl-C reaches dask.compute itself
        (value,) = dask.compute(graph)
        return value
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            (result["value"],) = dask.compute(graph)
        except BaseException as exc:  # raised again on the calling thread
            result["error"] = exc

    # in the caller's context: Client.as_current() is a context variable, and a thread without it
    # sent the evaluation to the default client, which knew nothing of the data (probe 89)
    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(run,), name="combpred-dask-evaluation", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        if flag:
            raise KeyboardInterrupt("interrupted during a distributed evaluation")
    if "error" in result:
        raise result["error"]
    return result["value"]


class _FitAbandoned(Exception):
    """A task of a Dask fit that the client abandoned (Ctrl-C, or another partition's error):
    the fit itself reports why."""


def _weight_binade(W: da.Array | None) -> tuple[int, float]:
    """The binary exponent of the largest weight (``math.frexp``; 0 where it is not positive and
    finite), and the largest weight in units of 2**exponent (1 without weights). The partitions'
    weighted sums are taken in these units, which put the largest weight in [½, 1): their ratios
    (a mean, a variance) do not change, as scaling by a power of two is exact, but they neither
    overflow for weights near 1e308 nor underflow for subnormal ones, as the in-memory fits sum
    (``check.ToUnitBinade``). One pass over the persisted weights."""
    if W is None:
        return 0, 1.0
    try:
        top = float(W.max().compute())
    except (
        ValueError,
        TypeError,
    ) as exc:  # numpy's concatenation error, before the partitions are validated (probe CZ)
        raise ValueError(
            f"sample_weight: its largest value could not be computed: {exc} (a block function that returns "
            "other shapes than its chunks say?)"
        ) from None
    exponent = math.frexp(top)[1] if 0 < top < math.inf else 0
    return exponent, math.ldexp(top, -exponent)


def _in_binade(w: np.ndarray | None, exponent: int) -> np.ndarray | None:
    """A partition's weights in units of 2**exponent (:func:`_weight_binade`)."""
    return w if w is None or exponent == 0 else np.ldexp(w, -exponent)


def _weighted_sums(
    space: _spaces.Space,
    X: np.ndarray,
    rows: np.ndarray,
    w: np.ndarray | None,
    exponent: int = 0,
    squares_about: np.ndarray | float | None = None,
    least_weight: float = 0.0,
) -> tuple[np.ndarray, float, np.ndarray, int]:
    """A partition's weighted column sums and weight (the weights in units of 2**exponent), and its
    plain column sums and row count: the terms of the iterative fits' centre (:func:`_centre`).
    With ``squares_about``, the terms of :func:`_spread`: the same sums of the squares of X minus
    it, every positive weight raised to at least ``least_weight`` (in the same units)."""
    w = _in_binade(w, exponent)
    with np.errstate(over="ignore", invalid="ignore"):
        if squares_about is not None:
            X = X - squares_about
            X = X * X
            if w is not None:
                w = np.where(w > 0, np.maximum(w, least_weight), 0.0)
        plain = X.sum(axis=0)
        if w is None:
            return plain, float(X.shape[0]), plain, X.shape[0]
        return w @ X, float(np.sum(w)), plain, X.shape[0]


def _summed(
    blocks: list[tuple[Any, Any, Any, _Part]],
    space: _spaces.Space,
    classes: np.ndarray | None,
    n_jobs: int | None,
    work: Any,
    *args: Any,
    combine: Any = None,
) -> tuple[Any, ...]:
    """``work``'s sums (a tuple) of every partition, combined up a tree by ``combine`` (default:
    added, :func:`_add_sums`): one pass over the persisted partitions."""
    parts = [
        dask.delayed(_on_partition, pure=False)(work, xb, yb, wb, part, space, classes, _Settings.of(n_jobs), *args)
        for xb, yb, wb, part in blocks
    ]
    (total,) = dask.compute(_tree(parts, combine or _add_sums))
    return total


def _centre(
    blocks: list[tuple[Any, Any, Any, _Part]],
    space: _spaces.Space,
    classes: np.ndarray | None,
    n_jobs: int | None,
    exponent: int,
) -> np.ndarray | None:
    """The weighted mean of X's rows (their plain mean where every weight is 0), at which every
    partition of the iterative fits (cg, and the ProbabilisticStructured fit from sums) is centred
    when the model has an intercept, as the in-memory fits centre X: one pass over the persisted
    partitions, the weights in units of 2**exponent (:func:`_weight_binade`). None when the mean
    does not exist in floating point (X's own checks then name the row at fault, not an
    overflowing centre)."""
    weighted, total, plain, count = _summed(blocks, space, classes, n_jobs, _weighted_sums, exponent)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        centre = weighted / total if total > 0 else plain / max(count, 1)
    return centre if centre.size and np.isfinite(centre).all() else None


def _spread(
    blocks: list[tuple[Any, Any, Any, _Part]],
    space: _spaces.Space,
    classes: np.ndarray | None,
    n_jobs: int | None,
    centre: np.ndarray | None,
    binade: tuple[int, float],
) -> np.ndarray | None:
    """Each feature's weighted root mean square about ``centre`` (about 0 for None), every
    positive weight counted as at least the core's ``spread_weight_floor`` times the largest: the
    scales of the distributed ProbabilisticStructured fit's solver coordinates, which the in-memory
    fit reads off X (``core/prob/rowscale.go``). The weights are taken in the units of ``binade``
    (:func:`_weight_binade`). One pass over the persisted partitions; None when a square sum
    overflows (the fit then works in the coefficients' own coordinates)."""
    exponent, top = binade
    least = _schema.query_default("spread_weight_floor") * top
    about = 0.0 if centre is None else centre
    weighted, total, plain, count = _summed(blocks, space, classes, n_jobs, _weighted_sums, exponent, about, least)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        spread = np.sqrt(weighted / total if total > 0 else plain / max(count, 1))
    return spread if spread.size and np.isfinite(spread).all() else None


def _psi_sums(
    space: _spaces.Space, X: np.ndarray, rows: np.ndarray, w: np.ndarray | None, exponent: int
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """A partition's moments of ψ(y): its weighted sums of ψ and of its squares, and its weight
    (each row weighing 1 without weights; the weights in units of 2**exponent), and its boundary
    counts (:func:`combpred._core.prob_boundary_counts`): the terms of :func:`_psi_moments`."""
    w = _in_binade(w, exponent)
    handle = space._handle()
    psi = handle.embed(rows)
    boundary = _core.prob_boundary_counts(handle, rows, w)
    if w is None:
        return psi.sum(axis=0), (psi * psi).sum(axis=0), float(psi.shape[0]), boundary
    with np.errstate(over="ignore", invalid="ignore"):  # overflowing sums: the core then skips them
        return w @ psi, w @ (psi * psi), float(np.sum(w)), boundary


def _psi_moments(
    blocks: list[tuple[Any, Any, Any, _Part]],
    space: _spaces.Space,
    classes: np.ndarray | None,
    n_jobs: int | None,
    exponent: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The moments of ψ over the training structures (Σ s·ψ, Σ s·ψ² and Σ s, 2·d + 1 values, the
    weights in units of 2**exponent: the core reads only their ratios), from which the core takes
    the variances of ψ's coordinates that precondition the distributed ProbabilisticStructured
    fit, as the in-memory fit reads them off its Problem (``core/prob/curvature.go``): the two then
    take the same steps (without them a fit stopped by ``max_iter`` was 1–10 % off). With them,
    the partitions' boundary counts added up, from which the fit warns where an intercept has no
    finite optimum, as the in-memory fit does. One pass over the persisted structures."""
    first, second, total, boundary = _summed(blocks, space, classes, n_jobs, _psi_sums, exponent)
    return np.concatenate([first, second, [total]]), boundary


def _first_rows(X: da.Array, count: int) -> np.ndarray:
    """X's first partitions, as many as hold ``count`` rows (all of X if it has fewer): the default
    landmark sample of a Nyström map. The first partition alone gave a 1-row first partition a
    1-landmark map (test R² 0.53 against 0.98), and an empty one no map at all."""
    blocks, rows = [], 0
    for b, size in enumerate(X.chunks[0]):
        if rows >= count:
            break
        if size:
            # a first partition long enough is taken whole (partial_fit's first chunk); a later
            # one only for the rows still needed, not its million
            blocks.append(X.blocks[b] if not blocks else X.blocks[b][: count - rows])
            rows += size if len(blocks) == 1 else min(size, count - rows)
    if not blocks:
        return np.empty((0, X.shape[1]))
    sample = np.asarray(da.concatenate(blocks).compute())
    if sample.ndim != 2 or sample.shape[1] != X.shape[1]:  # else named landmark_sample, which the user never gave
        raise ValueError(
            f"X's first partitions (the landmark sample of the Nyström map) have shape {sample.shape}, but X "
            f"declares {X.shape[1]} columns (a block function that returns other shapes than its chunks say?)"
        )
    return sample


def _block_inputs(
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    part: _Part,
    space: _spaces.Space,
    classes: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One partition's X (float64, C order), structure rows and weights, validated on the worker
    that holds it; an error names the partition (index and global rows)."""
    index, lo = part.index, part.lo
    m = X.shape[0]
    try:
        _numpy_block(X, "X")
    except ValueError as exc:
        raise _partition_error(index, lo, m, str(exc)) from None
    if np.ndim(X) != 2 or X.shape[1] != part.n_features:
        raise _partition_error(
            index,
            lo,
            m,
            f"X's block has shape {np.shape(X)}, but X declares {part.n_features} columns (a block function "
            "that returns other shapes than its chunks say?)",
        )
    try:  # masked blocks, whatever the array's meta says, as in memory (the conversions drop masks)
        for name, block in (("X", X), ("y", y), ("sample_weight", sample_weight)):
            _capi.check_unmasked(block, name)
    except ValueError as exc:
        raise _partition_error(index, lo, m, str(exc)) from None
    for name, block in (("y", y), ("sample_weight", sample_weight)):
        if block is not None and np.ndim(block) and np.shape(block)[0] != m:
            # which of the two is wrong the partition cannot tell: a short X was reported as a y
            # of the wrong shape (probe AS)
            raise _partition_error(
                index,
                lo,
                m,
                f"X holds {m} rows and {name} {np.shape(block)[0]}: their chunks must hold the same rows "
                "(a block function that returns other shapes than its chunks say?)",
            )
    if X.dtype == object:  # numbers held as objects convert; name what does not
        odd = next((v for v in X.flat if not isinstance(v, numbers.Real | np.bool_)), None)
        if odd is not None:
            hint = ""
            if isinstance(odd, str) and _reads_as_number(odd):  # dask.dataframe turns object columns into strings
                hint = (
                    "; numbers held as objects in a dask DataFrame become strings unless "
                    'dask.config.set({"dataframe.convert-string": False})'
                )
            elif isinstance(odd, str):  # text (a categorical column): the setting above changed nothing (probe FN)
                hint = "; encode text and categorical columns as numbers first (e.g. one-hot)"
            raise _partition_error(
                index, lo, m, f"X must hold real numbers, found {odd!r} ({type(odd).__name__}){hint}"
            )
    X = np.ascontiguousarray(X, dtype=np.float64)
    finite = np.isfinite(X)
    if not finite.all():
        i, j = np.unravel_index(np.argmin(finite), X.shape)
        raise _partition_error(index, lo, m, f"X holds {X[i, j]} at row {lo + i}, column {j}; X must be finite")
    try:
        with _capi.row_origin(lo):  # the conversion's own messages count rows of X, as the core's
            rows = class_rows(y, classes) if classes is not None else space._to_rows(y, "y")
        # the core's own check in the fit would count from the partition's start
        space._handle().validate(rows, first=lo, name="y")
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(sample_weight, dtype=np.float64)
            bad = ~np.isfinite(w) | (w < 0)
            if bad.any():  # all-zero weights are fine in one partition: the solver checks the total
                i = int(np.argmax(bad))
                raise ValueError(f"sample_weight[{lo + i}] = {w[i]}: weights must be finite and non-negative")
    except (ValueError, TypeError) as exc:
        raise _partition_error(index, lo, m, str(exc)) from None
    except MemoryError as exc:  # a worker's budget: which partition ran out (probe EI)
        raise _partition_error(index, lo, m, str(exc), MemoryError) from None
    return X, rows, w


def _on_partition(
    work: Any,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    part: _Part,
    space: _spaces.Space,
    classes: np.ndarray | None,
    settings: _Settings,
    *args: Any,
) -> Any:
    """``work(space, X, rows, weights, *args)`` on one partition, on the worker that holds it: its
    inputs validated first (:func:`_block_inputs`), and every error naming the partition."""
    with settings.task():
        X, rows, w = _block_inputs(X, y, sample_weight, part, space, classes)
        try:
            with _capi.row_origin(part.lo):  # the core's messages lead to rows of X
                return work(space, X, rows, w, *args)
        except (ValueError, TypeError) as exc:
            raise _partition_error(part.index, part.lo, X.shape[0], str(exc)) from None
        except MemoryError as exc:
            raise _partition_error(part.index, part.lo, X.shape[0], str(exc), MemoryError) from None


def _empty_stats(space: _spaces.Space, n: int, params: bytes, sample: np.ndarray | None) -> _core.Stats:
    """The exact fit's empty statistics (and Nyström map, from ``sample``), on the worker that runs it."""
    return _core.Stats.new(space._handle(), n, params, sample)


def _stats(space: _spaces.Space, X: np.ndarray, rows: np.ndarray, w: Any, empty: _core.Stats) -> _core.Stats:
    """A partition's sufficient statistics of the exact fit."""
    return empty.add(X, rows, space.width, w)


def _prob_sums(
    space: _spaces.Space,
    X: np.ndarray,
    rows: np.ndarray,
    w: Any,
    intercept: bool,
    coef: np.ndarray,
    centre: np.ndarray | None,
    weight_exponent: int,
) -> tuple[float, float, np.ndarray]:
    """A partition's ProbabilisticStructured data term at ``coef`` (``cp_prob_data_sums``)."""
    return _core.prob_data_sums(space._handle(), X, rows, w, intercept, coef, centre, weight_exponent)


def _cg_setup(
    space: _spaces.Space,
    X: np.ndarray,
    rows: np.ndarray,
    w: Any,
    params: bytes,
    k: int,
    centre: np.ndarray | None,
    weight_exponent: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int, np.ndarray]:
    """A partition's moments for distributed CG (``cp_ridge_cg_setup``), the weights counted in
    units of 2**weight_exponent."""
    return _core.ridge_cg_setup(space._handle(), X, rows, w, params, k, centre, weight_exponent)


def _cg_product(
    space: _spaces.Space,
    X: np.ndarray,
    rows: np.ndarray,
    w: Any,
    params: bytes,
    V: np.ndarray,
    centre: np.ndarray | None,
    weight_exponent: int,
) -> np.ndarray:
    """A partition's share of H·V for distributed CG (``cp_ridge_cg_product``), the weights
    counted in units of 2**weight_exponent."""
    return _core.ridge_cg_product(space._handle(), X, rows, w, params, V, centre, weight_exponent)


def _add_sums(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """Two partitions' sums (tuples of numbers and arrays) added term by term."""
    shapes = [(np.shape(x), np.shape(y)) for x, y in zip(a, b, strict=True)]
    if any(sa != sb for sa, sb in shapes):  # numpy's "operands could not be broadcast" named neither
        sa, sb = next((sa, sb) for sa, sb in shapes if sa != sb)
        raise ValueError(
            f"two partitions' sums have shapes {sa} and {sb}: a partition of X holds another number of "
            "columns than X declares (a block function that returns other shapes than its chunks say?)"
        )
    with np.errstate(over="ignore", invalid="ignore"):  # sums beyond the largest float (inf − inf): the core asks again
        return tuple(x + y for x, y in zip(a, b, strict=True))


def _add_setups(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """Two partitions' :func:`_cg_setup` sums: the moments added, the weights' ranges (largest,
    smallest) joined."""
    (top_a, low_a), (top_b, low_b) = a[-1], b[-1]
    return (*_add_sums(a[:-1], b[:-1]), np.array([max(top_a, top_b), min(low_a, low_b)]))


def _merge(a: _core.Stats, b: _core.Stats) -> _core.Stats:
    return a.merge(b)


def _tree(parts: list[Any], merge: Any = _merge) -> Any:
    """Merge the partitions' results pairwise with ``merge``, level by level (depth log₂ of their
    number), so that merges run in parallel and mostly where their inputs already are."""
    while len(parts) > 1:
        merged = [dask.delayed(merge, pure=False)(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = merged + parts[len(parts) - len(parts) % 2 :]
    return parts[0]


def _label_block(block: np.ndarray, block_info: dict | None = None) -> np.ndarray:
    """A block of multi-class y, returned as it is once it holds no missing label (None, NaN,
    pd.NA): one is refused as in-memory fits refuse it (:func:`class_label_values`), naming its
    partition and its row in y, where sorting the labels failed without naming either (probe 80)."""
    index, lo = (block_info[0]["chunk-location"][0], block_info[0]["array-location"][0][0]) if block_info else (0, 0)
    lo = lo if isinstance(lo, numbers.Integral) else None  # unknown chunk sizes
    try:
        with _capi.row_origin(0 if lo is None else int(lo)):
            class_label_values(block, "y")
    except ValueError as exc:
        raise _partition_error(index, lo, len(block), str(exc)) from None
    return block


def _space_of(space: Any, y: da.Array, name: str) -> tuple[_spaces.Space, np.ndarray | None]:
    """The output space of an estimator's ``space`` parameter and, for space='multiclass', the
    sorted class labels (one pass over y)."""
    if space == "multiclass":
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one class label per sample) for space='multiclass', got shape {y.shape}")
        y = y.map_blocks(_label_block, dtype=y.dtype)  # a missing label refused as fit refuses it
        try:
            labels = da.unique(y).compute()
        except TypeError:  # labels of types that do not compare (numbers among strings)
            raise ValueError("y holds class labels that cannot be sorted together") from None
        classes, _ = class_labels(labels, f"{name} needs at least 2 classes")
        return _spaces.Multiclass(len(classes)), classes
    if isinstance(space, str):
        space = _spaces.from_name(space, y)
    classes = None
    if type(space) is _spaces.Multiclass:
        classes = np.arange(space.n_classes)
    return space, classes


def _reads_as_number(text: str) -> bool:
    """Whether ``text`` is a number written out (as dask makes of numbers held as objects)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _real_columns(X: Any) -> Any:
    """A Dask DataFrame whose columns are numbers and bools of several dtypes, as float64 (its
    array would hold objects, which pandas X fits in memory as numbers); anything else as it is."""
    dtypes = getattr(X, "dtypes", None)
    # a Dask Series answers .columns too (dask-expr), with one dtype: its 1-D shape is named below
    if getattr(X, "columns", None) is None or dtypes is None or not hasattr(X, "to_dask_array") or X.ndim != 2:
        return X
    import pandas as pd

    kinds = list(dtypes)
    real = all(pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in kinds)
    # nullable columns (Float64, Int64, boolean) make an object array even when all are alike
    nullable = any(isinstance(t, pd.api.extensions.ExtensionDtype) for t in kinds)
    return X.astype("float64") if real and (nullable or len({str(t) for t in kinds}) > 1) else X


def _x_array(X: Any, *, fit: bool) -> da.Array:
    """X of a fit or a lazy prediction as a Dask array of real numbers with its columns in one
    chunk: 2-D, with a feature (and, to fit, a sample); complex values are refused, not cast."""
    X = _as_array(_real_columns(X), "X", known=fit)
    if X.ndim != 2 or X.shape[1] < 1 or (fit and X.shape[0] < 1):
        least = "one sample and one feature" if fit else "one feature"
        raise ValueError(f"X must be 2-D with at least {least}, got shape {X.shape}")
    # blocks convert numbers held as objects, as the in-memory methods do (a fit refused them where
    # the in-memory fit took them, probe AS); each block's conversion names X and its partition
    if X.dtype.kind not in "biufO":
        raise ValueError(f"X must hold real numbers, got dtype {X.dtype}")
    return X.rechunk({1: -1})


def _inputs(
    estimator: Any, X: Any, y: Any, sample_weight: Any
) -> tuple[da.Array, da.Array, da.Array | None, Any, _spaces.Space, np.ndarray | None]:
    """The Dask inputs of a fit: X (columns in one chunk), y and the weights aligned with its row
    partitions, X's column names (or None), the space and the class labels (or None)."""
    columns = getattr(X, "columns", None)
    if hasattr(getattr(X, "_meta", None), "columns"):
        # scikit-learn's rule and words on the DataFrame's (empty) pandas meta, as the in-memory fit
        # applies them: column names of mixed types are a TypeError (the Dask fit dropped them)
        _get_feature_names(X._meta)
    X = _x_array(X, fit=True)
    Y = _align(y, X.chunks[0], "y")
    if Y is None:
        raise ValueError("y is required")
    W = _align(sample_weight, X.chunks[0], "sample_weight")
    if W is not None and W.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D, got shape {W.shape}")
    space, classes = _space_of(estimator.space, Y, type(estimator).__name__)
    if classes is not None and Y.ndim == 2:
        Y = Y[:, 0]
    return X, Y, W, columns, space, classes


def _blocks(X: da.Array, Y: da.Array, W: da.Array | None) -> list[tuple[Any, Any, Any, _Part]]:
    """(X block, y block, weight block or None, where it lies) of every row partition."""
    # one graph for the three: optimised apart, their shared source tasks (Y computed from X, both
    # read from one file) got different keys and ran once per array (probe 89)
    xs, ys = X.to_delayed(optimize_graph=False).ravel(), Y.to_delayed(optimize_graph=False).ravel()
    ws = W.to_delayed(optimize_graph=False).ravel() if W is not None else [None] * len(xs)
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
    n = int(X.shape[1])
    return [(xb, yb, wb, _Part(i, int(starts[i]), n)) for i, (xb, yb, wb) in enumerate(zip(xs, ys, ws, strict=True))]


def _fitted_attributes(
    estimator: Any, space: _spaces.Space, classes: np.ndarray | None, n: int, columns: Any
) -> dict[str, Any]:
    """The fitted attributes a Dask fit stores with its model (see ``_set_model``)."""
    if classes is None and estimator._is_multilabel():
        classes = multilabel_classes(space)
    # partitions of a sparse y are taken densely: predictions are dense
    attrs = fitted_labels(space, classes, isinstance(estimator.space, str)) | {
        "n_features_in_": n,
        "sparse_output_": False,
    }
    if columns is not None and all(isinstance(c, str) for c in columns):
        attrs["feature_names_in_"] = np.asarray(list(columns), dtype=object)
    return attrs


def _apply(
    block: np.ndarray,
    estimator: StructuredRidge,
    method: str,
    tail: tuple[int, ...],
    dtype: Any,
    kwargs: dict,
    settings: _Settings | None = None,
    block_info: dict | None = None,
) -> np.ndarray:
    """``estimator.method`` on one block of rows (an empty block gives an empty result), as a NumPy
    array: the blocks of a Dask prediction are dense, the structures of a model fitted on a sparse
    Y included (its CSR blocks broke every Dask reduction of an array declared NumPy). Dask passes
    ``block_info``, the block's place in X: an error names the block and its rows in X, and the
    core's row numbers are X's rows ("X row 192")."""
    if block.shape[0] == 0:
        return np.empty((0, *tail), dtype=dtype)
    if settings is not None:
        settings.apply()
    index, lo = (block_info[0]["chunk-location"][0], block_info[0]["array-location"][0][0]) if block_info else (0, 0)
    if not (isinstance(lo, numbers.Integral) or (isinstance(lo, float) and np.isfinite(lo))):
        lo = None  # X's chunk sizes are unknown (a lazy prediction does not compute them)
    else:
        lo = int(lo)
    # MixingWarnings name rows of X (row_origin is per thread: blocks run in parallel)
    _probabilistic.row_origin.value = (index, lo) if block_info and lo is not None else None
    try:
        # the core's messages lead to rows of X
        with _capi.row_origin(lo) if lo is not None else contextlib.nullcontext():
            _numpy_block(block, "X")
            start, stop = block_info[0]["array-location"][0] if block_info else (0, block.shape[0])
            declared = stop - start  # NaN for unknown chunk sizes, which declare none
            if np.isfinite(declared) and block.shape[0] != declared:  # the rows would no longer be X's (probe EI)
                raise ValueError(
                    f"X's block holds {block.shape[0]} rows, its chunks declare {declared} (a block function "
                    "that returns other shapes than its chunks say?)"
                )
            _capi.check_unmasked(block, "X")  # a masked block, whatever the array's meta says
            out = getattr(estimator, method)(np.ascontiguousarray(block, dtype=np.float64), **kwargs)
    except (ValueError, TypeError, MemoryError) as exc:
        if block_info is None:
            raise
        kind = type(exc) if type(exc) in (TypeError, MemoryError) else ValueError  # the type as raised
        raise _partition_error(index, lo, block.shape[0], str(exc), kind) from None
    finally:
        _probabilistic.row_origin.value = None
    return out.toarray() if _capi.is_sparse(out) else out


class _DaskPrediction:
    """What the Dask estimators share: the in-memory estimator they convert to, and prediction
    over the row blocks of a Dask X."""

    _local_class: type

    def to_local(self) -> Any:
        """The fitted model as a plain in-memory estimator (:class:`~combpred.StructuredRidge` or
        :class:`~combpred.ProbabilisticStructured`, same parameters and fitted state), which
        unpickles without Dask installed."""
        local = self._local_class(**self.get_params())
        local.__setstate__(self.__getstate__())
        return local

    def _lazy(self, X: Any, call: str, /, **kwargs: Any) -> Any:
        """The method named ``call`` over the row blocks of a Dask X, as a lazy Dask array with X's
        row chunks; kwargs are its arguments (predict_marginals' own ``method`` among them)."""
        # checked on this estimator first: the in-memory copy's errors named its class, not the one called
        _check_fitted(self)
        self._decision_rule()
        local = self.to_local()
        names = local.__dict__.pop("feature_names_in_", None)  # blocks are NumPy: checked here instead
        columns = getattr(X, "columns", None) if getattr(X, "ndim", 2) == 2 else None  # a Series: refused below
        if names is not None and columns is not None and list(columns) != list(names):
            raise ValueError(f"X has columns {list(columns)}, the model was fitted with {list(names)}")
        # scikit-learn's two warnings, which a NumPy or pandas X gets (probe 84); names are strings
        named = columns is not None and len(columns) > 0 and all(isinstance(c, str) for c in columns)
        if (names is None) == named:
            warnings.warn(
                f"X has feature names, but {type(self).__name__} was fitted without feature names"
                if named
                else f"X does not have valid feature names, but {type(self).__name__} was fitted with feature names",
                UserWarning,
                stacklevel=3,
            )
        X = _x_array(X, fit=False)
        if X.shape[1] != self.n_features_in_:  # scikit-learn's words, as for a NumPy X
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                "features as input."
            )
        if isinstance(local, _probabilistic.ProbabilisticStructured) and (
            call == "predict_marginals" or local.decision != _decision.MODE
        ):
            # one seed for every block, drawn here as one in-memory call draws it
            seed = _spaces._DrawnSeed(local._seed_or_own(kwargs.get("random_state"), local._fitted()))
            local.random_state = seed
            kwargs = (kwargs | {"random_state": seed}) if call == "predict_marginals" else kwargs
        # the output's trailing shape and dtype, from one row (cheap, and exactly what blocks return);
        # its chains are not the user's rows, so it neither checks their mixing nor warns
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MixingWarning)
            probe = _apply(
                np.zeros((1, X.shape[1])),
                local,
                call,
                (),
                None,
                (kwargs | {"check_mixing": False}) if "check_mixing" in kwargs else kwargs,
            )
        tail, dtype = probe.shape[1:], probe.dtype
        return X.map_blocks(
            _apply,
            # one key of the graph that every block's task reads: as a literal the model went into
            # every task, an 18.7 MB model 200 times (78 s where 2.7 s do, probe 89)
            dask.delayed(local, pure=False),
            call,
            tail,
            dtype,
            kwargs,
            _Settings.of(None, sets_threads=False),  # the estimator's methods set its n_jobs themselves
            dtype=dtype,
            chunks=(X.chunks[0], *((t,) for t in tail)),
            drop_axis=[] if tail else [1],
            meta=np.empty((0, *tail), dtype=dtype),
        )


def _parameters_of(parent: type) -> Callable[[type], type]:
    """Give a Dask estimator the numpydoc Parameters of the estimator it extends, in place of its
    "**params: those of …" entry: ``help()`` and the API reference then list every parameter, and
    the list is written once (the parent's)."""

    def decorate(cls: type) -> type:
        ours, theirs = cleaned(cls.__doc__), cleaned(parent.__doc__)
        if ours and theirs:  # python -OO strips docstrings
            entry = f"**params\n    Those of :class:`~combpred.{parent.__name__}`."
            head = "\nParameters\n----------\n"
            start, end = theirs.index(head) + len(head), theirs.index("\nAttributes\n----------")
            if entry not in ours:
                raise RuntimeError(f"{cls.__name__}'s docstring has no {entry!r} entry to replace")
            cls.__doc__ = ours.replace(entry, theirs[start:end].rstrip("\n"))
        return cls

    return decorate


@_parameters_of(StructuredRidge)
class DaskStructuredRidge(_DaskPrediction, StructuredRidge):
    """StructuredRidge fitted on Dask collections, with the exact answer of a single-machine fit.

    A :class:`~combpred.StructuredRidge` (same parameters, attributes, pickling) whose ``fit``
    accepts Dask arrays and DataFrames: every partition's sufficient statistics are computed on the
    worker that holds it, merged pairwise up a tree, and solved once on the client. The model
    equals ``StructuredRidge(solver="exact").fit`` on the concatenated data to rounding (1e-10
    relative on well-conditioned data, as much as the rows' order changes an in-memory fit
    otherwise; with ``solver="cg"``, to ``tol``), for every output space, with sample weights and
    ``empirical_weight`` (either ``reference``: both are functions of sums over the examples). With
    a Nyström map (``n_components``) it does for ``landmark_sample=X``; the default landmarks come
    from X's first partitions, so that map changes with the chunking. Prediction methods given a
    Dask collection return lazy Dask arrays (one block per row block of X, with its chunk sizes,
    known or not: nothing is read before compute); given NumPy input they behave as
    StructuredRidge's. NumPy input to ``fit`` is fitted in memory.

    Supported: ``kernel="linear"``, or ``"rbf"``/``"poly"`` with ``n_components`` (the model is
    linear on a Nyström map, fixed before the statistics from the rows of ``landmark_sample``,
    by default X's first partitions holding n_components rows — the map
    :meth:`combpred.StructuredRidge.partial_fit` builds from its first chunk when that chunk is the first
    partition). ``solver="exact"`` solves from merged statistics (up to 8000 unknowns:
    (n_features + 1) · d with ``fit_intercept`` on a linear model, n_features · d without);
    ``solver="cg"`` runs conjugate gradients on the
    in-memory fit's objective for a linear model with the uniform reference, every product H·V summed over the
    partitions where they live (one pass over the data per iteration; the data are persisted on
    the workers): it reaches the in-memory model to ``tol``, but with its own preconditioner, so
    its iterates, and a fit stopped by ``max_iter``, differ; ``"auto"`` is exact for Nyström maps and for linear models up to 8000 unknowns,
    CG beyond (the core's rule, ``cp_ridge_distributed_solver``), from the sizes alone: unlike the
    in-memory fit's, it does not fall back to CG where the exact normal equations cannot be solved
    in double precision (features far from 0 without an intercept); pass ``solver="cg"`` there.
    Not supported: ``solver="sgd"`` (stream the partitions through
    ``StructuredRidge(solver="sgd").partial_fit``), callable and precomputed kernels and the exact
    kernel expansion (their model lives on all training samples). The parameters below are
    StructuredRidge's, as it documents them: the options this paragraph excludes are refused by
    ``fit``, and ``"auto"`` follows the rule above, not StructuredRidge's. The fitted attributes
    are StructuredRidge's (``coef_``, ``intercept_``, ``classes_``, ``n_features_in_``,
    ``feature_names_in_``, ``n_iter_``, ``objective_``, ``relative_gradient_``,
    ``n_samples_seen_``), with the same meaning; ``solver_`` names the distributed solver that
    ran (``"exact"`` where the in-memory ``"auto"`` may have run CG).

    Parameters
    ----------
    **params
        Those of :class:`~combpred.StructuredRidge`.

    See Also
    --------
    combpred.StructuredRidge.partial_fit : the single-process stream over chunks, which keeps the
        same statistics.

    Examples
    --------
    >>> import dask.array as da
    >>> from combpred.dask import DaskStructuredRidge
    >>> X = da.random.default_rng(0).normal(size=(1000, 5), chunks=250)
    >>> Y = (X[:, :3] > 0).astype(int)
    >>> model = DaskStructuredRidge(space="multilabel", alpha=0.1).fit(X, Y)
    >>> model.predict(X).shape
    (1000, 3)
    """

    _local_class = StructuredRidge

    def _check_distributable(self) -> None:
        """Refuse, before any partition is read, the settings whose fit is not a reduction of
        per-partition sums: a callable kernel, a Python object no worker's core can evaluate, here;
        the others (solver='sgd', kernel expansions) by the core's rule."""
        if callable(self.kernel):
            raise ValueError(
                "DaskStructuredRidge does not support callable kernels; use kernel='rbf' or 'poly' with n_components"
            )
        _core.ridge_check_distributable(self._params_string(seed=0).encode())

    @one_fit_at_a_time
    @_tasks_stop_with_the_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, landmark_sample: Any = None) -> DaskStructuredRidge:
        """Fit the model on Dask collections (or in memory on NumPy input).

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
            Inputs, partitioned along rows; the columns are gathered into one chunk.
        y : dask.array.Array, dask.dataframe.DataFrame or Series, ndarray or scipy.sparse matrix
            Structures in the space's encoding (1-D labels for multiclass, (n_samples, width) rows
            otherwise), rechunked to the row partitions of X. A sparse matrix is taken densely,
            and the model predicts dense arrays (``sparse_output_`` is False).
        sample_weight : dask.array.Array, Series, ndarray of shape (n_samples,) or float, default=None
            Non-negative weights of the examples (a partition may have only zero weights); a
            number weighs every example alike.
        landmark_sample : array-like of shape (n_rows, n_features), default=None
            With n_components: the rows the Nyström landmarks are drawn from; None takes X's first
            non-empty partition whole and, while that holds fewer than n_components rows, the
            following partitions' first rows up to n_components in all (empty ones skipped): to
            rebuild the default map, pass those rows.

        Returns
        -------
        self : DaskStructuredRidge
        """
        if not _is_dask(X):
            if landmark_sample is not None:
                raise ValueError("landmark_sample applies to Dask inputs; an in-memory fit draws the landmarks from X")
            return super().fit(X, _computed(y), _computed(sample_weight))
        previous = getattr(self, "_model", None) if self.warm_start else None  # _reset forgets it (CG starts there)
        self._reset()  # first: a fit refused for its parameters leaves no model either
        self._validate_params()
        self._check_distributable()
        if landmark_sample is not None and self.kernel == "linear":
            raise ValueError(
                "landmark_sample is for the Nyström map of an rbf or poly kernel; kernel='linear' has none"
            )
        X, Y, W, columns, space, classes = _inputs(self, X, y, sample_weight)
        self._check_decision(space)
        self._check_decision_marginals(space)
        n = X.shape[1]
        params = self._params_string().encode()
        set_threads(self.n_jobs)
        solver, rows = _core.ridge_distributed_solver(space._handle(), n, params)
        if solver == "cg":
            model = self._fit_cg(X, Y, W, space, classes, params, rows, previous)
            self._set_model(model, **_fitted_attributes(self, space, classes, n, columns))
            self._warn_precision()  # sample weights further apart than float64 resolves
            self._warn_unconverged(partial=False)
            return self
        sample = None  # a linear model's statistics follow the mean of the rows they take
        if self.kernel != "linear":
            raw = _first_rows(X, int(self.n_components)) if landmark_sample is None else _computed(landmark_sample)
            # strings were parsed and complex numbers lost their imaginary parts
            sample = _capi.float64_array(raw, "landmark_sample")
            if sample.ndim != 2 or sample.shape[1] != n or not np.isfinite(sample).all():
                raise ValueError(
                    f"landmark_sample must be a finite array of shape (n_rows, {n}), got shape {sample.shape}"
                )
            if sample.shape[0] < self.n_components:  # as partial_fit warns of a short first chunk
                warnings.warn(
                    f"the Nyström map is built from {sample.shape[0]} landmark rows, fewer than "
                    f"n_components={self.n_components}: it has at most {sample.shape[0]} landmarks; give a "
                    "landmark_sample (or X) of at least n_components rows",
                    UserWarning,
                    stacklevel=2,
                )
        # made on a worker: made here, the empty statistics ((k·d)² / 4 zeros, 130 MB at 8,000
        # unknowns) travelled in the task graph through the scheduler (probe BC)
        empty = dask.delayed(_empty_stats, pure=False)(space, n, params, sample)
        parts = [
            dask.delayed(_on_partition, pure=False)(
                _stats, xb, yb, wb, part, space, classes, _Settings.of(self.n_jobs), empty
            )
            for xb, yb, wb, part in _blocks(X, Y, W)
        ]
        (stats,) = dask.compute(_tree(parts))
        model = run_fit(self._model_class, type(self).__name__, self.verbose, stats.solve_call(params))
        self._set_model(model, **_fitted_attributes(self, space, classes, n, columns))
        self._warn_precision()  # a Nyström map's rbf kernel on its landmarks
        self._warn_unconverged(partial=False)
        return self

    def _fit_cg(
        self,
        X: da.Array,
        Y: da.Array,
        W: da.Array | None,
        space: _spaces.Space,
        classes: np.ndarray | None,
        params: bytes,
        rows: int,
        previous: _core.RidgeModel | None,
    ) -> _core.RidgeModel:
        """The linear model by distributed conjugate gradients: the partitions' moments once, then
        their share of H·V at every iteration, summed up a tree; the data are persisted on the
        workers for the iterations. ``rows`` is the rows of W, as the core reports them."""
        # the core refused a fit above the memory budget (cp_ridge_distributed_solver) before the
        # data are read (they were, then "g: an output …", then the fit's own vectors)
        X, Y, W = dask.persist(X, Y, W)
        blocks = _blocks(X, Y, W)
        # every sum in units of the largest weight's binade: raw, weights near 1e305 overflowed
        # them where the in-memory fit scales its weights first (probe CC)
        exponent = _weight_binade(W)[0]
        centre = _centre(blocks, space, classes, self.n_jobs, exponent) if self.fit_intercept else None
        setup = _summed(
            blocks, space, classes, self.n_jobs, _cg_setup, params, rows, centre, exponent, combine=_add_setups
        )

        def products(V: np.ndarray) -> np.ndarray:
            shared = dask.delayed(V, pure=True)
            parts = [
                dask.delayed(_on_partition, pure=False)(
                    _cg_product,
                    xb,
                    yb,
                    wb,
                    part,
                    space,
                    classes,
                    _Settings.of(self.n_jobs),
                    params,
                    shared,
                    centre,
                    exponent,
                )
                for xb, yb, wb, part in blocks
            ]
            return _evaluate(_tree(parts, operator.add))

        call = _core.RidgeModel.fit_cg_sums_call(
            space._handle(), X.shape[1], params, setup, previous, products, centre, exponent
        )
        return run_fit(
            self._model_class, type(self).__name__, self.verbose, call, self._progress_measure(partial=False)
        )

    def predict(self, X: Any) -> Any:
        """Return the decoded structure of each input; lazily, as a Dask array, for Dask input.

        See :meth:`combpred.StructuredRidge.predict`. A Dask array's blocks are dense NumPy arrays,
        also for a model fitted on a sparse Y (whose in-memory predictions are sparse).
        """
        return self._lazy(X, "predict") if _is_dask(X) else super().predict(X)

    def decision_function(self, X: Any) -> Any:
        """Return the scores u(x); lazily, as a Dask array, for Dask input.

        See :meth:`combpred.StructuredRidge.decision_function`.
        """
        return self._lazy(X, "decision_function") if _is_dask(X) else super().decision_function(X)

    def predict_marginals(self, X: Any, scale: str | float | None = None, estimate: str | None = None) -> Any:
        """Estimate E[ψ(y) | x]; lazily, as a Dask array, for Dask input.

        See :meth:`combpred.StructuredRidge.predict_marginals`.
        """
        if not _is_dask(X):
            return super().predict_marginals(X, scale, estimate)
        return self._lazy(X, "predict_marginals", scale=scale, estimate=estimate)

    def max_marginal_margins(self, X: Any) -> Any:
        """Return the max-marginal margin of every coordinate of ψ; lazily, as a Dask array, for
        Dask input.

        See :meth:`combpred.StructuredRidge.max_marginal_margins`.
        """
        return self._lazy(X, "max_marginal_margins") if _is_dask(X) else super().max_marginal_margins(X)


@_parameters_of(ProbabilisticStructured)
class DaskProbabilisticStructured(_DaskPrediction, ProbabilisticStructured):
    """ProbabilisticStructured fitted on Dask collections, by the solver of a single-machine fit.

    A :class:`~combpred.ProbabilisticStructured` (same parameters, attributes, pickling) whose
    ``fit`` accepts Dask arrays and DataFrames. The objective and its gradient are sums over the
    examples: at every evaluation the core's L-BFGS asks for, each partition's sums are computed on
    the worker that holds it (exact inference), added up a tree and returned to the solver, which
    runs on the client as ``ProbabilisticStructured.fit`` runs it (same objective, default
    ``alpha``, stopping rule, preconditioner and warm start: one more pass over the structures
    gathers the moments of ψ whose variances precondition it), with one exception: on multi-label spaces
    the in-memory fit solves each label's independent problem by its own L-BFGS, ``tol`` and
    ``max_iter`` applying per label, where the Dask fit solves them together. The model equals the
    in-memory fit on the concatenated data up to rounding (measured: 2e-15 relative on
    permutations and multi-class, after 1, 3 or all iterations); on multi-label spaces up to
    ``tol``, a fit stopped early by a loose ``tol`` or a small ``max_iter`` differing from the
    in-memory one. The data are persisted on the workers for the iterations
    (``dask.persist``); an evaluation moves W to every partition and a gradient of W's size back.
    ``predict``, ``decision_function``, ``predict_marginals``, ``predict_proba`` and
    ``predict_log_proba`` given a Dask collection return lazy Dask arrays (one block per row block
    of X, with its chunk sizes, known or not: nothing is read before compute); ``sample``,
    ``score_samples`` and ``log_partition`` are ProbabilisticStructured's, which take X in memory
    (a Dask X is computed on the client). Given NumPy input they all behave as
    ProbabilisticStructured's. NumPy input to ``fit`` is fitted in memory.

    Supported: spaces and samplers with exact inference (``sampler="auto"`` where the space has a
    closed form, a dynamic programme or few enough structures, or ``"exact"``); a sampled fit
    (Adam on Monte Carlo gradients, whose chains live with the rows) is refused. The parameters
    below are ProbabilisticStructured's, as it documents them: where they speak of a separate
    L-BFGS per multi-label label, the Dask fit solves the labels together (above). So are the
    fitted attributes (``coef_``, ``intercept_``, ``classes_``, ``n_iter_``, ``objective_``,
    ``relative_gradient_``, ...), but for a multi-label model ``n_iter_`` counts the iterations of
    that one joint L-BFGS, not the most of any label's.

    Parameters
    ----------
    **params
        Those of :class:`~combpred.ProbabilisticStructured`.

    Examples
    --------
    >>> import dask.array as da
    >>> from combpred.dask import DaskProbabilisticStructured
    >>> X = da.random.default_rng(0).normal(size=(1000, 5), chunks=250)
    >>> Y = (X[:, :3] > 0).astype(int)
    >>> model = DaskProbabilisticStructured(space="multilabel", alpha=0.01).fit(X, Y)
    >>> model.predict_proba(X).shape
    (1000, 3)
    """

    _local_class = ProbabilisticStructured

    @one_fit_at_a_time
    @_tasks_stop_with_the_fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> DaskProbabilisticStructured:
        """Fit W by MAP on Dask collections (or in memory on NumPy input).

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
            Inputs, partitioned along rows; the columns are gathered into one chunk.
        y : dask.array.Array, dask.dataframe.DataFrame or Series, ndarray or scipy.sparse matrix
            Structures in the space's encoding (1-D labels for multiclass, (n_samples, width) rows
            otherwise), rechunked to the row partitions of X. A sparse matrix is taken densely,
            and the model predicts dense arrays (``sparse_output_`` is False).
        sample_weight : dask.array.Array, Series, ndarray of shape (n_samples,) or float, default=None
            Non-negative weights of the examples (a partition may have only zero weights); a
            number weighs every example alike.

        Returns
        -------
        self : DaskProbabilisticStructured
        """
        if not _is_dask(X):
            return super().fit(X, _computed(y), _computed(sample_weight))
        previous = getattr(self, "_model", None) if self.warm_start else None  # _reset forgets it
        self._reset()  # first: a fit refused for its parameters leaves no model either
        self._validate_params()
        X, Y, W, columns, space, classes = _inputs(self, X, y, sample_weight)
        self._check_decision(space)
        n = X.shape[1]
        set_threads(self.n_jobs)
        params = self._params_string()  # one seed drawn, as the in-memory fit draws one
        # what the fit would refuse before its first sums, before the data are read for them
        _core.ProbModel.check_fit_sums(space._handle(), n, params, previous)
        X, Y, W = dask.persist(X, Y, W)  # read (or generated) once, for every evaluation
        blocks = _blocks(X, Y, W)
        intercept = bool(self.fit_intercept)
        binade = _weight_binade(W)
        centre = _centre(blocks, space, classes, self.n_jobs, binade[0]) if intercept else None
        spread = _spread(blocks, space, classes, self.n_jobs, centre, binade)
        psi_moments, boundary = _psi_moments(blocks, space, classes, self.n_jobs, binade[0])

        def sums(coef: np.ndarray, weight_exponent: int) -> tuple[float, float, np.ndarray]:
            shared = dask.delayed(coef, pure=True)  # one copy per worker, not one per task
            settings = _Settings.of(self.n_jobs)
            parts = [
                dask.delayed(_on_partition, pure=False)(
                    _prob_sums, xb, yb, wb, part, space, classes, settings, intercept, shared, centre, weight_exponent
                )
                for xb, yb, wb, part in blocks
            ]
            return _evaluate(_tree(parts, _add_sums))

        call = _core.ProbModel.fit_sums_call(
            space._handle(), n, params, previous, sums, centre, spread, psi_moments, boundary
        )
        self._fit_model(call, **_fitted_attributes(self, space, classes, n, columns))
        return self

    def predict(self, X: Any) -> Any:
        """Return the structure chosen by ``decision`` for each input; lazily, as a Dask array, for
        Dask input.

        See :meth:`combpred.ProbabilisticStructured.predict`.
        """
        return self._lazy(X, "predict") if _is_dask(X) else super().predict(X)

    def decision_function(self, X: Any) -> Any:
        """Return the scores u(x); lazily, as a Dask array, for Dask input.

        See :meth:`combpred.ProbabilisticStructured.decision_function`.
        """
        return self._lazy(X, "decision_function") if _is_dask(X) else super().decision_function(X)

    def predict_marginals(
        self,
        X: Any,
        n_samples: int | None = None,
        sampler: str | None = None,
        random_state: Any = None,
        method: str | None = None,
        check_mixing: bool = False,
    ) -> Any:
        """Return E[ψ(y) | x] of each input; lazily, as a Dask array, for Dask input (sampled, each
        row with the samples it draws in one in-memory call on all of X, whatever the blocks).

        See :meth:`combpred.ProbabilisticStructured.predict_marginals`.
        """
        kwargs = {
            "n_samples": n_samples,
            "sampler": sampler,
            "random_state": random_state,
            "method": method,
            "check_mixing": check_mixing,
        }
        return self._lazy(X, "predict_marginals", **kwargs) if _is_dask(X) else super().predict_marginals(X, **kwargs)
