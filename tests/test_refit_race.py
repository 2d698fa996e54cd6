"""A call reads the fitted state once (issue 11, finding 8): a refit in another thread that changes
the output dimension cannot make a call size its buffer for one model and call another."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import combpred

PACKAGE_PARENT = str(Path(combpred.__file__).resolve().parent.parent)


def test_refit_in_another_thread_never_overruns():
    code = """
        import threading, time
        import numpy as np
        from sklearn.exceptions import NotFittedError
        from combpred import StructuredRidge
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30, 4))
        Ys = [(rng.random((30, d)) < 0.5).astype(int) for d in (2, 300)]
        model = StructuredRidge(space="multilabel", solver="exact").fit(X, Ys[0])
        stop = time.monotonic() + 3
        errors = []

        def refit():
            i = 0
            while time.monotonic() < stop:
                model.fit(X, Ys[i % 2])
                i += 1

        def call():
            while time.monotonic() < stop:
                try:
                    u, p = model.decision_function(X), model.predict(X)
                except NotFittedError:
                    continue  # between the reset and the end of a refit
                except Exception as exc:
                    errors.append(repr(exc))
                    return
                if u.shape[1] not in (2, 300) or p.shape[1] not in (2, 300):
                    errors.append(f"shapes {u.shape} {p.shape}")
                    return

        threads = [threading.Thread(target=refit)] + [threading.Thread(target=call) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("ERRORS", errors)
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ERRORS []" in result.stdout, result.stdout


def test_threads_fitting_one_estimator_take_turns():
    """Two threads fitting one estimator take turns (found by a probe: partial_fit chunks were lost
    without a word, and concurrent fits left one fit's attributes beside the other's model). Every
    chunk counts, the model equals fit on all rows (the exact update is order-free), and concurrent
    fits end in the state of one of them."""
    import threading

    import numpy as np
    from combpred import StructuredRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    Y = (X[:, :3] > 0).astype(int)
    chunks = [(X[i : i + 30], Y[i : i + 30]) for i in range(0, 300, 30)]
    full = StructuredRidge().fit(X, Y)
    for _ in range(5):
        model = StructuredRidge()
        threads = [
            threading.Thread(target=lambda k=k, m=model: [m.partial_fit(*chunks[j]) for j in range(k, 10, 2)])
            for k in (0, 1)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert model.n_samples_seen_ == 300
        np.testing.assert_allclose(model.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    Ys = {3: Y, 5: (X[:, :5] > 0).astype(int)}
    for _ in range(10):
        model = StructuredRidge()
        threads = [threading.Thread(target=model.fit, args=(X[:, : d + 1], Ys[d])) for d in (3, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        d = model.coef_.shape[0]
        assert model.n_features_in_ == d + 1 and model.coef_.shape == (d, d + 1)
        assert model.predict(X[:4, : d + 1]).shape == (4, d)


def test_an_interrupt_while_storing_a_chunk_leaves_the_model_before_it(monkeypatch):
    """A Ctrl-C that lands while partial_fit stores the model of a chunk (after the core returned)
    leaves the estimator as it was before the chunk: the model and the attributes read from it are
    stored in one step (a probe found the new model stored beside the old coef_ and
    n_samples_seen_)."""
    import numpy as np
    import pytest
    from combpred import StructuredRidge

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :2] > 0).astype(int)
    model = StructuredRidge().partial_fit(X[:30], Y[:30])
    coef, seen, pred = model.coef_.copy(), model.n_samples_seen_, model.predict(X)
    read = type(model)._model_attributes

    def interrupted(self, m, fitted):
        read(self, m, fitted)
        raise KeyboardInterrupt

    monkeypatch.setattr(type(model), "_model_attributes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.partial_fit(X[30:], Y[30:])
    monkeypatch.undo()
    assert model.n_samples_seen_ == seen
    np.testing.assert_array_equal(model.coef_, coef)
    np.testing.assert_array_equal(model.predict(X), pred)
    model.partial_fit(X[30:], Y[30:])
    np.testing.assert_allclose(model.coef_, StructuredRidge().fit(X, Y).coef_, rtol=1e-9, atol=1e-12)


def test_a_fit_refused_for_its_parameters_leaves_the_estimator_unfitted():
    """README: a failed fit leaves the estimator unfitted. That held for bad data but not for bad
    parameters, which were checked before the previous fit was forgotten (found by a probe)."""
    import numpy as np
    import pytest
    from combpred import ProbabilisticStructured, StructuredRidge
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    Y = (X[:, :2] > 0).astype(int)
    for model in (StructuredRidge(), ProbabilisticStructured()):
        model.fit(X, Y).set_params(alpha=-1.0)
        with pytest.raises(ValueError, match="alpha"):
            model.fit(X, Y)
        with pytest.raises(NotFittedError):
            model.predict(X)


def test_a_fit_refused_after_its_data_is_validated_is_unfitted_for_scikit_learn_too():
    """A fit refused after validating its data kept n_features_in_ (set by scikit-learn's
    validate_data); scikit-learn's check_is_fitted took that trailing underscore for a fit, while
    predict raised NotFittedError (found by a probe). It keeps no fitted attribute now (probe DC)."""
    import numpy as np
    import pytest
    from combpred import ProbabilisticStructured, StructuredRidge
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    Y = (X[:, :2] > 0).astype(int)
    for model in (StructuredRidge(), ProbabilisticStructured()):
        check_is_fitted(model.fit(X, Y))
        with pytest.raises(ValueError, match="y"):
            model.fit(X, np.full_like(Y, 2))  # not 0/1: refused by the core, after validate_data
        assert not hasattr(model, "n_features_in_")
        with pytest.raises(NotFittedError):
            check_is_fitted(model)
        with pytest.raises(NotFittedError):
            model.predict(X)


def test_an_interrupt_while_storing_leaves_callable_and_dask_models_consistent(monkeypatch):
    """The same one-step store covers what a callable kernel's model needs to predict (its kernel,
    its Nyström map, no coef_) and a Dask fit's labels (review: they were set after the model, so
    an interrupt left a "fitted" estimator that could not predict, or a model without classes_)."""
    import numpy as np
    import pytest
    from combpred import StructuredRidge
    from combpred._estimator_base import StructuredEstimator
    from sklearn.exceptions import NotFittedError

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :2] > 0).astype(int)

    def kernel(A, B):
        return np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    model = StructuredRidge(kernel=kernel, n_components=20, random_state=0).partial_fit(X[:30], Y[:30])
    before = (model.n_samples_seen_, model.predict(X), set(vars(model)))
    assert not hasattr(model, "coef_")

    def interrupted(self, m, fitted):
        raise KeyboardInterrupt

    monkeypatch.setattr(StructuredEstimator, "_model_attributes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.partial_fit(X[30:], Y[30:])
    monkeypatch.undo()
    assert (model.n_samples_seen_, set(vars(model))) == (before[0], before[2])
    np.testing.assert_array_equal(model.predict(X), before[1])
    exact = StructuredRidge(kernel=kernel)
    monkeypatch.setattr(StructuredEstimator, "_model_attributes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        exact.fit(X, Y)
    monkeypatch.undo()
    with pytest.raises(NotFittedError):
        exact.predict(X)

    da = pytest.importorskip("dask.array")
    from combpred.dask import DaskProbabilisticStructured

    dist = DaskProbabilisticStructured()
    monkeypatch.setattr(StructuredEstimator, "_model_attributes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dist.fit(da.from_array(X, chunks=20), da.from_array(Y, chunks=20))
    monkeypatch.undo()
    assert not any(hasattr(dist, a) for a in ("classes_", "space_", "n_features_in_", "coef_"))
    with pytest.raises(NotFittedError):
        dist.predict(X)
    assert dist.fit(da.from_array(X, chunks=20), da.from_array(Y, chunks=20)).predict(X).shape == Y.shape


def _refit_while_paused(est, call, refit, monkeypatch):
    """Run ``call()`` in a thread that pauses right after it first reads the fitted state (where a
    thread switch can land), run ``refit()`` meanwhile, and return what the call returned."""
    import threading

    original = type(est)._fitted
    paused, resume = threading.Event(), threading.Event()

    def pausing(self):
        fitted = original(self)
        if not paused.is_set():
            paused.set()
            assert resume.wait(30)
        return fitted

    monkeypatch.setattr(type(est), "_fitted", pausing)
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("result", call()))
    thread.start()
    assert paused.wait(30)
    monkeypatch.setattr(type(est), "_fitted", original)
    refit()
    resume.set()
    thread.join(30)
    return out["result"]


def test_callable_kernel_predictions_come_from_one_fit(monkeypatch):
    """Kernel rows were computed against the estimator's current X_fit_ block by block: a refit in
    another thread applied the old dual coefficients to kernel rows of the new training set (58 %
    of 50,000 rows matched neither fit, probe I)."""
    import numpy as np
    from combpred import StructuredRidge, spaces
    from sklearn.metrics.pairwise import rbf_kernel

    def kernel(A, B):
        return rbf_kernel(A, B, gamma=0.2)

    rng = np.random.default_rng(0)
    space = spaces.Permutations(4)
    X1, X2 = rng.normal(size=(40, 3)), rng.normal(size=(40, 3)) * 3 + 1
    Y1, Y2 = space.sample(40, random_state=0), space.sample(40, random_state=1)
    Xq = rng.normal(size=(25, 3))
    ref1 = StructuredRidge(space=space, kernel=kernel).fit(X1, Y1).decision_function(Xq)
    est = StructuredRidge(space=space, kernel=kernel).fit(X1, Y1)
    got = _refit_while_paused(est, lambda: est.decision_function(Xq), lambda: est.fit(X2, Y2), monkeypatch)
    np.testing.assert_array_equal(got, ref1)
    assert not np.allclose(est.decision_function(Xq), ref1)  # the refit did change the model


def test_decision_rule_decodes_in_the_space_of_its_marginals(monkeypatch):
    """predict under a decision rule took one snapshot for the space and another for the marginals:
    a refit with another space of the same dimension in between decoded B's marginals in A's space
    (rows that were neither model's answer, probe I)."""
    import numpy as np
    from combpred import ProbabilisticStructured, StructuredRidge, spaces

    rng = np.random.default_rng(0)
    A, B = spaces.Multilabel(6), spaces.KSubsets(6, 2)
    X = rng.normal(size=(60, 3))
    YA, YB = rng.integers(0, 2, size=(60, 6)), B.sample(60, random_state=0)
    Xq = rng.normal(size=(40, 3))
    for cls in (StructuredRidge, ProbabilisticStructured):
        refA = cls(space=A, decision="hamming").fit(X, YA).predict(Xq)
        est = cls(space=A, decision="hamming").fit(X, YA)

        def refit(est=est):
            est.set_params(space=B)
            est.fit(X, YB)

        got = _refit_while_paused(est, lambda est=est: est.predict(Xq), refit, monkeypatch)
        np.testing.assert_array_equal(got, refA, err_msg=cls.__name__)


def test_score_during_a_partial_fit_in_another_thread_scores_one_model(monkeypatch):
    """score read the fitted state twice and raised "refitted in another thread" when a chunk of
    partial_fit landed between the reads: 9 % of a monitoring thread's scores (probe 86). It now
    predicts from the snapshot it reads y's space in: the score of the model before the chunk."""
    import numpy as np
    from combpred import StructuredRidge

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    Y = (X @ rng.normal(size=(5, 4)) > 0).astype(int)
    est = StructuredRidge(solver="sgd", random_state=0).partial_fit(X[:100], Y[:100])
    before = est.score(X, Y)
    got = _refit_while_paused(est, lambda: est.score(X, Y), lambda: est.partial_fit(X[100:], Y[100:]), monkeypatch)
    assert got == before
    assert est.score(X, Y) != before  # the chunk did change the model


def test_a_call_during_a_refit_in_another_thread_says_so():
    """A thread predicting while another refits the estimator got scikit-learn's "not fitted yet.
    Call 'fit'", although it had fitted it (probe 81): the refit drops the previous model first, and
    the error now says that a fit runs in another thread. Held in the refit's kernel, so the call
    surely falls inside it; in the fitting thread itself, and after the fit, calls behave as before."""
    import threading

    import numpy as np
    import pytest
    from combpred import StructuredRidge
    from sklearn.exceptions import NotFittedError
    from sklearn.metrics.pairwise import rbf_kernel

    entered, release = threading.Event(), threading.Event()

    def kernel(A, B):
        if hold[0]:
            entered.set()
            release.wait(30)
        return rbf_kernel(A, B)

    hold = [False]
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 2)) < 0.5).astype(int)
    model = StructuredRidge(kernel=kernel).fit(X, Y)
    before = model.predict(X)
    hold[0] = True
    refit = threading.Thread(target=model.fit, args=(X, Y))
    refit.start()
    try:
        assert entered.wait(30)
        with pytest.raises(NotFittedError, match="is being fitted in another thread, which dropped its previous model"):
            model.predict(X)
    finally:
        release.set()
        refit.join(60)
    hold[0] = False
    np.testing.assert_array_equal(model.predict(X), before)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        StructuredRidge().predict(X)  # never fitted, no fit running: scikit-learn's error
