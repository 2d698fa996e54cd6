"""Sparse X (scipy.sparse) for StructuredRidge and ProbabilisticStructured: the same model as on the
dense X with the same entries, for every solver and kernel; either layout predicted by a model fitted
on the other; malformed CSR refused by the C ABI naming the argument; configurations that cannot
take sparse X refused with a TypeError naming why."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, _capi, spaces
from combpred.baselines import KNNBordaRanker, StructuredSVM
from numpy.testing import assert_array_equal
from scipy import sparse
from sklearn.base import clone


def _data(space: str, m: int = 90, n: int = 14, seed: int = 0):
    """A sparse-ish X (70% zeros, one all-zero row) and targets in ``space`` that depend on it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n))
    X[rng.random(X.shape) < 0.7] = 0
    X[3] = 0
    U = X[:, :5] @ rng.normal(size=(5, 4)) + 0.3 * rng.normal(size=(m, 4))
    if space == "multiclass":
        return X, U.argmax(axis=1)
    if space == "multilabel":
        return X, (U > 0).astype(int)
    return X, np.argsort(np.argsort(-U, axis=1), axis=1) + 1  # permutations: ranks 1..d


def _close(a, b, rtol=1e-10):
    scale = max(np.abs(a).max(), 1e-300)
    assert np.abs(a - b).max() <= rtol * scale, np.abs(a - b).max() / scale


CONFIGS = [
    dict(solver="exact"),
    dict(solver="cg", tol=1e-12),
    # without an intercept: with one, SGD on a dense X runs on its centred rows, on a sparse X on
    # the rows as they are, and four epochs end at different points of the way to the same minimum
    dict(solver="sgd", max_iter=4, tol=None, random_state=0, fit_intercept=False),
    dict(solver="cg", tol=1e-12, empirical_weight=0.5),
    dict(kernel="rbf", gamma=0.2, solver="cg", tol=1e-12),
    dict(kernel="rbf", gamma=0.2, solver="exact"),
    dict(kernel="poly", degree=2, gamma=0.3, solver="cg", tol=1e-12),
    dict(kernel="rbf", gamma=0.2, n_components=25, random_state=0),
    dict(kernel="poly", degree=2, gamma=0.3, n_components=20, solver="cg", tol=1e-12, random_state=0),
]


@pytest.mark.parametrize("space", ["multilabel", "multiclass", "permutations"])
@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_sparse_fit_equals_dense(space, params):
    X, y = _data(space)
    dense = StructuredRidge(space=space, **params).fit(X, y)
    sparse_model = StructuredRidge(space=space, **params).fit(sparse.csr_matrix(X), y)
    if hasattr(dense, "coef_"):
        _close(dense.coef_, sparse_model.coef_)
        _close(dense.intercept_, sparse_model.intercept_)
    # Scores of both layouts by both models agree (for kernel models they are the dual expansion).
    ref = dense.decision_function(X)
    for model in (dense, sparse_model):
        for Xq in (X, sparse.csr_matrix(X), sparse.csc_matrix(X), sparse.coo_array(X)):
            _close(ref, model.decision_function(Xq))
        assert_array_equal(model.predict(sparse.csr_matrix(X)), dense.predict(X))
        _close(model.predict_marginals(sparse.csr_matrix(X)), dense.predict_marginals(X))
    assert sparse_model.score(sparse.csr_matrix(X), y) == pytest.approx(dense.score(X, y))
    # a pickled sparse model (sparse support inputs and landmarks included) predicts the same
    back = pickle.loads(pickle.dumps(sparse_model))
    assert_array_equal(
        back.decision_function(sparse.csr_matrix(X)), sparse_model.decision_function(sparse.csr_matrix(X))
    )


@pytest.mark.parametrize("solver", ["exact", "sgd"])
@pytest.mark.parametrize("kernel", [dict(), dict(kernel="rbf", gamma=0.2, n_components=20, random_state=0)])
def test_sparse_partial_fit_equals_dense(solver, kernel):
    X, Y = _data("multilabel", m=120)
    params = dict(solver=solver, **kernel)
    if solver == "sgd":
        params.update(tol=None, random_state=0)
    dense, sp = StructuredRidge(space="multilabel", **params), StructuredRidge(space="multilabel", **params)
    for lo, hi in [(0, 35), (35, 80), (80, 120)]:
        dense.partial_fit(X[lo:hi], Y[lo:hi])
        sp.partial_fit(sparse.csr_matrix(X[lo:hi]), Y[lo:hi])
    _close(dense.decision_function(X), sp.decision_function(sparse.csr_matrix(X)))
    if solver == "exact" and not kernel:
        _close(StructuredRidge(space="multilabel", solver="exact").fit(X, Y).coef_, sp.coef_)


@pytest.mark.parametrize("space", ["multilabel", "multiclass"])
def test_probabilistic_sparse_equals_dense(space):
    X, y = _data(space)
    # tol 1e-12, so that both fits lie within rounding of the one minimum: their gradients differ in
    # the last bits, and at 1e-10 a label's L-BFGS stopped 1.8e-10 (relative) from the other's
    dense = ProbabilisticStructured(space=space, tol=1e-12).fit(X, y)
    sp = ProbabilisticStructured(space=space, tol=1e-12).fit(sparse.csr_matrix(X), y)
    assert dense.relative_gradient_ <= 1e-12 and sp.relative_gradient_ <= 1e-12
    _close(dense.coef_, sp.coef_)
    for model in (dense, sp):
        _close(dense.decision_function(X), model.decision_function(sparse.csc_matrix(X)))
        _close(dense.predict_marginals(X), model.predict_marginals(sparse.csr_matrix(X)))
        assert_array_equal(dense.predict(X), model.predict(sparse.csr_matrix(X)))
    assert sp.score(sparse.csr_matrix(X), y) == pytest.approx(dense.score(X, y))
    with pytest.raises(TypeError, match="dense X"):
        sp.score_samples(sparse.csr_matrix(X), y)


def test_index_dtypes_float32_and_duplicates():
    X, Y = _data("multilabel")
    ref = StructuredRidge(space="multilabel", solver="exact").fit(X, Y)
    A = sparse.csr_matrix(X)
    wide = A.copy()
    wide.indices, wide.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)  # scipy would downcast
    assert _capi.Csr(wide).args[3] == 64  # passed as int64, not converted
    _close(ref.coef_, StructuredRidge(space="multilabel", solver="exact").fit(wide, Y).coef_)
    # float32 data are converted to float64 (the model equals the one on the rounded values)
    A32 = A.astype(np.float32)
    ref32 = StructuredRidge(space="multilabel", solver="exact").fit(A32.toarray().astype(np.float64), Y)
    _close(ref32.coef_, StructuredRidge(space="multilabel", solver="exact").fit(A32, Y).coef_)
    # duplicates are summed and unsorted indices sorted, as scipy does (on a copy): each entry
    # is given as two halves, the row's entries in decreasing column order
    indptr, indices, data = [0], [], []
    for i in range(A.shape[0]):
        cols, vals = A.indices[A.indptr[i] : A.indptr[i + 1]][::-1], A.data[A.indptr[i] : A.indptr[i + 1]][::-1]
        indices += [*cols, *cols]
        data += [*(vals / 2), *(vals / 2)]
        indptr.append(len(data))
    raw = sparse.csr_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr)), shape=A.shape)
    assert not raw.has_canonical_format
    before = raw.copy()
    _close(ref.coef_, StructuredRidge(space="multilabel", solver="exact").fit(raw, Y).coef_)
    assert_array_equal(raw.indices, before.indices)  # the caller's matrix is left as it was


@pytest.fixture
def empty_rows():
    X = np.zeros((30, 6))
    X[::4, 2] = 1.0
    return X


def test_all_zero_and_empty_rows(empty_rows):
    Y = (np.arange(30)[:, None] % np.array([2, 3]) == 0).astype(int)
    for X in (np.zeros((30, 6)), empty_rows):
        dense = StructuredRidge(space="multilabel", solver="exact").fit(X, Y)
        sp = StructuredRidge(space="multilabel", solver="exact").fit(sparse.csr_matrix(X), Y)
        _close(dense.intercept_, sp.intercept_)
        assert_array_equal(dense.coef_, sp.coef_) if not X.any() else _close(dense.coef_, sp.coef_)
        assert_array_equal(sp.predict(sparse.csr_matrix(X)), dense.predict(X))


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda: StructuredRidge(space="multilabel", kernel=lambda a, b: a @ b.T), "callable kernel"),
        (lambda: StructuredRidge(space="multilabel", kernel="precomputed"), "precomputed"),
        (lambda: StructuredRidge(space="multilabel", kernel="rbf", solver="sgd"), "solver='sgd'"),
    ],
)
def test_unsupported_configurations_raise_type_error(make, why):
    X, Y = _data("multilabel")
    with pytest.raises(TypeError, match=why):
        make().fit(sparse.csr_matrix(X), Y)


def test_partial_fit_kernel_expansion_refuses_sparse():
    X, Y = _data("multilabel")
    with pytest.raises(TypeError, match="n_components"):
        StructuredRidge(space="multilabel", kernel="rbf").partial_fit(sparse.csr_matrix(X), Y)


def test_model_fitted_dense_predicts_sparse_with_dense_support():
    X, Y = _data("multilabel")
    model = StructuredRidge(space="multilabel", kernel="rbf", solver="sgd", max_iter=3, tol=None, random_state=0)
    model.fit(X, Y)
    _close(model.decision_function(X), model.decision_function(sparse.csr_matrix(X)))


# -- the C ABI refuses malformed CSR by name -------------------------------------------------------


def _args(indptr, indices, data, rows, cols, bits=32):
    t = np.int32 if bits == 32 else np.int64
    indptr, indices, data = np.asarray(indptr, t), np.asarray(indices, t), np.asarray(data, np.float64)
    keep = (
        _capi._Buffer(indptr, _capi.CheckedIndex),
        _capi._Buffer(indices, _capi.CheckedIndex),
        _capi._Buffer(data, _capi.CheckedFloat64),
    )
    return (rows, cols, len(data), bits, *keep)


@pytest.mark.parametrize(
    "indptr, indices, data, message",
    [
        ([0, 2, 1], [0, 1], [1.0, 2.0], "indptr must be non-decreasing"),
        ([1, 1, 2], [0, 1], [1.0, 2.0], "indptr[0] = 1"),
        ([0, 1, 3], [0, 1], [1.0, 2.0], "exceeds nnz"),
        ([0, 1, 2], [0, 9], [1.0, 2.0], "indices[1] = 9 (row 1) is out of range [0, 3)"),
        ([0, 1, 2], [0, -1], [1.0, 2.0], "indices[1] = -1"),
        ([0, 2, 2], [2, 1], [1.0, 2.0], "must be sorted"),
        ([0, 2, 2], [1, 1], [1.0, 2.0], "without duplicates"),
        ([0, 1, 2], [0, 1], [1.0, np.nan], "data[1] = NaN"),
        ([0, 1, 2], [0, 1], [np.inf, 1.0], "data[0] = +Inf"),
    ],
)
@pytest.mark.parametrize("bits", [32, 64])
def test_abi_refuses_malformed_csr(multilabel_data, indptr, indices, data, message, bits):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(space="multilabel").fit(X[:, :3], Y)
    out = np.empty((2, Y.shape[1]))
    lib = _capi.lib()
    args = _args(indptr, indices, data, 2, 3, bits)
    status = lib.cp_ridge_decision_csr(
        model._model.value, *args, _capi.f64(out, out.shape, "o", writable=True)[1], out.shape[1]
    )
    assert status != _capi.OK
    assert message in lib.cp_last_error().decode()
    # the fit call checks the same way, before anything else
    space = model.space_._handle()
    rows = np.zeros((2, Y.shape[1]), dtype=np.int64)
    cell = _capi.out_i64()
    status = lib.cp_ridge_fit_csr(
        space.value,
        *args,
        _capi.i64(rows, rows.shape, "y")[1],
        rows.shape[1],
        None,
        b"",
        0,
        _capi.PROGRESS(0),
        None,
        cell,
    )
    assert status != _capi.OK
    assert message in lib.cp_last_error().decode()


def test_abi_refuses_bad_index_bits(multilabel_data):
    X, Y, _, _ = multilabel_data
    model = StructuredRidge(space="multilabel").fit(X[:, :3], Y)
    out = np.empty((1, Y.shape[1]))
    rows, cols, nnz, _, *arrays = _args([0, 1], [0], [1.0], 1, 3)
    status = _capi.lib().cp_ridge_decision_csr(
        model._model.value, rows, cols, nnz, 16, *arrays, _capi.f64(out, out.shape, "o", writable=True)[1], out.shape[1]
    )
    assert status != _capi.OK
    assert "index_bits = 16" in _capi.lib().cp_last_error().decode()


def test_wide_sparse_fit_stays_small():
    """A linear fit on X of 2,000 rows × 300,000 features (4.8 GB dense) with 15 entries a row
    raises the peak RSS by far less than the dense X would need (the Go test checks allocations)."""
    import resource

    rng = np.random.default_rng(1)
    m, n = 2000, 300_000
    indptr = np.arange(0, 15 * m + 1, 15)
    indices = np.sort(rng.integers(0, n - 15, size=(m, 15)), axis=1) + np.arange(15)  # strictly increasing rows
    X = sparse.csr_matrix((rng.normal(size=15 * m), indices.ravel(), indptr), shape=(m, n))
    Y = (rng.random((m, 3)) < 0.3).astype(int)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model = StructuredRidge(space="multilabel", solver="cg", tol=1e-4).fit(X, Y)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert model.coef_.shape == (3, n)
    assert grown_mb < 600, grown_mb  # dense X alone would be 4,800 MB


def _corrupt(kind: str, X: np.ndarray):
    """A scipy.sparse matrix of X's entries whose index arrays were then damaged in place, as a
    buggy producer or a careless user can (scipy checks them only when a matrix is built)."""
    if kind == "csr indptr past the entries":
        S = sparse.csr_matrix(X)
        S.indptr[5] = 10**6
    elif kind == "csr indptr decreasing":
        S = sparse.csr_matrix(X)
        S.indptr[6] = S.indptr[7] + 1
    elif kind == "csr column out of range":
        S = sparse.csr_array(X)
        S.indices[4] = X.shape[1] + 7
    elif kind == "csc indptr past the entries":
        S = sparse.csc_matrix(X)
        S.indptr[2] = 10**6
    elif kind == "coo row out of range":
        S = sparse.coo_matrix(X)
        S.row[3] = 10**6
    elif kind == "bsr indptr past the entries":
        S = sparse.bsr_matrix(X, blocksize=(1, 1))
        S.indptr[-1] = len(S.indices) + 5
    elif (
        kind == "csr int8 offsets that wrap"
    ):  # read as non-decreasing in int8; scipy then corrupted the heap (probe DB)
        S = sparse.csr_matrix(X)
        S.indices, S.indptr = S.indices.astype(np.int8), S.indptr.astype(np.int8)
    elif kind == "csr uint32 indptr decreasing":  # np.diff wrapped on unsigned offsets (probe DB)
        S = sparse.csr_matrix(X)
        S.indptr = S.indptr.astype(np.uint32)
        S.indptr[6] = S.indptr[7] + 1
    elif kind == "csr float indptr":
        S = sparse.csr_matrix(X)
        S.indptr = S.indptr.astype(float)
    elif kind == "dia repeated offsets":  # scipy's CSR copy held duplicates it flagged canonical (probe DB)
        S = sparse.dia_matrix(X)
        S.offsets[1] = S.offsets[0]
    elif kind == "lil row of more indices than values":  # was read on values shifted from other rows (probe CB)
        S = sparse.lil_matrix(X)
        S.rows[0] = list(range(X.shape[1]))
        S.data[0] = [1.0]
    elif kind == "lil column out of range":
        S = sparse.lil_matrix(X)
        S.rows[1] = [X.shape[1] + 3]
        S.data[1] = [1.0]
    elif kind == "lil repeated index":  # tocsr summed the two values, toarray kept the last (probe CC)
        S = sparse.lil_matrix(X)
        S.rows[0], S.data[0] = [0, 0], [1.0, 2.0]
    elif kind == "lil fractional index":
        S = sparse.lil_matrix(X)
        S.rows[0], S.data[0] = [0.5, 1], [1.0, 2.0]
    else:
        S = sparse.dok_matrix(X)
        entries = getattr(S, "_dict", None)
        key = (10**6, 0) if kind == "dok key out of range" else (0, 1.5)  # 1.5 was added into column 1
        (entries.__setitem__ if entries is not None else lambda k, v: dict.__setitem__(S, k, v))(key, 1.0)
    return S


CORRUPTIONS = [
    "csr indptr past the entries",
    "csr indptr decreasing",
    "csr column out of range",
    "csr int8 offsets that wrap",
    "csr uint32 indptr decreasing",
    "csr float indptr",
    "dia repeated offsets",
    "csc indptr past the entries",
    "coo row out of range",
    "bsr indptr past the entries",
    "lil row of more indices than values",
    "lil column out of range",
    "dok key out of range",
    "lil repeated index",
    "lil fractional index",
    "dok fractional key",
]


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_corrupt_sparse_inputs_are_refused_before_scipy_reads_them(kind):
    # scipy's compiled conversions (has_canonical_format, tocsr, toarray) trust the index arrays:
    # a CSR matrix whose indptr points past its entries killed the process with SIGSEGV. Every
    # entry point now refuses it with a ValueError naming the argument.
    X, Y = _data("multilabel")
    model = StructuredRidge().fit(X, Y)
    for call, name in [
        (lambda: model.decision_function(_corrupt(kind, X)), "X"),
        (lambda: model.predict(_corrupt(kind, X)), "X"),
        (lambda: StructuredRidge().fit(_corrupt(kind, X), Y), "X"),
        (lambda: ProbabilisticStructured(max_iter=3).fit(_corrupt(kind, X), Y), "X"),
        (lambda: StructuredRidge().fit(X, _corrupt(kind, Y.astype(float))), "y"),
    ]:
        with pytest.raises(ValueError, match=rf"^{name} is not a valid scipy.sparse \w+ matrix"):
            call()
    assert_array_equal(model.predict(sparse.csr_matrix(X)), model.predict(X))  # intact ones still pass


def test_complex_sparse_inputs_are_refused():
    # scipy's conversions of a complex matrix to float drop the imaginary part with a warning only;
    # a dense complex X or y is refused, and so are sparse ones.
    X, Y = _data("multilabel")
    Yc = sparse.csr_matrix(Y).astype(complex)
    Yc.data[0] = 1 + 5j
    with pytest.raises(ValueError, match="^y: complex data not supported"):
        StructuredRidge().fit(X, Yc)
    with pytest.raises(ValueError, match="^X: complex data not supported"):
        StructuredRidge().fit(sparse.csr_matrix(X).astype(complex), Y)


def test_a_sparse_pandas_frame_is_taken_as_sparse_x():
    # scikit-learn converts a DataFrame of SparseDtype columns to scipy.sparse when sparse X is
    # accepted; we told it sparse X was not, and its "dense data is required" came out
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    X[X < 0.5] = 0.0
    Y = (X[:, :3] > 0).astype(int)
    frame = pd.DataFrame(X).astype(pd.SparseDtype(float, 0.0))
    for model in (StructuredRidge(), ProbabilisticStructured()):
        dense = clone(model).fit(X, Y).predict_marginals(X)
        np.testing.assert_allclose(clone(model).fit(frame, Y).predict_marginals(frame), dense, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match=r"does not take a sparse X with kernel='precomputed'.*X\.sparse\.to_dense\(\)"):
        StructuredRidge(kernel="precomputed").fit(pd.DataFrame(X @ X.T).astype(pd.SparseDtype(float, 0.0)), Y)


def test_a_sparse_pandas_frame_filled_with_other_than_zero_is_refused_by_name():
    # DataFrame.sparse.to_coo raised pandas' "fill value must be 0 when converting to COO matrix",
    # which named neither the argument nor the column (probe CB)
    pd = pytest.importorskip("pandas")
    X, Y = _data("multilabel")
    frame = pd.DataFrame({c: pd.arrays.SparseArray(X[:, i], fill_value=1.0) for i, c in enumerate("abcd")})
    with pytest.raises(ValueError, match=r"^X column 'a' is sparse with fill value 1\.0.*X\.sparse\.to_dense\(\)"):
        StructuredRidge().fit(frame, Y)
    Yf = pd.DataFrame({j: pd.arrays.SparseArray(Y[:, j].astype(float), fill_value=np.nan) for j in range(Y.shape[1])})
    with pytest.raises(ValueError, match=r"^y column 0 is sparse with fill value nan"):
        StructuredRidge().fit(X, Yf)
    ranks = np.argsort(np.argsort(-X[:, :4], axis=1), axis=1) + 1  # the baselines too (probe CC)
    for baseline in (KNNBordaRanker(), StructuredSVM()):
        with pytest.raises(ValueError, match=r"^X column 'a' is sparse with fill value 1\.0"):
            baseline.fit(frame, ranks if isinstance(baseline, KNNBordaRanker) else Y)


def test_a_sparse_pandas_frame_is_taken_as_sparse_y():
    """A DataFrame of SparseDtype columns as Y (probe U) was refused by fit, partial_fit and Dask:
    scikit-learn made a scipy.sparse matrix of it, which np.asarray read as a 0-d object array
    ("y must be 2-D ... got shape ()", with a hint to use space='multiclass')."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :3] > 0).astype(int)
    frame = pd.DataFrame(Y).astype(pd.SparseDtype(int, 0))
    for model in (StructuredRidge(), ProbabilisticStructured(), StructuredRidge(space=spaces.KSubsets(3, 1))):
        y = Y if model.space == "multilabel" else np.eye(3, dtype=int)[X[:, :3].argmax(1)]
        target = frame if model.space == "multilabel" else pd.DataFrame(y).astype(pd.SparseDtype(int, 0))
        dense = clone(model).fit(X, y).predict_marginals(X)
        fitted = clone(model).fit(X, target)
        np.testing.assert_allclose(fitted.predict_marginals(X), dense, rtol=1e-12, atol=1e-12)
        assert fitted.score(X, target) == clone(model).fit(X, y).score(X, y)
    partial = StructuredRidge(solver="exact").partial_fit(X[:30], frame.iloc[:30]).partial_fit(X[30:], frame.iloc[30:])
    np.testing.assert_allclose(partial.coef_, StructuredRidge(solver="exact").fit(X, Y).coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params", [dict(kernel="rbf"), dict(kernel="poly"), dict(kernel="rbf", n_components=5)])
def test_a_kernel_fit_on_a_sparse_x_declaring_huge_width_is_refused_not_aborted(params):
    """Ten rows, three stored values and 2**36 declared columns: the kernel's Gram matrix
    transposed X with row pointers for every column (a 275 GB block), and the Go runtime aborted
    the Python process. The fit now refuses it by the memory budget, naming X."""
    X = sparse.csr_matrix(
        (np.array([1.0, 2.0, 3.0]), (np.array([0, 2, 4]), np.array([5, 2**35, 7]))), shape=(10, 2**36)
    )
    Y = np.zeros((10, 2), dtype=int)
    Y[::2, 0] = 1
    with pytest.raises(MemoryError, match=r"X('s Nyström landmarks)?: the transpose of its 68719476736 columns"):
        StructuredRidge(**params).fit(X, Y)
    if "n_components" in params:  # partial_fit takes sparse X with kernels only through a Nyström map
        with pytest.raises(MemoryError, match="X's Nyström landmarks: the transpose"):
            StructuredRidge(**params).partial_fit(X, Y)


def test_a_one_dimensional_sparse_array_is_refused_by_name():
    """scipy's sparse arrays may be 1-D: 'not enough values to unpack (expected 2, got 1)'."""
    X = sparse.coo_array(np.array([1.0, 0.0, 2.0]))
    if X.ndim != 1:  # scipy before 1.13 (the floor, .ci/floors) makes it 1 × 3
        pytest.skip("this scipy has no 1-D sparse arrays")
    model = StructuredRidge().fit(np.eye(3), np.eye(3, dtype=int)[:, :2])
    with pytest.raises(ValueError, match=r"X must be 2-D, got a sparse array of shape \(3,\)"):
        model.predict(X)
    with pytest.raises(ValueError, match=r"must be 2-D, got a sparse array of shape \(3,\)"):
        StructuredRidge().fit(X, [[0, 1]] * 3)


def test_a_tall_sparse_x_is_budgeted_before_its_csr_copy():
    """A COO (or CSC) X is copied to CSR, whose indptr holds a value per row: a 10⁸-row matrix of
    5 entries took 1.9 GB before any check (probe J); the copy is now checked against the budget
    first and refused naming X."""
    import combpred

    rng = np.random.default_rng(0)
    model = StructuredRidge().fit(rng.normal(size=(30, 10)), rng.integers(0, 2, size=(30, 3)))
    for fmt in ("coo", "csc"):
        X = sparse.coo_matrix((np.ones(5), (np.arange(5), np.arange(5))), shape=(10**7, 10)).asformat(fmt)
        with combpred.config_context(max_memory=10**7):
            with pytest.raises(
                MemoryError, match=rf"X: its CSR copy \(a {fmt} matrix of shape 10000000×10, 5 stored values\)"
            ):
                model.predict(X)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8])
def test_duplicates_of_narrow_dtypes_are_summed_as_scipy_reads_them(dtype):
    """A bool or int8 CSR X with a duplicate entry: scikit-learn's validation cast it to float64
    before the duplicates were summed, so True + True gave 2.0 (and int8 100 + 100 gave 200) where
    the COO copy, toarray and sum_duplicates give True (and −56): the same entries fitted another
    model by format (probe EZ). A bool sparse Y stored twice was refused as "label 0 has value 2"."""
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(30, 2))
    Y = (dense + 0.3 * rng.normal(size=(30, 2)) > 0).astype(int)
    value = True if dtype is np.bool_ else 100
    rows, cols = np.array([0, 0, 1, 2]), np.array([0, 0, 1, 0])
    data = np.array([value] * 4, dtype=dtype)
    coo = sparse.coo_matrix((data, (rows, cols)), shape=(30, 2))
    csr = sparse.csr_matrix((data, cols, np.r_[0, 2, 3, np.full(28, 4)]), shape=(30, 2))
    assert not csr.has_canonical_format
    assert_array_equal(csr.toarray(), coo.toarray())
    model = StructuredRidge(space="multilabel", solver="exact").fit(dense, Y)
    as_read = coo.toarray().astype(np.float64)
    # the sparse and dense products agree up to rounding (DecisionCSR's contract), not bit for bit;
    # summing the duplicates otherwise (2.0 for True, 200 for int8's -56) moves the scores by units
    _close(model.decision_function(csr), model.decision_function(as_read))
    _close(model.decision_function(coo), model.decision_function(as_read))
    fitted = StructuredRidge(space="multilabel", solver="exact").fit(csr, Y)
    _close(fitted.coef_, StructuredRidge(space="multilabel", solver="exact").fit(as_read, Y).coef_)
    if dtype is np.bool_:
        Ys = sparse.csr_matrix(
            (np.ones(3, dtype=bool), np.array([0, 0, 1]), np.r_[0, 2, np.full(29, 3)]), shape=(30, 2)
        )
        assert_array_equal(
            StructuredRidge(space="multilabel").fit(dense, Ys).coef_,
            StructuredRidge(space="multilabel").fit(dense, Ys.toarray().astype(int)).coef_,
        )


def test_unaligned_sparse_arrays_are_copied_as_a_dense_x_is():
    """A CSR X whose data, indices or indptr sit at an odd address (np.frombuffer at an offset) was
    refused as "data is not aligned ... (NumPy's are)", naming neither X nor a remedy, where an
    unaligned dense X is copied and fitted (probe EZ)."""

    def unaligned(a):
        buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
        u = np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1)
        u[...] = a
        return u

    X, Y = _data("multilabel")
    A = sparse.csr_matrix(X)
    model = StructuredRidge(space="multilabel", solver="exact").fit(X, Y)
    for parts in [
        (unaligned(A.data), A.indices, A.indptr),
        (A.data, unaligned(A.indices), A.indptr),
        (A.data, A.indices, unaligned(A.indptr)),
    ]:
        odd = sparse.csr_matrix(parts, shape=A.shape)
        assert_array_equal(model.predict(odd), model.predict(X))
        _close(StructuredRidge(space="multilabel", solver="exact").fit(odd, Y).coef_, model.coef_)


def test_copies_to_sum_duplicates_are_checked_against_the_budget():
    """A non-canonical CSR X is copied to sum its duplicates (in its own dtype, then for the core
    as float64): the copies are charged to the memory budget before they are made."""
    import combpred

    rows = 200_000
    indptr = np.arange(0, 2 * rows + 1, 2)
    X = sparse.csr_matrix((np.ones(2 * rows, dtype=bool), np.zeros(2 * rows, dtype=np.int32), indptr), shape=(rows, 2))
    assert not X.has_canonical_format
    Y = np.zeros((rows, 2), dtype=np.int64)
    with combpred.config_context(max_memory=10**6):
        with pytest.raises(MemoryError, match="X: a copy of its csr arrays .* to sum duplicates and sort indices"):
            StructuredRidge(space="multilabel").fit(X, Y)
        with pytest.raises(MemoryError, match="X: a copy of its csr arrays .* to sum duplicates and sort indices"):
            _capi.Csr(sparse.csr_matrix((np.ones(2 * rows), X.indices, X.indptr), shape=X.shape))
