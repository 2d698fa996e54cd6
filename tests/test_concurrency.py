"""Python threads call the library concurrently (ctypes releases the GIL): answers and error messages
must be exactly those of serial calls."""

from __future__ import annotations

import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import _abi
import numpy as np
import pytest
from _synthetic import linear_multiclass, linear_multilabel
from combpred import StructuredRidge, _capi, spaces
from numpy.testing import assert_array_equal

N_THREADS = 8


@pytest.fixture(scope="module", params=["linear", "rbf"])
def model_and_queries(request):
    X, Y = linear_multilabel(150, n_features=6, n_labels=5, seed=21)
    model = StructuredRidge(kernel=request.param).fit(X, Y)
    rng = np.random.default_rng(22)
    queries = [rng.normal(size=(int(rng.integers(1, 40)), 6)) for _ in range(16)]
    return model, queries


def test_concurrent_predict_and_decision_match_serial(model_and_queries):
    model, queries = model_and_queries
    serial_pred = [model.predict(q) for q in queries]
    serial_dec = [model.decision_function(q) for q in queries]
    tasks = [(i % len(queries), i % 2 == 0) for i in range(N_THREADS * 60)]

    def run(task):
        i, predict = task
        return i, predict, (model.predict if predict else model.decision_function)(queries[i])

    with ThreadPoolExecutor(N_THREADS) as pool:
        results = list(pool.map(run, tasks))
    assert len(results) == len(tasks)
    for i, predict, out in results:
        assert_array_equal(out, serial_pred[i] if predict else serial_dec[i])


def test_concurrent_multiclass_predict_match_serial():
    X, y = linear_multiclass(200, n_classes=4, seed=23)
    names = np.array(["a", "b", "c", "d"])
    model = StructuredRidge(space="multiclass", kernel="rbf").fit(X, names[y])
    serial = model.predict(X)

    with ThreadPoolExecutor(N_THREADS) as pool:
        outs = list(pool.map(lambda _: model.predict(X), range(N_THREADS * 10)))
    for out in outs:
        assert_array_equal(out, serial)


def test_error_messages_are_per_thread():
    """Threads that fail at the same moment with different errors each read back their own message."""
    X, Y = linear_multilabel(50, n_features=6, n_labels=3, seed=24)
    model = StructuredRidge().fit(X, Y)
    handle = model._model.value
    space = spaces.Multilabel(4)
    barrier = threading.Barrier(N_THREADS)
    rounds = 200

    def worker(tid: int) -> list[str]:
        wrong = []
        n_features = 7 + tid  # the model has 6: each thread has its own wrong count
        Xq = np.zeros((3, n_features))
        out = np.empty((3, 3))
        rows = np.zeros((tid + 2, 4), dtype=np.int64)
        rows[tid + 1, tid % 4] = 5  # an invalid row whose index names the thread
        for r in range(rounds):
            barrier.wait()
            if (r + tid) % 2 == 0:
                status = _capi.lib().cp_ridge_decision(handle, _abi.f64(Xq), 3, n_features, _abi.f64(out), 3)
                expected = f"X has {n_features} features"
            else:
                status = _capi.lib().cp_space_validate(space._h(), _abi.i64(rows), rows.shape[0], 4, 0, None)
                expected = f"row {tid + 1}: label {tid % 4} has value 5"
            try:
                _capi.check(status)
                wrong.append("no error")
            except ValueError as exc:
                if expected not in str(exc):
                    wrong.append(f"thread {tid} round {r}: expected {expected!r}, got {str(exc)!r}")
        return wrong

    with ThreadPoolExecutor(N_THREADS) as pool:
        failures = [msg for msgs in pool.map(worker, range(N_THREADS)) for msg in msgs]
    assert failures == []


def test_concurrent_fits_match_serial():
    problems = [linear_multilabel(80, seed=30 + i) for i in range(N_THREADS)]
    params = [dict(kernel="rbf") if i % 2 else dict(solver="cg") for i in range(N_THREADS)]
    serial = [StructuredRidge(**p).fit(X, Y).decision_function(X) for p, (X, Y) in zip(params, problems, strict=True)]

    def fit(i):
        X, Y = problems[i]
        return StructuredRidge(**params[i]).fit(X, Y).decision_function(X)

    with ThreadPoolExecutor(N_THREADS) as pool:
        concurrent = list(pool.map(fit, range(N_THREADS)))
    for a, b in zip(serial, concurrent, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_concurrent_pickling_and_predicting(model_and_queries):
    model, queries = model_and_queries
    expected = model.decision_function(queries[0])

    def task(i):
        if i % 2:
            return pickle.loads(pickle.dumps(model)).decision_function(queries[0])
        return model.decision_function(queries[0])

    with ThreadPoolExecutor(N_THREADS) as pool:
        for out in pool.map(task, range(N_THREADS * 8)):
            assert_array_equal(out, expected)


def test_concurrent_space_calls():
    space = spaces.Multilabel(5)
    rng = np.random.default_rng(31)
    U = rng.normal(size=(100, 5))
    serial = space.decode(U)
    samples = space.sample(50, random_state=3)

    def task(i):
        if i % 3 == 0:
            return "decode", space.decode(U)
        if i % 3 == 1:
            return "sample", space.sample(50, random_state=3)
        # a fresh space per call: handles are created and freed concurrently
        return "mean", spaces.Multilabel(5).mean()

    with ThreadPoolExecutor(N_THREADS) as pool:
        for kind, out in pool.map(task, range(N_THREADS * 20)):
            expected = {"decode": serial, "sample": samples, "mean": np.full(5, 0.5)}[kind]
            assert_array_equal(out, expected)


def test_first_use_of_a_space_from_many_threads():
    """A space creates its Go handle lazily; threads racing on first use must share one live handle."""
    U = np.random.default_rng(32).normal(size=(20, 6))
    expected = (U > 0).astype(np.int64)
    for _ in range(30):
        space = spaces.Multilabel(6)
        barrier = threading.Barrier(N_THREADS)

        def task(_, space=space, barrier=barrier):
            barrier.wait()
            return space.decode(U)

        with ThreadPoolExecutor(N_THREADS) as pool:
            for out in pool.map(task, range(N_THREADS)):
                assert_array_equal(out, expected)


@pytest.mark.parametrize("kind", ["ridge", "probabilistic"])
def test_prediction_methods_use_their_estimators_n_jobs(kind, monkeypatch):
    """n_jobs was applied by fit only: a model fitted with n_jobs=1 predicted on every core after
    another estimator's fit with the default (probe Y), and a Dask worker's lazy prediction ignored
    it. Every prediction method now sets its estimator's count, as fit does."""
    from combpred import ProbabilisticStructured, _core

    X, Y = linear_multilabel(60, n_features=4, n_labels=3, seed=5)
    cls = StructuredRidge if kind == "ridge" else ProbabilisticStructured
    model = cls(n_jobs=1).fit(X, Y)
    cls().fit(X, Y)  # the default, all cores, set last
    methods = {"predict": (X,), "decision_function": (X,), "predict_marginals": (X,), "score": (X, Y)}
    if kind == "ridge":
        methods["max_marginal_margins"] = (X,)
    else:
        methods |= {"predict_proba": (X,), "score_samples": (X, Y)}
    for method, args in methods.items():
        seen = []
        monkeypatch.setattr(_core, "set_threads", seen.append)
        getattr(model, method)(*args)
        monkeypatch.undo()
        assert seen and set(seen) == {1}, (method, seen)


@pytest.mark.parametrize("kind", ["ridge", "probabilistic"])
def test_a_parameter_set_during_a_fit_in_another_thread_waits_for_it(kind):
    """A fit reads its parameters more than once: set_params(kernel=...) from another thread between
    two reads made a linear model of the Gram matrix that kept the callable kernel, a model of
    neither configuration, and a change of n_components made fit raise a TypeError after storing
    its model (probe CT). A parameter set during a fit now waits for it to end; the fit is of the
    parameters it began with."""
    from combpred import ProbabilisticStructured

    X, Y = linear_multilabel(60, n_features=3, n_labels=4, seed=5)
    inside, release = threading.Event(), threading.Event()

    class HeldWeights:
        """Unit weights that hold the fit, after it has read its first parameters, until the other
        thread has tried its set_params."""

        def __array__(self, dtype=None, copy=None):
            inside.set()
            assert release.wait(30)
            return np.ones(len(X))

    if kind == "ridge":
        model = StructuredRidge(kernel="rbf", alpha=1.0)
        other = {"kernel": "linear", "alpha": 9.0, "n_components": 10}
    else:
        model = ProbabilisticStructured(alpha=0.1, max_iter=30)
        other = {"alpha": 9.0, "max_iter": 1, "fit_intercept": False}
    begun = model.get_params()
    fitter = threading.Thread(target=model.fit, args=(X, Y), kwargs={"sample_weight": HeldWeights()})
    fitter.start()
    assert inside.wait(30)
    setter = threading.Thread(target=model.set_params, kwargs=other)
    setter.start()
    setter.join(0.3)
    waited = setter.is_alive()
    release.set()
    fitter.join(60)
    setter.join(60)
    assert waited, "set_params did not wait for the fit"
    assert {name: model.get_params()[name] for name in other} == other
    expected = type(model)(**begun).fit(X, Y)
    assert_array_equal(model.decision_function(X), expected.decision_function(X))


def test_a_parameter_set_inside_the_estimators_own_fit_is_refused():
    """The fit's own thread (here its kernel) cannot wait for the fit: a set from there changed the
    parameters between two of the fit's reads, for a model of neither configuration, or a value
    validation refuses (n_components=0) fitted silently (probe CU). It is refused instead, with a
    RuntimeError that the kernel's error handling passes on as it is."""
    X, Y = linear_multilabel(60, n_features=3, n_labels=4, seed=6)

    def kernel(A, B):
        model.set_params(n_components=20)
        return A @ B.T

    model = StructuredRidge(kernel=kernel)
    # the RuntimeError the user guide names, not the kernel's usual ValueError (probe CX)
    with pytest.raises(RuntimeError, match="n_components cannot be set during this estimator's own fit") as info:
        model.fit(X, Y)
    assert not isinstance(info.value, ValueError)
    assert model.n_components is None
    model.set_params(kernel="linear").fit(X, Y)  # after the fit, on the same thread: as before


@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_a_fit_started_inside_the_estimators_own_fit_is_refused(method):
    """A kernel that fits its own estimator made the fit start itself again, through the core, until
    Python's recursion limit: a ValueError of 23 KB naming the kernel 197 times (probe DU). It is
    refused at the first level, as a parameter set from there is; a kernel may fit another
    estimator, and the estimator fits again afterwards."""
    X, Y = linear_multilabel(40, n_features=3, n_labels=3, seed=7)
    calls = []

    def kernel(A, B):
        calls.append(1)
        getattr(model, method)(X, Y)
        return A @ B.T

    model = StructuredRidge(kernel=kernel, n_components=10 if method == "partial_fit" else None)
    with pytest.raises(RuntimeError, match=f"{method} cannot be called during this StructuredRidge's own fit") as info:
        model.fit(X, Y)
    assert not isinstance(info.value, ValueError)
    assert len(calls) == 1 and len(str(info.value)) < 300
    other = StructuredRidge()

    def fits_another(A, B):
        other.fit(X, Y)
        return A @ B.T

    model.set_params(kernel=fits_another, n_components=None).fit(X, Y)
    assert hasattr(other, "coef_")


def test_a_kernel_that_predicts_with_its_own_estimator_is_refused_at_once():
    """A kernel that calls predict of the estimator it belongs to recursed through the core to
    Python's limit: an 11 KB ValueError naming the kernel 99 times (probe DZ). The kernel's
    second call from inside the first is refused, and the model predicts afterwards."""
    X, Y = linear_multilabel(40, n_features=3, n_labels=3, seed=8)
    armed = []

    def kernel(A, B):
        if armed:
            model.predict(A[:2])
        return A @ B.T

    model = StructuredRidge(kernel=kernel).fit(X, Y)
    armed.append(True)
    with pytest.raises(RuntimeError, match=r"^kernel=.*kernel was called again from inside its own call") as info:
        model.predict(X)
    assert len(str(info.value)) < 300
    armed.clear()
    assert model.predict(X).shape == Y.shape


def test_a_parameter_set_that_sets_parameters_does_not_deadlock():
    """Setting a parameter runs Python code: the old value's __del__, a subclass's property setter.
    That code may set parameters of any estimator; under the process-wide lock the first version of
    the rule took, it deadlocked (probe CU). A child process, so that a deadlock fails the test."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        from combpred import StructuredRidge

        other = StructuredRidge()

        class Kernel:
            def __call__(self, A, B):
                return A @ B.T

            def __del__(self):
                other.set_params(alpha=2.0)

        class Aliased(StructuredRidge):  # a parameter whose setter sets another one
            def __init__(self, alpha=1.0, strength=None):
                super().__init__(alpha=alpha)
                self.strength = strength

            @property
            def strength(self):
                return self._strength

            @strength.setter
            def strength(self, value):
                self._strength = value
                if value is not None:
                    self.alpha = value

        est = StructuredRidge(kernel=Kernel())
        est.kernel = "linear"  # drops the last reference to Kernel(): its __del__ sets other.alpha
        assert other.alpha == 2.0
        assert Aliased(strength=3.0).alpha == 3.0
        print("OK")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "OK", done.stderr[-2000:]


def test_a_thread_calling_the_core_back_to_back_does_not_starve_a_fit_on_another():
    """With one thread (OMP_NUM_THREADS=1, as loky and Dask workers set it) the Go runtime had one P,
    and a thread that called the core back to back kept it between its calls: 30 partial_fit chunks
    of about 2 ms each, on another thread, took over 20 s beside a loop on get_config (probe EC). A
    child process, with a deadline, so that the starved fit fails the test instead of holding it."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import threading, time
        import numpy as np
        import combpred
        from combpred import StructuredRidge, spaces

        rng = np.random.default_rng(0)
        space = spaces.Permutations(6)
        X, Y = rng.normal(size=(3000, 8)), space.sample(3000, random_state=0)
        model, done = StructuredRidge(space=space), threading.Event()

        def fit():
            for lo in range(0, 3000, 100):
                model.partial_fit(X[lo : lo + 100], Y[lo : lo + 100])
            done.set()

        threading.Thread(target=fit, daemon=True).start()
        start = time.perf_counter()
        while not done.is_set() and time.perf_counter() - start < 15:
            combpred.get_config()  # a call into the core (predict on one row starved it as well)
        print("done" if done.is_set() else "starved", round(time.perf_counter() - start, 2))
        """
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert run.stdout.startswith("done"), (run.stdout, run.stderr[-2000:])
