"""Sparse targets (issue 15, item 2): a scipy.sparse Y of 0/1 rows (MultiLabelBinarizer's
sparse_output) fits, continues and scores exactly as its dense twin; the core reads dense int64 rows,
so the conversion is checked against the memory budget first. A model fitted on a sparse Y predicts a
CSR matrix (as OneVsRestClassifier does), decoded a block of rows at a time."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, config_context, spaces
from scipy import sparse
from sklearn.preprocessing import MultiLabelBinarizer


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    Y = (X @ rng.normal(size=(4, 6)) + rng.normal(size=(80, 6)) > 0.5).astype(np.int64)
    return X, Y


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("make", [lambda: StructuredRidge(alpha=0.5), lambda: ProbabilisticStructured(alpha=0.01)])
def test_sparse_y_fits_as_dense(make, fmt):
    X, Y = _data()
    Ys = sparse.csr_matrix(Y).asformat(fmt)
    a, b = make().fit(X, Y), make().fit(X, Ys)
    assert not a.sparse_output_ and b.sparse_output_
    pred = b.predict(X)
    assert sparse.isspmatrix_csr(pred) and pred.dtype == np.int64
    np.testing.assert_array_equal(a.predict(X), pred.toarray())
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert a.score(X, Y) == b.score(X, Ys)
    # the labels' indices, as for a dense Y (StructuredRidge's sparse path said [0, 1]); a pickle
    # keeps them, and partial_fit accepts them as classes
    np.testing.assert_array_equal(b.classes_, np.arange(6))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(b)).classes_, np.arange(6))
    if hasattr(b, "partial_fit"):
        b.partial_fit(X, Ys, classes=range(6))


def test_multilabel_binarizer_sparse_output_and_partial_fit():
    X, Y = _data()
    sets = [np.flatnonzero(row).tolist() for row in Y]
    Ys = MultiLabelBinarizer(classes=range(6), sparse_output=True).fit_transform(sets)
    dense = StructuredRidge().partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])
    model = StructuredRidge().partial_fit(X[:40], Ys[:40]).partial_fit(X[40:], Ys[40:])
    np.testing.assert_array_equal(model.decision_function(X), dense.decision_function(X))
    np.testing.assert_array_equal(model.predict(X).toarray(), dense.predict(X))


def test_sparse_closed_node_sets():
    X, Y = _data()
    space = spaces.Subtrees([-1, 0, 0, 1, 1, 2])
    Y = space.decode(X @ np.random.default_rng(1).normal(size=(4, 6)))
    a = StructuredRidge(space=space).fit(X, Y)
    b = StructuredRidge(space=space).fit(X, sparse.csr_matrix(Y))
    np.testing.assert_array_equal(a.predict(X), b.predict(X).toarray())
    space.validate(sparse.csr_matrix(Y))


def test_sparse_y_refusals():
    X, Y = _data()
    with pytest.raises(ValueError, match="1-D class labels"):
        StructuredRidge(space="multiclass").fit(X, sparse.csr_matrix(Y[:, :1]))
    bad = sparse.csr_matrix(Y * 2)
    with pytest.raises(ValueError, match="row 0: label 4 has value 2"):
        StructuredRidge().fit(X, bad)
    # fit hands the core the positions of the ones; a fit that reads them densely checks their size
    with config_context(max_memory=1024), pytest.raises(MemoryError, match="Y as dense rows of 80 × 6 labels"):
        StructuredRidge().fit(X, sparse.csr_matrix(Y))
    with config_context(max_memory=1024), pytest.raises(MemoryError, match="sparse matrix"):
        StructuredRidge().partial_fit(X, sparse.csr_matrix(Y))
    with pytest.raises(ValueError, match="row 2: label 1 has value -1"):
        StructuredRidge().fit(X, sparse.csr_matrix(([1.0, -1.0], ([0, 2], [3, 1])), shape=Y.shape))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        StructuredRidge().fit(X[:10], sparse.csr_matrix(Y))


@pytest.mark.parametrize("sparse_x", [False, True])
@pytest.mark.parametrize(
    "params",
    [
        {"solver": "cg"},
        {"solver": "cg", "fit_intercept": False},
        {"solver": "cg", "kernel": "rbf", "n_components": 30, "random_state": 0},
        {"solver": "exact"},
        {"kernel": "rbf"},
    ],
)
def test_sparse_y_through_the_core_fits_as_dense(params, sparse_x):
    # the linear CG fit keeps Δ sparse in the core (ridge.FitSparseY); the others get dense rows
    X, Y = _data()
    if sparse_x:
        X = sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    w = np.random.default_rng(3).uniform(0.5, 2, size=len(Y))
    dense = StructuredRidge(alpha=0.5, tol=1e-12, max_iter=1000, **params).fit(X, Y, sample_weight=w)
    ones = StructuredRidge(alpha=0.5, tol=1e-12, max_iter=1000, **params).fit(X, sparse.csr_matrix(Y), sample_weight=w)
    np.testing.assert_allclose(ones.decision_function(X), dense.decision_function(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(ones.predict(X).toarray(), dense.predict(X))


def test_many_sparse_labels_fit_within_a_budget_their_dense_rows_exceed():
    rng = np.random.default_rng(5)
    m, d = 2000, 20000
    X = rng.normal(size=(m, 20))
    rows = np.repeat(np.arange(m), 3)
    Y = sparse.csr_matrix((np.ones(3 * m), (rows, rng.integers(0, d, size=3 * m))), shape=(m, d))
    Y.data[:] = 1  # duplicates summed to 2 count once
    with config_context(max_memory=150 * 2**20):  # the dense int64 rows alone: 305 MiB
        model = StructuredRidge(solver="cg", tol=1e-6).fit(X, Y)
        with pytest.raises(MemoryError, match="Y as dense rows"):
            StructuredRidge(solver="sgd").fit(X, Y)
    assert model.coef_.shape == (d, 20) and model.n_iter_ >= 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: StructuredRidge(alpha=0.5),
        lambda: StructuredRidge(alpha=0.5, decode_from="marginals"),
        lambda: ProbabilisticStructured(alpha=0.01, decision="hamming"),
    ],
)
def test_sparse_predictions_in_blocks(make, monkeypatch):
    """Blocks of 3 rows (not dividing 80) give the dense predictions, for sparse X too, and the
    pickled model keeps predicting sparse matrices."""
    from combpred import _estimator_base

    X, Y = _data()
    dense = make().fit(X, Y)
    model = make().fit(X, sparse.csr_matrix(Y))
    monkeypatch.setattr(_estimator_base, "_SPARSE_OUTPUT_BLOCK", 3 * Y.shape[1])
    for inputs in (X, sparse.csr_matrix(X)):
        pred = model.predict(inputs)
        assert sparse.isspmatrix_csr(pred) and pred.shape == Y.shape
        np.testing.assert_array_equal(pred.toarray(), dense.predict(X))
    again = pickle.loads(pickle.dumps(model))
    assert again.sparse_output_
    np.testing.assert_array_equal(again.predict(X).toarray(), dense.predict(X))
    assert model.score(X, sparse.csr_matrix(Y)) == dense.score(X, Y)


def test_refit_on_dense_targets_predicts_dense():
    X, Y = _data()
    model = StructuredRidge().fit(X, sparse.csr_matrix(Y))
    assert sparse.issparse(model.predict(X))
    model.fit(X, Y)
    assert isinstance(model.predict(X), np.ndarray) and not model.sparse_output_
