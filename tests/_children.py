"""Functions run in child processes by test_processes.py (importable by spawn and forkserver children)."""

from __future__ import annotations

import gc

from combpred import StructuredRidge, _capi, spaces


def fit_predict(X, Y, Xt, params):
    """Fit and predict in the child; return the child's answers."""
    model = StructuredRidge(**params).fit(X, Y)
    return model.predict(Xt), model.decision_function(Xt)


def predict_with(model, Xt):
    """Predict with a model pickled over from the parent."""
    return model.predict(Xt), model.decision_function(Xt)


def _attempt(outcome, name, call, *args):
    try:
        call(*args)
        outcome[name] = ("no error", "", False)
    except BaseException as exc:  # the parent inspects whatever was raised
        outcome[name] = (type(exc).__name__, str(exc), isinstance(exc, _capi.ForkedChildError))


def use_after_fork(model, space, Xt, queue):
    """In a child forked after the parent used the library: every use must fail clearly."""
    outcome = {"usable": _capi.usable()}
    _attempt(outcome, "predict", model.predict, Xt)
    _attempt(outcome, "fit", StructuredRidge().fit, Xt, (Xt > 0).astype(int))
    _attempt(outcome, "new space", lambda: spaces.Multilabel(3).mean())
    # the parent's Multilabel(4) is among the handles it keeps for spaces made again: the child's
    # must not be handed it, but refused at once
    _attempt(outcome, "space made again", lambda: spaces.Multilabel(4))
    _attempt(outcome, "inherited space", space.mean)
    # finalizers of objects inherited from the parent must not call into the parent's Go runtime
    _attempt(outcome, "model finalizer", model._model.__del__)
    _attempt(outcome, "space finalizer", space.__dict__["_handle_obj"].__del__)
    del model, space
    gc.collect()
    outcome["collected"] = True
    queue.put(outcome)


def threads_after_a_default_fit():
    """The core's thread count after a fit with n_jobs=None, in this (worker) process."""
    import numpy as np
    from combpred import StructuredRidge, _core

    X = np.random.default_rng(0).normal(size=(40, 3))
    StructuredRidge().fit(X, X > 0)
    return _core.get_threads()
