"""ProbabilisticStructured: the exponential family over an output space, Vembu's thesis chapter 6."""

from __future__ import annotations

import inspect
import numbers
import sys
import threading
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._available_if import available_if

from . import _capi, _core, _schema
from . import decision as _decision
from . import spaces as _spaces
from ._estimator_base import (
    StructuredEstimator,
    _Fitted,
    class_label_vector,
    class_rows,
    fitted_labels,
    one_fit_at_a_time,
)
from .exceptions import MixingWarning

__all__ = ["ProbabilisticStructured"]


# Where the rows of the current call start in a larger X (partition index, first row), set by
# combpred.dask around each block so that a warning names rows of X; None for in-memory calls.
row_origin = threading.local()


def _warn_rows(call: str, flagged: np.ndarray, what: str) -> None:
    """A MixingWarning of a query naming its flagged rows: ``call: in k of q rows (the first: row
    r) what``."""
    if not flagged.any():
        return
    rows = np.flatnonzero(flagged)
    where = f"the first: row {rows[0]}"
    origin = getattr(row_origin, "value", None)
    if origin is not None:
        where += f" of partition {origin[0]}, X's row {origin[1] + rows[0]}"
    warnings.warn(f"{call}: in {len(rows)} of {len(flagged)} rows ({where}) {what}", MixingWarning, stacklevel=3)


def _warn_unvouched(call: str, result: str, unvouched: np.ndarray, space: _spaces.Space) -> None:
    """The MixingWarning of a query whose rows' counts of unvouched chains (the core's) are not all 0."""
    _warn_rows(
        call,
        unvouched > 0,
        f"a Metropolis chain never left the decoded mode, in too few proposals to show that the mode holds nearly "
        f"all the mass of the {space.kind} space: those rows' {result}. Use a sampler with local moves where the "
        'space has them, "cftp" (exact samples), or exact inference where the space has it',
    )


def _warn_not_mixed(call: str, verdicts: np.ndarray, against: str, result: str) -> None:
    """The MixingWarning of a query whose mixing-check verdicts (the core's: 1 disagreed, 0 agreed,
    -1 not run) flag rows; ``against`` names what the check's chain was compared with, ``result``
    what the rows returned."""
    _warn_rows(
        call,
        verdicts == 1,
        f"a chain started away from the decoded mode (check_mixing) found a mean of ψ that differs from {against} "
        f"beyond Monte Carlo noise: the chains did not mix and those rows' {result} depend on where the chains "
        'started. Use exact inference where the space has it, "cftp" (exact samples), another sampler, or a longer '
        "burn-in",
    )


_D = _schema.defaults("prob")
LOG_Z_METHODS = tuple(_schema.enum("log_z_methods"))
# the method code in log_partition's info indexes these names (an array: one gather builds the
# column, where a list of n Python strings was built first, unchecked by the budget; probe EE)
_METHOD_NAMES = np.array(LOG_Z_METHODS)
_MAX_SAMPLES = int(_schema.query_default("max_samples"))  # the FPRAS work bound per row


def _params(**items: Any) -> bytes:
    """The "key=value;..." parameter string of a query call; None values are left out."""
    return ";".join(
        f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}" for k, v in items.items() if v is not None
    ).encode()


# A query call's arguments are marshalled here by type only; their ranges and options (epsilon in
# (0, 1), n_samples ≥ 1, the samplers a query takes) are the core's to check (capi/probparams.go),
# and its errors name the argument.


def _real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return _capi.real_value(value, name)


def _integer(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return _capi.int64_value(value, name)


def _name(value: Any, name: str, allow_none: bool = True) -> str | None:
    """A name the core looks up (a method, a sampler): a string that cannot split the parameter
    string into other keys (";", "="), end the C string early (NUL, which silently dropped the
    keys after it) or be trimmed into another name, or None (the call's default) where allowed."""
    if (value is None and not allow_none) or (
        value is not None
        and (not isinstance(value, str) or any(c in value for c in ";=\x00") or value != value.strip())
    ):
        raise ValueError(f"{name} must be {'None or ' if allow_none else ''}a name, got {value!r}")
    return value


class ProbabilisticStructured(StructuredEstimator):
    """Conditional exponential family over combinatorial structures (probabilistic structured prediction).

    Models p(y | x) = exp(⟨u(x), ψ(y)⟩ − log Z(x)) with u(x) = Wᵀx + b over the whole output space,
    and fits W by maximum a posteriori:

        J(W) = alpha · ‖W‖² + (1/n_samples) Σ_i [log Z(x_i) − ⟨u(x_i), ψ(y_i)⟩]

    (the intercept b is not penalised). Its gradient needs ``E_{p(·|x)}[ψ]``: exact where the space has
    closed forms (multiclass, multilabel, ordinal, hierarchy and DAG paths, subtrees, k-subsets,
    tournaments), a dynamic programme (the sum-product versions of the exact decoders: permutations
    up to 16 labels, directed and undirected cycles up to 14 vertices) or a sum over at most 2¹⁶
    structures (2²⁰ with ``sampler="exact"``), which L-BFGS minimises to high precision; otherwise a
    Monte Carlo estimate from samples (exact samples by coupling from the past, or Markov chains),
    which Adam with iterate averaging minimises (Vembu's thesis, chapter 6).

    On ``space="multiclass"`` this is multinomial logistic regression and on ``"multilabel"`` one
    binary logistic regression per label: scikit-learn's ``LogisticRegression(C=C)`` with
    ``C = 1 / (2 · alpha · n_samples)`` minimises the same objective (with sample weights, the mean
    is weighted, ``(1/Σw) Σ w_i [...]``, and ``C = 1 / (2 · alpha · Σw)``). On two classes the
    model keeps one weight vector per class, w₀ = −w₁ at the optimum, so the log-odds' weights
    w₁ − w₀ pay half the penalty of LogisticRegression's single binary vector:
    ``C = 1 / (alpha · n_samples)`` there.

    Parameters
    ----------
    space : str or combpred.spaces.Space, default="multilabel"
        The output space, as for :class:`combpred.StructuredRidge`: ``"multiclass"`` (y: any labels,
        1-D), ``"multilabel"`` (Y: 0/1 indicator matrix), ``"permutations"`` (Y: rank rows, 1 =
        best), ``"dicycles"``, ``"ucycles"``, ``"cliques"``, ``"tournaments"``, or a space object.
    alpha : float or None, default=None
        Regularisation strength λ > 0 (not subnormal), the weight of ‖W‖² against the *mean* negative
        log-likelihood. None is ``1 / (2 · n_samples)`` (``1 / (2 · Σw)`` with sample weights;
        twice that on two classes): scikit-learn's default ``C = 1``, so that multiclass and
        multi-label models reproduce ``LogisticRegression()``'s probabilities. Chosen from held-out log-likelihoods on the
        shared data (BENCHMARKS.md, "prob_default_alpha"): on small sets (label ranking, their
        top label) it is at or near the best value tried, where the former default 1.0 was the
        worst on every set; data with many features and labels (yeast, scene) prefer stronger
        regularisation (alpha ≈ 0.1). Tune it by cross-validation; ``alpha = 1 / (2 · C · m)``
        converts from ``C`` (``1 / (C · m)`` on two classes).
    fit_intercept : bool, default=True
        Learn an unpenalised per-coordinate offset b of the scores. X is then fitted on its rows
        minus their (sample-weighted) mean, so that a constant added to a feature changes
        nothing: a dense X in a copy, or, where the memory budget refuses the copy, and for a
        sparse X (without densifying it), through products that take the mean out.
    sampler : {"auto", "exact", "cftp", "metropolis", "local", "mixed"}, default="auto"
        How E[ψ] is computed during fit (and the default sampler of :meth:`sample`):
        ``"exact"`` demands exact inference: a closed form or dynamic programme, else a sum over
        every structure of spaces of up to 2²⁰ (``"auto"`` sums only up to 2¹⁶: each gradient then
        sums |Y| structures per input, minutes per fit near 2²⁰); an error on larger spaces without
        one. ``"cftp"`` averages
        exact samples drawn by coupling from the past on the Metropolis chain (cost grows as
        exp(f_max − f_min)); ``"metropolis"`` runs the Metropolis chain with uniform proposals;
        ``"local"`` the space's local-move chain (bit flips for multilabel and subtrees, adjacent
        transpositions for permutations, vertex moves and 2-opt for cycles); ``"mixed"`` alternates
        local moves and uniform proposals. ``"auto"`` is exact where the space allows, and otherwise
        draws per input exact CFTP samples where their proven cost is small and samples of the mixed
        chain (or Metropolis, on spaces without local moves) elsewhere. Samples that ``"auto"``
        draws (:meth:`sample`, sampled marginals) are exact and independent, however peaked p(y | x),
        on the spaces whose exact inference is a product, a sum over a list or a tree, k-subset
        or subset recursion: they are drawn by that recursion (multiclass, ordinal, multilabel,
        k-subsets, partial tournaments, hierarchy and DAG paths, subtrees, permutations up to 16
        labels and cycles up to 14 vertices), up to scores of ‖u‖₁ = 2³⁶ where a structure's
        score is a sum (all but multiclass, multilabel and partial
        tournaments; beyond it the sum loses its precision and the rule above applies).
    n_samples : int, default=100
        Samples per input and gradient evaluation when inference is sampled. Markov chains persist
        from one gradient to the next: each input's chains resume where the last gradient left
        them, with one thinning interval of burn-in instead of a hundred (on label ranking, an
        iteration 5–7× faster at the same sample size; BENCHMARKS.md, "Sampled fits"). The fit
        reports the relative gradient it reached with its Monte Carlo standard error
        (``relative_gradient_se_``). On permutations and directed cycles each sample contributes,
        for every pair of labels, the mean of ψ over the sample and the structure that exchanging
        the two labels gives, weighted by their probabilities (Rao–Blackwellisation): the same
        expectation with 2–3× less variance than ψ itself.
    max_iter : int, default=200
        Maximum iterations of L-BFGS (exact inference) or Adam (sampled). On ``"multilabel"``,
        where J is a sum of one binary logistic regression per label, each label runs its own
        L-BFGS (labels in parallel), and the limit applies to each.
    tol : float, default=1e-6
        L-BFGS stops when ‖∇J‖ ≤ tol · ‖∇J(0)‖ (per label on ``"multilabel"``: ‖∇J_a‖ ≤ tol ·
        ‖∇J_a(0)‖ for every label a, which implies it); Adam when its averaged iterate moves by at
        most tol · ‖W̄‖ over 10 iterations. Both measure in coordinates where each feature's
        coefficients are multiplied by the power of two nearest √(v_j + 2·alpha), v_j the
        feature's weighted mean square about its weighted mean: fitting ``X * c`` with ``alpha * c**2`` gives the model fitted on ``X``
        with ``alpha``, and a feature on a scale far from the others' is fitted as well as they
        are (the distributed fit of :mod:`combpred.dask` measures in the same coordinates).
    learning_rate : float, default=None
        Adam's base step η (step t is η/√t); None means the core's default, 0.2.
    random_state : int, RandomState instance or None, default=None
        Seeds sampled inference during fit, and the sampling methods when they are not given one.
        A fitted model's sampled marginals (:meth:`predict_marginals`, and :meth:`predict` under a
        ``decision`` rule) take it as it is when it is an integer, else the seed the fit drew:
        they are the same at every call.
    n_jobs : int, default=None
        Threads used by the core. None: ``OMP_NUM_THREADS`` as it was when the core was loaded,
        when it holds a positive integer, else all cores (joblib's process workers, and Dask's,
        set it to their share of the cores); -1: all cores; a negative n counts back from them as
        in joblib (-2: all but one, never fewer than one); 0 is refused. Fitting and every
        prediction method set it, process-wide: it applies to every combpred call until another
        sets it. Counts above 4 threads per CPU are clamped to that.
        Between the parallel steps of a call, and for a few milliseconds after it, the core's
        helper threads poll for work instead of sleeping (an idle CPU wakes slowly, on virtual
        machines above all), and a step that a sleeping helper has not started is run by the
        calling thread.
    verbose : int, default=0
        When > 0, print first how E[ψ] is computed (exact inference, or the sampler, its samples
        per input and gradient and, for a Markov chain, the burn-in, thinning and Markov steps of
        a gradient), then the objective (NaN when inference is sampled) and relative gradient
        norm after every iteration. A multi-label fit with exact inference runs one L-BFGS per
        label, a few labels at a time: a line comes after each iteration of the label furthest
        on and sums every label's latest objective and gradient, labels not yet started counted
        at their start, so the relative gradient falls in steps as labels finish; the last line,
        under the most iterations any label took, is the fitted model's.
    decision : {"mode", "hamming", "kendall", "spearman", "hierarchical", "f1"}, default="mode"
        What :meth:`predict` returns: the most probable structure (``"mode"``), or the structure
        with the least expected loss for the named loss, computed from :meth:`predict_marginals`
        by :func:`combpred.decision.bayes_decode` (Hamming on 0/1 ψ, Kendall's distance or
        Spearman's squared rank differences on rankings, the hierarchical loss on subtrees,
        example-based F1 on label sets, exact for this model's independent labels).
        Choose it by the metric you are scored on, or by ``GridSearchCV``.
    node_weights : array-like of shape (n_nodes,), default=None
        The node costs c of ``decision="hierarchical"`` (None: 1 per node), as
        :func:`combpred.metrics.hierarchical_loss` and
        :func:`combpred.metrics.make_hierarchical_loss_scorer` take them: give the costs you are
        scored with (e.g. :func:`combpred.metrics.hierarchical_node_weights`). Ignored by the other
        rules.
    warm_start : bool, default=False
        Start ``fit`` from the previous solution when it is a model of the same space, features
        and intercept (e.g. along a path of alpha values); otherwise from zero. The stopping rule
        stays relative to the gradient at zero, so a warm start stops where a cold one would.

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
        Wᵀ, one row per coordinate of ψ as in scikit-learn's linear models: scores are
        ``X @ coef_.T + intercept_``. Read-only, as ``intercept_``: the model predicts from its own
        copy, so setting them is refused.
    intercept_ : ndarray of shape (d,)
        b (zeros when ``fit_intercept=False``).
    n_features_in_ : int
        Number of features seen during fit.
    sparse_output_ : bool
        Whether ``predict`` returns a scipy.sparse CSR matrix: ``fit`` was given a sparse Y.
    n_iter_ : int
        Iterations run.
    solver_ : str
        ``"lbfgs"`` (exact inference) or ``"adam"`` (sampled).
    objective_ : float
        J at the solution; NaN when inference was sampled (J needs log Z).
    relative_gradient_ : float
        ‖∇J‖ / ‖∇J(0)‖ at the solution (a sampled estimate when inference was sampled), in the
        coordinates the solver works in: with an intercept, X centred at its (sample-weighted)
        mean, so that a constant added to a feature changes neither the model nor the fit's path,
        and each feature's coefficients scaled as ``tol`` describes.
    relative_gradient_se_ : float
        The Monte Carlo standard error of ``relative_gradient_``: 0 when inference was exact. A
        sampled fit whose ``relative_gradient_`` is within about two of it stopped where these
        samples cannot tell its gradient from zero; a larger ``n_samples`` lowers the error, but
        how close the fit gets is usually limited by Adam's steps, not the noise (on nearly
        separable rankings, 4× the samples left J and the marginals where they were, and 5× the
        iterations brought J 30 times closer): raise ``max_iter`` for a closer fit.

    Examples
    --------
    >>> import numpy as np
    >>> from combpred import ProbabilisticStructured
    >>> X = np.linspace(-2, 2, 40).reshape(-1, 1)
    >>> y = np.where(X[:, 0] > 0, "up", "down")
    >>> model = ProbabilisticStructured(space="multiclass", alpha=0.01).fit(X, y)
    >>> model.predict([[-1.0], [1.0]])
    array(['down', 'up'], dtype='<U4')
    >>> bool(np.allclose(model.predict_proba(X).sum(axis=1), 1))
    True
    """

    _model_class = _core.ProbModel

    _parameter_constraints: dict = {
        **StructuredEstimator._parameter_constraints,
        **_schema.constraints("prob"),
        "warm_start": ["boolean"],  # Python-only: which model the core starts from
    }

    def __init__(
        self,
        space: str | _spaces.Space = "multilabel",
        alpha: float | None = _D["alpha"],
        fit_intercept: bool = _D["fit_intercept"],
        sampler: str = _D["sampler"],
        n_samples: int = _D["n_samples"],
        max_iter: int = _D["max_iter"],
        tol: float = _D["tol"],
        learning_rate: float | None = _D["learning_rate"],
        random_state: Any = _D["random_state"],
        n_jobs: int | None = None,
        verbose: int = 0,
        decision: str = _decision.MODE,
        node_weights: Any = None,
        warm_start: bool = False,
    ):
        self.space = space
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.sampler = sampler
        self.n_samples = n_samples
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.decision = decision
        self.node_weights = node_weights
        self.warm_start = warm_start

    # -- fitting ------------------------------------------------------------------------------
    def _params_string(self, seed: int | None = None) -> bytes:
        """The core's parameter string; ``seed`` in place of one drawn from ``random_state``."""
        return _params(
            alpha=None if self.alpha is None else float(self.alpha),
            fit_intercept=int(bool(self.fit_intercept)),
            sampler=self.sampler,
            n_samples=int(self.n_samples),
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            learning_rate=None if self.learning_rate is None else float(self.learning_rate),
            random_state=_spaces.core_seed(self.random_state) if seed is None else seed,
        )

    @one_fit_at_a_time
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> ProbabilisticStructured:
        """Fit W by MAP.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs. The core computes in float64: a C-contiguous float64 array is read in place,
            any other (float32, integers, a strided view) is first copied to float64, 8 bytes per
            value. A ``scipy.sparse`` X is used without densifying (a float64 CSR matrix in
            canonical form without a copy, other formats converted to CSR); the fitted model
            predicts (``predict``, ``decision_function``, ``predict_marginals``, ``predict_proba``,
            ``score``) dense and sparse X alike, while ``score_samples``, ``log_partition`` and
            ``sample`` take dense X.
        y : array-like
            Structures in the space's encoding: 1-D labels for multiclass, (n_samples, width)
            integer rows otherwise.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples' log-likelihood terms; the data term is their
            weighted mean, so an integer weight k equals k copies of the example. At a given
            alpha their scale does not matter; the default alpha, ``1 / (2 · Σw)``, follows it
            (multiplying every weight by c fits as alpha / c, as ``LogisticRegression(C=1)`` does).

        Returns
        -------
        self : ProbabilisticStructured

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            When L-BFGS or Adam stopped at ``max_iter`` short of ``tol``, or L-BFGS before it because
            its line search found no decrease (rounding on a badly scaled problem); the message names
            the measure reached, and without an intercept suggests centring X. Also when a coordinate of ψ takes the same extreme value in every training row
            (a label always on, a class never seen, a pair always in one order), or a class, level
            or node path never occurs in them, with ``fit_intercept``: its intercept, which is not
            penalised, has no finite optimum, and ``intercept_`` there is where ``tol`` stopped
            the fit.
        """
        previous = getattr(self, "_model", None) if self.warm_start else None  # _fit_data forgets it
        X, space, rows, classes, sw = self._fit_data(X, y, sample_weight)
        self._check_decision(space)
        seed = _spaces.core_seed(self.random_state)  # one draw: the fit's and its queries'
        params = self._params_string(seed)
        call = _core.ProbModel.fit_call(space._handle(), X, rows, sw, params, previous)
        if self.verbose:
            print(
                f"[{type(self).__name__}] {_core.ProbModel.fit_plan(space._handle(), X.shape[0], params)}",
                file=sys.stderr,
            )
        self._fit_model(call, **fitted_labels(space, classes, isinstance(self.space, str)), _query_seed=seed)
        return self

    def __setstate__(self, state: dict[str, Any]) -> None:
        # pickles from before warm_start existed fit as they did: from zero
        super().__setstate__({"warm_start": False, **state})

    def _model_attributes(self, model: _core.ProbModel, fitted: dict[str, Any]) -> dict[str, Any]:
        info = model.info
        attrs = super()._model_attributes(model, fitted)
        attrs.update(n_iter_=info.n_iter, solver_=info.solver, relative_gradient_se_=info.relative_gradient_se)
        attrs["coef_"], attrs["intercept_"] = model.coef()
        return attrs

    def _set_model(self, model: _core.ProbModel, **fitted: Any) -> None:
        super()._set_model(model, **fitted)
        for message in model.info.warnings:  # intercepts without a finite optimum (the core's message)
            warnings.warn(f"{type(self).__name__}: {message}", ConvergenceWarning, stacklevel=5)  # fit's caller
        n_iter = model.info.n_iter
        if self.solver_ == "lbfgs" and not model.info.converged:
            # short of max_iter, L-BFGS stops only when its line search finds no decrease
            # intercepts without a finite optimum (a class never seen) at an alpha small against X's
            # scale: the line search gives up, or no iteration moves (relative gradient 1 after
            # max_iter); neither a lower alpha nor more iterations help (probes FC, FD)
            unbounded = (
                "the intercepts the other warning names have no finite optimum, and alpha, small against the "
                "scale of X (alpha / ‖X‖²), leaves them unbounded; raise alpha, or standardise X"
            )
            if n_iter >= self.max_iter:
                advice = (
                    unbounded
                    if model.info.warnings and self.relative_gradient_ > 0.5
                    else "increase max_iter"
                    + (
                        ""
                        if self.fit_intercept
                        else ", or centre the columns of X (StandardScaler): without an intercept, columns far "
                        "from 0 make the problem badly conditioned and L-BFGS slow"
                    )
                )
            else:
                advice = "its line search found no decrease, which more iterations do not change: " + (
                    unbounded
                    if model.info.warnings
                    else "the problem is too badly scaled for double precision (a very large alpha, values in X very "
                    "large or so small that their products underflow, or X far from 0 without an intercept); lower "
                    "alpha, or centre and rescale X (StandardScaler)"
                )
            warnings.warn(
                f"L-BFGS stopped after {n_iter} iterations at a relative gradient of {self.relative_gradient_:.2e} "
                f"(tol={self.tol}); {advice}",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif self.solver_ == "adam" and n_iter > 0 and (not model.info.converged or self._adam_far_off()):
            # a gradient larger than at W = 0 beyond its noise: the steps overshot the minimum (a
            # learning_rate of 1e12 left coefficients of 1e6 and "increase max_iter" as advice)
            overshot = self.relative_gradient_ - 2 * self.relative_gradient_se_ > 1
            if overshot:
                advice = "the gradient is larger than at W = 0: Adam's steps overshoot; lower learning_rate"
            elif self._adam_far_off():
                # probe FK: learning_rate 1e-3 settled at 0.93 of the gradient at zero, silently,
                # and its advice blamed the chains
                advice = (
                    "the gradient is still more than half its value at W = 0, beyond its noise: Adam's steps moved "
                    "the coefficients too little (raise learning_rate) or so far that they swing about the minimum "
                    "(lower it); more iterations help only slowly"
                )
            elif self.relative_gradient_ <= 2 * self.relative_gradient_se_:
                # probe FK: every sampled fit at the default tol said "increase max_iter", still at 5,000
                advice = (
                    "the gradient is within two Monte Carlo standard errors of zero, as close as these samples tell; "
                    "the averaged coefficients settle to tol slowly (their moves shrink about as t^-1.5): raise tol "
                    f"above {self.tol:g} (sampled fits settled at 1e-2 in a few hundred iterations, at 1e-3 in "
                    "thousands), or increase max_iter"
                )
            elif model.info.exact or self.sampler == "cftp":  # exact marginals or exact samples: no chain to blame
                advice = "increase max_iter"
            else:
                advice = (
                    "increase max_iter (the gradients of Markov-chain samples are biased until the chains mix: "
                    'sampler="cftp" draws exact samples where they are affordable)'
                )
            stopped = (
                f"Adam's averaged coefficients settled after {n_iter} iterations (tol={self.tol}), but its relative "
                "gradient is"
                if model.info.converged
                else f"Adam stopped after {n_iter} iterations before its averaged coefficients settled (tol={self.tol}); "
                "relative gradient"
            )
            warnings.warn(
                f"{stopped} {self.relative_gradient_:.2e} ± {self.relative_gradient_se_:.1e} (Monte Carlo "
                f"standard error, {model.info.final_samples} samples per input); {advice}",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _adam_far_off(self) -> bool:
        """Whether Adam's reported gradient is, beyond twice its standard error, more than half the
        gradient at W = 0: its averaged coefficients can settle there (small or swinging steps)."""
        return self.relative_gradient_ - 2 * self.relative_gradient_se_ > 0.5

    # -- prediction ---------------------------------------------------------------------------
    def decision_function(self, X: Any) -> np.ndarray:
        """Return the scores u(x) = Wᵀx + b in ψ-coordinates, shape (n_samples, d).

        log p(y | x) = ⟨u(x), ψ(y)⟩ − log Z(x). For a two-class ``space="multiclass"`` model the
        result is the margin u₁ − u₀ of shape (n_samples,), as scikit-learn expects.

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

        ``decision="mode"``: the mode argmax_y p(y | x); otherwise the structure of least expected
        loss, from the marginals. Both are decoded by the space's decoder (exact, or within its
        ``decoder_guarantee``). After a fit with a sampler, a rule's marginals are sampled (see
        :meth:`predict_marginals`; exact on multiclass and multilabel models, as
        :meth:`predict_proba`'s), from a seed the fit drew where ``random_state`` is None or a
        RandomState: a fitted model predicts the same at every call. Multiclass models return class labels (``classes_``); multilabel
        models a 0/1 matrix, or a scipy.sparse CSR matrix when ``fit`` was given a sparse Y
        (``sparse_output_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, width), or sparse matrix
            Class labels, 0/1 label rows, or structures in the space's encoding.
        """
        return self._decide(X)

    def _seed_or_own(self, random_state: Any, fitted: _Fitted | None = None) -> int:
        """A seed from random_state, or from the estimator's random_state when it is None. The
        queries of a fitted model (``fitted``: its marginals, and the predictions read from them)
        take the seed its fit drew where the estimator's random_state is None or a RandomState:
        a fresh draw at every call gave other predictions, scores and marginals each time, and a
        row other ones alone than in a batch (probe 84)."""
        if random_state is None:
            random_state = self.random_state
            if fitted is not None and fitted.query_seed is not None and not isinstance(random_state, numbers.Integral):
                random_state = _spaces._DrawnSeed(fitted.query_seed)
        return _spaces.core_seed(random_state)

    def _decision_marginals(self, fitted: _Fitted, X: Any) -> np.ndarray:
        """The marginals the rules of ``decision`` read: ``predict_marginals``' defaults, but the
        exact ones of the classifier spaces, which ``predict_proba`` reads (after a fit with a
        sampler, the sampled ones made predict contradict predict_proba on 5.5 % of a multilabel
        model's entries, probe 84)."""
        classifier = type(fitted.space) in (_spaces.Multiclass, _spaces.Multilabel)
        return self._marginals(fitted, X, method="exact" if classifier else None)

    def predict_marginals(
        self,
        X: Any,
        n_samples: int | None = None,
        sampler: str | None = None,
        random_state: Any = None,
        method: str | None = None,
        check_mixing: bool = False,
    ) -> np.ndarray:
        """Return ``E_{p(·|x)}[ψ]`` of each input, shape (n_samples, d).

        For 0/1 feature maps (multilabel, subtrees, k-subsets, cliques, undirected cycles) entry j
        is the probability that coordinate j is on; for permutations, E[ψ_uv] = 2 P(u before v) − 1.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        n_samples : int, default=None
            Samples per input of sampled marginals (Rao–Blackwellised on permutations and
            directed cycles, see ``n_samples`` in the class documentation); None: the fit's
            ``n_samples``, with which :meth:`predict` reads the model too (a value set by
            ``set_params`` after the fit counts from the next fit on). Unused by exact inference.
        sampler : str, default=None
            What draws the samples of sampled marginals: the names of the estimator's ``sampler``
            but ``"exact"``; None: the fit's sampler.
        random_state : int, RandomState instance or None, default=None
            Seeds sampled marginals. None: the estimator's random_state as it is now where that
            is an integer, else the seed the fit drew from it (part of the fitted model, so that
            the marginals and the predictions read from them are the same at every call). Each row draws its
            samples from this seed and its own values: a row's estimate is the same alone, in any
            batch and at any place in it (and the blocks of a Dask X give what one call on all of
            X gives). Exact marginals do not depend on it.
        method : {"auto", "exact", "sampled"}, default=None
            ``"exact"``: closed forms, dynamic programmes or enumeration of small spaces (an error
            on spaces without them). ``"sampled"``: the mean of ψ over ``n_samples`` samples,
            also on spaces with exact inference. ``"auto"``: exact where the space allows, else
            sampled. None: as the fit computed them (sampled after a fit with a sampler, on any
            space).
        check_mixing : bool, default=False
            With a Markov-chain sampler, run one more chain per input from a perturb-and-MAP
            start (the decoded mode of the scores plus Gumbel noise), for a quarter of
            ``n_samples`` after the burn-in, and warn where its mean of ψ differs from the estimate
            by more than max(0.15, 4 standard errors) in a coordinate: those chains did not mix.
            Its samples are not averaged into the estimate; it needs ``n_samples`` ≥ 80 (two
            states per run of its batch means) and does nothing on exact marginals and exact
            samples (``"cftp"``). A silent check is no proof of mixing: on the audit of
            BENCHMARKS.md ("Sampled marginals: the dispersed-start check") it caught 31 % of the wrong estimates at 100
            samples and 43 % at 2,000, flagged 2–4 % of right ones, and cost a third to two thirds
            more Markov steps; on peaked scores, whose perturbed start decodes to the mode itself,
            it catches fewer (16 % of the rows off by more than 0.2 on a Permutations(6) model at
            400 samples).

        Returns
        -------
        marginals : ndarray of shape (n_samples, d)

        Warns
        -----
        MixingWarning
            When a Metropolis chain (``sampler="metropolis"``, or ``"auto"`` where it finds
            neither an exact sampler nor local moves: on cliques, and at scores beyond
            ‖u‖₁ = 2³⁶ on ordinal levels, k-subsets, hierarchy and DAG paths) never left the
            decoded mode in too few proposals to vouch for it (see
            :class:`combpred.exceptions.MixingWarning`); the warning names the rows. With
            ``check_mixing``, also when the check's chain disagreed with the estimate.

        Notes
        -----
        Exact marginals on every space but multiclass, multilabel and partial tournaments come
        from sums of scores (a level's, a path's, a subtree's) or sums in the log domain whose
        rounding grows with the scores: an input whose scores are too large for that (far
        outside the scale of the training data) is refused with a ValueError naming its row and
        the limit. ``method="sampled"`` estimates them there, with the default sampler or a
        Markov chain (``"metropolis"``, ``"local"`` or ``"mixed"``); exact samples (``"cftp"``)
        hit their work bound at such scores. Beyond ‖u(x)‖₁ = 1.8·10³⁰⁸ / (16 (d + 1)²), where
        sums of scores could overflow float64, every method is refused (as are
        :meth:`log_partition` and :meth:`sample`); :meth:`predict` still gives the mode.
        """
        options = {"n_samples": n_samples, "sampler": sampler, "method": method, "check_mixing": check_mixing}
        return self._marginals(self._fitted(), X, random_state=random_state, **options)

    def _marginals(self, fitted: _Fitted, X: Any, random_state: Any = None, **options: Any) -> np.ndarray:
        """predict_marginals from the snapshot ``fitted`` (predict's decision rules decode them in
        its space); ``options`` are its other arguments, their defaults where not given."""
        X = self._inputs(X)
        _capi.check_output((X.shape[0], fitted.dim), "the marginals, a row for each row of X")
        params = _params(
            method=_name(options.get("method"), "method"),
            n_samples=_integer(options.get("n_samples"), "n_samples"),
            sampler=_name(options.get("sampler"), "sampler"),
            random_state=self._seed_or_own(random_state, fitted),
            check_mixing=int(_spaces._flag(options.get("check_mixing", False), "check_mixing")),
        )
        marginals, report = fitted.model.marginals(X, params)
        _warn_not_mixed("predict_marginals", report[:, 1], "the estimate", "estimates")
        _warn_unvouched(
            "predict_marginals",
            "estimates rest on the mode alone (with its pair exchanges, on permutations and directed cycles)",
            report[:, 0],  # Metropolis chains that never moved
            fitted.space,
        )
        return marginals

    @available_if(lambda self: self._is_classifier())
    def predict_proba(self, X: Any) -> np.ndarray:
        """Return class probabilities (multiclass) or label marginals (multilabel).

        Multiclass: shape (n_samples, n_classes), columns in the order of ``classes_``, rows sum
        to 1. Multilabel: shape (n_samples, n_labels), P(label j is on | x) — scikit-learn's
        ``MLPClassifier`` convention (not MultiOutputClassifier's list of (n_samples, 2) arrays);
        the labels are independent given x, so the probability of a label set is the product.
        With two labels this array looks like a binary classifier's [P(class 0), P(class 1)] to
        scikit-learn's tools that read ``classes_`` of length 2 so: ``partial_dependence`` and
        ``StackingClassifier`` keep only the second column, label 1's, and drop label 0's.

        Both spaces have exact inference, which these probabilities always use, whatever the
        ``sampler`` of the fit: ``predict`` (the mode) is then the class of the largest
        probability, and the labels of probability above ½, as scikit-learn's classifiers
        promise. (They were the fit's sampled estimates after a fit with a sampler, which
        disagreed with ``predict`` on 5 % of the rows.) ``predict_marginals`` gives sampled ones.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
        """
        return self.predict_marginals(X, method="exact")

    @available_if(lambda self: self._is_classifier())
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Return the logarithms of :meth:`predict_proba` (as scikit-learn's classifiers do: a
        probability that underflows to 0 gives -inf), same shape and column order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_P : ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _target_rows(self, fitted: Any, Y: Any) -> np.ndarray:
        """Encode structures given in the space's encoding (class labels for multiclass) as rows."""
        if fitted.labels is not None:
            return class_rows(class_label_vector(Y, "Y"), fitted.labels, "Y")
        return fitted.space._to_rows(Y, "Y")

    def score_samples(self, X: Any, Y: Any = None, method: str = "auto", **log_partition_params: Any) -> np.ndarray:
        """Return log p(y_i | x_i) for each pair of rows (X[i], Y[i]), shape (n_samples,).

        Y holds structures in the space's encoding (class labels for multiclass); None scores the
        predicted structures, log p(predict(X) | X), the confidence of each prediction. log Z comes
        from :meth:`log_partition` with ``method`` (exact where the space allows under
        ``"auto"``) and its other parameters (``epsilon``, ``delta``, ``n_samples``, ``sampler``,
        ``random_state``, ``schedule``, ``max_samples``).

        log p(y | x) = ⟨u, ψ(y)⟩ − log Z(u) is a difference of numbers as large as the scores: an
        input whose scores are too large for float64 precision is refused with a ValueError naming
        its row and the limit. Rows whose log Z has no guarantee (``valid`` False in
        :meth:`log_partition`: a Taylor estimate beyond its range, an FPRAS on a Markov chain's
        samples or by the thesis schedule with ``n_samples`` below its printed sample size) get a
        UserWarning: their log p may be off by any amount, above 0 too.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense inputs: a sparse X is refused, as by :meth:`sample` and :meth:`log_partition`.
        Y : array-like, default=None
            Structures in the space's encoding (class labels for multiclass), one per row of X;
            None scores the predicted structures.
        method : str, default="auto"
            How log Z is computed (see :meth:`log_partition`).
        **log_partition_params
            The other parameters of :meth:`log_partition`.

        Returns
        -------
        log_p : ndarray of shape (n_samples,)
        """
        known = [name for name in inspect.signature(self._log_z_params).parameters if name != "method"]
        unknown = sorted(set(log_partition_params) - set(known))
        if unknown:  # else the TypeError named the private _log_z_params
            raise TypeError(f"score_samples() got unexpected keyword arguments {unknown}; it takes {known}")
        fitted = self._fitted()
        X = self._inputs(X)
        if Y is None:  # predicted from the same snapshot; X was checked (and its names warned of) above
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="X does not have valid feature names")
                Y = self._decide(X, fitted)
        rows = self._target_rows(fitted, Y)
        if rows.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but Y has {rows.shape[0]}")
        params = self._log_z_params(method, **log_partition_params)
        log_p, valid = fitted.model.score_samples(X, rows, params)
        if not valid.all():
            bad = np.flatnonzero(~valid)
            warnings.warn(
                f"log Z of {bad.size} of {valid.size} rows (first: row {bad[0]}) has no guarantee (method={method!r}: a "
                "Taylor estimate beyond |⟨u, ψ(y)⟩| ≤ 1, an FPRAS on a Markov chain's samples, or the thesis schedule "
                "with n_samples below its printed sample size), so their log p(y | x) "
                "may be off by any amount, above 0 too; log_partition reports each row's method, validity and bound",
                UserWarning,
                stacklevel=2,
            )
        return log_p

    def _log_z_params(
        self,
        method: str = "auto",
        epsilon: float = _schema.query_default("epsilon"),
        delta: float = _schema.query_default("delta"),
        n_samples: int | None = None,
        sampler: str | None = None,
        random_state: Any = None,
        schedule: str | None = None,
        max_samples: int = _MAX_SAMPLES,
    ) -> bytes:
        return _params(
            method=_name(method, "method", allow_none=False),
            epsilon=_real(epsilon, "epsilon"),
            delta=_real(delta, "delta"),
            schedule=_name(schedule, "schedule"),
            n_samples=_integer(n_samples, "n_samples"),
            max_samples=_integer(max_samples, "max_samples"),
            sampler=_name(sampler, "sampler"),
            random_state=self._seed_or_own(random_state),
        )

    def log_partition(
        self,
        X: Any,
        method: str = "auto",
        epsilon: float = _schema.query_default("epsilon"),
        delta: float = _schema.query_default("delta"),
        n_samples: int | None = None,
        sampler: str | None = None,
        random_state: Any = None,
        schedule: str | None = None,
        max_samples: int = _MAX_SAMPLES,
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Return log Z(x) = log Σ_y exp⟨u(x), ψ(y)⟩ of each input, and how each was obtained.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        method : {"auto", "exact", "fpras", "taylor"}, default="auto"
            ``"exact"``: closed forms, the sum-product dynamic programmes (permutations up to 16
            labels, directed and undirected cycles up to 14 vertices; log Z alone, without the
            marginals, of permutations up to 19 labels and cycles up to 16 vertices, in up to 0.1 s
            per row), or enumeration up to 2²⁰ structures (an error beyond).
            ``"fpras"``: a randomised approximation scheme, Z within a factor (1 ± epsilon) with
            probability ≥ 1 − delta, from exact (CFTP) samples along a cooling schedule (see
            ``schedule``). ``"taylor"``: the second-order approximation from the counting formulae
            (§6.4), with a proven error bound that is small only while every ``|⟨u, ψ(y)⟩| ≤ 1`` (rows
            beyond have ``valid`` False). ``"auto"``: exact where the space allows (enumeration
            too, up to 2²⁰ structures), else fpras.
        epsilon, delta : float in (0, 1), default=0.1 and 0.25
            The FPRAS' relative error and failure probability (the thesis schedule takes the median
            of ⌈8 ln(1/δ)⌉ runs for δ < ¼; the adaptive one meets any δ directly).
        n_samples : int, default=None
            Samples per cooling stage of the thesis schedule; None uses the thesis'
            S = ⌈65 ε⁻² l e^{2/3}⌉, which is very conservative. Giving it selects the thesis
            schedule unless ``schedule`` says otherwise (``"adaptive"`` with n_samples is an error).
        sampler : {"auto", "cftp", "metropolis", "local", "mixed"}, default=None
            How the FPRAS samples each stage. None means exact samples by CFTP, which the
            guarantee assumes (their cost grows as exp(f_max − f_min): large scores hit a work bound,
            an error). A chain voids the guarantee unless it has mixed (see the ``sampler``
            parameter of the estimator), and is seldom cheaper: every sample runs its burn-in,
            counted against ``max_samples``. Measured: on DirectedCycles(8), 40 estimates (two
            rows, 20 seeds) took 0.6 s by CFTP and 128 s by the Metropolis chain, equally
            accurate; on Permutations(8) at ‖u‖₁ ≈ 12 the chain's plan exceeded the default work
            bound where CFTP took about 1 s. A chain pays only where exp(f_max − f_min) outgrows
            its burn-in.
        random_state : int, RandomState instance or None, default=None
            Seeds the FPRAS (None: the estimator's random_state).
        schedule : {"auto", "adaptive", "thesis"}, default=None
            The FPRAS' cooling schedule. ``"adaptive"``: Huber's tootsie-pop algorithm, a random
            schedule that follows the scores; its expected samples, about
            2L(L + 1) ln(4/δ)/ln(1 + ε)² with L = ln|Y| + max score − log Z (≈ ln|Y| at most on
            spaces that decode exactly), do not grow with the size of the scores. ``"thesis"``: the
            thesis' fixed schedule of 3⌈R‖u‖⌉ stages (R = max ‖ψ‖), whose printed sample size grows
            like (R‖u‖)² and hits the work bound on fitted models. None and ``"auto"``: adaptive
            unless ``n_samples`` is given.
        max_samples : int, default=50_000_000
            The work bound: the most structures the FPRAS may draw for one row, checked against
            its plan before it samples and counted as it samples. The adaptive schedule counts
            every proposal of an exact sample and every step of a chain (a sample accepted at
            once costs one), so the bound caps its time at any scale of the scores; the thesis
            schedule counts its samples, each bounded in proposals by the sampler's step limit.
            A plan or a count beyond it is a ValueError that gives the number; raise it for a
            smaller epsilon or delta, or lower it to cap the time (the call stays cancellable
            with Ctrl-C).

        Returns
        -------
        log_z : ndarray of shape (n_samples,)
        info : dict of ndarrays of shape (n_samples,)
            ``method`` (the method used: "exact", "fpras" or "taylor"), ``valid`` (whether its
            guarantee applies: an FPRAS on Markov-chain samples has none, as its guarantee assumes
            exact samples, nor has the thesis schedule with ``n_samples`` below its printed sample
            size), ``epsilon`` and ``delta`` (those the FPRAS ran with, whose guarantee holds
            where ``valid`` is True; 0 for the other methods),
            ``bound`` (Taylor: a proven bound on ``|log Z − estimate|``), ``stages`` and
            ``samples_per_stage`` (thesis schedule; 0 for the adaptive one), ``runs`` (thesis: runs
            of the median; adaptive: TPA runs), ``samples`` (total) and ``steps`` (Markov steps, or
            the proposals of exact samples).
        """
        fitted = self._fitted()
        X = self._inputs(X)
        params = self._log_z_params(method, epsilon, delta, n_samples, sampler, random_state, schedule, max_samples)
        out, stats, counts = fitted.model.log_partition(X, params)
        _capi.check_bytes(counts.shape[0] * _METHOD_NAMES.itemsize, "log_partition's info['method'] column")
        info = {
            "method": _METHOD_NAMES[counts[:, 0]],
            "valid": counts[:, 1].astype(bool),
            "epsilon": stats[:, 0],
            "delta": stats[:, 1],
            "bound": stats[:, 2],
            "stages": counts[:, 2],
            "samples_per_stage": counts[:, 3],
            "runs": counts[:, 4],
            "samples": counts[:, 5],
            "steps": counts[:, 6],
        }
        return out, info

    def sample(
        self,
        X: Any,
        n_samples: int = 1,
        sampler: str | None = None,
        random_state: Any = None,
        check_mixing: bool = False,
    ) -> np.ndarray:
        """Draw n_samples structures from p(· | x) for each input.

        Parameters
        ----------
        X : array-like of shape (n_inputs, n_features)
        n_samples : int, default=1
            Structures drawn per input.
        sampler : str, default=None
            What draws them (default: the fit's ``sampler``; the estimator's names but
            ``"exact"``): ``"auto"`` (and a fit with ``"exact"``) draws exact, independent
            samples by the space's own recursion where its exact inference has one (every space
            but permutations beyond 16 labels, cycles beyond 14 vertices and cliques; see
            ``sampler`` in the class documentation for the scale of scores it needs), and elsewhere exact CFTP samples where their proven
            cost is small and the mixed (or Metropolis) chain otherwise; ``"cftp"``
            always samples exactly and fails with a work-bound error on very peaked
            distributions; chain samples are approximate and, within one input, correlated (a
            chain starts at the decoded mode of p(· | x), burns in for 100·max(d, width) steps,
            then keeps one sample every max(d, width) steps).
        random_state : int, RandomState instance or None, default=None
            Seeds the samples (None: the estimator's random_state). The seed is the call's: a row's
            samples depend on the rows drawn with it (unlike :meth:`predict_marginals`, whose
            estimates are seeded per row); draw from one row at a time for samples of a row alone.
        check_mixing : bool, default=False
            With a Markov-chain sampler, run one more chain per input from a perturb-and-MAP
            start and warn where its mean of ψ differs from that of the samples beyond Monte Carlo
            noise, as :meth:`predict_marginals` does with ``check_mixing`` (the same rule and
            cost; its samples are not returned). Needs ``n_samples`` ≥ 80; does nothing for
            exact samples (``"cftp"``).

        Returns
        -------
        Y : ndarray of shape (n_inputs, n_samples, width), or (n_inputs, n_samples) for the
            spaces whose structure is one integer (Multiclass, Ordinal, HierarchyPaths, DAGPaths;
            class labels for ``space="multiclass"``, as ``predict`` returns them)
            Structures in the space's encoding.

        Warns
        -----
        MixingWarning
            When a Metropolis chain never left the mode in too few proposals to vouch for it
            (naming the rows, as in :meth:`predict_marginals`), and with ``check_mixing`` when the
            check's chain disagreed with the samples.
        """
        fitted = self._fitted()
        X = self._inputs(X)
        count = _integer(n_samples, "n_samples")
        if count is None:
            raise ValueError("n_samples must be an integer, got None")
        width, q = fitted.width, X.shape[0]
        # before the parameters, as the output is sized
        _capi.check_output((q, count, width), f"n_samples structures of width {width} for each of {q} inputs")
        params = _params(
            sampler=_name(sampler, "sampler"),
            random_state=self._seed_or_own(random_state),
            check_mixing=int(_spaces._flag(check_mixing, "check_mixing")),
        )
        out, report = fitted.model.sample(X, count, params)
        _warn_not_mixed("sample", report[:, 1], "the samples' mean", "samples")
        _warn_unvouched("sample", "samples are all the mode, whatever p(· | x) is", report[:, 0], fitted.space)
        structures = self._structures(fitted, out.reshape(q * count, width))
        return structures.reshape((q, count) + structures.shape[1:])
