"""ProbabilisticStructured with exact inference by dynamic programming on rankings and routes.

Usage: python benchmarks/exact_inference.py [--quick] [--output BENCHMARKS.md]

The sum-product versions of the exact decoders give log Z and E[ψ] exactly: the subset programme for
permutations up to 16 labels, Held–Karp for directed and undirected cycles up to 14 vertices. Before
them these spaces were fitted by Adam on sampled gradients beyond 2¹⁴ structures.

(a) Marginals per input: exact (the programme) against sampled (``sampler="mixed"``, the estimator's
default 100 samples), through ``predict_marginals`` on 200 inputs, and the sampled estimate's error.
(b) Fits on rankings, the targets of issue 14: 2,000 rows × 7 labels and 200 rows × 16 labels
(synthetic, a noisy linear model of 6 features), and vowel (528 rows × 11 labels, the shared
label-ranking set), each with exact inference and L-BFGS against the pairwise logistic regression a
user would otherwise pick, both measured in this run; the 7-label set also with the sampled fit
(Adam), as before.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import ProbabilisticStructured, datasets, spaces
from combpred.baselines import PairwiseRanker
from combpred.metrics import kendall_tau
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression


def _synthetic(space: spaces.Space, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 6))
    W = rng.normal(size=(6, space.dim)) * 0.5
    return X, space.decode(X @ W + rng.normal(size=(m, space.dim)))


def marginals_table(quick: bool) -> list[str]:
    rows = []
    cases = [spaces.Permutations(8), spaces.Permutations(12), spaces.DirectedCycles(8), spaces.DirectedCycles(11)]
    if not quick:
        cases += [spaces.Permutations(16), spaces.DirectedCycles(14), spaces.UndirectedCycles(14)]
    q = 20 if quick else 200
    for space in cases:
        X, Y = _synthetic(space, 300, 1)
        timings = []
        for sampler in ("auto", "mixed"):
            model = ProbabilisticStructured(space=space, alpha=0.1, sampler=sampler, max_iter=5, random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X, Y)
            t0 = time.perf_counter()
            model.predict_marginals(X[:q])
            timings.append((time.perf_counter() - t0) / q)
        rows.append(f"| {space!r} | {space.dim} | {timings[0] * 1e3:.2f} | {timings[1] * 1e3:.2f} |")
        print(rows[-1], flush=True)
    return [
        "### Marginals E[ψ | x] per input",
        "",
        f"predict_marginals on {q} inputs, milliseconds per input on all cores: exact (the programme, checked against "
        'enumeration in the Go tests) against sampled (a model fitted with sampler="mixed", the estimator\'s '
        "default 100 samples per input, a Monte Carlo error of order 0.1 per coordinate).",
        "",
        "| space | d | exact (ms) | sampled (ms) |",
        "|---|---:|---:|---:|",
        *rows,
    ]


def _fit_row(name: str, X: np.ndarray, Y: np.ndarray, space: spaces.Space, sampler: str = "auto") -> str:
    split = int(0.8 * len(X))
    # the sampled fit as before exact inference: Adam's former default of 200 iterations
    max_iter = 500 if sampler == "auto" else 200
    model = ProbabilisticStructured(space=space, alpha=0.01, sampler=sampler, max_iter=max_iter, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # a warm-up fit, untimed, as the peer gets one: the first call's costs are in neither time
        clone(model).set_params(max_iter=2).fit(X[:50], Y[:50])
        t0 = time.perf_counter()
        model.fit(X[:split], Y[:split])
        ours = time.perf_counter() - t0
    tau = float(kendall_tau(Y[split:], model.predict(X[split:])))
    peer = PairwiseRanker(LogisticRegression()).fit(X[:split], Y[:split])  # a warm-up fit, untimed
    t0 = time.perf_counter()
    peer.fit(X[:split], Y[:split])
    theirs = time.perf_counter() - t0
    peer_tau = float(kendall_tau(Y[split:], peer.predict(X[split:])))
    inference = "exact" if model.solver_ == "lbfgs" else f"sampled ({sampler})"
    return (
        f"| {name} | {split} × {Y.shape[1]} | {inference}, {model.solver_} | {ours:.1f} | {model.n_iter_} | "
        f"{model.relative_gradient_:.1e} | {tau:.3f} | {theirs:.2f} | {peer_tau:.3f} | {ours / theirs:.1f}× |"
    )


def fits_table(quick: bool) -> list[str]:
    rows = []
    p7 = spaces.Permutations(7)
    X, Y = _synthetic(p7, 500 if quick else 2500, 2)
    rows.append(_fit_row("synthetic", X, Y, p7))
    print(rows[-1], flush=True)
    rows.append(_fit_row("synthetic", X, Y, p7, sampler="mixed"))
    print(rows[-1], flush=True)
    try:
        Xv, Yv = datasets.load_label_ranking("vowel", return_X_y=True)
        Xv = (Xv - Xv.mean(0)) / Xv.std(0)
        if quick:
            Xv, Yv = Xv[:150], Yv[:150]
        rows.append(_fit_row("vowel", Xv, Yv, spaces.Permutations(Yv.shape[1])))
        print(rows[-1], flush=True)
    except FileNotFoundError as exc:
        print(f"vowel skipped: {exc}")
    if not quick:
        p16 = spaces.Permutations(16)
        X, Y = _synthetic(p16, 250, 3)
        rows.append(_fit_row("synthetic", X, Y, p16))
        print(rows[-1], flush=True)
    return [
        "### Fits on rankings",
        "",
        "ProbabilisticStructured(alpha=0.01, max_iter=500; the sampled fit: max_iter=200, Adam's former default) on "
        "the first 80 % of the rows, Kendall τ of the mode on the rest, against PairwiseRanker(LogisticRegression()) "
        "on the same split, timed in the same run (after an untimed warm-up fit). Issue 14's "
        "targets: 2,000 × 7 labels ≤ 10 s, vowel ≤ 30 s, 200 × 16 labels ≤ 60 s, converged to a relative gradient "
        "of 1e-6 (the estimator's tol).",
        "",
        "| data | rows × labels | inference, solver | fit (s) | iterations | relative gradient | τ | pairwise LR fit (s) "
        "| pairwise τ | time ratio |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    lines = [
        "## ProbabilisticStructured: exact inference by dynamic programming (`benchmarks/exact_inference.py`)",
        "",
        f"Machine: {machine()}.",
        "",
        *marginals_table(args.quick),
        "",
        *fits_table(args.quick),
    ]
    write_section("exact_inference", "\n".join(lines), args.output, quick="small sizes" if args.quick else None)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
