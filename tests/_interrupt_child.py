"""Run one long combpred call in this process, press Ctrl-C (SIGINT) after a delay, and print how long
the call took to raise KeyboardInterrupt and whether the estimator still works (tests/test_cancellation.py
and benchmarks/cancel_latency.py run it in a child process)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import warnings

import numpy as np
from combpred import ProbabilisticStructured, StructuredRidge, spaces
from sklearn.exceptions import ConvergenceWarning


def _ranking_data(n_labels: int):
    rng = np.random.default_rng(0)
    return rng.normal(size=(200, 5)), spaces.Permutations(n_labels).sample(200, random_state=0)


def _ranking_model(estimator, n_labels: int, **params):
    X, Y = _ranking_data(n_labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator(space=spaces.Permutations(n_labels), **params).fit(X, Y), X


def setup(name: str):
    """Return (long call, quick call that must still work afterwards)."""
    rng = np.random.default_rng(1)
    if name == "ridge.predict":
        model, _ = _ranking_model(StructuredRidge, 60)
        Xq = rng.normal(size=(400_000, 5))
        return lambda: model.predict(Xq), lambda: model.predict(Xq[:2])
    if name == "ridge.predict-inline":
        # 256 rows, which the core ran inline (deaf to Ctrl-C) whatever their cost: exact
        # Permutations(20) takes about 70 ms a row, and the call ran its 8 s to the end
        model = StructuredRidge(space=spaces.Permutations(20, decoder="exact"), alpha=1e-3).fit(*_ranking_data(20))
        Xq = rng.normal(size=(256, 5))
        return lambda: model.predict(Xq), lambda: model.predict(Xq[:1])
    if name in ("ridge.decision-kernel", "ridge.predict-kernel"):
        # an rbf expansion over 2,000 support rows: the core scored all rows in one call, deaf to
        # Ctrl-C (decision_function ran to its end; predict held its first 150,000-row chunk)
        X = rng.normal(size=(2000, 20))
        model = StructuredRidge(kernel="rbf", alpha=1.0, max_iter=3).fit(X, (X[:, :4] > 0).astype(int))
        Xq = np.tile(X, (150, 1))
        call = model.decision_function if name == "ridge.decision-kernel" else model.predict
        return lambda: call(Xq), lambda: call(Xq[:2])
    if name == "space.decode-inline":
        sp = spaces.Permutations(20, decoder="exact")
        U = rng.normal(size=(256, sp.dim))
        return lambda: sp.decode(U), lambda: sp.decode(U[:1])
    if name == "space.decode":
        sp = spaces.Permutations(60)
        U = rng.normal(size=(40_000, sp.dim))
        return lambda: sp.decode(U), lambda: sp.decode(U[:2])
    if name in ("space.sample-inline", "space.sample-large"):
        # subtrees of a 500,000-node random tree, about 12 ms a sample: 200 samples ran inline and
        # 1,000 looked at Ctrl-C every 4,096 samples, seconds deaf to it (probe CW)
        parent = np.concatenate([[-1], (rng.random(499_999) * np.arange(1, 500_000)).astype(np.int64)])
        sp = spaces.Subtrees(parent)
        count = 200 if name == "space.sample-inline" else 1_000
        return lambda: sp.sample(count, random_state=0), lambda: sp.sample(1, random_state=0)
    if name in ("space.dag_covariance", "ridge.fit-dag"):
        # a DAG's paths, node v below the 100 nodes before it: each covariance entry walks a
        # descendant set, 6 s for the dense matrix, which covariance() and a fit's set-up spent deaf
        # to Ctrl-C (probe CW)
        sp = spaces.DAGPaths([list(range(max(0, v - 100), v)) for v in range(1_000)])
        if name == "space.dag_covariance":
            return sp.covariance, lambda: spaces.DAGPaths([[], [0]]).covariance()
        X, Y = rng.normal(size=(30, 5)), sp.sample(30, random_state=0)
        return lambda: StructuredRidge(space=sp).fit(X, Y), lambda: sp.decode(np.zeros((1, sp.dim)))
    if name == "space.dag_new":
        # a banded DAG, node v below the 40 nodes before it: its ancestor sets took seconds to build,
        # deaf to Ctrl-C (30 s for 22,000 nodes of 100 parents, probe CV)
        parents = [list(range(max(0, v - 40), v)) for v in range(10_000)]
        return lambda: spaces.DAGPaths(parents), lambda: spaces.DAGPaths(parents[:50])
    if name == "prob.from_bytes-dag":
        # a model's bytes build its space again: a DAG of 2,500 nodes below the 1,000 before each
        # took 2.7 s to decode, deaf to Ctrl-C (pickle.loads builds the space object first, cancellably)
        sp = spaces.DAGPaths([list(range(max(0, v - 1_000), v)) for v in range(2_500)])
        X = rng.normal(size=(5, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = ProbabilisticStructured(space=sp, max_iter=1).fit(X, sp.sample(5, random_state=0))._model
        data, small = model.to_bytes(), _ranking_model(ProbabilisticStructured, 3, max_iter=2)[0]._model.to_bytes()
        return lambda: type(model).from_bytes(data), lambda: type(model).from_bytes(small)
    if name == "space.dag_decode":
        # a ladder DAG (parents v−1 and v−2): each row sums 32 million ancestor entries, and the
        # decoder looked at Ctrl-C only between rows (40 rows of 23,000 nodes ran 24 s, probe CV)
        sp = spaces.DAGPaths([[]] + [[v - 1] + ([v - 2] if v > 1 else []) for v in range(1, 8_000)])
        U = rng.normal(size=(200, sp.dim))
        return lambda: sp.decode(U), lambda: sp.decode(U[:1])
    # The model behind the sampled calls is fitted with the local chain (1.7 s; the default chain
    # took 15 s of set-up for each test); the interrupted calls sample as a default fit would.
    if name == "prob.sample":
        model, X = _ranking_model(ProbabilisticStructured, 20, max_iter=2, alpha=1.0, sampler="local")
        return (
            lambda: model.sample(X[:50], 20_000, sampler="auto", random_state=0),
            lambda: model.sample(X[:1], 2, random_state=0),
        )
    if name == "prob.predict_marginals":
        model, X = _ranking_model(ProbabilisticStructured, 20, max_iter=2, alpha=1.0, sampler="local")
        return lambda: model.predict_marginals(X, n_samples=20_000, sampler="auto"), lambda: model.predict(X[:2])
    if name == "prob.log_partition":
        model, X = _ranking_model(ProbabilisticStructured, 8, alpha=0.01)
        return (
            lambda: model.log_partition(X[:5] * 3, method="fpras", epsilon=0.1, delta=0.01, n_samples=20_000),
            lambda: model.log_partition(X[:1]),
        )
    if name == "prob.fit":
        sp = spaces.Permutations(20)
        X = rng.normal(size=(300, 5))
        Y = sp.sample(300, random_state=0)
        model = ProbabilisticStructured(space=sp, alpha=0.1, n_samples=2000, max_iter=1000)
        return lambda: model.fit(X, Y), lambda: ProbabilisticStructured(space=sp, max_iter=1).fit(X[:20], Y[:20])
    if name == "prob.fit-exact":
        # exact inference (a subset DP per row): one evaluation over 2,000 rows takes about a second
        # and a line search makes several; Ctrl-C waited for them (12 s)
        sp = spaces.Permutations(15)
        X = rng.normal(size=(2000, 20))
        Y = sp.sample(2000, random_state=0)
        model = ProbabilisticStructured(space=sp, max_iter=100_000, tol=1e-14)
        return lambda: model.fit(X, Y), lambda: ProbabilisticStructured(space=sp, max_iter=1).fit(X[:20], Y[:20])
    if name == "prob.fit-separable":
        # multi-label, exact inference: one L-BFGS per label. Ctrl-C waited for the first pass over
        # every label (1.1 s), and once the two labels that need many iterations (first on each
        # thread) were done, for the whole fit: the quick ones never reached the progress callback.
        n_labels = 400
        X = rng.normal(size=(20_000, 100))
        Y = (rng.normal(size=(20_000, n_labels)) > 0).astype(int)
        for a in (0, n_labels // 2):
            Y[:, a] = X @ rng.normal(size=100) + 0.05 * rng.normal(size=20_000) > 0
        model = ProbabilisticStructured(alpha=1e-7, max_iter=300, tol=1e-10)
        return lambda: model.fit(X, Y), lambda: ProbabilisticStructured(max_iter=1).fit(X[:20], Y[:20, :3])
    if name == "ridge.fit":
        sp = spaces.Multilabel(30)
        X = rng.normal(size=(200_000, 60))
        Y = (X[:, :30] + rng.normal(size=(200_000, 30)) > 0).astype(int)
        model = StructuredRidge(space=sp, solver="cg", tol=1e-14, max_iter=10_000)
        return lambda: model.fit(X, Y), lambda: StructuredRidge(space=sp).fit(X[:50], Y[:50])
    if name == "ridge.fit-nystrom":
        # a Nyström map of 4,000 landmarks: its features (K_xL·R⁻¹) and the preconditioner's block
        # inverse took seconds each, deaf to Ctrl-C (8 s of latency, probe DG)
        X = rng.normal(size=(4000, 10))
        Y = (rng.random((4000, 5)) < 0.3).astype(int)
        model = StructuredRidge(kernel="rbf", n_components=4000)
        return lambda: model.fit(X, Y), lambda: StructuredRidge(kernel="rbf", n_components=20).fit(X[:50], Y[:50])
    if name == "ridge.partial_fit":
        sp = spaces.Multilabel(10)
        X = rng.normal(size=(12000, 10))
        Y = (X + rng.normal(size=X.shape) > 0).astype(int)
        model = StructuredRidge(space=sp, kernel="rbf").partial_fit(X[:6000], Y[:6000])
        return lambda: model.partial_fit(X[6000:], Y[6000:]), lambda: model.predict(X[:2])
    if name == "ridge.fit-exact":
        X = rng.normal(size=(3000, 399))  # Cholesky of 8,000 normal equations: about 10 s
        Y = (X[:, :20] > 0).astype(int)
        model = StructuredRidge(space=spaces.Multilabel(20), solver="exact")
        return lambda: model.fit(X, Y), lambda: StructuredRidge(space=spaces.Multilabel(20)).fit(X[:50], Y[:50])
    if name == "ridge.fit-exact-kernel":
        X = rng.normal(size=(1500, 5))  # LU of a 4,500 × 4,500 system
        Y = (X[:, :3] > 0).astype(int)
        model = StructuredRidge(space=spaces.Multilabel(3), kernel="rbf", solver="exact")
        return lambda: model.fit(X, Y), lambda: StructuredRidge(space=spaces.Multilabel(3)).fit(X[:50], Y[:50])
    raise ValueError(name)


def main() -> None:
    name, delay = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    # A process started in the background by a non-interactive shell (nohup, `cmd &` in a CI script)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler: the press below
    # would be lost and the call would run to its end. Ctrl-C's handler is what is measured here.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    long_call, quick_call = setup(name)
    pressed = []

    def press() -> None:
        time.sleep(delay)
        pressed.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press, daemon=True).start()
    start = time.perf_counter()
    outcome = "finished"
    try:
        long_call()
    except KeyboardInterrupt:
        outcome = "interrupted"
    except Exception as e:  # noqa: BLE001 -- a call run to its end may stop at a work bound: its duration still counts
        outcome = f"error: {type(e).__name__}"
    end = time.perf_counter()
    quick_call()  # the estimator (or space) still works
    latency = end - pressed[0] if pressed else None
    print(json.dumps({"call": name, "outcome": outcome, "latency": latency, "elapsed": end - start}))


if __name__ == "__main__":
    main()
