"""Many labels on sparse data: 10,000 labels × 100,000 sparse rows (issue 15's target: under a minute).

Usage: python benchmarks/sparse_many_labels.py [--quick] [--output BENCHMARKS.md]

Synthetic text-like data: 100,000 training and 10,000 test rows of 1,000 features, 20 non-zeros per
row, drawn from 500 latent topics (each topic has its own 200 frequent features and 10 labels; a
row takes 1 + Poisson(2) of its topic's labels and, with probability 0.2, one more label of Zipf
frequency over all 10,000). X and Y are scipy.sparse CSR, and StructuredRidge receives Y as the
positions of its ones (``cp_ridge_fit_sparse_y``): the linear CG fit holds Δ = c + B sparsely and
applies H through the Gram matrix (core/ridge/cubetargets.go, sparsetargets.go), so nothing of size
rows × labels is ever allocated. Every fit runs in a child process of its own, which reports its wall
time and the growth of its peak resident set (VmHWM, Go's memory included) over the resident set
before the fit. RidgeClassifier needs Y dense (10,000 labels: 8 GB of float64), so the comparison
with it is on the 1,000 most frequent labels of the same rows; at 10,000 labels the table reports
ours alone. Writes the ``sparse_many_labels`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, reset_peak, vm, write_section
from scipy import sparse

TARGET = "Target (issue 15): a multi-label problem with 10,000 labels and 100,000 sparse rows trains in under a minute."


def data(m: int, n: int, d: int, seed: int, topics: int = 500):
    """(X, Y) of m rows: sparse CSR inputs (n features, 20 per row) and sparse 0/1 targets (d labels)."""
    rng = np.random.default_rng(seed)
    feat = rng.integers(0, n, size=(topics, 200))
    zipf = 1.0 / np.arange(1, d + 1) ** 0.8
    zipf /= zipf.sum()
    labs = rng.choice(d, size=(topics, 10), p=zipf)
    topic = rng.integers(0, topics, size=m)
    cols = np.concatenate(
        [feat[topic[:, None], rng.integers(0, 200, size=(m, 15))], rng.integers(0, n, size=(m, 5))], axis=1
    )
    X = sparse.csr_matrix((rng.random(m * 20) + 0.1, (np.repeat(np.arange(m), 20), cols.ravel())), shape=(m, n))
    X.sum_duplicates()
    k = np.minimum(1 + rng.poisson(2, size=m), 10)
    order = rng.random((m, 10)).argsort(axis=1)
    take = np.arange(10)[None, :] < k[:, None]
    rows = np.repeat(np.arange(m), 10).reshape(m, 10)[take]
    cols_y = labs[topic[:, None], order][take]
    extra = rng.random(m) < 0.2
    rows = np.concatenate([rows, np.flatnonzero(extra)])
    cols_y = np.concatenate([cols_y, rng.choice(d, size=int(extra.sum()), p=zipf)])
    Y = sparse.csr_matrix((np.ones(len(rows)), (rows, cols_y)), shape=(m, d))
    Y.sum_duplicates()
    Y.data[:] = 1
    return X, Y


def precision_at(scores: np.ndarray, Y, k: int) -> float:
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    return float(np.take_along_axis(Y.toarray(), top, axis=1).mean())


def run_child(model: str, m: int, d: int, quick: bool) -> dict:
    """Fit one model on the training rows (d most frequent labels) and score it on the test rows."""
    from combpred import StructuredRidge, _capi
    from sklearn.linear_model import RidgeClassifier

    n, test = (200, 500) if quick else (1000, 10_000)
    X, Y = data(m + test, n, 10_000 if not quick else 2_000, 0)
    keep = np.argsort(-np.asarray(Y.sum(axis=0)).ravel(), kind="stable")[:d]
    Y = Y[:, keep].tocsr()
    X, Xt, Y, Yt = X[:m], X[m:], Y[:m], Y[m:]
    if model == "ours":
        est = StructuredRidge(solver="cg", n_jobs=-1)  # all cores: the child's OMP_NUM_THREADS=1 is the peers'
        _capi.lib()  # the library (and Go) start before the measurement
        target = Y
    else:
        est = RidgeClassifier()
        target = Y.toarray()
    reset = reset_peak()
    rss0 = vm("VmRSS")
    t0 = time.perf_counter()
    est.fit(X, target)
    seconds = time.perf_counter() - t0
    peak = vm("VmHWM")
    p1 = p3 = 0.0
    blocks = range(0, Xt.shape[0], 1000)
    for lo in blocks:
        s = est.decision_function(Xt[lo : lo + 1000])
        p1 += precision_at(s, Yt[lo : lo + 1000], 1) / len(blocks)
        p3 += precision_at(s, Yt[lo : lo + 1000], 3) / len(blocks)
    return {
        "seconds": seconds,
        "fit_bytes": (peak - rss0) if reset else float("nan"),
        "n_iter": int(np.max(getattr(est, "n_iter_", 0) or 0)),
        "p1": p1,
        "p3": p3,
        "x_bytes": int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes),
        "y_nnz": int(Y.nnz),
        "x_nnz": int(X.nnz),
        "n": int(X.shape[1]),
    }


def child(model: str, m: int, d: int, quick: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--child", model, str(m), str(d)] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def mib(b: float) -> str:
    return f"{b / 2**20:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2,000 rows, 200 and 2,000 labels, one round")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        model, m, d = args.child
        print(json.dumps(run_child(model, int(m), int(d), args.quick)))
        return
    m = 2_000 if args.quick else 100_000
    rounds = 1 if args.quick else 3
    sizes = [(200, True), (2_000, False)] if args.quick else [(1_000, True), (10_000, False)]
    lines = [
        "## Many labels on sparse data: 10,000 labels × 100,000 rows (`benchmarks/sparse_many_labels.py`)",
        "",
        machine(),
        "",
        TARGET,
        "",
        "Synthetic text-like data (see the script's docstring): sparse X (1,000 features, 20 non-zeros per row) and a "
        'sparse 0/1 Y, StructuredRidge(solver="cg", n_jobs=-1) with its other defaults on Y as given (the positions of its ones reach '
        "the core), RidgeClassifier (defaults, NumPy's BLAS on one thread) on the same X with Y dense. Each fit in a "
        f"child process of its own; {rounds} alternated rounds (ours, peer, ...), medians. Fit memory: growth of the "
        "child's peak resident set over its resident set before the fit. P@k: precision at k of the decision "
        "scores on 10,000 held-out rows.",
        "",
        "| rows × labels | ones in Y | model | fit (s, median) | fit memory (MiB) | CG iterations | P@1 | P@3 |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    verdict = []
    for d, with_peer in sizes:
        results: dict[str, list[dict]] = {"ours": [], "peer": []}
        for _ in range(rounds):
            results["ours"].append(child("ours", m, d, args.quick))
            if with_peer:
                results["peer"].append(child("peer", m, d, args.quick))
        for model, runs in results.items():
            if not runs:
                continue
            t = float(np.median([r["seconds"] for r in runs]))
            r = runs[-1]
            name = "StructuredRidge (sparse Y)" if model == "ours" else "RidgeClassifier (dense Y)"
            it = str(r["n_iter"]) if model == "ours" else ""
            lines.append(
                f"| {m:,} × {d:,} | {r['y_nnz']:,} | {name} | {t:.1f} | {mib(r['fit_bytes'])} | {it} | "
                f"{r['p1']:.3f} | {r['p3']:.3f} |"
            )
            print(lines[-1], flush=True)
            if model == "ours" and d == sizes[-1][0]:
                dense = 8 * m * d
                verdict.append(
                    f"- {d:,} labels × {m:,} sparse rows in under a minute: **{'met' if t < 60 else 'missed'}** "
                    f"({t:.1f} s, {r['n_iter']} CG iterations; fit memory {mib(r['fit_bytes'])} MiB, where Y as dense "
                    f"int64 rows alone would take {mib(dense)} MiB and Δ as many again)."
                )
        if with_peer and results["peer"]:
            a = float(np.median([r["seconds"] for r in results["ours"]]))
            b = float(np.median([r["seconds"] for r in results["peer"]]))
            verdict.append(f"- {d:,} labels: StructuredRidge {a / b:.2f}× RidgeClassifier's fit time.")
    lines += ["", f"1-minute load average at the end: {os.getloadavg()[0]:.1f}.", "", *verdict]
    if args.quick:
        lines += ["", "Quick smoke run: not the measurement."]
    write_section("sparse_many_labels", "\n".join(lines), args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
