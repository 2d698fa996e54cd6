"""ProbabilisticStructured on a space summed over every structure: Cliques, against NumPy and SciPy.

Usage: python benchmarks/brute_force.py [--quick] [--output BENCHMARKS.md]

Cliques has no dynamic programme: exact inference sums over its 2^n − n structures. The peer is
what a user would otherwise write: the table Ψ of every structure's ψ, built once (2^n·d values),
then E[ψ | x] = softmax(UΨᵀ)Ψ in NumPy, and the fit as SciPy's L-BFGS on the same objective and
gradient (ProbabilisticStructured's: λ‖W‖² + mean of log Z(u_i) − ⟨u_i, ψ(y_i)⟩, the intercept
unpenalised). Both run in this process, alternated; NumPy's BLAS on one thread, combpred's core on
all cores (its default).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, write_section
from combpred import ProbabilisticStructured, spaces
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

ALPHA = 0.1  # λ of the objective, ProbabilisticStructured's alpha


def table(n: int) -> np.ndarray:
    """Ψ of Cliques(n): the empty clique and every vertex set of at least two vertices."""
    masks = np.arange(1 << n)
    bits = (masks[:, None] >> np.arange(n)) & 1
    bits = bits[(bits.sum(axis=1) >= 2) | (masks == 0)]
    iu = np.triu_indices(n, 1)
    return (bits[:, iu[0]] * bits[:, iu[1]]).astype(float), bits


def numpy_marginals(U: np.ndarray, Psi: np.ndarray) -> np.ndarray:
    F = U @ Psi.T
    F -= F.max(axis=1, keepdims=True)
    np.exp(F, out=F)
    F /= F.sum(axis=1, keepdims=True)
    return F @ Psi


def scipy_fit(X: np.ndarray, target: np.ndarray, Psi: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """L-BFGS on J(W) for inputs with an intercept column; target holds each row's index in Psi."""
    m, k = X.shape
    d = Psi.shape[1]
    Xt = np.hstack([X, np.ones((m, 1))])
    psi_y = Psi[target]

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        W = w.reshape(k + 1, d)
        U = Xt @ W
        F = U @ Psi.T
        lz = logsumexp(F, axis=1)
        P = np.exp(F - lz[:, None])
        J = ALPHA * np.sum(W[:k] ** 2) + np.mean(lz - np.sum(U * psi_y, axis=1))
        G = Xt.T @ (P @ Psi - psi_y) / m
        G[:k] += 2 * ALPHA * W[:k]
        return J, G.ravel()

    res = minimize(
        objective, np.zeros((k + 1) * d), jac=True, method="L-BFGS-B", options={"gtol": tol, "maxiter": 1000}
    )
    return res.x.reshape(k + 1, d), res.nit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small spaces, one round")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    sizes = [6, 8] if args.quick else [8, 10, 12, 14]
    rounds = 1 if args.quick else 3
    m, q, n_features = 300, 1000, 10
    rows = []
    with threadpool_limits(1):
        for n in sizes:
            space = spaces.Cliques(n)
            t0 = time.perf_counter()
            Psi, bits = table(n)
            table_s = time.perf_counter() - t0
            rng = np.random.default_rng(n)
            X = rng.normal(size=(m + q, n_features))
            W = rng.normal(size=(n_features, space.dim)) * 0.3
            target = np.argmax(X[:m] @ W @ Psi.T + rng.gumbel(size=(m, len(Psi))), axis=1)
            Y = bits[target]
            ours_fit, peer_fit, ours_pm, peer_pm = [], [], [], []
            for _ in range(rounds):
                model = ProbabilisticStructured(space=space, alpha=ALPHA)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(X[:m], Y)
                ours_fit.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                W_peer, peer_iters = scipy_fit(X[:m], target, Psi, model.tol)
                peer_fit.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                M = model.predict_marginals(X[m:])
                ours_pm.append(time.perf_counter() - t0)
                U = model.decision_function(X[m:])
                t0 = time.perf_counter()
                M_peer = numpy_marginals(U, Psi)
                peer_pm.append(time.perf_counter() - t0)
            gap = np.abs(M - M_peer).max()
            U_peer = np.hstack([X[m:], np.ones((q, 1))]) @ W_peer
            agree = np.abs(numpy_marginals(U_peer, Psi) - M).max()
            f, pf, p, pp = (float(np.median(v)) for v in (ours_fit, peer_fit, ours_pm, peer_pm))
            rows.append(
                f"| Cliques({n}) | {len(Psi):,} | {space.dim} | {f:.2f} | {model.n_iter_} | {pf:.2f} | {peer_iters} | "
                f"{f / pf:.2f}× | {p * 1e3:.0f} | {pp * 1e3:.0f} | {p / pp:.2f}× | {table_s * 1e3:.0f} | {gap:.0e} | {agree:.0e} |"
            )
            print(rows[-1], flush=True)
    body = "\n".join(
        [
            "## ProbabilisticStructured on a space summed by brute force: Cliques (`benchmarks/brute_force.py`)",
            "",
            machine(),
            "",
            f"Cliques(n) has no dynamic programme, so exact inference sums over all its structures. {m} training rows and "
            f"{q} test rows of {n_features} Gaussian features, targets drawn from a linear model (Gumbel noise on the "
            f"scores of every structure); alpha = {ALPHA}, default tol. The peer is a table Ψ of every structure's ψ "
            "(built once, its time in the table column, 2^n·d values) with NumPy's softmax(UΨᵀ)Ψ for the marginals and "
            "SciPy's L-BFGS on the same objective and gradient for the fit. Medians of "
            f"{rounds} alternated rounds; NumPy's BLAS on one thread, combpred's core on all cores. "
            "'max diff' compares our marginals with NumPy's on our scores; 'fit agreement' with the marginals of "
            "the peer's fitted model.",
            "",
            "| space | \\|Y\\| | d | fit (s) | iterations | SciPy fit (s) | SciPy iterations | fit ratio | "
            "predict_marginals (ms) | NumPy (ms) | ratio | table Ψ (ms) | max diff | fit agreement |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    write_section(
        "brute_force", body, args.output, quick="Cliques(6) and Cliques(8), one round" if args.quick else None
    )


if __name__ == "__main__":
    main()
