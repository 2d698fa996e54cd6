"""Shared by the benchmark scripts: machine facts and rewriting one section of BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

import combpred
import numpy as np
import sklearn

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def machine() -> str:
    """One line describing where the numbers were measured."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, combpred {combpred.__version__}"
    )


def load_line() -> str:
    """The 1-minute load average now, and a warning to read only in-run ratios when other work
    shared the 2 cores."""
    load = os.getloadavg()[0]
    return f"1-minute load average at the end: {load:.1f}" + (
        " (other work shared the 2 cores: read the ratios, taken within the run)." if load > 2.5 else "."
    )


RUN_NOTE = "- Run notes (by hand"


def write_section(name: str, body: str, path: Path = BENCHMARKS_MD, quick: str | None = None) -> None:
    """Replace (or append) the section delimited by `<!-- name:start -->` / `<!-- name:end -->`.

    quick, for a smoke run, says what it cut (e.g. "small shapes"): the section then ends by saying
    that it is not the measurement, so that a smoke run written over BENCHMARKS.md is not taken for one.

    The section's hand-written run notes (lines that start with RUN_NOTE) are kept, after the new
    body, in their order: a rerun refreshes the tables and keeps the history of what was measured
    by hand (session 51's rerun of yeast.py dropped nine of them)."""
    if quick is not None:
        body = f"{body.rstrip()}\n\nQuick smoke run ({quick}): not the measurement."
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = (
        path.read_text()
        if path.exists()
        else "# Benchmarks\n\nEach section is written by the script it names; rerun it to refresh.\n"
    )
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    found = pattern.search(text)
    notes = [line for line in found.group(0).splitlines() if line.startswith(RUN_NOTE)] if found else []
    notes = [line for line in notes if line not in body.splitlines()]
    block = "\n".join([start, body.rstrip(), *notes, end])
    text = pattern.sub(lambda _: block, text) if found else text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


FIGURES = Path(__file__).resolve().parent / "figures"


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None with a printed note when matplotlib is missing.

    matplotlib is needed for the figures only (the "bench" extra); the tables never need it.
    """
    try:
        import matplotlib
    except ImportError:
        print("note: matplotlib is not installed, so no figure is drawn (pip install matplotlib)")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, name: str) -> Path:
    """Save a figure as benchmarks/figures/<name>.png and return the path."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def vm(field: str) -> int:
    """A field of /proc/self/status in bytes (VmRSS, VmHWM: they see Go's memory, unlike tracemalloc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> bool:
    """Reset VmHWM to the current resident set; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def dgemm_ceiling(size: int = 2048, rounds: int = 3) -> float:
    """The machine's measured arithmetic ceiling in GFLOP/s: NumPy's BLAS multiplying two size×size
    float64 matrices on all its threads, best of `rounds` (a BLAS dgemm runs near the cores' peak).
    Fits are reported as a share of it; the core's own in-cache kernel ceiling is in `kernels`."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(size, size)), rng.normal(size=(size, size))
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * size**3 / best / 1e9


def rate(flops: float, seconds: float, ceiling: float) -> str:
    """'GFLOP/s (share of the ceiling)' for a fit of `flops` operations in `seconds`."""
    g = flops / seconds / 1e9
    return f"{g:.1f} ({g / ceiling:.0%})"


# Operation counts of the peers' fits (their dominant dense arithmetic, as the core's counter counts
# its own products: 2 per multiply–add), for m rows, n features and d outputs.
def ridge_flops(m: int, n: int, d: int) -> float:
    """RidgeClassifier / Ridge by Cholesky: XᵀX, XᵀY, the factorisation and the d solves."""
    return 2 * m * n * n + 2 * m * n * d + n**3 / 3 + 2 * n * n * d


def kernel_ridge_flops(m: int, n: int, d: int) -> float:
    """KernelRidge on a 2-D target: the Gram matrix's inner products, the Cholesky factorisation of
    K + αI and the d solves (its exponentials are not counted, as the core's are not)."""
    return 2 * m * m * n + m**3 / 3 + 2 * m * m * d


def bootstrap_difference(a: np.ndarray, b: np.ndarray, n_boot: int = 10000, seed: int = 0) -> tuple[float, float]:
    """A 95 % percentile interval of mean(a − b) over test rows (genes) resampled with replacement (paired)."""
    diff = np.asarray(a) - np.asarray(b)
    idx = np.random.default_rng(seed).integers(0, len(diff), size=(n_boot, len(diff)))
    means = diff[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def sparse_rows(rng: np.random.Generator, rows: int, n_features: int, per_row: int, common: int):
    """Bag-of-words-like rows as scipy.sparse CSR: ``per_row`` entries a row, half among the first
    ``common`` columns (frequent words), the rest anywhere (rare ones), values in (0, 1)."""
    import scipy.sparse as sps

    frequent = rng.integers(0, common, size=(rows, per_row // 2))
    rare = rng.integers(0, n_features, size=(rows, per_row - per_row // 2))
    cols = np.sort(np.concatenate([frequent, rare], axis=1), axis=1).ravel()
    indptr = np.arange(0, rows * per_row + 1, per_row)
    X = sps.csr_matrix((rng.random(rows * per_row), cols, indptr), shape=(rows, n_features))
    X.sum_duplicates()
    return X
