"""Pickling: fitted models travel as their versioned bytes and predict bit for bit the same."""

from __future__ import annotations

import copy
import gc
import pickle

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, spaces
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


def _lin_kernel(A, B):
    return A @ B.T


@pytest.mark.parametrize(
    "make, params",
    [
        (lambda: StructuredRidge(space=spaces.Permutations(4), kernel="rbf"), dict(kernel=_lin_kernel)),
        (lambda: StructuredRidge(space=spaces.Permutations(4), kernel=_lin_kernel), dict(kernel="rbf")),
        (
            lambda: StructuredRidge(space=spaces.Permutations(4), kernel=_lin_kernel, n_components=10),
            dict(kernel="linear"),
        ),
        (lambda: StructuredRidge(space=spaces.Permutations(4)), dict(kernel=_lin_kernel)),
        (lambda: StructuredRidge(space=spaces.Permutations(4)), dict(space="multiclass")),
        (lambda: ProbabilisticStructured(space=spaces.Permutations(4)), dict(space="multiclass")),
    ],
    ids=[
        "rbf-then-callable",
        "callable-then-rbf",
        "callable-nystroem-then-linear",
        "linear-then-callable",
        "space-then-multiclass",
        "prob-space-then-multiclass",
    ],
)
def test_a_model_pickles_after_set_params(make, params):
    """set_params after a fit changes the parameters, not the model, which predicts as fitted: its
    pickle was written but refused on load as 'altered' (the checks read kernel and space from the
    parameters), and deepcopy failed alike (probe AW)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = spaces.Permutations(4).sample(30, random_state=0)
    model = make().fit(X, Y)
    scores = model.decision_function(X)
    model.set_params(**params)
    for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        np.testing.assert_array_equal(copied.decision_function(X), scores)


def test_model_bytes_of_another_kernel_are_refused(multilabel_data):
    """Bytes of an rbf model under a linear model's pickled attributes loaded and kept the linear
    coef_, so that X @ coef_.T + intercept_ was not what predict computed (probe AW)."""
    X, Y, _, _ = multilabel_data
    linear, rbf = StructuredRidge().fit(X, Y), StructuredRidge(kernel="rbf").fit(X, Y)
    for a, b in ((linear, rbf), (rbf, linear)):
        state = dict(a.__getstate__())
        key = next(k for k in state if k.startswith("_model"))
        state[key] = b.__getstate__()[key]
        swapped = StructuredRidge.__new__(StructuredRidge)
        with pytest.raises(ValueError, match="inconsistent pickle .* model of kernel .* coef_; the pickle was altered"):
            swapped.__setstate__(state)
            swapped.decision_function(X)


@pytest.mark.parametrize("estimator", [StructuredRidge(), ProbabilisticStructured()], ids=repr)
def test_coefficients_are_read_only(multilabel_data, estimator):
    """An edit of coef_ (in place or a new array) changed no prediction, since the model predicts
    from its own copy, and a pickle round trip undid it silently (probe AW): both are refused."""
    X, Y, _, _ = multilabel_data
    model = estimator.fit(X, Y)
    scores = model.decision_function(X)
    with pytest.raises(ValueError, match="read-only"):
        model.coef_[:] = 0
    for name in ("coef_", "intercept_"):
        with pytest.raises(AttributeError, match=f"{name} is read from the fitted model"):
            setattr(model, name, np.zeros_like(getattr(model, name)))
    np.testing.assert_array_equal(model.decision_function(X), scores)
    np.testing.assert_allclose(X @ model.coef_.T + model.intercept_, scores, rtol=1e-10, atol=1e-12)
    assert not pickle.loads(pickle.dumps(model)).coef_.flags.writeable


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_fitted_state_beside_the_model_is_read_only(estimator):
    """A live edit of space_ or classes_ on a fitted estimator made predictions of another model:
    a Permutations model with space_ = Multiclass(3) returned class ids, a reversed classes_
    relabelled every prediction, classes_[0] = 5 in place likewise (probe DK). Setting, deleting
    and editing them in place are refused; a refit and a pickle round trip still work."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.arange(30) % 3
    model = estimator(space="multiclass").fit(X, y)
    predicted = model.predict(X)
    edits = {
        "space_": spaces.Permutations(4),
        "classes_": model.classes_[::-1].copy(),
        "sparse_output_": True,
        "n_features_in_": "3",
    }
    for name, value in edits.items():
        with pytest.raises(AttributeError, match=f"{name} is part of the fitted model of this {estimator.__name__}"):
            setattr(model, name, value)
        with pytest.raises(AttributeError, match=f"{name} is part of the fitted model"):
            delattr(model, name)
    with pytest.raises(ValueError, match="read-only"):
        model.classes_[0] = 5
    np.testing.assert_array_equal(model.predict(X), predicted)
    assert not pickle.loads(pickle.dumps(model)).classes_.flags.writeable
    model.fit(X, (y + 1) % 3)  # a refit replaces them
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    model.set_params(space=spaces.Permutations(3))
    model.fit(X, np.argsort(X, axis=1) + 1)
    assert isinstance(model.space_, spaces.Permutations)


def test_callable_kernel_training_inputs_are_read_only_and_checked_in_pickles():
    """X_fit_ of an exact callable-kernel model is read-only like the model's arrays, and a pickle
    whose Nyström map holds NaN is refused as altered (it was blamed on the user's X at predict)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 3))
    Y = (X > 0).astype(int)
    exact = StructuredRidge(kernel=_linear_kernel).fit(X, Y)
    with pytest.raises(ValueError, match="read-only"):
        exact.X_fit_[0, 0] = 1.0
    with pytest.raises(AttributeError, match="X_fit_ is part of the fitted model"):
        exact.X_fit_ = exact.X_fit_[:-1]
    state = StructuredRidge(kernel=_linear_kernel, n_components=10).fit(X, Y).__getstate__()
    kernel = copy.copy(state["_callable"])
    kernel.projection = kernel.projection * np.nan
    state["_callable"] = kernel
    with pytest.raises(ValueError, match="Nyström map hold values that are not finite float64; the pickle was altered"):
        StructuredRidge.__new__(StructuredRidge).__setstate__(state)


def _linear_kernel(A, B):
    return A @ B.T


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_core_handles_copy_and_pickle_without_a_second_owner(estimator):
    """copy.copy and pickle of a ``_core.Model`` made a second owner of its Go handle, whose
    ``__del__`` freed it under the first (probe CQ): a copy is now the object itself, a pickle its
    checked bytes, and a space handle refuses pickling (its number means nothing elsewhere)."""

    X = np.random.default_rng(0).normal(size=(20, 3))
    Y = (X > 0).astype(int)
    model = estimator(space="multilabel").fit(X, Y)
    core = model._model
    assert copy.copy(core) is core and copy.deepcopy(core) is core
    again = pickle.loads(pickle.dumps(core))
    assert again.value != core.value
    np.testing.assert_array_equal(again.decision(X), core.decision(X))
    space = core.space()
    assert copy.copy(space) is space and copy.deepcopy(space) is space
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(space)
    del again, space
    gc.collect()
    np.testing.assert_array_equal(model.predict(X), estimator(space="multilabel").fit(X, Y).predict(X))
