"""Output spaces: the sets of structures combpred predicts.

Each space is a thin handle on the Go core, which does the counting, sampling and decoding. A
structure is encoded as a row of integers; the encoding of each space is stated on its class.
Every space offers:

``dim``
    d, the length of the joint feature map ψ(y).
``log_count()``
    log |Y| (natural logarithm): |Y| itself overflows for large spaces.
``mean()``, ``covariance()``
    p = E[ψ] and S = Cov[ψ] under the uniform distribution on Y, from closed-form counts.
``embed(Y)``, ``validate(Y)``
    ψ of each structure; a clear ``ValueError`` naming the first invalid row, fractional values
    included (``TypeError`` when Y is not numeric).
``sample(n, random_state)``
    exact uniform samples.
``decode(U)``
    argmax over Y of ⟨u, ψ(y)⟩ for each row u of scores, exact or within ``decoder_guarantee``.
``enumerate()``
    every structure, for tests on small sizes (refused above a few million).
``covariance_dot(v)``
    S·v without forming S (the only form of S for spaces too large to hold it densely).
``max_margins(U)``
    for each row of scores and each coordinate j, the best score with ψ_j on minus the best with
    it off, where the decoder is exact.
``score(Y_true, Y_pred)``, ``score_samples(Y_true, Y_pred)``
    the agreement of true and predicted structures, 1.0 for a perfect prediction, stated on each
    class's ``score_samples``: accuracy (one class, one path), one minus the Hamming loss over the
    labels or nodes (label sets, k-subsets, subtrees), Kendall's τ (rankings), and otherwise the
    fraction of ψ's coordinates on which the two agree (cycles' edges, cliques' and tournaments'
    pairs). The estimators' ``score`` uses it.
``width``
    the length of a structure's row in the space's encoding.

Constructors check their parameters at once (an invalid parent array or ``k > n_labels`` raises
``ValueError`` from the constructor).
"""

from __future__ import annotations

import inspect
import math
import numbers
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.utils import check_random_state

from . import _capi, _core, _schema
from ._docstrings import cleaned

__all__ = [
    "Space",
    "Multiclass",
    "Multilabel",
    "KSubsets",
    "Ordinal",
    "Permutations",
    "PartialTournaments",
    "DirectedCycles",
    "UndirectedCycles",
    "Cliques",
    "HierarchyPaths",
    "DAGPaths",
    "DAGSubsets",
    "Subtrees",
    "from_name",
]

_handle_locks: dict[str, Any] = {}  # the lock of the handles' first creation, one per process


def _densify_targets(Y: Any, name: str) -> Any:
    """A scipy.sparse Y (e.g. MultiLabelBinarizer(sparse_output=True)) as the dense int64 rows the core
    reads, checked against the memory budget before they are allocated; anything else unchanged."""
    if not sparse.issparse(Y):
        return _capi.as_array(Y, name)
    if len(Y.shape) != 1:  # a 1-D sparse array (scipy's coo_array) is one row of the metrics
        _capi.check_sparse_structure(Y, name)
    _capi.check_output(Y.shape, f"{name} (a sparse matrix, as the core's dense int64 rows)")
    return Y.toarray()


def _multilabel_ones(Y: Any, name: str) -> Any:
    """A scipy.sparse 0/1 Y as a canonical CSR matrix (sorted indices, no duplicates, no stored
    zeros) with float64 values and int64 indices and row pointers: the positions of the ones the
    core reads without densifying, with their values, which the core checks are 1."""
    _capi.check_sparse_structure(Y, name)
    Y = sparse.csr_array(Y, copy=True)
    # duplicates summed in Y's own dtype, as its toarray reads them: summed after the cast, a bool
    # CSR Y stored twice held 2 and was refused where its COO copy fitted (probe EZ)
    Y.sum_duplicates()
    Y = Y.astype(np.float64, copy=False)
    Y.eliminate_zeros()
    Y.indices = Y.indices.astype(np.int64, copy=False)
    Y.indptr = Y.indptr.astype(np.int64, copy=False)
    return Y


class Space:
    """Base class of the output spaces; see the module docstring for what every space offers."""

    kind: str = ""

    def _params(self) -> tuple[int, ...]:
        raise NotImplementedError

    # A handle is created lazily, once per process (or shared with a space of the same few parameters
    # made lately: _core.SpaceHandle.new): spaces are pickled by their parameters. The lock
    # makes threads that race on first use share one handle (a second one would be freed at once,
    # under the feet of the thread using it).
    def _handle(self) -> _core.SpaceHandle:
        h = self.__dict__.get("_handle_obj")
        if h is None:
            with _capi.process_lock(_handle_locks, "space"):
                h = self.__dict__.get("_handle_obj")
                if h is None:
                    h = _core.SpaceHandle.new(self.kind, self._params())
                    self.__dict__["_handle_obj"] = h
        return h

    def _h(self) -> int:
        if self.__dict__.get("_lazy_handle"):  # unpickling: the handle is made at first use
            return 0
        return self._handle().value

    def _info(self) -> _core.SpaceInfo:
        return self._handle().info

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_handle_obj"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A pickle is untrusted input: its parameters go through the constructor's checks (a bogus
        # decoder was a KeyError at first use, n_labels='3' was taken as 3). The core checks the
        # rest (a parent array's cycles) when the handle is made, at first use as before.
        params = list(inspect.signature(type(self).__init__).parameters)[1:]
        self.__dict__["_lazy_handle"] = True
        try:
            type(self).__init__(self, **{name: state[name] for name in params if name in state})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a pickled {type(self).__name__} holds an invalid parameter: {exc}") from None
        finally:
            del self.__dict__["_lazy_handle"]

    # The parameters are fixed at construction: the handle, made from them once, would keep the old
    # ones while equality, hashing and pickles read the new (Multilabel(3) with n_labels set to 5
    # equalled Multilabel(5) and embedded 3 labels).
    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and name in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.{name} cannot be changed: build a new space")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_") and name in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.{name} cannot be deleted")
        super().__delattr__(name)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._params() == other._params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._params()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(str, self._repr_args()))})"

    def _repr_args(self) -> tuple:
        return self._params()

    @property
    def dim(self) -> int:
        """d, the length of ψ(y)."""
        return self._info().dim

    @property
    def width(self) -> int:
        """Number of integers encoding one structure."""
        return self._info().width

    @property
    def decoder_guarantee(self) -> float:
        """0.0 when :meth:`decode` is exact, else its z-approximation factor ν.

        The decoded structure ŷ satisfies f(ŷ) ≥ (1 − ν) max f + ν min f.
        """
        return self._info().guarantee

    def log_count(self) -> float:
        """Return log |Y|, the natural logarithm of the number of structures.

        Returns
        -------
        log_count : float

        Raises
        ------
        ValueError
            For a space whose structures the core cannot count (its reason).
        """
        info = self._info()
        if info.uncounted:
            raise ValueError(info.uncounted)
        return info.log_count

    def mean(self) -> np.ndarray:
        """Return p = Ψ/|Y|, the mean of ψ under the uniform distribution.

        Returns
        -------
        p : ndarray of shape (d,)
        """
        return self._handle().mean(f"the mean of {self!r} (dim d = {self.dim})")

    def covariance(self) -> np.ndarray:
        """Return S = C/|Y| − ppᵀ, the covariance of ψ under the uniform distribution, (d, d).

        Dense: for inspection and tests. A space whose d is above the core's bound for a dense
        matrix refuses with a ``ValueError`` that states the bound (any space; pair spaces of a
        hundred-odd labels already): use :meth:`covariance_dot`. A matrix above the memory budget
        refuses with a ``MemoryError`` (see :func:`combpred.set_config`).

        Returns
        -------
        S : ndarray of shape (d, d)
        """
        return self._handle().covariance()

    def covariance_dot(self, v: np.ndarray) -> np.ndarray:
        """Return S·v without materialising S.

        Parameters
        ----------
        v : array-like of shape (d,)

        Returns
        -------
        Sv : ndarray of shape (d,)
        """
        if _capi.is_sparse(v):  # densified, as decode's scores are (it was called "dtype object")
            v = v.reshape((1, v.shape[0])) if len(v.shape) == 1 else v  # scipy's 1-D sparse arrays
            _capi.check_sparse_structure(v, "v")
            _capi.check_output(v.shape, "v")
            v = v.toarray()
            v = v.reshape(-1) if v.shape[0] == 1 else v  # a sparse vector is a matrix of one row
        return self._handle().covariance_dot(v)

    # Encoding: subclasses with a non-row encoding (Multiclass: one int) override these two.
    def _to_rows(self, Y: Any, name: str = "Y") -> np.ndarray:
        Y = _densify_targets(Y, name)
        if Y.ndim == 1 and self.width == 1:
            Y = Y.reshape(-1, 1)
        if Y.ndim != 2 or Y.shape[1] != self.width:
            if self.width == 1 and hasattr(self, "_one_target"):
                # "(n_samples, 1)" asked for the column vector scikit-learn warns against (probe 84)
                raise ValueError(
                    f"{name} must be 1-D, one {self._one_target} per sample, for {self!r}, got shape {Y.shape}"
                )
            raise ValueError(f"{name} must have shape (n_samples, {self.width}) for {self!r}, got shape {Y.shape}")
        return _capi.int64_array(Y, name)

    def _from_rows(self, rows: np.ndarray) -> np.ndarray:
        return rows

    def validate(self, Y: Any) -> None:
        """Raise ``ValueError`` naming the first row of Y that is not a structure of the space.

        Parameters
        ----------
        Y : array-like of shape (n_samples, width)
            Structures in the space's encoding (a 1-D array of class ids for :class:`Multiclass`).
        """
        self._handle().validate(self._to_rows(Y))

    def _checked_rows(self, Y: Any, name: str) -> np.ndarray:
        """The int64 rows of Y, each a structure of the space; an error names Y as ``name``."""
        rows = self._to_rows(Y, name)
        self._handle().validate(rows, name=name)
        return rows

    def _scored_rows(self, Y_true: Any, Y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
        """The rows of a pair of structure arrays for score_samples: equal in number and each a
        structure of the space (a 0/1 row holding 7, or a subtree without its root, was scored)."""
        a, b = self._to_rows(Y_true, "Y_true"), self._to_rows(Y_pred, "Y_pred")
        if a.shape != b.shape:
            raise ValueError(f"Y_true and Y_pred have different numbers of rows: {a.shape[0]} and {b.shape[0]}")
        return self._checked_rows(a, "Y_true"), self._checked_rows(b, "Y_pred")

    def embed(self, Y: Any) -> np.ndarray:
        """Return ψ of each structure of Y.

        Parameters
        ----------
        Y : array-like of shape (n_samples, width)
            Structures in the space's encoding.

        Returns
        -------
        Psi : ndarray of shape (n_samples, d)
        """
        return self._handle().embed(self._to_rows(Y))

    def sample(self, n_samples: int, random_state: Any = None) -> np.ndarray:
        """Draw n_samples structures uniformly at random from the space.

        Parameters
        ----------
        n_samples : int
            Number of structures (≥ 0).
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        Y : ndarray of shape (n_samples, width)
            Structures in the space's encoding; of shape (n_samples,) for the spaces whose
            structure is one integer (Multiclass, Ordinal, HierarchyPaths, DAGPaths).
        """
        if isinstance(n_samples, (bool, np.bool_)) or not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
            raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
        return self._from_rows(self._handle().sample(int(n_samples), core_seed(random_state)))

    def decode(self, U: Any) -> np.ndarray:
        """Return, for each row u of scores U, a structure maximising ⟨u, ψ(y)⟩ (within
        :attr:`decoder_guarantee` where the decoder is approximate).

        Parameters
        ----------
        U : array-like of shape (n_samples, d)
            Finite scores, one per coordinate of ψ.

        Returns
        -------
        Y : ndarray of shape (n_samples, width)
            Structures in the space's encoding; of shape (n_samples,) for the spaces whose
            structure is one integer (Multiclass, Ordinal, HierarchyPaths, DAGPaths).
        """
        return self._from_rows(self._handle().decode(_as_float_rows(U, self.dim, "U")))

    def max_margins(self, U: Any) -> np.ndarray:
        """Return, for each row u of scores U (n_samples, d) and each coordinate j of ψ, the best
        ⟨u, ψ(y)⟩ with ψ_j(y) at its largest value minus the best with it at its smallest (±inf for
        coordinates constant over the space). Needs an exact decoder (2·d decodings per row; one
        O(d) dynamic programme for multi-label, multiclass, hierarchy paths and subtrees, and the
        cost of one decoding for DAG paths).

        Parameters
        ----------
        U : array-like of shape (n_samples, d)

        Returns
        -------
        margins : ndarray of shape (n_samples, d)
        """
        return self._handle().max_margins(_as_float_rows(U, self.dim, "U"))

    def enumerate(self) -> np.ndarray:
        """Return every structure of the space (tests only; refused above a few million).

        Returns
        -------
        Y : ndarray of shape (|Y|, width)
            Of shape (|Y|,) for the spaces whose structure is one integer (Multiclass, Ordinal,
            HierarchyPaths, DAGPaths).
        """
        return self._from_rows(self._handle().enumerate())

    def score(self, Y_true: Any, Y_pred: Any) -> float:
        """Mean agreement between true and predicted structures (1.0 is perfect): the mean of
        :meth:`score_samples`. Both must hold valid structures: an invalid one is an error, not a
        low score.

        Parameters
        ----------
        Y_true, Y_pred : array-like of shape (n_samples, width)
            Structures in the space's encoding.

        Returns
        -------
        score : float
        """
        scores = self.score_samples(Y_true, Y_pred)
        if scores.size == 0:  # the mean of nothing (NumPy: nan and a warning)
            raise ValueError("Y_true and Y_pred hold no structures: there is nothing to score")
        return float(np.mean(scores))

    def score_samples(self, Y_true: Any, Y_pred: Any) -> np.ndarray:
        """Agreement of each pair of true and predicted structures.

        The fraction of the d coordinates of ψ on which the two agree (1.0: the same structure).
        Spaces whose ψ is 0/1 (the edges of cycles, the pairs of cliques) score one minus the
        Hamming loss over those coordinates; rankings score Kendall's τ, and label sets, classes
        and paths their own measures (see each class).

        Parameters
        ----------
        Y_true, Y_pred : array-like of shape (n_samples, width)
            Structures in the space's encoding.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        a, b = self._scored_rows(Y_true, Y_pred)
        # the (n, d) embeddings are what may not fit: "the result" was the name a MemoryError gave
        # them, for a result of one value a row (probe DI)
        name = "ψ(Y_true) and ψ(Y_pred), the embeddings the score compares"
        return np.mean(self._handle().embed(a, name) == self._handle().embed(b, name), axis=1)


class _DrawnSeed(int):
    """A core seed already drawn from a ``random_state``, which :func:`core_seed` passes on: the
    blocks of a lazy Dask prediction share one draw, as one in-memory call draws once (each block
    drawing from a shared RandomState, or the global one, got seeds in the scheduler's order)."""


def core_seed(random_state: Any) -> int:
    """The core's 63-bit seed from a scikit-learn ``random_state`` (None, an int or a RandomState);
    anything else is a ValueError naming random_state (scikit-learn's message names only the value)."""
    if isinstance(random_state, _DrawnSeed):
        return int(random_state)
    try:
        rng = check_random_state(random_state)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"random_state: {exc}") from None
    return int(rng.randint(0, 2**63 - 1, dtype=np.int64))


def _as_float_rows(U: Any, d: int, name: str) -> np.ndarray:
    if _capi.is_sparse(U):  # densified, as bayes_decode and the metrics do; numpy's own words named no sparsity
        _capi.check_sparse_structure(U, name)
        _capi.check_output(U.shape, name)
        U = U.toarray()
    # numbers only, as the C ABI's buffers take them: numpy parsed strings ("1" decoded as 1.0)
    U = _capi.float64_array(U, name)
    if U.ndim == 1 and U.shape[0] == d:
        U = U.reshape(1, -1)
    if U.ndim != 2 or U.shape[1] != d:
        raise ValueError(f"{name} must have shape (n_samples, {d}), got {U.shape}")
    _capi.check_finite(U, name)  # where: a NaN among a million scores was found by hand (probe DZ)
    return U


def _flag(value: Any, name: str) -> bool:
    """A boolean parameter: True, False or a NumPy bool (a string such as "False" is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _size(value: Any, name: str) -> int:
    """A size parameter as the C ABI's int64; its minimum and range are the core's to check."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not -(2**63) <= value <= 2**63 - 1:  # the core states the real limit on smaller values
        raise ValueError(f"{name} = {value} is out of range: it does not fit a 64-bit integer")
    return int(value)


class Multiclass(Space):
    """One class out of ``n_classes``; y is an int in [0, n_classes); ψ is one-hot.

    A model fitted in this space has ``classes_ = arange(n_classes)``, the classes y does not hold
    included. scikit-learn's ``cross_val_predict`` with ``method="decision_function"`` or
    ``"predict_proba"`` assumes the classes are those of y (it encodes y as 0 … k − 1 first), and
    so do the meta-estimators that encode y, which fail when y lacks an id
    (``CalibratedClassifierCV``: "y contains previously unseen labels"; ``BaggingClassifier``
    around ProbabilisticStructured: an IndexError): use ``space="multiclass"``, whose classes are
    y's own labels, with them.

    Parameters
    ----------
    n_classes : int
        The number of classes, at least 1.
    """

    kind = "multiclass"
    _one_target = "class id in [0, n_classes)"  # what a 2-D y is told to be instead (probe FJ)

    def __init__(self, n_classes: int):
        self.n_classes = _size(n_classes, "n_classes")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (self.n_classes,)

    def _from_rows(self, rows: np.ndarray) -> np.ndarray:
        return rows[:, 0]

    def score_samples(self, Y_true: Any, Y_pred: Any) -> np.ndarray:
        """Whether each prediction is right (1.0) or wrong (0.0): their mean is the accuracy.

        Parameters
        ----------
        Y_true, Y_pred : array-like of shape (n_samples,)
            Class ids.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        a, b = self._scored_rows(Y_true, Y_pred)
        return (a[:, 0] == b[:, 0]).astype(np.float64)


class Multilabel(Space):
    """Any subset of ``n_labels`` labels; Y is a 0/1 row of length n_labels; ψ is Y itself.

    Parameters
    ----------
    n_labels : int
        The number of labels, at least 1.
    """

    kind = "multilabel"

    def __init__(self, n_labels: int):
        self.n_labels = _size(n_labels, "n_labels")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (self.n_labels,)

    def score_samples(self, Y_true: Any, Y_pred: Any) -> np.ndarray:
        """One minus the Hamming loss of each row: their mean is one minus the Hamming loss.

        Parameters
        ----------
        Y_true, Y_pred : array-like of shape (n_samples, width)
            Structures in the space's encoding.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        a, b = self._scored_rows(Y_true, Y_pred)
        return np.mean(a == b, axis=1)


class KSubsets(Multilabel):
    """Label sets of exactly ``k`` of ``n_labels`` labels; a 0/1 row with k ones.

    Parameters
    ----------
    n_labels : int
        The number of labels, at least 1.
    k : int
        The number of labels of every set, from 1 to ``n_labels``.
    """

    kind = "ksubsets"

    def __init__(self, n_labels: int, k: int):
        self.n_labels = _size(n_labels, "n_labels")
        self.k = _size(k, "k")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (self.n_labels, self.k)


class Ordinal(Multiclass):
    """Ordinal regression on ``n_levels`` ordered levels; y is an int level in [0, n_levels).

    ψ has n_levels − 1 threshold indicators: column i (from 0) is 1 when y > i.

    Parameters
    ----------
    n_levels : int
        The number of levels, at least 2 (one level leaves nothing to predict).
    """

    kind = "ordinal"
    _one_target = "level in [0, n_levels) (not ψ's rows of thresholds)"

    def __init__(self, n_levels: int):
        self.n_levels = _size(n_levels, "n_levels")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (self.n_levels,)


def _parent_array(parent: Any) -> tuple[int, ...]:
    # load_hierarchical's parents (a set per node, trees included): NumPy's "inhomogeneous
    # shape" error named nothing of the space
    _capi.refuse_parent_sets(parent, "are for DAGPaths and DAGSubsets")
    if not isinstance(parent, np.ndarray) and any(
        isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == bool)
        for v in np.ravel(np.asarray(parent, dtype=object))
    ):
        # np.asarray([-1, 0, True]) is an integer array: True would become node 1
        raise ValueError("parent must hold integer node ids, got a bool")
    converted = np.asarray(parent)
    if converted.dtype.kind in "fO":
        # Python integers beyond int64, which NumPy reads as floats or objects: the generic message
        # below said nothing of the value (probe CE). Only these dtypes are scanned, in Python: a
        # scan of every list doubled the time of a million-node tree (probe CH)
        bad = next(
            (
                v
                for v in np.ravel(np.asarray(parent, dtype=object))
                if isinstance(v, numbers.Integral) and not -(2**63) <= v < 2**63
            ),
            None,
        )
        if bad is not None:
            raise ValueError(f"parent holds the node id {bad}, out of range")
    parent = converted
    if parent.ndim != 1 or parent.size == 0 or parent.dtype.kind not in "iu":
        raise ValueError("parent must be a non-empty 1-D integer array, with -1 at the root")
    if parent.dtype.kind == "u" and parent.max() > 2**63 - 1:
        raise ValueError(f"parent holds the node id {parent.max()}, out of range")
    return tuple(int(v) for v in parent)


class HierarchyPaths(Multiclass):
    """One node of a rooted tree, standing for its path from the root (single-path taxonomies).

    ``parent[v]`` is v's parent, −1 at the (single) root; give a forest a virtual root. y is a node
    id; ψ marks the node and its ancestors. With ``leaves_only`` only leaves are structures.

    Parameters
    ----------
    parent : array-like of int
        ``parent[v]``, the parent of node v; −1 at the single root.
    leaves_only : bool, default=False
        Whether only the leaves' paths are structures (otherwise every node's is).
    """

    kind = "hierarchy_paths"
    _one_target = "node id, the path's last node (0/1 rows over the nodes are the Subtrees encoding)"

    def __init__(self, parent: Any, leaves_only: bool = False):
        self.parent = _parent_array(parent)
        self.leaves_only = _flag(leaves_only, "leaves_only")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (int(self.leaves_only),) + self.parent

    def _repr_args(self) -> tuple:
        return (f"parent=<{len(self.parent)} nodes>", f"leaves_only={self.leaves_only}")


def _parent_sets(parents: Any) -> tuple[tuple[int, ...], ...]:
    """Parent sets as tuples of ints; the core checks what they describe (one root, no cycle)."""
    if isinstance(parents, (str, bytes)) or not hasattr(parents, "__len__") or len(parents) == 0:
        raise ValueError("parents must be a non-empty sequence of parent-id sequences, one per node ([] at the root)")
    if isinstance(parents, Mapping):  # iterating it gives the keys: {0: [], 1: [0]} read node 0 as its own parent
        raise ValueError("parents must be a sequence indexed by node (parents[v] lists v's parents), got a mapping")
    out = []
    for v, ps in enumerate(parents):
        if type(ps) in (list, tuple) and all(type(p) is int for p in ps):
            # the common case without NumPy's per-node conversion, which took 23 s before the
            # core's memory check could refuse 2,000,000 nodes (probe BG)
            if any(not -(2**63) <= p < 2**63 for p in ps):
                raise ValueError(f"parents[{v}] holds a node id out of range")
            out.append(tuple(ps))
            continue
        # as objects: a ragged [0, [1]] is then refused below by name (numpy's own conversion
        # said "inhomogeneous shape")
        given, ps = ps, np.asarray(ps if ps is not None else [], dtype=object)
        if ps.ndim == 0:  # a bare id passed for a set ([[], 0]), or a flat parent array
            raise ValueError(
                f"parents[{v}] = {given!r} is not a sequence of parent ids ([] at the root); a tree's flat parent "
                "array (-1 at the root) is HierarchyPaths' and Subtrees' parent=, here give [parent] per node"
            )
        if ps.ndim > 1:  # ravel read [[0]] as the set {0}
            raise ValueError(f"parents[{v}] must be a flat sequence of parent ids, got a nested sequence")
        if not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in ps):
            raise ValueError(f"parents[{v}] must hold integer node ids, got {list(ps)!r}")
        if any(not -(2**63) <= int(p) < 2**63 for p in ps):
            raise ValueError(f"parents[{v}] holds a node id out of range")
        out.append(tuple(int(p) for p in ps))
    return tuple(out)


def _dag_params(parents: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """The core's encoding of parent sets: N, then per node its parent count and parents."""
    flat = [len(parents)]
    for ps in parents:
        flat.append(len(ps))
        flat.extend(ps)
    return tuple(flat)


class DAGPaths(Multiclass):
    """One node of a rooted DAG (a taxonomy whose nodes may have several parents, such as the Gene
    Ontology), standing for the node with all its ancestors through every parent.

    ``parents[v]`` lists v's parents (empty at the single root; give several roots a virtual root),
    as ``combpred.datasets.load_hierarchical`` returns them. y is a node id; ψ marks the node and
    all its ancestors. With ``leaves_only`` only nodes without children are structures. Counts,
    moments, decoding and exact inference cost O(Σ_z #ancestors(z)).

    Parameters
    ----------
    parents : sequence of sequences of int
        ``parents[v]``, the ids of v's parents; empty at the single root.
    leaves_only : bool, default=False
        Whether only the nodes without children are structures (otherwise every node is).
    """

    kind = "dag_paths"
    _one_target = "node id, the path's last node (0/1 rows over the nodes are the DAGSubsets encoding)"

    def __init__(self, parents: Any, leaves_only: bool = False):
        self.parents = _parent_sets(parents)
        self.leaves_only = _flag(leaves_only, "leaves_only")
        self._h()

    def _params(self) -> tuple[int, ...]:
        return (int(self.leaves_only), *_dag_params(self.parents))

    def _repr_args(self) -> tuple:
        return (f"parents=<{len(self.parents)} nodes>", f"leaves_only={self.leaves_only}")


class DAGSubsets(Multilabel):
    """Node sets of a rooted DAG closed under every parent (multi-path taxonomies such as the Gene
    Ontology): a 0/1 node row holding the root and every parent of each node it holds; ψ is the row.

    ``parents[v]`` lists v's parents (empty at the single root), as
    ``combpred.datasets.load_hierarchical`` returns them; ``Y_<split>`` of a DAG data set are rows of
    this space. Decoding is exact (a maximum-weight closure, by a minimum cut).

    Parameters
    ----------
    parents : sequence of sequences of int
        ``parents[v]``, the ids of v's parents; empty at the single root.

    Notes
    -----
    Counting the closed node sets of a DAG is #P-hard, so this space has no size, no uniform mean
    or covariance and no uniform sampler: :meth:`log_count`, :meth:`mean`, :meth:`covariance`,
    :meth:`covariance_dot`, :meth:`sample` and :meth:`enumerate` raise ``ValueError`` saying so. ``StructuredRidge`` fits it
    when given the training structures as the reference measure (``empirical_weight=1``, with the
    default ``reference="empirical"``; at most 4096 nodes, the dense reference covariance), and
    refuses the default ``empirical_weight=0``;
    ``ProbabilisticStructured`` needs the uniform measure and refuses it. Predict with
    ``decision="hamming"``: under that measure the decoded mode holds every node more likely than
    on average (about half of gasch2_GO's terms for every gene; see ``empirical_weight`` in
    :class:`~combpred.StructuredRidge`). A DAG of more than 4096 nodes is restricted to the
    nodes the training structures hold, as the user guide shows.
    """

    kind = "dag_subsets"

    def __init__(self, parents: Any):
        self.parents = _parent_sets(parents)
        self._h()

    def _params(self) -> tuple[int, ...]:
        return _dag_params(self.parents)

    def _repr_args(self) -> tuple:
        return (f"parents=<{len(self.parents)} nodes>",)


class Subtrees(Multilabel):
    """Non-empty rooted subtrees of a tree (multi-path taxonomies).

    ``parent[v]`` is v's parent, −1 at the root. Y is a 0/1 node row that contains the root and
    the parent of every node it contains; ψ is Y itself.

    Parameters
    ----------
    parent : array-like of int
        ``parent[v]``, the parent of node v; −1 at the single root.

    Notes
    -----
    StructuredRidge's loss compares each target with every rooted subtree, all weighted alike, and
    on a large tree most of them are large: ``mean().sum()`` is the expected number of nodes of a
    uniformly drawn one (286 of 500 on the FunCat tree of ``cellcycle_FUN``, root included, where a gene has 9.7).
    When targets are far smaller than that, the fit mostly separates small node sets from
    near-complete trees and its node scores carry little example-specific signal; compare
    ``mean()`` with your targets' node frequencies before relying on this space (BENCHMARKS.md,
    hierarchical classification).
    """

    kind = "subtrees"

    def __init__(self, parent: Any):
        self.parent = _parent_array(parent)
        self._h()

    def _params(self) -> tuple[int, ...]:
        return self.parent

    def _repr_args(self) -> tuple:
        return (f"parent=<{len(self.parent)} nodes>",)


class _PairSpace(Space):
    # Each subclass names its size (n_labels, n_items, n_vertices) in its constructor and as a
    # property; the value is held once, as n, which is also what pickles hold.
    def __init__(self, n: int):
        self.n = _size(n, self._size_name)
        self._h()

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__({**state, self._size_name: state["n"]} if "n" in state else state)

    def _params(self) -> tuple[int, ...]:
        return (self.n,)


_DECODERS = {name: code for code, name in enumerate(_schema.enum("decoder_modes"))}  # the core's codes


class _HardDecodingSpace(_PairSpace):
    """A pair space whose decoding is NP-hard: exact dynamic programming up to a size, local search
    beyond. ``decoder`` chooses: ``"auto"`` (exact where affordable), ``"exact"`` (exact beyond the
    auto limit, up to a hard limit; larger sizes raise ``ValueError``), ``"approximate"`` (always
    local search, e.g. to measure its realised z-factor on enumerable sizes)."""

    def __init__(self, n: int, decoder: str = "auto"):
        if not isinstance(decoder, str) or decoder not in _DECODERS:
            raise ValueError(f"decoder must be one of {sorted(_DECODERS)}, got {decoder!r}")
        self.decoder = decoder
        super().__init__(n)

    def _params(self) -> tuple[int, ...]:
        mode = _DECODERS[self.__dict__.get("decoder", "auto")]
        return (self.n,) if mode == 0 else (self.n, mode)

    def _repr_args(self) -> tuple:
        decoder = self.__dict__.get("decoder", "auto")
        return (self.n,) if decoder == "auto" else (self.n, f"decoder={decoder!r}")


def _decoder_parameters(cls: type, size_doc: str, exact_by: str) -> None:
    """Append to ``cls``'s docstring its Parameters section, with the decoder's limits as the core
    states them (the schema's ``decoder_limits``), so that they are written once, in Go."""
    auto, exact = _schema.decoder_limits(cls.kind)
    size = cls._size_name
    if cls.__doc__ is None:  # python -OO
        return
    cls.__doc__ = cleaned(cls.__doc__) + (
        f"""

Parameters
----------
{size} : int
    {size_doc}
decoder : {{"auto", "exact", "approximate"}}, default="auto"
    How ``predict`` finds the best-scoring structure, a problem that is NP-hard in general.
    ``"auto"``: exactly up to {size} = {auto}, by {exact_by}, and by local search beyond (its
    guarantee is the space's z-approximation factor). ``"exact"``: exactly at any size up to
    {size} = {exact}, larger ones raise ``ValueError`` (time and memory per row grow as
    2^{size}). ``"approximate"``: always local search, e.g. to measure its realised z-factor
    against enumeration.
"""
    )


class Permutations(_HardDecodingSpace):
    """Total orders of ``n_labels`` labels (label ranking).

    A ranking is a row of ranks, ``y[j]`` = position of label j, 1 = best (scikit-lr's convention).
    ψ has one entry per pair u < v: +1 when u is ranked before v, −1 otherwise. The pairs come in
    the order of ``np.triu_indices(n_labels, 1)``, (0, 1), (0, 2), …, (n − 2, n − 1), as do the
    columns of ``decision_function``, ``predict_marginals`` and ``coef_``.
    """

    kind, _size_name = "permutations", "n_labels"

    def __init__(self, n_labels: int, decoder: str = "auto"):
        super().__init__(n_labels, decoder)

    def score_samples(self, Y_true: Any, Y_pred: Any) -> np.ndarray:
        """Kendall's τ of each pair of true and predicted rankings, shape (n_samples,): 2f − 1 for
        the fraction f of label pairs both order alike, the label-ranking score of scikit-lr and of
        :mod:`combpred.baselines` (f itself, the generic score, made the estimators' ``score``
        incomparable with theirs).

        Parameters
        ----------
        Y_true, Y_pred : array-like of shape (n_samples, width)
            Structures in the space's encoding.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return 2 * super().score_samples(Y_true, Y_pred) - 1

    @property
    def n_labels(self) -> int:
        """The number of labels ranked (the same as ``n``)."""
        return self.n


class PartialTournaments(_PairSpace):
    """Orientations of some pairs of ``n_items`` items: a row in {−1, 0, 1} per pair u < v, the
    pairs in the order of ``np.triu_indices(n_items, 1)``: (0, 1), (0, 2), …, (n − 2, n − 1).

    ψ is the row itself (+1 for u → v, −1 for v → u, 0 for an unordered pair), the thesis'
    encoding. A linear score ⟨u, ψ⟩ is largest when every pair with a non-zero score is oriented,
    so ``predict`` returns full tournaments, and under :class:`~combpred.ProbabilisticStructured` an
    unordered pair has probability 1/(1 + e^u + e^−u) ≤ 1/3 whatever the data. Fit this space to
    data whose pairs are mostly ordered; to predict *whether* a pair is ordered, model that
    separately (for instance a :class:`Multilabel` model of the ordered pairs).

    Parameters
    ----------
    n_items : int
        The number of items, at least 2.
    """

    kind, _size_name = "tournaments", "n_items"

    def __init__(self, n_items: int):
        super().__init__(n_items)

    @property
    def n_items(self) -> int:
        """The number of items compared (the same as ``n``)."""
        return self.n


class _VertexSpace(_HardDecodingSpace):
    """A pair space over the pairs of ``n_vertices`` vertices (cycles, cliques)."""

    _size_name = "n_vertices"

    def __init__(self, n_vertices: int, decoder: str = "auto"):
        super().__init__(n_vertices, decoder)

    @property
    def n_vertices(self) -> int:
        """The number of vertices of the graph (the same as ``n``)."""
        return self.n


class DirectedCycles(_VertexSpace):
    """Directed cycles of length ≥ 3 on any subset of ``n_vertices`` vertices (routes).

    A cycle is a successor row: ``y[v]`` is the vertex after v, −1 when v is not on the cycle.
    ψ has one entry per pair u < v (in the order of ``np.triu_indices(n_vertices, 1)``): +1 for the
    arc u→v, −1 for v→u, 0 when neither is used.
    """

    kind = "dicycles"


class UndirectedCycles(_VertexSpace):
    """Undirected cycles of length ≥ 3 on ``n_vertices`` vertices; a successor row of either
    orientation (−1 = not on the cycle); ψ is 1 on each pair joined by the cycle (pairs u < v in
    the order of ``np.triu_indices(n_vertices, 1)``).

    Both orientations are the same structure, and ``predict``, ``decode``, ``sample`` and
    ``enumerate`` return the one in which the cycle's smallest vertex points to the smaller of
    its two neighbours, whichever the training rows used: compare routes through ψ
    (``(space.embed(Y_pred) == space.embed(Y_true)).all(axis=1)``) or with :meth:`score_samples`,
    not row by row.
    """

    kind = "ucycles"


class Cliques(_VertexSpace):
    """Cliques of the complete graph on ``n_vertices`` vertices, each given by its vertex set as a
    0/1 row; ψ is 1 on each pair inside (pairs u < v in the order of
    ``np.triu_indices(n_vertices, 1)``).

    A single vertex has no edge, so it is the same graph as the empty set: Y holds the empty
    clique (the all-zero row, "no clique") and every vertex set of at least 2 vertices, |Y| =
    2^n − n, and rows with exactly one vertex are refused.
    """

    kind = "cliques"


_decoder_parameters(
    Permutations, "The number of labels ranked (at least 2).", "dynamic programming over subsets of labels"
)
_decoder_parameters(DirectedCycles, "The number of vertices (at least 3).", "the Held–Karp dynamic programme")
_decoder_parameters(UndirectedCycles, "The number of vertices (at least 3).", "the Held–Karp dynamic programme")
_decoder_parameters(Cliques, "The number of vertices (at least 2).", "enumerating every vertex set")

_BY_NAME = {
    "multiclass": Multiclass,
    "multilabel": Multilabel,
    "permutations": Permutations,
    "dicycles": DirectedCycles,
    "ucycles": UndirectedCycles,
    "cliques": Cliques,
}


def _first_frame_outside() -> int:
    """The stack level of the innermost caller outside this package, for warnings.warn called by
    the function that calls this (whichever estimator, Dask wrapper or baseline led here)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def warn_single_label_column(space: str) -> None:
    """Warn of a multi-label model of one label. scikit-learn reads a one-column 0/1 y as a binary
    target, whose positive class is classes_[-1]; a one-label model's classes_ is its label index
    [0], so its scorers negated the scores ("roc_auc" gave 1 − AUC, and a grid search chose the
    worst alpha) or refused pos_label=1, silently (probe EA; a Multilabel(1) object too, probe FM).
    Fitting it stays allowed (scikit-learn's estimator checks pass such a y), with this warning."""
    warnings.warn(
        f"y has a single label column: space={space} fits it as a one-label multi-label model, whose "
        "classes_ is the label index [0], and scikit-learn's scorers, which read a one-column y as a binary "
        "target with classes_[-1] positive, negate its scores ('roc_auc' gives 1 − AUC); for one binary "
        "label use space='multiclass' with y.ravel()",
        UserWarning,
        stacklevel=_first_frame_outside(),
    )


def from_name(name: str, Y: np.ndarray, n_classes: int | None = None) -> Space:
    """Build the space a string names, sized from the training targets Y.

    The estimators call it for a ``space`` given by name.

    Parameters
    ----------
    name : str
        ``"multiclass"``, ``"multilabel"``, ``"permutations"``, ``"dicycles"``, ``"ucycles"``,
        ``"cliques"`` or ``"tournaments"``.
    Y : array-like of shape (n_samples, n_columns)
        Training targets in the named space's encoding; only their shape is read (a column per
        label, vertex, or pair of items for ``"tournaments"``), so a lazy array is not computed.
    n_classes : int, default=None
        The number of classes, for ``"multiclass"`` only (Y is then not read).

    Returns
    -------
    space : Space
        The space, with its default ``decoder`` where it has one.

    Raises
    ------
    ValueError
        For an unknown name, a Y that is not 2-D, a number of columns the space cannot take, or
        ``"multiclass"`` without ``n_classes``.
    """
    if not isinstance(name, str):  # a list met the name table's hash: "unhashable type"
        raise ValueError(f"name must be a space's name (a str), got {type(name).__name__} {name!r}"[:200])
    if name == "multiclass":
        if n_classes is None:  # Multiclass itself said "n_classes must be an integer, got None"
            raise ValueError("from_name('multiclass', ...) needs n_classes: class labels do not say how many there are")
        return Multiclass(n_classes)
    if n_classes is not None:  # dropped without a word (probe 85)
        raise ValueError(
            f"n_classes is for from_name('multiclass', ...); space={name!r} takes its size from y's columns"
        )
    if not hasattr(Y, "shape"):  # only the shape is read: a lazy (Dask) array is not computed
        Y = np.asarray(Y)  # a list met Y.ndim
    if name in _BY_NAME:
        if Y.ndim != 2:
            hint = "; for one class label per sample use space='multiclass'" if name == "multilabel" else ""
            raise ValueError(f"y must be 2-D (n_samples, n_columns) for space={name!r}, got shape {Y.shape}{hint}")
        if name == "multilabel" and Y.shape[1] == 1:
            warn_single_label_column("'multilabel'")
        try:
            return _BY_NAME[name](Y.shape[1])
        except ValueError as exc:  # the size the columns of y imply is outside the space's range
            raise ValueError(f"y has {Y.shape[1]} column(s), which space={name!r} cannot take: {exc}") from None
    if name == "tournaments":
        if Y.ndim != 2:
            raise ValueError(f"y must be 2-D (n_samples, n_columns) for space={name!r}, got shape {Y.shape}")
        n = (1 + math.isqrt(1 + 8 * Y.shape[1])) // 2
        if n * (n - 1) // 2 != Y.shape[1] or n < 2:  # a shape error named the nearest smaller size
            raise ValueError(
                f"y has {Y.shape[1]} column(s); space='tournaments' takes one per pair of n items, "
                "n(n−1)/2 columns (1, 3, 6, 10, …)"
            )
        return PartialTournaments(n)
    raise ValueError(
        f"unknown space {name!r}: use one of {sorted(_BY_NAME) + ['tournaments']} or a space object "
        f"(combpred.spaces.*) for spaces that need parameters ({', '.join(_needing_parameters())})"
    )


def _needing_parameters() -> list[str]:
    """The public spaces no name builds: their parameters are not in Y (the list went out of date
    when the DAG spaces came, probe FH)."""
    named = {*_BY_NAME.values(), PartialTournaments, Space}
    return [c for c in __all__ if isinstance(globals()[c], type) and globals()[c] not in named]
