"""Bad input gets a clear ValueError/TypeError naming the problem, never a crash or a hang.

Also the C ABI itself: NULL pointers, negative sizes, freed and foreign handles, corrupt model bytes.
"""

from __future__ import annotations

import ctypes
import pickle
import re

import _abi
import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _capi, _core, decision, metrics, spaces
from combpred._core import RidgeModel as _Model
from numpy.testing import assert_allclose, assert_array_equal
from scipy import sparse
from sklearn.exceptions import NotFittedError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 6))
    Y = (X[:, :3] > 0).astype(np.int64)
    y = np.argmax(X[:, :3], axis=1)
    return X, Y, y


@pytest.fixture(scope="module")
def fitted(data):
    X, Y, y = data
    return StructuredRidge().fit(X, Y), StructuredRidge(space="multiclass", kernel="rbf").fit(X, y)


def _with(a: np.ndarray, index, value) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a[index] = value
    return a


# -- X and Y contents -------------------------------------------------------------------------------


@pytest.mark.parametrize("value, word", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")])
def test_non_finite_X_at_fit(data, value, word):
    X, Y, y = data
    with pytest.raises(ValueError, match=word):
        StructuredRidge().fit(_with(X, (3, 2), value), Y)
    with pytest.raises(ValueError, match=word):
        StructuredRidge(space="multiclass", kernel="rbf").fit(_with(X, (0, 0), value), y)


@pytest.mark.parametrize("value, word", [(np.nan, "NaN"), (np.inf, "infinity")])
@pytest.mark.parametrize("method", ["predict", "decision_function"])
def test_non_finite_X_at_predict(data, fitted, value, word, method):
    X, _, _ = data
    for model in fitted:
        with pytest.raises(ValueError, match=word):
            getattr(model, method)(_with(X, (5, 1), value))
        # the same through the non-contiguous (validated) path
        with pytest.raises(ValueError, match=word):
            getattr(model, method)(np.asfortranarray(_with(X, (5, 1), value)))


def test_non_finite_X_reaching_the_core_is_named(fitted, data):
    """The core checks finiteness itself (naming the entry), whatever Python lets through."""
    X, _, _ = data
    model = fitted[0]
    bad = _with(X, (7, 4), np.nan)
    out = np.empty((len(X), 3))
    status = _capi.lib().cp_ridge_decision(model._model.value, _abi.f64(bad), *bad.shape, _abi.f64(out), 3)
    with pytest.raises(ValueError, match=r"X\[7, 4\] = NaN"):
        _capi.check(status)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_Y(data, value):
    X, Y, y = data
    with pytest.raises(ValueError, match="NaN|infinity"):
        StructuredRidge().fit(X, _with(Y, (4, 1), value))
    # a NaN class label is a missing one, named with its row (probe DL)
    label = r"^y holds a missing class label \(nan\) at row 4" if np.isnan(value) else "NaN|infinity"
    with pytest.raises(ValueError, match=label):
        StructuredRidge(space="multiclass").fit(X, _with(y, 4, value))
    with pytest.raises(ValueError, match="NaN|infinity"):  # a Multiclass object's ids are structures
        StructuredRidge(space=spaces.Multiclass(3)).fit(X, _with(y, 4, value))


def test_fractional_Y(data):
    X, Y, _ = data
    with pytest.raises(ValueError, match="continuous"):
        StructuredRidge().fit(X, Y * 0.5)
    with pytest.raises(ValueError, match="fractional"):
        StructuredRidge(space=spaces.Multiclass(3)).fit(X, np.full(len(X), 1.5))


def test_wrong_ndim(data, fitted):
    X, Y, y = data
    with pytest.raises(ValueError, match="2D array"):
        StructuredRidge().fit(X[:, 0], Y)
    with pytest.raises(ValueError, match="dim 3"):
        StructuredRidge().fit(X[:, :, None], Y)
    with pytest.raises(ValueError, match=r"2-D.*shape \(40,\)"):
        StructuredRidge().fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="dim 3"):
        StructuredRidge().fit(X, Y[:, :, None])
    with pytest.raises(ValueError, match="1d array|1-D"):
        StructuredRidge(space="multiclass").fit(X, Y)
    with pytest.raises(ValueError, match="2D array"):
        fitted[0].predict(X[0])


def test_mismatched_lengths(data):
    X, Y, y = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        StructuredRidge().fit(X[:-1], Y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        StructuredRidge(space="multiclass").fit(X, y[:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        StructuredRidge(space=spaces.Multilabel(3)).fit(X[:-2], Y)
    with pytest.raises(ValueError, match="sample_weight"):
        StructuredRidge().fit(X, Y, sample_weight=np.ones(len(X) - 1))


def test_zero_samples_or_features(data, fitted):
    X, Y, _ = data
    with pytest.raises(ValueError, match="0 sample"):
        StructuredRidge().fit(X[:0], Y[:0])
    with pytest.raises(ValueError, match="0 feature"):
        StructuredRidge().fit(X[:, :0], Y)
    with pytest.raises(ValueError, match="0 sample"):
        fitted[0].predict(X[:0])


def test_labels_outside_the_space(data):
    X, Y, y = data
    Y2 = Y.copy()
    Y2[7, 1] = 2
    with pytest.raises(ValueError, match=r"row 7: label 1 has value 2"):
        StructuredRidge().fit(X, Y2)
    Y2[7, 1] = -1
    with pytest.raises(ValueError, match=r"row 7"):
        StructuredRidge().fit(X, Y2)
    y3 = y.copy()
    y3[5] = 3
    with pytest.raises(ValueError, match=r"row 5: class 3 is outside \[0, 3\)"):
        StructuredRidge(space=spaces.Multiclass(3)).fit(X, y3)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 5\)"):
        StructuredRidge(space=spaces.Multilabel(5)).fit(X, Y)
    with pytest.raises(TypeError, match="integers"):
        StructuredRidge(space=spaces.Multiclass(3)).fit(X, np.array(["a", "b", "c"] * 13 + ["a"]))


def test_single_class(data):
    X, _, _ = data
    with pytest.raises(ValueError, match="only one class"):
        StructuredRidge(space="multiclass").fit(X, np.ones(len(X)))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_other_dtypes_are_converted(data, dtype):
    X, Y, y = data
    Xd = (X * 3).astype(dtype)
    X64 = Xd.astype(np.float64)
    for kw, T in [({}, Y), ({"space": "multiclass", "kernel": "rbf"}, y)]:
        a = StructuredRidge(**kw).fit(Xd, T)
        b = StructuredRidge(**kw).fit(X64, T)
        assert_array_equal(a.predict(Xd), b.predict(X64))
        assert_allclose(a.decision_function(Xd), b.decision_function(X64), rtol=1e-12, atol=1e-12)


def test_non_contiguous_X_is_converted(data):
    X, Y, y = data
    Xbig = np.random.default_rng(12).normal(size=(40, 12))
    strided = Xbig[:, ::2]
    assert not strided.flags.c_contiguous
    fortran = np.asfortranarray(X)
    for kw, T in [({}, Y), ({"space": "multiclass", "kernel": "rbf"}, y)]:
        a = StructuredRidge(**kw).fit(strided, T)
        b = StructuredRidge(**kw).fit(np.ascontiguousarray(strided), T)
        assert_allclose(a.decision_function(strided), b.decision_function(np.ascontiguousarray(strided)), rtol=1e-12)
        c = StructuredRidge(**kw).fit(fortran, T)
        d = StructuredRidge(**kw).fit(X, T)
        assert_allclose(c.decision_function(fortran), d.decision_function(X), rtol=1e-12)
        assert_array_equal(c.predict(fortran), d.predict(X))
        # a reversed (negative-stride) view at predict time
        assert_array_equal(d.predict(X[::-1]), d.predict(X)[::-1])


def test_lists_are_accepted(data):
    X, Y, _ = data
    a = StructuredRidge().fit(X.tolist(), Y.tolist())
    b = StructuredRidge().fit(X, Y)
    assert_array_equal(a.predict(X.tolist()), b.predict(X))


# -- parameters -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, match",
    [
        ({"alpha": -1.0}, "alpha"),
        ({"alpha": 0.0}, "alpha"),
        # subnormal: linear CG on X near 1e-155 at alpha 1e-310 fitted an intercept-only model (probe DJ)
        ({"alpha": 1e-310}, r"alpha.*range \[2.2250738585072014e-308"),
        ({"alpha": 5e-324}, "alpha"),
        ({"kernel": "sigmoid"}, "kernel"),
        ({"space": "rankings"}, "space"),
        ({"gamma": -0.5}, "gamma"),
        ({"degree": 0}, "degree"),
        ({"solver": "lbfgs"}, "solver"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_bad_parameters(data, params, match):
    X, Y, _ = data
    with pytest.raises(ValueError, match=match):
        StructuredRidge(**params).fit(X, Y)
    if "alpha" in params:
        with pytest.raises(ValueError, match=match):
            ProbabilisticStructured(**params).fit(X, Y)


def test_bad_sample_weight(data):
    X, Y, _ = data
    with pytest.raises(ValueError, match=r"sample_weight\[0\] = -1"):
        StructuredRidge().fit(X, Y, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="NaN"):
        StructuredRidge().fit(X, Y, sample_weight=np.full(len(X), np.nan))
    with pytest.raises(ValueError, match="non-zero"):
        StructuredRidge().fit(X, Y, sample_weight=np.zeros(len(X)))


@pytest.mark.parametrize(
    "params", [{"kernel": "rbf"}, {"kernel": "rbf", "solver": "cg"}, {"solver": "cg"}, {"solver": "exact"}]
)
def test_tiny_sample_weights(data, params):
    """Weights of 1e-300 fit as unit weights with alpha·1e300 do (an rbf fit was refused as an
    indefinite kernel); subnormal ones are refused naming them (a linear CG fit at 5e-324 returned
    W = 0 with the intercept unfitted and no warning)."""
    X, Y, _ = data
    tiny = StructuredRidge(**params, alpha=1.0).fit(X, Y, sample_weight=np.full(len(X), 1e-300))
    unit = StructuredRidge(**params, alpha=1e300).fit(X, Y)
    np.testing.assert_allclose(tiny.decision_function(X), unit.decision_function(X), rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match=r"sample_weight's largest value is 4.94e-324, a subnormal number"):
        StructuredRidge(**params).fit(X, Y, sample_weight=np.full(len(X), 5e-324))


def test_precomputed_kernel_shape_and_symmetry(data):
    X, Y, _ = data
    with pytest.raises(ValueError, match="square"):
        StructuredRidge(kernel="precomputed").fit(X, Y)
    K = np.random.default_rng(13).normal(size=(len(X), len(X)))
    with pytest.raises(ValueError, match="not symmetric"):
        StructuredRidge(kernel="precomputed").fit(K, Y)


def test_predict_before_fit(data):
    X, _, _ = data
    for method in ("predict", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(StructuredRidge(), method)(X)
    with pytest.raises(NotFittedError):
        StructuredRidge().score(X, X[:, :3] > 0)


def test_wrong_number_of_features_at_predict(data, fitted):
    X, _, _ = data
    for model in fitted:
        for Xq in (X[:, :4], np.ascontiguousarray(X[:, :4]), np.c_[X, X]):
            with pytest.raises(ValueError, match=f"{Xq.shape[1]} features.*expecting 6"):
                model.predict(Xq)
            with pytest.raises(ValueError, match=f"{Xq.shape[1]} features.*expecting 6"):
                model.decision_function(Xq)


# -- handles at the C ABI ---------------------------------------------------------------------------


def _decision_status(handle: int, X: np.ndarray, d: int) -> int:
    out = np.empty((X.shape[0], d))
    return _capi.lib().cp_ridge_decision(handle, _abi.f64(X), X.shape[0], X.shape[1], _abi.f64(out), d)


def test_freed_model_handle(data):
    X, Y, _ = data
    model = StructuredRidge().fit(X, Y)
    handle = model._model.value
    _capi.check(_capi.lib().cp_ridge_free(handle))
    with pytest.raises(ValueError, match="invalid or already freed"):
        _capi.check(_decision_status(handle, X, 3))
    out = np.empty((len(X), 3), dtype=np.int64)
    with pytest.raises(ValueError, match="invalid or already freed"):
        _capi.check(_capi.lib().cp_ridge_predict(handle, _abi.f64(X), *X.shape, _abi.i64(out), 3))
    with pytest.raises(ValueError, match="invalid or already freed"):
        _capi.check(_capi.lib().cp_ridge_free(handle))
    # and through the estimator: an error, not a crash
    with pytest.raises(ValueError, match="invalid or already freed"):
        model.predict(X)
    with pytest.raises(ValueError, match="invalid or already freed"):
        pickle.dumps(model)
    del model  # __del__ frees again: the error status is ignored


@pytest.mark.parametrize("handle", [0, -1, 2**62])
def test_never_issued_handles(data, handle):
    X, _, _ = data
    with pytest.raises(ValueError, match="invalid or already freed"):
        _capi.check(_decision_status(handle, X, 3))
    with pytest.raises(ValueError, match="invalid or already freed"):
        _capi.check(_capi.lib().cp_space_mean(handle, _abi.f64(np.empty(3)), 3))


def test_handle_of_the_wrong_kind(data, fitted):
    X, _, _ = data
    space = spaces.Multilabel(3)
    space_handle = space._h()
    model_handle = fitted[0]._model.value
    # The C ABI returns status 2 (TypeError) for a wrong kind of handle, naming it.
    with pytest.raises(TypeError, match="not a model handle"):
        _capi.check(_decision_status(space_handle, X, 3))
    with pytest.raises(TypeError, match="not a model handle"):
        _capi.check(_capi.lib().cp_ridge_free(space_handle))
    with pytest.raises(TypeError, match="not a space handle"):
        _capi.check(_capi.lib().cp_space_mean(model_handle, _abi.f64(np.empty(3)), 3))
    with pytest.raises(TypeError, match="not a space handle"):
        _capi.check(_capi.lib().cp_space_free(model_handle))
    # neither handle was harmed
    assert_array_equal(space.mean(), [0.5, 0.5, 0.5])
    assert fitted[0].predict(X).shape == (len(X), 3)


# -- NULL pointers and sizes at the C ABI ------------------------------------------------------------


def test_null_pointers_with_nonzero_sizes(data, fitted):
    X, Y, _ = data
    lib = _capi.lib()
    h = fitted[0]._model.value
    out = np.empty((len(X), 3))
    iout = np.empty((len(X), 3), dtype=np.int64)
    space = spaces.Multilabel(3)
    sh = space._h()
    rows = np.ascontiguousarray(Y)
    cases = [
        (lambda: lib.cp_ridge_decision(h, None, len(X), 6, _abi.f64(out), 3), "X is a NULL pointer"),
        (lambda: lib.cp_ridge_decision(h, _abi.f64(X), len(X), 6, None, 3), "NULL pointer"),
        (lambda: lib.cp_ridge_predict(h, None, len(X), 6, _abi.i64(iout), 3), "X is a NULL pointer"),
        (lambda: lib.cp_ridge_predict(h, _abi.f64(X), len(X), 6, None, 3), "NULL pointer"),
        (lambda: lib.cp_ridge_coef(h, None, 6, 3, None), "NULL pointer"),
        (lambda: lib.cp_ridge_to_bytes(h, None, 10**6, None), "NULL pointer"),
        (lambda: lib.cp_ridge_from_bytes(None, 100, _capi.out_i64()), "NULL pointer"),
        (lambda: lib.cp_ridge_from_bytes((ctypes.c_uint8 * 4)(), 4, None), "NULL pointer"),
        (lambda: lib.cp_ridge_info(h, None, 10, None), "NULL"),
        (lambda: lib.cp_ridge_space(h, None), "NULL pointer"),
        (lambda: lib.cp_gemm_flops(None), "NULL pointer"),
        (lambda: lib.cp_space_new(None, None, 0, _capi.out_i64()), "NULL pointer"),
        (lambda: lib.cp_space_new(b"multilabel", None, 1, _capi.out_i64()), "NULL pointer"),
        (lambda: lib.cp_space_new(b"multilabel", _abi.i64(np.array([3])), 1, None), "NULL pointer"),
        (lambda: lib.cp_space_info(sh, None, 10, None), "NULL"),
        (lambda: lib.cp_space_mean(sh, None, 3), "NULL pointer"),
        (lambda: lib.cp_space_covariance(sh, None, 3), "NULL pointer"),
        (lambda: lib.cp_space_cov_mul(sh, None, _abi.f64(np.empty(3)), 3), "NULL pointer"),
        (lambda: lib.cp_space_validate(sh, None, 5, 3, 0, None), "NULL pointer"),
        (lambda: lib.cp_space_embed(sh, None, 5, 3, _abi.f64(out), 3), "NULL pointer"),
        (lambda: lib.cp_space_embed(sh, _abi.i64(rows), 5, 3, None, 3), "NULL pointer"),
        (lambda: lib.cp_space_sample(sh, 5, 1, None, 3), "NULL pointer"),
        (lambda: lib.cp_space_decode(sh, None, 5, 3, _abi.i64(iout), 3), "NULL pointer"),
        (lambda: lib.cp_space_decode(sh, _abi.f64(out), 5, 3, None, 3), "NULL pointer"),
        (lambda: lib.cp_space_enumerate(sh, None, 8, 3, _capi.out_i64()), "NULL pointer"),
        (lambda: lib.cp_space_enumerate(sh, None, 0, 3, None), "NULL pointer"),
        (
            lambda: lib.cp_ridge_fit(
                sh, None, len(X), 6, _abi.i64(rows), 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "X is a NULL pointer",
        ),
        (
            lambda: lib.cp_ridge_fit(
                sh, _abi.f64(X), len(X), 6, None, 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "Y is a NULL pointer",
        ),
        (
            lambda: lib.cp_ridge_fit(
                sh, _abi.f64(X), len(X), 6, _abi.i64(rows), 3, None, b"", 0, _capi.PROGRESS(), None, None
            ),
            "NULL pointer",
        ),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())


def test_negative_and_mismatched_sizes(data, fitted):
    X, Y, _ = data
    lib = _capi.lib()
    h = fitted[0]._model.value
    out = np.empty((len(X), 3))
    space = spaces.Multilabel(3)  # keeps the handle alive
    sh = space._h()
    rows = np.ascontiguousarray(Y)
    cases = [
        (lambda: lib.cp_ridge_decision(h, _abi.f64(X), -1, 6, _abi.f64(out), 3), "negative"),
        (lambda: lib.cp_ridge_decision(h, _abi.f64(X), len(X), -6, _abi.f64(out), 3), "negative"),
        (lambda: lib.cp_ridge_decision(h, _abi.f64(X), len(X), 6, _abi.f64(out), 4), "columns"),
        (lambda: lib.cp_ridge_decision(h, _abi.f64(X), 2**40, 2**40, _abi.f64(out), 3), "too large"),
        (lambda: lib.cp_ridge_from_bytes((ctypes.c_uint8 * 4)(), -4, _capi.out_i64()), "bad length"),
        (lambda: lib.cp_ridge_coef(h, _abi.f64(out), 5, 3, None), "coef output"),
        (lambda: lib.cp_space_new(b"multilabel", None, -1, _capi.out_i64()), "negative"),
        (lambda: lib.cp_space_new(b"no-such-space", _abi.i64(np.array([3])), 1, _capi.out_i64()), "no-such-space"),
        (lambda: lib.cp_space_validate(sh, _abi.i64(rows), -5, 3, 0, None), "negative"),
        (lambda: lib.cp_space_validate(sh, _abi.i64(rows), 5, 4, 0, None), "columns"),
        (lambda: lib.cp_space_mean(sh, _abi.f64(out), 4), "dimension"),
        (lambda: lib.cp_space_sample(sh, -5, 1, _abi.i64(rows), 3), "negative"),
        (lambda: lib.cp_space_enumerate(sh, _abi.i64(rows), -1, 3, _capi.out_i64()), "negative"),
        (lambda: lib.cp_set_threads(0), "n_jobs=0"),
        (lambda: lib.cp_get_threads(None), "threads"),
        (lambda: lib.cp_ridge_check_partial_fit(b"kernel=precomputed"), "precomputed"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"", 7, 0, 1.0), "estimate code 7"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"", 0, -1, 1.0), "scale code -1"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"", 1, 0, 1.0), "noise_free is the linear estimate's"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"", 0, 1, float("nan")), "positive"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"", 0, 1, 5e-324), "smallest normal"),
        (lambda: lib.cp_ridge_check_marginals(sh, b"alpha=-1", 1, 1, 1.0), "alpha"),
        (lambda: lib.cp_ridge_check_marginals(0, b"", 1, 1, 1.0), "space"),
        (
            lambda: lib.cp_ridge_fit(
                sh, _abi.f64(X), -3, 6, _abi.i64(rows), 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "negative",
        ),
        (
            lambda: lib.cp_ridge_fit(
                sh,
                _abi.f64(X),
                len(X),
                6,
                _abi.i64(rows),
                3,
                None,
                b"alpha=-1",
                0,
                _capi.PROGRESS(),
                None,
                _capi.out_i64(),
            ),
            "alpha",
        ),
        (
            lambda: lib.cp_ridge_fit(
                sh,
                _abi.f64(X),
                len(X),
                6,
                _abi.i64(rows),
                3,
                None,
                b"colour=red",
                0,
                _capi.PROGRESS(),
                None,
                _capi.out_i64(),
            ),
            "unknown parameter",
        ),
        (
            lambda: lib.cp_ridge_fit(
                sh, _abi.f64(X), 0, 6, None, 3, None, b"", 0, _capi.PROGRESS(), None, _capi.out_i64()
            ),
            "at least one sample",
        ),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())


def test_sparse_y_calls_refuse_bad_ones(data):
    """cp_ridge_fit_sparse_y and its _csr twin check the positions of the ones they are given."""
    X, Y, _ = data
    lib = _capi.lib()
    space, perm = spaces.Multilabel(3), spaces.Permutations(3)  # keep the handles alive
    sh, ph = space._h(), perm._h()
    m = len(X)
    ptr = np.arange(m + 1, dtype=np.int64)
    ind = np.zeros(m, dtype=np.int64)
    csr = _capi.Csr(sparse.csr_matrix(X))

    def fit(h, indptr, nnz, indices, values=None):
        return lib.cp_ridge_fit_sparse_y(
            h,
            _abi.f64(X),
            m,
            6,
            indptr,
            nnz,
            indices,
            values,
            None,
            b"solver=cg",
            0,
            _capi.PROGRESS(),
            None,
            _capi.out_i64(),
        )

    def fit_csr(h, indptr, nnz, indices, values=None):
        return lib.cp_ridge_fit_csr_sparse_y(
            h, *csr.args, indptr, nnz, indices, values, None, b"solver=cg", 0, _capi.PROGRESS(), None, _capi.out_i64()
        )

    for call in (fit, fit_csr):
        cases = [
            ((sh, None, m, _abi.i64(ind)), "indptr is a NULL pointer"),
            ((sh, _abi.i64(ptr), m, None), "indices is a NULL pointer"),
            ((sh, _abi.i64(ptr), -1, _abi.i64(ind)), "negative"),
            ((sh, _abi.i64(ptr), m, _abi.i64(ind + 3)), "out of range"),
            ((sh, _abi.i64(ptr[::-1].copy()), m, _abi.i64(ind)), "row pointers"),
            ((ph, _abi.i64(ptr), m, _abi.i64(ind)), "multilabel"),
            # the values stored at the positions: Go checks they are ones
            (
                (sh, _abi.i64(ptr), m, _abi.i64(ind), _abi.f64(np.r_[np.ones(m - 1), 2.0])),
                f"y: row {m - 1}: label 0 has value 2, want 0 or 1",
            ),
            (
                (sh, _abi.i64(ptr), m, _abi.i64(ind), _abi.f64(np.r_[0.0, np.ones(m - 1)])),
                "y: row 0: label 0 is stored as 0",
            ),
        ]
        for args, match in cases:
            with pytest.raises(ValueError, match=match):
                _capi.check(call(*args))
        _capi.check(call(sh, _abi.i64(ptr), m, _abi.i64(ind)))  # the same arguments, valid


def test_zero_sizes_with_null_pointers_are_fine(fitted):
    """An empty array may come as NULL: zero rows are not an error at the ABI."""
    lib = _capi.lib()
    h = fitted[0]._model.value
    _capi.check(lib.cp_ridge_decision(h, None, 0, 6, None, 3))
    space = spaces.Multilabel(3)
    _capi.check(lib.cp_space_validate(space._h(), None, 0, 3, 0, None))


# -- model bytes (pickling) -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_bytes(fitted):
    return fitted[0]._model.to_bytes()


def test_every_flipped_byte_is_detected(model_bytes):
    data = bytearray(model_bytes)
    for i in range(len(data)):
        for bit in (0x01, 0x80):
            data[i] ^= bit
            with pytest.raises(ValueError, match="corrupt"):
                _Model.from_bytes(bytes(data))
            data[i] ^= bit
    assert _Model.from_bytes(bytes(data)).value > 0  # restored bytes load again


def test_every_truncation_is_detected(model_bytes):
    for n in range(len(model_bytes)):
        with pytest.raises(ValueError, match="corrupt"):
            _Model.from_bytes(model_bytes[:n])
    with pytest.raises(ValueError, match="corrupt"):
        _Model.from_bytes(model_bytes + b"\x00")


def test_corrupt_pickle_of_the_estimator(data, fitted):
    X, _, _ = data
    for model in fitted:
        blob = pickle.dumps(model)
        start = blob.index(b"CPRM")  # the model bytes are stored verbatim inside the pickle
        corrupt = bytearray(blob)
        corrupt[start + 40] ^= 0xFF
        with pytest.raises(ValueError, match="corrupt"):
            pickle.loads(bytes(corrupt))
        restored = pickle.loads(blob)
        assert_array_equal(restored.predict(X), model.predict(X))


def test_bad_state_in_setstate(fitted, model_bytes):
    state = fitted[0].__getstate__()
    for bad, exc, match in [
        ("not bytes", TypeError, "must be bytes"),
        (12345, TypeError, "must be bytes"),
        (b"", ValueError, "corrupt"),
        (model_bytes[: len(model_bytes) // 2], ValueError, "corrupt"),
        (b"CPRM" + b"\xff" * 200, ValueError, "corrupt"),
    ]:
        broken = dict(state, _model_bytes=bad)
        with pytest.raises(exc, match=match):
            StructuredRidge().__setstate__(broken)


def test_nystrom_calls_refuse_bad_arguments():
    """cp_nystrom_landmarks, cp_nystrom_projection and cp_nystrom_features (the core's half of a
    callable kernel's Nyström map) name what is wrong, never crash."""
    lib = _capi.lib()
    idx, n = np.empty(4, dtype=np.int64), _capi.out_i64()
    K, P, c = np.eye(3), np.empty((3, 3)), _capi.out_i64()
    bad = np.eye(3)
    bad[1, 2] = np.nan
    cases = [
        (lambda: lib.cp_nystrom_landmarks(0, 4, 1, _abi.i64(idx), 4, n), "n_samples"),
        (lambda: lib.cp_nystrom_landmarks(10, 0, 1, _abi.i64(idx), 4, n), "n_components"),
        (lambda: lib.cp_nystrom_landmarks(10, 5, 1, _abi.i64(idx), 4, n), "holds 4 entries"),
        (lambda: lib.cp_nystrom_landmarks(10, 4, 1, None, 4, n), "NULL"),
        (lambda: lib.cp_nystrom_landmarks(10, 4, 1, _abi.i64(idx), 4, None), "NULL"),
        (lambda: lib.cp_nystrom_projection(_abi.f64(K), 0, _abi.f64(P), c), "at least 1"),
        (lambda: lib.cp_nystrom_projection(None, 3, _abi.f64(P), c), "NULL"),
        (lambda: lib.cp_nystrom_projection(_abi.f64(bad), 3, _abi.f64(P), c), "kernel matrix"),
        (lambda: lib.cp_nystrom_projection(_abi.f64(-K), 3, _abi.f64(P), c), "positive finite diagonal entry"),
        (lambda: lib.cp_nystrom_projection(_abi.f64(K), 2**40, _abi.f64(P), c), "too large"),
        (lambda: lib.cp_nystrom_features(_abi.f64(K), -1, 3, _abi.f64(P), 3, _abi.f64(P)), "shapes"),
        (lambda: lib.cp_nystrom_features(_abi.f64(K), 3, 0, _abi.f64(P), 3, _abi.f64(P)), "shapes"),
        (lambda: lib.cp_nystrom_features(None, 3, 3, _abi.f64(P), 3, _abi.f64(P)), "kernel rows is a NULL"),
        (lambda: lib.cp_nystrom_features(_abi.f64(K), 3, 3, None, 3, _abi.f64(P)), "projection is a NULL"),
        (lambda: lib.cp_nystrom_features(_abi.f64(K), 3, 3, _abi.f64(P), 3, None), "output is a NULL"),
        (
            lambda: lib.cp_nystrom_features(_abi.f64(bad), 3, 3, _abi.f64(P), 3, _abi.f64(np.empty((3, 3)))),
            "kernel rows",
        ),
        (
            lambda: lib.cp_nystrom_features(_abi.f64(K), 3, 3, _abi.f64(P), 3, _abi.f64(P)),
            "shares memory with projection",
        ),
        (lambda: lib.cp_nystrom_features(_abi.f64(K), 2**40, 2**40, _abi.f64(P), 3, _abi.f64(P)), "too large"),
    ]
    for call, words in cases:
        with pytest.raises((ValueError, MemoryError), match=words):
            _capi.check(call())
    _capi.check(lib.cp_nystrom_landmarks(10, 4, 7, _abi.i64(idx), 4, n))
    assert n.value == 4 and np.all(np.diff(idx) > 0) and idx.min() >= 0 and idx.max() < 10
    _capi.check(lib.cp_nystrom_projection(_abi.f64(4 * K), 3, _abi.f64(P), c))
    proj = P.reshape(-1)[: 3 * c.value].reshape(3, c.value)
    assert_allclose(proj @ proj.T, np.linalg.inv(4 * K), atol=1e-12)  # P Pᵀ = K⁻¹: φ(x)ᵀφ(x') = K_xL K⁻¹ K_Lx'
    rows, features = np.arange(12.0).reshape(4, 3), np.empty((4, c.value))
    _capi.check(
        lib.cp_nystrom_features(_abi.f64(rows), 4, 3, _abi.f64(np.ascontiguousarray(proj)), c.value, _abi.f64(features))
    )
    assert_allclose(features, rows @ proj, rtol=1e-14)


def test_distributed_cg_calls_refuse_bad_arguments(data):
    """The calls of distributed CG (cp_ridge_cg_setup and cp_ridge_cg_product per partition,
    cp_ridge_fit_cg_sums with a callback adding the products up, cp_ridge_distributed_solver)
    refuse bad shapes, NULL pointers and failing callbacks with the reason; an exception in the
    callback is raised as itself."""
    X, Y, _ = data
    lib = _capi.lib()
    space = spaces.Multilabel(3)
    sh = space._h()
    q = len(X)
    b, g, mm = np.empty((7, 3)), np.empty((7, 7)), np.empty((3, 3))
    V, out = np.zeros((7, 3)), np.empty((7, 3))
    weight, count = _capi.out_f64_cell(), _capi.out_i64()
    span = np.empty(2)
    P = b"solver=cg"

    def setup(x="X", n=6, y=None, params=P, ww=None, exponent=0, shape=b.shape, weight_range="span"):
        return lib.cp_ridge_cg_setup(
            sh,
            _abi.f64(X) if x == "X" else x,
            q,
            n,
            _abi.i64(Y) if y is None else y,
            3,
            ww,
            exponent,
            params,
            None,
            *shape,
            _abi.f64(b),
            _abi.f64(g),
            _abi.f64(mm),
            weight,
            count,
            _abi.f64(span) if weight_range == "span" else weight_range,
        )

    for call, match in [
        (lambda: setup(weight_range=None), "weight_range is a NULL"),
        (lambda: setup(x=None), "X is a NULL"),
        (lambda: setup(n=2**62), "at least one feature"),
        (lambda: setup(y=_abi.i64(2 * Y)), "want 0 or 1"),
        (lambda: setup(ww=_abi.f64(-np.ones(q))), "weights must be finite and non-negative"),
        (lambda: setup(params=b"solver=sgd"), "solver=cg"),
        (lambda: setup(params=b"empirical_weight=0.5"), "uniform reference"),
        (lambda: setup(exponent=2201), r"weight_exponent must be in \[-2200, 2200\], got 2201"),
        (lambda: setup(exponent=-(2**63)), "weight_exponent must be in"),
        # buffers of another shape than X's n gives them: a Dask block wider than its array
        # declared had b and g written past their ends (probe CZ)
        (lambda: setup(n=5, params=b"solver=cg;fit_intercept=0"), r"b is 7×3, but X's 5 features need 5×3"),
        (lambda: setup(shape=(6, 3)), r"b is 6×3, but X's 6 features need 7×3"),
        (lambda: setup(shape=(7, 4)), r"b is 7×4, but X's 6 features need 7×3"),
        (
            lambda: lib.cp_ridge_cg_product(
                sh, _abi.f64(X), q, 6, _abi.i64(Y), 3, None, 0, P, None, 8, 3, _abi.f64(V), _abi.f64(out)
            ),
            r"v is 8×3, but X's 6 features need 7×3",
        ),
        (
            lambda: lib.cp_ridge_cg_product(
                sh, _abi.f64(X), q, 6, _abi.i64(Y), 3, None, 0, P, None, 7, 3, None, _abi.f64(out)
            ),
            "v is a NULL",
        ),
        (
            lambda: lib.cp_ridge_cg_product(
                sh, _abi.f64(X), q, 6, _abi.i64(Y), 3, None, 0, P, None, 7, 3, _abi.f64(V), None
            ),
            "out is a NULL",
        ),
        (
            lambda: lib.cp_ridge_cg_product(
                sh,
                _abi.f64(X),
                q,
                6,
                _abi.i64(Y),
                3,
                None,
                0,
                P,
                _abi.f64(np.array([0, np.nan, 0, 0, 0, 0.0])),
                7,
                3,
                _abi.f64(V),
                _abi.f64(out),
            ),
            "centre",
        ),
        (lambda: lib.cp_ridge_distributed_solver(sh, 0, P, _capi.out_i64(), _capi.out_i64()), "n_features"),
        (lambda: lib.cp_ridge_distributed_solver(sh, 6, P, None, _capi.out_i64()), "solver"),
        (lambda: lib.cp_ridge_distributed_solver(sh, 6, P, _capi.out_i64(), None), "rows"),
    ]:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())
    _capi.check(setup())
    assert weight.value == q and count.value == q and span.tolist() == [1.0, 1.0]
    _capi.check(setup(exponent=3))  # every weight counts as 2**-3
    assert weight.value == q / 8 and count.value == q
    # the rows of W (b's and g's buffers) come from the core, with and without the intercept
    for params, rows in [(P, 7), (b"solver=cg;fit_intercept=0", 6)]:
        assert _core.ridge_distributed_solver(space._handle(), 6, params) == ("cg", rows)
    # an empty part, and one that weighs nothing, add nothing (but count their rows)
    _capi.check(setup(ww=_abi.f64(np.zeros(q))))
    assert weight.value == 0 and count.value == q and not b.any() and not g.any()
    _capi.check(lib.cp_ridge_cg_product(sh, None, 0, 6, None, 3, None, 0, P, None, 7, 3, _abi.f64(V), _abi.f64(out)))
    assert not out.any()
    _capi.check(setup())

    def fit_with(callback, params=P, weight_sum=float(q), exponent=0, shape=b.shape):
        cb = _capi.PRODUCTS(callback) if callback is not None else ctypes.cast(None, _capi.PRODUCTS)
        return lib.cp_ridge_fit_cg_sums(
            sh,
            6,
            params,
            None,
            *shape,
            _abi.f64(b),
            _abi.f64(g),
            _abi.f64(mm),
            weight_sum,
            q,
            None,
            exponent,
            0,
            cb,
            _capi.PROGRESS(),
            None,
            _capi.out_i64(),
        )

    def zero(v, rows, d, out, _ctx):
        np.ctypeslib.as_array(out, shape=(rows, d))[...] = 0
        return 0

    for call, match in [
        (lambda: fit_with(None), "products callback is a NULL"),
        (lambda: fit_with(lambda *args: 9), "products callback failed \\(status 9\\)"),
        (lambda: fit_with(zero, weight_sum=0.0), "positive finite sum"),
        (lambda: fit_with(zero, params=b"solver=exact"), "solver=cg"),
        (lambda: fit_with(zero, exponent=-2201), "weight_exponent must be in"),
        (lambda: fit_with(zero, exponent=1100), r"weights sum to \+Inf"),  # q·2**1100 at their own scale
        # sums of another fit_intercept than params say: b and g were read past their ends (probe DA)
        (lambda: fit_with(zero, params=b"solver=cg;fit_intercept=0"), r"b is 7×3, but X's 6 features need 6×3"),
        (lambda: fit_with(zero, shape=(7, 2)), r"b is 7×2, but X's 6 features need 7×3"),
    ]:
        with pytest.raises(ValueError, match=match):
            _capi.check(call())

    def raising(V):
        raise ZeroDivisionError("from a worker")

    setup_sums = (b, g, mm, float(q), q, np.ones(2))
    call = _Model.fit_cg_sums_call(space._handle(), 6, P, setup_sums, None, raising)
    with pytest.raises(ZeroDivisionError, match="from a worker"):
        call(_capi.PROGRESS(), _capi.out_i64())


def test_targets_too_narrow_for_the_named_space_are_named():
    # One label has one ranking and no pairs (ψ without coordinates): the space is refused, and
    # a y of too few columns for a space named by string is named as the cause. It used to end in
    # an "internal error" carrying a goroutine dump.
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(ValueError, match=r"permutations needs n_labels ≥ 2, got 1"):
        spaces.Permutations(1)
    for est in (StructuredRidge(space="permutations"), ProbabilisticStructured(space="permutations")):
        with pytest.raises(ValueError, match=r"^y has 1 column\(s\), which space='permutations' cannot take"):
            est.fit(X, np.ones((10, 1), dtype=int))
    with pytest.raises(ValueError, match=r"^y has 2 column\(s\), which space='dicycles' cannot take"):
        StructuredRidge(space="dicycles").fit(X, np.tile([1, 2], (10, 1)))


def test_class_labels_that_cannot_be_sorted_or_nan_classes_are_named():
    X = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(ValueError, match="^y holds class labels that cannot be sorted together"):
        StructuredRidge(space="multiclass").fit(X, np.array(["a", 1] * 20, dtype=object))
    with pytest.raises(ValueError, match=r"^y holds a missing class label \(None\) at row 1"):
        StructuredRidge(space="multiclass").fit(X, np.array(["a", None] * 20, dtype=object))
    # NaN among the declared classes made a class of its own
    with pytest.raises(ValueError, match="^classes must be 1-D real or string labels without NaN"):
        StructuredRidge(space="multiclass").partial_fit(X, np.array([0, 1] * 20), classes=[0, 1, 2, np.nan])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: spaces.Multilabel(3).decode([[0.1, 0.2, 0.3], [0.3]]), "U"),
        (lambda: spaces.Multilabel(3).max_margins([[0.1, 0.2, 0.3], [0.3]]), "U"),
        (lambda: spaces.Multilabel(3).embed([[0, 1, 0], [1]]), "Y"),
        (lambda: spaces.Multilabel(3).covariance_dot([[1.0, 2.0], [3.0]]), "v"),
        (lambda: decision.bayes_decode(spaces.Multilabel(3), [[0.1, 0.2, 0.3], [0.3]], "f1"), "marginals"),
        (lambda: metrics.kendall_tau([[1, 2, 3], [1, 2]], [[1, 2, 3], [1, 2, 3]]), "Y_true"),
        (lambda: metrics.hierarchical_loss([[1, 0], [1]], [[1, 0], [1, 0]], [-1, 0]), "y_true"),
        (lambda: metrics.policy_cosine([[1, 2], [1]], [[1, 2], [1, 2]]), "W_true"),
    ],
)
def test_ragged_lists_are_refused_naming_the_argument(call, name):
    # NumPy's own "setting an array element with a sequence" named no argument (found by a probe).
    with pytest.raises(ValueError, match=f"^{name} must be a rectangular array"):
        call()


def test_every_invalid_row_of_structures_is_worded_by_the_core(data):
    """One wording, written in Go (space.ValidateNamedRows): the array's name, the row, the reason.
    Python named some arrays "Y_true row 3", Dask "y: row 3", the fit "y: row 3"."""
    from combpred.baselines import StructuredSVM

    X, Y, _ = data
    space = spaces.Multilabel(3)
    bad = Y.copy()
    bad[5, 2] = 4
    reason = "row 5: label 2 has value 4, want 0 or 1"
    model = StructuredRidge().fit(X, Y)
    prob = ProbabilisticStructured(space=space, max_iter=2).fit(X, Y)
    calls = [
        (lambda: space.validate(bad), "Y"),
        (lambda: space.embed(bad), "Y"),
        (lambda: prob.score_samples(X, bad), "Y"),  # its argument (fit's is y)
        (lambda: space.score(bad, Y), "Y_true"),
        (lambda: space.score(Y, bad), "Y_pred"),
        (lambda: StructuredRidge().fit(X, bad), "y"),
        (lambda: ProbabilisticStructured(space=space, max_iter=2).fit(X, bad), "y"),
        (lambda: model.score(X, bad), "y"),
        (lambda: StructuredSVM(space=space).fit(X, bad), "y"),
    ]
    for call, name in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == f"{name}: {reason}"
    # at the ABI the caller names the array and where its rows start counting
    lib = _capi.lib()
    rows = np.ascontiguousarray(bad, dtype=np.int64)
    with pytest.raises(ValueError, match=r"^labels: row 105: label 2 has value 4, want 0 or 1$"):
        _capi.check(lib.cp_space_validate(space._h(), _abi.i64(rows), rows.shape[0], 3, 100, b"labels"))
    with pytest.raises(ValueError, match=r"^Y: row 5: "):  # NULL: the default name
        _capi.check(lib.cp_space_validate(space._h(), _abi.i64(rows), rows.shape[0], 3, 0, None))


@pytest.mark.parametrize("params", [b"kernel=rbf;n_components=5", b"kernel=linear"])
@pytest.mark.parametrize("n", [0, -3])
def test_stats_refuse_a_count_of_features_before_reading_the_parameters(n, params):
    """An omitted gamma is 1/n_features in the core: with n = 0, cp_stats_new blamed a gamma of 0
    that the caller never gave (review); it names the count of features."""
    lib, out = _capi.lib(), _capi.out_i64()
    space = spaces.Multilabel(3)._handle()
    with pytest.raises(ValueError, match=rf"statistics need 1 to \d+ features, got {n}"):
        _capi.check(lib.cp_stats_new(space.value, n, params, None, 0, out))


def test_the_default_thread_count_takes_any_bytes():
    """cp_set_threads_default reads OMP_NUM_THREADS as the caller passes it: NULL, garbage, a
    negative, zero or a huge count give every CPU (or the clamp), never an error or a crash."""
    from combpred import _core

    lib = _capi.lib()
    try:
        lib.cp_set_threads(-1)
        every = _core.get_threads()
        for value in (None, b"", b"x", b"-3", b"0", b"\\xff\\xfe", b"1.5", b"99999999999999999999999"):
            assert lib.cp_set_threads_default(value) == _capi.OK, value
            assert _core.get_threads() == every, value
        assert lib.cp_set_threads_default(b"1") == _capi.OK and _core.get_threads() == 1
        assert lib.cp_set_threads_default(str(2**40).encode()) == _capi.OK
        assert _core.get_threads() == 4 * every  # clamped at 4 per CPU, as an explicit count
    finally:
        _core.set_default_threads()


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured], ids=lambda e: e.__name__)
@pytest.mark.parametrize("space", ["multilabel", spaces.Permutations(4)], ids=str)
def test_targets_of_dtype_object_are_read_as_their_numbers_by_fit_and_score(estimator, space):
    """A Y of dtype object holding numbers (a pandas frame of dtype object, Y.astype(object)) was
    fitted as Y itself but refused by score, so that cross-validation scored only NaN (probe AQ):
    fit, score, the metrics and the spaces now read it alike, as the numbers it holds."""
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    Y = (
        (rng.random((30, 4)) < 0.5).astype(int)
        if space == "multilabel"
        else np.array([rng.permutation(4) + 1 for _ in range(30)])
    )
    plain, objects = estimator(space=space).fit(X, Y), estimator(space=space).fit(X, Y.astype(object))
    assert_array_equal(objects.predict(X), plain.predict(X))
    assert objects.score(X, Y.astype(object)) == plain.score(X, Y)
    assert np.isfinite(cross_val_score(estimator(space=space), X, Y.astype(object), cv=3)).all()
    if space != "multilabel":
        assert metrics.kendall_tau(Y.astype(object), Y) == 1.0
        space.validate(Y.astype(object))


@pytest.mark.parametrize(
    "Y, error, match",
    [
        (np.array([["1", "0"], ["0", "1"], ["1", "1"], ["0", "0"]], dtype=object), TypeError, "y must hold integers"),
        ([{0, 2}, {1}, {0}, {2}], TypeError, "y must hold integers.*MultiLabelBinarizer"),
        ([[0, 2], [1], [0], [2]], ValueError, "y must be a rectangular array.*MultiLabelBinarizer"),
        (np.empty((4, 0)), ValueError, "y has no columns"),
    ],
    ids=["strings-as-objects", "label-sets", "ragged", "no-columns"],
)
def test_targets_in_a_wrong_form_are_refused_naming_y(data, Y, error, match):
    """Label sets failed in float(), ragged rows in NumPy, strings held as objects were read as
    numbers by fit (and refused by score), and a Y without columns was called a problem of X's
    features: each is an error naming y and, for multi-label targets, the form to pass."""
    X = data[0][:4]
    with pytest.raises(error, match=match):
        StructuredRidge(space="multilabel").fit(X, Y)


def test_misaligned_arrays_are_refused_not_a_fault(data):
    """A float64 array at an address that is not a multiple of 8, passed to the C ABI directly,
    faulted inside the vector kernels: a fatal Go error that aborted the process (probe AZ). The
    ABI now refuses it naming the argument (NumPy arrays are aligned: only direct callers could)."""
    X, Y, _ = data
    lib = _capi.lib()
    space = spaces.Multilabel(3)
    sh = space._h()
    rows = np.ascontiguousarray(Y)
    keep = []

    def misaligned(a, by):
        """A copy of ``a`` at an address ``by`` bytes past a multiple of 8, as a checked buffer."""
        a = np.ascontiguousarray(a)
        raw = np.zeros(a.nbytes + 16, np.uint8)
        start = (-raw.ctypes.data) % 8 + by
        raw[start : start + a.nbytes] = np.frombuffer(a.tobytes(), np.uint8)
        keep.append(raw)
        pointee = _capi._POINTEE.get(a.dtype, _capi.CheckedIndex)  # int32: a sparse X's indices
        return _capi._Buffer(a, pointee, address=raw.ctypes.data + start)

    with pytest.raises(ValueError, match="X is not aligned to 8 bytes"):
        _capi.check(
            lib.cp_ridge_fit(
                sh,
                misaligned(np.asarray(X, np.float64), 4),
                len(X),
                6,
                _abi.i64(rows),
                3,
                None,
                b"",
                0,
                _capi.PROGRESS(),
                None,
                _capi.out_i64(),
            )
        )
    model = StructuredRidge().fit(X, Y)
    with pytest.raises(ValueError, match="not aligned to 8 bytes"):
        _capi.check(
            lib.cp_ridge_decision(model._model.value, _abi.f64(X), len(X), 6, misaligned(np.empty((len(X), 3)), 4), 3)
        )
    csr = _capi.Csr(sparse.csr_matrix(np.asarray(X)), "X")
    indptr = csr.args[4].array
    args = (*csr.args[:4], misaligned(indptr, indptr.itemsize // 2), *csr.args[5:])
    with pytest.raises(ValueError, match="indptr is not aligned"):
        _capi.check(lib.cp_ridge_decision_csr(model._model.value, *args, _abi.f64(np.empty((len(X), 3))), 3))


def test_no_rows_still_need_the_models_features(data, fitted):
    """With q = 0, predict and max-margin calls took any number of features (decision and
    log_partition refused it; probe AZ)."""
    X, Y, _ = data
    lib = _capi.lib()
    ridge = fitted[0]._model.value
    estimator = ProbabilisticStructured().fit(X, Y)  # keeps the handle alive
    prob = estimator._model.value
    empty, structures, scores = np.empty((0, 7)), np.empty((0, 3), np.int64), np.empty((0, 3))
    for call in (
        lambda: lib.cp_ridge_predict(ridge, _abi.f64(empty), 0, 7, _abi.i64(structures), 3),
        lambda: lib.cp_prob_predict(prob, _abi.f64(empty), 0, 7, _abi.i64(structures), 3),
        lambda: lib.cp_ridge_max_margins(ridge, _abi.f64(empty), 0, 7, 0, _abi.f64(scores), 3),
    ):
        with pytest.raises(ValueError, match="X has 7 features, the model was fitted with 6"):
            _capi.check(call())


@pytest.mark.parametrize("intercept", [True, False])
def test_too_many_unknowns_are_counted_as_the_model_has_them(intercept):
    # the exact solvers' refusals said "features, plus one for the intercept" of a model fitted
    # without one (probe CD)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 801 - intercept))
    Y = (rng.normal(size=(20, 10)) > 0).astype(int)
    how = "features, plus one for the intercept, × output dimension" if intercept else "features × output dimension"
    for fit in (
        lambda: StructuredRidge(solver="exact", fit_intercept=intercept).fit(X, Y),
        lambda: StructuredRidge(fit_intercept=intercept).partial_fit(X, Y),
    ):
        with pytest.raises(ValueError, match=re.escape(f"({how} > 8000)")):
            fit()


@pytest.mark.parametrize("make", [StructuredRidge, ProbabilisticStructured], ids=lambda c: c.__name__)
def test_a_one_column_multilabel_y_warns_of_the_binary_reading(make):
    """A one-column y under space='multilabel' fits a one-label model whose classes_ is [0]; scikit-
    learn's scorers read such a y as binary with classes_[-1] positive and negated its scores:
    roc_auc came out as 1 − AUC and a grid search chose the worst alpha, silently (probe EA). The
    fit warns, also for a spaces.Multilabel(1) object (probe FM: it was left silent as asked for by
    name, but the scorers invert it all the same); two columns do not."""
    import warnings

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    Y = (X[:, :1] + 0.3 * rng.normal(size=(80, 1)) > 0).astype(int)
    for space in ("multilabel", spaces.Multilabel(1)):
        with pytest.warns(
            UserWarning, match=r"single label column.*'roc_auc' gives 1 − AUC.*space='multiclass'"
        ) as got:
            make(space=space).fit(X, Y)
        assert got[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make().fit(X, np.c_[Y, 1 - Y])
        make(space=spaces.KSubsets(2, 1)).fit(X, np.c_[Y, 1 - Y])


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
@pytest.mark.parametrize(
    "space, says",
    [
        ("multiclass", "one class label per sample"),
        (spaces.Multiclass(3), "one class id in [0, n_classes) per sample"),
        (spaces.Ordinal(4), "one level in [0, n_levels) (not ψ's rows of thresholds) per sample"),
        (spaces.HierarchyPaths([-1, 0, 0]), "(0/1 rows over the nodes are the Subtrees encoding)"),
        (spaces.DAGPaths([[], [0], [0]]), "(0/1 rows over the nodes are the DAGSubsets encoding)"),
    ],
)
def test_a_2d_y_for_one_label_per_sample_says_what_the_space_takes(estimator, space, says):
    """0/1 node rows for HierarchyPaths (the Subtrees encoding), threshold rows for Ordinal, and
    one-hot rows for multiclass met scikit-learn's "y should be a 1d array" (probe FJ)."""
    X = np.random.default_rng(0).normal(size=(6, 2))
    Y = np.array([[1, 1, 0], [1, 0, 1]] * 3)
    with pytest.raises(ValueError, match=r"y has shape \(6, 3\): space=.* takes a 1-D y") as info:
        estimator(space=space).fit(X, Y)
    assert says in str(info.value)
