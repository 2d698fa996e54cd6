"""Pickling: fitted models travel as their versioned bytes and predict bit for bit the same."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from combpred import StructuredRidge, spaces
from numpy.testing import assert_array_equal
from sklearn.metrics.pairwise import rbf_kernel


@pytest.mark.parametrize(
    "params",
    [
        {"space": "multilabel"},
        {"space": "multilabel", "solver": "cg", "fit_intercept": False},
        {"space": "multilabel", "kernel": "rbf", "gamma": 0.4},
        {"space": "multilabel", "kernel": "poly", "degree": 2},
        {"space": "multiclass"},
        {"space": "multiclass", "kernel": "rbf"},
        {"space": spaces.Multilabel(4)},
        {"space": spaces.Multiclass(3), "kernel": "poly"},
    ],
)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_round_trip_is_bitwise(multilabel_data, multiclass_data, params, protocol):
    multiclass = params["space"] == "multiclass" or isinstance(params["space"], spaces.Multiclass)
    X, Y, Xt, _ = multiclass_data if multiclass else multilabel_data
    model = StructuredRidge(**params).fit(X, Y)
    restored = pickle.loads(pickle.dumps(model, protocol=protocol))
    assert restored is not model
    assert restored._model.value != model._model.value  # its own Go model
    assert restored.get_params().keys() == model.get_params().keys()
    assert_array_equal(restored.predict(Xt), model.predict(Xt))
    assert_array_equal(restored.decision_function(Xt), model.decision_function(Xt))
    for name in ("n_features_in_", "n_iter_", "objective_", "relative_gradient_"):
        assert getattr(restored, name) == getattr(model, name)
    if hasattr(model, "coef_"):
        assert_array_equal(restored.coef_, model.coef_)
        assert_array_equal(restored.intercept_, model.intercept_)
    if hasattr(model, "classes_"):
        assert_array_equal(restored.classes_, model.classes_)
    assert restored.space_ == model.space_
    # pickling leaves the original fitted and intact
    assert_array_equal(model.predict(Xt), restored.predict(Xt))
    # the copy outlives the original
    expected = model.decision_function(Xt)
    del model
    assert_array_equal(restored.decision_function(Xt), expected)


def test_precomputed_round_trip(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge(kernel="precomputed").fit(rbf_kernel(X), Y)
    restored = pickle.loads(pickle.dumps(model))
    K = rbf_kernel(Xt, X)
    assert_array_equal(restored.decision_function(K), model.decision_function(K))


def test_string_labels_round_trip(multiclass_data):
    X, y, Xt, _ = multiclass_data
    names = np.array(["north", "south", "west"])
    model = StructuredRidge(space="multiclass").fit(X, names[y])
    restored = pickle.loads(pickle.dumps(model))
    assert_array_equal(restored.predict(Xt), model.predict(Xt))
    assert restored.predict(Xt).dtype == model.predict(Xt).dtype


def test_pickle_twice_and_deepcopy(multilabel_data):
    X, Y, Xt, _ = multilabel_data
    model = StructuredRidge().fit(X, Y)
    twice = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(model))))
    assert_array_equal(twice.decision_function(Xt), model.decision_function(Xt))
    copied = copy.deepcopy(model)
    assert copied._model.value != model._model.value
    assert_array_equal(copied.decision_function(Xt), model.decision_function(Xt))


def test_unfitted_round_trip():
    model = StructuredRidge(alpha=0.3, kernel="rbf", space=spaces.Multilabel(3))
    restored = pickle.loads(pickle.dumps(model))
    assert restored.get_params() == model.get_params()
    assert not hasattr(restored, "_model")


def test_spaces_pickle_by_parameters():
    space = spaces.Multilabel(4)
    space.mean()  # creates the Go handle
    restored = pickle.loads(pickle.dumps(space))
    assert restored == space
    assert "_handle_obj" not in restored.__dict__
    assert_array_equal(restored.mean(), space.mean())
    assert_array_equal(restored.covariance(), space.covariance())
