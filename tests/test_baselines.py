"""combpred.baselines: KNN-Borda and pairwise label rankers, and the structured SVM."""

import pickle
import warnings

import numpy as np
import pytest
from combpred import spaces
from combpred.baselines import KNNBordaRanker, PairwiseRanker, StructuredSVM
from combpred.metrics import kendall_tau, kendall_tau_scorer
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC, LinearSVC
from sklearn.utils import get_tags


def ranks_from_scores(S):
    """Rank rows (1 = highest score) from a score matrix."""
    return np.argsort(np.argsort(-S, axis=1, kind="stable"), axis=1) + 1


def linear_ranking_data(seed, n_samples, n_features, n_labels, B=None):
    rng = np.random.default_rng(seed)
    if B is None:
        B = rng.normal(size=(n_features, n_labels))
    X = rng.normal(size=(n_samples, n_features))
    return X, ranks_from_scores(X @ B), B


# ---------------------------------------------------------------------------------------------
# KNNBordaRanker
# ---------------------------------------------------------------------------------------------
def test_knn_borda_two_obvious_clusters():
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [10.2]])
    Y = np.array([[1, 2, 3]] * 3 + [[3, 2, 1]] * 3)
    model = KNNBordaRanker(n_neighbors=3).fit(X, Y)
    np.testing.assert_array_equal(model.predict([[0.05], [10.05]]), [[1, 2, 3], [3, 2, 1]])


def test_knn_borda_by_hand():
    # scikit-lr's KNeighborsLabelRanker docstring example. Query 1.1: neighbours 1, 2, 0 with
    # rankings [2,1,3], [1,2,3], [1,2,3]; Borda points n+1−r = [2,3,1]+[3,2,1]+[3,2,1] = [8,7,3]
    # → [1,2,3]. Query 2.2: neighbours 2, 3, 1: [3,2,1]+[1,3,2]+[2,3,1] = [6,8,4] → [2,1,3].
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    Y = np.array([[1, 2, 3], [2, 1, 3], [1, 2, 3], [3, 1, 2]])
    pred = KNNBordaRanker(n_neighbors=3).fit(X, Y).predict([[1.1], [2.2]])
    np.testing.assert_array_equal(pred, [[1, 2, 3], [2, 1, 3]])


def test_knn_borda_ties_go_to_the_lower_label():
    # points [3,2,1] + [2,3,1] = [5,5,2]: labels 0 and 1 tie, label 0 first
    X = np.array([[0.0], [1.0]])
    Y = np.array([[1, 2, 3], [2, 1, 3]])
    np.testing.assert_array_equal(KNNBordaRanker(n_neighbors=2).fit(X, Y).predict([[0.5]]), [[1, 2, 3]])


def test_knn_borda_distance_weights():
    X = np.array([[0.0], [1.0], [3.0]])
    Y = np.array([[1, 2, 3], [3, 2, 1], [3, 2, 1]])
    model = KNNBordaRanker(n_neighbors=3, weights="distance").fit(X, Y)
    # a query on a training point takes that point's ranking
    np.testing.assert_array_equal(model.predict([[0.0]]), [[1, 2, 3]])
    # at 0.1 the weights are 10, 1/0.9, 1/2.9: [1,2,3] dominates; uniform weights would not
    np.testing.assert_array_equal(model.predict([[0.1]]), [[1, 2, 3]])
    np.testing.assert_array_equal(KNNBordaRanker(n_neighbors=3).fit(X, Y).predict([[0.1]]), [[3, 2, 1]])


def test_knn_borda_learns_a_smooth_ranking():
    X, Y, B = linear_ranking_data(0, 600, 2, 4)
    Xt, Yt, _ = linear_ranking_data(1, 200, 2, 4, B)
    model = KNNBordaRanker(n_neighbors=7).fit(X, Y)
    assert model.score(Xt, Yt) > 0.8
    assert model.n_labels_ == 4 and model.n_features_in_ == 2


def test_knn_borda_errors():
    X = np.zeros((3, 1))
    Y = np.array([[1, 2], [2, 1], [1, 2]])
    with pytest.raises(ValueError, match="exceeds the number of training samples"):
        KNNBordaRanker(n_neighbors=4).fit(X, Y)
    with pytest.raises(ValueError, match="not a permutation"):
        KNNBordaRanker(n_neighbors=1).fit(X, [[1, 1], [2, 1], [1, 2]])
    with pytest.raises(ValueError, match="n_neighbors"):
        KNNBordaRanker(n_neighbors=0).fit(X, Y)
    with pytest.raises(ValueError, match="n_neighbors.*Got True instead"):
        KNNBordaRanker(n_neighbors=True).fit(X, Y)  # it met NearestNeighbors' "an integer is required"
    with pytest.raises(ValueError, match="weights"):
        KNNBordaRanker(weights="gaussian").fit(X, Y)
    model = KNNBordaRanker(n_neighbors=1).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((1, 2)))


# ---------------------------------------------------------------------------------------------
# PairwiseRanker
# ---------------------------------------------------------------------------------------------
def test_precomputed_inputs_cross_validate_as_the_inputs_they_stand_for():
    # neither ranker set scikit-learn's pairwise tag: cross-validation cut the rows of a distance or
    # kernel matrix but not its columns, and every fit failed (probe BD)
    from sklearn.metrics import pairwise_distances
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import KFold, cross_val_score

    X, Y, _ = linear_ranking_data(3, 120, 3, 4)
    cv = KFold(3)

    def scores(model, data):
        return cross_val_score(model, data, Y, cv=cv, scoring=kendall_tau_scorer, error_score="raise")

    np.testing.assert_allclose(
        scores(KNNBordaRanker(metric="precomputed"), pairwise_distances(X)), scores(KNNBordaRanker(), X)
    )
    np.testing.assert_allclose(
        scores(PairwiseRanker(SVC(kernel="precomputed")), rbf_kernel(X, gamma=0.5)),
        scores(PairwiseRanker(SVC(kernel="rbf", gamma=0.5)), X),
    )
    assert not get_tags(PairwiseRanker()).input_tags.pairwise and not get_tags(KNNBordaRanker()).input_tags.pairwise


def test_pairwise_ranker_recovers_a_linear_ranking():
    X, Y, B = linear_ranking_data(2, 400, 3, 5)
    Xt, Yt, _ = linear_ranking_data(3, 300, 3, 5, B)
    model = PairwiseRanker().fit(X, Y)
    assert len(model.estimators_) == 10
    np.testing.assert_array_equal(model.pairs_[:3], [[0, 1], [0, 2], [0, 3]])
    assert kendall_tau(Yt, model.predict(Xt)) > 0.9


def test_pairwise_probabilities_are_permutation_scores():
    X, Y, B = linear_ranking_data(4, 300, 3, 4)
    model = PairwiseRanker().fit(X, Y)
    P = model.predict_pair_proba(X[:20])
    assert P.shape == (20, 6) and np.all((P >= 0) & (P <= 1))
    votes = model.predict_votes(X[:20])
    np.testing.assert_allclose(votes.sum(axis=1), 6.0)  # each pair hands out one vote in total
    decoded = spaces.Permutations(4).decode(2 * P - 1)  # ψ order of Permutations = pairs_ order
    assert kendall_tau(Y[:20], decoded) > 0.8


def test_pairwise_constant_pairs_and_hard_votes():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 2))
    # label 0 always first; labels 1 and 2 ordered by the sign of x0
    Y = np.where(X[:, :1] > 0, [[1, 2, 3]], [[1, 3, 2]])
    model = PairwiseRanker().fit(X, Y)
    assert type(model.estimators_[0]).__name__ == "DummyClassifier"
    assert model.score(X, Y) > 0.95
    hard = PairwiseRanker(estimator=LinearSVC()).fit(X, Y)  # no predict_proba: 0/1 votes
    assert set(np.unique(hard.predict_pair_proba(X))) <= {0.0, 1.0}
    assert hard.score(X, Y) > 0.95


def test_pairwise_errors():
    with pytest.raises(ValueError, match="not a permutation"):
        PairwiseRanker().fit(np.zeros((2, 1)), [[1, 2, 3], [1, 2, 2]])
    with pytest.raises(ValueError, match="estimator"):
        PairwiseRanker(estimator="logistic").fit(np.zeros((2, 1)), [[1, 2], [2, 1]])
    with pytest.raises(ValueError, match="samples"):
        PairwiseRanker().fit(np.zeros((3, 1)), [[1, 2], [2, 1]])


# ---------------------------------------------------------------------------------------------
# StructuredSVM
# ---------------------------------------------------------------------------------------------
def blobs(seed, n):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [-5.0, 5.0]])
    y = rng.integers(0, 3, n)
    return centers[y] + rng.uniform(-1, 1, size=(n, 2)), y


def test_svm_separable_multiclass():
    X, y = blobs(0, 300)
    Xt, yt = blobs(1, 300)
    names = np.array(["cat", "dog", "emu"])
    model = StructuredSVM("multiclass", alpha=0.01, random_state=0).fit(X, names[y])
    np.testing.assert_array_equal(model.predict(Xt), names[yt])
    assert model.score(Xt, names[yt]) == 1.0
    assert model.coef_.shape == (3, 2) and model.intercept_.shape == (3,)
    assert model.loss_curve_[-1] < model.loss_curve_[0]
    # score compared y with the predictions by broadcasting: a column y scored its n × n
    # comparison, and one label was taken for every row
    wrong = np.where(np.arange(len(yt)) % 4 == 0, names[(yt + 1) % 3], names[yt])
    assert model.score(Xt, wrong.reshape(-1, 1)) == model.score(Xt, wrong) == np.mean(wrong == names[yt])
    with pytest.raises(ValueError, match="y has 1 rows but X has 300 rows"):
        model.score(Xt, names[yt][:1])
    # the same problem given as a space object takes y in the space's encoding (0..2)
    model = StructuredSVM(spaces.Multiclass(3), alpha=0.01, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict(Xt), yt)


@pytest.mark.parametrize("decoding", ["exact", "sampled"])
def test_svm_learns_permutations(decoding):
    X, Y, B = linear_ranking_data(6, 400, 4, 5)
    Xt, Yt, _ = linear_ranking_data(7, 200, 4, 5, B)
    model = StructuredSVM(spaces.Permutations(5), alpha=0.01, decoding=decoding, random_state=0).fit(X, Y)
    assert kendall_tau(Yt, model.predict(Xt)) > 0.85
    assert model.decision_function(Xt).shape == (200, 10)


@pytest.mark.parametrize("decoding", ["exact", "sampled"])
def test_svm_with_an_intercept_is_the_same_for_x_shifted(decoding):
    # Pegasos' steps on the raw X fell from a Kendall score of 0.85 to 0.04 on X + 1e3, without a
    # warning (probe BA): the fit now centres X, and the intercept takes the mean back
    X, Y, B = linear_ranking_data(6, 400, 4, 5)
    Xt, Yt, _ = linear_ranking_data(7, 200, 4, 5, B)
    fits = [
        StructuredSVM(spaces.Permutations(5), alpha=0.01, decoding=decoding, random_state=0).fit(X + shift, Y)
        for shift in (0.0, 1e3)
    ]
    np.testing.assert_allclose(fits[1].decision_function(Xt + 1e3), fits[0].decision_function(Xt), atol=1e-6)
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_, atol=1e-9)
    assert kendall_tau(Yt, fits[1].predict(Xt + 1e3)) > 0.85


def test_svm_hierarchy_paths():
    # leaves 3, 4 (under 1) and 2; the leaf is chosen by the largest of three linear scores
    parent = np.array([-1, 0, 0, 1, 1])
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 3))
    y = np.array([3, 4, 2])[np.argmax(X, axis=1)]
    model = StructuredSVM(spaces.HierarchyPaths(parent, leaves_only=True), alpha=0.01, random_state=0).fit(X, y)
    assert np.mean(model.predict(X) == y) > 0.9


def test_svm_dicycles_need_sampled_decoding():
    space = spaces.DirectedCycles(5)
    rng = np.random.default_rng(9)
    X = rng.uniform(size=(60, 3))
    A = rng.uniform(-1, 1, size=(3, space.dim))
    Y = space.decode(X @ A)  # routes that maximise a hidden linear policy
    with pytest.raises(ValueError, match="sampled"):
        StructuredSVM(space, decoding="exact").fit(X, Y)
    model = StructuredSVM(space, alpha=0.01, decoding="sampled", max_iter=20, random_state=0).fit(X, Y)
    space.validate(model.predict(X))
    assert model.loss_curve_[-1] < model.loss_curve_[0]


SMALL_SPACES = [
    spaces.Multiclass(4),
    spaces.Multilabel(4),
    spaces.KSubsets(5, 2),
    spaces.Ordinal(4),
    spaces.HierarchyPaths(np.array([-1, 0, 0, 1, 1, 2])),
    spaces.Subtrees(np.array([-1, 0, 0, 1, 1, 2])),
    spaces.Cliques(4),
    spaces.UndirectedCycles(5),
    spaces.Permutations(4),
]


@pytest.mark.parametrize("space", SMALL_SPACES, ids=repr)
def test_exact_loss_augmented_decoding_is_the_brute_force_maximum(space):
    # max_z Δ(y, z) + ⟨u, ψ(z)⟩ with Δ = ‖ψ(y) − ψ(z)‖²/2, by enumeration, against the decoder
    rng = np.random.default_rng(10)
    shift = StructuredSVM()._augmentation(space)
    Z = space.embed(space.enumerate())
    ys = space.sample(5, random_state=0)
    Psi = space.embed(ys)
    U = rng.normal(size=(5, space.dim))
    decoded = space.embed(space.decode(U - Psi + shift))
    for i in range(5):
        values = 0.5 * ((Z - Psi[i]) ** 2).sum(axis=1) + Z @ U[i]
        got = 0.5 * ((decoded[i] - Psi[i]) ** 2).sum() + decoded[i] @ U[i]
        assert got == pytest.approx(values.max())


@pytest.mark.parametrize("space", [spaces.PartialTournaments(3), spaces.DirectedCycles(4)], ids=repr)
def test_svm_refuses_exact_decoding_where_the_loss_is_not_linear_in_psi(space):
    # ψ ∈ {−1, 0, 1}: ‖ψ(z)‖² counts the nonzero pairs, not a linear function of ψ(z); the core
    # says so (cp_space_info: zero_one and constant_norm both false)
    with pytest.raises(ValueError, match="sampled"):
        StructuredSVM()._augmentation(space)


def test_svm_is_reproducible_and_pickles():
    X, Y, _ = linear_ranking_data(11, 100, 3, 4)
    a = StructuredSVM("permutations", decoding="sampled", n_samples=5, max_iter=5, random_state=3).fit(X, Y)
    b = StructuredSVM("permutations", decoding="sampled", n_samples=5, max_iter=5, random_state=3).fit(X, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.predict(X), a.predict(X))


@pytest.mark.parametrize("space", ["multiclass", spaces.Multiclass(3)])
def test_svm_takes_a_column_of_labels_with_scikit_learns_warning(space):
    """As StructuredRidge and scikit-learn's classifiers do (check_supervised_y_2d); it was taken
    silently."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = StructuredSVM(space=space, random_state=0).fit(X, y[:, None])
    np.testing.assert_array_equal(column.predict(X), StructuredSVM(space=space, random_state=0).fit(X, y).predict(X))


def test_svm_errors():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="alpha"):
        StructuredSVM("multiclass", alpha=0).fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="decoding"):
        StructuredSVM("multiclass", decoding="greedy").fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="only one class"):
        StructuredSVM("multiclass").fit(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="samples"):
        StructuredSVM("multiclass").fit(X, [0, 1, 0])
    with pytest.raises(ValueError, match="2-D"):
        StructuredSVM("permutations").fit(X, [1, 2, 3, 4])
    with pytest.raises(ValueError):
        StructuredSVM(spaces.Permutations(3)).fit(X[:2], [[1, 2, 3], [1, 1, 3]])  # not a ranking
    with pytest.raises(ValueError, match="space"):
        StructuredSVM("rankings").fit(X, [[1, 2]] * 4)


# ---------------------------------------------------------------------------------------------
# scikit-learn conventions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "estimator",
    [
        KNNBordaRanker(n_neighbors=3, weights="distance"),
        PairwiseRanker(estimator=LinearSVC(C=0.5)),
        StructuredSVM(spaces.Permutations(4), alpha=0.1, decoding="sampled", n_samples=7, random_state=1),
    ],
    ids=lambda e: type(e).__name__,
)
def test_clone_and_get_params(estimator):
    params = estimator.get_params(deep=False)
    twin = clone(estimator)
    assert type(twin) is type(estimator)
    for name, value in twin.get_params(deep=False).items():
        if hasattr(value, "get_params"):
            assert value.get_params() == params[name].get_params()
        else:
            assert value == params[name]
    twin.set_params(**params)
    X, Y, _ = linear_ranking_data(12, 60, 2, 4)
    twin.fit(X, Y)
    assert twin.predict(X).shape == (60, 4)
    assert not hasattr(estimator, "n_features_in_")  # cloning did not fit the original


def test_grid_search_with_a_structured_scorer():
    X, _, B = linear_ranking_data(13, 300, 2, 4)
    noise = np.random.default_rng(15).normal(scale=1.0, size=(300, 4))
    Y = ranks_from_scores(X @ B + noise)  # noisy rankings: averaging 15 neighbours beats one
    search = GridSearchCV(KNNBordaRanker(), {"n_neighbors": [1, 15]}, scoring=kendall_tau_scorer, cv=3)
    search.fit(X, Y)
    assert search.best_params_ == {"n_neighbors": 15}
    Xt, Yt, _ = linear_ranking_data(14, 100, 2, 4, B)
    assert search.score(Xt, Yt) > 0.7


@pytest.mark.parametrize("method", ["predict", "decision_function", "score"])
def test_structured_svm_before_fit_raises_not_fitted(method):
    X = np.zeros((3, 2))
    args = (X, np.zeros(3)) if method == "score" else (X,)
    with pytest.raises(NotFittedError):
        getattr(StructuredSVM(space="multiclass"), method)(*args)


def test_pairwise_ranker_validates_sample_weight():
    """Negative weights went to scikit-learn unchecked (accepted, or a bare ZeroDivisionError when
    they summed to zero); the estimators' one weight rule now names them."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    Y = spaces.Permutations(4).sample(50, random_state=0)
    for w in (-np.ones(50), np.r_[-np.ones(25), np.ones(25)], np.zeros(50), np.full(50, np.nan)):
        with pytest.raises(ValueError, match="sample_weight"):
            PairwiseRanker().fit(X, Y, sample_weight=w)
    weighted = PairwiseRanker().fit(X, Y, sample_weight=np.r_[np.ones(25), np.zeros(25)])
    first_half = PairwiseRanker().fit(X[:25], Y[:25])
    np.testing.assert_allclose(weighted.predict_pair_proba(X), first_half.predict_pair_proba(X), atol=1e-4)


def test_fit_takes_y_by_keyword_and_refuses_none():
    """The rankers named their target Y, so fit(X, y=...) (scikit-learn's keyword, used by its
    estimator checks) raised TypeError; StructuredSVM.fit(X, None) said "got shape ()"."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    Y = np.argsort(np.argsort(-X @ rng.normal(size=(2, 4)), axis=1), axis=1) + 1
    for ranker in (KNNBordaRanker(n_neighbors=3), PairwiseRanker()):
        np.testing.assert_array_equal(clone(ranker).fit(X, y=Y).predict(X), clone(ranker).fit(X, Y).predict(X))
        with pytest.raises(ValueError, match=r"X has 30 samples but y has 29|inconsistent numbers of samples"):
            clone(ranker).fit(X, Y[:-1])
    for estimator in (KNNBordaRanker(), PairwiseRanker(), StructuredSVM(space="multiclass")):
        with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
            estimator.fit(X, None)


def test_knn_borda_refuses_overflowing_distances():
    # at |x| ≈ 1e200 every distance was inf, and every query got the same arbitrary neighbours
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    Y = np.argsort(np.argsort(-X, 1), 1) + 1
    model = KNNBordaRanker(n_neighbors=5).fit(1e200 * X, Y)
    with pytest.raises(ValueError, match="distances from X row 0 to the training inputs overflow"):
        model.predict(1e200 * X)
    model.fit(1e150 * X, Y)  # large but finite distances keep the neighbours
    np.testing.assert_array_equal(model.predict(1e150 * X), KNNBordaRanker(n_neighbors=5).fit(X, Y).predict(X))


def test_pairwise_ranker_refuses_a_regressor():
    # LinearRegression passed the fit/predict check; predict then met its missing classes_
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = np.argsort(np.argsort(-X, 1), 1) + 1
    with pytest.raises(ValueError, match="estimator must be a classifier .* got LinearRegression"):
        PairwiseRanker(estimator=LinearRegression()).fit(X, Y)

    # a duck-typed classifier (no ClassifierMixin, which is_classifier needs) is still taken
    class DuckClassifier(BaseEstimator):
        def fit(self, X, y, sample_weight=None):
            self.inner_ = LogisticRegression().fit(X, y, sample_weight=sample_weight)
            self.classes_ = self.inner_.classes_
            return self

        def predict_proba(self, X):
            return self.inner_.predict_proba(X)

        def predict(self, X):
            return self.inner_.predict(X)

    ranker = PairwiseRanker(estimator=DuckClassifier()).fit(X, Y)
    np.testing.assert_array_equal(ranker.predict(X), PairwiseRanker().fit(X, Y).predict(X))


def test_structured_svm_names_overflow():
    # the decoder's "U contains NaN or infinity" named its own variable, not alpha or X
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (X > 0).astype(int)
    with pytest.raises(ValueError, match=r"StructuredSVM's (scores|weights) overflowed.*raise alpha"):
        StructuredSVM(space="multilabel", alpha=1e-308, max_iter=3, random_state=0).fit(X, Y)
    # X * 1e200 fits now: the steps are projected onto the ball that holds the minimiser
    with pytest.raises(ValueError, match=r"StructuredSVM's (scores|weights) overflowed.*scale X down"):
        StructuredSVM(space="multilabel", max_iter=2, random_state=0).fit(X * 1e307, Y)
    model = StructuredSVM(space="multilabel", max_iter=2, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="the scores of X row 0 overflow float64"):
        model.predict(np.full((3, 3), 1e308))


def test_structured_svm_takes_sparse_targets_as_the_estimators_do():
    # np.asarray of a sparse matrix is a 0-d object array: "Y must be 2-D ... got shape ()".
    from scipy import sparse

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(30, 4)), (rng.random((30, 3)) > 0.5).astype(int)
    want = StructuredSVM(max_iter=3, random_state=0).fit(X, Y).predict(X)
    for space in ("multilabel", spaces.Multilabel(3)):
        got = StructuredSVM(space=space, max_iter=3, random_state=0).fit(X, sparse.csr_array(Y)).predict(X)
        np.testing.assert_array_equal(got.toarray(), want)  # CSR, as the estimators predict


def test_a_metric_returning_nan_is_named():
    # It was reported as distances overflowing float64, blaming the scale of X.
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(20, 3)), np.array([rng.permutation(4) + 1 for _ in range(20)])
    with pytest.raises(ValueError, match="the metric returned NaN for a distance from X row 0"):
        KNNBordaRanker(metric=lambda a, b: np.nan).fit(X, Y).predict(X[:2])


def test_structured_svm_keeps_its_fitted_labels_and_is_a_classifier_on_class_labels():
    """A refit on another space kept the earlier classes_, and predict read the current space
    parameter, so after set_params it returned raw ids; on class labels it was not a classifier to
    scikit-learn (unstratified CV folds) and its two-class scores were (n, 2), which roc_auc refused."""
    from sklearn.base import is_classifier
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    labels = np.array(["a", "b", "c"])[np.argmax(X @ rng.normal(size=(3, 3)), axis=1)]
    svm = StructuredSVM(space="multiclass", random_state=0).fit(X, labels)
    assert is_classifier(svm)
    pred = svm.predict(X)
    svm.set_params(space="multilabel")
    np.testing.assert_array_equal(svm.predict(X), pred)  # the fitted space's labels
    svm.fit(X, (X > 0).astype(int))
    np.testing.assert_array_equal(svm.classes_, np.arange(3))  # the labels' indices, as StructuredRidge's
    binary = StructuredSVM(space="multiclass", random_state=0)
    y2 = np.where(X[:, 0] > 0, "yes", "no")
    assert binary.fit(X, y2).decision_function(X).shape == (90,)
    assert np.all(cross_val_score(binary, X, y2, scoring="roc_auc", cv=3) > 0.8)


def test_structured_svm_cross_validates_as_structured_ridge_on_label_sets():
    # a multi-label StructuredSVM had no classes_ (cross_val_predict(method="decision_function")
    # failed), was no classifier on a Multiclass object, and its score took sample_weight in its
    # signature only to refuse it, which made routed cross-validation's scores NaN (probe BD)
    from sklearn.base import is_classifier
    from sklearn.model_selection import KFold, cross_val_predict

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    Y = (X @ rng.normal(size=(3, 4)) > 0).astype(int)
    svm = StructuredSVM(random_state=0)
    U = cross_val_predict(svm, X, Y, cv=KFold(3), method="decision_function")
    assert U.shape == (90, 4)
    assert is_classifier(svm) and is_classifier(StructuredSVM(spaces.Multiclass(3)))
    assert not is_classifier(StructuredSVM(spaces.Permutations(3)))
    svm.fit(X, Y)
    w = rng.random(90)
    pred = svm.predict(X)
    assert svm.score(X, Y, sample_weight=w) == pytest.approx(np.average(np.mean(pred == Y, axis=1), weights=w))
    assert svm.score(X, Y) == pytest.approx(np.mean(pred == Y))
    with pytest.raises(ValueError, match="sample_weight"):
        svm.score(X, Y, sample_weight=-w)


def test_structured_svm_is_budgeted_before_numpy_allocates():
    """StructuredSVM's weights (W, its average, a step's temporaries) and the sampled maximisation's
    temporaries are checked against the memory budget first (probe J: 12,000 labels fitted a 1.15 GB
    coef_ at 3.6 GB peak under a 300 MB budget)."""
    import combpred

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(4, 200)), rng.integers(0, 2, size=(4, 2000))
    with combpred.config_context(max_memory=10**7):
        with pytest.raises(MemoryError, match=r"StructuredSVM's weights and targets: 200 features × .* d = 2000"):
            StructuredSVM(space="multilabel", max_iter=1).fit(X, Y)
        with pytest.raises(MemoryError, match=r"n_samples=1000000"):
            StructuredSVM(space="multilabel", decoding="sampled", n_samples=10**6, max_iter=1).fit(X[:, :2], Y[:, :5])
        StructuredSVM(space="multilabel", max_iter=1).fit(X[:, :2], Y[:, :5])  # small enough: fits


def test_structured_svm_ends_below_the_all_zero_model():
    """The uniform mean of the iterates, dominated by the first steps of size 1/alpha, ended at J
    above 5 at the default alpha where the all-zero model has J(0) = 2 (scores of 1e299 at alpha =
    1e-300), without a warning (probe BX). J here is the documented objective by enumeration of the
    16 label sets, without the offset's penalty (a lower bound)."""
    import itertools

    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 3))
    Y = ((X @ rng.normal(size=(3, 4)) + 0.5 * rng.normal(size=(30, 4))) > 0).astype(int)
    A = np.array(list(itertools.product([0, 1], repeat=4)), float)
    delta = 0.5 * ((Y[:, None, :] - A[None]) ** 2).sum(2)

    def J(model, alpha):
        U = model.decision_function(X)
        return np.mean(np.max(delta + U @ A.T - (U * Y).sum(1)[:, None], 1)) + alpha / 2 * (model.coef_**2).sum()

    J0 = np.mean(delta.max(1))
    for alpha in (1e-2, 1e-3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model = StructuredSVM(alpha=alpha, random_state=0).fit(X, Y)
        assert J(model, alpha) < 0.3 * J0, (alpha, J(model, alpha), J0)
    with pytest.warns(ConvergenceWarning, match="above the all-zero model's"):
        StructuredSVM(alpha=1e-4, random_state=0).fit(X, Y)


def test_structured_svm_sampled_stays_in_the_ball_and_rounding_does_not_warn():
    """Sampled decoding had no ball (J(0) unknown): alpha = 1e-12 gave coefficients of 1.6e10,
    silently; the ball now takes an upper bound of J(0) from the range of ψ's coordinates, and J is
    estimated by one set of samples. At alpha = 100 on random labels the fit is at J(0) to 1e-5
    and warned that it was above it (probe BZ)."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    s = X @ rng.normal(size=(3, 4)) + rng.normal(size=(60, 4))
    y = np.argsort(np.argsort(-s, 1), 1) + 1
    alpha = 1e-12
    model = StructuredSVM(space="permutations", alpha=alpha, decoding="sampled", random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"estimated by the sampled maximisation"):
        model.fit(X, y)
    # the ball: (alpha/2)(‖W‖² + ...) ≤ mean (‖ψ(y)‖ + √d)²/2 = 2d for ±1 coordinates (d = 6)
    assert 0.5 * alpha * (model.coef_**2).sum() <= 2 * 6 * (1 + 1e-9)
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(50, 3)), rng.integers(0, 3, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        StructuredSVM(space="multiclass", alpha=100.0, random_state=2).fit(X, y)


@pytest.mark.parametrize("decoding", ["exact", "sampled"])
def test_structured_svm_gives_the_same_bits_on_any_layout_of_X(decoding):
    # a Fortran-ordered copy of X gave coefficients 5e-15 apart at the same seed (BLAS sums in
    # another order; probe DQ); the core's estimators give the same bits, and so does it now
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 5))
    perm = spaces.Permutations(5)
    Y = perm.sample(60, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = StructuredSVM(space=perm, decoding=decoding, max_iter=5, random_state=3).fit(X, Y)
        b = StructuredSVM(space=perm, decoding=decoding, max_iter=5, random_state=3).fit(np.asfortranarray(X), Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.predict(np.asfortranarray(X)), a.predict(X))


def test_rankers_break_ties_of_totals_equal_but_for_rounding_by_the_lower_label():
    """Totals equal in exact arithmetic differ by their sums' rounding: PairwiseRanker's votes 5/3,
    2/3, 2/3 (a prior classifier's p and 1 − p) were 0.6666666666666666 and 0.6666666666666667, and
    KNN-Borda's distance-weighted 11/3, 11/3 likewise, so rounding broke the ties the docs give to the
    lower label index (probe EW)."""
    from sklearn.dummy import DummyClassifier

    Y = np.array([[1, 2, 3], [1, 2, 3], [2, 3, 1]])
    pairwise = PairwiseRanker(DummyClassifier(strategy="prior")).fit(np.zeros((3, 1)), Y)
    votes = pairwise.predict_votes([[0.0]])[0]
    assert votes[1] != votes[2]  # the rounding the ranks must not follow
    np.testing.assert_array_equal(pairwise.predict([[0.0]]), [[1, 2, 3]])
    knn = KNNBordaRanker(n_neighbors=3, weights="distance").fit(
        [[1.0], [3.0], [3.0]], [[2, 1, 3], [2, 3, 1], [1, 3, 2]]
    )
    np.testing.assert_array_equal(knn.predict([[0.0]]), [[1, 2, 3]])
    # a difference beyond the sums' rounding still orders, whichever label index is lower
    from combpred.baselines import _scores_to_ranks

    np.testing.assert_array_equal(_scores_to_ranks(np.array([[1.0, 1.0 + 1e-9, 1.0 - 1e-15, 0.5]])), [[2, 1, 3, 4]])
    # closeness does not chain: totals rising by 0.98e-12 of the largest per label tie in pairs only,
    # where grouping neighbours in sorted order tied the whole row and ranked the highest last (probe FB)
    rising = 1.0 + 0.98e-12 * np.arange(50)
    ranks = _scores_to_ranks(rising[None, :])[0]
    assert ranks[-1] <= 2 and ranks[0] >= 49
    # NaN ranks last and ±inf orders with the finite totals (a NaN or inf tolerance tied every label)
    np.testing.assert_array_equal(_scores_to_ranks(np.array([[np.nan, np.nan, 2.0, 3.0]])), [[3, 4, 2, 1]])
    np.testing.assert_array_equal(
        _scores_to_ranks(np.array([[1.0, 2.0, np.inf], [-np.inf, 1.0, 2.0]])), [[3, 2, 1], [3, 2, 1]]
    )
