"""Streaming with partial_fit: StructuredRidge's exact update against SGD's one pass.

Usage: python benchmarks/partial_fit.py [--quick] [--output BENCHMARKS.md]

StructuredRidge's partial_fit with the exact solver keeps sufficient statistics and solves the
whole system at every call, (k·d)³/3 operations for k = features + 1 and d labels, so that any
sequence of chunks gives the model fit gives on all of them. The peer a scikit-learn user would
stream multi-label data with is MultiOutputClassifier(SGDClassifier).partial_fit, one SGD pass over
each chunk (an approximation that depends on the chunks' order and size). Both are timed in this
run, alternated; NumPy's BLAS on one thread, combpred's core on all cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import StructuredRidge
from sklearn.linear_model import SGDClassifier
from sklearn.multioutput import MultiOutputClassifier
from threadpoolctl import threadpool_limits


def data(m: int, n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    W = rng.normal(size=(n, d)) / np.sqrt(n)
    return X, (X @ W + 0.5 * rng.normal(size=(m, d)) > 0.5).astype(int)


def stream(model, X: np.ndarray, Y: np.ndarray, chunk: int, **kw) -> float:
    t0 = time.perf_counter()
    for lo in range(0, len(X), chunk):
        model.partial_fit(X[lo : lo + chunk], Y[lo : lo + chunk], **kw)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes, short streams")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    shapes = [(20, 5), (60, 20)] if args.quick else [(20, 5), (60, 20), (300, 10)]
    m = 400 if args.quick else 2000
    chunks = [100] if args.quick else [10, 100]
    rounds = 1 if args.quick else 3
    rows = []
    with threadpool_limits(1):
        StructuredRidge(solver="exact").partial_fit(*data(50, 5, 3, 0))  # untimed: the library's first load
        for n, d in shapes:
            X, Y = data(m, n, d, n + d)
            fit_times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                full = StructuredRidge(solver="exact").fit(X, Y)
                fit_times.append(time.perf_counter() - t0)
            for chunk in chunks:
                ours, peer = [], []
                for _ in range(rounds):
                    model = StructuredRidge(solver="exact")
                    ours.append(stream(model, X, Y, chunk))
                    sgd = MultiOutputClassifier(SGDClassifier(random_state=0))
                    peer.append(stream(sgd, X, Y, chunk, classes=[np.array([0, 1])] * d))
                calls = -(-m // chunk)
                o, p, f = (float(np.median(v)) for v in (ours, peer, fit_times))
                gap = np.abs(model.coef_ - full.coef_).max() / np.abs(full.coef_).max()
                rows.append(
                    f"| {m:,} × {n} | {d} | {(n + 1) * d:,} | {chunk} | {calls} | {o:.2f} | {o / calls * 1e3:.1f} | "
                    f"{f * 1e3:.1f} | {gap:.0e} | {p:.2f} | {o / p:.1f}× |"
                )
                print(rows[-1], flush=True)
    body = "\n".join(
        [
            "## Streaming with partial_fit: the exact update (`benchmarks/partial_fit.py`)",
            "",
            machine(),
            "",
            "StructuredRidge(solver='exact').partial_fit over the rows in chunks, against fit on all of them "
            "(the coefficients' largest difference, relative to the largest coefficient: the exact update's promise) "
            "and against MultiOutputClassifier(SGDClassifier()).partial_fit, one SGD pass a chunk, the stream a "
            f"scikit-learn user would write. Gaussian inputs, labels from a noisy linear model; medians of {rounds} "
            "alternated rounds; NumPy's BLAS on one thread, combpred's core on all cores.",
            "",
            "| rows × features | labels d | unknowns (k·d) | chunk | calls | stream (s) | per call (ms) | "
            "fit on all (ms) | coef vs fit | SGD stream (s) | ratio |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    write_section("partial_fit", body, args.output, quick="small shapes, 400 rows, one round" if args.quick else None)


if __name__ == "__main__":
    main()
