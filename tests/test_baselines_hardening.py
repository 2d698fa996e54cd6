"""The baselines under failed refits, concurrent refits, extreme scales and memory budgets: each
test reproduces what a probe found them doing (the comment or docstring says what)."""

import pickle
import re
import threading
import warnings

import combpred
import numpy as np
import pytest
from combpred import spaces
from combpred.baselines import KNNBordaRanker, PairwiseRanker, StructuredSVM
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError


def _rankings(seed=0, n=30, features=3, labels=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features))
    Y = np.argsort(np.argsort(-X @ rng.normal(size=(features, labels)), axis=1), axis=1) + 1
    return X, Y


BASELINES = {
    "knn": lambda: KNNBordaRanker(n_neighbors=3),
    "pairwise": lambda: PairwiseRanker(),
    "svm": lambda: StructuredSVM("permutations", max_iter=3, random_state=0),
}


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_a_refused_refit_leaves_no_model(name):
    """A refit refused for its y left n_features_in_ of the new X beside the old neighbour index,
    classifiers or weights: predict then failed inside scikit-learn, or answered from the old fit."""
    X, Y = _rankings()
    model = BASELINES[name]().fit(X, Y)
    bad = Y.copy()
    bad[0, 0] = bad[0, 1]  # a tie: not a ranking
    with pytest.raises(ValueError):
        model.fit(np.c_[X, X], bad)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, Y)  # and it fits again
    assert model.predict(X).shape == Y.shape


def test_svm_refused_refit_keeps_no_labels():
    """StructuredSVM popped classes_ before the refit was checked: the old model's indices came
    back as raw integers, or read through the refused fit's labels."""
    X, _ = _rankings()
    labels = np.array(["cat", "dog", "emu"])[np.argmax(X, axis=1)]
    model = StructuredSVM("multiclass", max_iter=5, random_state=0).fit(X, labels)
    assert set(model.predict(X)) <= set(labels)
    with pytest.raises(ValueError, match="X has 30 samples but y has 28"):
        model.fit(X, np.array(list("abcd") * 7))
    with pytest.raises(NotFittedError):
        model.predict(X)
    assert not hasattr(model, "classes_")


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_queries_never_mix_two_fits(name):
    """Predictions raced against refits in another thread: KNN returned Borda counts of one fit's
    neighbours over another's rankings (285 results matched neither fit), Pairwise 2,531, and
    StructuredSVM raw class indices."""
    X1, Y1 = _rankings(1)
    X2, Y2 = _rankings(2)
    Xq = np.random.default_rng(3).normal(size=(40, 3))
    expected = [BASELINES[name]().fit(X, Y).predict(Xq) for X, Y in ((X1, Y1), (X2, Y2))]
    model = BASELINES[name]().fit(X1, Y1)
    stop, mixed, errors = threading.Event(), [], []

    def query():
        while not stop.is_set():
            try:
                got = model.predict(Xq)
            except NotFittedError:  # a refit is running: no model
                continue
            except Exception as exc:  # anything else is a failure of the snapshot
                errors.append(exc)
                return
            if not any(np.array_equal(got, e) for e in expected):
                mixed.append(got)

    readers = [threading.Thread(target=query) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        for i in range(30 if name != "pairwise" else 10):
            model.fit(*((X1, Y1) if i % 2 else (X2, Y2)))
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert not errors, errors[:1]
    assert not mixed, f"{len(mixed)} predictions matched neither fit"


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_pickles_of_the_attributes_alone_still_predict(name):
    """A pickle written before the snapshot existed (fitted attributes without _state) predicts."""
    X, Y = _rankings()
    model = BASELINES[name]().fit(X, Y)
    state = dict(model.__getstate__())  # scikit-learn's may be the estimator's own __dict__
    del state["_state"]
    old = type(model).__new__(type(model))
    old.__setstate__(state)
    np.testing.assert_array_equal(old.predict(X), model.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))


def test_knn_refuses_inputs_whose_squared_distances_underflow():
    """At 1e-170 every squared distance was 0: all 50 queries got one and the same ranking."""
    X, Y = _rankings(n=50)
    with pytest.raises(ValueError, match=r"differ by at most .*e-170.*underflow.*scale X up"):
        KNNBordaRanker(n_neighbors=5).fit(1e-170 * X, Y)
    # squares that are subnormal still order the neighbours: refused at first (review)
    np.testing.assert_array_equal(
        KNNBordaRanker(n_neighbors=5).fit(1e-156 * X, Y).predict(1e-156 * X),
        KNNBordaRanker(n_neighbors=5).fit(X, Y).predict(X),
    )
    # the Manhattan distance does not square: the same inputs rank as at scale 1
    small = KNNBordaRanker(n_neighbors=5, metric="manhattan").fit(1e-170 * X, Y).predict(1e-170 * X)
    np.testing.assert_array_equal(small, KNNBordaRanker(n_neighbors=5, metric="manhattan").fit(X, Y).predict(X))


def test_knn_distance_weights_of_a_subnormal_distance():
    """1/dist overflowed for a distance of 1e-310: every label tied at inf and label order came back."""
    X = [[0.0], [1.0], [2.0]]
    Y = [[3, 2, 1], [3, 1, 2], [1, 2, 3]]
    model = KNNBordaRanker(3, weights="distance", metric="manhattan").fit(X, Y)
    with np.errstate(over="raise"):
        np.testing.assert_array_equal(model.predict([[1e-310]]), [[3, 2, 1]])
        np.testing.assert_array_equal(model.predict([[1e-300]]), [[3, 2, 1]])


def test_knn_names_a_callable_metrics_infinity():
    """An infinite distance from a callable metric was blamed on the scale of X."""
    model = KNNBordaRanker(2, metric=lambda a, b: np.inf).fit([[0.0], [1.0]], [[1, 2], [2, 1]])
    with pytest.raises(ValueError, match="the metric returned infinity for a distance from X row 0"):
        model.predict([[0.5]])


def test_knn_keeps_its_own_copy_of_the_rankings():
    """Y_fit_ was a view of the caller's y: writing to y changed later predictions unchecked."""
    X, Y = _rankings()
    model = KNNBordaRanker(n_neighbors=3).fit(X, Y)
    before = model.predict(X[:3])
    Y[:] = 99
    np.testing.assert_array_equal(model.predict(X[:3]), before)


def _few(Y, labels=12):
    """Rankings of the first few labels, in the order Y ranks them."""
    return np.argsort(np.argsort(Y[:, :labels], axis=1), axis=1) + 1


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda X, Y: KNNBordaRanker(n_neighbors=100).fit(X, Y).predict(X), "Borda counts"),
        (lambda X, Y: PairwiseRanker().fit(X[:40], _few(Y[:40])).predict(np.repeat(X, 400, axis=0)), "votes"),
        (lambda X, Y: PairwiseRanker().fit(X[:40], _few(Y[:40])).predict_pair_proba(np.repeat(X, 400, axis=0)), "pair"),
    ],
)
def test_queries_are_checked_against_the_memory_budget(call, what):
    """KNN's (queries, k, labels) points reached 1.7 GB and Pairwise's pair probabilities 2.3 GB
    under a 50 MB budget; now the answers and their working memory are checked first, and the
    working memory no longer grows with k or with the pairs."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    Y = np.argsort(rng.random((2000, 500)), axis=1) + 1
    with combpred.config_context(max_memory=2_000_000):
        with pytest.raises(MemoryError, match=what):
            call(X, Y)


def test_knn_scores_match_the_borda_count():
    """The neighbour-by-neighbour sum is the Borda count of the k nearest rankings."""
    X, Y = _rankings(n=60, labels=6)
    Xq = np.random.default_rng(9).normal(size=(10, 3))
    for weights in ("uniform", "distance"):
        model = KNNBordaRanker(n_neighbors=7, weights=weights).fit(X, Y)
        dist, ind = model.nn_.kneighbors(Xq)
        w = np.ones_like(dist) if weights == "uniform" else 1.0 / dist
        want = np.einsum("qk,qkl->ql", w, 7 - Y[ind])
        got = model._label_scores(Xq, model._snapshot())
        np.testing.assert_allclose(got / got.sum(axis=1, keepdims=True), want / want.sum(axis=1, keepdims=True))


@pytest.mark.parametrize(
    "make",
    [
        lambda: KNNBordaRanker(n_neighbors=True),
        lambda: KNNBordaRanker(p=True),
        lambda: KNNBordaRanker(n_jobs=True),
        lambda: KNNBordaRanker(n_jobs=0),
        lambda: StructuredSVM("permutations", max_iter=True),
        lambda: StructuredSVM("permutations", alpha=np.True_),
        lambda: StructuredSVM("permutations", batch_size=True),
        lambda: StructuredSVM("permutations", decoding="sampled", n_samples=True),
    ],
)
def test_baseline_numbers_are_not_booleans(make):
    """True is an Integral: max_iter=True ran one epoch, n_samples=True failed mid-fit with a bare
    TypeError, and n_jobs=0 failed at the first predict in joblib."""
    X, Y = _rankings()
    with pytest.raises(InvalidParameterError):
        make().fit(X, Y)


def test_pairwise_refuses_weights_whose_sum_overflows():
    """LogisticRegression fitted zeros on them: every vote 0.5, Kendall τ 0.04 instead of 0.97."""
    X, Y = _rankings(n=60)
    with pytest.raises(ValueError, match="sample_weight sums to more than"):
        PairwiseRanker().fit(X, Y, sample_weight=np.full(60, 1e308))
    assert PairwiseRanker().fit(X, Y, sample_weight=np.full(60, 1e300)).score(X, Y) > 0.8


def test_rankers_want_two_dimensional_y_and_their_width():
    """A 1-D y was one ranking of 30 labels ("not a permutation of 1..30"), and a score against
    rankings of another width blamed Y_true's rows."""
    X, Y = _rankings()
    with pytest.raises(ValueError, match=r"y must be 2-D \(n_samples, n_labels\) rank rows, got shape \(30,\)"):
        KNNBordaRanker(n_neighbors=3).fit(X, np.arange(1, 31))
    model = KNNBordaRanker(n_neighbors=3).fit(X, Y)
    with pytest.raises(ValueError, match="y ranks 3 labels, but the model ranks 4"):
        model.score(X, _few(Y, 3))


def test_sparse_rankings_are_densified_within_the_budget():
    """A sparse y of 2·10⁷ columns was densified (690 MB) before any check."""
    import scipy.sparse

    Y = scipy.sparse.csr_matrix((2, 2 * 10**7), dtype=np.int64)
    with combpred.config_context(max_memory=10**7):
        with pytest.raises(MemoryError, match="y"):
            KNNBordaRanker(n_neighbors=1).fit(np.zeros((2, 1)), Y)
        with pytest.raises(MemoryError, match="Y_true"):
            combpred.metrics.kendall_tau(Y, Y)


def _tampered(model, **changes):
    """A pickle of model whose fitted state (what queries read) and attributes carry changes."""
    state = dict(model.__getstate__())
    state["_state"] = {**state["_state"], **changes}
    state.update(changes)
    return pickle.dumps(state), type(model)


def _multiclass_svm():
    X, Y = _rankings()
    return StructuredSVM("multiclass", max_iter=3, random_state=0).fit(X, np.array(["a", "b", "c"])[Y[:, 0] % 3])


TAMPERED = [
    (
        "svm classes_ reversed",
        _multiclass_svm,
        lambda m: {"classes_": m.classes_[::-1]},
        "classes_ is not the 3 sorted",
    ),
    (
        "svm classes_ on labels",
        lambda: BASELINES["svm"]().fit(*_rankings()),
        lambda m: {"classes_": np.arange(6)},
        "classes_ is set, but space_ is a Permutations",
    ),
    ("svm intercept_ cut", _multiclass_svm, lambda m: {"intercept_": m.intercept_[:1]}, "intercept_ is not a float64"),
    ("svm coef_ NaN", _multiclass_svm, lambda m: {"coef_": np.full_like(m.coef_, np.nan)}, "coef_ holds values"),
    ("svm space_ text", _multiclass_svm, lambda m: {"space_": "multiclass"}, "space_ is a str"),
    (
        "knn Y_fit_ no rankings",
        lambda: BASELINES["knn"]().fit(*_rankings()),
        lambda m: {"Y_fit_": np.full_like(m.Y_fit_, 7)},
        "Y_fit_ is not 30 rankings",
    ),
    (
        "knn Y_fit_ cut",
        lambda: BASELINES["knn"]().fit(*_rankings()),
        lambda m: {"Y_fit_": m.Y_fit_[:10]},
        "Y_fit_ is not 30 rankings",
    ),
    (
        "knn n_features_in_",
        lambda: BASELINES["knn"]().fit(*_rankings()),
        lambda m: {"n_features_in_": 5},
        "nn_ takes 3 features",
    ),
    (
        "pairwise pairs_ reversed",
        lambda: PairwiseRanker().fit(*_rankings()),
        lambda m: {"pairs_": m.pairs_[:, ::-1]},
        "pairs_ is not the 6",
    ),
    (
        "pairwise estimators_ cut",
        lambda: PairwiseRanker().fit(*_rankings()),
        lambda m: {"estimators_": m.estimators_[:2]},
        "estimators_ is not a list of 6",
    ),
]


@pytest.mark.parametrize("fit, change, message", [case[1:] for case in TAMPERED], ids=[case[0] for case in TAMPERED])
def test_tampered_pickles_of_the_baselines_are_refused(fit, change, message):
    """Baselines loaded fitted state that no fit gives: a reversed classes_ or pairs_, a cut
    intercept_ (broadcast) or rankings that are none predicted without a word, and others failed
    inside NumPy naming no attribute (probe Q). StructuredRidge already refused such pickles."""
    model = fit()
    data, cls = _tampered(model, **change(model))
    restored = cls.__new__(cls)
    with pytest.raises(ValueError, match=f"inconsistent pickle of {cls.__name__}: {message}"):
        restored.__setstate__(pickle.loads(data))
    assert pickle.loads(pickle.dumps(model)).predict(_rankings()[0][:3]).shape[0] == 3  # the untouched one loads


def test_a_baseline_pickles_after_set_params_changed_its_space():
    """The pickle check compared classes_ with the space parameter, which set_params may change
    after the fit: a multiclass StructuredSVM with space set to "multilabel" refused its own pickle
    and deepcopy (review); the fitted space decides."""
    import copy

    model = _multiclass_svm()
    X = _rankings()[0][:5]
    want = model.predict(X)
    model.set_params(space="multilabel")
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), want)
    np.testing.assert_array_equal(copy.deepcopy(model).predict(X), want)


def test_pairwise_pairs_are_in_the_order_of_the_cores_permutation_psi():
    """pairs_ is documented as the order of Permutations' ψ, which the core owns: ψ(y)[k] = +1
    exactly when label pairs_[k, 0] is ranked before pairs_[k, 1], for every ranking (audit P)."""
    X, Y = _rankings(labels=5)
    pairs = PairwiseRanker().fit(X, Y).pairs_
    space = combpred.spaces.Permutations(5)
    rankings = space.enumerate()
    before = rankings[:, pairs[:, 0]] < rankings[:, pairs[:, 1]]
    np.testing.assert_array_equal(space.embed(rankings), np.where(before, 1.0, -1.0))


@pytest.mark.parametrize("n_features", [3, 4])
def test_svm_pickles_of_the_old_coef_layout_load_transposed(n_features):
    """coef_ was (n_features, d) before session 46. A pickle of that layout loaded with a square
    coef_ silently transposed (88 % of predictions kept, the review) and a non-square one was
    refused as tampered; pickles now carry their layout, and one without it is the old one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, n_features))
    model = StructuredSVM("multiclass", random_state=0).fit(X, X[:, :3].argmax(1))
    state = model.__getstate__()
    assert state["_coef_layout"] == "(d, n_features)"
    old = {key: value for key, value in state.items() if key != "_coef_layout"}
    old["coef_"] = np.ascontiguousarray(state["coef_"].T)
    old["_state"] = {**state["_state"], "coef_": old["coef_"]}
    for saved in (state, old):
        restored = pickle.loads(pickle.dumps(model)) if saved is state else StructuredSVM.__new__(StructuredSVM)
        if saved is old:
            restored.__setstate__(old)
        np.testing.assert_array_equal(restored.coef_, model.coef_)
        np.testing.assert_array_equal(restored.predict(X), model.predict(X))


def test_svm_takes_array_likes_that_only_convert():
    """StructuredSVM asked np.ndim of y before converting it, which scikit-learn's _NotAnArray
    refuses (probe Z: check_classifier_data_not_an_array failed)."""
    from sklearn.utils.estimator_checks import check_classifier_data_not_an_array

    check_classifier_data_not_an_array("StructuredSVM", StructuredSVM("multiclass", random_state=0))


@pytest.mark.parametrize("space", ["multiclass", combpred.spaces.Multiclass(3)])
def test_structured_svm_score_reads_labels_as_the_estimators_do(space):
    """As StructuredRidge.score: on a Multiclass object a label outside its ids 0 … n − 1 is an
    error naming y (it counted as a miss: score 0.0, probe BI); on class labels one the model never
    saw is a miss (scikit-learn's accuracy), one that cannot be a class (2.5 among integers) an
    error (probe BR)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    model = StructuredSVM(space=space).fit(X, y)
    ridge = combpred.StructuredRidge(space=space).fit(X, y)
    assert model.score(X, y) == np.mean(model.predict(X) == y)
    if isinstance(space, str):
        unseen = [7, 7, int(model.predict(X[2:3])[0])]
        assert model.score(X[:3], unseen) == pytest.approx(1 / 3)
        assert ridge.score(X[:3], unseen) == np.mean(ridge.predict(X[:3]) == unseen)
        with pytest.raises(ValueError, match=r"y row 0 holds 2.5, which cannot be one of the classes"):
            model.score(X[:3], [2.5, 1, 0])
    else:
        for bad in ([7, 7, -1], [2.5, 1, 0]):
            with pytest.raises(ValueError, match=r"y contains label .* not in classes \[0, 1, 2\]"):
                model.score(X[:3], bad)
            with pytest.raises(ValueError, match=r"y contains label .* not in classes \[0, 1, 2\]"):
                ridge.score(X[:3], bad)
    with pytest.raises(ValueError, match="y has 2 rows but X has 3"):
        model.score(X[:3], [0, 1])


def test_structured_svm_reads_numpy_integer_parameters_as_python_numbers():
    """alpha=np.int8(100) made 1/(alpha·t) wrap and the steps turn negative (another model, with
    only NumPy's overflow warning); n_samples and batch_size of np.int8 overflowed the budget's
    product, and np.int64(2**62) slipped past it into a reshape error."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = (X[:, :2] > 0).astype(int)
    for name, value in (("alpha", 100), ("batch_size", 3)):
        plain = StructuredSVM(max_iter=5, random_state=0, **{name: value}).fit(X, Y)
        small = StructuredSVM(max_iter=5, random_state=0, **{name: np.int8(value)}).fit(X, Y)
        np.testing.assert_array_equal(small.coef_, plain.coef_)
    plain = StructuredSVM(decoding="sampled", n_samples=3, max_iter=2, random_state=0).fit(X, Y)
    small = StructuredSVM(decoding="sampled", n_samples=np.int8(3), max_iter=2, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(small.coef_, plain.coef_)
    with pytest.raises(MemoryError, match="n_samples=4611686018427387904"):
        StructuredSVM(decoding="sampled", n_samples=np.int64(2**62), max_iter=1).fit(X, Y)


def test_knn_minkowski_power_beyond_a_float_is_refused_by_name():
    """p=2**64 passed the range check and failed inside NearestNeighbors with NumPy's words."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    P = np.argsort(np.argsort(-X @ rng.normal(size=(3, 4)), axis=1), axis=1) + 1
    with pytest.raises(InvalidParameterError, match="'p' parameter"):
        KNNBordaRanker(p=10**400).fit(X, P)
    np.testing.assert_array_equal(
        KNNBordaRanker(p=2**3).fit(X, P).predict(X), KNNBordaRanker(p=8.0).fit(X, P).predict(X)
    )
    with pytest.raises(ValueError, match="overflow"):  # the distances' 2**64-th powers: named, not NumPy's TypeError
        KNNBordaRanker(p=2**64).fit(X, P).predict(X)


def test_structured_svm_names_x_when_its_column_means_overflow():
    """Finite X whose column sums overflow: NumPy's overflow warning leaked and the message said
    "largest |X| inf" of the centred copy (probe BG); it now names X's own largest value."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:2] = 1.7e308
    Y = (rng.random((40, 3)) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning leaks
        with pytest.raises(ValueError, match=r"X's column means .* overflow float64 \(largest \|X\| 1\.7e\+308\)"):
            StructuredSVM(space="multilabel", random_state=0, max_iter=3).fit(X, Y)


@pytest.mark.parametrize("ranker", [KNNBordaRanker(n_neighbors=2), PairwiseRanker()])
def test_rankers_name_y_of_the_wrong_form(ranker):
    """A Series of rank arrays, an object array of tuples and ragged rows got NumPy's words
    ("truth value ... ambiguous", "setting an array element with a sequence"), naming no argument
    (probe BH); numbers held as objects read as the plain array."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(6, 2))
    Y = np.array([[1, 2, 3], [3, 1, 2]] * 3)
    tuples = np.empty(6, dtype=object)
    tuples[:] = [tuple(r) for r in Y]
    for y in (pd.Series(list(Y)), tuples):
        with pytest.raises(TypeError, match=r"y must hold integer ranks, rows of a 2-D array .* got dtype object"):
            clone(ranker).fit(X, y)
    with pytest.raises(ValueError, match="y must be a rectangular array"):
        clone(ranker).fit(X, [[1, 2, 3], [1, 2]] * 3)
    expected = clone(ranker).fit(X, Y).predict(X)
    np.testing.assert_array_equal(clone(ranker).fit(X, Y.astype(object)).predict(X), expected)


def test_structured_svm_score_refuses_class_labels_of_another_shape():
    """A (15, 2) y was flattened to 30 labels and scored without a word, a (30, 2) one called
    "60 rows" (probe BK): class labels are 1-D or one column, as StructuredRidge.score says."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    model = StructuredSVM(space="multiclass", max_iter=5).fit(X, y)
    for bad in (y.reshape(15, 2), np.c_[y, y]):
        with pytest.raises(ValueError, match=r"y must be a 1-D array of class labels, got shape"):
            model.score(X, bad)
    assert model.score(X, y.reshape(-1, 1)) == model.score(X, y)


def test_structured_svm_sampled_decoding_on_an_uncounted_space_names_decoding():
    """DAGSubsets has no uniform sampler: the core's words pointed at another estimator and named
    neither decoding nor the way out (probe BN)."""
    dag = combpred.spaces.DAGSubsets([[], [0], [0], [1, 2]])
    Y = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0]] * 10)
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match=r"decoding='sampled' .* no uniform sampler .* use decoding='exact'"):
        StructuredSVM(space=dag, decoding="sampled").fit(X, Y)
    StructuredSVM(space=dag, decoding="exact", max_iter=3).fit(X, Y)


@pytest.mark.parametrize("n_jobs", [2**70, 2**31, -(2**70)])
def test_knn_takes_any_number_of_jobs(n_jobs):
    """joblib refused n_jobs above 500,000 at the first predict ('Numeric literal ... is too large'),
    naming no parameter; more jobs than cores now use every core."""
    X, Y = _rankings()
    want = KNNBordaRanker().fit(X, Y).predict(X)
    np.testing.assert_array_equal(KNNBordaRanker(n_jobs=n_jobs).fit(X, Y).predict(X), want)


@pytest.mark.parametrize("p", [1e-3, 1e308])
def test_knn_refuses_a_minkowski_p_whose_distances_overflow(p):
    """p = 1e308 gave every distance 0 (every query the same neighbours, silently); at p = 1e-3 the
    root overflowed and the message blamed X's scale."""
    X, Y = _rankings(n=50)
    with pytest.raises(
        ValueError, match=rf"p={re.escape(repr(p))}: the Minkowski distances .* overflow float64.*nearer 2"
    ):
        KNNBordaRanker(n_neighbors=5, p=p).fit(X, Y)
    # p far from 2 whose distances stay finite still ranks, as Chebyshev's limit does at a large p
    far = KNNBordaRanker(n_neighbors=5, p=200.0).fit(X, Y).predict(X)
    np.testing.assert_array_equal(far, KNNBordaRanker(n_neighbors=5, metric="chebyshev").fit(X, Y).predict(X))


def test_pairwise_sample_weight_for_a_classifier_that_cannot_take_it_is_named():
    """KNeighborsClassifier's own TypeError named neither PairwiseRanker nor sample_weight, and a
    Pipeline's advice (step__sample_weight) cannot be followed through PairwiseRanker.fit (probe 84)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, Y = _rankings(n=40)
    w = np.linspace(0.5, 2.0, 40)
    with pytest.raises(ValueError, match=r"KNeighborsClassifier\.fit takes no sample_weight"):
        PairwiseRanker(KNeighborsClassifier()).fit(X, Y, sample_weight=w)
    with pytest.raises(ValueError, match=r"a Pipeline takes fit parameters by step"):
        PairwiseRanker(make_pipeline(StandardScaler(), LogisticRegression())).fit(X, Y, sample_weight=w)
    PairwiseRanker(KNeighborsClassifier()).fit(X, Y)  # without weights, as before
    PairwiseRanker().fit(X, Y, sample_weight=w)


@pytest.mark.parametrize("space", [spaces.Ordinal(3), spaces.Multiclass(3)])
def test_one_label_spaces_ask_for_a_1d_y(space):
    """StructuredSVM and Space.validate asked for "shape (n_samples, 1)", the column vector
    scikit-learn warns against, where StructuredRidge asks for a 1-D y and says what an entry is
    (probe 84)."""
    X = np.random.default_rng(0).normal(size=(20, 3))
    Y = np.zeros((20, 2), dtype=int)
    what = re.escape(space._one_target)
    with pytest.raises(
        ValueError, match=rf"^y has shape \(20, 2\): space={re.escape(repr(space))} takes a 1-D y, one {what}"
    ):
        StructuredSVM(space=space).fit(X, Y)
    with pytest.raises(
        ValueError, match=rf"^Y must be 1-D, one {what} per sample, for {re.escape(repr(space))}, got shape \(20, 2\)$"
    ):
        space.validate(Y)


def test_structured_svm_fitted_on_a_sparse_y_predicts_csr():
    """It predicted a dense array, where StructuredRidge, ProbabilisticStructured and scikit-learn's
    OneVsRestClassifier predict CSR from a sparse Y (probe 84)."""
    from scipy import sparse

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (X @ rng.normal(size=(3, 5)) > 0).astype(int)
    dense = StructuredSVM(space="multilabel", random_state=0).fit(X, Y)
    sparse_model = StructuredSVM(space="multilabel", random_state=0).fit(X, sparse.csr_matrix(Y))
    assert not dense.sparse_output_ and sparse_model.sparse_output_
    pred = sparse_model.predict(X)
    assert sparse.issparse(pred) and pred.format == "csr"
    np.testing.assert_array_equal(pred.toarray(), dense.predict(X))
    assert sparse_model.score(X, Y) == dense.score(X, Y)
