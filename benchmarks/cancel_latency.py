"""Ctrl-C latency: how long each long call takes to raise KeyboardInterrupt after SIGINT.

Usage: python benchmarks/cancel_latency.py [--trials 10] [--quick] [--output BENCHMARKS.md]

Each call first runs once in a fresh child process (tests/_interrupt_child.py), to its end or for at
most WINDOW = 20 s, which gives its duration T (capped there). Each trial then runs it again in a fresh
child, sends SIGINT after a delay drawn uniformly from 5-95 % of T (so that it lands anywhere in the
work, its late phases too, up to the cap), and records
the time from the signal to KeyboardInterrupt; the child then checks that the estimator still works.
Issue 11's target: p99 below 0.2 s for every call that runs longer than a second. Ten trials cannot
resolve a 99th percentile (all ten under 0.2 s happens with probability 0.9 when exactly 1 % of
interrupts take longer): the table reports the median and the largest latency, and the verdict is
whether every trial was under 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section

CHILD = Path(__file__).resolve().parent.parent / "tests" / "_interrupt_child.py"
CALLS = {
    "ridge.predict": "StructuredRidge(Permutations(60)).predict, 400,000 rows",
    "ridge.decision-kernel": "StructuredRidge(kernel='rbf').decision_function, 300,000 rows onto 2,000",
    "ridge.predict-kernel": "StructuredRidge(kernel='rbf').predict, 300,000 rows onto 2,000",
    "space.decode": "Permutations(60).decode, 40,000 rows",
    "prob.sample": "ProbabilisticStructured(Permutations(20)).sample, 50 rows × 20,000",
    "prob.predict_marginals": "ProbabilisticStructured(Permutations(20)).predict_marginals, n_samples=20,000",
    "prob.log_partition": "ProbabilisticStructured(Permutations(8)).log_partition(method='fpras')",
    "prob.fit": "ProbabilisticStructured(Permutations(20)).fit (Adam on sampled gradients)",
    "prob.fit-exact": "ProbabilisticStructured(Permutations(15)).fit (L-BFGS on exact inference), 2,000 rows",
    "ridge.fit": "StructuredRidge(Multilabel(30), solver='cg').fit, 200,000 × 60",
    "ridge.partial_fit": "StructuredRidge(kernel='rbf').partial_fit (one SGD pass, 6,000 rows onto 6,000)",
    "ridge.fit-exact": "StructuredRidge(Multilabel(20), solver='exact').fit, 3,000 × 399 (8,000 unknowns)",
    "ridge.fit-exact-kernel": "StructuredRidge(kernel='rbf', solver='exact').fit, 1,500 rows (4,500 unknowns)",
}

# The longest part of a call the interrupts are spread over (s): FPRAS's log_partition runs 210 s to
# its work bound, and ten trials over all of it would take half an hour for that call alone.
WINDOW = 20.0

# A trial's outcomes that are not failures: the call raised KeyboardInterrupt, or ended on its own.
OUTCOMES = ("interrupted", "finished")

# A smoke run's calls, two queries (tests/test_cancellation.py interrupts every call of CALLS).
QUICK_CALLS = ("space.decode", "prob.log_partition")


def trial(call: str, delay: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run(
        [sys.executable, str(CHILD), call, f"{delay:.3f}"], capture_output=True, text=True, timeout=600, env=env
    )
    if done.returncode != 0:
        return {"outcome": f"child failed: {done.stderr.strip().splitlines()[-1:]}", "latency": None}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"1 trial of {' and '.join(QUICK_CALLS)} (smoke run; tests/test_cancellation.py runs every call)",
    )
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    trials = 1 if args.quick else args.trials
    rng = np.random.default_rng(0)
    rows = []
    calls = {call: CALLS[call] for call in QUICK_CALLS} if args.quick else CALLS
    for call, what in calls.items():
        # to its end, to an error (a work bound), or interrupted at WINDOW: T is the work an interrupt can meet
        whole = trial(call, WINDOW)
        if whole.get("elapsed") is None:
            rows.append(f"| `{call}` | {what} | – | 0/{trials} | – | – | **missed** ({whole['outcome']}) |")
            print(rows[-1], flush=True)
            continue
        duration = min(whole["elapsed"], WINDOW)
        results = [trial(call, float(rng.uniform(0.05, 0.95)) * duration) for _ in range(trials)]
        # A call's duration varies between runs: a signal drawn late may come after the call ended
        # (no latency to measure, not a failure), and one that came just before its end may find it
        # finishing rather than interrupted (the time to its end is then the latency the user saw).
        lat = np.array([r["latency"] for r in results if r.get("outcome") in OUTCOMES and r["latency"] is not None])
        failed = sum(r.get("outcome") not in OUTCOMES for r in results)
        if len(lat):
            p50, worst = np.percentile(lat, 50), lat.max()
            verdict = "met" if worst < 0.2 and not failed else "**missed**"
            rows.append(
                f"| `{call}` | {what} | {duration:.1f} | {len(lat)}/{trials} | {p50 * 1e3:.0f} | {worst * 1e3:.0f} "
                f"| {verdict} |"
            )
        else:
            rows.append(
                f"| `{call}` | {what} | {duration:.1f} | 0/{trials} | – | – | **missed** ({results[0]['outcome']}) |"
            )
        print(rows[-1], flush=True)
    lines = [
        "## Ctrl-C latency (`benchmarks/cancel_latency.py`)",
        "",
        f"Machine: {machine()}.",
        "",
        f"{trials} trials per call, each in a fresh process: SIGINT after a delay drawn uniformly from 5–95 % of the "
        f"call's duration T (measured by a run to its end first, capped at {WINDOW:.0f} s), time until KeyboardInterrupt (ms); every child then "
        "checked that the estimator still works; a signal drawn after the call's end in that run measures nothing (the "
        "signals column counts those that came during it). Target (issue 11): p99 < 200 ms; the verdict says whether every "
        f"trial was under it ({trials} trials cannot resolve a 99th percentile). Long queries run in Go on a goroutine while the calling thread calls "
        "Python's interrupt poll every 20 ms (kernel models score rows in chunks of about 0.1 s of work); fits relay their progress and ask the same poll between reports, and "
        "StructuredRidge checks the resulting stop flag between set-up steps, every iteration, per Gram block, every "
        "64 SGD steps and between the panels of its blocked Cholesky and LU factorisations.",
        "",
        "| call | workload | T (s) | signals during the call | p50 | max | every trial < 200 ms |",
        "|---|---|---:|---:|---:|---:|---|",
        *rows,
    ]
    quick = f"one trial of {' and '.join(QUICK_CALLS)}" if args.quick else None
    write_section("cancel_latency", "\n".join(lines), args.output, quick=quick)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
