"""StructuredRidge.predict_marginals(estimate="tilted"): the mean of ψ under the reference measure μ
tilted by the scores, μ_θ(y) ∝ μ(y)·exp⟨θ, ψ(y)⟩ with θ = c·u(x) (docs/design.md §2c), checked
against NumPy sums over the enumerated space and the training structures."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import StructuredRidge, spaces
from combpred.decision import bayes_decode
from scipy.special import logsumexp
from sklearn.model_selection import GridSearchCV
from sklearn.utils._param_validation import InvalidParameterError


def _tilted(space, U, c, w, Y, sample_weight=None):
    """E_{μ_θ}[ψ] for μ = (1 − w)·uniform + w·empirical(Y, sample_weight), by enumeration."""
    P = space.embed(space.enumerate()).astype(float)
    T = space.embed(Y).astype(float)
    s = np.ones(len(T)) if sample_weight is None else np.asarray(sample_weight, float)
    support = np.vstack([P, T])
    mass = np.concatenate([np.full(len(P), (1 - w) / len(P)), w * s / s.sum()])
    with np.errstate(divide="ignore"):
        logits = c * U @ support.T + np.log(mass)
    weights = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    return weights @ support


@pytest.mark.parametrize(
    "space",
    [spaces.Multilabel(4), spaces.Permutations(4), spaces.Subtrees([-1, 0, 0, 1, 1]), spaces.KSubsets(5, 2)],
    ids=repr,
)
@pytest.mark.parametrize("w", [0.0, 0.4, 1.0])
def test_tilted_estimate_by_enumeration(space, w):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    Y = space.sample(60, random_state=4)
    s = rng.uniform(0.2, 2.0, size=60)
    model = StructuredRidge(space=space, alpha=0.1, empirical_weight=w).fit(X, Y, sample_weight=s)
    Xt = rng.normal(size=(25, 3))
    U = model.decision_function(Xt)
    for c in (0.5, 3.0):
        got = model.predict_marginals(Xt, scale=c, estimate="tilted")
        np.testing.assert_allclose(got, _tilted(space, U, c, w, Y, s), atol=1e-10)
    np.testing.assert_array_equal(
        model.predict_marginals(Xt, scale="unit", estimate="tilted"),
        model.predict_marginals(Xt, scale=1.0, estimate="tilted"),
    )


def test_tilted_product_measure_of_labels_is_a_logistic_link():
    """Under the product measure of the training label rates p, the tilt of independent labels is
    p·e^θ / (1 − p + p·e^θ) per label, θ = c·u(x); the rates are weighted by sample_weight."""
    rng = np.random.default_rng(16)
    space = spaces.Multilabel(5)
    X, Y = rng.normal(size=(70, 3)), (rng.random((70, 5)) < [0.1, 0.3, 0.5, 0.7, 0.0]).astype(int)
    s = rng.uniform(0.5, 2.0, size=70)
    model = StructuredRidge(space=space, empirical_weight=1.0, reference="product").fit(X, Y, sample_weight=s)
    p = s @ Y / s.sum()
    theta = 2.5 * model.decision_function(X)
    want = p * np.exp(theta) / (1 - p + p * np.exp(theta))
    got = model.predict_marginals(X, scale=2.5, estimate="tilted")
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert np.all(got[:, 4] == 0)  # a label no training row has stays off


def test_tilted_empirical_is_a_mean_of_training_structures_with_an_rbf_kernel():
    """Under the empirical measure the estimate is a softmax-weighted mean of the training
    structures: on a space too large to enumerate (rankings of 12 labels) too."""
    rng = np.random.default_rng(5)
    space = spaces.Permutations(12)
    X, Y = rng.normal(size=(80, 4)), space.sample(80, random_state=6)
    model = StructuredRidge(space=space, kernel="rbf", alpha=0.3, empirical_weight=1.0).fit(X, Y)
    Xt = rng.normal(size=(10, 4))
    T = space.embed(Y).astype(float)
    logits = 2.0 * model.decision_function(Xt) @ T.T
    want = np.exp(logits - logsumexp(logits, axis=1, keepdims=True)) @ T
    np.testing.assert_allclose(model.predict_marginals(Xt, scale=2.0, estimate="tilted"), want, atol=1e-12)


def test_tilted_survives_pickle_and_partial_fit():
    rng = np.random.default_rng(7)
    space = spaces.Subtrees([-1, 0, 0, 1, 1, 2])
    X, Y = rng.normal(size=(90, 3)), space.sample(90, random_state=8)
    whole = StructuredRidge(space=space, empirical_weight=0.5).fit(X, Y)
    stream = StructuredRidge(space=space, empirical_weight=0.5).partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])
    Xt = rng.normal(size=(30, 3))
    want = whole.predict_marginals(Xt, scale=2.0, estimate="tilted")
    np.testing.assert_allclose(stream.predict_marginals(Xt, scale=2.0, estimate="tilted"), want, atol=1e-8)
    restored = pickle.loads(pickle.dumps(stream))
    np.testing.assert_array_equal(
        restored.predict_marginals(Xt, scale=2.0, estimate="tilted"),
        stream.predict_marginals(Xt, scale=2.0, estimate="tilted"),
    )


def test_tilted_refusals():
    rng = np.random.default_rng(9)
    space = spaces.Multilabel(3)
    X, Y = rng.normal(size=(30, 2)), space.sample(30, random_state=1)
    model = StructuredRidge(space=space, empirical_weight=1.0).fit(X, Y)
    with pytest.raises(ValueError, match="noise_free"):
        model.predict_marginals(X, estimate="tilted")
    with pytest.raises(ValueError, match="estimate must be one of"):
        model.predict_marginals(X, scale=1.0, estimate="exact")
    uniform_small = StructuredRidge(space=space).fit(X, Y)
    far = X.copy()
    far[7] *= 1e300
    with pytest.raises(ValueError, match="X row 7.*smaller scale"):
        uniform_small.predict_marginals(far, scale=1e100, estimate="tilted")
    M = model.predict_marginals(far, scale=1e100, estimate="tilted")  # the empirical measure: any scores
    assert np.isfinite(M).all() and set(np.unique(M[7])) <= {0.0, 1.0}
    big = spaces.Permutations(20)
    uniform = StructuredRidge(space=big).fit(X, big.sample(30, random_state=2))
    with pytest.raises(ValueError, match="exact inference"):
        uniform.predict_marginals(X, scale=1.0, estimate="tilted")


def test_decision_rules_read_the_chosen_marginals():
    """``marginal_estimate`` and ``marginal_scale`` choose what the rules of ``decision`` read, without a
    refit; the defaults are predict_marginals' defaults."""
    rng = np.random.default_rng(11)
    space = spaces.Permutations(5)
    X, Y = rng.normal(size=(120, 3)), space.sample(120, random_state=12)
    Xt = rng.normal(size=(40, 3))
    model = StructuredRidge(space=space, kernel="rbf", alpha=0.1, empirical_weight=0.3, decision="kendall").fit(X, Y)
    default = model.predict(Xt)
    np.testing.assert_array_equal(default, bayes_decode(space, model.predict_marginals(Xt), "kendall"))
    model.set_params(marginal_estimate="tilted", marginal_scale=4.0)
    tilted = model.predict(Xt)
    np.testing.assert_array_equal(
        tilted, bayes_decode(space, model.predict_marginals(Xt, scale=4.0, estimate="tilted"), "kendall")
    )
    assert not np.array_equal(tilted, default)  # the setting is read, not ignored
    model.set_params(marginal_estimate="linear", marginal_scale="unit", decision="spearman")
    np.testing.assert_array_equal(
        model.predict(Xt), bayes_decode(space, model.predict_marginals(Xt, scale="unit"), "spearman")
    )
    restored = pickle.loads(pickle.dumps(model.set_params(marginal_estimate="tilted", marginal_scale=2.0)))
    np.testing.assert_array_equal(restored.predict(Xt), model.predict(Xt))
    # a pickle from before the parameters existed reads the defaults
    state = model.__getstate__()
    del state["marginal_estimate"], state["marginal_scale"]
    old = StructuredRidge.__new__(StructuredRidge)
    old.__setstate__(state)
    assert (old.marginal_estimate, old.marginal_scale) == ("linear", "noise_free")


def test_marginal_parameters_are_validated():
    rng = np.random.default_rng(13)
    space = spaces.Multilabel(3)
    X, Y = rng.normal(size=(30, 2)), space.sample(30, random_state=3)
    for bad in (
        {"marginal_estimate": "exact"},
        {"marginal_scale": -1.0},
        {"marginal_scale": "big"},
        {"marginal_scale": 1e300},
    ):
        with pytest.raises(InvalidParameterError):
            StructuredRidge(space=space, **bad).fit(X, Y)
    model = StructuredRidge(space=space, decision="hamming").fit(X, Y)
    with pytest.raises(InvalidParameterError, match="marginal_scale"):
        model.set_params(marginal_scale=0.0).predict(X)
    with pytest.raises(ValueError, match="marginal_estimate='tilted'.*noise_free"):
        model.set_params(marginal_estimate="tilted", marginal_scale="noise_free").predict(X)
    # the core's rule, asked before the fit when a rule reads the estimates: fit, partial_fit and a
    # later partial_fit refuse the pair and leave the model as it was; decision="mode" reads neither
    pair = {"marginal_estimate": "tilted", "marginal_scale": "noise_free"}
    for call in ("fit", "partial_fit"):
        fresh = StructuredRidge(space=space, decision="hamming", **pair)
        with pytest.raises(
            ValueError, match="marginal_estimate='tilted', marginal_scale='noise_free': scale=noise_free"
        ):
            getattr(fresh, call)(X, Y)
        assert not hasattr(fresh, "coef_")
    streamed = StructuredRidge(space=space, decision="hamming").partial_fit(X, Y)
    before = streamed.coef_.copy()
    with pytest.raises(ValueError, match="noise_free is the linear estimate's"):
        streamed.set_params(**pair).partial_fit(X, Y)
    np.testing.assert_array_equal(streamed.coef_, before)
    StructuredRidge(space=space, **pair).fit(X, Y)
    # a factor below the smallest normal float64 (every estimate p to the last digit), as alpha's
    for bad in (5e-324, 1e-310):
        with pytest.raises(InvalidParameterError, match="marginal_scale"):
            StructuredRidge(space=space, marginal_scale=bad).fit(X, Y)
        with pytest.raises(ValueError, match="smallest normal"):
            model.predict_marginals(X, scale=bad)
    assert np.isfinite(model.predict_marginals(X, scale=2.2250738585072014e-308)).all()


def test_fit_refuses_a_tilt_the_space_and_measure_cannot_give():
    """Where every model of the space and measure would refuse the tilted estimate at its first
    prediction (a uniform part on a space without exact inference, probe 80), a fit whose rule reads
    it refuses it before solving, with predict's message, and leaves the model as it was; the
    empirical measure alone, the linear estimate and decision="mode" are fitted."""
    rng = np.random.default_rng(14)
    big = spaces.Permutations(17)
    X, Y = rng.normal(size=(30, 3)), big.sample(30, random_state=0)
    rule = {"decision": "kendall", "marginal_estimate": "tilted", "marginal_scale": 1.0}
    for w in (0.0, 0.5):
        for call in ("fit", "partial_fit"):
            model = StructuredRidge(space=big, alpha=0.1, empirical_weight=w, **rule)
            with pytest.raises(ValueError, match=r"marginal_estimate='tilted', marginal_scale=1\.0: .*exact inference"):
                getattr(model, call)(X, Y)
            assert not hasattr(model, "coef_")
    StructuredRidge(space=big, alpha=0.1, empirical_weight=1.0, **rule).fit(X, Y).predict(X[:2])
    StructuredRidge(space=big, alpha=0.1, empirical_weight=0.5, **{**rule, "marginal_estimate": "linear"}).fit(X, Y)
    StructuredRidge(space=big, alpha=0.1, empirical_weight=0.5, **{**rule, "decision": "mode"}).fit(X, Y)
    with pytest.raises(ValueError, match=r"reference=\"product\" is defined for"):
        small = spaces.Permutations(4)
        StructuredRidge(space=small, empirical_weight=0.5, reference="product", **rule).fit(X, small.sample(30))


def test_a_stream_switched_to_the_empirical_measure_says_why_it_has_no_tilt():
    """partial_fit continued with set_params(empirical_weight > 0) after chunks fitted without an
    empirical reference fits as fit on all chunks, but the first chunks' structures were not kept:
    the tilted estimate's refusal says so (it blamed Dask statistics and old model bytes, probe 80)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 4))
    Y = (X[:, :3] + 0.4 * rng.normal(size=(90, 3)) > 0).astype(int)
    streamed = StructuredRidge(alpha=0.05, solver="exact").partial_fit(X[:30], Y[:30])
    streamed.set_params(empirical_weight=0.7).partial_fit(X[30:], Y[30:])
    whole = StructuredRidge(**streamed.get_params()).fit(X, Y)
    np.testing.assert_allclose(streamed.decision_function(X), whole.decision_function(X), atol=1e-12)
    assert np.isfinite(whole.predict_marginals(X, scale=2.0, estimate="tilted")).all()
    with pytest.raises(ValueError, match="continued by partial_fit from a model fitted without an empirical reference"):
        streamed.predict_marginals(X, scale=2.0, estimate="tilted")


def test_grid_search_chooses_the_tilted_scale():
    rng = np.random.default_rng(14)
    space = spaces.Permutations(4)
    X, Y = rng.normal(size=(90, 3)), space.sample(90, random_state=15)
    grid = {"marginal_estimate": ["linear", "tilted"], "marginal_scale": ["unit", 2.0, 8.0]}
    search = GridSearchCV(StructuredRidge(space=space, decision="kendall"), grid, cv=3).fit(X, Y)
    assert search.best_params_["marginal_scale"] in grid["marginal_scale"]
    assert len(search.cv_results_["params"]) == 6


def test_predict_marginals_follows_the_estimators_marginal_parameters():
    """predict_marginals' own defaults ignored marginal_estimate and marginal_scale: after a search
    tuned them, it gave the untuned linear estimate (0.37 off), whose decoding disagreed with
    predict on 246 of 300 rows (probe 84). None now means the estimator's parameters."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    Y = (X @ rng.normal(size=(3, 5)) + rng.normal(size=(60, 5)) > 0).astype(int)
    model = StructuredRidge(space="multilabel", decision="hamming").fit(X, Y)
    linear = model.predict_marginals(X, scale="noise_free", estimate="linear")
    np.testing.assert_array_equal(model.predict_marginals(X), linear)  # the defaults' estimate
    model.set_params(marginal_estimate="tilted", marginal_scale=4.0)
    tilted = model.predict_marginals(X, scale=4.0, estimate="tilted")
    assert np.abs(tilted - linear).max() > 0.05
    np.testing.assert_array_equal(model.predict_marginals(X), tilted)
    np.testing.assert_array_equal(model.predict(X), bayes_decode(model.space_, model.predict_marginals(X), "hamming"))
    np.testing.assert_array_equal(model.predict_marginals(X, scale=2.0), model.predict_marginals(X, 2.0, "tilted"))
    np.testing.assert_array_equal(
        model.predict_marginals(X, estimate="linear", scale="unit"), model.predict_marginals(X, "unit", "linear")
    )
