"""After a fit, what an estimator offers and how it predicts follow the fit, not parameters set since
(probe CA): set_params applies at the next fit, except the query-time parameters scikit-learn's own
estimators read at predict (a k-NN model's n_neighbors and weights), which are then validated as fit
validates them. Fitted attributes are read-only where queries do not read them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from combpred import ProbabilisticStructured, StructuredRidge, spaces
from combpred.baselines import KNNBordaRanker, PairwiseRanker, StructuredSVM
from numpy.testing import assert_array_equal
from sklearn.utils._param_validation import InvalidParameterError


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4))
    return X, rng


def test_predict_proba_follows_the_fitted_space():
    # a ranking model set to space="multiclass" offered its pair signs (in [-1, 1]) as class
    # probabilities, and a classifier set to a ranking space lost predict_proba
    X, _ = _data()
    Y = spaces.Permutations(3).sample(120, random_state=1)
    ranker = ProbabilisticStructured(space=spaces.Permutations(3), alpha=0.1).fit(X, Y)
    ranker.set_params(space="multiclass")
    assert not hasattr(ranker, "predict_proba") and not hasattr(ranker, "predict_log_proba")
    classifier = ProbabilisticStructured(space="multiclass", alpha=0.1).fit(X, np.argmax(X[:, :3], axis=1))
    expected = classifier.predict_proba(X[:5])
    classifier.set_params(space=spaces.Permutations(3))
    np.testing.assert_array_equal(classifier.predict_proba(X[:5]), expected)
    np.testing.assert_allclose(expected.sum(axis=1), 1)
    assert classifier.__sklearn_tags__().estimator_type == "classifier"


def _kernel(A, B):
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def test_sparse_prediction_inputs_follow_the_fitted_kernel():
    # a linear model refused a sparse X after set_params(kernel=callable); a callable-kernel model
    # set to kernel="linear" passed a sparse X to the callable, which failed inside it
    X, _ = _data()
    Y = (X[:, :3] > 0).astype(int)
    Xs = sp.csr_matrix(X[:5])
    linear = StructuredRidge(space="multilabel").fit(X, Y)
    expected = linear.predict(X[:5])
    linear.set_params(kernel=_kernel)
    np.testing.assert_array_equal(linear.predict(Xs), expected)
    kernel_model = StructuredRidge(space="multilabel", kernel=_kernel).fit(X, Y)
    kernel_model.set_params(kernel="linear")
    with pytest.raises(TypeError, match="does not take a sparse X with a callable kernel"):
        kernel_model.predict(Xs)
    precomputed = StructuredRidge(space="multilabel", kernel="precomputed").fit(X @ X.T, Y)
    precomputed.set_params(kernel="linear")
    with pytest.raises(TypeError, match="kernel='precomputed'"):
        precomputed.predict(sp.csr_matrix(X[:5] @ X.T))


def test_n_jobs_set_after_the_fit_is_checked_as_fit_checks_it():
    # predict took int(2.5) threads, and True, where fit refuses both
    X, _ = _data()
    Y = (X[:, :3] > 0).astype(int)
    for model in (StructuredRidge(), ProbabilisticStructured(alpha=0.1)):
        model.fit(X, Y)
        for bad in (2.5, True):
            model.set_params(n_jobs=bad)
            with pytest.raises(InvalidParameterError, match="n_jobs"):
                model.predict(X[:2])
        model.set_params(n_jobs=np.int64(1))  # an integer of NumPy's is an integer
        model.predict(X[:2])


def _rankings(X, rng):
    return np.argsort(np.argsort(-(X + rng.normal(size=X.shape)), axis=1), axis=1) + 1


def test_knn_borda_reads_n_neighbors_and_weights_at_the_query():
    # n_neighbors kept its fitted value while weights was read live, an invalid value as "uniform"
    X, rng = _data()
    R = _rankings(X, rng)
    model = KNNBordaRanker(n_neighbors=3).fit(X, R)
    for params in ({"n_neighbors": 15}, {"n_neighbors": 3, "weights": "distance"}, {"n_neighbors": 120}):
        model.set_params(**params)
        fresh = KNNBordaRanker(**model.get_params()).fit(X, R)
        np.testing.assert_array_equal(model.predict(X), fresh.predict(X))
    model.set_params(n_neighbors=121)
    with pytest.raises(ValueError, match="n_neighbors=121 exceeds the number of training samples 120"):
        model.predict(X[:1])
    model.set_params(n_neighbors=3, weights="bogus")
    with pytest.raises(InvalidParameterError, match="weights"):
        model.predict(X[:1])


def _baselines():
    X, rng = _data()
    R = _rankings(X, rng)
    Y = (X[:, :3] > 0).astype(int)
    return [
        (StructuredSVM(random_state=0).fit(X, Y), "coef_", X),
        (KNNBordaRanker().fit(X, R), "Y_fit_", X),
        (PairwiseRanker().fit(X, R), "pairs_", X),
    ]


def test_baseline_fitted_attributes_are_read_only():
    # assigning coef_ (or Y_fit_, pairs_) was silently ignored: predictions read the fit's own
    for model, name, X in _baselines():
        before = model.predict(X[:5])
        with pytest.raises(AttributeError, match=f"{name} is a fitted attribute"):
            setattr(model, name, np.flip(getattr(model, name)).copy())
        with pytest.raises(AttributeError, match="n_features_in_ is a fitted attribute"):
            del model.n_features_in_  # its pickle was then refused as "altered" (probe CC)
        np.testing.assert_array_equal(model.predict(X[:5]), before)


def test_baseline_pickles_with_altered_attributes_are_refused():
    # an attribute altered in the pickle loaded, shown beside a state its queries kept using
    for model, name, X in _baselines():
        restored = pickle.loads(pickle.dumps(model))  # unaltered: loads, predicts the same
        np.testing.assert_array_equal(restored.predict(X[:5]), model.predict(X[:5]))
        state = model.__getstate__()
        state[name] = np.flip(state[name]).copy()
        altered = object.__new__(type(model))
        with pytest.raises(ValueError, match=f"{name} differs from the fitted state"):
            altered.__setstate__(state)


def test_baselines_refit_after_their_attributes_were_locked():
    # a fit forgets the previous one first, so it sets the attributes again
    X, rng = _data()
    for model, name, _ in _baselines():
        y = (X[:, :3] > 0).astype(int) if isinstance(model, StructuredSVM) else _rankings(X, rng)
        assert model.fit(X, y) is model and isinstance(getattr(model, name), np.ndarray | list | tuple)


@pytest.mark.parametrize("estimator", [StructuredRidge(alpha=0.1), ProbabilisticStructured(alpha=0.1)])
def test_score_reads_labels_as_the_fit_took_them(estimator):
    # space="multiclass" takes labels by name, and score counts one never seen as a miss; a
    # Multiclass object takes ids, and refuses any other. score read the live space parameter, so
    # set_params(space=...) after the fit turned the one into the other (probe CA)
    X, _ = _data()
    y = np.argmax(X[:, :3], axis=1)
    unseen = np.r_[y[:-1], 5]
    named = estimator.set_params(space="multiclass").fit(X, y)
    expected = named.score(X, unseen)
    assert expected < named.score(X, y)
    named.set_params(space=spaces.Multiclass(3))
    assert named.score(X, unseen) == expected
    if hasattr(named, "partial_fit"):  # a later chunk reads labels as the first did
        named.partial_fit(X, y)
        assert named.score(X, unseen) == named.score(X, y) - (named.predict(X)[-1] == y[-1]) / len(y)
    assert pickle.loads(pickle.dumps(named)).score(X, unseen) == named.score(X, unseen)
    ids = estimator.set_params(space=spaces.Multiclass(3)).fit(X, y)
    ids.set_params(space="multiclass")
    with pytest.raises(ValueError, match="label 5 at row 119, which is not in classes"):
        ids.score(X, unseen)


def test_plain_inputs_skip_scikit_learns_checks_with_the_same_result(monkeypatch):
    # a C-contiguous float64 X and integer structure rows skip validate_data (issue 18: 0.5–1 ms of
    # a yeast-sized fit); the model and the fitted attributes are those of the checked path, a
    # DataFrame's feature names are forgotten as scikit-learn forgets them, and X with NaN still
    # gets scikit-learn's message
    import pandas as pd
    from combpred import _estimator_base

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    cases = [
        (lambda: StructuredRidge(), (X[:, :3] > 0).astype(np.int64)),
        (lambda: StructuredRidge(), (X[:, :3] > 0)),  # boolean
        (lambda: StructuredRidge(), (X[:, :3] > 0).astype(np.uint8)),
        (lambda: StructuredRidge(space="permutations"), np.argsort(X[:, :4], axis=1).astype(np.int32) + 1),
        (lambda: ProbabilisticStructured(), (X[:, :3] > 0).astype(np.int64)),
    ]
    for make, Y in cases:
        fitted = []
        for plain in (True, False):
            if not plain:
                monkeypatch.setattr(_estimator_base, "_plain_fit_inputs", lambda X, y: False)
            est = make().fit(pd.DataFrame(X, columns=[f"f{j}" for j in range(5)]), Y)
            assert hasattr(est, "feature_names_in_")
            est.fit(X, Y)
            fitted.append(est)
            monkeypatch.undo()
        fast, checked = fitted
        assert not hasattr(fast, "feature_names_in_") and not hasattr(checked, "feature_names_in_")
        assert fast.n_features_in_ == checked.n_features_in_ == 5
        assert_array_equal(fast.coef_, checked.coef_)
        assert_array_equal(fast.predict(X), checked.predict(X))
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        StructuredRidge().fit(bad, (X[:, :3] > 0).astype(np.int64))
    for odd in (None, 3.0, X[0]):  # refused by scikit-learn's checks, not an IndexError of the fast path's
        with pytest.raises((ValueError, TypeError), match="array|Expected 2D|scalar|None"):
            StructuredRidge().fit(odd, (X[:, :3] > 0).astype(np.int64))


@pytest.mark.parametrize("make", [StructuredRidge, ProbabilisticStructured])
def test_a_failed_fit_leaves_no_attribute_of_its_inputs(make):
    """A refit that failed after reading X left n_features_in_, feature_names_in_ and
    sparse_output_ of that X on an unfitted estimator, describing no model (probe DC). Unfitted
    now means no fitted attribute at all; a failed partial_fit chunk keeps the model it had."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 4)), (rng.random((40, 3)) < 0.5).astype(int)
    model = make(space="multilabel").fit(X, sp.csr_matrix(Y))
    frame = pd.DataFrame(rng.normal(size=(40, 6)), columns=list("abcdef"))
    bad = Y.copy()
    bad[0, 0] = 7
    for fit in (lambda: model.fit(frame, bad), lambda: model.fit(X, Y, sample_weight=-np.ones(40))):
        with pytest.raises(ValueError):
            fit()
        assert [k for k in vars(model) if k.endswith("_") and not k.startswith("_")] == []
    if make is StructuredRidge:  # a failed first chunk, then a failed later one
        with pytest.raises(ValueError):
            model.partial_fit(frame, bad)
        assert [k for k in vars(model) if k.endswith("_") and not k.startswith("_")] == []
        model.partial_fit(X, Y)
        kept = {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}
        with pytest.raises(ValueError):
            model.partial_fit(X, bad)
        assert {k for k in vars(model) if k.endswith("_") and not k.startswith("_")} == kept.keys()
        assert model.n_features_in_ == 4 and model.n_samples_seen_ == 40
