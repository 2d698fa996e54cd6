"""StructuredRidge.predict_marginals and decode_from (issue 13): the estimate of E[ψ(y) | x] from the
scores, m̂ = clip(p + c·S u) with c = min((1 + √(1 − 4a)) / (2a), 1 + r), a = uᵀS u (docs/design.md
§2a), and predict decoding m̂ − p instead of u.

The population optimum the checks compare with is computed here in NumPy from the enumerated
space: per input category k, u_k = (S + E[δδᵀ | k])⁺ E[δ | k], δ = ψ(y) − p, the minimiser of the
expected per-example loss ½[uᵀSu + (1 − δᵀu)²].
"""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest
from _abi import f64, i64
from combpred import StructuredRidge, _capi, spaces
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils._param_validation import InvalidParameterError

# Small spaces with enumerable Y, in every one of which the noise-free estimate is exact for every
# structure (δᵀS⁺δ equals the rank r of S for each y).
NOISE_FREE = [
    spaces.Multilabel(3),
    spaces.Permutations(4),
    spaces.KSubsets(5, 2),
    spaces.Subtrees([-1, 0, 0, 1]),
    spaces.Multiclass(4),
    spaces.Ordinal(5),
    spaces.HierarchyPaths([-1, 0, 0, 1, 1, 2]),
]
# One instance of every kind, for the range checks.
EVERY = [
    spaces.Multiclass(4),
    spaces.Multilabel(5),
    spaces.KSubsets(6, 2),
    spaces.Ordinal(5),
    spaces.HierarchyPaths([-1, 0, 0, 1, 1, 2]),
    spaces.HierarchyPaths([-1, 0, 0, 1, 1, 2], leaves_only=True),
    spaces.Subtrees([-1, 0, 0, 1, 1, 2, 5]),
    spaces.Permutations(5),
    spaces.PartialTournaments(4),
    spaces.DirectedCycles(5),
    spaces.UndirectedCycles(5),
    spaces.Cliques(5),
]


def _estimate(space: spaces.Space, U: np.ndarray) -> np.ndarray:
    """The estimator of docs/design.md §2a in NumPy, from the enumerated space."""
    P = space.embed(space.enumerate()).astype(float)
    p, S = space.mean(), space.covariance()
    r = np.linalg.matrix_rank(S, tol=1e-9 * np.abs(np.linalg.eigvalsh(S)).max())
    SU = U @ S
    a = np.minimum(np.einsum("ij,ij->i", U, SU), 0.25)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(a > 0, np.minimum((1 + np.sqrt(1 - 4 * a)) / (2 * a), 1 + r), 1 + r)
    return np.clip(p + c[:, None] * SU, P.min(), P.max())


def _population_scores(space: spaces.Space, weights: np.ndarray) -> np.ndarray:
    """u = (S + E[δδᵀ])⁺ E[δ] for the distribution ``weights`` over space.enumerate()."""
    D = space.embed(space.enumerate()) - space.mean()
    w = weights / weights.sum()
    mu, M = w @ D, (D * w[:, None]).T @ D
    return np.linalg.pinv(space.covariance() + M) @ mu


def _one_hot(k: np.ndarray, n: int) -> np.ndarray:
    return np.eye(n)[k]


@pytest.mark.parametrize("space", NOISE_FREE, ids=repr)
def test_noise_free_targets_are_recovered(space):
    """Each input (one-hot) determines its structure, 5 copies each, α = 1e-8: the fitted scores
    differ from the population optimum S⁺δ/(1 + t) by about 2α/5 · ‖(S + δδᵀ)⁺‖ ≈ 1e-8 relative
    (the smallest nonzero eigenvalue of S is ≥ 0.08 in these spaces), so the marginals — an O(1)
    scale times S u — are ψ(y) to about 1e-7; the tolerance is 1e-6."""
    Y = space.enumerate()
    K = len(Y)
    k = np.tile(np.arange(K), 5)
    model = StructuredRidge(space=space, alpha=1e-8, fit_intercept=False).fit(_one_hot(k, K), Y[k])
    M = model.predict_marginals(np.eye(K))
    np.testing.assert_allclose(M, space.embed(Y), atol=1e-6)
    model.set_params(decode_from="marginals")
    np.testing.assert_array_equal(model.predict(np.eye(K)), Y)


def test_noise_free_with_an_intercept():
    """The same with fit_intercept (unpenalised), on rankings: 5 of the 24 permutations."""
    space = spaces.Permutations(4)
    Y = space.enumerate()[[0, 5, 11, 17, 23]]
    k = np.tile(np.arange(5), 4)
    model = StructuredRidge(space=space, alpha=1e-8).fit(_one_hot(k, 5), Y[k])
    np.testing.assert_allclose(model.predict_marginals(np.eye(5)), space.embed(Y), atol=1e-6)


def test_matches_the_formula_on_fitted_scores():
    """predict_marginals is the formula of docs/design.md §2a applied to decision_function."""
    rng = np.random.default_rng(0)
    for space in EVERY:
        Y = space.sample(80, random_state=1)
        X = rng.normal(size=(80, 3))
        model = StructuredRidge(space=space, alpha=0.3).fit(X, Y)
        Xt = 3 * rng.normal(size=(40, 3))
        np.testing.assert_allclose(
            model.predict_marginals(Xt), _estimate(space, model.decision_function(Xt)), atol=1e-9, err_msg=repr(space)
        )


# Four input categories with independent Bernoulli labels.
_Q = np.array([[0.9, 0.7, 0.5], [0.2, 0.5, 0.95], [0.65, 0.35, 0.1], [0.99, 0.3, 0.75]])


def _bernoulli_data(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(_Q), size=m)
    return _one_hot(k, len(_Q)), (rng.random((m, 3)) < _Q[k]).astype(np.int64)


def test_converges_as_the_sample_grows():
    """Multilabel(3), labels independent Bernoulli(q_k) given the category k of x (one-hot).

    The estimate converges, as m grows, to its population value m̂(u_k) with u_k the population
    optimum: the error at m = 5000 is a fraction of that at m = 200 (averaged over 5 draws each).
    That value is not q_k: under noise the scores do not determine the marginals (see
    test_marginals_are_not_identified_by_the_scores), and the estimate assumes little noise. It is
    on the right side of ½ for every label (½ for q = ½; so the decoded labels are the Bayes-optimal
    ones for Hamming accuracy) and within 0.15 of q_k here (0.1: it is over-confident, q = 0.9 and
    0.1 give 1 and 0); the error to q_k shrinks with m down to that bias."""
    space = spaces.Multilabel(3)
    Yall = space.enumerate()
    U = np.array([_population_scores(space, np.prod(np.where(Yall == 1, q, 1 - q), axis=1)) for q in _Q])
    limit = _estimate(space, U)
    np.testing.assert_array_equal(np.sign(np.round(limit - 0.5, 12)), np.sign(_Q - 0.5))
    assert np.abs(limit - _Q).max() < 0.15

    def errors(m):
        to_limit, to_truth = [], []
        for seed in range(5):
            X, Y = _bernoulli_data(m, seed)
            M = StructuredRidge(space=space, alpha=1e-8, fit_intercept=False).fit(X, Y).predict_marginals(np.eye(4))
            assert np.all(np.isfinite(M)) and np.all((M >= 0) & (M <= 1))
            to_limit.append(np.abs(M - limit).max())
            to_truth.append(np.abs(M - _Q).max())
        return np.mean(to_limit), np.mean(to_truth)

    small, large = errors(200), errors(5000)
    assert large[0] < small[0] / 3, (small, large)
    assert large[1] < small[1], (small, large)


def test_marginals_are_not_identified_by_the_scores():
    """Why no function of the scores is consistent under noise: on Multilabel(4), the target
    1111 for sure and four independent labels each on with probability 5/6 have the same
    population scores (u = 0.4 per label: the Sherman–Morrison forms (S + μμᵀ)⁻¹μ with μ = ½
    and (S + Σ + μμᵀ)⁻¹μ with μ = 1/3, Σ = 5/36·I agree), hence the same estimate."""
    space = spaces.Multilabel(4)
    Yall = space.enumerate()
    sure = (Yall.sum(axis=1) == 4).astype(float)
    noisy = np.prod(np.where(Yall == 1, 5 / 6, 1 / 6), axis=1)
    u_sure, u_noisy = _population_scores(space, sure), _population_scores(space, noisy)
    np.testing.assert_allclose(u_sure, 0.4, atol=1e-12)
    np.testing.assert_allclose(u_noisy, 0.4, atol=1e-12)
    np.testing.assert_allclose(_estimate(space, u_sure[None]), 1.0, atol=1e-12)


@pytest.mark.parametrize("space", EVERY, ids=repr)
def test_finite_and_in_range(space):
    """Whatever the inputs (near, far, huge, a model with little signal), every marginal is finite
    and in the range of ψ's coordinates; far inputs of an rbf model give scores near zero, hence
    marginals near p."""
    rng = np.random.default_rng(2)
    Y = space.sample(60, random_state=3)
    X = rng.normal(size=(60, 4))
    lo, hi = (
        (-1.0, 1.0)
        if isinstance(space, (spaces.Permutations, spaces.PartialTournaments, spaces.DirectedCycles))
        else (0.0, 1.0)
    )
    Xt = np.vstack([rng.normal(size=(20, 4)), 1e3 * rng.normal(size=(5, 4)), 1e150 * rng.normal(size=(5, 4))])
    for params in ({"alpha": 1e-6}, {"alpha": 1e6}, {"kernel": "rbf", "alpha": 0.1, "fit_intercept": False}):
        model = StructuredRidge(space=space, **params).fit(X, Y)
        M = model.predict_marginals(Xt)
        assert M.shape == (len(Xt), space.dim)
        assert np.all(np.isfinite(M)) and np.all((M >= lo) & (M <= hi)), params
    np.testing.assert_allclose(M[20:], np.broadcast_to(space.mean(), (10, space.dim)), atol=1e-12)


@pytest.mark.parametrize(
    "space",
    [spaces.Permutations(4), spaces.Multilabel(3), spaces.Subtrees([-1, 0, 0, 1, 1, 2]), spaces.DirectedCycles(5)],
    ids=repr,
)
def test_decode_from_marginals_is_the_argmax_of_the_marginals(space):
    """decode_from="marginals" returns, by enumeration, a structure maximising ⟨m̂ − p, ψ(y)⟩
    (compared by value: clipped coordinates can tie structures); "scores" maximises ⟨u, ψ(y)⟩."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 3))
    Y = space.sample(120, random_state=5)
    model = StructuredRidge(space=space, alpha=0.05).fit(X, Y)
    Xt = rng.normal(size=(50, 3))
    P = space.embed(space.enumerate())
    for decode_from, vectors in (
        ("marginals", model.predict_marginals(Xt) - space.mean()),
        ("scores", model.decision_function(Xt)),
    ):
        model.set_params(decode_from=decode_from)
        pred = model.predict(Xt)
        got = np.einsum("ij,ij->i", vectors, space.embed(pred))
        np.testing.assert_allclose(got, (vectors @ P.T).max(axis=1), rtol=1e-12, atol=1e-12, err_msg=decode_from)


def test_decode_from_scores_is_the_default_and_marginals_needs_no_refit(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge().fit(X, Y)
    assert model.get_params()["decode_from"] == "scores"
    np.testing.assert_array_equal(model.predict(Xt), model.space_.decode(model.decision_function(Xt)))
    handle = model._model.value
    model.set_params(decode_from="marginals")
    np.testing.assert_array_equal(model.predict(Xt), model.predict_marginals(Xt) > 0.5)
    assert model._model.value == handle


def test_decode_from_is_validated():
    X, Y = np.eye(3), np.eye(3, dtype=np.int64)
    with pytest.raises(InvalidParameterError, match="decode_from"):
        StructuredRidge(decode_from="u").fit(X, Y)
    model = StructuredRidge().fit(X, Y)
    model.set_params(decode_from="marginal")
    with pytest.raises(InvalidParameterError, match="decode_from"):
        model.predict(X)


def test_grid_search_selects_decode_from():
    """GridSearchCV treats decode_from as any parameter; the refitted best estimator keeps it."""
    rng = np.random.default_rng(6)
    space = spaces.Permutations(5)
    X = rng.normal(size=(150, 4))
    W = rng.normal(size=(4, space.dim))
    Y = space.decode(X @ W + 2 * rng.normal(size=(150, space.dim)))
    search = GridSearchCV(
        StructuredRidge(space=space), {"decode_from": ["scores", "marginals"], "alpha": [0.1, 10.0]}, cv=KFold(3)
    ).fit(X, Y)
    assert {p["decode_from"] for p in search.cv_results_["params"]} == {"scores", "marginals"}
    assert search.best_estimator_.decode_from == search.best_params_["decode_from"]
    best = np.argmax(search.cv_results_["mean_test_score"])
    assert search.cv_results_["params"][best] == search.best_params_
    assert clone(search.best_estimator_).decode_from == search.best_params_["decode_from"]


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(protocol):
    rng = np.random.default_rng(7)
    space = spaces.Permutations(4)
    X, Y = rng.normal(size=(80, 3)), space.sample(80, random_state=8)
    model = StructuredRidge(space=space, kernel="rbf", decode_from="marginals").fit(X, Y)
    restored = pickle.loads(pickle.dumps(model, protocol=protocol))
    assert restored.decode_from == "marginals"
    Xt = rng.normal(size=(30, 3))
    np.testing.assert_array_equal(restored.predict_marginals(Xt), model.predict_marginals(Xt))
    np.testing.assert_array_equal(restored.predict(Xt), model.predict(Xt))
    # a pickle from before decode_from existed predicts from the scores
    state = model.__getstate__()
    del state["decode_from"]
    old = StructuredRidge.__new__(StructuredRidge)
    old.__setstate__(state)
    assert old.decode_from == "scores"
    np.testing.assert_array_equal(old.predict(Xt), space.decode(model.decision_function(Xt)))


def test_callable_kernel_matches_precomputed():
    """A callable kernel (blocks of kernel rows at prediction) gives the marginals and the
    marginal decoding of the same model fitted on the precomputed Gram matrix."""
    rng = np.random.default_rng(9)
    space = spaces.Permutations(4)
    X, Y, Xt = rng.normal(size=(60, 3)), space.sample(60, random_state=10), rng.normal(size=(25, 3))
    call = StructuredRidge(space=space, kernel=rbf_kernel, decode_from="marginals").fit(X, Y)
    pre = StructuredRidge(space=space, kernel="precomputed", decode_from="marginals").fit(rbf_kernel(X, X), Y)
    np.testing.assert_allclose(call.predict_marginals(Xt), pre.predict_marginals(rbf_kernel(Xt, X)), atol=1e-10)
    np.testing.assert_array_equal(call.predict(Xt), pre.predict(rbf_kernel(Xt, X)))


def test_multiclass_labels():
    """With space="multiclass", marginal decoding returns class labels: those of the largest
    estimated class probability (Σψ = 1 is constant, so centring by p changes no argmax)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 3))
    y = np.array(["x", "y", "z"])[np.argmax(X @ rng.normal(size=(3, 3)) + rng.normal(size=(90, 3)), axis=1)]
    model = StructuredRidge(space="multiclass", decode_from="marginals").fit(X, y)
    pred = model.predict(X)
    assert set(pred) <= {"x", "y", "z"}
    M = model.predict_marginals(X)
    assert M.shape == (90, 3)
    np.testing.assert_array_equal(pred, model.classes_[np.argmax(M, axis=1)])


def test_c_abi_arguments():
    """cp_ridge_marginals refuses what it cannot use, with a message, never a crash."""
    lib = _capi.lib()
    rng = np.random.default_rng(12)
    X, Y = rng.normal(size=(20, 2)), (rng.random((20, 3)) < 0.5).astype(np.int64)
    model = StructuredRidge().fit(X, Y)
    h = model._model.value
    M, ys = np.empty((20, 3)), np.empty((20, 3), dtype=np.int64)
    cases = [
        (
            lambda: lib.cp_ridge_marginals(h, None, 20, 2, 0, 0, 1.0, f64(M), 3, None, 0),
            ValueError,
            "X is a NULL pointer",
        ),
        (
            lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 0, 1.0, None, 3, None, 3),
            ValueError,
            "both outputs are NULL",
        ),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 0, 1.0, f64(M), 4, None, 0), ValueError, "has 4 columns"),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 0, 1.0, None, 0, i64(ys), 2), ValueError, "has 2 columns"),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 3, 0, 0, 1.0, f64(M), 3, None, 0), ValueError, "features"),
        (lambda: lib.cp_ridge_marginals(h, f64(X), -1, 2, 0, 0, 1.0, f64(M), 3, None, 0), ValueError, "negative"),
        (lambda: lib.cp_ridge_marginals(2**62, f64(X), 20, 2, 0, 0, 1.0, f64(M), 3, None, 0), ValueError, "invalid"),
        (
            lambda: lib.cp_ridge_marginals(model.space_._h(), f64(X), 20, 2, 0, 0, 1.0, f64(M), 3, None, 0),
            TypeError,
            "not a model",
        ),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 2, 1.0, f64(M), 3, None, 0), ValueError, "scale code 2"),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, -1, 1.0, f64(M), 3, None, 0), ValueError, "scale code -1"),
        (
            lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 2, 1, 1.0, f64(M), 3, None, 0),
            ValueError,
            "estimate code 2",
        ),
        (
            lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, -1, 1, 1.0, f64(M), 3, None, 0),
            ValueError,
            "estimate code -1",
        ),
        (lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 1, 0.0, f64(M), 3, None, 0), ValueError, "factor"),
        (
            lambda: lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 1, float("nan"), f64(M), 3, None, 0),
            ValueError,
            "factor",
        ),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            _capi.check(call())
    # both outputs at once: the marginals and their decoding
    _capi.check(lib.cp_ridge_marginals(h, f64(X), 20, 2, 0, 0, 1.0, f64(M), 3, i64(ys), 3))
    np.testing.assert_array_equal(M, model.predict_marginals(X))
    np.testing.assert_array_equal(ys, M > 0.5)


def test_unit_scale_is_p_plus_S_u():
    """scale="unit": m̂ = clip(p + S u), the same scale for every input (multilabel under the uniform
    measure: p = ½, S = ¼ I); the default scale differs, and unknown scales are refused."""
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(60, 3)), (rng.random((60, 4)) < 0.5).astype(np.int64)
    model = StructuredRidge(space="multilabel", alpha=3.0).fit(X, Y)
    U = model.decision_function(X)
    unit = model.predict_marginals(X, scale="unit")
    np.testing.assert_allclose(unit, np.clip(0.5 + U / 4, 0, 1), atol=1e-12)
    assert not np.allclose(unit, model.predict_marginals(X))
    with pytest.raises(ValueError, match="scale"):
        model.predict_marginals(X, scale="linear")


def test_numeric_scale_multiplies_the_unit_scale():
    """scale=c (a positive number): m̂ = clip(p + c·S u), a calibration constant to choose by validation;
    1.0 is "unit"; zero, negative, non-finite and non-numeric scales are refused naming the argument."""
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(60, 3)), (rng.random((60, 4)) < 0.5).astype(np.int64)
    model = StructuredRidge(space="multilabel", alpha=3.0).fit(X, Y)
    U = model.decision_function(X)
    for c in (0.5, 4, np.float32(2.0), 1e6):
        np.testing.assert_allclose(model.predict_marginals(X, scale=c), np.clip(0.5 + c * U / 4, 0, 1), atol=1e-12)
    np.testing.assert_array_equal(model.predict_marginals(X, scale=1.0), model.predict_marginals(X, scale="unit"))
    for bad in (0, -1.0, float("nan"), float("inf"), 1e300, True, [1.0]):  # None: the estimator's marginal_scale
        with pytest.raises((ValueError, TypeError), match="scale"):
            model.predict_marginals(X, scale=bad)
    # the float passed on, named: Python's OverflowError, and "scale=0" for a positive value (probe BW)
    for bad, words in ((10**400, "beyond float64's range"), (Fraction(1, 10**400), "rounds to 0.0")):
        with pytest.raises(ValueError, match=f"scale=.*{words}"):
            model.predict_marginals(X, scale=bad)
    for bad in (-(10**400), Fraction(-1, 10**400)):  # refused for their sign, not their size (probe BZ)
        with pytest.raises(ValueError, match="scale=.*must be a positive number"):
            model.predict_marginals(X, scale=bad)
    np.testing.assert_array_equal(
        model.predict_marginals(X, scale=Fraction(1, 2)), model.predict_marginals(X, scale=0.5)
    )


@pytest.mark.parametrize(
    "space",
    [
        spaces.Subtrees([-1, 0, 0, 1]),
        spaces.HierarchyPaths([-1, 0, 0, 1, 1, 2, 3, 3]),
        spaces.DAGPaths([[], [0], [0], [1, 2], [1]]),
    ],
    ids=repr,
)
def test_a_root_is_certain_at_any_score_scale(space):
    """A root is in every structure: S's row is 0 there and m̂_root = p_root = 1. The core's S u left a
    rounding residue of about 1e-16·|u| there, which scaled back with large scores put m̂_root
    anywhere in [0, 1] (0 on 36 of 200 rows at inputs ×1e20)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 3))
    model = StructuredRidge(space=space, alpha=0.3).fit(X, space.sample(40, random_state=0))
    for scale in (1.0, 1e12, 1e20, 1e150):
        for kind in ("noise_free", "unit"):
            M = model.predict_marginals(rng.normal(size=(50, 3)) * scale, scale=kind)
            assert np.all(M[:, 0] == 1.0), (scale, kind)
