"""StructuredRidge's solver="auto" against the exact solver, CG and scikit-learn's Ridge.

Usage: python benchmarks/auto_solver.py [--quick] [--output BENCHMARKS.md]

solver="auto" chooses, for a linear model, between the exact solve of the normal equations (which
keeps the statistics partial_fit continues from) and preconditioned CG. Until session 50 it took the
exact solve for every model of up to 600 unknowns ((features + 1) · d), whose statistics cost about
m · k² · nnz(ψ)² / 4 multiply-adds in scalar loops: up to 12× CG's time. It now compares the two
costs (core/ridge/autosolver.go). This script fits synthetic data of the shapes that rule was
fitted to, and a few beyond them, with each solver, and scikit-learn's Ridge on the same
embeddings ψ(y) (d independent ridge regressions, the flat baseline a user would otherwise fit)
for scale. Fits alternate (auto, exact, cg, peer, ...) over ``ROUNDS`` rounds; medians. Writes
the ``auto_solver`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, load_line, machine, write_section
from combpred import StructuredRidge, spaces
from sklearn.linear_model import Ridge
from threadpoolctl import threadpool_limits

ROUNDS = 7
# (space, rows, features); d and the unknowns follow
SHAPES = [
    (lambda: spaces.Multilabel(20), 5000, 2),
    (lambda: spaces.Multilabel(20), 5000, 5),
    (lambda: spaces.Multilabel(20), 5000, 20),
    (lambda: spaces.Multilabel(20), 200, 20),
    (lambda: spaces.Multilabel(10), 5000, 40),
    (lambda: spaces.Multiclass(10), 5000, 5),
    (lambda: spaces.Multiclass(10), 5000, 40),
    (lambda: spaces.Permutations(5), 5000, 2),
    (lambda: spaces.Permutations(5), 5000, 40),
    (lambda: spaces.Permutations(5), 200, 40),
    (lambda: spaces.Multilabel(7), 20000, 60),
]
QUICK = [(lambda: spaces.Multilabel(5), 200, 3), (lambda: spaces.Permutations(4), 200, 10)]


def data(space, rows: int, features: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features))
    W = rng.standard_normal((features, space.dim)) / np.sqrt(features)
    Y = space.decode(3 * X @ W + rng.standard_normal((rows, space.dim)))
    return X, Y


def timed(estimator, X, Y) -> tuple[float, object]:
    t0 = time.perf_counter()
    estimator.fit(X, Y)
    return time.perf_counter() - t0, estimator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two small shapes, one round")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    rounds = 1 if args.quick else ROUNDS
    lines = [
        '## solver="auto" against the exact solver and CG (`benchmarks/auto_solver.py`)',
        "",
        machine(),
        "",
        "StructuredRidge (linear, alpha = 1, default tol) with each solver on synthetic data (Gaussian X, targets "
        "decoded from 3·XW + noise), and scikit-learn's Ridge (alpha = 1) on the embeddings ψ(y) for scale. "
        f"Medians of {rounds} alternated rounds, in ms; NumPy's BLAS on one thread, combpred's core on all cores. "
        'k: features + 1; nnz: mean non-zero coordinates of ψ(y). "auto / best" is auto\'s time over the faster '
        "of exact and cg.",
        "",
        "| space | rows × k | d | unknowns | nnz | auto picks | auto | exact | cg | auto / best | Ridge | auto / Ridge |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    worst = 0.0
    for make, rows, features in QUICK if args.quick else SHAPES:
        space = make()
        X, Y = data(space, rows, features)
        psi = space.embed(Y)
        times: dict[str, list[float]] = {"auto": [], "exact": [], "cg": [], "peer": []}
        picked = ""
        with threadpool_limits(1, user_api="blas"):
            StructuredRidge(space=space).fit(X, Y)  # untimed: the first call's start-up
            for _ in range(rounds):
                for solver in ("auto", "exact", "cg"):
                    seconds, model = timed(StructuredRidge(space=space, solver=solver), X, Y)
                    times[solver].append(seconds)
                    if solver == "auto":
                        picked = model.solver_
                times["peer"].append(timed(Ridge(alpha=1.0), X, psi)[0])
        med = {key: 1e3 * float(np.median(v)) for key, v in times.items()}
        ratio = med["auto"] / min(med["exact"], med["cg"])
        worst = max(worst, ratio)
        nnz = float(np.count_nonzero(psi)) / rows
        lines.append(
            f"| {space!r} | {rows:,} × {features + 1} | {space.dim} | {(features + 1) * space.dim} | {nnz:.1f} | "
            f"{picked} | {med['auto']:.1f} | {med['exact']:.1f} | {med['cg']:.1f} | {ratio:.2f} | "
            f"{med['peer']:.1f} | {med['auto'] / med['peer']:.1f} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        load_line(),
        "",
        f"- Largest auto / best: {worst:.2f}×. The former rule (exact up to 600 unknowns) took the exact solve on "
        "every row of this table: the exact column was auto's time.",
    ]
    write_section("auto_solver", "\n".join(lines), args.output, quick="small shapes" if args.quick else None)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
