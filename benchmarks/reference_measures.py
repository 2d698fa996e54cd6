"""StructuredRidge's reference measure on a taxonomy: cellcycle_FUN node confidences and predictions.

Usage: python benchmarks/reference_measures.py [--quick] [--output BENCHMARKS.md]

StructuredRidge(space=Subtrees(parent)) ranks each gene's node set above the structures of a
reference measure. The thesis' uniform measure over rooted subtrees is dominated by huge trees
(empirical_weight=0); the empirical measure of the training node sets (empirical_weight=1) and
the product measure of per-node rates fitted to them (reference="product") put the competing
structures where the data are; linear and rbf kernels. Node confidences are ``predict_marginals``
(the estimate of P(node | gene), docs/design.md §2a; its scale — noise_free, unit or a calibration
constant — chosen on valid) or the max-marginal margins of the exact tree decoder, and are scored by
AU(PRC): the micro-averaged precision over every (gene, node) pair except the virtual root, as the
HMC literature computes it. Predictions (``decode_from`` scores or marginals, or the Bayes rule of ℓ_H,
``combpred.decision.bayes_decode(..., "hierarchical")``, on the marginal estimates) are scored by
the hierarchical loss ℓ_H; their hierarchical F1 (``combpred.metrics.hierarchical_f1``) is reported
too, not used to select. Published AU(PRC) of other methods on the same split: benchmarks/_hmc.py.

Selection uses the official train / valid split only (AU(PRC) on valid for the confidences, ℓ_H
on valid for the predictions); the chosen setting is refitted on train + valid and scored once on
test. ProbabilisticStructured(space=Subtrees(parent)), the exponential family over rooted subtrees,
scores nodes by its exact marginals (alpha chosen on valid by AU(PRC)) and predicts by the Bayes rule
of ℓ_H on them, on the inputs and on an rbf feature map of them (Nyström); per-node logistic regression
runs on the same map too. Peers: one LogisticRegression per node (C chosen the same way; predictions P ≥ ½ closed
under parents) and the constant predictor that scores every gene by the training node frequencies.
Writes the ``reference_measures`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _hmc import PUBLISHED_SOURCE, auprc, published_line
from _report import BENCHMARKS_MD, machine, write_section
from combpred import ProbabilisticStructured, StructuredRidge, datasets, spaces
from combpred.decision import bayes_decode
from combpred.metrics import hierarchical_f1, hierarchical_loss
from sklearn.impute import SimpleImputer
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TARGET = (
    "Target (issue 13): StructuredRidge node AU(PRC) ≥ per-node logistic regression on the same features, and ℓ_H "
    "below the root-only reference with predictions that differ between genes; ProbabilisticStructured(Subtrees) "
    "with its exact marginals: AU(PRC) ≥ per-node logistic regression too."
)


def close_under_parents(rows: np.ndarray, parent: np.ndarray) -> np.ndarray:
    out = rows.copy()
    for v in range(parent.size - 1, 0, -1):  # parent[v] < v
        out[:, parent[v]] |= out[:, v]
    return out


def pipeline(model, nystroem: dict | None = None):
    """Imputation and standardisation before ``model``; with ``nystroem`` (Nystroem's parameters) an
    rbf feature map of the standardised inputs, standardised again, in between."""
    steps = [SimpleImputer(strategy="mean"), StandardScaler()]
    if nystroem is not None:
        steps += [Nystroem(random_state=0, **nystroem), StandardScaler()]
    return make_pipeline(*steps, model)


# ProbabilisticStructured's grid and L-BFGS iteration bound. With L-BFGS's curvature preconditioner
# (docs/design.md §3) the fit on the training split at alpha = 0.1 meets tol in 684 iterations (27 s);
# on the Nyström map at alpha = 0.1 it is still short of tol after 1,000 (83 s, measured beside other
# work), so the bound is set for time and the fits' ConvergenceWarnings are silenced. (Before the
# preconditioner the valid AU(PRC) at alpha = 0.1 was the same after 200 and after 3,000 iterations.)
PROB_ALPHAS = [0.03, 0.1, 0.3]
PROB_MAX_ITER = 1000
# ProbabilisticStructured is linear in its inputs; an rbf feature map (Nyström, 300 landmarks of the
# training rows) gives it the nonlinearity StructuredRidge's rbf kernel has. Per-node logistic
# regression is fitted on the same map, so that the gain of the map and of the structure are told apart.
NYSTROEM_COMPONENTS = 300
NYSTROEM_GAMMA_N = [0.3, 1.0]  # gamma times the number of input features
LR_NYSTROEM_CS = [0.001, 0.003, 0.01]


def prob_marginals(est, X: np.ndarray) -> np.ndarray:
    """ProbabilisticStructured's exact node marginals through the pipeline's preprocessing."""
    return est[-1].predict_marginals(est[:-1].transform(X))


def marginals(est, X: np.ndarray, scale="noise_free") -> np.ndarray:
    """StructuredRidge.predict_marginals through the pipeline's preprocessing; a scale "tilted:c"
    is the tilted estimate at scale c (docs/design.md §2c)."""
    if isinstance(scale, str) and scale.startswith("tilted:"):
        return est[-1].predict_marginals(est[:-1].transform(X), scale=float(scale[7:]), estimate="tilted")
    return est[-1].predict_marginals(est[:-1].transform(X), scale=scale)


# The node confidences of StructuredRidge compared on valid: predict_marginals at the two named scales
# and at fixed calibration constants c (m̂ = clip(p + c·S u)), the tilted estimate at fixed c (the
# mean of ψ under the reference measure tilted by exp(c⟨u, ψ⟩)), and the max-marginal margins of the
# scores and of the centred marginals.
TILTED = ("tilted:2", "tilted:4", "tilted:8")
CONFIDENCES = ("noise_free", "unit", 2.0, 4.0, 8.0, *TILTED, "margins:scores", "margins:marginals")


def confidences(est, X: np.ndarray, conf) -> np.ndarray:
    """Node scores of one of CONFIDENCES through the pipeline's preprocessing."""
    if isinstance(conf, str) and conf.startswith("margins:"):
        model = est[-1]
        before = model.decode_from
        model.set_params(decode_from=conf.split(":")[1])
        try:
            margins = model.max_marginal_margins(est[:-1].transform(X))
        finally:
            model.set_params(decode_from=before)
        return np.nan_to_num(margins, posinf=np.finfo(float).max, neginf=-np.finfo(float).max)
    return marginals(est, X, conf)


def paired_bootstrap(R: np.ndarray, A: np.ndarray, B: np.ndarray, n_boot: int = 200, seed: int = 0):
    """AU(PRC)(A) − AU(PRC)(B) on the test genes, and its bootstrap standard error and the share of
    resamples (genes drawn with replacement, the same for both) in which A is at least B."""
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(n_boot):
        g = rng.integers(0, len(R), len(R))
        diffs.append(auprc(R[g], A[g]) - auprc(R[g], B[g]))
    diffs = np.asarray(diffs)
    return auprc(R, A) - auprc(R, B), float(np.std(diffs, ddof=1)), float(np.mean(diffs >= 0))


def verdicts(rows, scores, preds, Rt, parent, n_boot: int = 200) -> list[str]:
    """The targets, judged on test with the StructuredRidge rows chosen on valid (not on test)."""
    sr_conf = max((r for r in rows if r[0].startswith("StructuredRidge") and "confidences" in r[0]), key=lambda r: r[2])
    sr_pred = min((r for r in rows if r[0].startswith("StructuredRidge") and "predictions" in r[0]), key=lambda r: r[3])
    lr = next(r for r in rows if r[0].startswith("LogisticRegression per node (P"))
    root_only = np.zeros_like(Rt)
    root_only[:, 0] = 1
    root = float(hierarchical_loss(Rt, root_only, parent))
    diff, se, share = paired_bootstrap(Rt, scores[sr_conf[0]], scores[lr[0]], n_boot)
    met_a = sr_conf[4] >= lr[4]
    met_h = sr_pred[5] < root and sr_pred[6] > 1
    out = [
        f"- node AU(PRC) ≥ per-node logistic regression: **{'met' if met_a else 'missed'}** — {sr_conf[0]} "
        f"(best valid AU(PRC) of the StructuredRidge rows) {sr_conf[4]:.4f} against {lr[4]:.4f}: difference "
        f"{diff:+.4f}, bootstrap SE over test genes {se:.4f} ({n_boot} resamples), StructuredRidge ≥ in {share:.0%} of "
        "them.",
        f"- ℓ_H below the root-only reference ({root:.4f}) with predictions that differ between genes: "
        f"**{'met' if met_h else 'missed'}** — {sr_pred[0]} (best valid ℓ_H) {sr_pred[5]:.4f}, "
        f"{sr_pred[6]} distinct predictions; per-node logistic regression's Bayes rule of ℓ_H reaches "
        f"{min(r[5] for r in rows if r[0].startswith('LogisticRegression')):.4f}.",
    ]
    candidates = [r for r in rows if r[0].startswith("ProbabilisticStructured") and "confidences" in r[0]]
    ps = max(candidates, key=lambda r: r[2]) if candidates else None  # chosen on valid, as StructuredRidge's
    ours = {"StructuredRidge": sr_conf[4]} | ({"ProbabilisticStructured": ps[4]} if ps is not None else {})
    if ps is not None:
        diff, se, share = paired_bootstrap(Rt, scores[ps[0]], scores[lr[0]], n_boot)
        hier = min(r[5] for r in rows if r[0].startswith("ProbabilisticStructured") and "predictions" in r[0])
        out.append(
            f"- ProbabilisticStructured(Subtrees), exact marginals, node AU(PRC) ≥ per-node logistic regression: "
            f"**{'met' if ps[4] >= lr[4] else 'missed'}** — {ps[0]} (best valid AU(PRC) of the ProbabilisticStructured "
            f"rows) {ps[4]:.4f} against {lr[4]:.4f}: difference {diff:+.4f}, bootstrap SE {se:.4f}, "
            f"ProbabilisticStructured ≥ in {share:.0%} of the resamples; its Bayes rule of ℓ_H reaches {hier:.4f}."
        )
        mapped = next((r for r in rows if r[0].startswith("LogisticRegression per node on the Nyström map")), None)
        if mapped is not None and "Nyström" in ps[0]:
            diff, se, share = paired_bootstrap(Rt, scores[ps[0]], scores[mapped[0]], n_boot)
            out.append(
                f"  - against per-node logistic regression on the same Nyström map ({mapped[4]:.4f}): difference "
                f"{diff:+.4f}, bootstrap SE {se:.4f}, ProbabilisticStructured ≥ in {share:.0%} of the resamples."
            )
    constant = rows[0][4]  # the first row: the constant predictor
    out.append(published_line("cellcycle_FUN", ours | {"per-node logistic regression": lr[4], "constant": constant}))
    return out


def alphas_for(args, empirical_weight: float) -> list[float]:
    if args.quick:
        return [10.0, 1000.0]
    return [1.0, 100.0, 1e4] if empirical_weight == 0 else [1.0, 10.0, 100.0, 1000.0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run on 300 rows per split and a small grid")
    ap.add_argument("--output", type=Path, default=BENCHMARKS_MD)
    args = ap.parse_args()
    data = datasets.load_hierarchical("cellcycle_FUN")
    parent = data.parent
    parts = [(data.X_train, data.Y_train), (data.X_valid, data.Y_valid), (data.X_test, data.Y_test)]
    if args.quick:
        parts = [(X[:300], Y[:300]) for X, Y in parts]
    (X, R), (Xv, Rv), (Xt, Rt) = parts
    Xa, Ra = np.vstack([X, Xv]), np.vstack([R, Rv])
    space = spaces.Subtrees(parent)
    rows = []
    test_scores, test_preds = {}, {}  # by row name, for the paired verdicts

    def record(name, params, val_auprc, val_hier, est, decode, seconds, conf="noise_free"):
        S = est.node_scores(Xt) if hasattr(est, "node_scores") else confidences(est, Xt, conf)
        P = est.predict(Xt) if decode is None else decode(est, Xt)
        test_scores[name], test_preds[name] = S, P
        distinct = len({p.tobytes() for p in P})
        rows.append(
            (
                name,
                params,
                val_auprc,
                val_hier,
                auprc(Rt, S),
                float(hierarchical_loss(Rt, P, parent)),
                distinct,
                seconds,
                float(hierarchical_f1(Rt, P, parent)),
            )
        )
        print(rows[-1], flush=True)

    # constant predictor: the training node frequencies for every gene
    freq = Ra.mean(axis=0)
    const_S = np.tile(freq, (len(Rt), 1))
    root_only = np.zeros_like(Rt)
    root_only[:, 0] = 1
    rows.append(
        (
            "constant: training node frequencies",
            "—",
            auprc(Rv, np.tile(R.mean(axis=0), (len(Rv), 1))),
            float("nan"),
            auprc(Rt, const_S),
            float(hierarchical_loss(Rt, root_only, parent)),
            1,
            0.0,
            float(hierarchical_f1(Rt, root_only, parent)),
        )
    )

    # StructuredRidge families, each over its grid; per fit, the confidences (predict_marginals at each
    # scale, the max-marginal margins of both decodings) and the predictions (both decode_from and the
    # Bayes rule of ℓ_H) are all scored on valid, none needs a refit
    # rbf: the previous run chose the lowest gamma·n (0.3, for the confidences) and the lowest alpha (0.1, for
    # the predictions) of alpha ∈ {0.1, 1, 10} × gamma·n ∈ {0.3, 1}, so both axes reach past those ends now
    gn = [0.3] if args.quick else [0.1, 0.3, 1.0]
    rbf_alphas = [1.0] if args.quick else [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    families = [
        (
            "linear, empirical_weight=0 (uniform)",
            dict(empirical_weight=0.0),
            [dict(alpha=a) for a in alphas_for(args, 0)],
        ),
        ("linear, reference=empirical", dict(empirical_weight=1.0), [dict(alpha=a) for a in alphas_for(args, 1)]),
        (
            "linear, reference=product",
            dict(empirical_weight=1.0, reference="product"),
            [dict(alpha=a) for a in alphas_for(args, 1)],
        ),
        (
            "rbf, reference=empirical",
            dict(empirical_weight=1.0, kernel="rbf"),
            [dict(alpha=a, gamma=g / X.shape[1]) for a in rbf_alphas for g in gn],
        ),
    ]
    for family, fixed, grid in families:
        t0 = time.perf_counter()
        best_a, best_h = (-1.0, None), (np.inf, None)
        for params in grid:
            est = pipeline(StructuredRidge(space=space, tol=1e-6, **fixed, **params))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, R)
            for conf in CONFIDENCES:
                best_a = max(best_a, (auprc(Rv, confidences(est, Xv, conf)), (params, conf)), key=lambda t: t[0])
            for decode_from in ("scores", "marginals"):
                est.set_params(structuredridge__decode_from=decode_from)
                h = float(hierarchical_loss(Rv, est.predict(Xv), parent))
                if h < best_h[0]:
                    best_h = (h, (params, decode_from))
            est.set_params(structuredridge__decode_from="scores")
            # the Bayes rule of ℓ_H on the marginal estimates, linear and tilted
            for scale in ("noise_free", "unit", *TILTED):
                P = bayes_decode(space, marginals(est, Xv, scale), "hierarchical")
                h = float(hierarchical_loss(Rv, P, parent))
                if h < best_h[0]:
                    best_h = (h, (params, f"bayes:{scale}"))
        fitted = {}
        for what, (val, (params, choice)) in (("confidences", best_a), ("predictions", best_h)):
            key = tuple(sorted(params.items()))
            if key not in fitted:
                fitted[key] = pipeline(StructuredRidge(space=space, tol=1e-6, **fixed, **params))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted[key].fit(Xa, Ra)
            est = fitted[key]
            est.set_params(structuredridge__decode_from="scores")
            conf, decode, how = "noise_free", None, f"confidences: {choice}"
            if what == "confidences":
                conf = choice
            elif choice.startswith("bayes:"):
                rule_scale = choice.split(":", 1)[1]
                decode = lambda e, Z, s=rule_scale: bayes_decode(space, marginals(e, Z, s), "hierarchical")  # noqa: E731
                shown_scale = (
                    f"scale={rule_scale[7:]}, estimate='tilted'"
                    if rule_scale.startswith("tilted:")
                    else f"scale={rule_scale}"
                )
                how = f"Bayes rule of ℓ_H on predict_marginals({shown_scale})"
            else:
                est.set_params(structuredridge__decode_from=choice)
                how = f"decode_from={choice}"
            shown = ", ".join(f"{k}={v * X.shape[1] if k == 'gamma' else v:g}" for k, v in params.items())
            record(
                f"StructuredRidge {family} (chosen for {what})",
                f"{shown.replace('gamma=', 'gamma·n_features=')}, {how}",
                val if what == "confidences" else float("nan"),
                val if what == "predictions" else float("nan"),
                est,
                decode,
                time.perf_counter() - t0,
                conf,
            )

    # ProbabilisticStructured(Subtrees): the exponential family over rooted subtrees, its exact node
    # marginals (the tree's dynamic programme) as confidences, and the Bayes rule of ℓ_H on them; on the
    # inputs, and on a Nyström map of them
    n_landmarks = 100 if args.quick else NYSTROEM_COMPONENTS
    max_iter = 30 if args.quick else PROB_MAX_ITER
    maps = [("", [None])] + [
        (
            f", Nyström map of {n_landmarks} landmarks",
            [
                dict(gamma=g / X.shape[1], n_components=n_landmarks)
                for g in NYSTROEM_GAMMA_N[: 1 if args.quick else None]
            ],
        )
    ]
    for suffix, features in maps:
        t0 = time.perf_counter()
        best_a, best_h = (-1.0, None), (np.inf, None)
        for ny in features:
            for alpha in PROB_ALPHAS[: 1 if args.quick else None]:
                est = pipeline(ProbabilisticStructured(space=space, alpha=alpha, max_iter=max_iter), ny)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, R)
                M = prob_marginals(est, Xv)
                best_a = max(best_a, (auprc(Rv, M), (alpha, ny)), key=lambda t: t[0])
                h = float(hierarchical_loss(Rv, bayes_decode(space, M, "hierarchical"), parent))
                best_h = min(best_h, (h, (alpha, ny)), key=lambda t: t[0])
        fitted = {}
        for what, (val, (alpha, ny)) in (("confidences", best_a), ("predictions", best_h)):
            key = (alpha, None if ny is None else ny["gamma"])
            if key not in fitted:
                fitted[key] = pipeline(ProbabilisticStructured(space=space, alpha=alpha, max_iter=max_iter), ny)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted[key].fit(Xa, Ra)
            est = fitted[key]
            est.node_scores = lambda Z, e=est: prob_marginals(e, Z)
            mapped = "" if ny is None else f"gamma·n_features={ny['gamma'] * X.shape[1]:g}, "
            record(
                f"ProbabilisticStructured{suffix} (chosen for {what})",
                f"{mapped}alpha={alpha:g}, exact marginals; Bayes rule of ℓ_H on them",
                val if what == "confidences" else float("nan"),
                val if what == "predictions" else float("nan"),
                est,
                lambda e, Z: bayes_decode(space, e.node_scores(Z), "hierarchical"),
                time.perf_counter() - t0,
            )

    # binary relevance: one logistic regression per node
    t0 = time.perf_counter()
    Cs = [0.1] if args.quick else [0.01, 0.1, 1.0]
    best = (-1.0, None)
    for C in Cs:
        est = pipeline(OneVsRestClassifier(LogisticRegression(C=C, max_iter=1000)))
        est.fit(X, R[:, 1:])
        best = max(best, (auprc(Rv, np.c_[np.ones(len(Xv)), est.predict_proba(Xv)]), C), key=lambda t: t[0])
    est = pipeline(OneVsRestClassifier(LogisticRegression(C=best[1], max_iter=1000))).fit(Xa, Ra[:, 1:])
    est.node_scores = lambda Z: np.c_[np.ones(len(Z)), est.predict_proba(Z)]
    seconds = time.perf_counter() - t0
    record(
        "LogisticRegression per node (P ≥ ½, closed under parents)",
        f"C={best[1]:g}",
        best[0],
        float("nan"),
        est,
        lambda e, Z: close_under_parents(np.c_[np.ones(len(Z), dtype=np.int64), e.predict(Z)], parent),
        seconds,
    )
    record(
        "LogisticRegression per node, Bayes rule of ℓ_H on its probabilities",
        f"C={best[1]:g}",
        best[0],
        float("nan"),
        est,
        lambda e, Z: bayes_decode(space, e.node_scores(Z), "hierarchical"),
        seconds,
    )
    # the same on ProbabilisticStructured's Nyström map
    t0 = time.perf_counter()
    best = (-1.0, None)
    for g in NYSTROEM_GAMMA_N[: 1 if args.quick else None]:
        ny = dict(gamma=g / X.shape[1], n_components=n_landmarks)
        for C in LR_NYSTROEM_CS[: 1 if args.quick else None]:
            est = pipeline(OneVsRestClassifier(LogisticRegression(C=C, max_iter=1000)), ny).fit(X, R[:, 1:])
            best = max(best, (auprc(Rv, np.c_[np.ones(len(Xv)), est.predict_proba(Xv)]), (C, ny)), key=lambda t: t[0])
    C, ny = best[1]
    lr_map = pipeline(OneVsRestClassifier(LogisticRegression(C=C, max_iter=1000)), ny).fit(Xa, Ra[:, 1:])
    lr_map.node_scores = lambda Z: np.c_[np.ones(len(Z)), lr_map.predict_proba(Z)]
    record(
        f"LogisticRegression per node on the Nyström map of {n_landmarks} landmarks, Bayes rule of ℓ_H",
        f"gamma·n_features={ny['gamma'] * X.shape[1]:g}, C={C:g}",
        best[0],
        float("nan"),
        lr_map,
        lambda e, Z: bayes_decode(space, e.node_scores(Z), "hierarchical"),
        time.perf_counter() - t0,
    )

    lines = [
        "## Reference measures on a taxonomy: cellcycle_FUN (`benchmarks/reference_measures.py`)",
        "",
        machine(),
        "",
        f"cellcycle_FUN: {X.shape[1]} features, the FunCat tree of {parent.size - 1} nodes (+ virtual root); "
        f"train {len(R)} / valid {len(Rv)} (selection), refit on both, test {len(Rt)}. "
        f"`python benchmarks/reference_measures.py{' --quick' if args.quick else ''}`.",
        "",
        TARGET,
        "",
        "| model | chosen | valid AU(PRC) | valid ℓ_H | **test AU(PRC)** | **test ℓ_H** | test hF1 "
        "| distinct test predictions | time (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, params, va, vh, ta, th, distinct, seconds, hf in rows:
        lines.append(
            f"| {name} | {params} | {va:.4f} | {vh:.4f} | {ta:.4f} | {th:.4f} | {hf:.4f} | {distinct} | {seconds:.1f} |"
        )
    lines += [
        "",
        "The constant predictor's ℓ_H is that of predicting the root only (the reference the target names). "
        "StructuredRidge's node confidences are chosen on valid among "
        + ", ".join(f"`{c}`" for c in CONFIDENCES)
        + " (named or numeric: `predict_marginals(scale=...)`, a number c giving clip(p + c·S u); `tilted:c`: "
        '`predict_marginals(scale=c, estimate="tilted")`, the mean of ψ under the reference measure tilted by '
        "exp(c⟨u, ψ⟩), docs/design.md §2c; `margins:...`: "
        "`max_marginal_margins` with that `decode_from`); its ℓ_H is that of `predict` with the chosen "
        "`decode_from` or of the Bayes rule of ℓ_H on its marginal estimates (linear or tilted).",
    ]
    # a smoke run's bootstrap: 20 resamples, where 200 took half of its time
    n_boot = 20 if args.quick else 200
    lines += ["", *verdicts(rows, test_scores, test_preds, Rt, parent, n_boot), "", PUBLISHED_SOURCE]
    quick = "300 rows per split, small grids, short fits" if args.quick else None
    write_section("reference_measures", "\n".join(lines), args.output, quick=quick)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
