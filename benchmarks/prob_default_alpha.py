"""Evidence for ProbabilisticStructured's default regularisation (issue 14, item 3).

Usage: python benchmarks/prob_default_alpha.py [--quick] [--output BENCHMARKS.md]

For each data set and each candidate alpha, fit on a training split and report the held-out mean
log-likelihood (``score_samples``, the quantity whose calibration a default should get right) and
the held-out quality of ``predict`` (Hamming accuracy for multi-label sets, Kendall τ for rankings,
accuracy for multiclass). Candidates: fixed alphas, and ``1 / (2 · n_samples)``, the objective
scikit-learn's LogisticRegression minimises at its default C = 1 (J = α‖W‖² + mean NLL with
α = 1/(2·C·m)). Data: yeast (MULAN split), scene (MULAN train, 70/30), four label-ranking sets
with ≤ 5 labels (70/30, seed 0) and their top-ranked label as a multiclass target. Inputs are
standardised on the training split. Writes the ``prob_default_alpha`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import ProbabilisticStructured, datasets
from combpred.metrics import kendall_tau
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
FIXED = (1.0, 0.1, 0.01, 0.001)


def sets(quick: bool):
    yeast = datasets.load_yeast()
    yield "yeast", "multilabel", yeast.X_train, yeast.Y_train, yeast.X_test, yeast.Y_test
    if not quick:
        _, rows = datasets.read_arff((SHARED / "scene" / "scene-train.arff").read_text())
        X, Y = rows[:, :-6], rows[:, -6:].astype(np.int64)
        a, b = train_test_split(np.arange(len(X)), test_size=0.3, random_state=0)
        yield "scene", "multilabel", X[a], Y[a], X[b], Y[b]
    for name in ("iris", "wine", "vehicle", "stock") if not quick else ("iris",):
        X, Y = datasets.load_label_ranking(name, return_X_y=True)
        a, b = train_test_split(np.arange(len(X)), test_size=0.3, random_state=0)
        yield name, "permutations", X[a], Y[a], X[b], Y[b]
        top = Y.argmin(axis=1)
        yield f"{name} (top label)", "multiclass", X[a], top[a], X[b], top[b]


def quality(space: str, Y: np.ndarray, P: np.ndarray) -> float:
    if space == "multilabel":
        return float(np.mean(Y == P))
    if space == "permutations":
        return float(np.mean(kendall_tau(Y, P)))
    return float(np.mean(Y == P))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    header = "| data | space | m | " + " | ".join(f"α={a:g}" for a in FIXED) + " | **α=1/(2m)** (C=1) |"
    lines = [
        "## ProbabilisticStructured: the default regularisation (`benchmarks/prob_default_alpha.py`)",
        "",
        machine(),
        "",
        "Held-out mean log-likelihood (higher is better) / held-out quality of `predict` (Hamming accuracy, "
        "Kendall τ or accuracy), per alpha. The best log-likelihood of each row is in bold.",
        "",
        header,
        "|" + "---|" * (3 + len(FIXED) + 1),
    ]
    wins = {a: 0 for a in (*FIXED, "C=1")}
    for name, space, X, Y, Xt, Yt in sets(args.quick):
        scaler = StandardScaler().fit(X)
        X, Xt = scaler.transform(X), scaler.transform(Xt)
        m = len(X)
        cells = []
        for alpha in (*FIXED, 1 / (2 * m)):
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = ProbabilisticStructured(space=space, alpha=alpha, max_iter=2000).fit(X, Y)
            ll = float(np.mean(model.score_samples(Xt, Yt)))
            cells.append((ll, quality(space, Yt, model.predict(Xt)), time.perf_counter() - t0))
            print(name, alpha, cells[-1], flush=True)
        best = int(np.argmax([c[0] for c in cells]))
        wins[(*FIXED, "C=1")[best]] += 1
        lines.append(
            f"| {name} | {space} | {m} | "
            + " | ".join(
                (f"**{ll:.3f}**" if k == best else f"{ll:.3f}") + f" / {q:.3f}" for k, (ll, q, _) in enumerate(cells)
            )
            + " |"
        )
    lines += [
        "",
        "Best held-out log-likelihood: "
        + ", ".join(f"α={k:g}: {v}" if isinstance(k, float) else f"{k}: {v}" for k, v in wins.items())
        + f". `python benchmarks/prob_default_alpha.py{' --quick' if args.quick else ''}`.",
    ]
    write_section(
        "prob_default_alpha", "\n".join(lines), args.output, quick="yeast and iris only" if args.quick else None
    )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
