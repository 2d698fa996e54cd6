"""Closer to the hardware (issue 18): the core's product kernels and exact decoders, new against old in one run.

Usage: python benchmarks/kernels.py [--quick] [--output BENCHMARKS.md]

Runs the Go benchmarks of core/gemm (BenchmarkKernelCeiling, BenchmarkMemoryCeiling, BenchmarkMulT, BenchmarkPanel) on one and
two threads and of core/space (BenchmarkPermutationsDecodeBatch, BenchmarkDicyclesDecodeBatch) on one,
each ``--count`` times, and reports medians. Every new routine is timed next to the one it replaced in
the same run: kernel CG's product with K as (K·Xᵀ)ᵀ by MulPanel against MulT's dot products, and
MulPanel against MulT for Gram matrices; MulPanel against Mul for X·W; MulTN against the former route of Xᵀ·G (a transposed
copy of G, then Mul); the batched AVX2 decoders against the portable Go decoders (kernels off), which
were every machine's decoders before. The ceiling is the vector kernels' rate on operands held in the
first level of cache, on every thread at once, measured in the same run; where a product's operands
exceed the last level of cache, its roofline is the lower of that ceiling and its bytes moved at the
read bandwidth measured in the same run. Needs Go on PATH. Writes the ``kernels`` section of
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
    """Median of the last reported metric (GFLOP/s or rows/s) of each benchmark over ``count`` runs.

    Each thread count of ``cpus`` runs in a ``go test`` of its own: within one, the first run of each
    sub-benchmark takes the GOMAXPROCS the previous one left (``-cpu 1,2``: every product's first
    one-thread run ran on two threads, twice its speed, which was the whole one-thread column of a
    ``--quick`` run and one run in ``count`` of the full one).
    """
    runs: dict[str, list[float]] = collections.defaultdict(list)
    for cpu in cpus.split(","):
        out = subprocess.run(
            [
                "go",
                "test",
                "-run",
                "XXX",
                "-bench",
                pattern,
                "-cpu",
                cpu,
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
        for line in out.splitlines():
            fields = line.split()
            if fields and fields[0].startswith("Benchmark") and len(fields) >= 4:
                runs[fields[0]].append(float(fields[-2]))
    return {name: statistics.median(values) for name, values in runs.items()}


def last_level_cache() -> int:
    """The size in bytes of the largest cache of CPU 0 (Linux sysfs), or 32 MB where it cannot be read."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG")) * scale)
    return max(sizes, default=32 * 2**20)


def panel_rows(
    case: str, q: int, p: int, m: int, x: str, w: str, g: str, old_xtg: str = "transpose+Mul", on: str = ""
) -> list:
    """The table's rows of BenchmarkPanel's case: X·W (X q×p, W p×m) against Mul, and Xᵀ·G (G q×m)
    against ``old_xtg``; ``on`` names what X is."""
    where = f" on a {on}" if on else ""
    old = " (old: the direct product)" if old_xtg == "direct" else ""
    return [
        (f"X·W{where}, {x} · {w}", f"Panel/{case}/XW/MulPanel", f"Panel/{case}/XW/Mul", "XW", q, p, m),
        (f"Xᵀ·G{where}, ({x})ᵀ · {g}{old}", f"Panel/{case}/XtG/MulTN", f"Panel/{case}/XtG/{old_xtg}", "XtG", q, p, m),
    ]


def traffic(kind: str, q: int, p: int, m: int) -> tuple[int, int]:
    """(float64 values read, entries of C written) of a product with q·p·m terms: X·Bᵀ (X q×p, B
    m×p, C q×m), X·W (W p×m, C q×m) or Xᵀ·G (G q×m, C p×m), each operand read once."""
    return {"XBt": (q * p + m * p, q * m), "XW": (q * p + p * m, q * m), "XtG": (q * p + q * m, p * m)}[kind]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run of each, short benchmark times")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    count = 1 if args.quick else 5
    gemm = go_bench("./core/gemm", "MulT$|Panel", "1,2", count, "3x" if args.quick else "20x")
    gemm |= go_bench("./core/gemm", "KernelCeiling", "1,2", count, "20000x" if args.quick else "400000x")
    gemm |= go_bench("./core/gemm", "MemoryCeiling", "1,2", count, "2x" if args.quick else "20x")
    space = go_bench("./core/space", "DecodeBatch", "1", count, "2x" if args.quick else "0.5s")

    def g(name: str, threads: int) -> float:
        return gemm[f"Benchmark{name}" + ("" if threads == 1 else f"-{threads}")]

    # The ceiling is the best of the vector kernels in cache (the 512-bit ones are run where the
    # processor has AVX-512F), so that no product can look faster than the cores.
    kernels = sorted({name.split("/")[1].split("-")[0] for name in gemm if name.startswith("BenchmarkKernelCeiling/")})
    ceiling = {t: max(g(f"KernelCeiling/{k}", t) for k in kernels) for t in (1, 2)}
    wide = any(k.endswith(("z", "24")) for k in kernels)  # the 512-bit kernels ran
    bandwidth = {t: g("MemoryCeiling", t) for t in (1, 2)}
    l3 = last_level_cache()
    rows = [
        *(
            (label, f"MulT/{case}/{new}", f"MulT/{case}/{old}", "XBt", q, p, m)
            for label, case, new, old, q, p, m in (
                (
                    "kernel CG's X·K, 14 × 1500 · 1500 × 1500, as (K·Xᵀ)ᵀ (old: MulT's dot products)",
                    "cg_14x1500x1500",
                    "KXt",
                    "MulT",
                    14,
                    1500,
                    1500,
                ),
                (
                    "rbf Gram matrix, 1500 × 103 · (1500 × 103)ᵀ (old: MulT's dot products)",
                    "gram_1500x103x1500",
                    "Panel",
                    "MulT",
                    1500,
                    103,
                    1500,
                ),
            )
        ),
        *panel_rows("labels1000_5000x101", 5000, 101, 1000, "5000 × 101", "101 × 1000", "5000 × 1000"),
        *panel_rows("tall_200000x50_d20", 200_000, 50, 20, "200,000 × 50", "50 × 20", "200,000 × 20"),
        *panel_rows(
            "nystrom_12384x1501_d6",
            12_384,
            1501,
            6,
            "12,384 × 1,501",
            "1,501 × 6",
            "12,384 × 6",
            "direct",
            "Nyström map",
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
        f"Memory: reading 128 MB per thread through the same kernel (`BenchmarkMemoryCeiling`) ran at "
        f"{bandwidth[1]:.1f} GB/s on one thread and {bandwidth[2]:.1f} on two. A product whose operands and result "
        f"together exceed the last level of cache ({l3 / 2**20:.0f} MB) cannot run faster than its bytes moved "
        "(each operand read once, C written with its cache lines read first: 16 bytes an entry) at that bandwidth: "
        "its roofline is the lower of that rate and the kernels' ceiling; for the others it is the ceiling.",
        "",
        "| product | new: GFLOP/s, 1 / 2 threads | share of the ceiling, 1 / 2 threads | FLOP per byte | "
        "share of the roofline, 1 / 2 threads | 256-bit kernels only: GFLOP/s, 1 / 2 threads | "
        "old: GFLOP/s, 1 / 2 threads | new / old, 1 / 2 threads |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    shares = []
    for label, new, old, kind, q, p, m in rows:
        read, written = traffic(kind, q, p, m)
        n1, n2, o1, o2 = g(new, 1), g(new, 2), g(old, 1), g(old, 2)
        narrow = f"{new}-256"
        w = f"{g(narrow, 1):.1f} / {g(narrow, 2):.1f}" if f"Benchmark{narrow}" in gemm else "—"
        flops = 2 * q * p * m
        moved = 8 * read + 16 * written
        roof = {t: ceiling[t] for t in (1, 2)}
        if 8 * (read + written) > l3:
            roof = {t: min(ceiling[t], flops / moved * bandwidth[t]) for t in (1, 2)}
        shares.append((label, n1 / roof[1], n2 / roof[2]))
        body.append(
            f"| {label} | {n1:.1f} / {n2:.1f} | {n1 / ceiling[1]:.0%} / {n2 / ceiling[2]:.0%} | {flops / moved:.1f} "
            f"| {n1 / roof[1]:.0%} / {n2 / roof[2]:.0%} | {w} | {o1:.1f} / {o2:.1f} | {n1 / o1:.2f}× / {n2 / o2:.2f}× |"
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
        "- products at ≥ 60 % of the roofline (the ceiling where memory does not bound them), on one / two threads: "
        + ", ".join(f"{sum(s[t] >= 0.6 for s in shares)} of {len(shares)}" for t in (1, 2))
        + "; below it: "
        + "; ".join(f"{label} ({a:.0%} / {b:.0%})" for label, a, b in shares if min(a, b) < 0.6)
        + ".",
    ]
    write_section("kernels", "\n".join(body), args.output)
    print("\n".join(body))


if __name__ == "__main__":
    main()
