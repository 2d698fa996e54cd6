"""Fit time of StructuredRidge's reference measures: the empirical mixture against the uniform measure.

Usage: python benchmarks/reference_fit_time.py [--quick] [--output BENCHMARKS.md]

The uniform measure's covariance has a closed-form spectrum, which the CG preconditioner inverts
block by block; a mixture with the empirical measure of the training structures
(``empirical_weight > 0``) has none, and its preconditioner inverts the Kronecker product of the Gram
matrix G (k × k, k = features + 1) with the average curvature M̄ (d × d). Until this benchmark was
written that preconditioner eigendecomposed G with gonum, which grows faster than k³ once G leaves
the cache: on bibtex (k = 1,837) the fit took 157 s against 11 s with the uniform measure, and on
calhousing's Nyström map (k = 1,501) 18–38 s against 4–7 s. Now it takes Cholesky inverses of
2αE + ν_b G instead (core/ridge/kroncholesky.go, docs/design.md §2). This script measures both
measures on the data where that matters: the three sparse text sets (linear, sparse X) and a
calhousing training fold through the Nyström map of the label-ranking benchmark, and synthetic
data with many labels, where the mixture's S is a dense d × d matrix that CG once applied to every
example's scores (m·d² per iteration: 15× the uniform fit on 1,000 labels, 77× on 2,000) and now
applies to the k rows of G·V (core/ridge/referencesystem.go), with one-vs-rest LogisticRegression
(the text sets' usual peer, benchmarks/sparse_text.py) for scale. Fits alternate
(uniform, mixture, peer, ...) over ``ROUNDS`` rounds; medians. Writes the ``reference_fit_time``
section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, load_line, machine, write_section
from combpred import StructuredRidge, datasets, spaces
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

ROUNDS = 3
WEIGHT = 0.3  # the mixture weight of the empirical measure
TEXT_SETS = ("medical", "enron", "bibtex")
CALHOUSING_ROWS = 12_384  # an inner training fold of the label-ranking benchmark
NYSTROM = {"kernel": "rbf", "gamma": 10 / 4, "n_components": 1500, "random_state": 0, "tol": 1e-5}


def text(name: str, quick: bool):
    bunch = datasets.load_multilabel(name, subset="train")
    X, Y = bunch.X.tocsr(), np.asarray(bunch.Y.toarray(), dtype=np.int64)
    if quick:
        X, Y = X[:150], Y[:150]
    Y = Y[:, Y.sum(axis=0) > 0]
    return X, Y


def calhousing(quick: bool):
    X, Y = datasets.load_label_ranking("calhousing", return_X_y=True)
    rows = 300 if quick else CALHOUSING_ROWS
    return StandardScaler().fit_transform(X[:rows]), Y[:rows]


def many_labels(labels: int, rows: int, features: int = 20, seed: int = 0):
    """Gaussian X and labels decoded from 3·XW + noise: about half of them on in every row."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features))
    W = rng.standard_normal((features, labels)) / np.sqrt(features)
    return X, (3 * X @ W + rng.standard_normal((rows, labels)) > 0).astype(np.int64)


def timed(make, X, Y):
    t0 = time.perf_counter()
    model = make().fit(X, Y)
    return time.perf_counter() - t0, model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="150-row subsets, a 300-row calhousing, one round")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    rounds = 1 if args.quick else ROUNDS
    cases = []
    for name in TEXT_SETS:
        X, Y = text(name, args.quick)
        cases.append(
            (
                f"{name} (linear, sparse X)",
                X,
                Y,
                lambda w: StructuredRidge(space="multilabel", alpha=1.0, solver="cg", empirical_weight=w),
                lambda: OneVsRestClassifier(LogisticRegression(C=1.0, solver="liblinear")),
            )
        )
    X, Y = calhousing(args.quick)
    nystrom = dict(NYSTROM, n_components=50) if args.quick else NYSTROM
    cases.append(
        (
            f"calhousing, {X.shape[0]:,} rows (rbf, Nyström {nystrom['n_components']})",
            X,
            Y,
            lambda w: StructuredRidge(space=spaces.Permutations(4), alpha=1.0, empirical_weight=w, **nystrom),
            None,
        )
    )
    for labels in (50,) if args.quick else (500, 2000):
        X, Y = many_labels(labels, 150 if args.quick else 2000)
        cases.append(
            (
                f"synthetic, {labels:,} labels (linear, dense X)",
                X,
                Y,
                lambda w: StructuredRidge(space="multilabel", alpha=1.0, empirical_weight=w),
                lambda: OneVsRestClassifier(LogisticRegression(C=1.0, solver="liblinear")),
            )
        )
    lines = [
        "## Fit time of the reference measures (`benchmarks/reference_fit_time.py`)",
        "",
        machine(),
        "",
        f"StructuredRidge with the uniform measure (`empirical_weight=0`) and the mixture "
        f"(1 − w)·uniform + w·empirical (`empirical_weight={WEIGHT}`), alpha = 1, CG to its default tolerance "
        "(calhousing: 1e-5, as in the label-ranking benchmark); one-vs-rest LogisticRegression (liblinear, C = 1) "
        f"for scale. Medians of {rounds} alternated rounds; NumPy's BLAS on one thread, combpred's core on all "
        "cores. k: coefficients per output coordinate (features + 1, or Nyström components + 1); d: output "
        "coordinates.",
        "",
        "| data | rows × k | d | uniform fit (s) | mixture fit (s) | mixture / uniform | CG iterations (uniform / mixture) "
        "| OvR LogisticRegression fit (s) |",
        "|---|---|---:|---:|---:|---:|---|---:|",
    ]
    ratios = {}
    for label, X, Y, ours, peer in cases:
        times = {"uniform": [], "mixture": [], "peer": []}
        iters = {}
        with threadpool_limits(1, user_api="blas"):
            for _ in range(rounds):
                for key, w in (("uniform", 0.0), ("mixture", WEIGHT)):
                    s, model = timed(lambda w=w, ours=ours: ours(w), X, Y)
                    times[key].append(s)
                    iters[key] = model.n_iter_
                if peer is not None:
                    times["peer"].append(timed(peer, X, Y)[0])
        med = {key: float(np.median(v)) if v else float("nan") for key, v in times.items()}
        ratios[label] = med["mixture"] / med["uniform"]
        k = model.n_components_ + 1 if getattr(model, "n_components_", None) else X.shape[1] + 1
        peer_cell = f"{med['peer']:.2f}" if peer is not None else "—"
        lines.append(
            f"| {label} | {X.shape[0]:,} × {k:,} | {model.space_.dim} | {med['uniform']:.2f} | {med['mixture']:.2f} | "
            f"{ratios[label]:.1f}× | {iters['uniform']} / {iters['mixture']} | {peer_cell} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        load_line(),
        "",
        f"- Largest mixture / uniform ratio: {max(ratios.values()):.1f}× ({max(ratios, key=ratios.get)}). Before "
        "the Cholesky form (measured by hand beside another benchmark): bibtex 157 s against 11 s (14×), "
        "calhousing 18–38 s against 4–7 s. Before the Gram form of H (session 50, by hand, 2,000 × 21): 15× on "
        "1,000 labels, 77× on 2,000.",
    ]
    if args.quick:
        lines += ["", "Quick smoke run (subsets): not the measurement."]
    write_section("reference_fit_time", "\n".join(lines), args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
