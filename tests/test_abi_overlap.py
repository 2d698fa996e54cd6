"""The C ABI refuses an output array that shares memory with another argument (probe CQ): the
calls read their inputs while they write their outputs, and an output laid over input rows not
yet read gave wrong values with status 0, or made gonum's products panic (an internal error).
The estimators never pass such arrays; the ABI and ``combpred._core`` can."""

from __future__ import annotations

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _capi, _core


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    return X, (rng.random((20, 4)) < 0.5).astype(int)


def _overlapping(X: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """X's first 5 rows and a 5 × d output over the same memory (the output's rows run past X's)."""
    buf = np.zeros(5 * max(X.shape[1], d))
    buf[: 5 * X.shape[1]] = X[:5].ravel()
    return buf[: 5 * X.shape[1]].reshape(5, X.shape[1]), buf[: 5 * d].reshape(5, d)


def test_ridge_decision_and_marginals_refuse_an_output_over_x(data):
    X, Y = data
    model = StructuredRidge(space="multilabel").fit(X, Y)
    x, out = _overlapping(X, 4)
    with pytest.raises(ValueError, match="decision output shares memory with X"):
        model._model.decision(x, out=out)
    x, out = _overlapping(X, 4)
    with pytest.raises(ValueError, match="marginals output shares memory with X"):
        model._model.marginals(x, out, None)
    # separate arrays: the same scores as the estimator's
    out = np.empty((5, 4))
    np.testing.assert_array_equal(
        model._model.decision(np.ascontiguousarray(X[:5]), out=out), model.decision_function(X[:5])
    )


def test_prob_decision_refuses_its_input_as_output(data):
    X, Y = data
    model = ProbabilisticStructured(space="multilabel").fit(np.hstack([X, X[:, :1]]), Y)
    A = np.ascontiguousarray(np.hstack([X, X[:, :1]])[:5])
    with pytest.raises(ValueError, match="decision output shares memory with X"):  # was an internal error
        model._model.decision(A, out=A)


def test_nystrom_features_refuses_an_output_over_its_inputs():
    rng = np.random.default_rng(1)
    K, P = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    want = _core.nystrom_features(K, P)
    _, pk = _capi.f64(K, (4, 4), "kernel rows", writable=True)
    _, pp = _capi.f64(P, (4, 4), "projection")
    with pytest.raises(ValueError, match="features output shares memory with kernel rows"):
        _capi.check(_capi.lib().cp_nystrom_features(pk, 4, 4, pp, 4, pk))
    np.testing.assert_array_equal(_core.nystrom_features(K, P), want)  # K untouched


def test_max_margins_refuse_an_output_over_their_scores_or_x(data):
    """cp_space_max_margins and cp_ridge_max_margins (dense and CSR) had no overlap check: an
    output one row after the scores in the same buffer gave margins 2.3 off with status 0 (probe DA)."""
    from combpred import spaces
    from scipy import sparse

    X, Y = data
    sp = spaces.Multilabel(4)
    U = np.random.default_rng(1).normal(size=(6, 4))
    buf = np.zeros((7, 4))
    buf[:-1] = U
    _, pu = _capi.f64(buf[:-1], (6, 4), "U")
    _, po = _capi.f64(buf[1:], (6, 4), "out", writable=True)
    with pytest.raises(ValueError, match="max margins output shares memory with scores"):
        _capi.check(_capi.lib().cp_space_max_margins(sp._h(), pu, 6, 4, po))
    np.testing.assert_array_equal(buf[:-1], U)
    model = StructuredRidge(space=sp).fit(X, Y)
    x, out = _overlapping(X, 4)
    with pytest.raises(ValueError, match="max margins output shares memory with X"):
        model._model.max_margins(x, 0, out)
    dense = sparse.csr_array(X[:5])  # 15 stored values, laid at the start of a 20-value output
    buf = np.zeros(20)
    buf[:15] = dense.data
    csr = sparse.csr_array((buf[:15], dense.indices, dense.indptr), shape=dense.shape)
    with pytest.raises(ValueError, match="max margins output shares memory with data"):
        model._model.max_margins(csr, 0, buf.reshape(5, 4))
    out = np.empty((5, 4))
    model._model.max_margins(np.ascontiguousarray(X[:5]), 0, out)
    np.testing.assert_array_equal(out, model.max_marginal_margins(X[:5]))
