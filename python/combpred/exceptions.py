"""Warnings and errors of combpred, for ``warnings.filterwarnings``, ``pytest.warns`` and ``except``."""

from __future__ import annotations

__all__ = ["ForkedChildError", "MixingWarning"]


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
