"""score(X, y, sample_weight) honours the weights in every space and validates them as fit does
(issue 11, finding 5)."""

from __future__ import annotations

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, baselines, spaces
from combpred.metrics import kendall_tau
from scipy import stats

CASES = {
    "multiclass": (lambda rng, m: rng.choice(np.array(["a", "b", "c"]), m), "multiclass"),
    "multilabel": (lambda rng, m: (rng.random((m, 4)) < 0.5).astype(int), spaces.Multilabel(4)),
    "ksubsets": (
        lambda rng, m: np.array([np.isin(np.arange(5), rng.choice(5, 2, replace=False)) for _ in range(m)], int),
        spaces.KSubsets(5, 2),
    ),
    "permutations": (lambda rng, m: np.array([rng.permutation(5) + 1 for _ in range(m)]), spaces.Permutations(5)),
    "ordinal": (lambda rng, m: rng.integers(0, 4, m), spaces.Ordinal(4)),
    "dicycles": (
        lambda rng, m: spaces.DirectedCycles(5).sample(m, random_state=int(rng.integers(1000))),
        spaces.DirectedCycles(5),
    ),
}


def _per_row(space, Y, pred):
    """Each row's score, by hand: equal labels (multiclass and its subclasses), the fraction of equal
    labels (multilabel and its subclasses), Kendall's τ (permutations), else the fraction of equal ψ
    coordinates."""
    if space == "multiclass" or isinstance(space, spaces.Multiclass):
        return (np.ravel(Y) == np.ravel(pred)).astype(float)
    if isinstance(space, spaces.Multilabel):
        return np.mean(np.asarray(Y) == np.asarray(pred), axis=1)
    if isinstance(space, spaces.Permutations):
        return np.array([stats.kendalltau(a, b).statistic for a, b in zip(Y, pred, strict=True)])
    return np.mean(space.embed(Y) == space.embed(pred), axis=1)


def test_ranking_scores_agree_across_estimators():
    """score on rankings is the mean Kendall τ for every estimator: the structured ones scored the
    fraction of label pairs ordered alike, (1 + τ)/2, the baselines τ, so that a default
    cross_val_score ranked StructuredRidge (0.840) above PairwiseRanker (0.802) where by τ it was
    below (0.680)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    Y = np.argsort(np.argsort(-(X @ rng.normal(size=(3, 5)) + rng.normal(size=(60, 5))), axis=1), axis=1) + 1
    for model in (
        StructuredRidge(space="permutations"),
        ProbabilisticStructured(space="permutations"),
        baselines.StructuredSVM(space="permutations", random_state=0),
        baselines.PairwiseRanker(),
        baselines.KNNBordaRanker(),
    ):
        model.fit(X, Y)
        assert model.score(X, Y) == pytest.approx(kendall_tau(Y, model.predict(X)), abs=1e-12), model


def test_multiclass_score_counts_an_unseen_label_as_a_miss():
    """As scikit-learn's accuracy does: a fold whose test labels include a class absent from its
    training rows scored NaN in cross-validation (score raised). NaN labels, fractions among integer
    classes and labels of a space object's (0 … n − 1) other than its own are still refused."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.array(["a", "b"] * 15)
    model = StructuredRidge(space="multiclass").fit(X, y)
    pred = model.predict(X[:4])
    truth = np.array(["c", *pred[1:]])
    assert model.score(X[:4], truth) == pytest.approx(0.75)
    numeric = StructuredRidge(space="multiclass").fit(X, np.arange(30) % 2)
    with pytest.raises(ValueError, match=r"^y holds a missing class label \(nan\) at row 1"):
        numeric.score(X[:3], [0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match=r"y row 0 holds 0.5"):
        numeric.score(X[:3], [0.5, 1.0, 1.0])
    assert numeric.score(X[:3], [7.0, 7.0, 7.0]) == 0.0
    strict = StructuredRidge(space=spaces.Multiclass(2)).fit(X, np.arange(30) % 2)
    with pytest.raises(ValueError, match="not in classes"):
        strict.score(X[:3], [0, 1, 2])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_weighted_score_is_the_weighted_mean_of_row_scores(name, estimator):
    rng = np.random.default_rng(5)
    make_y, space = CASES[name]
    X, Y = rng.normal(size=(40, 3)), make_y(rng, 40)
    model = estimator(space=space).fit(X, Y)
    pred = model.predict(X)
    per_row = _per_row(space, Y, pred)
    w = rng.integers(0, 5, 40).astype(float)
    w[0] = 1.0
    assert model.score(X, Y, sample_weight=w) == pytest.approx(np.average(per_row, weights=w), abs=1e-12)
    assert model.score(X, Y) == pytest.approx(per_row.mean(), abs=1e-12)
    assert model.score(X, Y, sample_weight=np.ones(40)) == pytest.approx(per_row.mean(), abs=1e-12)
    if per_row.min() < per_row.max():  # the weights matter: all weight on the worst row
        worst = np.zeros(40)
        worst[np.argmin(per_row)] = 1.0
        assert model.score(X, Y, sample_weight=worst) == pytest.approx(per_row.min(), abs=1e-12)


@pytest.mark.parametrize("name", ["multiclass", "multilabel", "permutations"])
@pytest.mark.parametrize(
    "bad, match",
    [
        (np.full(30, np.nan), r"sample_weight\[0\] = NaN"),
        (np.r_[np.inf, np.ones(29)], r"sample_weight\[0\] = inf"),
        (np.r_[1.0, -1.0, np.ones(28)], r"sample_weight\[1\] = -1.0"),
        (np.zeros(30), "sample_weight must hold at least one non-zero"),
        (np.array(["1"] * 30), "sample_weight must hold real numbers"),
        (np.ones(29), r"sample_weight must have shape \(30,\)"),
        (np.ones((30, 2)), r"sample_weight must have shape \(30,\)"),
        # refused before its copy: 745 GiB, which NumPy refused in its own words (probe 85)
        (np.broadcast_to(1.0, (10**11,)), r"sample_weight must have shape \(30,\), got \(100000000000,\)"),
    ],
)
def test_bad_score_weights_are_refused_naming_sample_weight(name, bad, match):
    rng = np.random.default_rng(6)
    make_y, space = CASES[name]
    X, Y = rng.normal(size=(30, 3)), make_y(rng, 30)
    model = StructuredRidge(space=space).fit(X, Y)
    with pytest.raises(ValueError, match=match):
        model.score(X, Y, sample_weight=bad)
    with pytest.raises(ValueError, match=match):  # the same rule as fit
        StructuredRidge(space=space).fit(X, Y, sample_weight=bad)


def test_extreme_sample_weights_are_named_or_handled():
    # Weights of 5e-324 made ProbabilisticStructured's default alpha = 1/(2Σw) infinite, and the
    # error blamed alpha, which the user never set; the empirical measure's covariance came out
    # NaN (scaled by the reciprocal of Σw) and its eigendecomposition failed; weights of 1e200
    # overflowed the kernel solver, whose message blamed the kernel values alone, then were refused.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (X > 0).astype(int)
    tiny, huge = np.full(40, 5e-324), np.full(40, 1e200)
    with pytest.raises(
        ValueError, match=r"default alpha, 1/\(2·Σ sample_weight\), is \+Inf .* scale sample_weight up or set alpha"
    ):
        ProbabilisticStructured().fit(X, Y, sample_weight=tiny)
    with pytest.raises(ValueError, match=r"is 0 for these sample weights, .* scale sample_weight down or set alpha"):
        ProbabilisticStructured().fit(X, Y, sample_weight=np.full(40, 1e308))  # the sum overflows
    # subnormal weights are refused by StructuredRidge, naming them: a linear CG fit
    # returned W = 0, the intercept unfitted, without a warning
    with pytest.raises(ValueError, match="sample_weight's largest value is 4.94e-324, a subnormal number"):
        StructuredRidge(empirical_weight=0.5).fit(X, Y, sample_weight=tiny)
    marginals = StructuredRidge(empirical_weight=0.5).fit(X, Y, sample_weight=tiny * 2.0**1000).predict_marginals(X)
    assert np.isfinite(marginals).all()
    # kernel CG divides the weights and alpha by the largest weight (the same minimiser): weights of
    # 1e200 fit as alpha = 1e-200 does, where they were refused as an overflow
    big = StructuredRidge(kernel="rbf").fit(X, Y, sample_weight=huge)
    unit = StructuredRidge(kernel="rbf", alpha=1e-200).fit(X, Y)
    np.testing.assert_allclose(big.decision_function(X), unit.decision_function(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["multilabel", "permutations", "dicycles"])
def test_an_invalid_y_in_score_is_named_y_with_its_row(name):
    # score validated y as a bare "row 3: ..." (and Space.score validated each side twice before
    # score_samples did it a third time); the message now names the argument the user passed.
    rng = np.random.default_rng(7)
    make_y, space = CASES[name]
    X, Y = rng.normal(size=(30, 3)), make_y(rng, 30)
    model = StructuredRidge(space=space).fit(X, Y)
    bad = np.array(Y, copy=True)
    bad[3, 0] = bad[3, 1] if name != "multilabel" else 7  # a repeated item, or a 7 in a 0/1 row
    with pytest.raises(ValueError, match=r"^y: row 3: "):
        model.score(X, bad)
    with pytest.raises(ValueError, match=r"^Y_true: row 3: "):
        space.score(bad, Y)
    with pytest.raises(ValueError, match=r"^Y_pred: row 3: "):
        space.score(Y, bad)


def test_scorers_take_sample_weight_through_metadata_routing():
    # With scikit-learn's metadata routing on, a requested scorer gets each test fold's weights
    # (as make_scorer's do); one not asked about is an error rather than a silently unweighted
    # score; a request returns a copy, leaving the module's shared scorer untouched.
    import sklearn
    from combpred import metrics
    from sklearn.exceptions import UnsetMetadataPassedError
    from sklearn.model_selection import KFold, cross_validate

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    Y = np.argsort(np.argsort(rng.normal(size=(60, 4)) + X, axis=1), axis=1) + 1
    w = rng.uniform(0.1, 3.0, 60)
    cv = KFold(3)
    with pytest.raises(RuntimeError, match="enable_metadata_routing"):
        metrics.kendall_tau_scorer.set_score_request(sample_weight=True)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = metrics.kendall_tau_scorer.set_score_request(sample_weight=True)
        assert scorer is not metrics.kendall_tau_scorer
        est = StructuredRidge(space="permutations").set_fit_request(sample_weight=True)
        got = cross_validate(est, X, Y, scoring=scorer, params={"sample_weight": w}, cv=cv)["test_score"]
        want = []
        for train, test in cv.split(X):
            model = StructuredRidge(space="permutations").fit(X[train], Y[train], sample_weight=w[train])
            want.append(metrics.kendall_tau(Y[test], model.predict(X[test]), sample_weight=w[test]))
            unweighted = metrics.kendall_tau(Y[test], model.predict(X[test]))
            assert abs(want[-1] - unweighted) > 1e-6  # the weights change the score
        np.testing.assert_allclose(got, want, rtol=1e-12)
        with pytest.raises(UnsetMetadataPassedError, match="set_score_request"):
            cross_validate(est, X, Y, scoring=metrics.kendall_tau_scorer, params={"sample_weight": w}, cv=cv)
        ignored = metrics.kendall_tau_scorer.set_score_request(sample_weight=False)
        plain = cross_validate(est, X, Y, scoring=ignored, params={"sample_weight": w}, cv=cv)["test_score"]
        assert not np.allclose(plain, got)
