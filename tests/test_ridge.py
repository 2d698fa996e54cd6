"""StructuredRidge end to end: quality, shapes, kernels, labels, sample weights, optimality, cancel."""

from __future__ import annotations

import builtins
import pickle
import warnings

import numpy as np
import pytest
from _synthetic import brute_moments, linear_multiclass, linear_multilabel
from combpred import ProbabilisticStructured, StructuredRidge, spaces
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

# -- end to end ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_multilabel_learns_a_linear_rule(multilabel_data, kernel):
    X, Y, Xt, Yt = multilabel_data
    model = StructuredRidge(space="multilabel", kernel=kernel).fit(X, Y)
    pred = model.predict(Xt)
    assert pred.shape == Yt.shape
    assert set(np.unique(pred)) <= {0, 1}
    hamming_accuracy = np.mean(pred == Yt)
    assert hamming_accuracy > 0.9
    # score is 1 − Hamming loss, computed independently here
    assert model.score(Xt, Yt) == pytest.approx(hamming_accuracy)
    # predict decodes the decision function: label j is on when its score is positive
    U = model.decision_function(Xt)
    assert U.shape == Yt.shape
    assert_array_equal(pred, (U > 0).astype(int))


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_multiclass_learns_a_linear_rule(multiclass_data, kernel):
    X, y, Xt, yt = multiclass_data
    model = StructuredRidge(space="multiclass", kernel=kernel).fit(X, y)
    pred = model.predict(Xt)
    assert pred.shape == yt.shape
    accuracy = np.mean(pred == yt)
    assert accuracy > 0.8
    assert model.score(Xt, yt) == pytest.approx(accuracy)
    assert_array_equal(model.classes_, [0, 1, 2])
    U = model.decision_function(Xt)
    assert U.shape == (len(yt), 3)
    assert_array_equal(pred, np.argmax(U, axis=1))


def test_binary_multiclass_decision_is_a_margin(multiclass_data):
    X, y, Xt, _ = multiclass_data
    yb = (y == 0).astype(int)
    model = StructuredRidge(space="multiclass").fit(X, yb)
    margin = model.decision_function(Xt)
    assert margin.shape == (len(Xt),)
    assert_array_equal(model.predict(Xt), (margin > 0).astype(int))
    scores = model._scores(Xt)
    assert_allclose(margin, scores[:, 1] - scores[:, 0])


def test_linear_coef_reproduces_decision_function(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    for fit_intercept in (True, False):
        model = StructuredRidge(fit_intercept=fit_intercept).fit(X, Y)
        assert model.coef_.shape == (Y.shape[1], X.shape[1])
        assert model.intercept_.shape == (Y.shape[1],)
        if not fit_intercept:
            assert_array_equal(model.intercept_, 0.0)
        assert_allclose(Xt @ model.coef_.T + model.intercept_, model.decision_function(Xt), rtol=1e-12, atol=1e-12)


def test_kernel_models_have_no_coef(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(kernel="rbf").fit(X, Y)
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("space", ["multilabel", "multiclass"])
def test_precomputed_equals_rbf(multilabel_data, multiclass_data, space):
    X, Y, Xt, _ = multilabel_data if space == "multilabel" else multiclass_data
    gamma = 0.3
    rbf = StructuredRidge(space=space, kernel="rbf", gamma=gamma, tol=1e-12).fit(X, Y)
    pre = StructuredRidge(space=space, kernel="precomputed", tol=1e-12).fit(rbf_kernel(X, gamma=gamma), Y)
    K_test = rbf_kernel(Xt, X, gamma=gamma)
    assert_array_equal(rbf.predict(Xt), pre.predict(K_test))
    assert_allclose(rbf.decision_function(Xt), pre.decision_function(K_test), rtol=1e-7, atol=1e-9)
    assert pre.n_features_in_ == len(X)
    with pytest.raises(ValueError, match="features"):
        pre.predict(K_test[:, :-1])


def test_string_class_labels(multiclass_data):
    X, y, Xt, yt = multiclass_data
    names = np.array(["cat", "dog", "emu"])
    model = StructuredRidge(space="multiclass").fit(X, names[y])
    assert_array_equal(model.classes_, names)
    pred = model.predict(Xt)
    assert pred.dtype.kind == "U"
    reference = StructuredRidge(space="multiclass").fit(X, y)
    assert_array_equal(pred, names[reference.predict(Xt)])
    assert model.score(Xt, names[yt]) == pytest.approx(reference.score(Xt, yt))
    assert model.score(Xt, names[yt]) > 0.8


def test_space_as_object_or_string(multilabel_data, multiclass_data):
    X, Y, Xt, _ = multilabel_data
    Y5 = np.c_[Y, Y[:, 0]]
    by_name = StructuredRidge(space="multilabel").fit(X, Y5)
    by_object = StructuredRidge(space=spaces.Multilabel(5)).fit(X, Y5)
    assert by_object.space_ == spaces.Multilabel(5)
    assert by_name.space_ == spaces.Multilabel(5)
    assert_allclose(by_object.coef_, by_name.coef_, rtol=1e-12, atol=1e-14)
    assert_array_equal(by_object.predict(Xt), by_name.predict(Xt))

    X, y, Xt, _ = multiclass_data
    by_name = StructuredRidge(space="multiclass").fit(X, y)
    by_object = StructuredRidge(space=spaces.Multiclass(3)).fit(X, y)
    assert_allclose(by_object.coef_, by_name.coef_, rtol=1e-12, atol=1e-14)
    assert_array_equal(by_object.predict(Xt), by_name.predict(Xt))


# -- sample weights ---------------------------------------------------------------------------------


@pytest.mark.parametrize("space", ["multilabel", "multiclass"])
def test_integer_weights_equal_repeated_rows(multilabel_data, multiclass_data, space):
    X, Y, Xt, _ = multilabel_data if space == "multilabel" else multiclass_data
    X, Y = X[:60], Y[:60]
    w = np.random.default_rng(3).integers(0, 4, size=len(X))
    weighted = StructuredRidge(space=space).fit(X, Y, sample_weight=w)
    repeated = StructuredRidge(space=space).fit(np.repeat(X, w, axis=0), np.repeat(Y, w, axis=0))
    assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8, atol=1e-10)
    assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-8, atol=1e-10)
    assert_array_equal(weighted.predict(Xt), repeated.predict(Xt))


def test_zero_weights_equal_dropping_rows(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    keep = np.arange(len(X)) % 3 != 0
    weighted = StructuredRidge().fit(X, Y, sample_weight=keep.astype(float))
    dropped = StructuredRidge().fit(X[keep], Y[keep])
    assert_allclose(weighted.coef_, dropped.coef_, rtol=1e-8, atol=1e-10)
    assert_allclose(weighted.intercept_, dropped.intercept_, rtol=1e-8, atol=1e-10)


def test_kernel_weights_equal_repeated_rows(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    X, Y = X[:50], Y[:50]
    w = np.random.default_rng(4).integers(1, 4, size=len(X))
    kw = dict(kernel="rbf", gamma=0.2, tol=1e-12)
    weighted = StructuredRidge(**kw).fit(X, Y, sample_weight=w)
    repeated = StructuredRidge(**kw).fit(np.repeat(X, w, axis=0), np.repeat(Y, w, axis=0))
    assert_allclose(weighted.decision_function(Xt), repeated.decision_function(Xt), rtol=1e-6, atol=1e-8)


def test_weights_change_the_fit(multilabel_data):
    X, Y, _, _ = multilabel_data
    w = np.linspace(0.1, 3.0, len(X))
    assert not np.allclose(StructuredRidge().fit(X, Y, sample_weight=w).coef_, StructuredRidge().fit(X, Y).coef_)


# -- optimality, checked from Python with brute-force moments ---------------------------------------


def _linear_relative_gradient(model, X, Y, w, centred=False):
    """‖∇J‖/‖∇J(0)‖ of J = α‖W‖² + ½ Σ s_i [u_iᵀSu_i + (1 − δ_iᵀu_i)²] (docs/design.md §2); with
    ``centred``, in the coordinates of X centred at its w-weighted mean (those of cg and sgd with an
    intercept): the same scores, the intercept's row b + Wᵀμ."""
    p, S = brute_moments(model.space_)
    D = model.space_.embed(Y) - p
    Wt = np.r_[model.coef_.T, model.intercept_[None, :]]
    U = np.c_[X, np.ones(len(X))] @ Wt
    Xt = np.c_[X - np.average(X, axis=0, weights=w) if centred else X, np.ones(len(X))]
    r = 1 - np.sum(D * U, axis=1)
    grad = Xt.T @ (w[:, None] * (U @ S - r[:, None] * D))
    grad[:-1] += 2 * model.alpha * model.coef_.T
    return np.linalg.norm(grad) / np.linalg.norm(Xt.T @ (w[:, None] * D))


def _kernel_relative_gradient(model, K, X, Y, w):
    """Euclidean ‖∇_Γ J‖/‖∇_Γ J(0)‖ of the kernel form, from scores U = K̃Γ on the training set:
    ∇_Γ J = K̃ (2αΓ + s∘(US − rΔ)) = 2αU + K̃ (s∘(US − rΔ)), with K̃ = K + 1 (fit_intercept)."""
    p, S = brute_moments(model.space_)
    D = model.space_.embed(Y) - p
    Kt = K + 1.0
    U = model._scores(X)
    r = 1 - np.sum(D * U, axis=1)
    grad = 2 * model.alpha * U + Kt @ (w[:, None] * (U @ S - r[:, None] * D))
    return np.linalg.norm(grad) / np.linalg.norm(Kt @ (w[:, None] * D))


@pytest.mark.parametrize("solver", ["exact", "cg"])
@pytest.mark.parametrize("alpha", [1.0, 0.01])
def test_linear_solution_is_optimal(solver, alpha):
    X, Y = linear_multilabel(150, seed=5)
    w = np.random.default_rng(6).uniform(0.5, 2.0, len(X))
    model = StructuredRidge(alpha=alpha, solver=solver).fit(X, Y, sample_weight=w)
    assert model.relative_gradient_ <= 1e-8
    rel = _linear_relative_gradient(model, X, Y, w)
    assert rel <= 2e-8
    rel = _linear_relative_gradient(model, X, Y, w, centred=solver == "cg")  # as the solver measured it
    assert rel == pytest.approx(model.relative_gradient_, rel=1e-3, abs=1e-13)
    if solver == "cg":
        assert model.n_iter_ >= 1


@pytest.mark.parametrize("solver", ["auto", "exact"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
@pytest.mark.parametrize("space", ["multilabel", "multiclass"])
def test_kernel_solution_is_optimal(kernel, space, solver):
    if space == "multilabel":
        X, Y = linear_multilabel(120, seed=7)
    else:
        X, Y = linear_multiclass(120, seed=7)
    w = np.ones(len(X))
    model = StructuredRidge(space=space, kernel=kernel, degree=2, alpha=0.1, solver=solver).fit(X, Y)
    if solver == "exact":  # the direct solve, not CG
        assert model.n_iter_ == 1
    gamma = 1.0 / X.shape[1]
    if kernel == "rbf":
        K = rbf_kernel(X, gamma=gamma)
    else:
        K = polynomial_kernel(X, degree=2, gamma=gamma, coef0=1.0)
    Yrows = Y if space == "multilabel" else np.searchsorted(model.classes_, Y)
    assert model.relative_gradient_ <= 1e-8
    rel = _kernel_relative_gradient(model, K, X, Yrows, w)
    assert rel <= 2e-8
    assert model.n_iter_ >= 1


def test_exact_and_cg_agree(multilabel_data, multiclass_data):
    for X, Y, space in [(*multilabel_data[:2], "multilabel"), (*multiclass_data[:2], "multiclass")]:
        exact = StructuredRidge(space=space, solver="exact", alpha=0.1).fit(X, Y)
        cg = StructuredRidge(space=space, solver="cg", alpha=0.1).fit(X, Y)
        scale = np.abs(exact.coef_).max()
        assert np.abs(exact.coef_ - cg.coef_).max() <= 1e-6 * scale
        assert_allclose(exact.intercept_, cg.intercept_, rtol=1e-6, atol=1e-6 * scale)
        assert exact.objective_ == pytest.approx(cg.objective_, rel=1e-10)


def test_objective_matches_python(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(alpha=0.5).fit(X, Y)
    p, S = brute_moments(model.space_)
    D = Y - p
    U = X @ model.coef_.T + model.intercept_
    J = model.alpha * np.sum(model.coef_**2) + 0.5 * np.sum(
        np.sum((U @ S) * U, axis=1) + (1 - np.sum(D * U, axis=1)) ** 2
    )
    assert model.objective_ == pytest.approx(J, rel=1e-10)


def test_alpha_shrinks_the_weights(multilabel_data):
    X, Y, _, _ = multilabel_data
    norms = [np.linalg.norm(StructuredRidge(alpha=a).fit(X, Y).coef_) for a in (0.01, 1.0, 100.0)]
    assert norms[0] > norms[1] > norms[2]


def test_refit_replaces_the_model(multilabel_data, multiclass_data):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge().fit(X, Y)
    model.fit(X[:, :3], Y[:, :2])
    assert model.n_features_in_ == 3
    assert model.coef_.shape == (2, 3)
    assert model.predict(Xt[:, :3]).shape == (len(Xt), 2)


# -- cancelling a fit -------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [dict(solver="cg"), dict(kernel="rbf")])
def test_keyboard_interrupt_in_progress_cancels_fit(monkeypatch, multilabel_data, kw):
    X, Y, _, _ = multilabel_data
    calls = []
    real_print = builtins.print

    def interrupting_print(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_print(*args, **kwargs)

    model = StructuredRidge(verbose=1, tol=1e-12, alpha=0.01, **kw)
    model.fit(X, Y)  # fitted first: an interrupted refit must not leave the old model behind
    assert model.n_iter_ >= 3
    monkeypatch.setattr(builtins, "print", interrupting_print)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, Y)
    monkeypatch.undo()
    assert len(calls) == 2  # stopped at the interrupt: no iteration reported after it
    assert not hasattr(model, "_model")
    with pytest.raises(NotFittedError):
        model.predict(X)
    # the estimator is still usable
    model.set_params(verbose=0).fit(X, Y)
    assert model.predict(X).shape == Y.shape


@pytest.mark.parametrize(
    "kw, measure",
    [
        ({"solver": "cg"}, "relative gradient"),
        ({"solver": "exact"}, "relative gradient"),
        ({"solver": "exact", "kernel": "rbf"}, "relative gradient"),
        ({"solver": "cg", "kernel": "rbf"}, "relative gradient"),
        ({"solver": "sgd", "max_iter": 3}, "relative change of J"),
        ({"solver": "sgd", "kernel": "rbf", "max_iter": 3}, "relative change of J"),
    ],
)
def test_verbose_reports_progress(capsys, multilabel_data, kw, measure):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(verbose=1, **kw).fit(X, Y)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == model.n_iter_
    assert all(line.startswith("[StructuredRidge] iter") and measure in line for line in lines)
    other = {"relative gradient", "relative change of J"} - {measure}
    assert not any(o in line for o in other for line in lines)


@pytest.mark.parametrize(
    "estimator", [StructuredRidge(solver="cg", tol=1e-12, alpha=0.01), ProbabilisticStructured(max_iter=5)]
)
def test_quiet_fit_makes_no_call_into_python_per_iteration(monkeypatch, multilabel_data, estimator):
    """Without verbose the core gets no progress callback: the interrupt poll alone makes the fit
    cancellable (tests/test_cancellation.py), and Go calls no Python function per iteration (23
    such calls were a fortieth of a yeast-sized linear fit). Verbose fits still pass one."""
    from combpred import _capi

    X, Y, _, _ = multilabel_data
    wrapped = []
    real = _capi.PROGRESS

    def counting(*args):
        if args and callable(args[0]):
            wrapped.append(args[0])
        return real(*args)

    monkeypatch.setattr(_capi, "PROGRESS", counting)
    estimator.fit(X, Y)
    assert estimator.n_iter_ >= 3
    assert wrapped == []
    estimator.set_params(verbose=1).fit(X, Y)
    assert len(wrapped) == 1


@pytest.mark.parametrize(
    "kw, measure",
    [
        ({}, "relative gradient"),
        ({"kernel": "rbf"}, "relative change of J"),
        ({"solver": "sgd"}, "relative change of J"),
    ],
)
def test_verbose_partial_fit_names_its_measure(capsys, multilabel_data, kw, measure):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(verbose=1, **kw)
    model.partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert all(measure in line for line in lines)


def test_gemm_flops_counts_a_fits_products():
    """The core's operation counter (read by the benchmarks for their GFLOP/s) stands still between
    calls, and a kernel fit adds at least the half of its Gram matrix it computes (m²·n/2 products,
    two operations each) and its CG products (2·m²·d per iteration)."""
    from combpred import _core

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(300, 7)), rng.integers(0, 2, size=(300, 4))
    before = _core.gemm_flops()
    assert _core.gemm_flops() == before
    model = StructuredRidge(kernel="rbf", gamma=0.1, alpha=1.0).fit(X, Y)
    added = _core.gemm_flops() - before
    m, n = X.shape
    assert added >= m * m * n + model.n_iter_ * 2 * m * m * Y.shape[1]


def test_fitted_predictions_skip_scikit_learns_fitted_check(multilabel_data, monkeypatch):
    """A fitted estimator answers the fitted check from its own state: scikit-learn's check reads
    the estimator's tags, a third of a single-row predict. Unfitted ones still get its error, and
    an unpickled model (its bytes not yet loaded) counts as fitted."""
    import pickle

    from combpred import _estimator_base

    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(space="multilabel").fit(X, Y)
    restored = pickle.loads(pickle.dumps(model))

    def refuse(*args, **kwargs):
        raise AssertionError("scikit-learn's check_is_fitted was called on a fitted estimator")

    monkeypatch.setattr(_estimator_base, "check_is_fitted", refuse)
    assert_array_equal(model.predict(Xt), restored.predict(Xt))
    model.decision_function(Xt)
    monkeypatch.undo()
    with pytest.raises(NotFittedError):
        StructuredRidge(space="multilabel").predict(Xt)


def test_the_core_reports_the_solver_a_fit_ran():
    """solver="auto" resolves in the core (exact for small linear and Nyström models, CG for kernel
    expansions and large linear ones; partial_fit of a kernel expansion is an SGD pass); the info
    says which, so that an unconverged fit's advice fits the solver that ran (audit P), and
    ``solver_`` shows it. A core model read from bytes does not know it; the pickled estimator
    keeps ``solver_``."""
    import pickle

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :3] > 0).astype(int)
    cases = [
        ({}, "exact"),
        ({"kernel": "rbf"}, "cg"),
        ({"kernel": "rbf", "n_components": 3}, "exact"),
        ({"kernel": "rbf", "n_components": 50}, "cg"),  # 51 · 3 unknowns: CG costs less here
        ({"kernel": "rbf", "solver": "exact"}, "exact"),
        ({"solver": "sgd"}, "sgd"),
        ({"solver": "cg"}, "cg"),
    ]
    for params, ran in cases:
        model = StructuredRidge(**params).fit(X, Y)
        assert model._model.info.solver == model.solver_ == ran, params
        restored = pickle.loads(pickle.dumps(model))
        assert restored._model.info.solver == "" and restored.solver_ == ran  # the estimator keeps it
    wide = rng.normal(size=(60, 700))  # 701 · 3 unknowns: beyond the exact limit of auto
    assert StructuredRidge().fit(wide, Y).solver_ == "cg"
    assert StructuredRidge().partial_fit(X, Y).solver_ == "exact"
    assert StructuredRidge(kernel="rbf").partial_fit(X, Y).solver_ == "sgd"


def test_auto_runs_cg_where_the_normal_equations_cannot_be_solved():
    # features 1e8 from 0 without an intercept: solver="exact" refuses its normal equations; auto,
    # which resolves to exact at this size, refused them too where CG fits them (probe CG)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 4)) + 1e8
    Y = (X[:, :3] - 1e8 > 0).astype(int)
    with pytest.raises(ValueError, match="cannot be solved in double precision"):
        StructuredRidge(alpha=0.1, fit_intercept=False, solver="exact").fit(X, Y)
    auto = StructuredRidge(alpha=0.1, fit_intercept=False).fit(X, Y)
    cg = StructuredRidge(alpha=0.1, fit_intercept=False, solver="cg").fit(X, Y)
    assert auto.solver_ == "cg"
    np.testing.assert_array_equal(auto.coef_, cg.coef_)


def test_kernel_cg_warns_where_the_kernel_scale_against_alpha_is_beyond_float64():
    """At poly degree 50 (K up to 1e50, alpha 1) kernel CG returned scores of 12.5 where the
    optimum's are 0.5, reporting a relative gradient of 1e-15 without a word (probe DJ): its
    gradient K·ρ is blind to the directions the penalty decides. The fit now warns; degree 3 and a
    precomputed K of the same scale do not, and the exact solver refuses the system itself."""
    from combpred.exceptions import PrecisionWarning

    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    sp = spaces.Multilabel(3)
    Y = sp.enumerate()[np.random.default_rng(2).integers(0, 8, 12)]
    poly = {"kernel": "poly", "gamma": 1.0, "coef0": 1.0, "alpha": 1.0, "fit_intercept": False}
    for model, inputs in (
        (StructuredRidge(space=sp, degree=50, **poly), X),
        (StructuredRidge(space=sp, kernel="precomputed", fit_intercept=False), (X @ X.T + 1) ** 50),
        (StructuredRidge(space=sp, kernel="rbf", alpha=1e-17), X),
    ):
        with pytest.warns(PrecisionWarning, match=r"scale against alpha is beyond float64's precision"):
            model.fit(inputs, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        StructuredRidge(space=sp, degree=3, **poly).fit(X, Y)
        StructuredRidge(space=sp, kernel="precomputed", fit_intercept=False).fit((X @ X.T + 1) ** 3, Y)
        StructuredRidge(space=sp, kernel="rbf", alpha=1e-8).fit(X, Y)


def test_rbf_kernel_warns_where_its_values_lose_precision():
    # ‖a‖² + ‖b‖² − 2⟨a, b⟩ (as scikit-learn computes it) cancels for inputs far from the origin: X + 1e7
    # moved the scores by 0.23, and gamma = 1e20 rounded k(x, x) to 0, without a word (probe CG)
    from combpred.exceptions import PrecisionWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (X + rng.normal(size=(40, 3)) > 0).astype(int)
    fits = [
        lambda X, gamma: StructuredRidge(kernel="rbf", gamma=gamma, alpha=0.1).fit(X, Y),
        lambda X, gamma: StructuredRidge(kernel="rbf", gamma=gamma, alpha=0.1, n_components=20).fit(X, Y),
        lambda X, gamma: StructuredRidge(kernel="rbf", gamma=gamma, alpha=0.1, solver="sgd").partial_fit(X, Y),
    ]
    for fit in fits:
        for X_far, gamma in [(X + 1e7, 0.5), (X + 1e5, 0.5), (X, 1e20)]:
            with pytest.warns(PrecisionWarning, match=r"centre X \(StandardScaler") as record:
                fit(X_far, gamma)
            assert record[0].filename == __file__  # the user's call, not the library's
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrecisionWarning)
            fit(X + 1e4, 0.5)  # an error of 3e-8: below the fits' tolerance
            fit(X, 0.5)
    # the model read from bytes has nothing to warn of
    model = pickle.loads(pickle.dumps(StructuredRidge(kernel="rbf", gamma=1e20, alpha=0.1).fit(X, Y)))
    assert model._model.info.warnings == []
