"""Decision rules from marginals (issue 13, item 2), checked against brute force: on enumerable
spaces and random distributions over all structures, the decoded structure attains the least
expected loss among all structures."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, spaces
from combpred.decision import bayes_decode
from combpred.metrics import hierarchical_loss
from numpy.testing import assert_array_equal


def _hamming(Psi_hat, Psi):
    return np.abs(Psi_hat[:, None, :] - Psi[None, :, :]).sum(axis=2)


def _kendall(Psi_hat, Psi):
    return (Psi.shape[1] - Psi_hat @ Psi.T) / 2  # discordant pairs: ψ_uv = ±1 agree or not


def _spearman(R_hat, R):
    return ((R_hat[:, None, :] - R[None, :, :]) ** 2).sum(axis=2)


def _all_structures(space):
    """space.enumerate(), or for a space without a counting formula (DAGSubsets) every 0/1 row
    that the space validates."""
    try:
        return space.enumerate()
    except ValueError:
        rows = np.array(list(itertools.product([0, 1], repeat=space.dim)))
        valid = []
        for row in rows:
            try:
                space.validate(row[None, :])
                valid.append(row)
            except ValueError:
                pass
        return np.array(valid)


def _check(space, loss, cost, rng, n_dists=25):
    Y = _all_structures(space)
    Psi = space.embed(Y).astype(float)
    Y = Y.reshape(len(Y), -1)  # the multi-class family's structures are ids (1-D)
    C = cost(Psi, Psi) if loss != "spearman" else cost(Y.astype(float), Y.astype(float))  # C[a, b] = loss(ŷ=a, y=b)
    for _ in range(n_dists):
        p = rng.dirichlet(np.full(len(Y), 0.3))
        marginals = p @ Psi
        expected = C @ p  # expected loss of each candidate
        y_hat = np.reshape(bayes_decode(space, marginals[None, :], loss)[0], -1)
        index = np.flatnonzero(np.all(Y == y_hat, axis=1))
        assert len(index) == 1, "the rule returned a structure outside the space"
        assert expected[index[0]] <= expected.min() + 1e-9, (loss, space)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Multilabel(4),
        spaces.KSubsets(5, 2),
        spaces.Subtrees(np.array([-1, 0, 0, 1, 1, 2])),
        spaces.UndirectedCycles(5),
        spaces.Cliques(4),
        # The multi-class family (ids, not rows) and DAGSubsets (no uniform sampler) were refused
        # with numpy's shape error and an unrelated counting message until the 0/1 probe embedded
        # each probe on its own and skipped sampling where the space cannot sample.
        spaces.Multiclass(4),
        spaces.Ordinal(4),
        spaces.HierarchyPaths(np.array([-1, 0, 0, 1, 1, 2])),
        spaces.DAGPaths([[], [0], [0], [1, 2]]),
        spaces.DAGSubsets([[], [0], [0], [1, 2]]),
    ],
    ids=repr,
)
def test_hamming_rule_minimises_expected_hamming_loss(space):
    _check(space, "hamming", _hamming, np.random.default_rng(0))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_kendall_rule_is_the_kemeny_ranking(n):
    _check(spaces.Permutations(n), "kendall", _kendall, np.random.default_rng(1))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_spearman_rule_sorts_expected_ranks(n):
    _check(spaces.Permutations(n), "spearman", _spearman, np.random.default_rng(2))


@pytest.mark.parametrize(
    "parent", [[-1, 0, 0, 1, 1, 2], [-1, 0, 1, 2, 0], [-1, 0, 0, 0, 1, 1, 3]], ids=lambda p: f"{len(p)} nodes"
)
@pytest.mark.parametrize("weighted", [False, True])
def test_hierarchical_rule_minimises_expected_hierarchical_loss(parent, weighted):

    space = spaces.Subtrees(np.array(parent))
    rng = np.random.default_rng(4)
    weights = rng.uniform(0.2, 2.0, size=len(parent)) if weighted else None
    Y = space.enumerate()
    C = np.array(
        [
            hierarchical_loss(Y, np.repeat(y_hat[None, :], len(Y), 0), parent, node_weights=weights, average=False)
            for y_hat in Y
        ]
    )  # C[a, b]: loss of predicting Y[a] when the truth is Y[b]
    for _ in range(25):
        p = rng.dirichlet(np.full(len(Y), 0.3))
        y_hat = bayes_decode(space, (p @ Y)[None, :], "hierarchical", node_weights=weights)[0]
        index = np.flatnonzero(np.all(Y == y_hat, axis=1))
        assert len(index) == 1
        expected = C @ p
        assert expected[index[0]] <= expected.min() + 1e-9


def _f1_loss(Psi_hat, Psi):
    inter = Psi_hat @ Psi.T
    sizes = Psi_hat.sum(axis=1)[:, None] + Psi.sum(axis=1)[None, :]
    return 1 - np.where(sizes == 0, 1.0, 2 * inter / np.maximum(sizes, 1))


@pytest.mark.parametrize("d", [1, 3, 5, 7, 10])
def test_f1_rule_maximises_expected_f1_under_independent_labels(d):
    """Brute force over all 2^d predictions and all 2^d label sets, with independent labels (the
    distribution of ProbabilisticStructured's multi-label model): the rule attains the largest E[F1]."""
    rng = np.random.default_rng(d)
    space = spaces.Multilabel(d)
    Y = space.enumerate()
    C = _f1_loss(Y.astype(float), Y.astype(float))
    for trial in range(40):
        # spread, near-0/1 and near-½ marginals, and ties
        p = [rng.uniform(size=d), rng.beta(0.2, 0.2, size=d), rng.uniform(0.4, 0.6, size=d), np.full(d, 0.3)][trial % 4]
        dist = np.prod(np.where(Y == 1, p, 1 - p), axis=1)  # P(y) for every label set
        expected = C @ dist
        y_hat = bayes_decode(space, p[None, :], "f1")[0]
        index = np.flatnonzero(np.all(Y == y_hat, axis=1))[0]
        assert expected[index] <= expected.min() + 1e-12, (p, y_hat, Y[np.argmin(expected)])
    if d >= 3:  # not Hamming's rule: labels below ½ are predicted when F1 is scored
        p = np.full((1, d), 0.45)
        assert bayes_decode(space, p, "hamming").sum() == 0 and bayes_decode(space, p, "f1").sum() > 0


def _expected_f1(p, y_hat):
    """E[F1(ŷ, y)] for independent labels y_j ~ Bernoulli(p_j), by convolving the counts of true
    labels inside and outside ŷ (an O(d²) formula of its own, not the rule's recurrences)."""

    def count_pmf(probs):
        pmf = np.array([1.0])
        for v in probs:
            pmf = np.convolve(pmf, [1 - v, v])
        return pmf

    on = np.asarray(y_hat, bool)
    inside, outside, k = count_pmf(p[on]), count_pmf(p[~on]), on.sum()
    if k == 0:
        return outside[0]  # F1 = 1 when both sets are empty, else 0
    a, b = np.arange(len(inside))[:, None], np.arange(len(outside))[None, :]
    return float((inside[:, None] * outside[None, :] * 2 * a / (k + a + b)).sum())


@pytest.mark.parametrize("d", [20, 60, 150])
def test_f1_rule_picks_the_best_top_k_set_on_many_labels(d):
    """Beyond brute force: under independence the optimum is a top-k set (Lewis 1995), so the rule
    must match the best of the d + 1 top-k sets, each scored by convolution."""
    rng = np.random.default_rng(100 + d)
    P = np.vstack([rng.uniform(size=d), rng.beta(0.2, 0.2, size=d), rng.uniform(0.05, 0.3, size=d), np.full(d, 0.2)])
    Y_hat = bayes_decode(spaces.Multilabel(d), P, "f1")
    for p, y_hat in zip(P, Y_hat, strict=True):
        order = np.argsort(-p, kind="stable")
        best = max(_expected_f1(p, np.isin(np.arange(d), order[:k])) for k in range(d + 1))
        assert _expected_f1(p, y_hat) >= best - 1e-12


def test_f1_rule_work_tables_follow_the_memory_budget():
    """Its d×d tables were allocated outside the budget (205 MB under a 2 MB max_memory at d = 800;
    40 GB at d = 50,000); now its table is refused first, naming the rule."""
    import combpred

    with combpred.config_context(max_memory=2 * 2**20), pytest.raises(MemoryError, match="decision='f1' on 800 labels"):
        bayes_decode(spaces.Multilabel(800), np.full((1, 800), 0.3), "f1")
    with combpred.config_context(max_memory=2 * 2**20):
        assert bayes_decode(spaces.Multilabel(100), np.full((1, 100), 0.3), "f1").shape == (1, 100)


def test_f1_rule_blocks_of_rows_follow_the_memory_budget():
    """One row's table fitting the budget is not enough: rows go in blocks, and a block of 200 rows
    at d = 100 held 16 MB of tables under a 2 MB max_memory. Blocks are sized from the budget now,
    with the same decisions."""
    import tracemalloc

    import combpred

    P = np.random.default_rng(0).random((200, 100))
    want = bayes_decode(spaces.Multilabel(100), P, "f1")
    with combpred.config_context(max_memory=2 * 2**20):
        tracemalloc.start()
        try:
            got = bayes_decode(spaces.Multilabel(100), P, "f1")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    np.testing.assert_array_equal(got, want)
    # The budget, plus the arrays of P's size around the tables (P checked, its order and sorted
    # copy, the decisions, the blocks' scores): 18 MB before, 4.8 MB with a second block's tables
    # allocated while the first's were still held.
    assert peak < 2 * 2**20 + 6 * P.nbytes, peak


def test_f1_rule_refuses_other_spaces():
    with pytest.raises(ValueError, match="Multilabel"):
        bayes_decode(spaces.KSubsets(4, 2), np.full((1, 4), 0.5), "f1")


def test_pair_order_is_the_one_the_rules_assume():
    # identity ranking: every pair u < v has u first (+1); label 0 last: pairs (0, v) are −1, in triu order
    space = spaces.Permutations(4)
    np.testing.assert_array_equal(space.embed([[1, 2, 3, 4]])[0], np.ones(6))
    u, v = np.triu_indices(4, 1)
    np.testing.assert_array_equal(space.embed([[4, 1, 2, 3]])[0], np.where(u == 0, -1, 1))


def test_with_a_fitted_model_the_rules_give_valid_structures():
    from combpred import ProbabilisticStructured

    rng = np.random.default_rng(3)
    space = spaces.Permutations(4)
    X = rng.normal(size=(60, 3))
    model = ProbabilisticStructured(space=space, alpha=0.01).fit(X, space.sample(60, random_state=0))
    M = model.predict_marginals(X[:5])
    for loss in ("kendall", "spearman"):
        space.validate(bayes_decode(space, M, loss))


@pytest.mark.parametrize(
    ("space", "marginals", "loss", "match"),
    [
        (spaces.Permutations(3), np.zeros((1, 3)), "hamming", "0/1"),
        (spaces.Multilabel(3), np.zeros((1, 3)), "kendall", "Permutations"),
        (spaces.Multilabel(3), np.zeros((1, 3)), "zero_one", "loss must be one of"),
        (spaces.Multilabel(3), np.zeros((1, 4)), "hamming", "shape"),
        (spaces.Multilabel(3), np.full((1, 3), np.nan), "hamming", "NaN"),
        (spaces.Multilabel(3), np.full((1, 3), 1.5), "hamming", r"\[0, 1\]"),
        (spaces.Permutations(3), np.full((1, 3), 2.0), "kendall", r"\[−1, 1\]"),
        (spaces.Multilabel(3), np.zeros((1, 3)), "hierarchical", "Subtrees"),
    ],
)
def test_bad_requests_are_refused(space, marginals, loss, match):
    with pytest.raises(ValueError, match=match):
        bayes_decode(space, marginals, loss)


def test_estimator_decision_parameter_uses_the_rule_and_is_searchable():
    """ProbabilisticStructured(decision=...) predicts the rule's structure from its own marginals,
    GridSearchCV can choose it, and a rule the space cannot take is refused at fit naming decision."""
    from combpred import ProbabilisticStructured
    from combpred.metrics import kendall_tau_scorer
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(5)
    space = spaces.Permutations(4)
    X = rng.normal(size=(80, 3))
    Y = space.sample(80, random_state=1)
    for rule in ("kendall", "spearman"):
        model = ProbabilisticStructured(space=space, alpha=0.01, decision=rule).fit(X, Y)
        np.testing.assert_array_equal(model.predict(X[:10]), bayes_decode(space, model.predict_marginals(X[:10]), rule))
    search = GridSearchCV(
        ProbabilisticStructured(space=space, alpha=0.01),
        {"decision": ["mode", "kendall"]},
        scoring=kendall_tau_scorer,
        cv=2,
    ).fit(X, Y)
    assert search.best_params_["decision"] in ("mode", "kendall")
    with pytest.raises(ValueError, match="decision='hamming'"):
        ProbabilisticStructured(space=space, decision="hamming").fit(X, Y)
    with pytest.raises(ValueError, match="decision"):
        ProbabilisticStructured(space=space, decision="f1").fit(X, Y)
    multilabel = ProbabilisticStructured(space="multilabel", alpha=0.01, decision="hamming").fit(X, (X > 0).astype(int))
    np.testing.assert_array_equal(multilabel.predict(X), (multilabel.predict_proba(X) > 0.5).astype(int))
    f1 = multilabel.set_params(decision="f1")
    np.testing.assert_array_equal(f1.predict(X), bayes_decode(f1.space_, f1.predict_marginals(X), "f1"))


@pytest.mark.parametrize(
    ("space", "rules"),
    [
        (spaces.Multilabel(4), ("hamming", "f1")),
        (spaces.Permutations(4), ("kendall", "spearman")),
        (spaces.Subtrees([-1, 0, 0, 1, 1, 2]), ("hierarchical", "hamming")),
    ],
)
@pytest.mark.parametrize("empirical_weight", [0.0, 1.0])
def test_ridge_decision_is_the_rule_on_its_marginal_estimates(space, rules, empirical_weight):
    """StructuredRidge(decision=...) predicts the rule's structure from its own predict_marginals, on
    every space a rule takes, under the uniform and the empirical reference measure; the fit is the
    same whatever the rule (only prediction depends on it)."""
    from combpred import StructuredRidge

    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 3))
    Y = space.sample(120, random_state=2)
    mode = StructuredRidge(space=space, alpha=0.1, empirical_weight=empirical_weight).fit(X, Y)
    for rule in rules:
        model = StructuredRidge(space=space, alpha=0.1, empirical_weight=empirical_weight, decision=rule).fit(X, Y)
        np.testing.assert_array_equal(model.decision_function(X), mode.decision_function(X))
        want = bayes_decode(space, model.predict_marginals(X[:20]), rule)
        np.testing.assert_array_equal(space._to_rows(model.predict(X[:20])), space._to_rows(want))


def test_ridge_hamming_rule_under_the_uniform_measure_is_the_decoded_set():
    """Under the uniform measure a label set's marginal estimates are ½ + c·u/4 (c > 0), so thresholding
    them at ½ is decoding u: decision="hamming" and "mode" agree row for row. Under the product measure
    the marginals are centred on the training rates instead, and the two differ."""
    from combpred import StructuredRidge

    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4))
    Y = (X @ rng.normal(size=(4, 6)) + rng.normal(size=(300, 6)) > 1.0).astype(int)  # rare labels
    uniform = StructuredRidge(alpha=1.0).fit(X, Y)
    np.testing.assert_array_equal(
        uniform.set_params(decision="hamming").predict(X), uniform.set_params(decision="mode").predict(X)
    )
    product = StructuredRidge(alpha=1.0, empirical_weight=1.0, reference="product").fit(X, Y)
    hamming = product.set_params(decision="hamming").predict(X)
    np.testing.assert_array_equal(hamming, (product.predict_marginals(X) > 0.5).astype(int))
    assert not np.array_equal(hamming, product.set_params(decision="mode").predict(X))


def test_ridge_decision_is_refused_at_fit_searchable_and_pickled():
    import pickle

    from combpred import StructuredRidge
    from combpred.metrics import kendall_tau_scorer
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(9)
    space = spaces.Permutations(4)
    X = rng.normal(size=(80, 3))
    Y = space.sample(80, random_state=3)
    with pytest.raises(ValueError, match="decision='hamming'"):
        StructuredRidge(space=space, decision="hamming").fit(X, Y)
    with pytest.raises(ValueError, match="decision='kendall'"):
        StructuredRidge(decision="kendall").partial_fit(X, (X > 0).astype(int))
    with pytest.raises(ValueError, match="decision"):
        StructuredRidge(space=space, decision="median").fit(X, Y)
    search = GridSearchCV(
        StructuredRidge(space=space, alpha=0.1), {"decision": ["mode", "kendall"]}, scoring=kendall_tau_scorer, cv=2
    ).fit(X, Y)
    assert search.best_params_["decision"] in ("mode", "kendall")
    model = StructuredRidge(space=space, alpha=0.1, decision="spearman").fit(X, Y)
    with pytest.raises(ValueError, match="decision='f1'"):  # set after fit: refused at predict, naming it
        model.set_params(decision="f1").predict(X)
    for bogus in (None, 3, "median"):  # not a rule at all: scikit-learn's message, as fit gives it
        with pytest.raises(ValueError, match="'decision' parameter of StructuredRidge must be a str among"):
            model.set_params(decision=bogus).predict(X)
    model.set_params(decision="spearman")
    again = pickle.loads(pickle.dumps(model))
    assert again.decision == "spearman"
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    state = model.__getstate__()
    del state["decision"]  # a pickle from before decision existed predicts as it did: the mode
    old = StructuredRidge.__new__(StructuredRidge)
    old.__setstate__(state)
    np.testing.assert_array_equal(old.predict(X), model.set_params(decision="mode").predict(X))


def test_multiclass_estimators_take_the_hamming_rule_and_return_class_labels():
    # decision="hamming" on a class-label space goes through the rule's ids, mapped to the labels.
    from combpred import ProbabilisticStructured, StructuredRidge

    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    labels = np.array(["ant", "bee", "cat"])[X[:, :3].argmax(axis=1)]
    for est in (StructuredRidge(space="multiclass"), ProbabilisticStructured(space="multiclass", max_iter=50)):
        hamming = est.set_params(decision="hamming").fit(X, labels).predict(X)
        marginals = est.predict_marginals(X)
        np.testing.assert_array_equal(hamming, est.classes_[marginals.argmax(axis=1)])
        assert (hamming == labels).mean() > 0.8


def test_binary_multiclass_space_object_gives_a_margin_like_the_string():
    # A Multiclass(2) object is tagged a classifier as space="multiclass" is, so its decision
    # function must be the margin u₁ − u₀ that scikit-learn's binary scorers read.
    from combpred import ProbabilisticStructured, StructuredRidge
    from sklearn.model_selection import cross_val_score

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    for make in (StructuredRidge, lambda **k: ProbabilisticStructured(max_iter=50, **k)):
        obj, name = make(space=spaces.Multiclass(2)).fit(X, y), make(space="multiclass").fit(X, y)
        assert obj.decision_function(X).shape == (60,)
        np.testing.assert_allclose(obj.decision_function(X), name.decision_function(X), rtol=1e-9, atol=1e-12)
        assert cross_val_score(make(space=spaces.Multiclass(2)), X, y, scoring="roc_auc", cv=3).min() > 0.8


@pytest.mark.parametrize(
    "space, loss",
    [
        (spaces.Multilabel(3), "hamming"),
        (spaces.Multilabel(3), "f1"),
        (spaces.Permutations(3), "kendall"),
        (spaces.Permutations(3), "spearman"),
        (spaces.Subtrees(np.array([-1, 0, 0])), "hierarchical"),
        (spaces.Multiclass(3), "hamming"),
    ],
    ids=str,
)
def test_zero_rows_give_zero_structures(space, loss):
    # numpy's "zero-size array to reduction operation minimum" used to come out of the range check
    decoded = bayes_decode(space, np.empty((0, space.dim)), loss)
    assert decoded.shape[0] == 0 and decoded.shape == space.decode(np.empty((0, space.dim))).shape


def test_bayes_decode_argument_errors_name_the_problem():
    subtrees = spaces.Subtrees([-1, 0, 0, 1])
    m = np.full((1, 4), 0.5)
    with pytest.raises(ValueError, match="node_weights must be finite and non-negative, got -1.0 at node 0"):
        bayes_decode(subtrees, m, "hierarchical", node_weights=[-1, 1, 1, 1])  # said "got shape (4,)"
    with pytest.raises(ValueError, match=r"node_weights must be 4 costs, one per node, got shape \(3,\)"):
        bayes_decode(subtrees, m, "hierarchical", node_weights=[1, 1, 1])
    with pytest.raises(ValueError, match="loss='hamming' takes none"):  # was ignored
        bayes_decode(spaces.Multilabel(2), np.full((1, 2), 0.5), "hamming", node_weights="garbage")
    with pytest.raises(
        ValueError, match="marginals must hold real numbers, got complex values"
    ):  # lost its imaginary part
        bayes_decode(spaces.Multilabel(2), np.array([[0.2 + 1j, 0.7]]), "hamming")
    # a column of one-coordinate marginals: the message said "got (1, 5)", a shape never passed (probe EB)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 1\), got \(5,\) \(a 1-D array is one sample's"):
        bayes_decode(spaces.Ordinal(2), np.array([0.2, 0.7, 0.9, 0.4, 0.6]), "hamming")


def test_bayes_decode_takes_sparse_marginals():
    # a scipy.sparse matrix became a 0-d object array: "marginals must hold real numbers, got dtype object"
    from scipy import sparse

    M = np.array([[0.2, 0.8, 0.5], [0.9, 0.0, 0.4]])
    for loss in ("hamming", "f1"):
        np.testing.assert_array_equal(
            bayes_decode(spaces.Multilabel(3), sparse.csr_matrix(M), loss), bayes_decode(spaces.Multilabel(3), M, loss)
        )


def test_fit_checks_the_decision_rule_without_decoding():
    """fit checked decision='f1' by decoding the space's mean: at 3,000 labels a 72 MB table (1.7 s
    and 0.8 GB at 10,000), which a 40 MB max_memory refused before a fit that needs none of it."""
    import combpred

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(20, 3)), (rng.random((20, 3000)) < 0.1).astype(np.int64)
    with combpred.config_context(max_memory=40 * 2**20):
        model = ProbabilisticStructured(space=spaces.Multilabel(3000), decision="f1").fit(X, Y)
        with pytest.raises(MemoryError, match="decision='f1' on 3000 labels"):
            model.predict(X[:1])  # predicting does need the table
    with pytest.raises(
        ValueError, match=r"decision='f1': loss='f1' needs a Multilabel space.*the rules for .*: \['hamming'"
    ):
        StructuredRidge(space=spaces.KSubsets(4, 2), decision="f1").fit(X[:, :1], np.tile([1, 1, 0, 0], (20, 1)))


def test_check_rule_names_a_space_that_is_not_one():
    from combpred.decision import check_rule

    with pytest.raises(TypeError, match="space must be a combpred.spaces.Space, got str"):
        check_rule("multilabel", "hamming")


def test_hamming_rule_is_checked_without_decoding():
    """check_rule(space, "hamming") asked whether ψ is 0/1 by decoding two score vectors and
    sampling eight structures: 0.12 s on UndirectedCycles(18) with its exact decoder, and a
    MemoryError under a small max_memory (the decoder's table is 38 MB). The core now says it of
    the space; here it agrees with the enumeration of small instances."""
    import combpred
    from combpred.decision import check_rule

    with combpred.config_context(max_memory=1 << 20):
        check_rule(spaces.UndirectedCycles(18, decoder="exact"), "hamming")
        with pytest.raises(ValueError, match="loss='hamming' needs a space whose ψ is 0/1"):
            check_rule(spaces.DirectedCycles(18, decoder="exact"), "hamming")
    for space in (
        spaces.Multilabel(3),
        spaces.Multiclass(3),
        spaces.KSubsets(4, 2),
        spaces.Ordinal(4),
        spaces.Subtrees([-1, 0, 0, 1]),
        spaces.HierarchyPaths([-1, 0, 0, 1]),
        spaces.DAGPaths([[], [0], [0], [1, 2]]),
        spaces.PartialTournaments(4),
        spaces.DirectedCycles(4),
        spaces.UndirectedCycles(4),
        spaces.Cliques(4),
    ):
        psi = space.embed(space.enumerate())
        zero_one = bool(np.all((psi == 0) | (psi == 1)))
        if zero_one:
            check_rule(space, "hamming")
        else:
            with pytest.raises(ValueError, match="needs a space whose ψ is 0/1"):
                check_rule(space, "hamming")


def test_hierarchical_rule_takes_the_root_as_certain():
    """Every rooted subtree holds the root, so E[ℓ_H] does not depend on the root's marginal; the rule
    used the marginal passed for it in its children's costs, and a root estimate of 0.2 (a per-node
    classifier's) decoded a subtree of expected loss 1.05 where 0.25 was the optimum."""
    parent = np.array([-1, 0, 0, 1])
    space = spaces.Subtrees(parent)
    Y = space.enumerate()
    p = np.zeros(len(Y))
    for row, mass in (([1, 1, 0, 1], 0.85), ([1, 1, 0, 0], 0.05), ([1, 0, 1, 0], 0.10)):
        p[np.flatnonzero((Y == row).all(1))[0]] = mass
    expected = [p @ hierarchical_loss(Y, np.repeat(y[None], len(Y), 0), parent, average=False) for y in Y]
    best = Y[int(np.argmin(expected))]
    m = p @ Y
    for root in (1.0, 0.2, 0.0):
        M = m.copy()
        M[0] = root
        assert bayes_decode(space, M[None], "hierarchical")[0].tolist() == best.tolist(), root


def test_hierarchical_rule_is_the_same_for_costs_scaled_into_subnormals():
    """One positive factor on every node cost leaves the expected losses' order as it is. Costs of
    about 1e-320 (subnormal) made the rule's products c·m lose their digits, and it decoded another
    subtree than for the same costs at scale 1, in 1 of 500 random cases (probe CS)."""
    parent = [-1, 0, 0, 1, 1, 2, 2, 3]
    space = spaces.Subtrees(np.array(parent))
    Y = space.enumerate()
    rng = np.random.default_rng(2)
    for _ in range(500):
        M = (rng.dirichlet(np.full(len(Y), 0.3)) @ Y)[None, :]
        w = rng.random(len(parent)) + 0.1
        expected = bayes_decode(space, M, "hierarchical", node_weights=w)
        for scale in (1e-320, 2.0**-1060, 1e-300, 1e300):
            assert_array_equal(bayes_decode(space, M, "hierarchical", node_weights=w * scale), expected)


def test_hierarchical_rule_is_exact_for_costs_hundreds_of_orders_apart():
    """Every cost was divided by the largest: 1e-200 beside 1e200 underflowed to 0, a tie that kept
    a node the optimum cuts (expected ℓ_H 9e-201 against 1e-201; probe DN). Costs are now scaled by a
    power of two only where the largest is tiny or its sum could overflow. Checked by enumeration."""
    parent = np.array([-1, 0, 0])
    space = spaces.Subtrees(parent)
    Y = space.enumerate()
    w = np.array([1.0, 1e200, 1e-200])
    p = np.zeros(len(Y))
    p[[i for i, y in enumerate(Y) if list(y) == [1, 0, 0]]] = 0.9
    p[[i for i, y in enumerate(Y) if list(y) == [1, 0, 1]]] = 0.1
    M = (p @ Y)[None, :]
    expected = [
        float(sum(p[k] * hierarchical_loss(Y[k : k + 1], y[None, :], parent, node_weights=w) for k in range(len(Y))))
        for y in Y
    ]
    assert_array_equal(bayes_decode(space, M, "hierarchical", node_weights=w)[0], Y[int(np.argmin(expected))])
    assert_array_equal(bayes_decode(space, M, "hierarchical", node_weights=w)[0], [1, 0, 0])


class _Missing:
    """A missing-value marker that is not a number, as pandas' NA (which the tests need not import)."""

    def __repr__(self):
        return "<NA>"


def test_estimators_hierarchical_decision_takes_the_scored_node_costs():
    """decision="hierarchical" with node_weights minimises the expected loss under those costs
    (with ProbabilisticStructured's exact p(y|x), against enumeration); with unit costs it did not
    on most rows. Bad costs are refused at fit naming node_weights; other rules ignore them; an old
    pickle without the parameter decides with unit costs."""
    import pickle

    from combpred.metrics import hierarchical_node_weights

    parent = [-1, 0, 0, 1, 1, 1, 2]
    space = spaces.Subtrees(np.array(parent))
    costs = hierarchical_node_weights(parent, "siblings")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(80, 3)), space.sample(80, random_state=0)
    Xt = 3 * rng.normal(size=(200, 3))
    All = space.enumerate()
    C = np.array(
        [
            hierarchical_loss(All, np.repeat(y_hat[None, :], len(All), 0), parent, node_weights=costs, average=False)
            for y_hat in All
        ]
    )  # C[a, b]: loss of predicting All[a] when the truth is All[b]

    def suboptimal_rows(model):
        P = np.exp([model.score_samples(Xt, np.repeat(y[None, :], len(Xt), 0)) for y in All])  # (|Y|, rows)
        expected = C @ P
        chosen = [int(np.flatnonzero(np.all(All == y_hat, axis=1))[0]) for y_hat in model.predict(Xt)]
        return int(np.sum(expected[chosen, np.arange(len(Xt))] > expected.min(axis=0) + 1e-9))

    unit = ProbabilisticStructured(space=space, decision="hierarchical").fit(X, Y)
    weighted = ProbabilisticStructured(space=space, decision="hierarchical", node_weights=costs).fit(X, Y)
    assert suboptimal_rows(unit) > 50  # the unit-cost rule is not the rule of these costs
    assert suboptimal_rows(weighted) == 0
    ridge = StructuredRidge(space=space, decision="hierarchical", node_weights=costs).fit(X, Y)
    np.testing.assert_array_equal(
        ridge.predict(Xt), bayes_decode(space, ridge.predict_marginals(Xt), "hierarchical", node_weights=costs)
    )
    for bad, match in (
        ([1.0, 2.0], "node_weights must be 7 costs"),
        ([-1.0] * 7, "node_weights must be finite"),
        ([1.0, None, 1.0, 1.0, 1.0, 1.0, 1.0], "node_weights must hold real numbers, got None"),  # not "nan"
        ([1.0, _Missing(), 1.0, 1.0, 1.0, 1.0, 1.0], "node_weights must hold real numbers, got <NA>"),  # pandas' NA
    ):
        with pytest.raises(ValueError, match=match):
            ProbabilisticStructured(space=space, decision="hierarchical", node_weights=bad).fit(X, Y)
    hamming = ProbabilisticStructured(space=space, decision="hamming", node_weights=[1.0, 2.0]).fit(X, Y)
    np.testing.assert_array_equal(hamming.predict(Xt), bayes_decode(space, hamming.predict_marginals(Xt), "hamming"))
    state = weighted.__getstate__()
    del state["node_weights"]
    old = ProbabilisticStructured.__new__(ProbabilisticStructured)
    old.__setstate__(pickle.loads(pickle.dumps(state)))
    assert old.node_weights is None
    np.testing.assert_array_equal(old.predict(Xt), unit.predict(Xt))


def test_hamming_refusal_points_at_kendall_only_for_rankings():
    """The refusal suggested 'kendall' on PartialTournaments and DirectedCycles too, which then
    refused it as needing a Permutations space (probe BY)."""
    from combpred.decision import check_rule

    with pytest.raises(ValueError, match="use 'kendall' for rankings"):
        check_rule(spaces.Permutations(4), "hamming")
    for space in (spaces.PartialTournaments(3), spaces.DirectedCycles(3)):
        with pytest.raises(ValueError, match="needs a space whose ψ is 0/1") as info:
            check_rule(space, "hamming")
        assert "kendall" not in str(info.value)
