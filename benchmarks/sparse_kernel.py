"""Kernel models on wide sparse inputs: StructuredRidge (rbf, exact and Nyström) against KernelRidge.

Usage: python benchmarks/sparse_kernel.py [--quick] [--output BENCHMARKS.md]

Bag-of-words-like inputs: ``N_FEATURES`` columns, ``PER_ROW`` stored entries a row, as scipy.sparse
CSR for every model (never densified), 5 labels set by a planted rule on a few hundred columns.
Scoring sparse rows against a model's sparse support or landmarks takes their transpose: each call
into the core made it again, O(n_features), and the work estimate that sizes the chunks of a call
counted samples × features, so 5,000 rows of a model on 10⁶ features took 67 s in 5,000 calls (13 ms
a row; session 64). The peer is scikit-learn's KernelRidge (rbf, multi-output, one BLAS thread), as
one-vs-rest kernel ridge regression on the 0/1 targets; all three models use the same alpha and
gamma. Writes the ``sparse_kernel`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the peer on one BLAS thread, set before NumPy loads

import numpy as np
import scipy.sparse as sps
from _report import BENCHMARKS_MD, load_line, machine, sparse_rows, write_section
from combpred import StructuredRidge
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import hamming_loss

N_FEATURES, PER_ROW, TRAIN, TEST, SINGLE = 1_000_000, 20, 2_000, 5_000, 200
QUICK = 100_000, 20, 300, 500, 20
ALPHA, GAMMA, COMPONENTS = 1.0, 0.05, 300
COMMON = 50  # the shared columns, on which the labels depend


def timed(call, *args) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = call(*args)
    return time.perf_counter() - t0, out


def single_row_ms(predict, X: sps.csr_matrix, count: int) -> float:
    """Median milliseconds of ``predict`` on one CSR row, over ``count`` rows."""
    rows = [X[i : i + 1] for i in range(count)]
    times = []
    for row in rows:
        t0 = time.perf_counter()
        predict(row)
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10⁵ columns, 300 training rows, 500 test rows")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    n_features, per_row, train, test, single = QUICK if args.quick else (N_FEATURES, PER_ROW, TRAIN, TEST, SINGLE)
    rng = np.random.default_rng(0)
    X, Xt = sparse_rows(rng, train, n_features, per_row, COMMON), sparse_rows(rng, test, n_features, per_row, COMMON)
    W = rng.standard_normal((COMMON, 5))
    Y, Yt = ((X[:, :COMMON] @ W) > 0).astype(int), ((Xt[:, :COMMON] @ W) > 0).astype(int)
    models = [
        ("StructuredRidge (rbf)", StructuredRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA)),
        (
            f"StructuredRidge (rbf, Nyström {COMPONENTS})",
            StructuredRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA, n_components=COMPONENTS, random_state=0),
        ),
        ("KernelRidge (rbf)", KernelRidge(kernel="rbf", alpha=ALPHA, gamma=GAMMA)),
    ]
    lines = [
        "## Kernel models on wide sparse inputs (`benchmarks/sparse_kernel.py`)",
        "",
        machine(),
        "",
        f"{train:,} training and {test:,} test rows of {n_features:,} columns, {per_row} stored entries a row "
        f"(half among the first {COMMON} columns), scipy.sparse CSR for every model; 5 labels, each the sign of a "
        f"random linear function of the first {COMMON} columns. alpha = {ALPHA}, gamma = {GAMMA} for all three, "
        "not tuned: the losses show that the models learn, not which is better (their alphas weigh different "
        "objectives). "
        "KernelRidge predicts real scores, thresholded at ½ (one-vs-rest kernel ridge regression); StructuredRidge "
        f"decodes its scores. Single row: the median of {single} `predict` calls on one CSR row each. "
        "Ratios: StructuredRidge's time over KernelRidge's, measured in this run.",
        "",
        "| model | fit (s) | predict, all test rows (s) | single row (ms) | Hamming loss | fit / peer | predict / peer |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows, peer = [], None
    for name, model in models:
        fit_s, _ = timed(model.fit, X, Y)
        if name.startswith("KernelRidge"):
            predict = lambda A, m=model: (m.predict(A) > 0.5).astype(int)  # noqa: E731
        else:
            predict = model.predict
        predict(Xt[:1])  # a first call's set-up (the support's transpose) is part of no timing below
        predict_s, P = timed(predict, Xt)
        one = single_row_ms(predict, Xt, single)
        rows.append((name, fit_s, predict_s, one, hamming_loss(Yt, P)))
        if name.startswith("KernelRidge"):
            peer = (fit_s, predict_s)
        print(name, f"fit {fit_s:.3f} s, predict {predict_s:.3f} s, single row {one:.2f} ms", flush=True)
    for name, fit_s, predict_s, one, loss in rows:
        ratios = "— | —" if name.startswith("KernelRidge") else f"{fit_s / peer[0]:.2f}× | {predict_s / peer[1]:.2f}×"
        lines.append(f"| {name} | {fit_s:.3f} | {predict_s:.3f} | {one:.2f} | {loss:.4f} | {ratios} |")
    lines += ["", load_line()]
    write_section("sparse_kernel", "\n".join(lines), args.output, quick="small sizes" if args.quick else None)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
