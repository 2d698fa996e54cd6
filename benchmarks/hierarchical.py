"""Hierarchical classification: the thesis' taxonomy experiment on imclef07a and cellcycle_FUN.

Usage: python benchmarks/hierarchical.py [--quick] [--output BENCHMARKS.md]

imclef07a: one full-depth path per image, StructuredRidge(space=HierarchyPaths(parent,
leaves_only=True)) with y = leaf ids. cellcycle_FUN: several paths per gene, possibly stopping above
a leaf, StructuredRidge(space=Subtrees(parent)) with Y = 0/1 node rows. Baselines: a flat classifier
(multinomial logistic regression on the leaf ids; on cellcycle, per-node binary relevance closed
under parents), per-node binary relevance (one logistic regression per node, predictions as they
come) and hiclass' LocalClassifierPerParentNode when hiclass is installed (single-path data only).

Model selection uses the training data only: every grid point is fitted on a fitting part and scored by
the hierarchical loss on a validation part (imclef07a: a shuffled 70/30 split of Train, seed 0;
cellcycle_FUN: the official train / valid split); the chosen setting is refitted on all of it (imclef07a:
Train; cellcycle_FUN: train + valid) and scored once on the test split. Writes the ``hierarchical``
section of BENCHMARKS.md and benchmarks/figures/hierarchical.png.
"""

from __future__ import annotations

import argparse
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _hmc import PUBLISHED_SOURCE, auprc, published_line
from _report import BENCHMARKS_MD, machine, pyplot, save_figure, write_section
from combpred import StructuredRidge, datasets, spaces
from combpred.metrics import hierarchical_f1, hierarchical_loss
from sklearn.base import BaseEstimator, clone
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TARGETS = (
    "Target (issue: StructuredRidge at full strength): StructuredRidge has the lowest hierarchical loss on both "
    "data sets."
)
RBF_MAX_TRAIN = 4000  # imclef07a's RBF model is fitted on a random subsample of this many rows (m × m kernel)
# ... and again on every row through a Nyström map of this many landmarks (a single fit on the 7,000 selection
# rows took 70-80 s beside other work; with alpha = 0.002 its valid ℓ_H was 0.270 against the subsample's 0.279)
NYSTROM_COMPONENTS = 2000
TOL = 1e-5  # CG tolerance of every StructuredRidge fit here (the default 1e-8 costs 2× the time for no change)


# --------------------------------------------------------------------------------------------
# node rows and losses
# --------------------------------------------------------------------------------------------
def path_rows(node_ids: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """0/1 node rows of single paths: each node id with all its ancestors."""
    rows = np.zeros((len(node_ids), parent.size), dtype=np.int64)
    idx, cur = np.arange(len(node_ids)), np.asarray(node_ids, dtype=np.int64)
    while idx.size:
        rows[idx, cur] = 1
        cur = parent[cur]
        keep = cur >= 0
        idx, cur = idx[keep], cur[keep]
    return rows


def close_under_parents(rows: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Add every predicted node's ancestors (parent[v] < v: children are visited after parents in reverse)."""
    out = rows.copy()
    for v in range(parent.size - 1, 0, -1):
        out[:, parent[v]] |= out[:, v]
    return out


def losses(T: np.ndarray, P: np.ndarray, parent: np.ndarray) -> dict[str, float]:
    """0/1 loss, Hamming loss over the real nodes (not the virtual root), the hierarchical loss and
    hierarchical F1 (micro, Kiritchenko et al.)."""
    return {
        "zero_one": float(np.mean(np.any(T != P, axis=1))),
        "hamming": float(np.mean(T[:, 1:] != P[:, 1:])),
        "hier": float(hierarchical_loss(T, P, parent)),
        "hf1": float(hierarchical_f1(T, P, parent)),
        "size": float(P[:, 1:].sum(axis=1).mean()),
    }


# --------------------------------------------------------------------------------------------
# models: each takes (X, Y rows) and predicts node rows
# --------------------------------------------------------------------------------------------
class Subsampled(BaseEstimator):
    """Fit ``estimator`` on at most ``max_rows`` random rows (seeded), predict with it."""

    def __init__(self, estimator: Any, max_rows: int, random_state: int = 0):
        self.estimator = estimator
        self.max_rows = max_rows
        self.random_state = random_state

    def fit(self, X, y):
        rows = np.arange(X.shape[0])
        if X.shape[0] > self.max_rows:
            rows = np.sort(np.random.default_rng(self.random_state).choice(X.shape[0], self.max_rows, replace=False))
        self.estimator_ = clone(self.estimator).fit(X[rows], y[rows])
        return self

    def predict(self, X):
        return self.estimator_.predict(X)


@dataclass
class Model:
    """A model family: how to build it for a grid point, how to turn targets and predictions into rows.

    ``outputs`` maps the reported name to a post-processing of the predicted rows; models that share a
    fit (binary relevance with and without the closure) are selected separately for each output.
    """

    make: Callable[[dict], Any]
    grid: list[dict]
    target: Callable[[np.ndarray], Any]  # node rows -> what fit expects
    rows: Callable[[Any], np.ndarray]  # predict output -> node rows
    outputs: dict[str, Callable[[np.ndarray], np.ndarray]]
    scores: Callable[[Any, np.ndarray], np.ndarray] | None = None  # (fitted, X) -> node scores (n, n_nodes)


@dataclass
class Outcome:
    name: str
    params: dict
    valid_hier: float
    test: dict[str, float]
    fit_s: float
    note: str = ""


@dataclass
class Study:
    name: str
    describe: str
    outcomes: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _preprocess(with_imputer: bool):
    steps = [SimpleImputer(strategy="mean")] if with_imputer else []
    return [*steps, StandardScaler()]


def _grid(**axes: list) -> list[dict]:
    out = [{}]
    for key, values in axes.items():
        out = [{**o, key: v} for o in out for v in values]
    return out


def _node_names_to_ids(pred: np.ndarray, index: dict[str, int]) -> np.ndarray:
    """hiclass predictions (rows of level labels, "" past the end) -> the deepest predicted node id."""
    out = np.zeros(pred.shape[0], dtype=np.int64)
    for i, row in enumerate(pred):
        labels = [str(v) for v in row if str(v) not in ("", "nan")]
        out[i] = index[labels[-1]] if labels else 0
    return out


def best_path_scores(U: np.ndarray, parent: np.ndarray, is_leaf: np.ndarray) -> np.ndarray:
    """For scores U in HierarchyPaths(leaves_only=True) coordinates: per node, the score ⟨u, ψ(y)⟩ of the best
    root-to-leaf path through it (parent[v] < v). The decoded path is where this equals the overall best."""
    n = parent.size
    h, best = U.copy(), np.full(U.shape, -np.inf)
    for v in range(n - 1, -1, -1):  # children (larger ids) are final before their parent
        if not is_leaf[v]:
            h[:, v] += best[:, v]
        if parent[v] >= 0:
            best[:, parent[v]] = np.maximum(best[:, parent[v]], h[:, v])
    out = h.copy()
    for v in range(1, n):
        out[:, v] = out[:, parent[v]] - best[:, parent[v]] + h[:, v]
    return out


def best_subtree_scores(U: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """For scores U in Subtrees coordinates: per node, the score of the best rooted subtree containing it
    (parent[v] < v, one root). The decoded subtree is where this equals the overall best."""
    g = U.copy()
    for v in range(parent.size - 1, 0, -1):  # best gain of a subtree hanging at v
        g[:, parent[v]] += np.maximum(g[:, v], 0.0)
    out = g.copy()
    for v in range(1, parent.size):  # forcing v in costs its gain's shortfall below zero
        out[:, v] = out[:, parent[v]] + np.minimum(g[:, v], 0.0)
    return out


def _br_scores(fitted: Any, X: np.ndarray) -> np.ndarray:
    """Binary relevance: P(node) per real node, the virtual root first (certain)."""
    P = fitted.predict_proba(X)
    return np.c_[np.ones(len(P)), P]


def imclef_models(data, quick: bool) -> tuple[dict[str, Model], list[str]]:
    parent = data.parent
    space = spaces.HierarchyPaths(parent, leaves_only=True)
    leaves = np.flatnonzero(data.is_leaf)
    leaf_of = lambda R: leaves[R[:, leaves].argmax(axis=1)]  # noqa: E731  (rows of full-depth paths -> leaf id)
    as_rows = lambda ids: path_rows(ids, parent)  # noqa: E731
    ident = {"": lambda R: R}
    small = quick
    sr = {"tol": TOL, "max_iter": 30 if quick else 1000}  # quick: a smoke run, not converged
    rbf_rows = 300 if quick else RBF_MAX_TRAIN
    nystrom = 50 if quick else NYSTROM_COMPONENTS
    models = {
        "StructuredRidge (linear)": Model(
            lambda p: make_pipeline(*_preprocess(False), StructuredRidge(space=space, **sr, **p)),
            _grid(alpha=[1.0] if small else [1.0, 10.0, 100.0]),
            leaf_of,
            as_rows,
            ident,
            lambda fitted, X: best_path_scores(fitted.decision_function(X), parent, data.is_leaf),
        ),
        f"StructuredRidge (rbf, {rbf_rows}-row subsample)": Model(
            lambda p: Subsampled(
                make_pipeline(*_preprocess(False), StructuredRidge(space=space, kernel="rbf", **sr, **p)), rbf_rows
            ),
            _grid(alpha=[0.1], gamma=[1 / 80])
            if small
            else _grid(alpha=[0.01, 0.03, 0.1], gamma=[0.5 / 80, 1 / 80, 2 / 80]),
            leaf_of,
            as_rows,
            ident,
            lambda fitted, X: best_path_scores(fitted.estimator_.decision_function(X), parent, data.is_leaf),
        ),
        f"StructuredRidge (rbf, Nyström map of {nystrom} landmarks, every row)": Model(
            lambda p: make_pipeline(
                *_preprocess(False),
                StructuredRidge(space=space, kernel="rbf", n_components=nystrom, random_state=0, **sr, **p),
            ),
            _grid(alpha=[0.1], gamma=[1 / 80])
            if small
            else _grid(alpha=[0.001, 0.003, 0.01], gamma=[0.5 / 80, 1 / 80]),
            leaf_of,
            as_rows,
            ident,
            lambda fitted, X: best_path_scores(fitted.decision_function(X), parent, data.is_leaf),
        ),
        "flat LogisticRegression (leaf ids)": Model(
            lambda p: make_pipeline(*_preprocess(False), LogisticRegression(max_iter=1000, **p)),
            _grid(C=[1.0] if small else [0.01, 0.1, 1.0]),
            leaf_of,
            as_rows,
            ident,
            lambda fitted, X: fitted.predict_proba(X) @ path_rows(fitted.classes_, parent),  # P(node) = Σ leaves below
        ),
        "binary relevance (LogisticRegression per node)": Model(
            lambda p: make_pipeline(*_preprocess(False), OneVsRestClassifier(LogisticRegression(max_iter=1000, **p))),
            _grid(C=[1.0] if small else [0.01, 0.1, 1.0]),
            lambda R: R[:, 1:],
            lambda P: np.c_[np.ones(len(P), dtype=np.int64), P],
            {"": lambda R: R, " + closed under parents": lambda R: close_under_parents(R, parent)},
            _br_scores,
        ),
    }
    notes = []
    try:
        from hiclass import LocalClassifierPerParentNode
    except ImportError:
        notes.append("hiclass is not installed: LocalClassifierPerParentNode skipped (`pip install hiclass`).")
    else:
        names = np.array(data.node_names, dtype=object)
        index = {n: i for i, n in enumerate(data.node_names)}
        depth = int(data.depth.max())

        def level_labels(R: np.ndarray) -> np.ndarray:
            out = np.full((R.shape[0], depth), "", dtype=object)
            for i, r in enumerate(R):
                nodes = np.flatnonzero(r[1:]) + 1  # preorder ids: ancestors first
                out[i, : len(nodes)] = names[nodes]
            return out

        models["hiclass LocalClassifierPerParentNode (LogisticRegression)"] = Model(
            lambda p: make_pipeline(
                *_preprocess(False),
                LocalClassifierPerParentNode(local_classifier=LogisticRegression(max_iter=1000, **p)),
            ),
            _grid(C=[1.0] if small else [0.01, 0.1, 1.0]),
            level_labels,
            lambda pred: path_rows(_node_names_to_ids(np.asarray(pred), index), parent),
            ident,
        )
    return models, notes


def cellcycle_models(data, quick: bool) -> tuple[dict[str, Model], list[str]]:
    parent = data.parent
    space = spaces.Subtrees(parent)
    ident = {"": lambda R: R}
    small = quick
    sr = {"tol": TOL, "max_iter": 30 if quick else 1000}  # quick: a smoke run, not converged
    same = lambda R: R  # noqa: E731
    models = {
        "StructuredRidge (linear)": Model(
            lambda p: make_pipeline(*_preprocess(True), StructuredRidge(space=space, **sr, **p)),
            _grid(alpha=[1.0] if small else [1.0, 100.0, 1e4, 1e6]),
            same,
            same,
            ident,
            lambda fitted, X: best_subtree_scores(fitted.decision_function(X), parent),
        ),
        "StructuredRidge (rbf)": Model(
            lambda p: make_pipeline(*_preprocess(True), StructuredRidge(space=space, kernel="rbf", **sr, **p)),
            _grid(alpha=[10.0], gamma=[1 / 77])
            if small
            else _grid(alpha=[1.0, 10.0, 100.0, 1000.0, 1e4], gamma=[0.3 / 77, 1 / 77]),
            same,
            same,
            ident,
            lambda fitted, X: best_subtree_scores(fitted.decision_function(X), parent),
        ),
        "binary relevance (LogisticRegression per node)": Model(
            lambda p: make_pipeline(*_preprocess(True), OneVsRestClassifier(LogisticRegression(max_iter=1000, **p))),
            _grid(C=[1.0] if small else [0.001, 0.01, 0.1, 1.0]),
            lambda R: R[:, 1:],
            lambda P: np.c_[np.ones(len(P), dtype=np.int64), P],
            {"": lambda R: R, " + closed under parents (flat baseline)": lambda R: close_under_parents(R, parent)},
            _br_scores,
        ),
    }
    notes = [
        "hiclass LocalClassifierPerParentNode is single-path; hiclass 5.0.8 has no multi-label variant, so it is "
        "not run on cellcycle_FUN (genes have several paths).",
        uniform_measure_note(space, data.Y_train, data.depth),
    ]
    return models, notes


def uniform_measure_note(space: spaces.Subtrees, R: np.ndarray, depth: np.ndarray) -> str:
    """How far the uniform measure over rooted subtrees, against which StructuredRidge's loss ranks each
    gene's node set, lies from the node sets genes have."""
    mu = space.mean()  # a node's probability of being in a uniformly drawn rooted subtree
    levels = range(1, int(depth.max()) + 1)
    return (
        f"StructuredRidge's loss ranks each gene's subtree above every other rooted subtree, 10^{space.log_count() / np.log(10):.0f} "
        f"of them, weighted alike. A uniformly drawn one holds {mu[1:].sum():.0f} of the {mu.size - 1} nodes on "
        f"average (`Subtrees.mean()`), a gene's {R[:, 1:].sum(axis=1).mean():.1f}; per depth 1–{levels[-1]}, the "
        "uniform inclusion probability against the genes' frequency: "
        + ", ".join(f"{mu[depth == k].mean():.2f}/{R[:, depth == k].mean():.3f}" for k in levels)
        + ". Every gene's set is small, so most of the fit goes to separating small node sets from near-complete "
        "trees, the same for every gene, and little gene-specific signal is left in the node scores (see AU(PRC))."
    )


# --------------------------------------------------------------------------------------------
# selection on validation, refit, test
# --------------------------------------------------------------------------------------------
def evaluate(study: Study, models: dict[str, Model], parts, parent: np.ndarray) -> None:
    (X_fit, R_fit), (X_val, R_val), (X_all, R_all), (X_test, R_test) = parts
    for family, model in models.items():
        t0 = time.perf_counter()
        scores: dict[str, list[tuple[float, dict]]] = {suffix: [] for suffix in model.outputs}
        for params in model.grid:
            est = model.make(params).fit(X_fit, model.target(R_fit))
            P = model.rows(est.predict(X_val))
            for suffix, post in model.outputs.items():
                scores[suffix].append((float(hierarchical_loss(R_val, post(P), parent)), params))
        chosen = {suffix: min(s, key=lambda t: t[0]) for suffix, s in scores.items()}
        refits: dict[str, Any] = {}
        for suffix, (val, params) in chosen.items():
            key = repr(params)
            if key not in refits:
                refits[key] = model.make(params).fit(X_all, model.target(R_all))
            P = model.outputs[suffix](model.rows(refits[key].predict(X_test)))
            test = losses(R_test, P, parent)
            test["auprc"] = float("nan")
            if model.scores is not None:
                S = model.scores(refits[key], X_test)
                test["auprc"] = auprc(R_test, S)
            test["root_only"] = bool(np.all(P[:, 1:] == 0))
            study.outcomes.append(Outcome(family + suffix, params, val, test, time.perf_counter() - t0))
            print(f"  {family + suffix}: {params} valid ℓ_H {val:.4f} test {study.outcomes[-1].test}", flush=True)


def constant_outcome(R_all: np.ndarray, R_test: np.ndarray, parent: np.ndarray) -> Outcome:
    """The constant predictor: every instance scored by the training node frequencies (AU(PRC)), and the
    nodes at least half the training instances carry as its prediction (closed under parents, as a
    parent is at least as frequent as its child)."""
    freq = R_all.mean(axis=0)
    P = np.tile((freq >= 0.5).astype(R_test.dtype), (len(R_test), 1))
    P[:, 0] = 1
    test = losses(R_test, P, parent)
    test["auprc"] = auprc(R_test, np.tile(freq, (len(R_test), 1)))
    test["root_only"] = bool(np.all(P[:, 1:] == 0))
    return Outcome("(reference) constant: training node frequencies", {}, float("nan"), test, 0.0)


def run_imclef(quick: bool) -> Study:
    data = datasets.load_hierarchical("imclef07a")
    parent = data.parent
    X, y, Xt, yt = data.X_train, data.y_train, data.X_test, data.y_test
    if quick:
        keep = np.random.default_rng(0).permutation(len(y))[:800]
        X, y = X[keep], y[keep]
        keep = np.random.default_rng(1).permutation(len(yt))[:200]
        Xt, yt = Xt[keep], yt[keep]
    fit, val = train_test_split(
        np.arange(len(y)), test_size=0.3, shuffle=True, random_state=0
    )  # Train is sorted by class
    R, Rt = path_rows(y, parent), path_rows(yt, parent)
    study = Study(
        "imclef07a",
        f"imclef07a: {X.shape[1]} features, a tree of {parent.size - 1} nodes (+ virtual root), depth "
        f"{int(data.depth.max())}, {int(data.is_leaf.sum())} leaves; one full-depth path per image. Train {len(y)} "
        f"(selection: shuffled 70/30 split, seed 0, {len(fit)} / {len(val)}), test {len(yt)}.",
    )
    models, study.notes = imclef_models(data, quick)
    evaluate(study, models, ((X[fit], R[fit]), (X[val], R[val]), (X, R), (Xt, Rt)), parent)
    study.outcomes.append(constant_outcome(R, Rt, parent))
    return study


def run_cellcycle(quick: bool) -> Study:
    data = datasets.load_hierarchical("cellcycle_FUN")
    parent = data.parent
    parts = [(data.X_train, data.Y_train), (data.X_valid, data.Y_valid), (data.X_test, data.Y_test)]
    if quick:
        parts = [(X[:300], Y[:300]) for X, Y in parts]
    (X, R), (Xv, Rv), (Xt, Rt) = parts
    X_all, R_all = np.vstack([X, Xv]), np.vstack([R, Rv])
    study = Study(
        "cellcycle_FUN",
        f"cellcycle_FUN: {X.shape[1]} features (missing values imputed by the training mean inside each pipeline), "
        f"the FunCat tree of {parent.size - 1} nodes (+ virtual root), depth {int(data.depth.max())}; several "
        f"paths per gene, {R[:, 1:].sum(axis=1).mean():.1f} nodes on average. Train {len(R)} / valid {len(Rv)} "
        f"(selection), refit on train + valid, test {len(Rt)}.",
    )
    models, study.notes = cellcycle_models(data, quick)
    evaluate(study, models, ((X, R), (Xv, Rv), (X_all, R_all), (Xt, Rt)), parent)
    empty = np.zeros_like(Rt)
    empty[:, 0] = 1
    reference = {**losses(Rt, empty, parent), "auprc": float("nan"), "root_only": True}
    study.outcomes.append(Outcome("(reference) predict the root only", {}, float("nan"), reference, 0))
    study.outcomes.append(constant_outcome(R_all, Rt, parent))
    return study


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
def _fmt(params: dict) -> str:
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()) or "—"


def report(studies: list[Study], quick: bool, seconds: float) -> str:
    lines = [
        "## Hierarchical classification: imclef07a and cellcycle_FUN (`benchmarks/hierarchical.py`)",
        "",
        f"Measured on: {machine()}."
        + (" **Quick smoke run (subsets, one grid point), not the benchmark.**" if quick else ""),
        "Hyper-parameters of every model are chosen by the hierarchical loss ℓ_H on a validation part of the "
        "training data, then refitted on all training data and scored once on the test split. Losses per test "
        "instance: 0/1 (whole node set wrong), Hamming over the real nodes (the virtual root excluded), ℓ_H "
        "(`combpred.metrics.hierarchical_loss`, unit node costs: a mistake is charged only where every ancestor "
        "is right); hierarchical F1 (`combpred.metrics.hierarchical_f1`: node sets augmented with their "
        "ancestors, counts pooled over instances, the virtual root not counted; higher is better). "
        '"nodes" is the mean number of predicted nodes. Inputs are standardised inside each '
        f"pipeline; StructuredRidge runs CG to tolerance {TOL:g}. Per-node binary relevance can predict a node "
        "without its parent; its rows are scored as they are, and again after closing them under parents. "
        "AU(PRC) ranks all (test instance, node) pairs by the model's node scores — for StructuredRidge the score "
        "⟨u(x), ψ(y)⟩ of the best structure y containing the node (computed from `decision_function` by the "
        "tree dynamic programme; the decoded structure holds exactly the nodes where it is largest), binary "
        "relevance's probabilities, the flat model's leaf probabilities summed over each node's leaves — and is "
        "not used for selection; it is the usual summary "
        "for these Clus HMC sets and shows the ranking quality behind the thresholded predictions.",
    ]
    verdicts = []
    for study in studies:
        lines += ["", f"### {study.name}", "", study.describe, ""]
        lines += [
            "| model | chosen on validation | valid ℓ_H | 0/1 loss | Hamming loss | ℓ_H | hierarchical F1 | nodes "
            "| micro AU(PRC) | selection + refit (s) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        ranked = [o for o in study.outcomes if not o.name.startswith("(reference)")]
        best = min(o.test["hier"] for o in ranked)
        for o in study.outcomes:
            hier = f"**{o.test['hier']:.4f}**" if o.test["hier"] == best and o in ranked else f"{o.test['hier']:.4f}"
            val = "" if np.isnan(o.valid_hier) else f"{o.valid_hier:.4f}"
            auprc = "" if np.isnan(o.test["auprc"]) else f"{o.test['auprc']:.4f}"
            nodes = f"{o.test['size']:.2f}" + (" (root only)" if o.test["root_only"] and o in ranked else "")
            lines.append(
                f"| {o.name} | {_fmt(o.params)} | {val} | {o.test['zero_one']:.4f} | {o.test['hamming']:.5f} | "
                f"{hier} | {o.test['hf1']:.4f} | {nodes} | {auprc} | {o.fit_s:.1f} |"
            )
        lines += ["", *[f"- {n}" for n in study.notes]]
        scored = [o for o in ranked if not np.isnan(o.test["auprc"])]
        top_sr = max((o for o in scored if o.name.startswith("StructuredRidge")), key=lambda o: o.test["auprc"])
        top_peer = max((o for o in scored if not o.name.startswith("StructuredRidge")), key=lambda o: o.test["auprc"])
        lines.append(published_line(study.name, {o.name: o.test["auprc"] for o in (top_sr, top_peer)}))
        ours = min((o for o in ranked if o.name.startswith("StructuredRidge")), key=lambda o: o.test["hier"])
        theirs = min((o for o in ranked if not o.name.startswith("StructuredRidge")), key=lambda o: o.test["hier"])
        ok = ours.test["hier"] <= theirs.test["hier"]
        verdicts.append(ok)
        lines.append(
            f"- lowest ℓ_H: StructuredRidge {ours.test['hier']:.4f} ({ours.name}) vs best baseline "
            f"{theirs.test['hier']:.4f} ({theirs.name}): **{'met' if ok else 'missed'}** "
            f"(difference {ours.test['hier'] - theirs.test['hier']:+.4f})."
        )
        if ours.test["root_only"]:
            lines.append(
                "- **but vacuously**: the selected StructuredRidge predicts the root alone for every test instance "
                "(its α is so large that no node scores above zero), which is exactly the trivial reference. With unit "
                "node costs, an extra node costs 1 unless it is right, and a gene's ≈ 9 true nodes hang below only "
                "≈ 2.5 top-level classes, so empty predictions beat every informative one; validation-selected "
                "models of every family drift there. The AU(PRC) column compares the node rankings instead."
            )
    lines += [
        "",
        f"- target on both sets: **{'met' if all(verdicts) else 'missed'}**; whole script: {seconds / 60:.1f} min.",
        "",
        PUBLISHED_SOURCE
        + " On cellcycle_FUN the models chosen here by ℓ_H are not the best node rankers; the reference_measures "
        "section chooses them by AU(PRC).",
    ]
    if not quick:
        lines += ["", "![Test losses per model](benchmarks/figures/hierarchical.png)"]
    lines += ["", TARGETS]
    return "\n".join(lines)


def figure(studies: list[Study]) -> None:
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(studies), figsize=(6.5 * len(studies), 4.5), squeeze=False, layout="constrained")
    for ax, study in zip(axes[0], studies, strict=True):
        names = [o.name for o in study.outcomes]
        y = np.arange(len(names))
        ax.barh(y - 0.2, [o.test["hier"] for o in study.outcomes], 0.4, label="hierarchical loss ℓ_H")
        ax.barh(y + 0.2, [o.test["zero_one"] for o in study.outcomes], 0.4, label="0/1 loss")
        ax.set_yticks(y, [textwrap.fill(n, 28) for n in names], fontsize=7)
        ax.invert_yaxis()
        ax.set_title(f"{study.name}: test losses (lower is better)")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=8)
    path = save_figure(fig, "hierarchical")
    plt.close(fig)
    print(f"figure: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small subsets and one grid point per model")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", message="Label not .* is present in all training examples")
    warnings.filterwarnings("ignore", message="Label .* is present in all training examples")
    t0 = time.perf_counter()
    studies = []
    for run in (run_imclef, run_cellcycle):
        t1 = time.perf_counter()
        studies.append(run(args.quick))
        print(f"{studies[-1].name}: {time.perf_counter() - t1:.0f} s", flush=True)
    body = report(studies, args.quick, time.perf_counter() - t0)
    write_section("hierarchical", body, args.output)
    print(body)
    if not args.quick:
        figure(studies)


if __name__ == "__main__":
    main()
