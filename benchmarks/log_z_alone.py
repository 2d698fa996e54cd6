"""log Z alone beyond the exact marginals: ProbabilisticStructured.log_partition, exact against the FPRAS.

Usage: python benchmarks/log_z_alone.py [--quick] [--output BENCHMARKS.md]

Exact marginals (and so exact fits and samplers) stop at 16 labels for rankings and 14 vertices for
cycles; log Z alone, the forward half of the same programmes, goes on to 19 labels and 16 vertices
(space.LogZ). Before it existed, ``log_partition()`` and ``score_samples()`` ran the FPRAS there under
``method="auto"``, whose CFTP met its work bound on a default-fitted Permutations(17) model. This
script fits a model of each size for one iteration on synthetic data (its scores are what matters:
X is scaled so that they reach the sizes of fitted models), then times ``log_partition`` with
``method="exact"`` on ``ROWS`` rows and with ``method="fpras"`` (ε = 0.1, δ = 0.25, the defaults)
on ``FPRAS_ROWS`` of them, and reports both per row with the largest gap between the estimates in
units of ε. Writes the ``log_z_alone`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, load_line, machine, write_section
from combpred import ProbabilisticStructured, spaces

ROWS = 200
FPRAS_ROWS = 5
SPACES = [
    ("Permutations(17)", lambda: spaces.Permutations(17)),
    ("Permutations(19)", lambda: spaces.Permutations(19)),
    ("DirectedCycles(15)", lambda: spaces.DirectedCycles(15)),
    ("UndirectedCycles(16)", lambda: spaces.UndirectedCycles(16)),
]
QUICK = [("Permutations(6)", lambda: spaces.Permutations(6))]  # its FPRAS ends in seconds (17's ran to its work bound)


def fitted(space, rows: int, seed: int = 0) -> tuple[ProbabilisticStructured, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, 5))
    Y = space.decode(X @ rng.standard_normal((5, space.dim)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one iteration does not converge
        model = ProbabilisticStructured(space=space, max_iter=1, random_state=0).fit(X, Y)
    return model, X


def per_row(model: ProbabilisticStructured, X: np.ndarray, **params) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    values, _ = model.log_partition(X, **params)
    return (time.perf_counter() - t0) / X.shape[0], values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one space, 10 rows, one FPRAS row")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    rows, fpras_rows = (10, 1) if args.quick else (ROWS, FPRAS_ROWS)
    lines = [
        "## log Z alone beyond the exact marginals (`benchmarks/log_z_alone.py`)",
        "",
        machine(),
        "",
        "ProbabilisticStructured fitted for one iteration on synthetic data (X scaled so that the scores reach "
        'max|u| of the size a fitted model has), then `log_partition` on the same inputs: `method="exact"` '
        f'on {rows} rows (what `"auto"` now runs), `method="fpras"` (ε = 0.1, δ = 0.25, exact CFTP samples, what '
        f'`"auto"` ran before) on the first {fpras_rows}. Milliseconds per row, all cores.',
        "",
        "| space | max\\|u\\| | exact (ms / row) | FPRAS (ms / row) | FPRAS / exact | largest \\|FPRAS − exact\\| / ε |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, make in QUICK if args.quick else SPACES:
        model, X = fitted(make(), rows)
        for scale in (1.0, 4.0):
            Xs = scale * X
            top = float(np.abs(model.decision_function(Xs)).max())
            exact_s, exact = per_row(model, Xs, method="exact")
            try:
                fpras_s, fpras = per_row(model, Xs[:fpras_rows], method="fpras", random_state=0)
                # Z within a factor 1 ± ε: log Z within about ε
                gap = float(np.abs(fpras - exact[:fpras_rows]).max()) / 0.1
                cells = f"{1e3 * fpras_s:.1f} | {fpras_s / exact_s:.0f}× | {gap:.2f}"
            except ValueError as err:  # CFTP's work bound
                why = "the work bound" if "work bound" in str(err) else str(err)[:60]
                cells = f"refused ({why}) | — | —"
            lines.append(f"| {name} | {top:.1f} | {1e3 * exact_s:.1f} | {cells} |")
            print(lines[-1], flush=True)
    lines += ["", load_line()]
    write_section("log_z_alone", "\n".join(lines), args.output, quick="one space, few rows" if args.quick else None)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
