"""Out-of-core fit of DaskStructuredRidge on a LocalCluster, against the single-process partial_fit stream.

Usage: python benchmarks/dask_scale.py [--rows 5000000] [--partition 200000] [--quick] [--output BENCHMARKS.md]

A multi-label problem (d = 20 labels, 50 features) drawn from a planted linear model is generated
partition by partition on the workers (dask.array.random with a seed), so the data never exist in
one place: its size exceeds each worker's memory limit. The script fits it on a 2-worker
LocalCluster (1 thread per worker, a memory limit per worker), samples each worker's peak RSS,
streams the same partitions through ``StructuredRidge.partial_fit`` in this process (each partition
generated in turn with the synchronous scheduler), checks that both give the same coefficients, and
repeats the cluster fit with 1 worker (strong scaling). It writes the section "dask_scale" of
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import StructuredRidge
from combpred.dask import DaskStructuredRidge
from distributed import Client, LocalCluster

N_FEATURES, N_LABELS, SEED = 50, 20, 2026
MEMORY_LIMIT = "1.5GB"


def problem(rows: int, partition: int) -> tuple[da.Array, da.Array]:
    """X (rows × 50) and Y (rows × 20, 0/1) from a planted linear model, lazily, one block per
    partition: a block is generated where it is computed."""
    W = np.random.default_rng(SEED).normal(size=(N_FEATURES, N_LABELS)) / np.sqrt(N_FEATURES)
    bias = np.linspace(-1.5, 0.5, N_LABELS)  # label frequencies from about 7 % to 69 %
    rng = da.random.default_rng(SEED)
    X = rng.normal(size=(rows, N_FEATURES), chunks=(partition, N_FEATURES))
    noise = rng.normal(scale=0.5, size=(rows, N_LABELS), chunks=(partition, N_LABELS))
    Y = ((X @ W + bias + noise) > 0).astype(np.int64)
    return X, Y


def worker_peaks(client: Client) -> list[float]:
    """Peak RSS (GB) of each worker process since it started (Linux ru_maxrss is in KiB)."""
    peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return sorted(v * 1024 / 1e9 for v in peaks.values())


def cluster_fit(workers: int, X: da.Array, Y: da.Array) -> tuple[float, list[float], DaskStructuredRidge]:
    """Fit on a fresh LocalCluster of ``workers`` single-threaded spawned worker processes."""
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, memory_limit=MEMORY_LIMIT, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("combpred.dask"))  # library loads outside the timing
        start = time.perf_counter()
        model = DaskStructuredRidge(alpha=1.0, n_jobs=1).fit(X, Y)
        elapsed = time.perf_counter() - start
        return elapsed, worker_peaks(client), model


def stream_fit(X: da.Array, Y: da.Array) -> tuple[float, StructuredRidge]:
    """partial_fit over the same partitions in this process, each generated in turn."""
    model = StructuredRidge(alpha=1.0, n_jobs=1)
    start = time.perf_counter()
    for i in range(X.numblocks[0]):
        Xi, Yi = dask.compute(X.blocks[i], Y.blocks[i], scheduler="synchronous")
        model.partial_fit(Xi, Yi)
    return time.perf_counter() - start, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partition", type=int, default=200_000)
    parser.add_argument("--quick", action="store_true", help="200,000 rows: a smoke run, not the measurement")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    rows, partition = (200_000, 50_000) if args.quick else (args.rows, args.partition)
    X, Y = problem(rows, partition)
    data_gb = rows * (N_FEATURES + N_LABELS) * 8 / 1e9
    load_before = os.getloadavg()
    t2, peaks2, dist = cluster_fit(2, X, Y)
    print(f"2 workers: {t2:.1f} s, peak RSS {peaks2} GB", flush=True)
    ts, stream = stream_fit(X, Y)
    print(f"partial_fit stream: {ts:.1f} s", flush=True)
    t1, peaks1, _ = cluster_fit(1, X, Y)
    print(f"1 worker: {t1:.1f} s, peak RSS {peaks1} GB", flush=True)
    load_after = os.getloadavg()
    diff = np.abs(dist.coef_ - stream.coef_).max() / np.abs(stream.coef_).max()
    lines = [
        "## Out-of-core fit on Dask (`benchmarks/dask_scale.py`)",
        "",
        f"Machine: {machine()}.",
        "",
        f"Multi-label, d = {N_LABELS} labels, {N_FEATURES} features, {rows:,} rows from a planted linear model, "
        f"generated partition by partition ({partition:,} rows each, {X.numblocks[0]} partitions) on the workers with "
        f"`dask.array.random` (seed {SEED}): {data_gb:.1f} GB of float64 X and Y, against a memory limit of "
        f"{MEMORY_LIMIT} per worker. `DaskStructuredRidge` (alpha = 1, exact) on a LocalCluster of spawned worker "
        "processes with 1 thread each: per-partition sufficient statistics on the workers, a pairwise tree "
        "reduction, one solve on the client. The stream is `StructuredRidge.partial_fit` over the same partitions "
        "in one process (each generated in turn in-process), which keeps the same statistics.",
        "",
        "| run | time | peak RSS per worker | relative to the stream |",
        "|---|---:|---:|---:|",
        f"| partial_fit stream, 1 process | {ts:.1f} s | — | 1.00× |",
        f"| LocalCluster, 1 worker | {t1:.1f} s | {', '.join(f'{p:.2f} GB' for p in peaks1)} | {ts / t1:.2f}× |",
        f"| LocalCluster, 2 workers | {t2:.1f} s | {', '.join(f'{p:.2f} GB' for p in peaks2)} | {ts / t2:.2f}× |",
        "",
        f"Strong scaling 1 → 2 workers: {t1 / t2:.2f}× (ideal 2×). Largest relative difference between the "
        f"coefficients of the distributed fit and of the stream: {diff:.1e}. "
        f"Load average (1 min) {load_before[0]:.1f} before and {load_after[0]:.1f} after the runs: the machine has "
        f"{os.cpu_count()} cores, shared with other jobs while this ran, so the scaling figure is what these cores "
        "gave, not what 2 dedicated cores (or 2 machines) would; the memory figures show that each worker holds a "
        "few partitions and the (kd)²/4 statistics, never the data set.",
    ]
    if args.quick:
        lines += ["", "Quick smoke run (200,000 rows): not the measurement."]
    write_section("dask_scale", "\n".join(lines), args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
