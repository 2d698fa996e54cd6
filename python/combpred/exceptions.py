"""Warnings and errors of combpred, for ``warnings.filterwarnings``, ``pytest.warns`` and ``except``."""

from __future__ import annotations

__all__ = ["ForkedChildError", "MixingWarning", "PrecisionWarning"]


class ForkedChildError(RuntimeError):
    """combpred was used in a child process forked after the parent loaded the library.

    The Go runtime does not survive ``fork()``: a child forked after its parent used combpred gets
    this error on its first call, instead of a hang. Use the ``"spawn"`` or ``"forkserver"`` start
    method of multiprocessing, or joblib's default ``"loky"`` backend.
    """


class MixingWarning(UserWarning):
    """A Markov chain's samples cannot stand for the distribution they were drawn for.

    Issued (warnings.warn) by :meth:`combpred.ProbabilisticStructured.predict_marginals` and
    :meth:`~combpred.ProbabilisticStructured.sample` when a Metropolis chain
    (uniform proposals) never left its start, the decoded mode, and made too few proposals to show
    that the mode holds nearly all of the mass (60·|Y| proposals bound the rest below 5 %, at
    95 % confidence). Such a row's samples are all that one structure, and its estimated marginals
    rest on it alone (with its pair exchanges, on permutations and directed cycles, whose estimates
    average over them): on Permutations(16) they stayed 1.5 from the exact marginals at any sample
    size. The warning says the chain cannot vouch for the result, which may still be close where
    the mass is concentrated near the mode. ``predict_marginals(..., check_mixing=True)`` and
    ``sample(..., check_mixing=True)`` also issue it where a chain from a dispersed start found
    another mean of ψ than the estimate or the samples.
    """


class PrecisionWarning(UserWarning):
    """A fit's arithmetic carries rounding errors beyond its tolerance, which its model inherits.

    Issued (warnings.warn) by :meth:`combpred.StructuredRidge.fit` and ``partial_fit`` with
    ``kernel="rbf"`` when the kernel values lose digits on the training inputs: they are computed
    from ‖a‖² + ‖b‖² − 2⟨a, b⟩, as scikit-learn computes them, whose error grows as gamma times the
    largest squared norm of a row of X. Inputs far from the origin against their spread (a year, a
    timestamp, X + 1e7: the scores moved by 0.23) or a huge gamma (k(x, x) came out as 0) give a
    model that differs from the one its kernel defines. Centre X (``StandardScaler``: the rbf kernel
    is translation invariant) or lower gamma. The message states the estimated error. Where the
    rounding leaves the kernel matrix indefinite (X + 1e7 at gamma 0.1), the fit raises a
    ValueError naming this cause instead.

    Also issued by a kernel fit with ``solver="cg"`` (or ``"auto"``) whose data term can curve more
    than 2⁵² times as much as its penalty (the trace of the kernel matrix against ``alpha``: a
    polynomial kernel of high degree, or a tiny ``alpha``): conjugate gradients cannot resolve the
    scores the penalty decides, and stop with a small gradient away from the optimum.

    And by a linear fit solved exactly (``solver="exact"``, ``"auto"`` when it picks the exact solve,
    ``partial_fit``) whose normal equations have an estimated condition number above 10¹¹: their
    solution keeps about 15 − log10(condition number) significant digits (the estimate can run
    a few times low), fewer where forming them rounded too (features 1e6 from the origin without an intercept, weights spanning 1..1e12: 0.18
    relative). Centre or scale X, fit an intercept, or use ``solver="cg"`` with a smaller tol.
    """
