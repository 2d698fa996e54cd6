"""The main job, `python -m combpred demo`: one problem per family of structures, each in a few
seconds, against the model a user would otherwise pick, with a verdict in words.

Every number is measured in the run that prints it. Hyper-parameters are fixed in advance, never
tuned on the test data (for yeast, the values cross-validation on the training split chose in
BENCHMARKS.md, whose benchmarks re-select everything); fit times are the median of several rounds
that alternate our model and its peer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import hamming_loss, label_ranking_loss
from sklearn.model_selection import KFold
from sklearn.multioutput import MultiOutputClassifier
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from . import datasets, metrics, spaces
from ._demo import OneVsRestKernelRidge
from ._probabilistic import ProbabilisticStructured
from ._ridge import StructuredRidge
from .baselines import PairwiseRanker


def alternated_fit_times(jobs: dict[str, tuple[Any, np.ndarray, np.ndarray]], rounds: int) -> dict[str, float]:
    """Median fit time of each (model, X, y) job over ``rounds`` rounds, the models taking turns in
    each round, so that a slow moment of the machine hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(rounds):
        for name, (model, X, y) in jobs.items():
            t0 = time.perf_counter()
            clone(model).fit(X, y)
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) for name, t in times.items()}


def _relative(ours: float, theirs: float, lower_is_better: bool, what: str, tie: float) -> str:
    """A verdict in words: who is better at ``what`` and by how much (``tie`` = a difference too small
    to call)."""
    diff = theirs - ours if lower_is_better else ours - theirs
    if abs(diff) <= tie:
        return f"level on {what} ({ours:.3f} against {theirs:.3f})"
    side = "better" if diff > 0 else "worse"
    return f"{side} on {what}: {ours:.3f} against {theirs:.3f}"


def _speed(ours: float, theirs: float) -> str:
    ratio = ours / theirs
    return f"{ratio:.1f}× the fit time" if ratio >= 1 else f"{1 / ratio:.1f}× faster to fit"


def multilabel(rounds: int, out: Callable[[str], None]) -> None:
    """Yeast, 14 labels: StructuredRidge (rbf) against one-vs-rest logistic regression and kernel ridge."""
    data = datasets.load_yeast()
    X, Y, Xt, Yt = data.X_train, data.Y_train, data.X_test, data.Y_test
    models = {
        "StructuredRidge (rbf)": make_pipeline(StandardScaler(), StructuredRidge(kernel="rbf", alpha=0.03, gamma=0.02)),
        "one-vs-rest LogisticRegression": make_pipeline(
            StandardScaler(), MultiOutputClassifier(LogisticRegression(C=0.01, max_iter=2000))
        ),
        "one-vs-rest KernelRidge (rbf)": make_pipeline(StandardScaler(), OneVsRestKernelRidge(alpha=1.0, gamma=0.02)),
    }
    out("1. Label sets: yeast genes, 14 functional classes (1500 train / 917 test, 103 features)")
    fit_s = alternated_fit_times({n: (m, X, Y) for n, m in models.items()}, rounds)
    losses = {}
    for name, model in models.items():
        model.fit(X, Y)
        final = model[-1]
        if isinstance(final, MultiOutputClassifier):
            scores = np.column_stack([p[:, 1] for p in model.predict_proba(Xt)])
        else:
            scores = model.decision_function(Xt)
        losses[name] = (hamming_loss(Yt, model.predict(Xt)), label_ranking_loss(Yt, scores))
        out(
            f"   {name:34s} Hamming loss {losses[name][0]:.4f}  ranking loss {losses[name][1]:.4f}  fit {fit_s[name]:.3f} s"
        )
    ours = losses["StructuredRidge (rbf)"]
    for peer in ("one-vs-rest LogisticRegression", "one-vs-rest KernelRidge (rbf)"):
        theirs = losses[peer]
        out(
            f"   Against {peer}: StructuredRidge is {_relative(ours[0], theirs[0], True, 'Hamming loss', 0.002)}, "
            f"{_relative(ours[1], theirs[1], True, 'ranking loss', 0.002)}, "
            f"{_speed(fit_s['StructuredRidge (rbf)'], fit_s[peer])}."
        )
    out("")


def label_ranking(rounds: int, out: Callable[[str], None]) -> None:
    """Glass, rankings of 6 labels: 5-fold CV Kendall τ against pairwise logistic regression."""
    X, Y = datasets._load_label_ranking("glass", None, True, search=False)  # the bundled copy
    space = spaces.Permutations(6)
    models = {
        "StructuredRidge (rbf)": make_pipeline(
            StandardScaler(), StructuredRidge(space=space, kernel="rbf", alpha=0.1, gamma=0.1)
        ),
        "ProbabilisticStructured": make_pipeline(
            StandardScaler(), ProbabilisticStructured(space=space, alpha=1e-3, max_iter=1000)
        ),
        "pairwise LogisticRegression": make_pipeline(StandardScaler(), PairwiseRanker()),
    }
    out("2. Rankings: glass, rank 6 glass types by likelihood (214 samples, 9 features; 5-fold CV)")
    tau: dict[str, list[float]] = {name: [] for name in models}
    for train, test in KFold(5, shuffle=True, random_state=0).split(X):
        for name, model in models.items():
            pred = clone(model).fit(X[train], Y[train]).predict(X[test])
            tau[name].append(float(np.mean(metrics.kendall_tau(Y[test], pred))))
    fit_s = alternated_fit_times({n: (m, X, Y) for n, m in models.items()}, rounds)
    for name in models:
        out(f"   {name:34s} Kendall τ {np.mean(tau[name]):.3f} ± {np.std(tau[name]):.3f}  fit {fit_s[name]:.3f} s")
    peer = "pairwise LogisticRegression"
    for ours in ("StructuredRidge (rbf)", "ProbabilisticStructured"):
        out(
            f"   {ours} against {peer}: {_relative(np.mean(tau[ours]), np.mean(tau[peer]), False, 'τ', 0.01)}, "
            f"{_speed(fit_s[ours], fit_s[peer])}."
        )
    out("")


def taxonomy(rounds: int, out: Callable[[str], None]) -> None:
    """A planted 3-level taxonomy (synthetic): predict a leaf's whole path; errors near the root cost more."""
    parent = np.array([-1] + [0] * 3 + [1 + i // 3 for i in range(9)] + [4 + i // 3 for i in range(27)])
    depth = np.repeat([0, 1, 2, 3], [1, 3, 9, 27])
    leaves = np.flatnonzero(depth == 3)
    rng = np.random.default_rng(0)
    centre = np.zeros((parent.size, 20))
    for v in range(1, parent.size):
        centre[v] = centre[parent[v]] + rng.normal(scale=[0, 1.5, 1.0, 0.7][depth[v]], size=20)
    y = np.repeat(leaves, 40)
    X = centre[y] + rng.normal(scale=1.5, size=(y.size, 20))
    train = rng.permutation(y.size) < y.size // 2
    paths = spaces.HierarchyPaths(parent, leaves_only=True)
    models = {
        "StructuredRidge (HierarchyPaths)": StructuredRidge(space=paths, alpha=1.0),
        "flat LogisticRegression": LogisticRegression(C=0.1, max_iter=1000),
    }
    out("3. Taxonomy paths: synthetic tree of 27 leaves under 3 levels (540 train / 540 test, 20 features)")
    fit_s = alternated_fit_times({n: (m, X[train], y[train]) for n, m in models.items()}, rounds)
    wrong_top: dict[str, float] = {}
    right_leaf: dict[str, float] = {}
    for name, model in models.items():
        pred = model.fit(X[train], y[train]).predict(X[~train])
        truth, guess = y[~train], pred
        leaf = np.mean(truth == guess)
        top = np.mean(parent[parent[truth]] != parent[parent[guess]])  # wrong at the first level
        wrong_top[name], right_leaf[name] = float(top), float(leaf)
        out(f"   {name:34s} right leaf {leaf:.3f}  wrong top-level branch {top:.3f}  fit {fit_s[name]:.3f} s")
    ours, peer = "StructuredRidge (HierarchyPaths)", "flat LogisticRegression"
    out(
        f"   StructuredRidge against {peer}: "
        f"{_relative(right_leaf[ours], right_leaf[peer], False, 'right leaves', 0.01)}, "
        f"{_relative(wrong_top[ours], wrong_top[peer], True, 'top-level mistakes', 0.005)}, "
        f"{_speed(fit_s[ours], fit_s[peer])}."
    )
    out("")


def routes(rounds: int, out: Callable[[str], None]) -> None:
    """Directed cycles on 8 places (the thesis' synthetic policy): StructuredRidge against copying
    the route of the nearest training traveller."""
    space = spaces.DirectedCycles(8)
    rng = np.random.default_rng(0)
    W = rng.uniform(-1, 1, size=(6, space.dim))
    X, Xt = rng.uniform(0, 1, size=(1000, 6)), rng.uniform(0, 1, size=(300, 6))
    Y, Yt = space.decode(X @ W), space.decode(Xt @ W)
    out("4. Routes: round trips over 8 places chosen by a hidden linear policy (1000 train / 300 test)")
    ours = StructuredRidge(space=space, alpha=1.0, fit_intercept=False)
    # A nearest-neighbour classifier over the distinct training routes: copy the nearest traveller's route.
    routes_seen, route_id = np.unique(Y, axis=0, return_inverse=True)
    peer = KNeighborsClassifier(n_neighbors=1)
    fit_s = alternated_fit_times({"ours": (ours, X, Y), "peer": (peer, X, route_id.ravel())}, rounds)
    pred = ours.fit(X, Y).predict(Xt)
    near = routes_seen[peer.fit(X, route_id.ravel()).predict(Xt)]
    rows = {"StructuredRidge (DirectedCycles)": pred, "nearest traveller's route": near}
    exact: dict[str, float] = {}
    for name, p in rows.items():
        exact[name] = float(np.mean(np.all(p == Yt, axis=1)))
        out(f"   {name:34s} exact route {exact[name]:.3f}  arcs right {space.score(Yt, p):.3f}")
    cosine = metrics.policy_cosine(W.T, ours.coef_, Xt)
    verdict = _relative(
        exact["StructuredRidge (DirectedCycles)"], exact["nearest traveller's route"], False, "exact routes", 0.01
    )
    out(
        f"   StructuredRidge is {verdict}; "
        f"its learned policy has cosine {cosine:.3f} with the hidden one; fit {fit_s['ours']:.3f} s "
        f"(the nearest-neighbour copy {fit_s['peer']:.4f} s)."
    )
    out("")


def main(quick: bool = False) -> None:
    """Run the tour and print it as plain text."""
    rounds = 1 if quick else 3
    print("combpred demo: one problem per family of structures, each against the model a user would otherwise pick.")
    print(f"Fit times are medians of {rounds} alternated round(s); hyper-parameters are fixed in advance, never tuned")
    print("on the test data. Each section ends with what wins, by how much, and where combpred is level or behind.")
    print("")
    for section in (multilabel, label_ranking, taxonomy, routes):
        section(rounds, print)
    print("The full comparisons, with hyper-parameters chosen by cross-validation in the same run: BENCHMARKS.md.")
