"""Out-of-core fit of DaskStructuredRidge on a LocalCluster, against the single-process partial_fit stream.

Usage: python benchmarks/dask_scale.py [--rows 10000000] [--partition 200000] [--memory-limit 1GB] [--quick]
       [--output BENCHMARKS.md]

A multi-label problem (d = 20 labels, 50 features) drawn from a planted linear model is generated
partition by partition on the workers (dask.array.random with a seed), so the data never exist in
one place: its size exceeds each worker's memory limit (and the whole cluster's). The script first
streams the partitions through ``StructuredRidge.partial_fit`` in this process (each partition
generated in turn with the synchronous scheduler; its peak RSS is this process's), then fits the
same data on a LocalCluster of 2 and of 1 spawned worker processes (1 thread each, a memory limit
per worker, a fresh cluster per run), records each worker's peak RSS and whether any worker was
restarted, samples the machine's load average throughout, and checks that the models agree. It
writes benchmarks/DASK_SCALE.md (next to the --output file's benchmarks/ directory) and the section
"dask_scale" of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
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


class LoadSampler:
    """The 1-minute load average, sampled every few seconds in a background thread."""

    def __init__(self, every: float = 5.0):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)

    def _run(self, every: float) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        s = np.asarray(self.samples)
        return f"{s.min():.1f} / {s.mean():.1f} / {s.max():.1f}"


def _peak_rss() -> int:
    """The calling process's peak resident set in KiB, VmHWM. Not getrusage's ru_maxrss: that one
    survives execve, so a spawned worker reported the resident set its parent had when it started
    the cluster (the runs before 2026-11-23 18:30 UTC printed the stream's 0.68 GB for every worker)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _cpu_seconds() -> float:
    """User + system CPU time of the calling process (its threads included)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def worker_peaks(client: Client) -> dict[str, float]:
    """Peak RSS (GB) of each worker process since it started."""
    return {addr: kib * 1024 / 1e9 for addr, kib in client.run(_peak_rss).items()}


def worker_pids(client: Client) -> dict[str, int]:
    return client.run(os.getpid)


def cluster_fit(workers: int, memory_limit: str, X: da.Array, Y: da.Array) -> dict:
    """Fit on a fresh LocalCluster of ``workers`` single-threaded spawned worker processes."""
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
        LoadSampler() as load,
    ):
        client.run(lambda: __import__("combpred.dask"))  # library loads outside the timing
        pids = worker_pids(client)
        cpu0 = client.run(_cpu_seconds)
        start = time.perf_counter()
        model = DaskStructuredRidge(alpha=1.0, n_jobs=1).fit(X, Y)
        elapsed = time.perf_counter() - start
        cpu = sorted(v - cpu0[addr] for addr, v in client.run(_cpu_seconds).items())
        peaks = worker_peaks(client)
        restarted = worker_pids(client) != pids
    return {
        "time": elapsed,
        "cpu": cpu,
        "peaks": sorted(peaks.values()),
        "restarted": restarted,
        "model": model,
        "load": load,
    }


def stream_fit(X: da.Array, Y: da.Array) -> dict:
    """partial_fit over the same partitions in this process, each generated in turn."""
    model = StructuredRidge(alpha=1.0, n_jobs=1)
    with LoadSampler() as load:
        cpu0 = _cpu_seconds()
        start = time.perf_counter()
        for i in range(X.numblocks[0]):
            Xi, Yi = dask.compute(X.blocks[i], Y.blocks[i], scheduler="synchronous")
            model.partial_fit(Xi, Yi)
        elapsed = time.perf_counter() - start
        cpu = [_cpu_seconds() - cpu0]
    return {"time": elapsed, "cpu": cpu, "peaks": [_peak_rss() * 1024 / 1e9], "model": model, "load": load}


def _cpu(r: dict) -> str:
    """CPU seconds of each process, and the share of a core each got over the wall time."""
    return ", ".join(f"{c:.0f} s ({c / r['time']:.0%})" for c in r["cpu"])


def _gb(peaks: list[float]) -> str:
    return ", ".join(f"{p:.2f} GB" for p in peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partition", type=int, default=200_000)
    parser.add_argument("--memory-limit", default="1GB", help="per worker (distributed's memory_limit)")
    parser.add_argument("--quick", action="store_true", help="20,000 rows: a smoke run, not the measurement")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    rows, partition = (20_000, 5_000) if args.quick else (args.rows, args.partition)
    X, Y = problem(rows, partition)
    data_gb = rows * (N_FEATURES + N_LABELS) * 8 / 1e9
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

    # The stream runs first, in this process before any cluster exists, so that this process's
    # peak RSS is the stream's.
    stream = stream_fit(X, Y)
    print(f"partial_fit stream: {stream['time']:.1f} s, peak RSS {_gb(stream['peaks'])}", flush=True)
    two = cluster_fit(2, args.memory_limit, X, Y)
    print(f"2 workers: {two['time']:.1f} s, peak RSS {_gb(two['peaks'])}", flush=True)
    one = cluster_fit(1, args.memory_limit, X, Y)
    print(f"1 worker: {one['time']:.1f} s, peak RSS {_gb(one['peaks'])}", flush=True)

    ref = stream["model"].coef_
    diffs = [np.abs(r["model"].coef_ - ref).max() / np.abs(ref).max() for r in (two, one)]
    restarts = [name for name, r in (("2 workers", two), ("1 worker", one)) if r["restarted"]]
    ts = stream["time"]
    table = [
        "| run | time | rows/s | relative to the stream | CPU time per process (share of a core) "
        "| peak RSS per process | load average (min / mean / max) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in (
        ("`partial_fit` stream, 1 process", stream),
        ("LocalCluster, 1 worker", one),
        ("LocalCluster, 2 workers", two),
    ):
        table.append(
            f"| {name} | {r['time']:.1f} s | {rows / r['time']:,.0f} | {ts / r['time']:.2f}× | {_cpu(r)} | "
            f"{_gb(r['peaks'])} | {r['load'].summary()} |"
        )
    work = {name: sum(r["cpu"]) for name, r in (("stream", stream), ("1", one), ("2", two))}
    body = [
        "## Out-of-core fit on Dask (`benchmarks/dask_scale.py`)",
        "",
        "Reproduce (writes benchmarks/DASK_SCALE.md and this section of BENCHMARKS.md):",
        "",
        f"    python benchmarks/dask_scale.py --rows {rows} --partition {partition} --memory-limit {args.memory_limit}",
        "",
        f"Machine: {machine()}; measured {started}.",
        "",
        f"Multi-label, d = {N_LABELS} labels, {N_FEATURES} features, {rows:,} rows from a planted linear model, "
        f"generated partition by partition ({partition:,} rows each, {X.numblocks[0]} partitions) where they are "
        f"computed, with `dask.array.random` (seed {SEED}): {data_gb:.1f} GB of float64 X and Y, against a memory "
        f"limit of {args.memory_limit} per worker. `DaskStructuredRidge(alpha=1, n_jobs=1)` (exact) on a fresh "
        "LocalCluster of spawned worker processes with 1 thread each: per-partition sufficient statistics "
        f"(a {(N_LABELS * (N_LABELS + 1) // 2 + N_LABELS + 1)} × {(N_FEATURES + 1) * (N_FEATURES + 2) // 2} moment "
        "matrix, 2.4 MB) on the workers, a pairwise tree reduction, one solve on the client. The stream is "
        "`StructuredRidge(alpha=1, n_jobs=1).partial_fit` over the same partitions in one process (each generated "
        "in turn in that process, the same work per row), which keeps the same statistics and solves after every "
        "partition; it ran first, so its peak RSS is that process's. Times exclude starting the cluster and "
        "loading the library on the workers.",
        "",
        *table,
        "",
        f"Strong scaling 1 → 2 workers: **{one['time'] / two['time']:.2f}×** in wall time (ideal 2×); the work "
        f"itself divides: {work['2']:.0f} CPU seconds over the 2 workers against {work['1']:.0f} s on 1 "
        f"({work['stream']:.0f} s for the stream), so the wall time is set by the share of the cores the workers "
        "got (the CPU column). Largest relative "
        f"difference between the coefficients of the distributed fits and of the stream: {max(diffs):.1e}. "
        + (
            f"Workers restarted during: {', '.join(restarts)}. "
            if restarts
            else "No worker was restarted (the memory limit never killed one). "
        )
        + f"The machine has {os.cpu_count()} cores and was shared with other jobs while this ran: the load "
        "average above includes this benchmark's own processes (1 busy process for the stream and the 1-worker "
        "run, 2 for the 2-worker run), so anything above that was other work competing for the same 2 cores. "
        "The scaling figure is what these cores gave under that load, not what 2 dedicated cores or 2 machines "
        "would give (the per-partition statistics are independent, and the reduction moves 2.4 MB per merge). "
        "The memory figures show that each worker holds a few partitions and the statistics, never the data set.",
    ]
    if args.quick:
        body += ["", f"Quick smoke run ({rows:,} rows): not the measurement."]
    text = "\n".join(body)
    detail = args.output.resolve().parent / "benchmarks" / "DASK_SCALE.md"
    detail.parent.mkdir(parents=True, exist_ok=True)
    detail.write_text("# " + text.removeprefix("## ") + "\n")
    write_section("dask_scale", text, args.output)
    print(f"wrote {args.output} and {detail}")


if __name__ == "__main__":
    main()
