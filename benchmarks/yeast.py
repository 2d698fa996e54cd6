"""Yeast multi-label benchmark: StructuredRidge against scikit-learn, measured in one run.

Usage: python benchmarks/yeast.py [--quick] [--output BENCHMARKS.md]
Hyper-parameters of every model are chosen by 3-fold cross-validation on the training split only.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _report import BENCHMARKS_MD, dgemm_ceiling, kernel_ridge_flops, machine, rate, ridge_flops, write_section
from combpred import StructuredRidge, _core, _demo, datasets
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

PAIRS = (
    ("StructuredRidge (linear)", "RidgeClassifier"),
    ("StructuredRidge (rbf)", "one-vs-rest KernelRidge (rbf)"),
)

TARGETS = """Targets (issue: foundation): linear fit ≤ 3× RidgeClassifier; rbf fit ≤ 3× one-vs-rest KernelRidge;
rbf Hamming loss ≤ 0.190 and ranking loss ≤ 0.160; single-row predict < 100 µs."""


def single_row_latency(results, calls: int = 3000, rounds: int = 5, copies: int = 3) -> list[str]:
    """End-to-end time of predict on one row, for each StructuredRidge of the comparison.

    One rbf call streams the model's 1.2 MB support matrix, more than a core's second-level cache,
    and identical fits of the same model then predict in 75–85 µs or in 115–125 µs, depending on
    where their memory lands (reproduced with identical fits in one loop). So each model is fitted
    ``copies`` times; the copies take turns, calls / rounds predictions per round; each copy
    counts with the median of its fastest round, and the model with the median over its copies
    (the range is reported). NumPy's BLAS is limited to one thread meanwhile, so that no idle
    thread of its pool spins next to the calls."""
    data = datasets.load_yeast()
    scaler = StandardScaler().fit(data.X_train)
    X, x1 = scaler.transform(data.X_train), scaler.transform(data.X_test[:1])
    entries = [e for e in results if isinstance(e.estimator, StructuredRidge)]
    models = [
        [StructuredRidge(kernel=e.estimator.kernel, **e.params).fit(X, data.Y_train) for _ in range(copies)]
        for e in entries
    ]
    best = [[np.inf] * copies for _ in entries]
    with threadpool_limits(1):
        for model in (m for ms in models for m in ms):
            model.predict(x1)
        for _ in range(rounds):
            for e, ms in enumerate(models):
                for c, model in enumerate(ms):
                    block = []
                    for _ in range(calls // rounds):
                        t0 = time.perf_counter()
                        model.predict(x1)
                        block.append(time.perf_counter() - t0)
                    best[e][c] = min(best[e][c], float(np.median(block)))
    lines, medians = [], []
    for entry, times in zip(entries, best, strict=True):
        medians.append(float(np.median(times)))
        lines.append(
            f"- single-row `predict`, {entry.name} (tuned for {entry.selected_by}): **{medians[-1] * 1e6:.0f} µs** "
            f"(median over {copies} identical fits, {min(times) * 1e6:.0f}–{max(times) * 1e6:.0f} µs; each fit's median "
            f"call in its fastest of {rounds} rounds of {calls // rounds}; numpy float64 row, NumPy's BLAS on one thread)"
        )
    return lines, max(medians)


PEER_FLOPS = {"RidgeClassifier": ridge_flops, "one-vs-rest KernelRidge (rbf)": kernel_ridge_flops}


BLAS_SETTINGS = (("all cores", None), ("one BLAS thread", 1))


def paired_fit_times(results, reps: dict[str, int], peer_threads: int | None, ceiling: float) -> tuple[dict, list[str]]:
    """Fit each model of PAIRS and its peer alternately, reps[ours] times each, with the
    hyper-parameters chosen for each criterion, the peer's BLAS on ``peer_threads`` threads (None:
    all cores); return, per (ours, criterion), the ratio of the fastest fits, the ratio of the
    median fits and the share of rounds where ours took at most 3× the peer's time in the same
    round, and the rows of a table of the arithmetic rate each median fit achieved (ours counted
    by the core, the peers' from their operation counts).

    A best of 3 is at the mercy of a single lucky or unlucky fit (RidgeClassifier's fit on yeast
    ranges from 4 to 16 ms on this machine); alternating many fits exposes both models to the same
    background load and makes the ratio reproducible."""
    data = datasets.load_yeast()
    X, Y = data.X_train, data.Y_train
    (m, n), d = X.shape, Y.shape[1]
    out, rows = {}, []
    setting = next(name for name, threads in BLAS_SETTINGS if threads == peer_threads)
    for ours, peer in PAIRS:
        measured = {}  # the criteria that chose the same pair of settings share one measurement
        for criterion in _demo.CRITERIA:
            chosen = [_demo._chosen(results, name, criterion) for name in (ours, peer)]
            key = tuple(repr(sorted(e.params.items())) for e in chosen)
            if key in measured:
                out[ours, criterion] = measured[key]
                continue
            pipes = []
            for e in chosen:
                model = clone(e.estimator).set_params(**e.params)
                pipes.append(Pipeline([("scale", StandardScaler()), ("model", model)]))
            times = np.empty((reps[ours], 2))
            counted = []
            for r in range(reps[ours]):
                for j, pipe in enumerate(pipes):
                    before = _core.gemm_flops()
                    with threadpool_limits(peer_threads if j == 1 else None):
                        t0 = time.perf_counter()
                        pipe.fit(X, Y)
                        times[r, j] = time.perf_counter() - t0
                    if j == 0:
                        counted.append(_core.gemm_flops() - before)
            ratio = times[:, 0] / times[:, 1]
            for name, flops, t in (
                (ours, float(np.median(counted)), float(np.median(times[:, 0]))),
                (peer, PEER_FLOPS[peer](m, n, d), float(np.median(times[:, 1]))),
            ):
                rows.append(
                    f"| {name} | {criterion} | {setting} | {t * 1e3:.1f} | {flops / 1e9:.3f} | {rate(flops, t, ceiling)} |"
                )
            out[ours, criterion] = measured[key] = (
                times[:, 0].min() / times[:, 1].min(),
                float(np.median(times[:, 0]) / np.median(times[:, 1])),
                float(np.mean(ratio <= 3)),
                median_ratio_interval(times),
            )
    return out, rows


def median_ratio_interval(times: np.ndarray, resamples: int = 2000) -> tuple[float, float]:
    """A 95 % bootstrap interval of the ratio of the medians of times[:, 0] and times[:, 1], the
    rounds resampled as pairs. It covers this run's rounds only: between runs on one machine the
    ratio drifted further (0.95–1.08 over 15 repeats of the linear pair, probe FR), so a verdict
    whose interval straddles the bound is left undecided."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(times), size=(resamples, len(times)))
    r = np.median(times[idx, 0], axis=1) / np.median(times[idx, 1], axis=1)
    return float(np.quantile(r, 0.025)), float(np.quantile(r, 0.975))


def after_blas(results, reps: int) -> list[str]:
    """The rbf fit (tuned for the Hamming loss) right after a NumPy matrix product on all cores,
    on one BLAS thread, and on all cores followed by pauses, in interleaved rounds: OpenBLAS's
    worker threads spin for a while after a call returns (its THREAD_TIMEOUT, about 2²⁸ cycles),
    on cores the next fit wants."""
    data = datasets.load_yeast()
    X, Y = StandardScaler().fit_transform(data.X_train), data.Y_train
    e = _demo._chosen(results, PAIRS[1][0], "Hamming loss")
    model = clone(e.estimator).set_params(**e.params)
    A = np.random.default_rng(0).normal(size=(1500, 1500))

    def product(threads: int | None, pause: float) -> None:
        with threadpool_limits(threads):
            A @ A
        time.sleep(pause)

    settings = {
        "after another fit of ours": lambda: model.fit(X, Y),
        "after a 1500² product, all cores": lambda: product(None, 0),
        "after a 1500² product, one BLAS thread": lambda: product(1, 0),
        "after a 1500² product, all cores, then 50 ms": lambda: product(None, 0.05),
        "after a 1500² product, all cores, then 150 ms": lambda: product(None, 0.15),
    }
    times = {name: [] for name in settings}
    model.fit(X, Y)
    for _ in range(reps):
        for name, before in settings.items():
            before()
            t0 = time.perf_counter()
            model.fit(X, Y)
            times[name].append(time.perf_counter() - t0)
    base = np.median(times["after another fit of ours"])
    return [
        f"StructuredRidge (rbf, {', '.join(f'{k}={v}' for k, v in e.params.items())}) fitted right after other "
        f"work, {reps} interleaved rounds (median fit time, and against the fit after another fit of ours):",
        "",
        "| fitted | fit (ms, median) | relative |",
        "|---|---:|---:|",
        *(f"| {name} | {np.median(t) * 1e3:.1f} | {np.median(t) / base:.2f} |" for name, t in times.items()),
    ]


def verdicts(results, slowest_predict: float, paired, paired_one) -> list[str]:
    """The foundation issue's and issue 18's targets, judged on this run's numbers."""

    def row(name: str, criterion: str):
        return _demo._chosen(results, name, criterion)

    def met(ok: bool) -> str:
        return "**met**" if ok else "**missed**"

    def ratio(ours: str, peer: str) -> str:
        table = [row(ours, c).fit_s / row(peer, c).fit_s for c in _demo.CRITERIA]
        fast = [paired[ours, c][0] for c in _demo.CRITERIA]
        med = [paired[ours, c][1] for c in _demo.CRITERIA]
        share = [paired[ours, c][2] for c in _demo.CRITERIA]
        return (
            f"{met(max(fast) <= 3)} on the fastest of the alternated fits ({' and '.join(f'{x:.2f}×' for x in fast)}, "
            f"tuned for the Hamming and the ranking loss); ratio of the medians {' and '.join(f'{x:.2f}×' for x in med)}; "
            f"within 3× in {' and '.join(f'{x:.0%}' for x in share)} of the rounds; best of 3 in the table "
            f"{' and '.join(f'{x:.2f}×' for x in table)}"
        )

    by_h, by_r = row("StructuredRidge (rbf)", "Hamming loss"), row("StructuredRidge (rbf)", "ranking loss")
    return [
        f"- linear fit ≤ 3× RidgeClassifier: {ratio(*PAIRS[0])}.",
        f"- rbf fit ≤ 3× one-vs-rest KernelRidge: {ratio(*PAIRS[1])}.",
        f"- rbf Hamming loss ≤ 0.190, tuned for it: {met(by_h.hamming <= 0.190)} ({by_h.hamming:.4f}).",
        f"- rbf ranking loss ≤ 0.160, tuned for it: {met(by_r.ranking <= 0.160)} ({by_r.ranking:.4f}). The model "
        f"tuned for the ranking loss has Hamming loss {by_r.hamming:.4f}; the one tuned for the Hamming loss has "
        f"ranking loss {by_h.ranking:.4f}.",
        f"- single-row predict < 100 µs: {met(slowest_predict < 100e-6)} (slowest model "
        f"{slowest_predict * 1e6:.0f} µs).",
        *(
            f"- issue 18, {label} ≤ {bound}× {peer}, ratio of the medians (95 % bootstrap interval over this run's "
            f"rounds) with the peer on all cores / on one BLAS thread: {by_criterion(ours, paired, paired_one)}: "
            f"{judged(ours, paired, bound)} on all cores, {judged(ours, paired_one, bound)} on one BLAS thread."
            for (ours, peer), label, bound in zip(PAIRS, ("linear fit", "rbf fit"), (1.0, 1.5), strict=True)
        ),
    ]


def by_criterion(ours: str, paired: dict, paired_one: dict) -> str:
    """The ratios of the medians of ``ours`` with both peers' settings, once where both criteria chose
    the same settings (one measurement, not two draws of it)."""

    def one(c: str) -> str:
        return " / ".join(
            f"{p[ours, c][1]:.2f}× [{p[ours, c][3][0]:.2f}, {p[ours, c][3][1]:.2f}]" for p in (paired, paired_one)
        )

    c0, c1 = _demo.CRITERIA
    if paired[ours, c0] is paired[ours, c1] and paired_one[ours, c0] is paired_one[ours, c1]:
        return f"tuned alike for both losses {one(c0)}"
    return f"tuned for the Hamming loss {one(c0)}, for the ranking loss {one(c1)}"


def judged(ours: str, paired: dict, bound: float) -> str:
    """**met** where every criterion's interval lies at or below ``bound``, **missed** where one lies
    above it, and undecided where an interval straddles it."""
    intervals = [paired[ours, c][3] for c in _demo.CRITERIA]
    if all(hi <= bound for _, hi in intervals):
        return "**met**"
    if any(lo > bound for lo, _ in intervals):
        return "**missed**"
    return "**undecided** (the interval straddles the bound)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small subset and grids (smoke run)")
    parser.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = parser.parse_args()
    results = _demo.run(quick=args.quick)
    latency, slowest = single_row_latency(results, calls=200 if args.quick else 3000)
    reps = {PAIRS[0][0]: 5 if args.quick else 41, PAIRS[1][0]: 3 if args.quick else 15}
    ceiling = dgemm_ceiling()
    paired, rates = paired_fit_times(results, reps, None, ceiling)
    paired_one, rates_one = paired_fit_times(results, reps, 1, ceiling)
    spin = after_blas(results, 3 if args.quick else 15)
    body = [
        "## Multi-label: yeast (`benchmarks/yeast.py`)",
        "",
        f"Measured on: {machine()}." + (" **Quick smoke run (subset), not the benchmark.**" if args.quick else ""),
        "Data: MULAN split, 1500 train / 917 test; inputs standardised inside each pipeline; best of 3 timings.",
        "",
        _demo.table(results),
        *latency,
        "",
        TARGETS,
        "",
        f"The fit-time targets are judged on {reps[PAIRS[0][0]]} (linear) and {reps[PAIRS[1][0]]} (rbf) rounds "
        "in which our model and its peer are fitted one after the other, same data and chosen hyper-parameters; "
        "the rounds run twice, with the peer's BLAS on all cores (the foundation targets) and on one thread "
        "(combpred's core uses all cores in both).",
        "",
        *verdicts(results, slowest, paired, paired_one),
        "",
        "Arithmetic rate of the median alternated fit, against the measured ceiling (NumPy's dgemm on all cores: "
        f"{ceiling:.1f} GFLOP/s in this run). StructuredRidge's operations are counted by its core "
        "(`combpred._core.gemm_flops`, its dense products); the peers' are their dominant dense arithmetic "
        "(`benchmarks/_report.py`: XᵀX, XᵀY and the Cholesky solve; the Gram matrix and the Cholesky solve). "
        "Kernel exponentials, decoding and Python are in the time but not in the count.",
        "",
        "| model | tuned for | peer's BLAS | fit (ms, median) | GFLOP per fit | GFLOP/s (share of the ceiling) |",
        "|---|---|---|---:|---:|---:|",
        *rates,
        *rates_one,
        "",
        *spin,
    ]
    write_section("yeast", "\n".join(body), args.output)
    print("\n".join(body))


if __name__ == "__main__":
    main()
