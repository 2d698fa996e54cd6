"""StructuredRidge: the counting-assumption learner of Vembu's thesis, chapter 5."""

from __future__ import annotations

import copy
import numbers
import pickle
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import StrOptions, validate_parameter_constraints

from . import _capi, _core, _schema
from . import decision as _decision
from . import spaces as _spaces
from ._estimator_base import (
    StructuredEstimator,
    _Fitted,
    _SetDuringOwnFit,
    _sorted_labels,
    check_sample_weight,
    class_rows,
    fitted_labels,
    one_fit_at_a_time,
    run_fit,
    set_threads,
    user_code,
    validate_data,
)
from .exceptions import PrecisionWarning

__all__ = ["StructuredRidge"]

# Enums of the core, their codes the positions; code 0 is the core's default (the behaviour of a
# model from before the parameter existed), so the defaults below are read from the schema too.
_MARGINAL_SCALES = _schema.enum("marginal_scales")
_MARGINAL_ESTIMATES = _schema.enum("marginal_estimates")
_DECODE_FROM = _schema.enum("decode_sources")  # which of the model's outputs predict decodes
_D = {
    **_schema.defaults("ridge"),
    "decode_from": _DECODE_FROM[0],
    "marginal_estimate": _MARGINAL_ESTIMATES[0],
    "marginal_scale": _MARGINAL_SCALES[0],
}


def _check_partial_classes(classes: Any, space: _spaces.Space, fitted: np.ndarray | None, first: bool) -> None:
    """Refuse a ``classes`` argument of partial_fit that would be ignored: labels for a space
    without them, labels other than those a space predicts (a Multiclass object's 0 … n − 1: given
    strings came back as ids), or, after the first call, labels other than the model's
    (scikit-learn's partial_fit refuses them too)."""
    if classes is None:
        return
    given = _sorted_labels(np.asarray(classes), "classes")
    if fitted is None:
        raise ValueError(f"classes: space={space!r} has no class labels; for labelled classes use space='multiclass'")
    if np.array_equal(given, fitted) or (isinstance(space, _spaces.Multilabel) and given.tolist() == [0, 1]):
        return  # a multi-label Y's columns, or the values of each (what classes_ held before 0.2)
    if first:
        raise ValueError(
            f"classes: space={space!r} predicts the labels {fitted.tolist()!r}, got {given.tolist()!r}; "
            "for labels of your own use space='multiclass'"
        )
    raise ValueError(
        f"classes={given.tolist()!r} differs from the model's classes_ {fitted.tolist()!r}, those of its fit "
        "or first partial_fit call"
    )


def _finite_float64(a: Any) -> bool:
    """Whether ``a`` (dense or scipy.sparse) holds finite float64 values only."""
    values = a.data if _capi.is_sparse(a) else a
    return isinstance(values, np.ndarray) and values.dtype == np.float64 and bool(np.isfinite(values).all())


def _callable_attributes(fitted: _CallableKernel | None, X: np.ndarray) -> dict[str, Any]:
    """What a model fitted with a callable kernel needs to predict, stored with it: the kernel with
    its parameters, and X_fit_ (the exact model) or the Nyström map's width (none otherwise)."""
    if fitted is None:
        return {}
    if fitted.projection is None:
        return {"_callable": fitted, "X_fit_": X.copy()}  # X may be the caller's own array
    return {"_callable": fitted, "n_components_": fitted.projection.shape[1]}


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
        Spaces needing parameters (KSubsets, Ordinal, HierarchyPaths, DAGPaths, DAGSubsets,
        Subtrees) are given as objects.
    alpha : float, default=1.0
        Regularisation strength (> 0, and not subnormal: products with one lose their digits): the
        weight of ‖W‖² (or of the RKHS norm).
    kernel : {"linear", "poly", "rbf", "precomputed"} or callable, default="linear"
        Input kernel. ``"linear"`` is solved in the primal and exposes ``coef_``. ``"rbf"`` and
        ``"poly"`` without ``n_components`` keep the training inputs, and, with at most 512 features,
        once a dense X is first scored also their transpose (as much memory again, where the
        memory budget allows it; without it, every scoring call makes transposed copies and takes
        about twice as long); with ``"precomputed"``, X is the kernel matrix (n_samples,
        n_samples) at fit and (n_queries, n_samples_fit) at predict. A callable is called on two sample matrices as
        ``kernel(X, Y, **kernel_params)`` and must return their kernel matrix, of shape
        (len(X), len(Y)), as with scikit-learn's SVC: the functions of
        :mod:`sklearn.metrics.pairwise` such as ``laplacian_kernel`` qualify (unlike with
        KernelRidge, the callable is not called on single pairs of rows). At fit the Gram matrix
        K(X, X) must be finite, symmetric and positive semi-definite, where the objective is
        unbounded below otherwise: on up to 2,048 samples every solver refuses a matrix whose
        Cholesky factorisation shows an eigenvalue below −10⁻³ times its largest absolute entry
        (as for ``"precomputed"`` and poly with coef0 < 0; a Nyström map checks its landmarks'
        Gram matrix); beyond, CG and SGD refuse only the indefiniteness their iterates meet (a direction
        of negative curvature, a negative diagonal entry, coefficients of negative norm) and may
        return the objective's saddle point, so check such a kernel yourself (with
        ``solver="exact"`` on a subsample); the model keeps X as ``X_fit_`` and is fitted as
        with ``"precomputed"`` on K, and prediction evaluates ``K(X_new, X_fit_)`` in blocks of rows.
        With ``n_components`` the model is linear on a Nyström map of the callable (as for
        ``"rbf"`` and ``"poly"``), which also streams with ``partial_fit``. ``gamma``, ``degree``
        and ``coef0`` are ignored: the callable's own parameters go in ``kernel_params``. The
        fitted model predicts with the kernel and parameters it was fitted with (it keeps a copy
        of a kernel object, so that changing the object later changes neither the model nor, while
        unchanged, its warm starts), and pickles when the callable does (a module-level function,
        not a lambda).
    gamma : float, default=None
        Kernel coefficient of ``"rbf"`` and ``"poly"``; None means 1 / n_features. The rbf kernel's
        values lose digits where gamma times the largest squared norm of a row of X is large (X far
        from the origin: centre it): the fit then warns (:class:`~combpred.exceptions.PrecisionWarning`).
    degree : int, default=3
        Degree of the ``"poly"`` kernel.
    coef0 : float, default=1.0
        Independent term of the ``"poly"`` kernel.
    kernel_params : dict, default=None
        Keyword arguments passed to a callable ``kernel`` (e.g. ``{"gamma": 0.5}`` for
        ``laplacian_kernel``); ignored by the string kernels. None means no arguments.
    fit_intercept : bool, default=True
        Learn a per-coordinate offset of the scores. For the linear kernel it is unpenalised; for the
        other kernels it is the penalised bias of the kernel k(x, x') + 1. With the linear kernel,
        :meth:`fit` with ``solver="cg"`` or ``"sgd"`` fits a dense X on its rows minus their
        (sample-weighted) mean, in a copy of X, so that a constant added to a feature changes
        neither the model nor the number of iterations, and the exact solver (``fit`` and
        :meth:`partial_fit`) sums its statistics around the running mean of the chunks; a sparse X with
        ``cg`` or ``sgd``, one whose copy the memory budget refuses, and ``partial_fit`` with
        ``sgd`` use X as it is (scale and centre it yourself if its features are far from zero;
        a refused copy of an X whose features lie beyond 10³ standard deviations from zero warns,
        with :class:`~combpred.exceptions.PrecisionWarning`, as do CG and SGD without an
        intercept beyond 10⁵).
    solver : {"auto", "exact", "cg", "sgd"}, default="auto"
        ``"exact"`` solves the normal equations directly, by Cholesky for the linear kernel ((n_features
        + 1) · d unknowns with ``fit_intercept``, memory growing as their square) and by LU of the
        (n_samples · d)² system of the expansion coefficients for the other kernels, either way
        (at most 8000 unknowns); ``"cg"`` runs preconditioned
        conjugate gradients (deflated CG in the kernel's inner product for kernel models);
        ``"sgd"`` is the thesis' online stochastic gradient (section 5.3.2), step
        ``min(eta0 / (alpha · t), 1 / L)``, L the largest curvature of one example's term of J
        (it grows with n_samples), with truncation ``tau`` for kernel expansions. ``"auto"`` uses
        ``"exact"`` for linear (and Nyström) models when the core's estimate of its cost is below
        CG's, or below a fraction of a millisecond, and ``"cg"`` otherwise. The exact solve's
        statistics cost about n_samples · n_features² · nnz(ψ)² against CG's
        n_samples · n_features · d per iteration, so auto takes it only for few features (fewer
        with many non-zero coordinates of ψ(y)), and never beyond 600 unknowns ((n_features + 1) · d with ``fit_intercept``, n_features · d
        without); where double precision cannot solve the normal equations (features far from 0
        without an intercept, alpha far from the data's curvature), auto runs ``"cg"`` instead of
        failing as ``"exact"`` does; where it solves them with digits lost (an estimated condition
        number above 10¹¹), the fit warns (:class:`~combpred.exceptions.PrecisionWarning`). ``solver_`` names the solver that ran; use ``"exact"`` for a fit that
        :meth:`partial_fit` will continue. For kernel
        models always ``"cg"``, which reaches 1e-8 in 13–22 iterations where the direct solve costs
        O((n_samples · d)³) (n_samples = 400, d = 6: 13 ms against 1.35 s).
        Output spaces with d > 4096 (pair spaces beyond about 90 labels or vertices) are fitted
        with S applied as an operator, never stored: there only the linear kernel (or
        ``n_components``) with ``"auto"`` or ``"cg"`` is supported, and ``partial_fit`` is not.
    tol : float or None, default=1e-8
        CG stops when ‖∇J‖ ≤ tol · ‖∇J(0)‖; for kernel models also J must be within about
        tol · abs(J) of its minimum, as estimated from its decrease over the last iterations (the
        gradient alone let a loose tol stop an rbf fit after one iteration, far from the minimum:
        J − J* bounds the scores' error whatever the kernel matrix's conditioning). A multi-label,
        multi-class or k-subsets kernel model under the uniform measure at small alpha is solved
        from a dual over the examples when that costs less (its iterations then count in ``n_iter_``); there J − J*
        is bounded by the dual's residual rather than estimated. Both measures are relative to the
        whole weighted sum, which the heaviest examples dominate: where ``sample_weight`` spans more
        than about 1/tol, the lightest examples count for less than tol and their scores may stay
        far from the optimum (weights 1 and 1e20: a light example's score 0.89 against the
        optimum's 0.6); a smaller tol fits them, or ``solver="exact"`` where alpha and the curvature
        the heaviest weights set are within about 10¹² of each other (it refuses them otherwise, naming
        the range, and ``solver="auto"`` then runs CG, with this limit). Under the pure empirical measure (``empirical_weight=1``) the weights also form
        the measure's covariance: directions only the light examples span get eigenvalues about
        1/(weight ratio) of its size, resolved to float64's precision of that size, so the light
        examples' coefficients keep about ratio × 2⁻⁵² relative precision (weights 1 and 1e12:
        2e-5) and, past a ratio of about 10¹³, none (1e14: 0.3, without a warning);
        ``empirical_weight`` < 1 keeps the uniform measure's part (0.999 at 1e14: 2e-12). SGD stops
        when J falls by less than tol (relative) over each of three epochs in a row (a rise breaks
        the row, an epoch that restarts its mean of the iterates is skipped: one calm epoch among
        noisier ones had stopped a fit 18 % above the minimum), which it evaluates over the whole training
        set after every epoch (about the cost of an epoch); SGD approaches the minimum slowly, so
        that J may still be well above it (on yeast at alpha=0.1, 7e-3 relative at tol=1e-3). ``None`` (solver ``"sgd"`` only): no tolerance stop; SGD runs
        ``max_iter`` epochs and evaluates J once, at the end (after every epoch only when
        ``verbose``, to print it).
    max_iter : int, default=1000
        Maximum number of CG iterations, or of SGD epochs.
    warm_start : bool, default=False
        Start ``fit`` from the previous solution (linear models; kernel models on the same X, e.g.
        along a path of alpha values). A kernel model's warm start continues in conjugate
        gradients, whereas a cold multi-label, multi-class or k-subset model at small alpha first
        runs a faster solver over the examples' dual: along a falling alpha path those warm fits
        can take longer than cold ones (1.6× over alpha = 1 … 0.003 on 1,500 rows). SGD continues its step schedule only from an SGD model:
        from an exact or CG solution it restarts at the largest steps, which move it away from
        the optimum before they shrink, so it gains little over a cold start.
    n_components : int, default=None
        For ``"rbf"``, ``"poly"`` and callable kernels (ignored by ``"linear"`` and
        ``"precomputed"``): fit the linear model on a Nyström map of this many landmark
        samples (thesis appendix A) instead of the full kernel expansion, so that training scales
        to 100,000s of samples, between 1 and 10,000 (checked whatever the kernel). None: the
        exact kernel model.
    tau : int, default=None
        SGD on kernel models keeps only the last ``tau`` expansion terms (None: all). Without it,
        a kernel model continued by :meth:`partial_fit` keeps a term for every example it has
        seen: its memory and the time of each call grow with ``n_samples_seen_`` (each term holds
        the example's features and d coefficients, and every call scores its chunk against all of
        them). Bound it with ``tau``, or use ``n_components``, whose model keeps a fixed size.
        It drops an example's whole coefficient once the example is ``tau`` steps behind: in a
        multi-epoch ``fit`` with tau below 2 · n_samples − 1 (the longest gap between two visits of
        an example, whose order is shuffled every epoch) coefficients are dropped between visits,
        every one when tau ≤ n_samples, and the model stays far from the batch solution however
        many epochs run (40 rows: at tau = 40, J 19.8 where the optimum is 13.6 and the zero model
        20; at tau = 60 and 76, scores 129 % and 30 % off; at 79, as at 80). Use it to bound the
        cost of long streams, not to approach the batch solution.
    eta0 : float, default=None
        The constant p of the SGD step min(p/(alpha · t), 1/L); None means 0.5. The cap 1/L
        (see ``solver``) holds until step t = p·L/alpha, which on large data sets is past the
        whole run: there eta0 changes nothing.
    random_state : int, RandomState instance or None, default=None
        Seeds SGD's shuffling and the Nyström landmarks.
    n_jobs : int, default=None
        Threads used by the core (decoding, kernels, linear algebra). None: ``OMP_NUM_THREADS``
        as it was when the core was loaded (as OpenMP runtimes read it), when it holds a positive
        integer, else all cores (joblib's process workers, and Dask's, set it to their share of
        the cores, so ``GridSearchCV(n_jobs=k)`` does not run k times as many threads as cores);
        -1: all cores; a negative n counts back from them as in joblib (-2: all but one, never
        fewer than one); 0 is refused. Fitting and every prediction method set it, process-wide:
        it applies to every combpred call until another sets it. Counts above 4 threads per CPU
        are clamped to that.
        Between the parallel steps of a call, and for a few milliseconds after it, the core's
        helper threads poll for work instead of sleeping (an idle CPU wakes slowly, on virtual
        machines above all), and a step that a sleeping helper has not started is run by the
        calling thread.
    verbose : int, default=0
        When > 0, print the objective and ‖∇J‖ / ‖∇J(0)‖ after every CG iteration and after the
        exact solver's direct solve, and the objective and its relative change over the epoch
        after every SGD epoch. A multi-label fit solved in the dual over the examples (many
        labels, docs/design.md §2) prints the dual system's relative residual in place of the
        gradient, and its objective need not decrease from one iteration to the next; the fitted
        ``relative_gradient_`` and ``objective_`` are always those of the returned model.
    decode_from : {"scores", "marginals"}, default="scores"
        What ``predict`` decodes with the space's decoder. ``"scores"``: the scores u(x), the
        structure maximising f(x, y) = ⟨u(x), ψ(y)⟩. ``"marginals"``: the centred marginal estimate
        m̂(x) − p of :meth:`predict_marginals` (p the mean of ψ under the reference measure), the
        structure maximising ⟨m̂(x) − p, ψ(y)⟩ — an estimate of the expected agreement
        E[⟨ψ(Y) − p, ψ(y)⟩ | x] with the unknown true structure Y. Under the uniform measure
        (``empirical_weight=0``: p is the mean over the whole space) that is, for permutations,
        the expected Kendall τ up to a constant and, for multilabel, the expected Hamming
        accuracy. With ``empirical_weight > 0``, p holds the training structures' rates, and the
        decoded structure is what is more likely than on average, not the Bayes rule of either
        loss (at w = 1 on labels each on 5 % of the time it predicted 6 labels a row, Hamming loss
        0.28 against 0.05 for ``decision="hamming"``): use ``decision`` for a loss. The two
        differ because u is S⁻¹-whitened: m̂ − p points along S·u. Neither is better everywhere — select it by
        cross-validation (it is a parameter of GridSearchCV like any other). Only prediction
        depends on it: changing it needs no refit. Used by ``decision="mode"`` alone: the other
        rules decode :meth:`predict_marginals` by their loss, so a grid need not cross them.
    empirical_weight : float in [0, 1], default=0.0
        The reference measure μ of the objective: the loss of an example is the expected Taylor
        loss over structures z ~ μ, and only μ's mean p and covariance S enter it. 0 is the
        thesis' uniform measure over the whole space; 1 the empirical measure of the training
        structures (weighted by ``sample_weight``), which puts the wrong structures where the data
        are — on a taxonomy, small subtrees rather than the huge ones that dominate the uniform
        measure; between, the mixture ``(1 − w)·uniform + w·empirical``. With w > 0 the model
        keeps p and S (d × d) and needs d ≤ 4096; with ``reference="empirical"`` it also keeps
        the distinct training structures with their summed weights, for the tilted estimate of
        :meth:`predict_marginals` (its size grows with the distinct structures seen, over all
        chunks of ``partial_fit``: cellcycle_FUN's 2,476 genes have 1,658 node sets of 9 nodes); ``partial_fit`` stays exact (the empirical
        moments are among its statistics) with the linear or Nyström model and solver ``"auto"``
        or ``"exact"``, and refuses SGD. :meth:`predict_marginals` and
        ``decode_from="marginals"`` use the same p and S. Select it by cross-validation. Its S
        has no closed-form spectrum, so the CG solver's preconditioner is built from S and the
        data instead: expect a fit to take a few times the uniform measure's on wide data (5× on
        the bibtex text set, 1.5× on a 1,500-component Nyström map; BENCHMARKS.md), and on many
        labels, where S is a dense d × d matrix (2,000 rows of 20 features, w = 0.3: 1.0× on 250
        labels, 3× on 500, 2× on 1,000, 5× on 2,000; at w = 1 with about as many labels as rows,
        S is nearly singular and CG ran to ``max_iter``: 20 s on 2,000 labels). On taxonomies
        (``Subtrees``) it is the other way round: the uniform measure's CG needs more iterations
        as the tree grows (48 to 198 from 75 to 600 nodes on synthetic data, where w = 0.5 took
        25–39: 3–6× the time; cellcycle_FUN's 500 nodes 282 against 68 at w = 0.3). Near w = 1
        the scores measure how far an input's structure lies from the training structures'
        average, not how likely it is, so ``decision="mode"`` predicts whatever is more likely
        than on average: on labels each on 10 % of the time and unrelated to X, about half of
        them per row, where w = 0 predicts none. Predict with a loss (``decision="hamming"`` on
        label sets and DAG subsets) or choose ``decision`` by cross-validation together with w.
    reference : {"empirical", "product"}, default="empirical"
        The data-driven measure D that ``empirical_weight`` mixes with the uniform one, as
        ``(1 − w)·uniform + w·D``. ``"empirical"``: the training structures themselves.
        ``"product"``: the space's measure fixed by the training structures' marginals alone —
        independent labels with the training label rates (multilabel), a branching process with
        per-node rates P(node | parent) of the training subtrees (subtrees), and for multiclass and
        hierarchy paths the empirical measure itself (the only one with those marginals). It
        ignores the correlations the empirical measure keeps; other spaces refuse it. Ignored when
        ``empirical_weight=0``.
    decision : {"mode", "hamming", "kendall", "spearman", "hierarchical", "f1"}, default="mode"
        What :meth:`predict` returns: the decoded structure (``"mode"``, read with ``decode_from``),
        or the structure with the least expected loss for the named loss under the marginal
        estimates of :meth:`predict_marginals`, computed by :func:`combpred.decision.bayes_decode`
        (Hamming on 0/1 ψ, Kendall's distance or Spearman's squared rank differences on rankings,
        the hierarchical loss on subtrees, example-based F1 on label sets as a plug-in rule). Under
        the uniform reference measure the Hamming rule of a label set is the decoded one (its
        marginals are ½ + c·u/4), but for labels whose estimates the clip to [0, 1] sets equal
        (at 0 or 1), which it orders by label index, not by u (``KSubsets`` at inputs three times
        the training scale: one row in 500 took a lower-scoring label); with ``empirical_weight > 0`` the marginals are centred on the
        training rates, and thresholding them at ½ differs from decoding. A space that cannot take
        the rule is refused at fit. Only prediction depends on it: changing it needs no refit.
        Choose it by the metric you are scored on, or by ``GridSearchCV``. ``decision_function``
        stays the scores u(x): a rule other than the mode may predict what they do not rank first
        (``predict`` differed from ``decision_function > 0`` on 8 % of a multi-label set's
        entries at ``empirical_weight=0.5``), so scikit-learn's tools that read
        ``decision_function`` (``roc_auc``, ``CalibratedClassifierCV``, stacking) score the scores,
        not the predictions.
    node_weights : array-like of shape (n_nodes,), default=None
        The node costs c of ``decision="hierarchical"`` (None: 1 per node), as
        :func:`combpred.metrics.hierarchical_loss` and
        :func:`combpred.metrics.make_hierarchical_loss_scorer` take them: give the costs you are
        scored with (e.g. :func:`combpred.metrics.hierarchical_node_weights`). Ignored by the other
        rules.
    marginal_estimate : {"linear", "tilted"}, default="linear"
        The marginal estimates the rules of ``decision`` (other than ``"mode"``) read:
        :meth:`predict_marginals` with ``estimate=marginal_estimate, scale=marginal_scale``.
        ``"tilted"`` is the mean of ψ under the reference measure tilted by exp(c⟨u(x), ψ⟩)
        (docs/design.md §2c); it needs a numeric ``marginal_scale`` (or ``"unit"``: fit refuses
        ``"noise_free"`` with it when ``decision`` reads the estimates) and, for an empirical part of
        the measure, the training structures that fits keep (in memory, and from Dask partitions
        while their distinct structures stay under 2²² values). Only prediction depends on it:
        choose it with ``marginal_scale`` by ``GridSearchCV``, no refit needed.
        ``decode_from="marginals"`` and :meth:`max_marginal_margins` keep the linear estimate.
    marginal_scale : {"noise_free", "unit"} or float, default="noise_free"
        The ``scale`` of those estimates (see :meth:`predict_marginals`); with
        ``marginal_estimate="tilted"``, c of θ = c·u(x), ``"unit"`` or a positive number.

    Attributes
    ----------
    space_ : combpred.spaces.Space
        The output space the model predicts in. Like ``classes_``, ``n_features_in_`` and the other
        attributes predictions read beside the model, it is read-only while the model is held:
        setting or deleting one raises AttributeError (fit again to change it).
    classes_ : ndarray of shape (n_classes,)
        Class labels for multiclass spaces; for multilabel, the labels' indices
        ``0 … n_labels − 1`` (the columns of Y, as scikit-learn's multi-label classifiers have).
    coef_ : ndarray of shape (d, n_features)
        Weights of the linear model (``kernel="linear"`` only), one row per coordinate of ψ as in
        scikit-learn's linear models: scores are ``X @ coef_.T + intercept_``. Read-only, as
        ``intercept_``: the model predicts from its own copy, so setting them is refused.
    intercept_ : ndarray of shape (d,)
        Intercept of the linear model (zeros when ``fit_intercept=False``).
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training inputs (a copy), on which a callable ``kernel`` is evaluated at prediction
        (callable kernels without ``n_components`` only).
    n_features_in_ : int
        Number of features seen during fit.
    n_components_ : int
        Dimension of the Nyström map (with ``n_components`` only): the number of landmarks whose
        kernel features the map resolves. It is smaller than ``n_components`` when X has fewer
        rows, or when some landmarks are reproduced by the others to within 1e-12 of the largest
        kernel value (duplicate rows, or a polynomial kernel's finite rank); those are left out.
    sparse_output_ : bool
        Whether ``predict`` returns a scipy.sparse CSR matrix: ``fit`` was given a sparse Y.
    n_iter_ : int
        CG iterations or SGD epochs run (at least 1; the exact solver's direct solve counts as one).
    solver_ : str
        The solver the last ``fit`` or ``partial_fit`` ran: ``"exact"``, ``"cg"`` or ``"sgd"``
        (what ``solver="auto"`` resolved to).
    n_samples_seen_ : int
        Number of training rows the model has seen: those of ``fit``, plus those of every later
        ``partial_fit`` call that continued it.
    objective_ : float
        The objective J at the solution.
    relative_gradient_ : float
        ‖∇J‖ / ‖∇J(0)‖ at the solution (CG, exact), in the coordinates the solver works in (for
        CG with an intercept on a dense X, X centred: see ``fit_intercept``); for SGD, the relative
        change of J over the last epoch (NaN with ``tol=None``, which does not evaluate J after
        every epoch). After a ``partial_fit`` with SGD, this and ``objective_`` are those of the
        last chunk alone (the exact ``partial_fit`` reports J over every row seen).

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

    _model_class = _core.RidgeModel

    _parameter_constraints: dict = {
        **StructuredEstimator._parameter_constraints,
        **_schema.constraints("ridge"),
        # Python-only: a callable kernel, its parameters, warm starts
        "kernel": [*_schema.constraints("ridge")["kernel"], callable],
        "kernel_params": [dict, None],
        "warm_start": ["boolean"],
        "decode_from": [StrOptions(set(_DECODE_FROM))],
        "marginal_estimate": [StrOptions(set(_MARGINAL_ESTIMATES))],
        "marginal_scale": [
            StrOptions(set(_MARGINAL_SCALES)),
            _schema.Number(
                numbers.Real,
                _schema.query_default("min_marginal_scale"),
                _schema.query_default("max_marginal_scale"),
                closed="both",
            ),
        ],
    }

    def __init__(
        self,
        space: str | _spaces.Space = "multilabel",
        alpha: float = _D["alpha"],
        kernel: str | Callable[..., Any] = _D["kernel"],
        gamma: float | None = _D["gamma"],
        degree: int = _D["degree"],
        coef0: float = _D["coef0"],
        kernel_params: dict | None = None,
        fit_intercept: bool = _D["fit_intercept"],
        solver: str = _D["solver"],
        tol: float | None = _D["tol"],
        max_iter: int = _D["max_iter"],
        warm_start: bool = False,
        n_components: int | None = _D["n_components"],
        tau: int | None = _D["tau"],
        eta0: float | None = _D["eta0"],
        random_state: Any = _D["random_state"],
        n_jobs: int | None = None,
        verbose: int = 0,
        decode_from: str = _D["decode_from"],
        empirical_weight: float = _D["empirical_weight"],
        reference: str = _D["reference"],
        decision: str = _decision.MODE,
        node_weights: Any = None,
        marginal_estimate: str = _D["marginal_estimate"],
        marginal_scale: str | float = _D["marginal_scale"],
    ):
        self.space = space
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
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
        self.decode_from = decode_from
        self.empirical_weight = empirical_weight
        self.reference = reference
        self.decision = decision
        self.node_weights = node_weights
        self.marginal_estimate = marginal_estimate
        self.marginal_scale = marginal_scale

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    def _sparse_refusal(self, fitting: bool) -> str | None:
        # a prediction follows the fitted model, not a kernel set since (a linear model refused a
        # sparse X after set_params(kernel=callable), and the reverse passed it to the callable; probe CA)
        if fitting:
            callable_kernel, precomputed = callable(self.kernel), self.kernel == "precomputed"
        else:
            callable_kernel = self.__dict__.get("_callable") is not None
            precomputed = not callable_kernel and self._model.info.kernel == "precomputed"
        if callable_kernel:
            return "with a callable kernel (it is called with dense arrays)"
        if precomputed:
            return "with kernel='precomputed' (the kernel matrix is dense)"
        if fitting and self.kernel != "linear" and not self.n_components and self.solver == "sgd":
            return (
                f"with kernel={self.kernel!r} and solver='sgd' (its expansion keeps the support inputs densely); "
                "use solver='cg' or 'exact', or n_components"
            )
        return None

    # -- fitting ------------------------------------------------------------------------------
    def _core_kernel(self) -> str:
        """The kernel of the core model: a callable kernel reaches the core as its precomputed Gram
        matrix, or with n_components as the inputs of a linear model on its Nyström map."""
        if not callable(self.kernel):
            return self.kernel
        return "precomputed" if self.n_components is None else "linear"

    def _params_string(self, seed: int | None = None) -> str:
        """The core's parameter string; ``seed`` in place of one drawn from ``random_state`` (a check
        of the parameters must not consume a RandomState)."""
        seed = _spaces.core_seed(self.random_state) if seed is None else seed
        kernel = self._core_kernel()
        # the Nyström map of a callable kernel carries the intercept itself (the kernel k + 1)
        intercept = bool(self.fit_intercept) and not (callable(self.kernel) and self.n_components is not None)
        return (
            f"alpha={float(self.alpha)!r};kernel={kernel};"
            + (f"gamma={float(self.gamma)!r};" if self.gamma is not None else "")  # None: the core's 1/n_features
            + f"degree={int(self.degree)};coef0={float(self.coef0)!r};"
            f"fit_intercept={int(intercept)};solver={self.solver};"
            f"tol={float(self.tol or 0)!r};max_iter={int(self.max_iter)};random_state={seed}"
            # the core ignores n_components where it does not apply (linear, precomputed kernels)
            + (f";n_components={int(self.n_components)}" if self.n_components else "")
            + (f";tau={int(self.tau)}" if self.tau is not None else "")
            + (
                f";empirical_weight={float(self.empirical_weight)!r};reference={self.reference}"
                if self.empirical_weight
                else ""
            )
            + (f";eta0={float(self.eta0)!r}" if self.eta0 is not None else "")
            # verbose progress lines need the objective after every SGD epoch, which the core
            # otherwise evaluates only for its tolerance stop (tol=None: none)
            + (";trace_objective=1" if self.verbose else "")
        )

    @one_fit_at_a_time
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> StructuredRidge:
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs; with ``kernel="precomputed"``, the kernel matrix (n_samples, n_samples). The
            core computes in float64: a C-contiguous float64 array is read in place, any other
            (float32, integers, a strided view) is first copied to float64, 8 bytes per value.
            A ``scipy.sparse`` X is used without densifying (a float64 CSR matrix in canonical
            form without a copy; other formats are converted to CSR) for the linear, poly and rbf
            kernels and Nyström maps; callable and precomputed kernels, and ``solver="sgd"`` on a
            kernel expansion, refuse it with a TypeError.
        y : {array-like, sparse matrix}
            Structures in the space's encoding: 1-D labels for multiclass, (n_samples, width)
            integer rows otherwise. A ``scipy.sparse`` 0/1 Y (``MultiLabelBinarizer(sparse_output=True)``)
            makes ``predict`` return CSR; for ``space="multilabel"`` the core receives the positions
            of its ones, and when n_samples × n_labels is large the linear model (or a Nyström map)
            solved by conjugate gradients keeps them sparse: memory and time per iteration grow
            with the number of ones, not with n_samples × n_labels. Other fits read Y as dense
            rows (8 bytes per entry, checked against the memory budget first).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples. They weigh each example's loss against the
            penalty alpha, as in scikit-learn's ``Ridge``: multiplying every weight by c fits as
            alpha / c does (so does ProbabilisticStructured's default alpha, 1 / (2 · Σw); at a
            given alpha its data term, a weighted mean, ignores their scale). An integer weight k
            fits as k copies of the example with the exact and CG solvers, not exactly with SGD
            (it visits the copies separately) nor with ``n_components`` (the landmarks are drawn
            among the rows whatever their weights). Weights that span more than 1/tol make CG's
            relative gradient the heaviest examples', so that it may stop before the lightest are
            fitted, and beyond about 10¹⁵ they fall below its rounding: a PrecisionWarning says
            so, and ``solver="exact"`` (or, below 10¹⁵, a smaller tol) fits them.

        Returns
        -------
        self : StructuredRidge

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            When the solver stopped at ``max_iter`` short of ``tol`` (``relative_gradient_`` says how far), or rounding kept it from ``tol``; the message names the measure reached.
        """
        previous = getattr(self, "_model", None) if self.warm_start else None  # _fit_data forgets it
        previous_kernel, previous_X = self.__dict__.get("_callable"), self.__dict__.get("X_fit_")
        X, space, rows, classes, sw = self._fit_data(X, y, sample_weight, sparse_targets=True)
        self._check_decision(space)
        self._check_decision_marginals(space)
        seed = _spaces.core_seed(self.random_state)  # one draw: the landmarks' and the core's
        fitted, core_X = None, X
        if callable(self.kernel):
            fitted = _CallableKernel(self.kernel, self.kernel_params)
            shift = 1.0 if self.fit_intercept else 0.0
            if self.n_components is None:
                core_X = fitted(X, X, symmetric=True)
                # the core's warm start on a precomputed kernel assumes the same training samples: make sure
                same = previous_X is not None and np.array_equal(previous_X, X)
            else:
                same = fitted.fit_nystrom(X, self.n_components, shift, seed, previous_kernel)
                core_X = fitted.features(X)
            if not (same and previous_kernel is not None and previous_kernel.same_as(fitted)):
                previous = None
        params = self._params_string(seed).encode()
        self._fit_model(
            _core.RidgeModel.fit_call(space._handle(), core_X, rows, sw, params, previous),
            **fitted_labels(space, classes, isinstance(self.space, str)),
            **_callable_attributes(fitted, X),
        )
        # the core decides which kernels take a Nyström map (n_components_ says it built one)
        if hasattr(self, "n_components_") and X.shape[0] < self.n_components:
            warnings.warn(  # as partial_fit and the Dask fit do (and scikit-learn's Nystroem)
                f"n_components={self.n_components} is more than the {X.shape[0]} rows of X: the Nyström map takes "
                "every row as a landmark (see n_components_), the exact kernel model at a map's cost",
                UserWarning,
                stacklevel=2,
            )
        self._warn_precision()
        self._warn_unconverged(partial=False)
        return self

    def _warn_precision(self) -> None:
        """Issue what the core found wanting in the fit's arithmetic (``PrecisionWarning``: rbf
        kernel values that lose digits on inputs far from the origin, or at a huge gamma; a kernel
        matrix whose scale against alpha is beyond what kernel CG resolves; ill-conditioned normal
        equations of the exact solver)."""
        for message in self._model.info.warnings:
            warnings.warn(message, PrecisionWarning, stacklevel=4)  # the caller of fit, past one_fit_at_a_time

    def _truncation_advice(self) -> str:
        return (
            f"tau={self.tau} is below 2 · n_samples − 1 = {2 * self.n_samples_seen_ - 1}, the longest gap between "
            "two visits of an example, so coefficients are dropped between visits (every one when tau ≤ "
            "n_samples, which leaves the model near zero) and the model stays far from the batch solution however "
            "many epochs run; leave tau=None for fit (it bounds the cost of long partial_fit streams)"
        )

    def _truncates_every_example(self) -> bool:
        """Whether a kernel SGD fit's tau drops every example between two of its visits."""
        return (
            self.tau is not None
            and not (self.kernel == "linear" or self.n_components)
            and self.tau < 2 * self.n_samples_seen_ - 1
        )

    def _warn_unconverged(self, partial: bool) -> None:
        """Warn with ConvergenceWarning when the solver stopped before its tolerance, naming the
        measure it reached. A partial_fit SGD pass is one pass by design, and tol=None sets no
        tolerance: neither warns."""
        measure = self._progress_measure(partial)
        if self.tol is None or (partial and measure != "relative gradient"):
            return
        if self._model.info.converged and not partial and self._truncates_every_example():
            warnings.warn(
                f"{type(self).__name__}'s SGD met tol after {self.n_iter_} epochs, but {self._truncation_advice()}",
                ConvergenceWarning,
                stacklevel=3,
            )
        if not self._model.info.converged:
            reached = self.relative_gradient_
            if self._model.info.solver == "exact":  # "auto" may have resolved to it
                advice = (
                    "the direct solve is as accurate as rounding allows, and the system is ill-conditioned "
                    "(duplicated samples, or a tiny alpha); raise alpha"
                )
            elif measure == "relative gradient" and reached <= self.tol:
                # kernel CG within tol yet unconverged: J was still falling (its second test)
                advice = "its objective was still falling by more than tol·|J|; increase max_iter"
            elif measure != "relative gradient" and self._truncates_every_example():
                # more epochs drop more coefficients: the advice to raise max_iter made it worse (probe FL)
                advice = self._truncation_advice()
            elif measure != "relative gradient" and reached <= self.tol:
                # SGD within tol yet unconverged: J rose over the last epoch, or the core's stall
                # checks found that its steps did not move the model
                advice = (
                    "J rose over its last epoch (SGD's noise, or the restart of its mean of the iterates), "
                    "or its steps were too small to move the model (they are capped at 1/L, L the largest "
                    "curvature of one example's term, which grows with n_samples, and at most 1/(2·alpha); the "
                    "unpenalised intercept's too): increase max_iter, and if that does not help lower alpha "
                    "(alpha acts against the sample weights: weights of 1e-300 fit as alpha = 1e300 does), "
                    "standardise X (features on scales far apart leave the steps, set by the largest, too small "
                    "for the others), or use solver='cg'"
                )
            elif reached < _ROUNDING_FLOOR:
                advice = "tol asks for less than floating point resolves; raise tol"
            elif measure == "relative gradient" and self.n_iter_ < self.max_iter:
                # CG stalled: its steps stopped lowering J in floating point, which more iterations
                # do not change (a rank-deficient poly Gram matrix at tol=1e-12, probe ES)
                advice = (
                    f"it stalled before max_iter={self.max_iter}, its steps no longer lowering the objective in "
                    "floating point (a kernel matrix or X of lower rank than its size, or features or weights on "
                    "scales far apart); raise tol or alpha, or use solver='exact'"
                )
            elif measure != "relative gradient":  # SGD: a larger alpha would slow the intercept further
                advice = (
                    (
                        "increase max_iter or eta0 (at a large alpha its steps, capped at 1/(2·alpha), move the "
                        "unpenalised intercept slowly), standardise X (features on scales far apart leave the "
                        "steps, set by the largest, too small for the others), or use solver='cg'"
                    )
                    if self.kernel == "linear" or self.n_components
                    # a kernel expansion's bias is penalised: no intercept to blame (probe FE)
                    else "increase max_iter or eta0, or standardise X (features on scales far apart leave the "
                    "kernel's steps, set by the largest curvature, too small for the rest)"
                )
            else:
                advice = (
                    "increase max_iter or alpha (alpha acts against the sample weights: scaling every weight by c "
                    "fits as alpha / c does), or check the scale of X"
                )
            warnings.warn(
                f"{type(self).__name__} stopped after {self.n_iter_} {'iterations' if measure == 'relative gradient' else 'epochs'} at a {measure} of "
                f"{reached:.2e} (tol={self.tol}); {advice}",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _partial_fit_available(self) -> bool:
        # available_if hides partial_fit when this raises, and chains the reason to its AttributeError
        if callable(self.kernel) and self.n_components is None:
            raise AttributeError(
                "partial_fit is not available with a callable kernel without n_components: the kernel expansion "
                "lives on the fit samples (as with kernel='precomputed'); use fit, or set n_components"
            )
        try:
            self._validate_params()
            params = self._params_string(seed=0).encode()
        except (TypeError, ValueError, OverflowError):
            return True  # an invalid parameter, which partial_fit names
        try:  # the core's rule (solver='cg', precomputed kernels, solver='exact' for a kernel expansion, ...)
            _core.ridge_check_partial_fit(params)
        except ValueError as exc:
            raise AttributeError(f"partial_fit is not available: {exc}") from None
        return True

    @available_if(_partial_fit_available)
    @one_fit_at_a_time
    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None, classes: Any = None) -> StructuredRidge:
        """Update the model with one more chunk of examples.

        Linear models (and Nyström models, ``n_components`` set) with solver ``"auto"`` or
        ``"exact"`` are updated exactly: the model keeps sufficient statistics of every example seen
        (memory independent of their number), and any sequence of chunks gives the model ``fit``
        would give on all of them. Each such call solves the whole system again, about (k·d)³/3
        operations for k features (plus one for the intercept, or the Nyström components) and
        d = ``space_.dim`` outputs, however small the chunk: 21 ms at 60 features and 20 labels,
        0.17 s at 300 features and 10 labels, per call on 2 cores (200 chunks of 10 rows took 4.2 s
        and 34 s where ``fit`` on the 2,000 rows took 8 and 12 ms). Stream chunks large enough that the solve is a small
        share of each call; ``fit`` solves once — for a Nyström model, the model on all of them through the map
        of the first chunk's landmarks, which ``fit`` on all of them draws from all the rows
        instead (a different map: the models differ as two Nyström approximations do). With
        ``solver="sgd"``, and for kernel models without
        ``n_components``, each call makes one SGD pass over the chunk; such a kernel model keeps
        a term for every example seen unless ``tau`` bounds them, so that its memory and the cost
        of each call grow with the stream (see ``tau``). The method does not exist
        for precomputed kernels nor for callable kernels without ``n_components`` (the expansion
        lives on the fit samples), nor for ``solver="cg"`` (a batch method: use ``"exact"`` or
        ``"sgd"`` to stream). A Nyström map is built from the first chunk, and the space, the
        kernel and its parameters, ``fit_intercept`` and ``n_components`` must then stay the same
        (``alpha``, ``empirical_weight`` and ``reference`` may change: the exact update refits on
        the statistics of every chunk with them, at the next chunk with a positive weight). A model from :meth:`fit` is continued exactly
        only when that fit solved exactly and so kept the statistics (``solver="exact"``, or
        ``"auto"`` where it chose the exact solve: ``solver_`` is ``"exact"``); after a fit by
        conjugate gradients the call is refused with an error that says so.

        Parameters
        ----------
        X, y, sample_weight
            As in :meth:`fit`, for the new chunk (X dense or ``scipy.sparse``; a sparse chunk is
            refused by kernel models without ``n_components``, which continue by SGD). After the
            first call, a chunk whose weights are all zero leaves the model as it is
            (``n_samples_seen_`` included), parameters changed since the last chunk not yet
            applied.
        classes : array-like, default=None
            All class labels, required in the first call with ``space="multiclass"`` (a chunk may
            lack some classes). Later calls may omit it or repeat it; different labels are an
            error, as are labels for a space without them (a ``Multiclass`` object's classes are
            0 … n − 1; a multi-label model's are its labels' indices 0 … n_labels − 1, and [0, 1],
            the values of each, is accepted too).

        Returns
        -------
        self : StructuredRidge
        """
        previous = getattr(self, "_model", None)
        fitted = self.__dict__.get("_callable")
        shift = 1.0 if self.fit_intercept else 0.0
        self._accept_partial_sparse(X)
        if previous is None:
            if self._is_multiclass() and classes is None:
                raise ValueError("classes must be given in the first call to partial_fit with space='multiclass'")
            X, space, rows, fitted_classes, sw = self._fit_data(X, y, sample_weight, classes)
            _check_partial_classes(classes, space, fitted_classes, first=True)
            self._check_decision(space)
            self._check_decision_marginals(space)
            fitted = None
            if self.n_components and self.kernel != "linear" and X.shape[0] < self.n_components:
                warnings.warn(
                    f"partial_fit: the Nyström map is built from the first chunk, whose {X.shape[0]} rows are fewer than "
                    f"n_components={self.n_components}: the map has at most {X.shape[0]} landmarks for every later chunk "
                    "too; give a first chunk of at least n_components rows",
                    UserWarning,
                    stacklevel=2,
                )
            seed = _spaces.core_seed(self.random_state)  # one draw: the landmarks' and the core's
            if callable(self.kernel):
                fitted = _CallableKernel(self.kernel, self.kernel_params)
                fitted.fit_nystrom(X, self.n_components, shift, seed)
        else:
            self._validate_params()
            if not _same_space(self.space, self.space_):
                raise ValueError(
                    f"partial_fit: space must stay that of the model ({self.space_!r}), got space={self.space!r}"
                    f"{_space_difference(self.space, self.space_)}; fit anew to change it"
                )
            if fitted is not None or callable(self.kernel):
                if fitted is None or fitted.projection is None:
                    raise ValueError(
                        "partial_fit: the model was fitted without the Nyström map of a callable kernel; kernel, "
                        "kernel_params, fit_intercept and n_components must stay those of the model (fit anew)"
                    )
                if not fitted.same(self.kernel, self.kernel_params):
                    raise ValueError(
                        "partial_fit: kernel and kernel_params must stay those of the model "
                        f"(kernel={fitted.name}, kernel_params={fitted.params!r})"
                    )
                if fitted.shift != shift:
                    raise ValueError(f"partial_fit: fit_intercept must stay that of the model ({bool(fitted.shift)})")
                # the map stays the first chunk's (as the core holds its own maps, core/ridge/partial.go)
                requested = getattr(fitted, "n_components", None)  # None in pickles from before it was kept
                if requested is not None and self.n_components != requested:
                    raise ValueError(
                        f"partial_fit: n_components must stay that of the model ({requested}), "
                        f"got {self.n_components}; fit anew to change it"
                    )
            multi = not self._is_multiclass()
            y = self._dense_targets(y)
            X, y = validate_data(
                self,
                _capi.summed_duplicates(X),
                y,
                accept_sparse=self._accept_partial_sparse(X),
                dtype=np.float64,
                order="C",
                multi_output=multi,
                y_numeric=multi,
                reset=False,
            )
            space, fitted_classes = self.space_, getattr(self, "classes_", None)
            _check_partial_classes(classes, space, fitted_classes, first=False)
            self._check_decision(space)
            self._check_decision_marginals(space)
            rows = class_rows(y, fitted_classes) if self._is_multiclass() else space._to_rows(y, "y")
            sw = check_sample_weight(sample_weight, X.shape[0], all_zero=True)
            if sw is not None and not np.any(sw > 0):
                return self  # rows of weight 0 count for nothing, as in fit (a streaming loop failed here)
            seed = _spaces.core_seed(self.random_state)
            set_threads(self.n_jobs)  # the first call's _fit_data sets it
        core_X = fitted.features(X) if fitted is not None else X
        params = self._params_string(seed).encode()
        model = run_fit(
            self._model_class,
            type(self).__name__,
            self.verbose,
            _core.RidgeModel.partial_fit_call(previous, space._handle(), core_X, rows, sw, params),
            self._progress_measure(partial=True),
        )
        # the first chunk decides how labels are read, as it decides the space
        named = isinstance(self.space, str) if previous is None else self._fitted().named_classes
        self._set_model(model, **fitted_labels(space, fitted_classes, named), **_callable_attributes(fitted, X))
        self._warn_precision()
        self._warn_unconverged(partial=True)
        return self

    def _accept_partial_sparse(self, X: Any) -> str | bool:
        """accept_sparse for a partial_fit chunk: a kernel model without n_components continues
        by SGD over dense support inputs and refuses a sparse chunk."""
        if _capi.is_sparse(X) and self.kernel != "linear" and not callable(self.kernel) and not self.n_components:
            raise TypeError(
                f"StructuredRidge.partial_fit does not take a sparse X with kernel={self.kernel!r} without "
                "n_components (the SGD pass keeps the support inputs densely); use n_components or the linear kernel"
            )
        return self._accept_sparse(X, fitting=True)

    def _progress_measure(self, partial: bool) -> str:
        # SGD reports the relative change of J over an epoch: a kernel model's full gradient would
        # cost O(m²n). partial_fit of a kernel model without a Nyström map is an SGD pass.
        sgd = self.solver == "sgd" or (partial and self.kernel != "linear" and not self.n_components)
        return "relative change of J" if sgd else "relative gradient"

    def _check_fit_X(self, X: np.ndarray) -> None:
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix for kernel='precomputed', got shape {X.shape}")

    def _reset(self) -> None:
        super()._reset()
        self.__dict__.pop("_callable", None)

    def _model_attributes(self, model: _core.RidgeModel, fitted: dict[str, Any]) -> dict[str, Any]:
        info = model.info
        attrs = super()._model_attributes(model, fitted)
        attrs["n_iter_"] = max(info.n_iter, 1)  # the exact solver's single direct solve counts as one iteration
        attrs["n_samples_seen_"] = info.n_seen
        if info.solver:  # a model read from bytes does not know it: the pickled estimator keeps its own
            attrs["solver_"] = info.solver
        if info.n_components:
            attrs["n_components_"] = info.n_components
        # the core model of a callable kernel's Nyström map is linear on the map, but like an rbf
        # Nyström model it has no coef_
        if info.kernel == "linear" and fitted.get("_callable", self.__dict__.get("_callable")) is None:
            attrs["coef_"], attrs["intercept_"] = model.coef()
        return attrs

    # -- prediction ---------------------------------------------------------------------------
    @staticmethod
    def _core_blocks(X: np.ndarray, fitted: _Fitted) -> Iterator[tuple[slice, np.ndarray]]:
        """For a model fitted with a callable kernel, yield (rows, the core model's inputs for
        X[rows]) for validated inputs X: the kernel block K(X[rows], X_fit_) or the Nyström map of
        X[rows], in blocks of rows that bound its memory. Kernel and training inputs come from the
        snapshot ``fitted``: read from the estimator block by block, a refit in another thread
        applied the old model to kernel rows against the new training set."""
        kernel, X_fit = fitted.kernel, fitted.X_fit
        exact = kernel.projection is None
        width = X_fit.shape[0] if exact else kernel.landmarks.shape[0]
        step = max(1, _BLOCK_VALUES // max(1, width))
        for lo in range(0, X.shape[0], step):
            rows = slice(lo, min(lo + step, X.shape[0]))
            yield rows, kernel(X[rows], X_fit) if exact else kernel.features(X[rows])

    def _scores(self, X: Any, fitted: _Fitted | None = None) -> np.ndarray:
        fitted = fitted or self._fitted()
        if fitted.kernel is None:
            return super()._scores(X, fitted)
        X = self._inputs(X)
        out, _ = _capi.out_f64((X.shape[0], fitted.dim))
        for rows, block in self._core_blocks(X, fitted):
            fitted.model.decision(block, out[rows])  # a contiguous view
        return out

    def _row_blocks(self, X: np.ndarray, fitted: _Fitted) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield (rows, the core model's inputs for X[rows]) for validated inputs X: all of X at
        once, or block by block for a model fitted with a callable kernel (see _core_blocks)."""
        if fitted.kernel is not None:
            yield from self._core_blocks(X, fitted)
        else:
            yield slice(0, X.shape[0]), X

    def _decodes_marginals(self) -> bool:
        """Whether predict decodes the marginal estimates (``decode_from``), validated here too:
        set_params after fit is only checked by the next fit, and predict needs no refit."""
        if not (isinstance(self.decode_from, str) and self.decode_from in _DECODE_FROM):
            validate_parameter_constraints(  # raises, with scikit-learn's message
                {"decode_from": self._parameter_constraints["decode_from"]},
                {"decode_from": self.decode_from},
                caller_name=type(self).__name__,
            )
        return self.decode_from == "marginals"

    def _predict(self, X: Any, fitted: _Fitted | None = None) -> np.ndarray:
        fitted = fitted or self._fitted()
        marginals = self._decodes_marginals()
        if fitted.kernel is None and not marginals:
            return super()._predict(X, fitted)
        X = self._inputs(X)

        def structures_of(inputs: Any) -> np.ndarray:
            out, _ = _capi.out_i64_array((inputs.shape[0], fitted.width))
            for rows, block in self._row_blocks(inputs, fitted):
                if marginals:
                    fitted.model.marginals(block, None, out[rows])  # a contiguous view
                else:
                    fitted.model.predict(block, out[rows])
            return self._structures(fitted, out)

        return self._output(fitted, structures_of, X)

    def decision_function(self, X: Any) -> np.ndarray:
        """Return the scores u(x) in ψ-coordinates, shape (n_samples, d).

        The predicted structure maximises ⟨u(x), ψ(y)⟩. For a two-class ``space="multiclass"``
        model the result is the margin u₁ − u₀ of shape (n_samples,), as scikit-learn expects.
        X may be dense or ``scipy.sparse``, whatever the layout of the training inputs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        U : ndarray of shape (n_samples, d), or (n_samples,) for two classes
        """
        return self._decision_function(X)

    def predict(self, X: Any) -> np.ndarray:
        """Return the structure chosen by ``decision`` for each input, in the space's encoding.

        ``decision="mode"``: the space's decoder maximises ⟨u(x), ψ(y)⟩ over the structures y, or
        with ``decode_from="marginals"`` ⟨m̂(x) − p, ψ(y)⟩ (see :meth:`predict_marginals`);
        otherwise the structure of least expected loss under the marginal estimates. A coordinate
        of ψ that the reference measure holds at one value (under ``empirical_weight=1``, a label
        on in every training target; every pair of the only training ranking) at an end of its
        range carries no score, and the decoder keeps it at that value, where ``predict_marginals``
        puts it. A coordinate held inside its range (an arc that no training directed cycle has,
        ψ = 0 between −1 and +1) cannot be kept there by a decoder of linear scores: it scores about
        0, and the prediction may use it in either direction. Multiclass
        models return class labels (``classes_``); multilabel models a 0/1 matrix, or a
        scipy.sparse CSR matrix when ``fit`` was given a sparse Y (``sparse_output_``, as
        scikit-learn's OneVsRestClassifier does; decoded a block of rows at a time). X may be
        dense or ``scipy.sparse``, whatever the layout of the training inputs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, width), or sparse matrix
            Class labels, 0/1 label rows, or structures in the space's encoding.
        """
        return self._decide(X)

    def predict_marginals(self, X: Any, scale: str | float | None = None, estimate: str | None = None) -> np.ndarray:
        """Estimate E[ψ(y) | x], the marginals of the structure given each input, from the scores.

        At the optimum of the objective, the scores u(x) are whitened by the covariance S of ψ
        over the whole space: S·u(x) points along E[ψ(y) | x] − p (p the mean of ψ over the
        space). The estimate is ``m̂(x) = clip(p + c·S u(x))`` with the per-input scale
        ``c = min((1 + √(1 − 4a)) / (2a), 1 + r)``, ``a = u(x)ᵀ S u(x)`` (taken as 1/4 when
        larger) and r the rank of S, each coordinate clipped to the range of ψ's coordinates
        ([0, 1] for indicators, [−1, 1] for the pair signs of permutations, directed cycles and
        tournaments). The derivation is in docs/design.md §2a.

        What it recovers: where the training targets are a function of x (no noise) and the
        model fits them, ψ(y) itself — exactly, for every structure whose Mahalanobis norm
        t = δᵀS⁺δ (δ = ψ(y) − p) is at most r, which is every structure of Multiclass, Multilabel,
        KSubsets, Ordinal, HierarchyPaths and Permutations; beyond, ψ(y) − p shrunk by
        (1 + r)/(1 + t). Where y given x is random, no function of the scores recovers E[ψ | x]
        in general — different conditional distributions give the same scores (the ranking loss
        is not a proper scoring rule) — and the estimate is a heuristic: right in sign and
        direction, with a scale that assumes little noise and may be over-confident. Weak scores
        (heavy regularisation, inputs far from the training data) give marginals near p.

        With ``scale="unit"`` the estimate is ``clip(p + S u(x))``: the same scale for every
        input, which keeps the order of the estimates across inputs — what ranking metrics over
        (input, coordinate) pairs compare, such as the AU(PRC) of taxonomy nodes — and shrinks a
        noise-free target's ψ(y) − p by 1/(1 + t) instead of recovering it. On noisy data it is
        usually the better ranking (BENCHMARKS.md, "reference_measures").

        A positive number ``scale=c`` gives ``clip(p + c·S u(x))`` (``"unit"`` is c = 1): under
        noise the estimates come out shrunk towards p by a factor that depends on the data, and a
        constant chosen on validation data (like ``alpha``) calibrates them; it changes the ranking
        of (input, coordinate) pairs, since p differs between coordinates (on cellcycle_FUN c ≈ 4
        ranked best, BENCHMARKS.md "reference_measures").

        With ``empirical_weight > 0``, p and S are the mean and covariance of ψ under the mixed
        reference measure, not the uniform one's, and t can exceed r: noise-free targets far from
        the training structures' mean are then shrunk, not recovered (docs/design.md §2b).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs (dense or ``scipy.sparse``, whatever the layout of the training inputs); with
            ``kernel="precomputed"``, the kernel values against the training samples
            (n_samples, n_samples_fit).
        scale : {"noise_free", "unit"} or float, default=None
            The scale c of S·u(x): the per-input c above, 1, or the given positive number (from
            2.2e-308, the smallest normal float64, to 1e100, which keeps c·S u(x) finite). With
            ``estimate="tilted"``: the c of θ = c·u(x), ``"unit"`` or a positive number
            (``"noise_free"`` is refused). None: the estimator's ``marginal_scale``
            (``"noise_free"`` by default), which :meth:`predict`'s decision rules read too.
        estimate : {"linear", "tilted"}, default=None
            None: the estimator's ``marginal_estimate`` (``"linear"`` by default): a scale and
            an estimate tuned as parameters (``GridSearchCV``) are what this method gives, as
            :meth:`predict` decodes them (the method's own defaults gave the untuned estimate,
            probe 84). ``"linear"``: clip(p + c·S u(x)), above. ``"tilted"``: the mean of ψ under the
            reference measure μ tilted by the scores, μ_θ(y) ∝ μ(y)·exp⟨θ, ψ(y)⟩ with
            θ = c·u(x) (docs/design.md §2c). To first order in θ it is p + c·S u(x), the linear
            estimate; beyond, it is a mean of structures of μ's support, in range without
            clipping and with their correlations kept: under the empirical measure
            (``empirical_weight=1``), a softmax-weighted mean of the training structures. On
            cellcycle_FUN's taxonomy its node AU(PRC) at c = 4 was 0.239 against the linear
            estimate's 0.2177 at the same fit (BENCHMARKS.md, "reference_measures"); choose c on
            validation data.
            It needs exact inference over the space for a uniform part (``empirical_weight`` < 1:
            ProbabilisticStructured's exact marginals, an error where the space has none) and the
            training structures for an empirical part, which a fit in memory and ``partial_fit``
            keep (a model with an empirical part fitted from statistics merged across partitions,
            combpred.dask, has none: an error). Under ``reference="product"`` the data-driven part
            is the space's product measure, tilted in closed form (independent labels:
            p·e^θ / (1 − p + p·e^θ) per label; subtrees: the branching process, by a pass up and
            down the tree). The cost per input is that of exact inference plus O(nnz) over the
            distinct training structures, or O(d) for a product measure.

        Returns
        -------
        marginals : ndarray of shape (n_samples, d)
            Row i estimates E[ψ(y) | x_i]. For 0/1 feature maps (multilabel, multiclass, k-subsets,
            subtrees, hierarchy paths, ordinal thresholds, cliques, undirected cycles) entry j
            estimates P(ψ_j(y) = 1 | x); for permutations, E[ψ_uv] = 2·P(u before v | x) − 1. Every
            entry is finite and in the range of ψ's coordinates; constraints that tie the
            coordinates together (a k-subset's k ones, a ranking's transitivity, a taxonomy's
            child ≤ parent) hold only approximately, and with ``scale="noise_free"`` on a
            taxonomy a node can exceed its parent by a lot (up to 0.97, a node near 1 under a
            parent at 0, on gasch2_GO's DAGSubsets of the user guide: ``empirical_weight=1``,
            ``alpha=1000``, test genes; at most 0.02 there with ``scale="unit"``).
            ProbabilisticStructured's exact marginals keep child ≤ parent.

        See Also
        --------
        decision_function : the scores u(x) themselves.
        """
        scale = self.marginal_scale if scale is None else scale
        return self._marginals(self._fitted(), X, scale, self.marginal_estimate if estimate is None else estimate)

    def _check_decision_marginals(self, space: Any) -> None:
        """Refuse, before the fit, a ``marginal_estimate`` and ``marginal_scale`` that the rules of
        ``decision`` would read and that no model over ``space`` with these parameters takes (the
        core's rules: the tilted estimate at the noise-free scale, or on a space without exact
        inference under a measure with a uniform part; a factor out of range); with
        ``decision="mode"`` they are not read."""
        if self.decision == _decision.MODE:
            return
        estimate, scale = self.marginal_estimate, self.marginal_scale
        try:
            code, factor = _marginal_scale(scale)
            params = self._params_string(seed=0).encode()
            _core.ridge_check_marginals(space._handle(), params, _MARGINAL_ESTIMATES.index(estimate), code, factor)
        except ValueError as exc:
            raise ValueError(f"marginal_estimate={estimate!r}, marginal_scale={scale!r}: {exc}") from None

    def _decision_marginals(self, fitted: _Fitted, X: Any) -> np.ndarray:
        """The estimates of ``marginal_estimate`` at ``marginal_scale``, which ``decision`` reads
        (both validated here too: predict needs no refit after set_params)."""
        estimate, scale = self.marginal_estimate, self.marginal_scale
        validate_parameter_constraints(
            {k: self._parameter_constraints[k] for k in ("marginal_estimate", "marginal_scale")},
            {"marginal_estimate": estimate, "marginal_scale": scale},
            caller_name=type(self).__name__,
        )
        try:
            return self._marginals(fitted, X, scale, estimate)
        except ValueError as exc:
            raise ValueError(f"marginal_estimate={estimate!r}, marginal_scale={scale!r}: {exc}") from None

    def _marginals(
        self,
        fitted: _Fitted,
        X: Any,
        scale: str | float,
        estimate: str,
    ) -> np.ndarray:
        """predict_marginals from the snapshot ``fitted`` (predict's decision rules decode them in its space)."""
        code, factor = _marginal_scale(scale)
        if estimate not in _MARGINAL_ESTIMATES:
            raise ValueError(f"estimate must be one of {_MARGINAL_ESTIMATES}, got {estimate!r}")
        X = self._inputs(X)
        out, _ = _capi.out_f64((X.shape[0], fitted.dim))
        for rows, block in self._row_blocks(X, fitted):
            fitted.model.marginals(block, out[rows], None, code, factor, _MARGINAL_ESTIMATES.index(estimate))
        return out

    def max_marginal_margins(self, X: Any) -> np.ndarray:
        """Return a confidence for every coordinate of ψ: the max-marginal margin of what predict
        maximises.

        For input x and coordinate j, the margin is ``max f(y) over the structures with ψ_j(y) at
        its largest value − max f(y) over those with ψ_j(y) at its smallest``, f the objective that
        :meth:`predict` maximises (⟨u(x), ψ(y)⟩, or ⟨m̂(x) − p, ψ(y)⟩ with
        ``decode_from="marginals"``). Where ψ_j is 0 or 1, or ±1 (a pair of a ranking), it is
        positive where the predicted structure has the coordinate at its largest value (a label in
        the set, a node in the subtree, u before v in the ranking), by how much the best structure
        without it would score less. Where ψ_j takes three values (an arc of ``DirectedCycles``:
        +1 for u→v, −1 for v→u, 0 when the cycle uses neither), it compares the two directions
        only: an arc the prediction does not use gets a margin of either sign (half of them
        positive on a probe's 424 unused arcs): whether the route uses the arc is the best
        structure at +1 or −1 against the best at 0, which this margin does not give. It is a
        per-coordinate score for ranking metrics (average precision over (input, label) or
        (input, node) pairs, ranking loss) that comes from the same decoder as the prediction. Coordinates constant over the space (the
        root of a taxonomy) get +inf when on and −inf when off. Where a reference measure with a
        data-driven part (``empirical_weight`` > 0) holds a coordinate at an end of its range (a
        label or node that every training structure has, or that none has, and that the uniform
        part holds there too to within a variance of 10⁻¹² of the largest coordinate's: a node
        above 45 leaves, which the uniform measure over subtrees leaves out with probability
        2⁻⁴⁵), both maxima range over the structures that hold it there, as :meth:`predict`
        does, and such coordinates get ±inf too (the uniform measure alone pins none: its scores
        there are rounding, ±10⁻¹⁴); one held inside
        its range (an arc absent from every training cycle) gets a finite margin over all
        structures; where the measure leaves one end of a three-valued coordinate impossible, the
        margin is between the values that remain (+1 against 0, or 0 against −1).

        Each entry costs two exact decodings (2·d per input), but for multi-label sets
        (``Multilabel``; not ``KSubsets`` or ``Ordinal``), classes and taxonomy paths and subtrees,
        where one dynamic programme gives all d margins of an input in O(d) time, and for DAG paths,
        where it costs one decoding. On ``DAGSubsets`` each decoding
        is a minimum cut: 2·d of them take about two minutes per input at d = 2,000 (Ctrl-C stops
        them); ``predict_marginals`` is the confidence to use there. Use it where the space decodes
        exactly (``space_.decoder_guarantee == 0``); approximate decoders are refused.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs (dense or ``scipy.sparse``); with ``kernel="precomputed"``, the kernel values
            against the training samples.

        Returns
        -------
        margins : ndarray of shape (n_samples, d)
            The margins, in the units of the objective.

        See Also
        --------
        predict_marginals : the estimates of E[ψ(y) | x], another confidence per coordinate.
        """
        source = _DECODE_FROM.index("marginals" if self._decodes_marginals() else "scores")
        fitted = self._fitted()
        X = self._inputs(X)
        out, _ = _capi.out_f64((X.shape[0], fitted.dim))
        for rows, block in self._row_blocks(X, fitted):
            fitted.model.max_margins(block, source, out[rows])  # a contiguous view
        return out

    def _check_pickled_inputs(self, model: _core.Model) -> None:
        """A callable kernel's model takes kernel rows against X_fit_ (or the Nyström map's
        features), which the model bytes do not hold: X_fit_ (or the map) must have as many rows (or
        columns) as the model takes features, and n_features_in_ columns. A truncated X_fit_ was
        named as X at predict, and a changed n_features_in_ blamed the user's inputs."""
        state = self.__dict__
        X_fit, fitted = state.get("X_fit_"), state.get("_callable")
        # whether the fit's kernel was callable, read from its state: set_params(kernel=...) since
        # the fit changes the parameter, not the model, and its pickles were refused as altered
        callable_fit = X_fit is not None or isinstance(fitted, _CallableKernel)
        if (model.info.kernel == "linear" and not callable_fit) != ("coef_" in state):
            # an rbf model's bytes under a linear one's attributes loaded, and kept the stale coef_
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: its model bytes hold a model of kernel "
                f"{model.info.kernel!r}, which its pickled attributes {'do' if 'coef_' in state else 'do not'} describe "
                "with coef_; the pickle was altered"
            )
        if not callable_fit:
            return super()._check_pickled_inputs(model)
        if isinstance(X_fit, np.ndarray) and X_fit.ndim == 2:
            takes, columns = X_fit.shape
        elif isinstance(fitted, _CallableKernel) and fitted.projection is not None and fitted.landmarks is not None:
            takes, columns = fitted.projection.shape[1], fitted.landmarks.shape[1]
        else:
            takes = columns = None
        if takes != model.n_features or columns != state.get("n_features_in_"):
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: its callable kernel's training inputs (X_fit_) or "
                f"Nyström map do not match n_features_in_={state.get('n_features_in_')!r} and the model bytes' "
                f"{model.n_features} kernel columns; the pickle was altered"
            )
        arrays = (X_fit,) if X_fit is not None else (fitted.projection, fitted.landmarks)
        if not all(_finite_float64(a) for a in arrays):
            # a NaN in the map was blamed on the user's X at predict ("X[0, 0] = NaN", probe DK)
            raise ValueError(
                f"inconsistent pickle of {type(self).__name__}: its callable kernel's training inputs (X_fit_) or "
                "Nyström map hold values that are not finite float64; the pickle was altered"
            )

    def __setstate__(self, state: dict[str, Any]) -> None:
        # pickles from before decode_from, empirical_weight and decision existed predict as they
        # did: the decoded scores, with the uniform reference measure
        state = {
            **{
                k: _D[k]
                for k in ("decode_from", "empirical_weight", "reference", "marginal_estimate", "marginal_scale")
            },
            "decision": _decision.MODE,
            **state,
        }
        super().__setstate__(state)


# A relative gradient below this is rounding noise: a solver that stops there has converged as far
# as float64 allows, and only a smaller tol made it "unconverged".
_ROUNDING_FLOOR = 1e-12

# Kernel blocks of callable kernels (at prediction, in the Nyström map and in the symmetry check)
# hold at most this many values (32 MiB).
_BLOCK_VALUES = 1 << 22


def _writable(a: np.ndarray, what: str) -> np.ndarray:
    """``a``, or a writable copy of it (charged to the memory budget) when it is read-only: the
    Cython kernels of sklearn.metrics.pairwise (chi2_kernel) refuse read-only buffers, and a
    model's X_fit_ is frozen, so such a model fitted and then could never predict (probe FL)."""
    if a.flags.writeable:
        return a
    _capi.check_bytes(a.nbytes, what)
    return a.copy()


class _CallableKernel:
    """A callable kernel as a model was fitted with it: the function and a copy of its parameters,
    and with n_components its Nyström map φ(x) = (K(x, L) + shift)·P (thesis appendix A), with
    shift = 1 with an intercept (the map is of the kernel k + 1 of the kernel model). Python only
    evaluates the kernel: the core draws the landmark rows L and computes the projection P from
    K_LL + shift, by the rules of its own rbf and poly maps (core/ridge/nystrom.go)."""

    state: bytes | None = None  # the kernel object's pickle; None in pickles from before it was kept

    def __init__(self, kernel: Callable[..., Any], params: dict | None):
        # a copy, as of the parameters: a kernel object changed after the fit (k.gamma = 3) changed
        # the fitted model's scores, and its next fit took the old Nyström projection with the new
        # kernel, a map of neither (probe DC). A function copies as itself; an object that cannot
        # be copied is kept as it is.
        try:
            self.kernel = copy.deepcopy(kernel)
        except Exception:
            self.kernel = kernel
        self.state = _state_of(kernel)  # what an object's later calls are compared by
        self.params = copy.deepcopy(params) if params else {}
        self.landmarks: np.ndarray | None = None
        self.projection: np.ndarray | None = None
        self.n_components: int | None = None  # the request, which may exceed the landmarks drawn
        self.shift = 0.0

    @property
    def name(self) -> str:
        name = getattr(self.kernel, "__qualname__", None) or getattr(self.kernel, "__name__", None)
        return name if isinstance(name, str) else repr(self.kernel)

    def same(self, kernel: Any, params: dict | None, state: bytes | None = None) -> bool:
        """Whether (kernel, params) is this kernel with the same parameters; ``state`` is the
        kernel's :func:`_state_of` where the caller holds it (None: taken here if needed)."""
        params = params or {}
        return (
            (_equal(self.kernel, kernel) or (self.state is not None and (state or _state_of(kernel)) == self.state))
            and self.params.keys() == params.keys()
            and all(_equal(v, params[k]) for k, v in self.params.items())
        )

    def same_as(self, other: _CallableKernel) -> bool:
        """Whether ``other`` is this kernel with the same parameters (its state is not pickled again)."""
        return self.same(other.kernel, other.params, other.state)

    def __call__(self, X: np.ndarray, Y: np.ndarray, symmetric: bool = False) -> np.ndarray:
        """K(X, Y), checked: a finite float64 C-contiguous matrix of shape (len(X), len(Y)), and
        symmetric when ``symmetric`` (Y is X). The errors name the kernel."""
        what = (
            f"kernel={self.name} (called as kernel(X, Y, **kernel_params) on arrays of shapes {X.shape} and {Y.shape})"
        )
        expected = (X.shape[0], Y.shape[0])
        # the user's function allocates K: checked first (a 20,000-row fit reached 3.8 GB before the
        # core refused the matrix it had been handed)
        _capi.check_output(expected, f"the kernel matrix of kernel={self.name}")
        try:
            with user_code(self, f"kernel={self.name}"):
                try:
                    K = self.kernel(X, Y, **self.params)
                except ValueError as exc:
                    if "read-only" not in str(exc) or (X.flags.writeable and Y.flags.writeable):
                        raise
                    # sklearn's Cython kernels (chi2_kernel) refuse read-only buffers, and X_fit_
                    # is frozen: such a model fitted and could never predict (probe FL). Copied
                    # only then: a copy for every predict cost 56 % of a one-row rbf_kernel
                    # predict and was refused under a budget the model fitted in (probe FO).
                    same = Y is X
                    X = _writable(X, f"a writable copy of X for {what}")
                    Y = X if same else _writable(Y, f"a writable copy of Y for {what}")
                    K = self.kernel(X, Y, **self.params)
        except (MemoryError, _SetDuringOwnFit):
            raise
        except TypeError as exc:
            raise TypeError(f"{what} raised {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise ValueError(f"{what} raised {type(exc).__name__}: {exc}") from exc
        returned = type(K).__name__
        if sparse.issparse(K):
            _capi.check_sparse_structure(K, what)
            K = K.toarray()
        try:
            K = np.asarray(K)
        except Exception as exc:  # e.g. ragged nested lists
            raise ValueError(f"{what} returned a {returned} that is not an array: {exc}") from exc
        if K.dtype.kind not in "biuf":
            raise TypeError(f"{what} returned a {returned} of dtype {K.dtype}; a kernel matrix holds real numbers")
        if K.shape != expected:
            raise ValueError(
                f"{what} returned shape {K.shape}, expected {expected}: a callable kernel maps two sample matrices "
                "to their kernel matrix (it is not called on single pairs of rows)"
            )
        K = np.ascontiguousarray(K, dtype=np.float64)
        finite = np.isfinite(K)
        if not finite.all():
            i, j = np.unravel_index(np.argmin(finite), K.shape)
            raise ValueError(f"{what} returned a non-finite value: K[{i}, {j}] = {K[i, j]}")
        if symmetric:
            _check_symmetric(K, what)
        return K

    def fit_nystrom(
        self, X: np.ndarray, n_components: int, shift: float, seed: int, reuse: _CallableKernel | None = None
    ) -> bool:
        """Build the Nyström map from the rows of X; take the projection of ``reuse`` when it is the
        map of the same kernel on the same landmarks (and then return True)."""
        idx = _core.nystrom_landmarks(X.shape[0], n_components, seed)
        self.landmarks, self.shift, self.n_components = X[idx].copy(), shift, n_components
        if (
            reuse is not None
            and reuse.projection is not None
            and reuse.shift == shift
            and reuse.same_as(self)
            and np.array_equal(reuse.landmarks, self.landmarks)
        ):
            self.projection = reuse.projection
            return True
        K = self(self.landmarks, self.landmarks, symmetric=True)  # its errors name the kernel already
        try:
            self.projection = _core.nystrom_projection(K + shift)
        except ValueError as exc:
            raise ValueError(f"{exc} (kernel={self.name})") from None
        return False

    def features(self, X: np.ndarray) -> np.ndarray:
        """φ of the rows of X: (K(X, L) + shift)·P, in blocks of rows. The product is the core's,
        whose every entry is summed in one order however many rows there are: NumPy's changed its
        rounding with the rows of the block, so a row's scores depended on the rows scored with it
        (probe Q: 1.9e-15 between one call and row-by-row calls)."""
        out, _ = _capi.out_f64((X.shape[0], self.projection.shape[1]), f"X's Nyström features (kernel={self.name})")
        step = max(1, _BLOCK_VALUES // max(1, self.landmarks.shape[0]))
        for lo in range(0, X.shape[0], step):
            block = self(X[lo : lo + step], self.landmarks) + self.shift  # a new array: never the kernel's own
            try:
                with _capi.rows_from(lo):  # the message's rows are X's
                    out[lo : lo + step] = _core.nystrom_features(block, self.projection)
            except ValueError as exc:
                raise ValueError(f"kernel={self.name}: {exc}") from None
        return out


def _marginal_scale(scale: Any) -> tuple[int, float]:
    """(scale code, factor) of predict_marginals' ``scale``: a named scale, or the unit scale times a
    number (whose range the core checks)."""
    if isinstance(scale, str):
        if scale not in _MARGINAL_SCALES:
            raise ValueError(f"scale must be one of {_MARGINAL_SCALES} or a positive number, got {scale!r}")
        return _MARGINAL_SCALES.index(scale), 1.0
    if isinstance(scale, numbers.Real) and not isinstance(scale, (bool, np.bool_)):
        if not scale > 0:  # NaN and values ≤ 0 are refused for their sign by the core's range check (probe BZ)
            try:
                return _MARGINAL_SCALES.index("unit"), float(scale)
            except OverflowError:
                return _MARGINAL_SCALES.index("unit"), -np.inf
        try:
            factor = _capi.real_value(scale, "scale")
        except ValueError as exc:
            raise ValueError(f"{exc}; the scale must be a positive number") from None
        return _MARGINAL_SCALES.index("unit"), factor
    raise TypeError(f"scale must be one of {_MARGINAL_SCALES} or a positive number, got {scale!r}")


def _state_of(kernel: Any) -> bytes | None:
    """A kernel object's state as bytes (its pickle), by which a copy of it and the object the user
    passes again compare equal while neither changed; None for a function (compared as itself) or
    an object that does not pickle (compared by ``==``)."""
    if isinstance(kernel, types.FunctionType | types.BuiltinFunctionType):
        return None
    try:
        return pickle.dumps(kernel)
    except Exception:
        return None


def _equal(a: Any, b: Any) -> bool:
    """a == b for kernel functions and parameter values (arrays compare by value)."""
    if a is b:
        return True
    try:
        equal = a == b
        return bool(equal) if np.ndim(equal) == 0 else bool(np.all(equal)) and np.shape(a) == np.shape(b)
    except Exception:
        return False


def _check_symmetric(K: np.ndarray, what: str) -> None:
    """Raise ValueError naming the first asymmetric pair, with the core's tolerance for precomputed
    kernels (|a − b| ≤ tol · max(1, |a|, |b|), the schema's ``symmetry_tol``); by blocks of rows to
    bound the temporaries."""
    m, tol = K.shape[0], _schema.query_default("symmetry_tol")
    step = max(1, _BLOCK_VALUES // max(1, m))
    for lo in range(0, m, step):
        a, b = K[lo : lo + step], K[:, lo : lo + step].T
        bad = np.abs(a - b) > tol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
        if bad.any():
            i, j = np.unravel_index(np.argmax(bad), bad.shape)
            i += lo
            raise ValueError(
                f"{what} returned a kernel matrix that is not symmetric: K[{i}, {j}] = {K[i, j]} but "
                f"K[{j}, {i}] = {K[j, i]}"
            )


def _same_space(param: Any, fitted: _spaces.Space) -> bool:
    """Whether the ``space`` parameter names the fitted space: its kind for a name (the size comes
    from y), its type and parameters for a space object."""
    if isinstance(param, str):
        return param == fitted.kind
    return type(param) is type(fitted) and param._params() == fitted._params()


def _space_difference(param: Any, fitted: _spaces.Space) -> str:
    """Where two taxonomy spaces of one repr differ (their reprs show the node count only, and a
    refusal printed the same text twice, probe EO): the first node whose parent or parents differ,
    ", where ..."; "" for spaces the repr tells apart."""
    if isinstance(param, str) or repr(param) != repr(fitted):
        return ""
    for name in ("parent", "parents"):
        mine, theirs = getattr(fitted, name, None), getattr(param, name, None)
        if mine is not None and theirs is not None and mine != theirs:
            v = next(i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b)
            order = (
                " (the order of a node's parents counts)"
                if name == "parents" and set(mine[v]) == set(theirs[v])
                else ""
            )
            verb = "are" if name == "parents" else "is"
            return f", where node {v}'s {name} {verb} {theirs[v]} against the model's {mine[v]}{order}"
    return ""
