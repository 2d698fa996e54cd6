"""ProbabilisticStructured: Markov chains, log-partition estimates, label ranking and yeast, in one run.

Usage: python benchmarks/probabilistic.py [--quick] [--output BENCHMARKS.md]

(a) Effective samples per second of each sampler (Metropolis "meta", local moves, mixed, CFTP) on
permutations of 10 labels and directed cycles on 10 vertices at ‖u‖ = 0.5, 2, 8. The per-step states
a chain passes through are not exposed by the Python API (``sample`` thins and burns in), so this
part runs the Go benchmark ``go test ./core/prob -bench ChainESS`` in the source tree and parses it
(skipped, with a note, where Go or the source tree is missing).
(b) Accuracy of the FPRAS and of the Taylor approximation against exact log Z (permutations of 6
labels, 720 structures, enumerated) as ‖u‖ grows, through ``log_partition``.
(c) Label ranking: in ``benchmarks/prob_label_ranking.py`` (all eight shared sets).
(d) Multi-label yeast: log-loss and Hamming loss against MultiOutputClassifier(LogisticRegression()),
the regularisation of both chosen by 3-fold CV on the training split.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, machine, pyplot, save_figure, write_section
from combpred import ProbabilisticStructured, datasets, spaces
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import hamming_loss
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.multioutput import MultiOutputClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

ROOT = Path(__file__).resolve().parent.parent
CHAINS = ["meta", "local", "mixed", "cftp"]
SPACES = [("permutations", 10), ("dicycles", 10), ("permutations", 40), ("dicycles", 40)]


# -- (a) chains ------------------------------------------------------------------------------------


def chain_ess(quick: bool) -> tuple[dict, str]:
    """{(space, n, norm, chain): (ess/s, τ or backward steps per sample)} from the Go benchmark."""
    if shutil.which("go") is None or not (ROOT / "go.mod").exists():
        return {}, "skipped: needs the Go toolchain and the source tree (go.mod)"
    pattern = "ChainESS/.*/u=(0.5|2)/" if quick else "ChainESS"
    cmd = ["go", "test", "./core/prob", "-run", "^$", "-bench", pattern, "-benchtime", "0.05s" if quick else "1s"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return {}, f"failed: {proc.stderr.strip()[-300:]}"
    out = {}
    line_re = re.compile(r"BenchmarkChainESS/([a-z]+)(\d+)/u=([\d.]+)/(\w+)-\d+\s+\d+\s+[\d.]+ ns/op(.*)")
    for line in proc.stdout.splitlines():
        m = line_re.match(line)
        if m:
            metrics = {unit: float(v) for v, unit in re.findall(r"([\d.e+]+) ([\w/]+)", m.group(5))}
            extra = metrics.get("tau", metrics.get("backsteps/sample", math.nan))
            key = (m.group(1), int(m.group(2)), float(m.group(3)), m.group(4))
            out[key] = (metrics.get("ess/s", math.nan), extra)
    return out, "`" + " ".join(cmd) + "`"


def chain_table(ess: dict, how: str) -> list[str]:
    lines = [
        "### (a) Effective samples per second of each sampler",
        "",
        f"From the Go benchmark {how} (the Python API does not expose the successive states of a chain). "
        "u is a fixed random direction scaled to ‖u‖; ess/s = chain steps per second ÷ the larger integrated "
        "autocorrelation time τ of two statistics (the score ⟨u, ψ(y)⟩ and y[0]); a CFTP sample is exact and "
        "independent (one effective sample), its cost is the backward steps it needed. Caution: τ of one chain "
        "cannot see modes the chain never reaches, so a local chain stuck in one mode of a peaked distribution "
        "looks good here (on permutations of 4 labels the transposition chain never crossed between two modes "
        "in 240,000 steps: tests/test_probabilistic.py); the mixed chain's uniform proposals do cross. The mixed "
        "chain makes a uniform proposal one step in 1 + c, c its cost in local moves (`core/prob/mixed.go`, "
        "proposalCost: 2 on 10 labels, 31 on 40), so that proposals take about half its time; with one step in two "
        "(until session 48) they took up to 99 % of it, and on 40 labels at ‖u‖ = 8 it gave 95 effective samples "
        "per second where the local chain gave 2,805.",
        "",
    ]
    if not ess:
        return lines + [f"Not measured: {how}."]
    lines += ["| space | ‖u‖ | " + " | ".join(CHAINS) + " | best |", "|---|---:|" + "---:|" * len(CHAINS) + "---|"]
    for sp, n in SPACES:
        for norm in sorted({k[2] for k in ess if k[:2] == (sp, n)}):
            vals = {c: ess.get((sp, n, norm, c), (math.nan, math.nan)) for c in CHAINS}
            cells = []
            for c in CHAINS:
                rate, extra = vals[c]
                what = f"τ {extra:.3g}" if c != "cftp" else f"{extra:.3g} steps"
                # the benchmark skips CFTP where a sample would pass its bound of 2^20 steps
                cells.append("beyond 2²⁰ steps" if math.isnan(rate) else f"{rate:,.0f} ({what})")
            best = max(CHAINS, key=lambda c: -1 if math.isnan(vals[c][0]) else vals[c][0])
            lines.append(f"| {sp}({n}) | {norm:g} | " + " | ".join(cells) + f" | {best} |")
    return lines


# -- (b) log Z ------------------------------------------------------------------------------------


def log_partition_accuracy(quick: bool) -> list[dict]:
    space = spaces.Permutations(6)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    model = ProbabilisticStructured(space=space, alpha=0.01, fit_intercept=False).fit(X, space.sample(200, 0))
    xq = rng.normal(size=(3 if quick else 5, 4))
    base = np.linalg.norm(model.decision_function(xq), axis=1)
    rows = []
    for norm in [0.5, 2.0] if quick else [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]:
        xs = xq * (norm / base)[:, None]  # no intercept: the scores scale with x
        exact, _ = model.log_partition(xs, method="exact")
        row = {"norm": norm}
        taylor, info = model.log_partition(xs, method="taylor")
        row["taylor"] = (np.abs(taylor - exact).max(), info["bound"].max(), info["valid"].mean())
        runs = {
            "fpras-cftp": {"epsilon": 0.25, "schedule": "thesis"},
            "fpras-1000": {"epsilon": 0.25, "n_samples": 1000, "sampler": "auto"},
        }
        for name, kw in runs.items():
            if name == "fpras-cftp" and norm > (0.5 if quick else 2.0):
                row[name] = None  # minutes at ‖u‖ = 4 (172 s), hours beyond: CFTP's cost grows as exp(f_max − f_min)
                continue
            t0 = time.perf_counter()
            est, info = model.log_partition(xs, method="fpras", random_state=1, **kw)
            row[name] = (np.abs(est - exact).max(), info["samples"].mean(), time.perf_counter() - t0)
        rows.append(row)
    return rows


def log_partition_table(rows: list[dict]) -> list[str]:
    lines = [
        "### (b) log Z: FPRAS and Taylor against the exact value",
        "",
        "Permutations of 6 labels (720 structures: exact log Z by enumeration); a model without intercept, "
        "query rows scaled so that ‖u‖ takes each value; the largest |estimate − log Z| over the rows "
        "(= the relative error of Z to first order). FPRAS with ε = 0.25, δ = ¼: *thesis S* uses the printed "
        "sample size S = ⌈65 ε⁻² l e^{2/3}⌉ per stage with exact CFTP samples, as the theorem assumes; "
        '*S = 1000* overrides it with 1000 samples per stage drawn by `sampler="auto"` (exact, by the rankings\' '
        "subset programme, on these 6 labels; CFTP where cheap and the mixed chain elsewhere beyond 16), fewer "
        "than the printed S, which voids the guarantee. Taylor: its proven bound on the error, and "
        "the fraction of rows inside its validity condition max |⟨u, ψ⟩| ≤ 1.",
        "",
        "| ‖u‖ | Taylor error | Taylor bound | valid | FPRAS thesis S: error | samples/row | time | "
        "FPRAS S = 1000: error | samples/row | time |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        err, bound, valid = r["taylor"]
        cells = [f"{r['norm']:g}", f"{err:.2g}", f"{bound:.2g}", f"{valid:.0%}"]
        for name in ("fpras-cftp", "fpras-1000"):
            if r[name] is None:
                cells += ["not run (CFTP cost)", "", ""]
            else:
                e, n, s = r[name]
                cells += [f"{e:.2g}", f"{n:,.0f}", f"{s:.2f} s"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


# -- helpers of the searches (also used by prob_label_ranking.py) ---------------------------------


def _mean_log_likelihood(estimator, X, Y) -> float:
    """Mean log p(y | x) of a ProbabilisticStructured, alone, at the end of a Pipeline or inside a
    search (Pipeline.score_samples forwards X only, so the steps before it are applied here)."""
    estimator = getattr(estimator, "best_estimator_", estimator)
    if isinstance(estimator, Pipeline):
        X, estimator = estimator[:-1].transform(X), estimator[-1]
    return float(estimator.score_samples(X, Y).mean())


def _search(estimator, grid: dict, scoring, cv) -> GridSearchCV:
    pipe = Pipeline([("scale", StandardScaler()), ("model", estimator)])
    return GridSearchCV(pipe, {f"model__{k}": v for k, v in grid.items()}, scoring=scoring, cv=cv)


def _label_probabilities(estimator, X) -> np.ndarray:
    P = estimator.predict_proba(X)
    return np.column_stack([p[:, 1] for p in P]) if isinstance(P, list) else P


def _neg_log_loss(estimator, X, Y) -> float:
    """Minus the mean binary cross-entropy over all (example, label) entries."""
    P = np.clip(_label_probabilities(estimator, X), 1e-15, 1 - 1e-15)
    return float(np.mean(Y * np.log(P) + (1 - Y) * np.log(1 - P)))


def yeast(quick: bool) -> list[tuple]:
    data = datasets.load_yeast()
    X, Y, Xt, Yt = data.X_train, data.Y_train, data.X_test, data.Y_test
    if quick:
        X, Y = X[:600], Y[:600]
    # The same grid for both: α = 1/(2 C m) on the inner training folds (m rows) is the same objective.
    Cs = [0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
    m_inner = len(X) - len(X) // 3
    models = {
        "ProbabilisticStructured (multilabel)": (
            ProbabilisticStructured(space="multilabel", tol=1e-8, max_iter=1000),
            {"alpha": [1 / (2 * C * m_inner) for C in Cs]},
        ),
        "MultiOutputClassifier(LogisticRegression)": (
            MultiOutputClassifier(LogisticRegression(tol=1e-8, max_iter=5000)),
            {"estimator__C": Cs},
        ),
    }
    rows = []
    for name, (est, grid) in models.items():
        search = _search(est, grid, _neg_log_loss, KFold(3, shuffle=True, random_state=0)).fit(X, Y)
        t0 = time.perf_counter()
        best = search.best_estimator_.fit(X, Y)
        fit_s = time.perf_counter() - t0
        loss = -_neg_log_loss(best, Xt, Yt)
        rows.append((name, search.best_params_, loss, hamming_loss(Yt, best.predict(Xt)), fit_s))
    return rows


def yeast_table(rows: list[tuple], quick: bool) -> list[str]:
    lines = [
        "### (d) Multi-label yeast: log-loss and Hamming loss",
        "",
        f"MULAN split ({'600-row training subset' if quick else '1500 train'} / 917 test), inputs standardised; "
        "the regularisation of each model chosen by 3-fold CV on the training split by log-loss, over the same grid "
        "(C ∈ {0.003, 0.01, 0.03, 0.1, 0.3, 1} and α = 1/(2 C m) with m the inner training-fold size, the "
        "equivalent objective; both solved to a relative tolerance of 1e-8). Log-loss: mean "
        "binary cross-entropy over all (gene, label) entries of the test set; ProbabilisticStructured gives the "
        "label marginals (`predict_proba`), predicts the mode. The two are the same model family (independent "
        "logistic regressions), so they should agree; the table checks that they do. (The refit on the whole "
        "training split keeps α, resp. C, so there the two objectives differ by the factor m/m_inner.)",
        "",
        "| model | chosen | test log-loss | test Hamming loss | refit time |",
        "|---|---|---:|---:|---:|",
    ]
    for name, params, loss, hamming, fit_s in rows:
        chosen = ", ".join(f"{k.split('__')[-1]}={v:.3g}" for k, v in params.items())
        lines.append(f"| {name} | {chosen} | {loss:.4f} | {hamming:.4f} | {fit_s * 1e3:.0f} ms |")
    return lines


# -- figure and main ------------------------------------------------------------------------------


def _norm_ticks(ax, norms: list[float]) -> None:
    """Label a logarithmic ‖u‖ axis at the measured norms only."""
    ax.set_xticks(norms, [f"{n:g}" for n in norms])
    ax.tick_params(axis="x", which="minor", labelbottom=False)


def figure(ess: dict, logz: list[dict]) -> str | None:
    plt = pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(SPACES) + 1, figsize=(25, 4))
    for ax, (sp, n) in zip(axes[:-1], SPACES, strict=True):
        for c in CHAINS:
            pts = sorted((k[2], v[0]) for k, v in ess.items() if k[:2] == (sp, n) and k[3] == c)
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=c)
        ax.set(xscale="log", yscale="log", xlabel="‖u‖", ylabel="effective samples / s", title=f"{sp}({n})")
        _norm_ticks(ax, sorted({k[2] for k in ess if k[:2] == (sp, n)}))
        ax.grid(alpha=0.3)
        ax.legend()
    ax = axes[-1]
    norms = [r["norm"] for r in logz]
    ax.plot(norms, [r["taylor"][0] for r in logz], marker="o", label="Taylor error")
    ax.plot(norms, [r["taylor"][1] for r in logz], ls="--", label="Taylor bound")
    for name in ("fpras-cftp", "fpras-1000"):
        pts = [(r["norm"], r[name][0]) for r in logz if r[name] is not None]
        ax.plot(*zip(*pts, strict=True), marker="s", label=name)
    ax.set(xscale="log", yscale="log", xlabel="‖u‖", ylabel="max |estimate − log Z|", title="permutations(6): log Z")
    _norm_ticks(ax, norms)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path = save_figure(fig, "probabilistic")
    plt.close(fig)
    return str(path.relative_to(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, short benchmarks (smoke run)")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    t0 = time.perf_counter()
    ess, how = chain_ess(args.quick)
    logz = log_partition_accuracy(args.quick)
    multilabel = yeast(args.quick)
    body = [
        "## ProbabilisticStructured (`benchmarks/probabilistic.py`)",
        "",
        f"Measured on: {machine()}." + (" **Quick smoke run (subsets), not the benchmark.**" if args.quick else ""),
        "",
        *chain_table(ess, how),
        "",
        *log_partition_table(logz),
        "",
        "### (c) Label ranking",
        "",
        "Moved to its own section, on all eight shared sets: *Label ranking with ProbabilisticStructured* "
        "(`benchmarks/prob_label_ranking.py`).",
        "",
        *yeast_table(multilabel, args.quick),
        "",
        f"Whole script: {(time.perf_counter() - t0) / 60:.1f} min.",
    ]
    if not args.quick:
        path = figure(ess, logz)
        if path:
            body += ["", f"![Chains' effective samples per second and log Z accuracy]({path})"]
    write_section("probabilistic", "\n".join(body), args.output)
    print("\n".join(body))


if __name__ == "__main__":
    main()
