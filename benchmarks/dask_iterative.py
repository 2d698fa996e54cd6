"""Iterative fits on Dask: StructuredRidge by distributed CG and ProbabilisticStructured by distributed
L-BFGS, on a 2-worker and a 1-worker LocalCluster, against the same fit in memory in one process.

Usage: python benchmarks/dask_iterative.py [--quick] [--output BENCHMARKS.md]

Each problem is drawn from a planted linear model partition by partition (dask.array.random with a
seed); the in-memory fit gets the same rows computed into one array. Every iteration of a
distributed fit sends W to the partitions and sums their products (CG) or their data terms
(L-BFGS) up a tree, so its cost is the in-memory iteration's split over the workers plus a round trip
through the scheduler. The script reports wall time, iterations, the peak RSS of each worker
process, and the largest coefficient difference to the in-memory fit, and writes the section
"dask_iterative" of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import ProbabilisticStructured, StructuredRidge
from combpred.dask import DaskProbabilisticStructured, DaskStructuredRidge
from distributed import Client, LocalCluster

SEED = 2026


def multilabel(rows: int, features: int, labels: int, partition: int) -> tuple[da.Array, da.Array]:
    """X and a 0/1 Y from a planted linear model, one block per partition."""
    W = np.random.default_rng(SEED).normal(size=(features, labels)) / np.sqrt(features)
    rng = da.random.default_rng(SEED)
    X = rng.normal(size=(rows, features), chunks=(partition, features))
    noise = rng.normal(scale=0.5, size=(rows, labels), chunks=(partition, labels))
    return X, ((X @ W + noise) > 0).astype(np.int64)


def _rank_rows(scores: np.ndarray) -> np.ndarray:
    """Rank rows (1 = first) of each row's labels sorted by decreasing score."""
    order = np.argsort(-scores, axis=1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1)[None, :].repeat(len(scores), 0), axis=1)
    return ranks.astype(np.int64)


def rankings(rows: int, features: int, labels: int, partition: int) -> tuple[da.Array, da.Array]:
    """X and rankings of ``labels`` labels by noisy planted scores, one block per partition."""
    W = np.random.default_rng(SEED + 1).normal(size=(features, labels))
    rng = da.random.default_rng(SEED + 1)
    X = rng.normal(size=(rows, features), chunks=(partition, features))
    noise = rng.normal(scale=1.0, size=(rows, labels), chunks=(partition, labels))
    scores = X @ W + noise
    Y = scores.map_blocks(_rank_rows, dtype=np.int64)
    return X, Y


def _peak_rss() -> int:
    """The calling process's peak resident set (bytes), VmHWM: unlike getrusage's ru_maxrss, which
    survives execve, it does not count the spawning process's resident set at fork (this process
    holds the in-memory data when it starts a cluster)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def cluster_fit(workers: int, make, X: da.Array, Y: da.Array) -> dict:
    """Fit ``make()`` on a fresh LocalCluster of ``workers`` single-threaded worker processes."""
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("combpred.dask"))  # the library loads outside the timing
        start = time.perf_counter()
        model = make().fit(X, Y)
        elapsed = time.perf_counter() - start
        peaks = sorted(b / 1e9 for b in client.run(_peak_rss).values())
    return {"time": elapsed, "model": model, "peaks": peaks}


def memory_fit(make, X: np.ndarray, Y: np.ndarray) -> dict:
    start = time.perf_counter()
    model = make().fit(X, Y)
    return {"time": time.perf_counter() - start, "model": model, "peaks": []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    if args.quick:
        cases = [
            ("StructuredRidge, multi-label, solver=cg", multilabel(20_000, 450, 20, 5_000), "ridge"),
            ("ProbabilisticStructured, multi-label", multilabel(20_000, 20, 10, 5_000), "prob-ml"),
            ("ProbabilisticStructured, Permutations(6)", rankings(4_000, 10, 6, 1_000), "prob-rank"),
        ]
    else:
        cases = [
            ("StructuredRidge, multi-label, solver=cg", multilabel(200_000, 500, 20, 25_000), "ridge"),
            ("ProbabilisticStructured, multi-label", multilabel(1_000_000, 50, 20, 125_000), "prob-ml"),
            ("ProbabilisticStructured, Permutations(8)", rankings(100_000, 20, 8, 12_500), "prob-rank"),
        ]
    makers = {
        "ridge": (
            lambda: StructuredRidge(space="multilabel", solver="cg", alpha=10.0, tol=1e-6, n_jobs=1),
            lambda: DaskStructuredRidge(space="multilabel", solver="cg", alpha=10.0, tol=1e-6, n_jobs=1),
        ),
        "prob-ml": (
            lambda: ProbabilisticStructured(space="multilabel", alpha=1e-4, tol=1e-6, n_jobs=1),
            lambda: DaskProbabilisticStructured(space="multilabel", alpha=1e-4, tol=1e-6, n_jobs=1),
        ),
        "prob-rank": (
            lambda: ProbabilisticStructured(space="permutations", alpha=1e-4, tol=1e-6, n_jobs=1),
            lambda: DaskProbabilisticStructured(space="permutations", alpha=1e-4, tol=1e-6, n_jobs=1),
        ),
    }
    rows_md = []
    total = time.perf_counter()
    for title, (X, Y), kind in cases:
        local_make, dist_make = makers[kind]
        Xn, Yn = dask.compute(X, Y, scheduler="threads")
        mem = memory_fit(local_make, Xn, Yn)
        print(f"{title}: in memory {mem['time']:.1f} s, {mem['model'].n_iter_} iterations", flush=True)
        runs = {w: cluster_fit(w, dist_make, X, Y) for w in ((2,) if args.quick else (2, 1))}
        for w, r in runs.items():
            diff = np.abs(r["model"].coef_ - mem["model"].coef_).max() / np.abs(mem["model"].coef_).max()
            r["diff"] = diff
            print(
                f"  {w} worker(s): {r['time']:.1f} s, {r['model'].n_iter_} iterations, rel. diff {diff:.1e}", flush=True
            )
        m, n = X.shape
        d = mem["model"].coef_.shape[0]
        fits = [("in memory, 1 process, n_jobs=1", mem)]
        fits += [(f"Dask, {w} worker{'s' if w > 1 else ''} × 1 thread", r) for w, r in runs.items()]
        for label, r in fits:
            ratio = r["time"] / mem["time"]
            peaks = ", ".join(f"{p:.2f}" for p in r["peaks"]) or "—"
            diff = f"{r['diff']:.1e}" if "diff" in r else "—"
            rows_md.append(
                f"| {title} ({m:,} × {n}, d = {d}, {X.numblocks[0]} partitions) | {label} | {r['time']:.1f} | {ratio:.2f} | "
                f"{r['model'].n_iter_} | {peaks} | {diff} |"
            )
    elapsed = time.perf_counter() - total
    text = "\n".join(
        [
            "## Iterative fits on Dask: distributed CG and distributed L-BFGS (`benchmarks/dask_iterative.py`)",
            "",
            machine(),
            "",
            ("Quick smoke run (tiny sizes). " if args.quick else "")
            + "Each fit on a fresh LocalCluster of spawned single-threaded workers (the data generated on the workers "
            "partition by partition and persisted for the iterations), against the same estimator in memory in one "
            "process on the same rows with `n_jobs=1`. Times exclude starting the cluster; the Dask times include "
            "generating the data on the workers, the in-memory ones do not. 'rel. diff' is the largest coefficient "
            "difference to the in-memory fit over its largest coefficient.",
            "",
            "| problem | fit | time (s) | × in memory | iterations | worker peak RSS (GB) | rel. diff |",
            "|---|---|---:|---:|---:|---|---:|",
            *rows_md,
            "",
            f"- whole script: {elapsed / 60:.1f} min",
        ]
    )
    write_section("dask_iterative", text, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
