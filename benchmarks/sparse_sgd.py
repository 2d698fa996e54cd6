"""Linear SGD on wide sparse inputs: StructuredRidge (solver="sgd") against scikit-learn's SGDClassifier.

Usage: python benchmarks/sparse_sgd.py [--quick] [--output BENCHMARKS.md]

Hashed-text-like inputs: ``N_FEATURES`` = 2²⁰ columns (HashingVectorizer's default width), ``PER_ROW``
stored entries a row, scipy.sparse CSR for every model; ``LABELS`` labels set by a planted rule on a
few hundred columns. SGD's step shrinks every weight (the penalty) and, once averaging starts,
folds the iterate into the mean: done on every weight row, a step cost n_features × labels, so 3
epochs of 2,000 rows on 10⁶ columns took about 120 s (session 65). The weights are now held
scaled, as scale · V, and the mean as a·U + b·V (``core/ridge/sgdlazy.go``), so a step costs the
row's stored entries × labels. The peer is scikit-learn's SGDClassifier, which holds its weights
the same way, one per label (MultiOutputClassifier, its defaults: hinge loss, no averaging): both
run the same epochs at the same alpha. ``fit`` runs EPOCHS epochs; ``partial_fit`` one pass in
chunks of CHUNK rows, as a stream is read. Writes the ``sparse_sgd`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the peer on one BLAS thread, set before NumPy loads

import numpy as np
from _report import BENCHMARKS_MD, load_line, machine, sparse_rows, write_section
from combpred import StructuredRidge
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import hamming_loss
from sklearn.multioutput import MultiOutputClassifier

N_FEATURES, PER_ROW, TRAIN, TEST, LABELS = 1 << 20, 40, 5_000, 2_000, 20
QUICK = 1 << 16, 20, 500, 200, 5
EPOCHS, CHUNK, ALPHA = 5, 500, 1e-4
COMMON = 200  # the shared columns, on which the labels depend


def timed(call) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2¹⁶ columns, 500 training rows, 5 labels")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    n_features, per_row, train, test, labels = QUICK if args.quick else (N_FEATURES, PER_ROW, TRAIN, TEST, LABELS)
    rng = np.random.default_rng(0)
    X, Xt = sparse_rows(rng, train, n_features, per_row, COMMON), sparse_rows(rng, test, n_features, per_row, COMMON)
    W = rng.standard_normal((COMMON, labels))
    Y, Yt = ((X[:, :COMMON] @ W) > 0).astype(int), ((Xt[:, :COMMON] @ W) > 0).astype(int)
    # a 0/1 label that is the same in every row is one class to SGDClassifier: the planted rule makes none
    chunks = [slice(k, min(k + CHUNK, train)) for k in range(0, train, CHUNK)]

    def ours() -> StructuredRidge:
        return StructuredRidge(space="multilabel", solver="sgd", alpha=ALPHA, max_iter=EPOCHS, tol=None, random_state=0)

    def peer() -> MultiOutputClassifier:
        one = SGDClassifier(alpha=ALPHA, max_iter=EPOCHS, tol=None, random_state=0)
        return MultiOutputClassifier(one)

    results = {}
    for name, make in (("StructuredRidge (sgd)", ours), ("SGDClassifier (one per label)", peer)):
        model = make()
        fit_s = timed(lambda m=model: m.fit(X, Y))
        loss = hamming_loss(Yt, model.predict(Xt))
        stream = make()
        if name.startswith("SGD"):
            classes = [np.array([0, 1])] * labels
            stream_s = timed(lambda s=stream, k=classes: [s.partial_fit(X[c], Y[c], classes=k) for c in chunks])
        else:
            stream_s = timed(lambda s=stream: [s.partial_fit(X[c], Y[c]) for c in chunks])
        stream_loss = hamming_loss(Yt, stream.predict(Xt))
        results[name] = (fit_s, loss, stream_s, stream_loss)
        print(
            name,
            f"fit {fit_s:.3f} s (loss {loss:.4f}), partial_fit {stream_s:.3f} s (loss {stream_loss:.4f})",
            flush=True,
        )
    peer_fit, _, peer_stream, _ = results["SGDClassifier (one per label)"]
    lines = [
        "## Linear SGD on wide sparse inputs (`benchmarks/sparse_sgd.py`)",
        "",
        machine(),
        "",
        f"{train:,} training and {test:,} test rows of {n_features:,} columns, {per_row} stored entries a row (half "
        f"among the first {COMMON} columns), scipy.sparse CSR for every model; {labels} labels, each the sign of a "
        f"random linear function of the first {COMMON} columns. alpha = {ALPHA} for both, not tuned (the losses "
        f"show that the models learn; their objectives differ). `fit`: {EPOCHS} epochs, no tolerance stop "
        f"(StructuredRidge returns the suffix mean of its iterates, the peer its last); `partial_fit`: one pass in "
        f"chunks of {CHUNK} rows. The peer is MultiOutputClassifier(SGDClassifier()), scikit-learn's defaults (hinge "
        "loss), one binary SGD per label. Ratios: StructuredRidge's time over the peer's, measured in this run.",
        "",
        "| model | fit (s) | Hamming loss | partial_fit, one pass (s) | Hamming loss | fit / peer | partial_fit / peer |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (fit_s, loss, stream_s, stream_loss) in results.items():
        ratios = "— | —" if name.startswith("SGD") else f"{fit_s / peer_fit:.2f}× | {stream_s / peer_stream:.2f}×"
        lines.append(f"| {name} | {fit_s:.3f} | {loss:.4f} | {stream_s:.3f} | {stream_loss:.4f} | {ratios} |")
    lines += ["", load_line()]
    write_section("sparse_sgd", "\n".join(lines), args.output, quick="small sizes" if args.quick else None)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
