"""StructuredRidge beyond one batch solve: partial_fit, warm starts, SGD and Nyström maps."""

import pickle

import numpy as np
import pytest
from combpred import StructuredRidge, _core, _estimator_base, spaces


@pytest.fixture(scope="module")
def multilabel_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    W = rng.normal(size=(6, 4))
    Y = (X @ W + 0.3 * rng.normal(size=(600, 4)) > 0).astype(int)
    return X, Y


@pytest.mark.parametrize("n_chunks", [1, 3, 7])
def test_partial_fit_over_chunks_equals_one_exact_fit(multilabel_data, n_chunks):
    X, Y = multilabel_data
    w = np.random.default_rng(1).uniform(0.5, 2, size=len(X))
    full = StructuredRidge(solver="exact").fit(X, Y, sample_weight=w)
    stream = StructuredRidge(solver="exact")
    for chunk in np.array_split(np.arange(len(X)), n_chunks):
        stream.partial_fit(X[chunk], Y[chunk], sample_weight=w[chunk])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stream.intercept_, full.intercept_, rtol=1e-9, atol=1e-12)
    assert stream.n_samples_seen_ == len(X)


def test_partial_fit_continues_after_pickling(multilabel_data):
    X, Y = multilabel_data
    straight = StructuredRidge().partial_fit(X[:300], Y[:300]).partial_fit(X[300:], Y[300:])
    resumed = pickle.loads(pickle.dumps(StructuredRidge().partial_fit(X[:300], Y[:300])))
    resumed.partial_fit(X[300:], Y[300:])
    np.testing.assert_array_equal(resumed.coef_, straight.coef_)


def test_partial_fit_multiclass_needs_all_classes_first():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    with pytest.raises(ValueError, match="classes must be given"):
        StructuredRidge(space="multiclass").partial_fit(X, y)
    model = StructuredRidge(space="multiclass")
    first = y[:50] != "c"  # the first chunk lacks a class
    model.partial_fit(X[:50][first], y[:50][first], classes=["a", "b", "c"])
    model.partial_fit(X[50:], y[50:])
    full = StructuredRidge(space="multiclass", solver="exact").fit(
        np.vstack([X[:50][first], X[50:]]), np.concatenate([y[:50][first], y[50:]])
    )
    np.testing.assert_allclose(model.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="not in classes"):
        model.partial_fit(X[:5], ["a", "b", "z", "a", "b"])


def test_partial_fit_refuses_classes_it_would_ignore(multilabel_data):
    """classes was "ignored afterwards" and, for a space object, ignored from the start: different
    labels on a later call passed without a word (scikit-learn refuses them), and a Multiclass(3)
    object given classes=["x", "y", "z"] predicted 0, 1, 2."""
    X, Y = multilabel_data
    y = np.array([3, 7, 9])[np.argmax(X[:, :3], axis=1)]
    model = StructuredRidge(space="multiclass").partial_fit(X[:100], y[:100], classes=[9, 3, 7])
    model.partial_fit(X[100:200], y[100:200], classes=[3, 7, 9])  # the same labels, in any order
    model.partial_fit(X[200:300], y[200:300])
    with pytest.raises(ValueError, match=r"classes=\[3, 7\] differs from the model's classes_ \[3, 7, 9\]"):
        model.partial_fit(X[300:], y[300:], classes=[3, 7])
    with pytest.raises(
        ValueError, match=r"space=Multiclass\(3\) predicts the labels \[0, 1, 2\], got \['x', 'y', 'z'\]"
    ):
        StructuredRidge(space=spaces.Multiclass(3)).partial_fit(X, np.argmax(X[:, :3], axis=1), classes=["x", "y", "z"])
    with pytest.raises(ValueError, match=r"space=Permutations\(3\) has no class labels"):
        ranks = np.argsort(np.argsort(-X[:, :3], axis=1), axis=1) + 1
        StructuredRidge(space=spaces.Permutations(3)).partial_fit(X, ranks, classes=[1, 2, 3])
    labels = list(range(Y.shape[1]))
    assert StructuredRidge().partial_fit(X, Y, classes=labels[::-1]).classes_.tolist() == labels  # Y's columns
    assert StructuredRidge().partial_fit(X, Y, classes=[1, 0]).classes_.tolist() == labels  # a label's values
    with pytest.raises(ValueError, match="predicts the labels"):
        StructuredRidge().partial_fit(X, Y, classes=labels[:-1])


def test_partial_fit_rejects_a_changed_feature_count(multilabel_data):
    X, Y = multilabel_data
    model = StructuredRidge().partial_fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :4], Y)


def test_sgd_reaches_the_exact_optimum(multilabel_data):
    X, Y = multilabel_data
    exact = StructuredRidge(solver="exact").fit(X, Y)
    sgd = StructuredRidge(solver="sgd", max_iter=60, tol=1e-12, random_state=0).fit(X, Y)
    j0 = StructuredRidge(alpha=1e12).fit(X, Y).objective_  # J at W ≈ 0, the scale of the gap
    assert (sgd.objective_ - exact.objective_) / (j0 - exact.objective_) < 1e-3
    again = StructuredRidge(solver="sgd", max_iter=60, tol=1e-12, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(sgd.coef_, again.coef_)


def test_warm_start_needs_fewer_iterations_along_an_alpha_path(multilabel_data):
    X, Y = multilabel_data
    cold = StructuredRidge(solver="cg", alpha=1.1).fit(X, Y)
    warm = StructuredRidge(solver="cg", warm_start=True).fit(X, Y)
    warm.set_params(alpha=1.1).fit(X, Y)
    assert warm.n_iter_ < cold.n_iter_
    np.testing.assert_allclose(warm.coef_, cold.coef_, rtol=1e-6, atol=1e-8)


def test_nystrom_with_every_sample_as_landmark_equals_the_kernel_model():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 4))
    Y = (X[:, :3] > 0).astype(int)
    full = StructuredRidge(kernel="rbf", gamma=0.3, tol=1e-12).fit(X, Y)
    mapped = StructuredRidge(kernel="rbf", gamma=0.3, n_components=80, tol=1e-12, random_state=0).fit(X, Y)
    assert mapped.n_components_ == 80
    Xt = rng.normal(size=(20, 4))
    np.testing.assert_allclose(mapped.decision_function(Xt), full.decision_function(Xt), atol=1e-6)


def test_nystrom_leaves_out_the_landmarks_it_cannot_resolve():
    # Every row twice, every landmark drawn: the map keeps one of each pair and is the kernel
    # model's all the same. A degree-2 polynomial kernel on 3 features has rank 10.
    rng = np.random.default_rng(5)
    X = np.repeat(rng.normal(size=(40, 3)), 2, axis=0)
    Y = (X > 0).astype(int)
    full = StructuredRidge(kernel="rbf", gamma=0.3, tol=1e-12).fit(X, Y)
    mapped = StructuredRidge(kernel="rbf", gamma=0.3, n_components=80, tol=1e-12, random_state=0).fit(X, Y)
    assert mapped.n_components_ == 40
    Xt = rng.normal(size=(20, 3))
    np.testing.assert_allclose(mapped.decision_function(Xt), full.decision_function(Xt), atol=1e-6)
    Xp = rng.normal(size=(100, 3))
    poly = StructuredRidge(kernel="poly", degree=2, gamma=0.5, coef0=1.0, n_components=60, random_state=0)
    assert poly.fit(Xp, (Xp > 0).astype(int)).n_components_ == 10


def test_nystrom_trains_a_kernel_model_on_many_samples():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20000, 5))
    Y = (np.sin(X[:, :3]) + 0.1 * rng.normal(size=(20000, 3)) > 0).astype(int)
    model = StructuredRidge(kernel="rbf", gamma=0.2, n_components=200, random_state=0).fit(X, Y)
    assert model.score(X[:2000], Y[:2000]) > 0.9


def test_streaming_parameters_are_validated(multilabel_data):
    X, Y = multilabel_data
    for params, match in [({"n_components": 0}, "n_components"), ({"tau": 0}, "tau"), ({"eta0": -1.0}, "eta0")]:
        with pytest.raises(ValueError, match=match):
            StructuredRidge(kernel="rbf", **params).fit(X, Y)
    assert not hasattr(StructuredRidge(kernel="precomputed"), "partial_fit")  # its expansion lives on the fit samples


def test_partial_fit_is_offered_exactly_where_it_runs(multilabel_data):
    """A kernel expansion with solver='exact' was offered partial_fit, whose every call failed
    (probe Z); the core's rule (cp_ridge_check_partial_fit) now decides what is offered, without
    drawing from a RandomState. An invalid parameter leaves it offered: partial_fit names it."""
    X, Y = multilabel_data
    state = np.random.RandomState(0)
    refused = [
        ({"kernel": "rbf", "solver": "exact"}, 'without n_components uses solver="sgd"'),
        ({"kernel": "poly", "solver": "exact"}, 'without n_components uses solver="sgd"'),
        ({"solver": "cg"}, "not by cg"),
        ({"kernel": "rbf", "n_components": 20, "solver": "cg"}, "not by cg"),
        ({"kernel": "precomputed"}, "precomputed kernels"),
        ({"solver": "sgd", "empirical_weight": 0.5}, "empirical_weight > 0"),
        ({"kernel": "rbf", "empirical_weight": 0.5}, "empirical_weight > 0"),
    ]
    for params, reason in refused:
        model = StructuredRidge(random_state=state, **params)
        assert not hasattr(model, "partial_fit"), params
        with pytest.raises(AttributeError) as info:
            model.partial_fit  # noqa: B018
        assert reason in str(info.value.__cause__), (params, info.value.__cause__)
    assert state.randint(1 << 30) == np.random.RandomState(0).randint(1 << 30)  # nothing drawn
    offered = [{}, {"solver": "sgd"}, {"kernel": "rbf"}, {"kernel": "rbf", "n_components": 20, "solver": "exact"}]
    for params in offered:
        StructuredRidge(**params).partial_fit(X[:50], Y[:50]).partial_fit(X[50:100], Y[50:100])
    with pytest.raises(ValueError, match="alpha"):
        StructuredRidge(alpha="big").partial_fit(X, Y)
    # Values scikit-learn's constraints let through and the core refuses: partial_fit was hidden
    # behind an AttributeError, where fit names them.
    for params, name in [({"alpha": 1e308}, "alpha"), ({"tol": None}, "tol")]:
        model = StructuredRidge(**params)
        assert hasattr(model, "partial_fit"), params
        with pytest.raises(ValueError, match=name):
            model.partial_fit(X, Y)
        with pytest.raises(ValueError, match=name):
            StructuredRidge(**params).fit(X, Y)
    assert _core.ridge_check_partial_fit(b"alpha=-1") is None  # partial_fit's call names it


def test_a_continued_partial_fit_checks_and_applies_what_the_first_call_does(multilabel_data):
    # The calls after the first accepted a decision rule the space has not (predict refused it
    # later) and n_jobs=0, and left the thread count as it was.
    X, Y = multilabel_data
    for params, name in [({"decision": "kendall"}, "kendall"), ({"n_jobs": 0}, "n_jobs")]:
        model = StructuredRidge().partial_fit(X[:50], Y[:50])
        with pytest.raises(ValueError, match=name):
            StructuredRidge(**params).partial_fit(X[:50], Y[:50])
        model.set_params(**params)
        with pytest.raises(ValueError, match=name):
            model.partial_fit(X[50:100], Y[50:100])
    try:
        model = StructuredRidge(n_jobs=1).partial_fit(X[:50], Y[:50])
        assert _core.get_threads() == 1
        model.set_params(n_jobs=2).partial_fit(X[50:100], Y[50:100])
        assert _core.get_threads() == 2
    finally:
        _estimator_base.set_threads(None)


def test_partial_fit_ignores_a_parameter_its_kernel_ignores(multilabel_data):
    # degree is documented as ignored by the rbf kernel (fit ignores it), but a continued
    # partial_fit refused a changed degree as a changed kernel.
    X, Y = multilabel_data
    kept = StructuredRidge(kernel="rbf", n_components=30, random_state=0).partial_fit(X[:200], Y[:200])
    changed = pickle.loads(pickle.dumps(kept)).set_params(degree=5, coef0=3.0)
    kept.partial_fit(X[200:], Y[200:])
    changed.partial_fit(X[200:], Y[200:])
    np.testing.assert_array_equal(changed.decision_function(X), kept.decision_function(X))
    with pytest.raises(ValueError, match="must stay those of the model"):
        changed.set_params(gamma=0.5).partial_fit(X[:10], Y[:10])


def test_permutations_stream(multilabel_data):
    X, _ = multilabel_data
    space = spaces.Permutations(4)
    Y = space.decode(X @ np.random.default_rng(5).normal(size=(6, space.dim)))
    full = StructuredRidge(space=space, solver="exact").fit(X, Y)
    stream = StructuredRidge(space=space, solver="exact").partial_fit(X[:250], Y[:250]).partial_fit(X[250:], Y[250:])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-9, atol=1e-12)


def test_sgd_without_tolerance_stop(multilabel_data, capsys):
    """tol=None runs every epoch and evaluates J once, at the end (the same J as with a tolerance
    that never stops the fit); verbose output still has J after every epoch."""
    X, Y = multilabel_data
    params = {"kernel": "rbf", "solver": "sgd", "max_iter": 4, "random_state": 0}
    free = StructuredRidge(tol=None, **params).fit(X, Y)
    stopped = StructuredRidge(tol=1e-15, **params).fit(X, Y)
    assert free.n_iter_ == 4
    assert free.objective_ == pytest.approx(stopped.objective_, rel=1e-12)
    np.testing.assert_allclose(free.decision_function(X), stopped.decision_function(X), rtol=1e-10, atol=1e-12)
    assert capsys.readouterr().err == ""
    StructuredRidge(tol=None, verbose=1, **params).fit(X, Y)
    lines = [line for line in capsys.readouterr().err.splitlines() if "objective" in line]
    assert len(lines) == 4 and "nan" not in " ".join(lines).lower()
    for solver in ("auto", "exact", "cg"):
        with pytest.raises(ValueError, match=f"tol=None \\(no tolerance stop\\) needs solver sgd, got solver {solver}"):
            StructuredRidge(tol=None, solver=solver).fit(X, Y)


def test_partial_fit_refuses_a_changed_space():
    # The next chunk used to be validated against the old space, with a message about its labels.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = StructuredRidge().partial_fit(X, (X > 0).astype(int))
    model.partial_fit(X, (X < 0).astype(int))  # the same space (named) continues
    with pytest.raises(ValueError, match=r"^partial_fit: space must stay that of the model \(Multilabel\(3\)\)"):
        model.set_params(space="permutations").partial_fit(X, np.argsort(X, axis=1) + 1)
    model = StructuredRidge(space=spaces.Multilabel(3)).partial_fit(X, (X > 0).astype(int))
    model.set_params(space=spaces.Multilabel(3)).partial_fit(X, (X > 0).astype(int))  # an equal object continues


def _rbf(A, B, gamma=0.5):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("kernel", ["rbf", _rbf])
def test_partial_fit_refuses_a_changed_n_components(kernel):
    # The Nyström map is the first chunk's: a new n_components used to be ignored in silence. The
    # request is what must stay, also when the first chunk had fewer rows and gave fewer landmarks,
    # and it survives pickling.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    Y = (X + rng.normal(size=X.shape) > 0).astype(int)
    model = StructuredRidge(kernel=kernel, n_components=15, random_state=0).partial_fit(X[:10], Y[:10])
    model = pickle.loads(pickle.dumps(model))
    model.partial_fit(X[10:30], Y[10:30])  # the same request continues
    for k in (10, 20):
        with pytest.raises(
            ValueError, match=rf"^partial_fit: n_components must stay that of the model \(15\), got {k}"
        ):
            model.set_params(n_components=k).partial_fit(X[30:], Y[30:])
    whole = model.set_params(n_components=15).partial_fit(X[30:], Y[30:])
    assert whole.predict(X).shape == Y.shape


def test_kernel_sgd_warm_start_on_other_inputs_starts_cold():
    """warm_start applies to kernel models on the same X: kernel SGD refitted on another data set
    joined the first one's expansion (its rows stayed in the model, the pickle doubled) and kept
    its decayed steps (J 14.359 after 300 epochs against 14.035). It now fits as a cold start does,
    as kernel CG always has."""
    rng = np.random.default_rng(1)
    X1, X2 = rng.normal(size=(100, 5)), rng.normal(size=(100, 5))
    Y1, Y2 = ((X @ rng.normal(size=(5, 4)) > 0).astype(int) for X in (X1, X2))
    params = dict(kernel="rbf", solver="sgd", random_state=0, max_iter=50, tol=None, alpha=0.1)
    cold = StructuredRidge(**params).fit(X2, Y2)
    warm = StructuredRidge(warm_start=True, **params).fit(X1, Y1).fit(X2, Y2)
    np.testing.assert_array_equal(warm.decision_function(X2), cold.decision_function(X2))
    assert warm.objective_ == cold.objective_
    # on the same inputs it still continues
    again = StructuredRidge(warm_start=True, **params).fit(X2, Y2)
    first = again.objective_
    again.fit(X2, Y2)
    assert again.objective_ <= first


def test_partial_fit_takes_a_chunk_of_zero_weights_after_the_first():
    """Rows of weight 0 count for nothing, as in fit: a streaming loop failed on a chunk whose
    weights were all zero. The first chunk still needs a positive weight (there is nothing to fit)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    Y = (X @ rng.normal(size=(3, 4)) > 0).astype(int)
    model = StructuredRidge(solver="exact").partial_fit(X[:30], Y[:30])
    before = model.coef_.copy()
    model.partial_fit(X[30:], Y[30:], sample_weight=np.zeros(30))
    np.testing.assert_array_equal(model.coef_, before)
    assert model.n_samples_seen_ == 30
    with pytest.raises(ValueError, match="at least one non-zero weight"):
        StructuredRidge(solver="exact").partial_fit(X[:30], Y[:30], sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match=r"sample_weight\[0\] = -1"):
        model.partial_fit(X[30:], Y[30:], sample_weight=-np.ones(30))


def test_partial_fit_names_where_two_taxonomies_of_one_repr_differ():
    """A taxonomy space's repr shows its node count only: the refusal of a changed space printed
    the same text twice (probe EO). It names the first node whose parents differ."""
    from combpred import spaces

    rng = np.random.default_rng(0)
    model = StructuredRidge(space=spaces.DAGPaths([[], [0], [0], [1, 2]]), solver="exact")
    model.partial_fit(rng.normal(size=(10, 2)), np.array([3] * 5 + [1] * 5))
    model.set_params(space=spaces.DAGPaths([[], [0], [0], [2, 1]]))
    with pytest.raises(
        ValueError, match=r"where node 3's parents are \(2, 1\) against the model's \(1, 2\) \(the order"
    ):
        model.partial_fit(rng.normal(size=(10, 2)), np.array([3] * 10))
    tree = spaces.Subtrees([-1, 0, 0, 1])
    model = StructuredRidge(space=tree, solver="exact").partial_fit(
        rng.normal(size=(10, 2)), tree.sample(10, random_state=0)
    )
    model.set_params(space=spaces.Subtrees([-1, 0, 0, 2]))
    with pytest.raises(ValueError, match=r"where node 3's parent is 2 against the model's 1;"):
        model.partial_fit(rng.normal(size=(10, 2)), tree.sample(10, random_state=0))
