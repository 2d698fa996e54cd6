"""StructuredRidge with a callable kernel: kernel(X, Y, **kernel_params) -> K of shape (len(X), len(Y))."""

from __future__ import annotations

import pickle
import warnings

import combpred
import combpred._ridge as ridge_module
import numpy as np
import pytest
from combpred import StructuredRidge, spaces
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks


@pytest.fixture(scope="module")
def permutation_data():
    space = spaces.Permutations(4)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5))
    Y = space.decode(X @ rng.normal(size=(5, space.dim)))
    return space, X[:200], Y[:200], X[200:], Y[200:]


# -- kernels (module level, so that they pickle) ----------------------------------------------------


def numpy_rbf(X, Y, gamma):
    """exp(−γ‖x − y‖²), written out with numpy."""
    d2 = (X**2).sum(axis=1)[:, None] + (Y**2).sum(axis=1)[None, :] - 2.0 * X @ Y.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


CALLS: list[tuple] = []


def recording_kernel(X, Y, **params):
    """The rbf kernel, recording each call: shapes, dtypes and keyword arguments."""
    CALLS.append((X.shape, Y.shape, X.dtype, Y.dtype, X.flags.c_contiguous, dict(params)))
    return rbf_kernel(X, Y, gamma=params.get("scale", 1.0))


def wrong_shape_kernel(X, Y):
    return rbf_kernel(X, Y)[:, :-1]


def row_pair_kernel(x, y):
    """KernelRidge's convention (one pair of rows in, one number out): not what StructuredRidge calls."""
    return float(np.exp(-np.sum((x - y) ** 2)))


def nan_kernel(X, Y):
    K = rbf_kernel(X, Y)
    K[3, 5] = np.nan
    return K


def inf_at_predict_kernel(X, Y):
    K = rbf_kernel(X, Y)
    if X is not Y and X.shape[0] != Y.shape[0]:
        K[1, 2] = np.inf
    return K


def asymmetric_kernel(X, Y):
    return rbf_kernel(X, Y) + 0.1 * np.triu(np.ones((len(X), len(Y))), 1)


def raising_kernel(X, Y):
    raise RuntimeError("the kernel's own failure")


def string_kernel(X, Y):
    return np.full((len(X), len(Y)), "a")


def none_kernel(X, Y):
    return None


def train_only_kernel(X, Y):
    """Ignores Y: right at fit, where Y is X, wrong at predict."""
    return rbf_kernel(X, X)


_CACHE: dict = {}


def caching_kernel(X, Y):
    """Returns the same array object for the same inputs, as a kernel with a cache may."""
    key = (X.tobytes(), Y.tobytes())
    if key not in _CACHE:
        _CACHE[key] = laplacian_kernel(X, Y)
    return _CACHE[key]


def laplacian_with_default_gamma(X, Y, gamma=0.5):
    return laplacian_kernel(X, Y, gamma=gamma)


class NamedKernel:
    """A kernel function under a repr without its address, so that the estimator checks' test ids
    are the same in every process that collects them (pytest-xdist's workers must agree)."""

    def __init__(self, function):
        self.function = function

    def __call__(self, X, Y=None, **params):
        return self.function(X, Y, **params)

    def __repr__(self):
        return self.function.__name__


# -- equivalence with the built-in kernels ----------------------------------------------------------


@pytest.mark.parametrize("space", ["multilabel", "multiclass"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_callable_rbf_equals_rbf(multilabel_data, multiclass_data, space, fit_intercept, weighted):
    X, Y, Xt, _ = multilabel_data if space == "multilabel" else multiclass_data
    gamma = 0.3
    sw = np.random.default_rng(0).uniform(0.2, 2.0, size=len(X)) if weighted else None
    common = dict(space=space, fit_intercept=fit_intercept, tol=1e-12)
    rbf = StructuredRidge(kernel="rbf", gamma=gamma, **common).fit(X, Y, sample_weight=sw)
    mine = StructuredRidge(kernel=numpy_rbf, kernel_params={"gamma": gamma}, **common).fit(X, Y, sample_weight=sw)
    assert_allclose(mine.decision_function(Xt), rbf.decision_function(Xt), rtol=1e-8, atol=1e-8)
    assert_array_equal(mine.predict(Xt), rbf.predict(Xt))
    assert mine.n_features_in_ == X.shape[1]
    assert_array_equal(mine.X_fit_, X)
    assert not hasattr(mine, "coef_")
    assert mine.objective_ == pytest.approx(rbf.objective_, rel=1e-8)


def test_callable_equals_precomputed_with_sgd(multilabel_data):
    """The callable path is the precomputed path on K(X, X): the same core model, SGD included."""
    X, Y, Xt, _ = multilabel_data
    mine = StructuredRidge(kernel=laplacian_kernel, solver="sgd", max_iter=5, random_state=3).fit(X, Y)
    pre = StructuredRidge(kernel="precomputed", solver="sgd", max_iter=5, random_state=3).fit(laplacian_kernel(X), Y)
    assert_allclose(mine.decision_function(Xt), pre.decision_function(laplacian_kernel(Xt, X)), rtol=1e-12, atol=1e-12)


def test_string_kernel_parameters_are_ignored(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    plain = StructuredRidge(kernel=laplacian_kernel).fit(X, Y)
    other = StructuredRidge(kernel=laplacian_kernel, gamma=5.0, degree=7, coef0=3.0).fit(X, Y)
    assert_array_equal(other.decision_function(Xt), plain.decision_function(Xt))


# -- end to end on several spaces --------------------------------------------------------------------


def _end_to_end(space, X, Y, Xt, Yt, min_score):
    model = StructuredRidge(space=space, kernel=laplacian_kernel, kernel_params={"gamma": 0.2}).fit(X, Y)
    pre = StructuredRidge(space=space, kernel="precomputed").fit(laplacian_kernel(X, gamma=0.2), Y)
    K_test = laplacian_kernel(Xt, X, gamma=0.2)
    assert_allclose(model.decision_function(Xt), pre.decision_function(K_test), rtol=1e-12, atol=1e-12)
    pred = model.predict(Xt)
    assert_array_equal(pred, pre.predict(K_test))
    assert model.score(Xt, Yt) > min_score
    return model, pred


def test_laplacian_multilabel(multilabel_data):
    X, Y, Xt, Yt = multilabel_data
    model, pred = _end_to_end("multilabel", X, Y, Xt, Yt, 0.85)
    assert pred.shape == Yt.shape
    assert set(np.unique(pred)) <= {0, 1}
    assert_array_equal(model.classes_, np.arange(Y.shape[1]))


def test_laplacian_multiclass(multiclass_data):
    X, y, Xt, yt = multiclass_data
    names = np.array(["ant", "bee", "cow"])
    model, pred = _end_to_end("multiclass", X, names[y], Xt, names[yt], 0.8)
    assert_array_equal(model.classes_, names)
    assert pred.dtype.kind == "U"
    assert model.decision_function(Xt).shape == (len(Xt), 3)


def test_laplacian_permutations(permutation_data):
    space, X, Y, Xt, Yt = permutation_data
    _, pred = _end_to_end(space, X, Y, Xt, Yt, 0.8)
    space.validate(pred)  # valid rankings
    random_rankings = space.sample(len(Xt), random_state=0)
    assert space.score(Yt, pred) > space.score(Yt, random_rankings) + 0.2


# -- kernel_params ---------------------------------------------------------------------------------


def test_kernel_params_are_passed_through(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    CALLS.clear()
    model = StructuredRidge(kernel=recording_kernel, kernel_params={"scale": 0.7}).fit(X.tolist(), Y)
    assert CALLS == [(X.shape, X.shape, np.float64, np.float64, True, {"scale": 0.7})]
    CALLS.clear()
    model.decision_function(Xt)
    assert CALLS == [(Xt.shape, X.shape, np.float64, np.float64, True, {"scale": 0.7})]
    reference = StructuredRidge(kernel="rbf", gamma=0.7).fit(X, Y)
    assert_allclose(model.decision_function(Xt), reference.decision_function(Xt), rtol=1e-7, atol=1e-8)
    # None: no keyword arguments at all
    CALLS.clear()
    StructuredRidge(kernel=recording_kernel).fit(X, Y)
    assert CALLS[0][-1] == {}
    # the parameters change the model
    gamma_a = StructuredRidge(kernel=laplacian_kernel, kernel_params={"gamma": 0.05}).fit(X, Y)
    gamma_b = StructuredRidge(kernel=laplacian_kernel, kernel_params={"gamma": 2.0}).fit(X, Y)
    assert not np.allclose(gamma_a.decision_function(Xt), gamma_b.decision_function(Xt))


def test_kernel_params_stored_verbatim():
    params = {"gamma": 0.5}
    model = StructuredRidge(kernel=laplacian_kernel, kernel_params=params)
    assert model.get_params()["kernel_params"] is params
    assert model.get_params()["kernel"] is laplacian_kernel
    assert StructuredRidge().kernel_params is None


def test_fitted_model_keeps_its_kernel(multilabel_data):
    """Like the built-in kernels' parameters, a fitted model's kernel changes only with a new fit."""
    X, Y, Xt, _ = multilabel_data
    params = {"gamma": 0.3}
    model = StructuredRidge(kernel=laplacian_kernel, kernel_params=params).fit(X, Y)
    expected = model.decision_function(Xt)
    params["gamma"] = 3.0  # mutating the caller's dict
    assert_array_equal(model.decision_function(Xt), expected)
    model.set_params(kernel="rbf", kernel_params=None)
    assert_array_equal(model.decision_function(Xt), expected)
    model.fit(X, Y)  # now an rbf model
    assert not hasattr(model, "X_fit_")
    assert not np.allclose(model.decision_function(Xt), expected)


# -- bad callables ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel, params, error, match",
    [
        (
            wrong_shape_kernel,
            None,
            ValueError,
            r"wrong_shape_kernel.*returned shape \(200, 199\), expected \(200, 200\)",
        ),
        (row_pair_kernel, None, ValueError, r"row_pair_kernel.*returned shape \(\).*single pairs of rows"),
        (nan_kernel, None, ValueError, r"nan_kernel.*non-finite value: K\[3, 5\] = nan"),
        (asymmetric_kernel, None, ValueError, r"asymmetric_kernel.*not symmetric: K\[0, 1\]"),
        (raising_kernel, None, ValueError, r"raising_kernel.*raised RuntimeError: the kernel's own failure"),
        (laplacian_kernel, {"gama": 0.1}, TypeError, r"laplacian_kernel.*raised TypeError.*gama"),
        (string_kernel, None, TypeError, r"string_kernel.*dtype <U1"),
        (none_kernel, None, TypeError, r"none_kernel.*returned a NoneType"),
    ],
)
def test_bad_callables_are_named(multilabel_data, kernel, params, error, match):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(kernel=kernel, kernel_params=params)
    with pytest.raises(error, match=match):
        model.fit(X, Y)
    with pytest.raises(NotFittedError):  # a failed fit leaves no model behind
        model.predict(X)
    assert not hasattr(model, "X_fit_")


def test_raising_kernel_keeps_its_exception_as_cause(multilabel_data):
    X, Y, _, _ = multilabel_data
    with pytest.raises(ValueError) as info:
        StructuredRidge(kernel=raising_kernel).fit(X, Y)
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.parametrize("kernel", [raising_kernel, nan_kernel, asymmetric_kernel])
def test_bad_callables_are_named_once_on_a_nystrom_map(multilabel_data, kernel):
    """The map's landmark Gram matrix is the kernel's too: its errors named the kernel in front and
    again at the end, '… raised KeyError: 'boom' (kernel=raising)' (probe DU)."""
    X, Y, _, _ = multilabel_data
    with pytest.raises(ValueError, match=f"^kernel={kernel.__name__} ") as info:
        StructuredRidge(kernel=kernel, n_components=20).fit(X, Y)
    assert not str(info.value).endswith(f"(kernel={kernel.__name__})")


@pytest.mark.parametrize("huge", [1e308, 1.5e308])
def test_nystrom_features_that_overflow_name_the_kernel_not_x(huge):
    """A callable kernel whose finite values against the landmarks make K(X, L)·P overflow: the fit
    blamed the user's X, "X row 0: its squared norm overflows" or "X[0, 3] = +Inf" of an X with
    three finite columns (probe DZ). The features are checked where they are made, and the row is
    X's row, at fit and at predict."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    Y = (rng.random((12, 3)) < 0.5).astype(int)
    armed = []

    def kern(A, B):
        K = A @ B.T
        if armed and K.shape[1] == 5 and K.shape[0] != 5:
            K[-1, :2] += huge  # the last row of X against two landmarks
        return K

    model = StructuredRidge(kernel=kern, n_components=5, random_state=0).fit(X, Y)
    armed.append(True)
    for call in (
        lambda: StructuredRidge(kernel=kern, n_components=5, random_state=0).fit(X, Y),
        lambda: model.predict(X),
    ):
        with pytest.raises(ValueError, match=r"^kernel=.*kern: the Nyström features(\[11, | row 11)") as info:
            call()
        assert "X[" not in str(info.value) and "X row" not in str(info.value)


@pytest.mark.parametrize(
    "kernel, match",
    [
        (train_only_kernel, r"train_only_kernel.*returned shape \(7, 7\), expected \(7, 200\)"),
        (inf_at_predict_kernel, r"inf_at_predict_kernel.*non-finite value: K\[1, 2\] = inf"),
    ],
)
def test_bad_kernel_blocks_at_predict(multilabel_data, kernel, match):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(kernel=kernel).fit(X, Y)
    for method in (model.predict, model.decision_function):
        with pytest.raises(ValueError, match=match):
            method(Xt[:7])


def test_bad_parameters(multilabel_data):
    X, Y, _, _ = multilabel_data
    with pytest.raises(ValueError, match="kernel"):
        StructuredRidge(kernel=3).fit(X, Y)
    with pytest.raises(ValueError, match="kernel_params"):
        StructuredRidge(kernel=laplacian_kernel, kernel_params=[("gamma", 1.0)]).fit(X, Y)


@pytest.mark.parametrize("n_components", [None, 20])
def test_wrong_number_of_features_at_predict(multilabel_data, n_components):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(kernel=recording_kernel, n_components=n_components, random_state=0).fit(X, Y)
    CALLS.clear()
    for Xq in (Xt[:, :3], np.ascontiguousarray(Xt[:, :3]), np.c_[Xt, Xt]):
        for method in (model.predict, model.decision_function):
            with pytest.raises(ValueError, match=f"X has {Xq.shape[1]} features.*expecting 5"):
                method(Xq)
    assert CALLS == []  # rejected before the kernel is called
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, 5), np.nan))


# -- Nyström maps and streaming ----------------------------------------------------------------------


def test_nystrom_with_every_sample_equals_the_builtin_map(multilabel_data):
    """With every training sample a landmark, the map is the rbf core's map up to a rotation."""
    X, Y, Xt, _ = multilabel_data
    m = len(X)
    builtin = StructuredRidge(kernel="rbf", gamma=0.3, n_components=m, tol=1e-12, random_state=0).fit(X, Y)
    mine = StructuredRidge(kernel=numpy_rbf, kernel_params={"gamma": 0.3}, n_components=m, tol=1e-12).fit(X, Y)
    exact = StructuredRidge(kernel=numpy_rbf, kernel_params={"gamma": 0.3}, tol=1e-12).fit(X, Y)
    assert mine.n_components_ == builtin.n_components_ == m
    assert_allclose(mine.decision_function(Xt), builtin.decision_function(Xt), rtol=1e-8, atol=1e-8)
    assert_allclose(mine.decision_function(Xt), exact.decision_function(Xt), atol=1e-6)
    assert not hasattr(mine, "coef_") and not hasattr(mine, "X_fit_")
    assert mine.n_samples_seen_ == m
    no_intercept = dict(kernel_params={"gamma": 0.3}, fit_intercept=False, tol=1e-12)
    mine = StructuredRidge(kernel=numpy_rbf, n_components=m, **no_intercept).fit(X, Y)
    builtin = StructuredRidge(kernel="rbf", gamma=0.3, n_components=m, fit_intercept=False, tol=1e-12).fit(X, Y)
    assert_allclose(mine.decision_function(Xt), builtin.decision_function(Xt), rtol=1e-8, atol=1e-8)


def test_nystrom_landmarks(multilabel_data):
    X, Y, Xt, Yt = multilabel_data
    model = StructuredRidge(kernel=laplacian_kernel, n_components=40, random_state=0).fit(X, Y)
    assert model.n_components_ == 40
    assert model.score(Xt, Yt) > 0.8
    again = StructuredRidge(kernel=laplacian_kernel, n_components=40, random_state=0).fit(X, Y)
    assert_array_equal(again.decision_function(Xt), model.decision_function(Xt))  # seeded landmarks
    other = StructuredRidge(kernel=laplacian_kernel, n_components=40, random_state=1).fit(X, Y)
    assert not np.allclose(other.decision_function(Xt), model.decision_function(Xt))
    # more components than samples: every sample is a landmark
    with pytest.warns(UserWarning, match="n_components=5000 is more than the 30 rows of X"):
        assert StructuredRidge(kernel=laplacian_kernel, n_components=5000).fit(X[:30], Y[:30]).n_components_ == 30
    with warnings.catch_warnings():  # a precomputed kernel has no Nyström map to warn of (review)
        warnings.simplefilter("error", UserWarning)
        K = X[:30] @ X[:30].T
        StructuredRidge(kernel="precomputed", n_components=50).fit(K, Y[:30])


def test_partial_fit_availability():
    assert not hasattr(StructuredRidge(kernel=laplacian_kernel), "partial_fit")
    with pytest.raises(AttributeError) as info:
        StructuredRidge(kernel=laplacian_kernel).partial_fit  # noqa: B018
    assert "callable kernel without n_components" in str(info.value.__cause__)
    assert hasattr(StructuredRidge(kernel=laplacian_kernel, n_components=10), "partial_fit")
    assert not hasattr(StructuredRidge(kernel=laplacian_kernel, n_components=10, solver="cg"), "partial_fit")
    assert not hasattr(StructuredRidge(kernel="precomputed"), "partial_fit")


def test_nystrom_partial_fit(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    params = dict(
        kernel=laplacian_kernel, kernel_params={"gamma": 0.3}, n_components=30, solver="exact", random_state=0
    )
    # the map comes from the first chunk, as fit would draw it on that chunk
    first = StructuredRidge(**params).partial_fit(X[:80], Y[:80])
    fitted = StructuredRidge(**params).fit(X[:80], Y[:80])
    assert_allclose(first.decision_function(Xt), fitted.decision_function(Xt), rtol=1e-10, atol=1e-12)
    # exact continuation: any split of the later chunks gives the same model
    two = StructuredRidge(**params).partial_fit(X[:80], Y[:80]).partial_fit(X[80:], Y[80:])
    three = StructuredRidge(**params).partial_fit(X[:80], Y[:80]).partial_fit(X[80:150], Y[80:150])
    three.partial_fit(X[150:], Y[150:])
    assert_allclose(three.decision_function(Xt), two.decision_function(Xt), rtol=1e-9, atol=1e-10)
    assert two.n_samples_seen_ == len(X)
    # a model from fit continues too (exact fits keep their statistics)
    fitted.partial_fit(X[80:], Y[80:])
    assert_allclose(fitted.decision_function(Xt), two.decision_function(Xt), rtol=1e-9, atol=1e-10)
    # SGD passes
    sgd = StructuredRidge(**{**params, "solver": "sgd"}).partial_fit(X[:100], Y[:100]).partial_fit(X[100:], Y[100:])
    assert sgd.decision_function(Xt).shape == (len(Xt), Y.shape[1])


def test_nystrom_partial_fit_refuses_another_kernel(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(kernel=laplacian_kernel, kernel_params={"gamma": 0.3}, n_components=20, random_state=0)
    model.partial_fit(X[:50], Y[:50])
    original = model.get_params()
    for change, match in [
        ({"kernel_params": {"gamma": 1.0}}, r"kernel and kernel_params must stay.*laplacian_kernel.*0\.3"),
        ({"kernel": rbf_kernel}, r"kernel and kernel_params must stay.*laplacian_kernel"),
        ({"kernel": "rbf"}, r"kernel and kernel_params must stay.*laplacian_kernel"),
        ({"fit_intercept": False}, "fit_intercept must stay"),
    ]:
        with pytest.raises(ValueError, match=match):
            model.set_params(**change).partial_fit(X[50:], Y[50:])
        model.set_params(**original)
    assert model.n_samples_seen_ == 50
    # an exact callable model has no map to continue on
    exact = StructuredRidge(kernel=laplacian_kernel).fit(X, Y)
    exact.set_params(n_components=20)
    with pytest.raises(ValueError, match="without the Nyström map"):
        exact.partial_fit(X, Y)
    # nor does a model of a string kernel
    linear = StructuredRidge(solver="exact").fit(X, Y).set_params(kernel=laplacian_kernel, n_components=20)
    with pytest.raises(ValueError, match="without the Nyström map"):
        linear.partial_fit(X, Y)
    # the same kernel with an equal (not identical) parameter dict continues
    model.set_params(kernel_params={"gamma": 0.3}).partial_fit(X[50:], Y[50:])
    assert model.n_samples_seen_ == len(X)


@pytest.mark.parametrize("n_components", [None, 30])
def test_kernel_output_is_not_modified(multilabel_data, n_components):
    X, Y, Xt, _ = multilabel_data
    _CACHE.clear()
    model = StructuredRidge(kernel=caching_kernel, n_components=n_components, random_state=0).fit(X, Y)
    first = model.decision_function(Xt)
    assert_array_equal(model.decision_function(Xt), first)
    for (a, b), K in _CACHE.items():
        assert_array_equal(K, laplacian_kernel(*(np.frombuffer(v).reshape(-1, X.shape[1]) for v in (a, b))))


# -- warm starts, blocks ---------------------------------------------------------------------------


def test_warm_start_only_on_the_same_samples(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(kernel=laplacian_kernel, warm_start=True).fit(X, Y)
    assert model.n_iter_ > 1
    model.fit(X, Y)
    assert model.n_iter_ == 1  # started at the solution
    # other samples, as many: the core would take the old coefficients as a start; a cold fit instead
    X2 = X[::-1].copy() + 0.5
    cold = StructuredRidge(kernel=laplacian_kernel).fit(X2, Y)
    model.fit(X2, Y)
    assert model.n_iter_ == cold.n_iter_
    assert_allclose(model.decision_function(X), cold.decision_function(X), rtol=1e-12, atol=1e-12)
    # Nyström: warm when the landmarks (and map) are the same
    ny = StructuredRidge(kernel=laplacian_kernel, n_components=30, random_state=0, solver="cg", warm_start=True)
    ny.fit(X, Y)
    ny.fit(X, Y)
    assert ny.n_iter_ == 1


def test_prediction_in_blocks(multilabel_data, monkeypatch):
    X, Y, Xt, _ = multilabel_data
    exact = StructuredRidge(kernel=recording_kernel).fit(X, Y)
    nystrom = StructuredRidge(kernel=recording_kernel, n_components=25, random_state=0).fit(X, Y)
    expected = [(m.decision_function(Xt), m.predict(Xt)) for m in (exact, nystrom)]
    monkeypatch.setattr(ridge_module, "_BLOCK_VALUES", 7 * len(X))  # 7 rows of the exact model's blocks
    for model, (scores, pred) in zip((exact, nystrom), expected, strict=True):
        CALLS.clear()
        assert_allclose(model.decision_function(Xt), scores, rtol=1e-12, atol=1e-12)
        assert len(CALLS) > 1 and all(call[0][0] <= 56 for call in CALLS)
        assert_array_equal(model.predict(Xt), pred)
    # the symmetry check runs in blocks too
    with pytest.raises(ValueError, match=r"not symmetric: K\[0, 1\]"):
        StructuredRidge(kernel=asymmetric_kernel).fit(X, Y)


# -- pickling, clone, search -----------------------------------------------------------------------


@pytest.mark.parametrize("n_components", [None, 30])
def test_pickle_round_trip(multilabel_data, n_components):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(
        kernel=laplacian_kernel, kernel_params={"gamma": 0.3}, n_components=n_components, random_state=0
    ).fit(X, Y)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.kernel is laplacian_kernel
    assert restored.get_params()["kernel_params"] == {"gamma": 0.3}
    assert_array_equal(restored.predict(Xt), model.predict(Xt))
    assert_array_equal(restored.decision_function(Xt), model.decision_function(Xt))
    expected = model.decision_function(Xt)
    del model
    assert_array_equal(restored.decision_function(Xt), expected)


def test_unpicklable_callable_fails_to_pickle(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(kernel=lambda A, B: laplacian_kernel(A, B)).fit(X, Y)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(model)


def test_clone(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(kernel=laplacian_kernel, kernel_params={"gamma": 0.3}).fit(X, Y)
    copy = clone(model)
    assert copy.kernel is laplacian_kernel
    assert copy.kernel_params == {"gamma": 0.3} and copy.kernel_params is not model.kernel_params
    assert not hasattr(copy, "X_fit_") and not hasattr(copy, "_model")
    assert_array_equal(copy.fit(X, Y).decision_function(Xt), model.decision_function(Xt))


def test_grid_search_over_kernel_params(multiclass_data):
    X, y, Xt, _ = multiclass_data
    grid = {"kernel_params": [{"gamma": 0.01}, {"gamma": 0.3}, {"gamma": 30.0}], "alpha": [0.1, 1.0]}
    searches = {}
    for n_jobs in (1, 2):  # n_jobs=2: worker processes, which unpickle the kernel
        base = StructuredRidge(space="multiclass", kernel=laplacian_kernel)
        searches[n_jobs] = GridSearchCV(base, grid, cv=3, n_jobs=n_jobs).fit(X, y)
    one, two = searches[1], searches[2]
    assert one.best_params_ == two.best_params_
    assert_allclose(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"], rtol=1e-12)
    assert one.best_params_["kernel_params"] != {"gamma": 30.0}  # far too narrow: near-constant scores
    best = StructuredRidge(space="multiclass", kernel=laplacian_kernel, **one.best_params_).fit(X, y)
    assert_array_equal(one.predict(Xt), best.predict(Xt))
    assert_array_equal(two.predict(Xt), best.predict(Xt))
    assert one.best_score_ > 0.75


def test_tags():
    assert not get_tags(StructuredRidge(kernel=laplacian_kernel)).input_tags.pairwise


# -- scikit-learn's estimator checks -----------------------------------------------------------------

_CG_TOLERANCE = (
    "kernel models are solved by CG to a relative gradient of tol=1e-8, so a weighted fit and the fit on repeated "
    "rows agree to ~1e-8 while the check wants atol=1e-9; the configuration with tol=1e-12 passes it"
)


@parametrize_with_checks(
    [
        StructuredRidge(space="multiclass", kernel=NamedKernel(laplacian_kernel)),
        StructuredRidge(
            space="multiclass",
            kernel=NamedKernel(laplacian_with_default_gamma),
            kernel_params={"gamma": 0.2},
            tol=1e-12,
        ),
    ],
    expected_failed_checks=lambda est: (
        {"check_sample_weight_equivalence_on_dense_data": _CG_TOLERANCE} if est.tol > 1e-10 else {}
    ),
)
def test_sklearn_estimator_checks(estimator, check):
    # (several checks set n_components=1, so they also run the callable kernel's Nyström map)
    check(estimator)


def test_callable_kernel_outputs_are_budgeted_before_they_exist():
    """A callable kernel's matrices and outputs are checked against the memory budget before the
    kernel function is called or the output allocated (probe J: a 200,000-row decision_function
    returned 3.2 GB under a 300 MB budget; a 20,000-row fit reached 3.8 GB before the refusal;
    Nyström features of 200,000 rows were never checked)."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 3)), rng.integers(0, 2, size=(30, 4))
    calls = []

    def kernel(A, B):
        calls.append((A.shape[0], B.shape[0]))
        return rbf_kernel(A, B)

    exact = StructuredRidge(kernel=kernel).fit(X, Y)
    nystrom = StructuredRidge(kernel=kernel, n_components=10, random_state=0).fit(X, Y)
    many = np.zeros((2_000_000, 3))
    with combpred.config_context(max_memory=10**7):
        calls.clear()
        with pytest.raises(MemoryError, match=r"kernel matrix of kernel=\S*kernel: an output of shape \(3000, 3000\)"):
            StructuredRidge(kernel=kernel).fit(np.zeros((3000, 3)), np.zeros((3000, 4), dtype=int))
        assert calls == []  # refused before the user's function allocated it
        for model in (exact, nystrom):
            with pytest.raises(MemoryError, match=r"\(2000000, 4\)"):
                model.decision_function(many)
    tall = rng.normal(size=(100_000, 3))
    with combpred.config_context(max_memory=5 * 10**7):  # room for X, Y and a block of kernel rows
        with pytest.raises(
            MemoryError, match=r"Nyström features \(kernel=\S*kernel\): an output of shape \(100000, 200\)"
        ):
            StructuredRidge(kernel=kernel, n_components=200).fit(tall, np.zeros((100_000, 4), dtype=int))


@pytest.mark.parametrize("factor, accepted", [(0.5, True), (2.0, False)])
def test_callable_and_precomputed_kernels_share_the_cores_symmetry_tolerance(factor, accepted):
    """Python checks a callable kernel's matrix with the core's tolerance for precomputed ones, read
    from the schema (it was a copy of the core's 1e-8): both accept or both refuse."""
    from combpred import _schema

    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 3))
    Y = (X > 0).astype(int)
    skew = np.zeros((12, 12))
    skew[0, 1] = factor * _schema.query_default("symmetry_tol")  # K[0, 1] < 1: an absolute tolerance

    def skewed(A, B):
        K = 10.0 * np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
        return K + skew if A.shape == B.shape and np.array_equal(A, B) else K

    for kernel, inputs in ((skewed, X), ("precomputed", skewed(X, X))):
        model = StructuredRidge(kernel=kernel, alpha=1.0)
        if accepted:
            model.fit(inputs, Y)
        else:
            with pytest.raises(ValueError, match=r"not symmetric: K\[0, 1\]"):
                model.fit(inputs, Y)


def test_callable_nystrom_scores_of_a_row_do_not_depend_on_the_rows_scored_with_it():
    """The Nyström features of a callable kernel were K·P by NumPy, whose rounding changes with the
    number of rows: scoring rows one at a time differed from one call by 1.9e-15 (probe Q). The
    core's product sums every entry in one order."""
    from sklearn.metrics.pairwise import laplacian_kernel

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 6))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(300, 3)) > 0).astype(int)
    model = StructuredRidge(kernel=laplacian_kernel, n_components=80, random_state=0).fit(X, Y)
    Xq = rng.normal(size=(70, 6))
    whole = model.decision_function(Xq)
    assert np.array_equal(whole, np.vstack([model.decision_function(Xq[i : i + 1]) for i in range(len(Xq))]))
    assert np.array_equal(whole[:7], model.decision_function(Xq[:7]))


def test_a_random_state_is_drawn_from_once_per_fit():
    """A callable kernel's Nyström fit drew one seed for its landmarks and another for the core
    (the review of session 46): a RandomState advanced twice, where every other fit draws once.
    The landmarks and the core now share one draw, in fit and in partial_fit's first chunk."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (X > 0).astype(int)
    once = np.random.RandomState(0)
    once.randint(0, 2**63 - 1, dtype=np.int64)  # what one draw leaves
    expected = once.randint(1 << 30)
    for call in ("fit", "partial_fit"):
        state = np.random.RandomState(0)
        getattr(StructuredRidge(kernel=laplacian_kernel, n_components=20, random_state=state), call)(X, Y)
        assert state.randint(1 << 30) == expected, call


class _MutableRBF:
    """A kernel object whose state a user may change between fits."""

    def __init__(self, gamma: float):
        self.gamma = gamma

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return rbf_kernel(A, B, gamma=self.gamma)


@pytest.mark.parametrize("n_components", [None, 15])
def test_a_kernel_object_changed_after_the_fit_changes_neither_the_model_nor_the_next_fit(
    multilabel_data, n_components
):
    """The model kept a reference to the user's kernel object: k.gamma = 3 after the fit changed its
    scores, and the next fit took the old Nyström projection with the new kernel, a map of neither
    (0.11 from the fit of gamma = 3, probe DC). The model now keeps a copy; an unchanged object
    still continues partial_fit and warm starts."""
    X, Y = multilabel_data[0][:80], multilabel_data[1][:80]
    kernel = _MutableRBF(0.3)
    model = StructuredRidge(kernel=kernel, n_components=n_components, random_state=0, warm_start=True).fit(X, Y)
    before = model.decision_function(X)
    kernel.gamma = 3.0
    assert_array_equal(model.decision_function(X), before)  # fitted with gamma = 0.3, predicts with it
    model.fit(X, Y)
    fresh = StructuredRidge(kernel=_MutableRBF(3.0), n_components=n_components, random_state=0).fit(X, Y)
    assert_allclose(model.decision_function(X), fresh.decision_function(X), atol=1e-8)
    again = model.n_iter_
    model.fit(X, Y)  # the same object, unchanged: the warm start continues from the model
    assert model.n_iter_ <= max(1, again // 2), (again, model.n_iter_)
    if n_components is not None:
        chunks = StructuredRidge(kernel=kernel, n_components=n_components, random_state=0)
        chunks.partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])  # unchanged: accepted
        kernel.gamma = 1.0
        with pytest.raises(ValueError, match="kernel and kernel_params must stay those of the model"):
            chunks.partial_fit(X[40:], Y[40:])


def test_a_callable_kernel_pickled_before_its_state_was_kept_still_continues(multilabel_data):
    """Models pickled before the kernel object's state was kept (session 63) hold a _CallableKernel
    without ``state``: partial_fit and warm starts compare by the kernel itself, as they did (a
    function continues; an unpickled kernel object is another object, refused by name as before,
    where reading the missing state raised AttributeError)."""
    X, Y = multilabel_data[0][:60], multilabel_data[1][:60]
    objects = StructuredRidge(kernel=_MutableRBF(0.3), n_components=10, random_state=0).partial_fit(X[:30], Y[:30])
    del objects._callable.__dict__["state"]
    with pytest.raises(ValueError, match="kernel and kernel_params must stay those of the model"):
        pickle.loads(pickle.dumps(objects)).partial_fit(X[30:], Y[30:])
    chunks = StructuredRidge(kernel=rbf_kernel, n_components=10, random_state=0).partial_fit(X[:30], Y[:30])
    del chunks._callable.__dict__["state"]
    old = pickle.loads(pickle.dumps(chunks))
    old.partial_fit(X[30:], Y[30:])
    assert old.n_samples_seen_ == 60
    warm = StructuredRidge(kernel=rbf_kernel, n_components=10, random_state=0, warm_start=True).fit(X, Y)
    first = warm.n_iter_
    del warm._callable.__dict__["state"]
    warm.fit(X, Y)
    assert warm.n_iter_ <= max(1, first // 2)


def test_kernels_refusing_read_only_buffers_fit_and_predict():
    """sklearn's chi2_kernel (Cython) refuses read-only buffers: the model's frozen X_fit_ made
    every predict fail after a fit that succeeded, and a read-only X failed the fit (probe FL).
    The kernel gets writable arrays, and the model is SVC's on the same kernel matrix."""
    from sklearn.metrics.pairwise import chi2_kernel

    rng = np.random.default_rng(0)
    X, Y = rng.random((30, 5)), (rng.random((30, 4)) < 0.5).astype(int)
    X.flags.writeable = False
    model = StructuredRidge(kernel=chi2_kernel).fit(X, Y)
    assert not model.X_fit_.flags.writeable  # still frozen: the kernel got a copy
    Xw = X.copy()
    want = StructuredRidge(kernel="precomputed").fit(chi2_kernel(Xw, Xw), Y)
    np.testing.assert_allclose(
        model.decision_function(X[:7]), want.decision_function(chi2_kernel(Xw[:7], Xw)), rtol=1e-12, atol=1e-12
    )


def test_indefinite_kernels_are_refused_by_the_nystrom_map_and_by_cg():
    """A sigmoid kernel with n_components gave a map of 3 components on 100 rows and no word, and
    poly with coef0 < 0 ran CG one iteration and warned of a stall, where the exact kernel model
    refuses both kernels as not positive semi-definite (probe FL)."""
    from sklearn.metrics.pairwise import sigmoid_kernel

    rng = np.random.default_rng(11)
    X, Y = rng.normal(size=(100, 3)), (rng.random((100, 4)) < 0.5).astype(int)
    sigmoid = {"kernel": sigmoid_kernel, "kernel_params": {"gamma": 0.5, "coef0": 1.0}}
    with pytest.raises(ValueError, match="not positive semi-definite on the landmarks"):
        StructuredRidge(**sigmoid, n_components=100, random_state=0).fit(X, Y)
    for kw in ({"n_components": 100, "random_state": 0}, {"solver": "auto"}, {"solver": "cg"}):
        with pytest.raises(ValueError, match="not positive semi-definite"):
            StructuredRidge(kernel="poly", degree=10, coef0=-0.5, gamma=0.3, **kw).fit(X[:30], Y[:30])
    # SGD on poly formed no kernel matrix and fitted one that is slightly indefinite (probe FO)
    Xp = rng.normal(size=(100, 4)) * 0.5 + [1, 0.5, 0, 0]
    yp = np.argmax(Xp[:, :3] + rng.normal(size=(100, 3)), axis=1)
    poly = {"kernel": "poly", "degree": 1, "gamma": 1.0, "coef0": -0.0093, "fit_intercept": False, "alpha": 10}
    with pytest.raises(ValueError, match="not positive semi-definite"):
        StructuredRidge(space="multiclass", solver="sgd", **poly).fit(Xp, yp)
    # a positive semi-definite kernel's map is not refused, down to its finite rank
    assert (
        StructuredRidge(kernel="poly", degree=3, coef0=1.0, n_components=100, random_state=0).fit(X, Y).n_components_
        == 20
    )
