"""Closer to the hardware (issue 18): the core's product kernels and exact decoders, new against old in one run.

Usage: python benchmarks/kernels.py [--quick] [--output BENCHMARKS.md]

Runs the Go benchmarks of core/gemm (BenchmarkKernelCeiling, BenchmarkMulT, BenchmarkPanel) on one and
two threads and of core/space (BenchmarkPermutationsDecodeBatch, BenchmarkDicyclesDecodeBatch) on one,
each ``--count`` times, and reports medians. Every new routine is timed next to the one it replaced in
the same run: MulT (dot-product kernel) against Mul (fmaRows8) for kernel CG's product with K and for
Gram matrices; MulPanel against Mul for X·W; MulTN against the former route of Xᵀ·G (a transposed
copy of G, then Mul); the batched AVX2 decoders against the portable Go decoders (kernels off), which
were every machine's decoders before. The ceiling is the vector kernels' rate on operands held in the
first level of cache, on every thread at once, measured in the same run. Needs Go on PATH. Writes the ``kernels`` section of
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
from pathlib import Path

from _report import BENCHMARKS_MD, machine, write_section

ROOT = Path(__file__).resolve().parent.parent


def go_bench(package: str, pattern: str, cpus: str, count: int, benchtime: str) -> dict[str, float]:
    """Median of the last reported metric (GFLOP/s or rows/s) of each benchmark over ``count`` runs."""
    out = subprocess.run(
        [
            "go",
            "test",
            "-run",
            "XXX",
            "-bench",
            pattern,
            "-cpu",
            cpus,
            "-count",
            str(count),
            "-benchtime",
            benchtime,
            package,
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    runs: dict[str, list[float]] = collections.defaultdict(list)
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0].startswith("Benchmark") and len(fields) >= 4:
            runs[fields[0]].append(float(fields[-2]))
    return {name: statistics.median(values) for name, values in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run of each, short benchmark times")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    count = 1 if args.quick else 5
    gemm = go_bench("./core/gemm", "MulT$|Panel", "1,2", count, "3x" if args.quick else "20x")
    gemm |= go_bench("./core/gemm", "KernelCeiling", "1,2", count, "20000x" if args.quick else "400000x")
    space = go_bench("./core/space", "DecodeBatch", "1", count, "2x" if args.quick else "0.5s")

    def g(name: str, threads: int) -> float:
        return gemm[f"Benchmark{name}" + ("" if threads == 1 else f"-{threads}")]

    # The ceiling is the best of the vector kernels in cache (the 512-bit ones are run where the
    # processor has AVX-512F), so that no product can look faster than the cores.
    kernels = sorted({name.split("/")[1].split("-")[0] for name in gemm if name.startswith("BenchmarkKernelCeiling/")})
    ceiling = {t: max(g(f"KernelCeiling/{k}", t) for k in kernels) for t in (1, 2)}
    wide = any(k.endswith(("z", "24")) for k in kernels)  # the 512-bit kernels ran
    rows = [
        ("kernel CG's X·K, 14 × 1500 · 1500 × 1500", "MulT/cg_14x1500x1500/MulT", "MulT/cg_14x1500x1500/Mul"),
        ("rbf Gram matrix, 1500 × 103 · (1500 × 103)ᵀ", "MulT/gram_1500x103x1500/MulT", "MulT/gram_1500x103x1500/Mul"),
        ("X·W, 5000 × 101 · 101 × 1000", "Panel/labels1000_5000x101/XW/MulPanel", "Panel/labels1000_5000x101/XW/Mul"),
        (
            "Xᵀ·G, (5000 × 101)ᵀ · 5000 × 1000",
            "Panel/labels1000_5000x101/XtG/MulTN",
            "Panel/labels1000_5000x101/XtG/transpose+Mul",
        ),
        ("X·W, 200,000 × 50 · 50 × 20", "Panel/tall_200000x50_d20/XW/MulPanel", "Panel/tall_200000x50_d20/XW/Mul"),
        (
            "Xᵀ·G, (200,000 × 50)ᵀ · 200,000 × 20",
            "Panel/tall_200000x50_d20/XtG/MulTN",
            "Panel/tall_200000x50_d20/XtG/transpose+Mul",
        ),
        (
            "X·W on a Nyström map, 12,384 × 1,501 · 1,501 × 6",
            "Panel/nystrom_12384x1501_d6/XW/MulPanel",
            "Panel/nystrom_12384x1501_d6/XW/Mul",
        ),
        (
            "Xᵀ·G on a Nyström map, (12,384 × 1,501)ᵀ · 12,384 × 6 (old: the direct product)",
            "Panel/nystrom_12384x1501_d6/XtG/MulTN",
            "Panel/nystrom_12384x1501_d6/XtG/direct",
        ),
    ]
    body = [
        "## Closer to the hardware: product kernels and exact decoders (`benchmarks/kernels.py`)",
        "",
        f"{machine()}."
        + (" **Quick smoke run (one short run each), not the benchmark.**" if args.quick else "")
        + f" Go benchmarks, median of {count} runs; the new routine and the one it replaced run in the "
        "same process, one after the other. GFLOP/s counts 2·q·p·m per product. The ceiling is the best of the "
        f"vector kernels ({', '.join(kernels)}) on operands in the first level of cache, on every thread at once, "
        f"measured in the same run: {ceiling[1]:.1f} GFLOP/s on one thread, {ceiling[2]:.1f} on two. "
        + (
            "The processor has AVX-512F: the products run the 512-bit kernels (fma4x24, dot2x6z), and the "
            "256-bit column times the same routine with them switched off. "
            if wide
            else ""
        )
        + "This machine's speed varies between runs (identical runs differ by up to 2×): read the ratios, which "
        "are taken within a run.",
        "",
        "| product | new: GFLOP/s, 1 / 2 threads | share of the ceiling, 1 / 2 threads | 256-bit kernels only: GFLOP/s, "
        "1 / 2 threads | old: GFLOP/s, 1 / 2 threads | new / old, 1 / 2 threads |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, new, old in rows:
        n1, n2, o1, o2 = g(new, 1), g(new, 2), g(old, 1), g(old, 2)
        narrow = f"{new}-256"
        w = f"{g(narrow, 1):.1f} / {g(narrow, 2):.1f}" if f"Benchmark{narrow}" in gemm else "—"
        body.append(
            f"| {label} | {n1:.1f} / {n2:.1f} | {n1 / ceiling[1]:.0%} / {n2 / ceiling[2]:.0%} | {w} | {o1:.1f} / {o2:.1f} "
            f"| {n1 / o1:.2f}× / {n2 / o2:.2f}× |"
        )
    body += [
        "",
        "Exact decoding on one thread, rows/s: `row` is `Decode` on one row (a single prediction), `batch` "
        "`DecodeRows` on 64 rows (four rows per AVX2 register), `portable` the same call with the kernels "
        "switched off (the Go decoders every machine ran before).",
        "",
        "| space | n | row | batch | portable | batch / portable |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind, bench in (("Permutations", "PermutationsDecodeBatch"), ("DirectedCycles", "DicyclesDecodeBatch")):
        for n in range(10, 15):
            r, b, p = (space[f"Benchmark{bench}/n={n}/{mode}"] for mode in ("row", "batch", "portable"))
            body.append(f"| {kind} | {n} | {r:,.0f} | {b:,.0f} | {p:,.0f} | {b / p:.1f}× |")
    body += [
        "",
        "Targets (issue 18): kernel products at ≥ 60 % of the measured ceiling of the cores used; exact decoding "
        "≥ 3× today's rows/s for Permutations(10–12) and DirectedCycles(10–12), no cliff at n = 13.",
    ]
    write_section("kernels", "\n".join(body), args.output)
    print("\n".join(body))


if __name__ == "__main__":
    main()
