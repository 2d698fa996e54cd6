"""Max-marginal margins: one dynamic programme per input against 2·d exact decodes, in one run.

Usage: python benchmarks/max_margins.py [--quick] [--output BENCHMARKS.md]

Runs the Go benchmark BenchmarkMaxMarginalMargins of core/space (one input; label sets of d labels and
random trees of d nodes, each node's parent drawn uniformly among the nodes before it) ``--count`` times
and reports medians: the spaces' O(d) programmes (``core/space/maxmarginsdp.go``) next to the route every
space took before, an exact decode per coordinate and end. Then, through Python, StructuredRidge's
``max_marginal_margins`` on 1,000 inputs of a subtree model of 2,000 nodes (what ranking metrics over
(input, node) pairs call). Needs Go on PATH. Writes the ``max_margins`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import StructuredRidge, spaces
from kernels import go_bench


def python_rows_per_second(d: int, rows: int) -> float:
    """max_marginal_margins' inputs per second for a linear subtree model of d nodes."""
    rng = np.random.default_rng(0)
    parent = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, d)])
    space = spaces.Subtrees(parent)
    X = rng.normal(size=(200, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = StructuredRidge(space=space, alpha=1.0).fit(X, space.sample(200, random_state=0))
    Xq = rng.normal(size=(rows, 10))
    model.max_marginal_margins(Xq[:10])  # warm up
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        model.max_marginal_margins(Xq)
        best = min(best, time.perf_counter() - start)
    return rows / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one short run of each")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    count = 1 if args.quick else 5
    ns = go_bench("./core/space", "MaxMarginalMargins$", "1", count, "2x" if args.quick else "10x")
    body = [
        "## Max-marginal margins: a dynamic programme against 2·d decodes (`benchmarks/max_margins.py`)",
        "",
        f"{machine()}."
        + (" **Quick smoke run, not the benchmark.**" if args.quick else "")
        + f" Go benchmark on one thread, one input, median of {count} runs; both routes in the same process. "
        "Trees: random, each node's parent uniform among the nodes before it.",
        "",
        "| space | d | programme (ms per input) | 2·d decodes (ms per input) | speed-up |",
        "|---|---:|---:|---:|---:|",
    ]
    for d in (500, 2000):
        for kind in ("multilabel", "hierarchy_paths", "subtrees"):
            new = ns[f"BenchmarkMaxMarginalMargins/{kind}/d={d}/programme"]
            old = ns[f"BenchmarkMaxMarginalMargins/{kind}/d={d}/decoding"]
            body.append(f"| {kind} | {d:,} | {new / 1e6:.3f} | {old / 1e6:.1f} | {old / new:,.0f}× |")
    rows = 200 if args.quick else 1000
    rate = python_rows_per_second(2000, rows)
    body += [
        "",
        f"- StructuredRidge(space=Subtrees of 2,000 nodes).max_marginal_margins on {rows:,} inputs, through "
        f"Python with combpred's core on all cores: **{rate:,.0f} inputs/s** (best of 3); by decoding, "
        f"the table's figure makes it about {1e9 / ns['BenchmarkMaxMarginalMargins/subtrees/d=2000/decoding']:.0f} "
        "per second per core.",
    ]
    write_section("max_margins", "\n".join(body), args.output)


if __name__ == "__main__":
    main()
