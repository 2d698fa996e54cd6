"""StructuredRidge's reference measure (empirical_weight): the objective's expected Taylor loss over
(1 − w)·uniform + w·empirical. The Go tests check the loss against enumeration of the measure
(core/ridge/reference_test.go); these check what a user meets."""

import pickle
import warnings

import numpy as np
import pytest
from combpred import StructuredRidge, spaces
from sklearn.model_selection import GridSearchCV


def _data(m=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    Y = (X[:, :3] + rng.normal(size=(m, 3)) > 0).astype(int)
    return X, Y


def test_empirical_weight_changes_the_model_and_pickles():
    X, Y = _data()
    uniform = StructuredRidge(space="multilabel").fit(X, Y)
    empirical = StructuredRidge(space="multilabel", empirical_weight=1.0).fit(X, Y)
    assert not np.allclose(uniform.coef_, empirical.coef_, rtol=1e-3)
    back = pickle.loads(pickle.dumps(empirical))
    np.testing.assert_array_equal(back.predict_marginals(X), empirical.predict_marginals(X))
    np.testing.assert_array_equal(back.predict(X), empirical.predict(X))


def test_subtrees_empirical_marginals_are_near_the_training_frequencies():
    # On a taxonomy, the uniform measure's mean puts most nodes near 1/2 or above; the empirical
    # one starts from the node frequencies of the training structures, which a weak model returns.
    parent = np.array([-1, 0, 0, 1, 1, 2, 2])
    sp = spaces.Subtrees(parent)
    rng = np.random.default_rng(1)
    Y = np.zeros((60, 7), dtype=int)
    Y[:, 0] = 1
    Y[:, 1] = rng.random(60) < 0.3
    Y[:, 3] = Y[:, 1] & (rng.random(60) < 0.5)
    X = rng.normal(size=(60, 3))
    model = StructuredRidge(space=sp, empirical_weight=1.0, alpha=1e6).fit(X, Y)
    np.testing.assert_allclose(model.predict_marginals(X[:5]), np.tile(Y.mean(axis=0), (5, 1)), atol=1e-3)


def test_partial_fit_with_the_empirical_measure_is_exact():
    X, Y = _data(200)
    full = StructuredRidge(space="multilabel", empirical_weight=0.7, solver="exact").fit(X, Y)
    stream = StructuredRidge(space="multilabel", empirical_weight=0.7)
    for lo in range(0, 200, 70):
        stream.partial_fit(X[lo : lo + 70], Y[lo : lo + 70])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stream.predict_marginals(X), full.predict_marginals(X), rtol=1e-8, atol=1e-10)


def test_partial_fit_by_sgd_refuses_the_empirical_measure():
    with pytest.raises(AttributeError) as info:  # not offered (the core's rule), with the reason
        StructuredRidge(space="multilabel", empirical_weight=1.0, kernel="rbf").partial_fit  # noqa: B018
    assert "empirical_weight" in str(info.value.__cause__)


def test_empirical_weight_range_and_large_spaces():
    X, Y = _data()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="empirical_weight"):
            StructuredRidge(space="multilabel", empirical_weight=bad).fit(X, Y)
    Ybig = np.zeros((3, 5000), dtype=int)
    Ybig[:, :2] = 1
    with pytest.raises(ValueError, match="empirical_weight"):
        StructuredRidge(space="multilabel", empirical_weight=0.5).fit(X[:3], Ybig)


@pytest.mark.parametrize("space", [spaces.Permutations(40), spaces.DirectedCycles(40)])
def test_cg_fits_a_reference_of_few_training_structures_on_a_large_space(space):
    # d = 780 puts the preconditioner on the covariance's partial spectrum, whose rank (4) is
    # below its subspace: CG stopped before its first step, at J(0) = 2.5, with a
    # ConvergenceWarning advising max_iter or alpha.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 2))
    if isinstance(space, spaces.Permutations):
        Y = np.array([rng.permutation(40) + 1 for _ in range(5)])
    else:
        Y = np.empty((5, 40), dtype=int)
        for row in Y:
            order = rng.permutation(40)
            row[order] = np.roll(order, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cg = StructuredRidge(space=space, empirical_weight=1.0, solver="cg").fit(X, Y)
    exact = StructuredRidge(space=space, empirical_weight=1.0, solver="exact").fit(X, Y)
    assert cg.n_iter_ >= 1
    assert cg.objective_ == pytest.approx(exact.objective_, rel=1e-8)
    # Not predict: the scores lie in the span of 5 training cycles, and the many cycles they tie
    # on are told apart by rounding.
    np.testing.assert_allclose(cg.decision_function(X), exact.decision_function(X), atol=1e-6)


def test_grid_search_selects_the_reference_measure():
    X, Y = _data()
    search = GridSearchCV(StructuredRidge(space="multilabel"), {"empirical_weight": [0.0, 0.5, 1.0]}, cv=3)
    search.fit(X, Y)
    assert search.best_params_["empirical_weight"] in (0.0, 0.5, 1.0)


def test_product_reference_matches_the_empirical_one_where_the_marginals_fix_the_measure():
    # multiclass: the categorical measure with the training class rates is the empirical measure
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 4))
    y = np.argmax(X[:, :3] + rng.normal(size=(150, 3)), axis=1)
    kw = dict(space="multiclass", empirical_weight=0.8, solver="exact")
    a = StructuredRidge(reference="empirical", **kw).fit(X, y)
    b = StructuredRidge(reference="product", **kw).fit(X, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-10, atol=1e-12)


def test_product_reference_drops_the_label_correlations():
    # two perfectly correlated labels: the empirical measure's covariance couples them, the
    # product measure's is diagonal with the same label rates, so the models differ; the
    # multilabel product measure's S is diag(p(1 - p)) and its marginal estimates start at p
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    a = X[:, 0] + rng.normal(size=200) > 0.5
    Y = np.column_stack([a, a, X[:, 1] > 0]).astype(int)
    prod = StructuredRidge(space="multilabel", empirical_weight=1.0, reference="product", alpha=1e6).fit(X, Y)
    emp = StructuredRidge(space="multilabel", empirical_weight=1.0, reference="empirical").fit(X, Y)
    assert not np.allclose(
        prod.coef_, StructuredRidge(space="multilabel", empirical_weight=1.0).fit(X, Y).coef_, rtol=1e-3
    )
    assert emp.reference == "empirical"
    # a huge alpha leaves the scores near 0: the marginals are the reference's mean, the label rates
    np.testing.assert_allclose(prod.predict_marginals(X[:5]), np.tile(Y.mean(0), (5, 1)), atol=1e-4)


def test_product_reference_is_refused_by_spaces_without_it():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    Y = np.argsort(rng.normal(size=(30, 4)), axis=1) + 1
    with pytest.raises(ValueError, match='reference="product".*permutations'):
        StructuredRidge(space="permutations", empirical_weight=0.5, reference="product").fit(X, Y)
    with pytest.raises(ValueError, match="reference"):
        StructuredRidge(space="multilabel", reference="products").fit(X, (X > 0).astype(int))


def test_predict_keeps_what_every_training_structure_holds():
    # Under the empirical measure a label on in every training target has δ = 0 and no variance:
    # its score is exactly 0 and the decoder used to break the tie towards "off", so the label was
    # never predicted (and a single distinct training structure came back as another). predict
    # keeps such coordinates where the measure holds them, as predict_marginals does; the
    # decision function is left as fitted.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = (rng.random((200, 3)) > 0.5).astype(int)
    Y[:, 2] = 1
    model = StructuredRidge(empirical_weight=1.0).fit(X, Y)
    assert model.predict(X)[:, 2].all()
    assert np.abs(model.decision_function(X)[:, 2]).max() < 1e-12
    np.testing.assert_array_equal(model.predict_marginals(X)[:, 2], 1.0)

    only = np.tile([2, 3, 4, 1], (200, 1))
    ranker = StructuredRidge(space="permutations", empirical_weight=1.0).fit(X, only)
    np.testing.assert_array_equal(ranker.predict(X), only)

    dag = spaces.DAGSubsets([[], [0], [0], [1], [2]])
    Yd = np.zeros((200, 5), dtype=int)
    Yd[:, [0, 1]] = 1  # node 1 in every target
    Yd[:, 2] = X[:, 1] > 0
    Yd[:, 3] = X[:, 0] > 0
    Yd[:, 4] = Yd[:, 2] & (X[:, 2] > 0)
    assert StructuredRidge(space=dag, empirical_weight=1.0).fit(X, Yd).predict(X)[:, 1].all()


def test_decoding_the_marginals_keeps_them_too():
    # decode_from="marginals" decodes m̂ − p, also 0 along a label on in every training target.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    Y = (rng.random((120, 3)) > 0.5).astype(int)
    Y[:, 2] = 1
    model = StructuredRidge(empirical_weight=1.0, decode_from="marginals").fit(X, Y)
    assert model.predict(X)[:, 2].all()
