"""Kernel fits across alpha: StructuredRidge (rbf) against one-vs-rest KernelRidge, measured in one run.

Usage: python benchmarks/kernel_dual.py [--rounds 5] [--quick] [--output BENCHMARKS.md]

Where S acts as sigma*I on the targets (multi-label, multi-class under the uniform measure),
StructuredRidge's kernel models may be solved through a dual over the examples, whose iterations
hardly depend on alpha, where kernel CG needs more iterations as alpha falls (docs/design.md,
kernel form). The core chooses by a cost model, and hands a slow kernel CG fit over to the dual
after a share of the dual's cost. This table shows what a user sees: fit time and iterations
across alpha against one-vs-rest KernelRidge (one Cholesky factorisation whatever alpha), fitted
in alternated rounds (ours, peer, ours, peer, ...), the peer's BLAS on one thread, ratio of the
median times. Data: yeast (MULAN training split, 1500 x 103, 14 labels), 1,500 of scikit-learn's
digits (64 features, 10 classes), and 6,000 synthetic rows (20 features, 14 labels).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import StructuredRidge, datasets
from sklearn.datasets import load_digits
from sklearn.kernel_ridge import KernelRidge
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits


def problems(quick: bool) -> list[tuple[str, np.ndarray, np.ndarray, dict, np.ndarray, list[float]]]:
    """(name, X, y, StructuredRidge parameters, the peer's 0/1 targets, alphas)."""
    yeast = datasets.load_yeast()
    Xy = StandardScaler().fit_transform(yeast.X_train)
    Xd, yd = load_digits(return_X_y=True)
    Xd = StandardScaler().fit_transform(Xd)[:1500]
    yd = yd[:1500]
    rng = np.random.default_rng(0)
    m = 2000 if quick else 6000
    Xs = rng.normal(size=(m, 20))
    Ys = (Xs[:, :14] + rng.normal(size=(m, 14)) > 0).astype(int)
    alphas = [1e-3, 1e-2, 1] if quick else [1e-4, 1e-3, 1e-2, 1e-1, 1]
    return [
        ("yeast (multi-label, 1500 x 103, 14 labels)", Xy, yeast.Y_train, {"gamma": 0.02}, yeast.Y_train, alphas),
        (
            "digits (multi-class, 1500 x 64, 10 classes)",
            Xd,
            yd,
            {"gamma": 1 / 64, "space": "multiclass"},
            np.eye(10)[yd],
            alphas,
        ),
        (f"synthetic (multi-label, {m} x 20, 14 labels)", Xs, Ys, {"gamma": 0.05}, Ys, alphas[:3]),
    ]


def measure(rounds: int, quick: bool) -> list[str]:
    rows = [
        "| data | alpha | StructuredRidge fit (s, median) | iterations | KernelRidge fit (s, median) | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, X, y, params, targets, alphas in problems(quick):
        peer_y = 2.0 * targets - 1
        for alpha in alphas:
            ours, peer, iters = [], [], 0
            for _ in range(rounds):
                t0 = time.perf_counter()
                model = StructuredRidge(kernel="rbf", alpha=alpha, **params).fit(X, y)
                ours.append(time.perf_counter() - t0)
                iters = model.n_iter_
                with threadpool_limits(1):
                    t0 = time.perf_counter()
                    KernelRidge(kernel="rbf", alpha=alpha, gamma=params["gamma"]).fit(X, peer_y)
                    peer.append(time.perf_counter() - t0)
            ratio = np.median(ours) / np.median(peer)
            rows.append(
                f"| {name} | {alpha:g} | {np.median(ours):.3f} | {iters} | {np.median(peer):.3f} | {ratio:.2f}x |"
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer rows and alphas (smoke run)")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    rows = measure(args.rounds, args.quick)
    body = [
        "## Kernel fits across alpha: the dual over the examples (`benchmarks/kernel_dual.py`)",
        "",
        f"Measured on: {machine()}. {args.rounds} alternated rounds per row (ours, then the peer, NumPy's BLAS on "
        "one thread for it); combpred's core uses all cores. The peer, one-vs-rest KernelRidge, factors the "
        "kernel matrix once whatever alpha; StructuredRidge's iterations are those of the path the core took "
        "(the dual over the examples, kernel CG, or kernel CG handing over to the dual).",
        "",
        *rows,
    ]
    write_section("kernel_dual", "\n".join(body), args.output, quick="fewer rows and alphas" if args.quick else None)


if __name__ == "__main__":
    main()
