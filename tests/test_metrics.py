"""combpred.metrics: hand-computed cases, agreement with scipy, and input validation."""

import itertools
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import combpred
import numpy as np
import pytest
from combpred import decision, metrics, spaces
from combpred.metrics import (
    hierarchical_f1,
    hierarchical_loss,
    hierarchical_node_weights,
    kendall_tau,
    kendall_tau_scorer,
    make_hierarchical_loss_scorer,
    make_structured_scorer,
    policy_cosine,
    spearman_rho,
    spearman_rho_scorer,
    z_approximation_factor,
)
from numpy.testing import assert_array_equal
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, cross_val_score


def random_rankings(rng, n_rows, n_labels):
    return np.array([rng.permutation(n_labels) + 1 for _ in range(n_rows)])


# ---------------------------------------------------------------------------------------------
# Kendall τ and Spearman ρ
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_kendall_identity_reversed_and_adjacent_swap(n):
    ident = np.arange(1, n + 1)
    assert kendall_tau(ident, ident) == 1.0
    assert kendall_tau(ident, ident[::-1]) == -1.0
    swapped = ident.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    # one discordant pair among n(n−1)/2: τ = 1 − 2/(n(n−1)/2) = 1 − 4/(n(n−1))
    assert kendall_tau(ident, swapped) == pytest.approx(1 - 4 / (n * (n - 1)))


def test_kendall_hand_computed():
    # pairs (0,1) and (2,3) discordant, 4 of 6 concordant: τ = (4 − 2)/6
    assert kendall_tau([[1, 2, 3, 4]], [[2, 1, 4, 3]]) == pytest.approx(1 / 3)
    # rows 1, −1 and 1/3: mean 1/9; per-row values returned with average=False
    T = [[1, 2, 3, 4]] * 3
    P = [[1, 2, 3, 4], [4, 3, 2, 1], [2, 1, 4, 3]]
    np.testing.assert_allclose(kendall_tau(T, P, average=False), [1, -1, 1 / 3])
    assert kendall_tau(T, P) == pytest.approx(1 / 9)
    assert kendall_tau(T, P, sample_weight=[1, 0, 0]) == 1.0
    assert kendall_tau(T, P, sample_weight=[1, 1, 0]) == pytest.approx(0.0)


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_spearman_identity_reversed_and_adjacent_swap(n):
    ident = np.arange(1, n + 1)
    assert spearman_rho(ident, ident) == 1.0
    assert spearman_rho(ident, ident[::-1]) == pytest.approx(-1.0)
    swapped = ident.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    # Σd² = 2: ρ = 1 − 12/(n(n² − 1))
    assert spearman_rho(ident, swapped) == pytest.approx(1 - 12 / (n * (n * n - 1)))


def test_spearman_hand_computed():
    # d = (1, −1, 1, −1): Σd² = 4, ρ = 1 − 24/60 = 0.6
    assert spearman_rho([1, 2, 3, 4], [2, 1, 4, 3]) == pytest.approx(0.6)


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_rank_correlations_match_scipy_row_by_row(n):
    rng = np.random.default_rng(n)
    T, P = random_rankings(rng, 60, n), random_rankings(rng, 60, n)
    tau = kendall_tau(T, P, average=False)
    rho = spearman_rho(T, P, average=False)
    for i in range(len(T)):
        assert tau[i] == pytest.approx(stats.kendalltau(T[i], P[i]).statistic, abs=1e-12)
        assert rho[i] == pytest.approx(stats.spearmanr(T[i], P[i]).statistic, abs=1e-12)
    assert kendall_tau(T, P) == pytest.approx(tau.mean())
    w = rng.uniform(size=len(T))
    assert spearman_rho(T, P, sample_weight=w) == pytest.approx(np.average(rho, weights=w))


def test_rankings_accept_integral_floats():
    assert kendall_tau(np.array([[1.0, 2.0, 3.0]]), [[1, 3, 2]]) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        ([[1, 1, 3]], [[1, 2, 3]], "not a permutation"),  # tie
        ([[0, 1, 2]], [[1, 2, 3]], "not a permutation"),  # 0-based
        ([[1, 2, 4]], [[1, 2, 3]], "not a permutation"),
        ([[1, 2, 3]], [[1, 2, 3, 4]], "different shapes"),
        ([[1, 2, 3]] * 2, [[1, 2, 3]], "different shapes"),
        ([[1]], [[1]], "at least 2"),
        ([[1, 2.5, 3]], [[1, 2, 3]], "fractional"),
        ([[1, np.nan, 3]], [[1, 2, 3]], "NaN"),
        (np.ones((2, 2, 2)), np.ones((2, 2, 2)), "2-D"),
        (np.empty((0, 3)), np.empty((0, 3)), "empty"),
        ([[1, 2, 4]], [[1, 2, 3, 4]], "different shapes"),  # not "Y_true row 0 is [1, 2, 4], not a permutation"
    ],
)
def test_rank_validation_errors(y_true, y_pred, match):
    for metric in (kendall_tau, spearman_rho):
        with pytest.raises(ValueError, match=match):
            metric(y_true, y_pred)


def test_rank_validation_refuses_strings_as_the_spaces_do():
    """Integers are checked in one place (``_capi.int64_array``): a string ranking is a TypeError,
    as a string structure is to the spaces and the estimators (the metrics raised ValueError)."""
    for metric in (kendall_tau, spearman_rho):
        with pytest.raises(TypeError, match="Y_true must hold integers, got dtype <U1"):
            metric([["a", "b"]], [[1, 2]])
    with pytest.raises(TypeError, match="Y must hold integers, got dtype <U1"):
        combpred.spaces.Permutations(2).validate([["a", "b"]])


def test_rank_validation_bounds_the_row_it_shows():
    """A wrong row of 10⁶ ranks was written out whole (a 7.9 MB message)."""
    R = np.tile(np.arange(1, 10**5 + 1), (2, 1))
    R[1, 0] = 2
    with pytest.raises(
        ValueError, match=r"Y_pred row 1 is \[2, 2, 3, 4, 5, 6, 7, 8, 9, 10, … \(100000 ranks\)\]"
    ) as info:
        kendall_tau(R[:1].repeat(2, axis=0), R)
    assert len(str(info.value)) < 300


def test_rank_validation_names_the_row():
    with pytest.raises(ValueError, match=r"Y_pred row 1 is \[2, 2, 1\]"):
        kendall_tau([[1, 2, 3]] * 2, [[1, 2, 3], [2, 2, 1]])


def test_sample_weight_validation():
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        kendall_tau([[1, 2]], [[1, 2]], sample_weight=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        kendall_tau([[1, 2]], [[1, 2]], sample_weight=[-1])


def test_weights_whose_sum_overflows():
    """Weights are scale-free: finite weights of 1e308 (their sum overflows) give the mean the same
    weights scaled down give, where np.average returned NaN; so does StructuredRidge.score."""
    T = [[1, 2, 3], [1, 2, 3], [3, 2, 1]]
    P = [[1, 2, 3], [2, 1, 3], [3, 2, 1]]
    huge, small = [1e308, 1e308, 5e307], [2.0, 2.0, 1.0]
    for metric in (kendall_tau, spearman_rho):
        assert metric(T, P, sample_weight=huge) == pytest.approx(metric(T, P, sample_weight=small), rel=1e-15)
    parent = [-1, 0, 0, 1]
    y, y_hat = [3, 2, 1], [3, 1, 2]
    for average in ("micro", "samples"):
        got = hierarchical_f1(y, y_hat, parent, average=average, sample_weight=huge)
        assert got == pytest.approx(hierarchical_f1(y, y_hat, parent, average=average, sample_weight=small), rel=1e-15)
    assert hierarchical_loss(y, y_hat, parent, sample_weight=huge) == pytest.approx(
        hierarchical_loss(y, y_hat, parent, sample_weight=small), rel=1e-15
    )
    from combpred import StructuredRidge

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), spaces.Multilabel(4).sample(40, random_state=0)
    model = StructuredRidge(space="multilabel").fit(X, Y)
    assert model.score(X, Y, sample_weight=np.full(40, 1e308)) == pytest.approx(model.score(X, Y), rel=1e-15)
    labels = np.array(["a", "b"])[(X[:, 0] > 0).astype(int)]
    model = StructuredRidge(space="multiclass").fit(X, labels)
    assert model.score(X, labels, sample_weight=np.full(40, 1e308)) == model.score(X, labels)


# ---------------------------------------------------------------------------------------------
# hierarchical loss
# ---------------------------------------------------------------------------------------------
#        0
#      /   \
#     1     2
#    / \
#   3   4
PARENT = np.array([-1, 0, 0, 1, 1])


@pytest.mark.parametrize(
    ("y", "y_hat", "loss"),
    [
        (3, 3, 0),  # right
        (3, 4, 2),  # ψ {0,1,3} vs {0,1,4}: 3 and 4 wrong, parent 1 right
        (3, 2, 2),  # {0,1,3} vs {0,2}: 1, 2, 3 wrong; 3 sits below the mistake at 1
        (3, 1, 1),  # stops one level early: only 3 wrong
        (3, 0, 1),  # root only: 1 and 3 wrong, 3 below 1
        (2, 4, 2),  # {0,2} vs {0,1,4}: 1 and 2 charged, 4 below 1
    ],
)
def test_hierarchical_loss_single_paths_by_hand(y, y_hat, loss):
    assert hierarchical_loss([y], [y_hat], PARENT) == loss
    # the same label as a 0/1 node row
    rows = np.zeros((2, 5), dtype=int)
    for r, node in enumerate((y, y_hat)):
        while node >= 0:
            rows[r, node] = 1
            node = PARENT[node]
    assert hierarchical_loss(rows[:1], rows[1:], PARENT) == loss
    assert hierarchical_loss([y], rows[1:], PARENT) == loss  # forms may be mixed


def test_hierarchical_loss_mean_and_rows():
    y = [3, 3, 3, 3, 3]
    y_hat = [3, 4, 2, 1, 0]
    np.testing.assert_array_equal(hierarchical_loss(y, y_hat, PARENT, average=False), [0, 2, 2, 1, 1])
    assert hierarchical_loss(y, y_hat, PARENT) == pytest.approx(6 / 5)
    assert hierarchical_loss(y, y_hat, PARENT, sample_weight=[0, 1, 1, 0, 0]) == pytest.approx(2.0)


def test_hierarchical_loss_multi_path_and_weights():
    true = [[1, 1, 1, 1, 0]]  # paths to 3 and to 2
    pred = [[1, 1, 0, 0, 1]]  # the path to 4
    # 2, 3 and 4 are wrong and all their ancestors (0, 1) are right
    assert hierarchical_loss(true, pred, PARENT) == 3
    assert hierarchical_loss(true, pred, PARENT, node_weights=[0, 1, 2, 3, 4]) == 2 + 3 + 4
    # missing the whole subtree of 1 is charged once, at 1
    assert hierarchical_loss([[1, 1, 0, 1, 1]], [[1, 0, 0, 0, 0]], PARENT) == 1


def test_hierarchical_loss_rows_not_closed_follow_the_formula():
    # 1 wrong; 3 equal in both: 1
    assert hierarchical_loss([[1, 1, 0, 1, 0]], [[1, 0, 0, 1, 0]], PARENT) == 1
    # 3 predicted without its parent: 3 wrong, ancestors 0 and 1 equal: charged
    assert hierarchical_loss([[1, 0, 0, 0, 0]], [[1, 0, 0, 1, 0]], PARENT) == 1


def test_hierarchical_loss_forest():
    # two roots 0 and 1; 2 is a child of 0. {0,2} vs {1}: 0 and 1 charged, 2 below 0
    assert hierarchical_loss([2], [1], [-1, -1, 0]) == 2


def brute_force_h_loss(t, p, parent, w):
    """The thesis' formula, term by term: Σ_i c_i I(t_i ≠ p_i and t_j = p_j for all j ∈ ANC(i))."""
    total = 0.0
    for i in range(len(parent)):
        ancestors = []
        j = parent[i]
        while j >= 0:
            ancestors.append(j)
            j = parent[j]
        if t[i] != p[i] and all(t[j] == p[j] for j in ancestors):
            total += w[i]
    return total


def test_hierarchical_loss_matches_the_formula_on_random_trees():
    """The formula term by term, on trees and forests; a tree's single root is in every set (a
    row without it is read with it), a forest's roots are not."""
    rng = np.random.default_rng(0)
    forests = 0
    for trial in range(40):
        n = int(rng.integers(2, 30))
        first = -1 if trial % 2 else 0  # odd trials: a node may be another root
        parent = np.array([-1] + [int(rng.integers(first, v)) for v in range(1, n)])
        w = rng.uniform(size=n)
        T = rng.integers(0, 2, size=(15, n))
        P = rng.integers(0, 2, size=(15, n))
        got = hierarchical_loss(T, P, parent, node_weights=w, average=False)
        Tv, Pv = T.copy(), P.copy()
        if np.sum(parent < 0) == 1:
            Tv[:, 0] = Pv[:, 0] = 1
        else:
            forests += 1
        want = [brute_force_h_loss(Tv[k], Pv[k], parent, w) for k in range(15)]
        np.testing.assert_allclose(got, want)
    assert forests >= 5


def test_hierarchical_metrics_read_an_object_parent_array_as_its_integers():
    # "parent must be a non-empty 1-D integer array" for a 1-D, non-empty array of integers held as
    # objects, which the spaces read as their numbers (probe 82)
    objects = np.array(PARENT.tolist(), dtype=object)
    assert hierarchical_loss([3, 3], [4, 2], objects) == hierarchical_loss([3, 3], [4, 2], PARENT) == 2
    assert hierarchical_f1([3, 3], [4, 1], objects) == hierarchical_f1([3, 3], [4, 1], PARENT)
    with pytest.raises(ValueError, match="integer array"):
        hierarchical_loss([1], [1], np.array([-1, 0.5, 0], dtype=object))


def test_hierarchical_loss_reads_a_single_root_into_every_row():
    """A row without the single root was charged the root and nothing below it: every such
    prediction, right or wrong, scored c_root, a wrong one below its own closure, and the right
    nodes as badly as none, where hierarchical_f1 scored them perfect (probe 82)."""
    truth = [[1, 1, 0, 1, 0]]  # the path 0-1-3
    for pred, loss, f1 in (
        ([[1, 0, 1, 0, 0]], 2, 0),  # {0, 2}: 1 missed, 2 wrong
        ([[0, 0, 1, 0, 0]], 2, 0),  # the same without the root
        ([[0, 1, 0, 1, 0]], 0, 1),  # the right nodes without the root
        ([[0, 0, 0, 0, 0]], 1, 0),  # nothing: 1 missed, 3 below it
    ):
        assert hierarchical_loss(truth, pred, PARENT) == loss
        assert hierarchical_f1(truth, pred, PARENT) == f1
    assert hierarchical_loss([[0, 0, 0, 0, 0]], [[1, 0, 0, 0, 0]], PARENT) == 0


def _augmented(row, parent):
    """The node set of a 0/1 row with every ancestor of its nodes added."""
    out = set()
    for v in np.flatnonzero(row):
        while v >= 0 and v not in out:
            out.add(int(v))
            v = parent[v]
    return out


def test_hierarchical_f1_matches_the_set_formula_on_random_trees():
    """Kiritchenko et al.'s definition, with Python sets: pooled (micro, weighted) and per row; the
    single root is not counted, unclosed rows are closed by the augmentation."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(2, 25))
        parent = np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n)])
        T = (rng.random((12, n)) < 0.2).astype(int)
        P = (rng.random((12, n)) < 0.2).astype(int)
        w = rng.uniform(0.1, 2, 12)
        both, sizes = [], []
        for t, p in zip(T, P, strict=True):
            a, b = _augmented(t, parent) - {0}, _augmented(p, parent) - {0}
            both.append(len(a & b))
            sizes.append(len(a) + len(b))
        both, sizes = np.array(both, float), np.array(sizes, float)
        rows = np.where(sizes > 0, 2 * both / np.maximum(sizes, 1), 1.0)
        np.testing.assert_allclose(hierarchical_f1(T, P, parent, average=None), rows)
        assert hierarchical_f1(T, P, parent, average="samples", sample_weight=w) == pytest.approx(
            np.average(rows, weights=w)
        )
        want = 2 * (w @ both) / (w @ sizes) if w @ sizes else 1.0
        assert hierarchical_f1(T, P, parent, sample_weight=w) == pytest.approx(want)


def test_hierarchical_f1_by_hand_forest_and_weights():
    assert hierarchical_f1([3], [3], PARENT) == 1.0
    assert hierarchical_f1([3], [2], PARENT) == 0.0  # {1, 3} against {2}: nothing shared
    assert hierarchical_f1([0], [0], PARENT) == 1.0  # the root alone on both sides: two empty sets
    assert hierarchical_f1([3], [0], PARENT) == 0.0
    # a forest counts its roots: {0, 2} against {0}
    assert hierarchical_f1([2], [0], [-1, -1, 0]) == pytest.approx(2 * 1 / 3)
    # an integer weight is that many copies of the row
    T, P = [3, 4, 2], [4, 4, 1]
    assert hierarchical_f1(T, P, PARENT, sample_weight=[2, 1, 1]) == pytest.approx(
        hierarchical_f1([3, 3, 4, 2], [4, 4, 4, 1], PARENT)
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"average": "macro"}, "average must be"),
        ({"sample_weight": [1.0]}, "sample_weight must have shape"),
        ({"sample_weight": [-1.0, 1.0]}, "non-negative"),
    ],
)
def test_hierarchical_f1_refusals(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hierarchical_f1([3, 4], [3, 3], PARENT, **kwargs)
    with pytest.raises(ValueError, match="different numbers of samples"):
        hierarchical_f1([3, 4], [3], PARENT)


def test_hierarchical_node_weights():
    np.testing.assert_allclose(hierarchical_node_weights(PARENT, "uniform"), np.ones(5))
    np.testing.assert_allclose(hierarchical_node_weights(PARENT, "siblings"), [1, 0.5, 0.5, 0.25, 0.25])
    np.testing.assert_allclose(hierarchical_node_weights(PARENT, "subtree"), np.array([5, 3, 1, 1, 1]) / 5)
    w = hierarchical_node_weights(PARENT, "siblings")
    assert hierarchical_loss([3], [4], PARENT, node_weights=w) == 0.5
    assert hierarchical_loss([3], [2], PARENT, node_weights=w) == 1.0
    with pytest.raises(ValueError, match="unknown scheme"):
        hierarchical_node_weights(PARENT, "depth")


@pytest.mark.parametrize(
    ("parent", "match"),
    [
        ([-1, 2, 1], "cycle"),
        ([0], "own parent"),
        ([1, 0], "no root"),
        ([-1, 5], "out of range"),
        ([-2, 0], "out of range"),
        ([], "non-empty"),
        ([-1.0, 0.0], "integer"),
    ],
)
def test_hierarchical_loss_bad_parent(parent, match):
    with pytest.raises(ValueError, match=match):
        hierarchical_loss([0], [0], np.array(parent))


@pytest.mark.parametrize(
    ("y_true", "y_pred", "kwargs", "match"),
    [
        ([5], [0], {}, "not a node id"),
        ([-1], [0], {}, "not a node id"),
        ([[1, 0, 0]], [0], {}, "node rows of shape"),
        ([[1, 2, 0, 0, 0]], [0], {}, "only 0 and 1"),
        ([0, 1], [0], {}, "numbers of samples"),
        ([0], [0], {"node_weights": [1, 1]}, r"node_weights must be 5 costs, one per node, got shape \(2,\)"),
        ([0], [0], {"node_weights": [1, 1, 1, -1, 1]}, "non-negative"),
        ([], [], {}, "empty"),
    ],
)
def test_hierarchical_loss_bad_labels(y_true, y_pred, kwargs, match):
    with pytest.raises(ValueError, match=match):
        hierarchical_loss(y_true, y_pred, PARENT, **kwargs)


# ---------------------------------------------------------------------------------------------
# policy cosine
# ---------------------------------------------------------------------------------------------
def test_policy_cosine_by_hand():
    assert policy_cosine([[1.0, 0.0]], [[2.0, 0.0]]) == pytest.approx(1.0)
    assert policy_cosine([[1.0, 0.0]], [[0.0, 3.0]]) == pytest.approx(0.0)
    assert policy_cosine([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / np.sqrt(2))
    assert policy_cosine([1.0, -2.0], [-1.0, 2.0]) == pytest.approx(-1.0)
    assert policy_cosine([0.0, 0.0], [1.0, 0.0]) == 0.0  # a zero policy


def test_policy_cosine_per_instance():
    W_true = np.eye(2)
    W_pred = np.diag([1.0, -1.0])
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    # u_true = x, u_pred = (x1, −x2): cosines 1, −1 and 0 for the zero input
    np.testing.assert_allclose(policy_cosine(W_true, W_pred, X, average=False), [1, -1, 0])
    assert policy_cosine(W_true, W_pred, X) == pytest.approx(0.0)
    assert policy_cosine(W_true, W_pred, X, sample_weight=[1, 0, 0]) == pytest.approx(1.0)
    # W is (d, n_features), as coef_: 3 scores of 2 features, the policies X @ W.T
    W3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    flipped = W3 * [[1.0], [-1.0], [0.0]]
    expected = [
        float(np.dot(W3 @ x, flipped @ x) / np.linalg.norm(W3 @ x) / np.linalg.norm(flipped @ x)) for x in X[:2]
    ]
    np.testing.assert_allclose(policy_cosine(W3, flipped, X[:2], average=False), expected)


def test_policy_cosine_antisymmetric_equals_upper_triangle():
    rng = np.random.default_rng(1)
    A, B = rng.uniform(-1, 1, (2, 6, 6))
    A, B = A - A.T, B - B.T
    iu = np.triu_indices(6, k=1)
    assert policy_cosine(A, B) == pytest.approx(policy_cosine(A[iu], B[iu]))


def test_policy_cosine_errors():
    with pytest.raises(ValueError, match="different shapes"):
        policy_cosine(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        policy_cosine([np.nan, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"must have shape \(d, 2\)"):
        policy_cosine(np.ones((2, 3)), np.ones((2, 3)), X=np.ones((4, 2)))
    with pytest.raises(ValueError, match="need X"):
        policy_cosine([1.0], [1.0], average=False)


def test_policy_cosine_holds_a_block_of_x_at_a_time(monkeypatch):
    """X's finiteness mask and unit-scaled rows were made whole: +371 MB under a 50 MB budget for a
    broadcast X that takes no memory (probe 85). Blocks give the cosines of the whole, and a NaN is
    named at its row of X."""
    import tracemalloc

    rng = np.random.default_rng(0)
    W_true, W_pred = rng.normal(size=(2, 3, 8))
    X = np.broadcast_to(rng.normal(size=8), (10**6, 8))  # 64 MB as a whole
    tracemalloc.start()
    try:
        mean = policy_cosine(W_true, W_pred, X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mean == pytest.approx(policy_cosine(W_true, W_pred, X[:1]), rel=1e-12)
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MB traced for 8 MB of cosines"
    Xs = rng.normal(size=(10, 8))
    whole = policy_cosine(W_true, W_pred, Xs, average=False)
    monkeypatch.setattr(metrics, "_POLICY_BLOCK", 24)  # 3 rows a block
    np.testing.assert_allclose(policy_cosine(W_true, W_pred, Xs, average=False), whole, rtol=1e-15)
    Xs[7, 5] = np.inf
    with pytest.raises(ValueError, match=r"^X contains NaN or infinity at row 7, column 5$"):
        policy_cosine(W_true, W_pred, Xs)


# ---------------------------------------------------------------------------------------------
# z-approximation factor
# ---------------------------------------------------------------------------------------------
def test_z_factor_by_hand():
    assert z_approximation_factor(3.0, 3.0, -1.0) == 0.0
    assert z_approximation_factor(2.0, 3.0, -1.0) == 0.25
    assert z_approximation_factor(-1.0, 3.0, -1.0) == 1.0
    assert z_approximation_factor(5.0, 5.0, 5.0) == 0.0  # every structure is optimal
    assert isinstance(z_approximation_factor(2.0, 3.0, -1.0), float)
    np.testing.assert_allclose(z_approximation_factor([3.0, 2.0, 0.0], 3.0, -1.0), [0, 0.25, 0.75])
    np.testing.assert_allclose(z_approximation_factor([1.0, 1.0], [2.0, 1.0], [0.0, 0.0]), [0.5, 0.0])
    assert z_approximation_factor(3.0 + 1e-12, 3.0, -1.0) == 0.0  # rounding tolerated


def test_z_factor_does_not_depend_on_the_unit_of_the_scores():
    # the rounding tolerance had a floor of 1e-9: scores of a heavily regularised model (spans
    # under 1e-9) came out flat, and the worst structure was reported as exact (ν = 0)
    for scale in (1.0, 1e-10, 1e-200, 5e-320, 1e200):
        assert z_approximation_factor(0.0, scale, 0.0) == 1.0
        assert z_approximation_factor(0.75 * scale, scale, -scale) == pytest.approx(0.125)
        assert z_approximation_factor(scale * (1 + 1e-12), scale, -scale) == 0.0  # rounding tolerated
    assert z_approximation_factor(0.0, 0.0, 0.0) == 0.0  # every structure is optimal
    assert z_approximation_factor(-1e-300, -1e-300, -1e-300) == 0.0


def test_z_factor_of_huge_finite_scores():
    # max f − min f overflowed to inf: ν came out 0 (an exact decoder, falsely) or NaN
    assert z_approximation_factor(1.0, 1e308, -1e308) == pytest.approx(0.5)
    assert z_approximation_factor(1e308, 1.7e308, -1.7e308) == pytest.approx(0.7 / 3.4)
    assert z_approximation_factor(-1e308, 1.7e308, -1.7e308) == pytest.approx(2.7 / 3.4)
    np.testing.assert_allclose(z_approximation_factor([2.0, 2e300], [3.0, 3e300], [-1.0, -1e300]), [0.25, 0.25])
    assert z_approximation_factor(1.7e308 * (1 + 1e-12), 1.7e308, -1.7e308) == 0.0  # rounding tolerated


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((4.0, 3.0, -1.0), "exceeds f_max"),
        ((-2.0, 3.0, -1.0), "below f_min"),
        ((0.0, -1.0, 3.0), "f_min exceeds f_max"),
        ((np.nan, 3.0, -1.0), "finite"),
        (([1.0, 2.0], [3.0, 3.0, 3.0], 0.0), "broadcast"),
        (("a", 2.0, 0.0), "f_decoded must hold real numbers, got dtype <U1"),  # it blamed broadcasting
        ((1.0, 2.0 + 1j, 0.0), "f_max must hold real numbers, got complex"),
    ],
)
def test_z_factor_errors(args, match):
    with pytest.raises(ValueError, match=match):
        z_approximation_factor(*args)


@pytest.mark.parametrize("space", [spaces.Permutations(5), spaces.DirectedCycles(5)])
def test_z_factor_of_exact_decoders_is_zero(space):
    rng = np.random.default_rng(2)
    Z = space.embed(space.enumerate())
    U = rng.normal(size=(10, space.dim))
    F = U @ Z.T  # f of every structure, for every score vector
    f_dec = np.einsum("id,id->i", space.embed(space.decode(U)), U)
    nu = z_approximation_factor(f_dec, F.max(axis=1), F.min(axis=1))
    np.testing.assert_allclose(nu, 0.0, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# scorers
# ---------------------------------------------------------------------------------------------
class ConstantPredictor(BaseEstimator):
    """Predicts one fixed answer for every row; `which` picks it from `answers`."""

    def __init__(self, answers=None, which=0):
        self.answers = answers
        self.which = which

    def fit(self, X, y):
        self.fitted_ = True
        return self

    def predict(self, X):
        return np.repeat(np.asarray(self.answers[self.which])[None], len(X), axis=0)


def test_rank_scorers_call_predict():
    X = np.zeros((3, 1))
    Y = np.array([[1, 2, 3]] * 3)
    est = ConstantPredictor(answers=[[1, 3, 2]]).fit(X, Y)
    assert kendall_tau_scorer(est, X, Y) == pytest.approx(1 / 3)
    assert spearman_rho_scorer(est, X, Y) == pytest.approx(0.5)
    assert "kendall_tau" in repr(kendall_tau_scorer)


def test_hierarchical_scorer_is_negated_loss():
    X = np.zeros((2, 1))
    est = ConstantPredictor(answers=[4]).fit(X, None)  # predicts leaf 4
    scorer = make_hierarchical_loss_scorer(PARENT)
    assert scorer(est, X, np.array([3, 4])) == pytest.approx(-1.0)  # losses 2 and 0
    weighted = make_hierarchical_loss_scorer(PARENT, node_weights=hierarchical_node_weights(PARENT))
    assert weighted(est, X, np.array([3, 3])) == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="cycle"):
        make_hierarchical_loss_scorer([-1, 2, 1])


def test_scorers_drive_grid_search():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    Y = np.array([[3, 1, 2]] * 30)
    answers = [[1, 2, 3], [3, 1, 2], [2, 3, 1]]
    search = GridSearchCV(ConstantPredictor(answers=answers), {"which": [0, 1, 2]}, scoring=kendall_tau_scorer, cv=3)
    search.fit(X, Y)
    assert search.best_params_ == {"which": 1}
    assert search.best_score_ == 1.0
    scores = cross_val_score(ConstantPredictor(answers=answers, which=0), X, Y, scoring=spearman_rho_scorer, cv=3)
    np.testing.assert_allclose(scores, spearman_rho([1, 2, 3], [3, 1, 2]))


def test_make_structured_scorer():
    X = np.zeros((2, 1))
    est = ConstantPredictor(answers=[[2, 1]]).fit(X, None)
    loss = make_structured_scorer(kendall_tau, greater_is_better=False)
    assert loss(est, X, np.array([[1, 2], [1, 2]])) == 1.0
    assert loss(est, X, np.array([[1, 2], [2, 1]]), sample_weight=[1, 0]) == 1.0
    with pytest.raises(ValueError, match="callable"):
        make_structured_scorer("kendall_tau")
    # a metric's per-row values failed in float() with NumPy's words (probe DN)
    rows = make_structured_scorer(kendall_tau, average=False)
    with pytest.raises(ValueError, match=r"^metric kendall_tau returned an array of shape \(2,\); a scorer needs one"):
        rows(est, X, np.array([[1, 2], [1, 2]]))


def test_public_names():
    for name in metrics.__all__:
        assert hasattr(metrics, name)
    assert not any(name in metrics.__all__ for name in ("zero_one_loss", "hamming_loss"))


def test_all_permutation_pairs_small_n():
    # τ over every pair of permutations of 3 labels against the definition by pair counting
    perms = [np.array(p) + 1 for p in itertools.permutations(range(3))]
    for a, b in itertools.product(perms, perms):
        conc = sum(np.sign(a[u] - a[v]) * np.sign(b[u] - b[v]) for u, v in itertools.combinations(range(3), 2))
        assert kendall_tau(a, b) == pytest.approx(conc / 3)


def _kendall_by_pairs(T, P):
    """The former definition: every label pair, materialised (O(n²) memory)."""
    n = T.shape[1]
    iu, iv = np.triu_indices(n, k=1)
    return (np.sign(T[:, iu] - T[:, iv]) * np.sign(P[:, iu] - P[:, iv])).sum(axis=1) / len(iu)


def test_kendall_inversion_count_equals_the_pairwise_definition():
    """Issue 11 finding 8: the O(n log n) count gives bit for bit the pairwise values."""
    for n in (2, 3, 4):  # every pair of rankings
        perms = np.array(list(itertools.permutations(range(1, n + 1))))
        T, P = np.repeat(perms, len(perms), axis=0), np.tile(perms, (len(perms), 1))
        assert_array_equal(kendall_tau(T, P, average=False), _kendall_by_pairs(T, P))
    rng = np.random.default_rng(8)
    for n in [*range(5, 40), 64, 65, 200]:
        T = np.array([rng.permutation(n) + 1 for _ in range(9)])
        P = np.array([rng.permutation(n) + 1 for _ in range(9)])
        assert_array_equal(kendall_tau(T, P, average=False), _kendall_by_pairs(T, P))
    with pytest.raises(ValueError, match="no ties"):  # ties are still refused
        kendall_tau([[1, 1, 2]], [[1, 2, 3]])


def test_kendall_on_30000_labels_needs_little_memory():
    code = """
        import resource
        import numpy as np
        from combpred.metrics import kendall_tau
        from scipy import stats
        rng = np.random.default_rng(0)
        a, b = rng.permutation(30000) + 1, rng.permutation(30000) + 1
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tau = kendall_tau(a, b)
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert abs(tau - stats.kendalltau(a, b).statistic) < 1e-12, tau
        print(grown)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(Path(combpred.__file__).resolve().parent.parent)),
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 100, f"kendall_tau grew the peak RSS by {result.stdout.strip()} MB"


def test_policy_cosine_at_extreme_scales():
    """Cosines are scale-invariant: weights and inputs near 1e300 give the same value as at 1 (the
    norms overflowed to infinity and the cosine was NaN; issue 11's battery)."""
    from combpred.metrics import policy_cosine

    rng = np.random.default_rng(0)
    W1, W2, X = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(6, 4))
    assert policy_cosine(W1 * 1e300, W2 * 1e300) == pytest.approx(policy_cosine(W1, W2), abs=1e-12)
    assert policy_cosine(W1 * 1e300, W1 * 1e300) == pytest.approx(1.0)
    ref = policy_cosine(W1, W2, X, average=False)
    np.testing.assert_allclose(policy_cosine(W1 * 1e300, W2 * 1e-300, X * 1e300, average=False), ref, atol=1e-12)
    np.testing.assert_allclose(policy_cosine(W1 * 1e-310, W2, X, average=False), ref, atol=1e-9)


def test_ids_outside_int64_are_refused_not_wrapped():
    # A uint64 2**64 − 1 used to wrap to −1 (a root, to a parent array) and a float 1e19 to the
    # smallest int64, both without a word.
    with pytest.raises(ValueError, match="parent holds .*outside the 64-bit signed integers"):
        metrics.hierarchical_loss([1], [1], np.array([2**64 - 1, 0], dtype=np.uint64))
    with pytest.raises(ValueError, match="y_true holds .*outside the 64-bit signed integers"):
        metrics.hierarchical_loss(np.array([1e19]), [1], [-1, 0])


def test_micro_f1_with_weights_far_apart():
    """A 1e-300 weight on the only row with nodes vanished beside a 1e308 weight on a row without
    any when the weights were scaled together: a wholly wrong prediction scored 1."""
    parent = [-1, 0, 0]
    T = np.array([[1, 0, 0], [1, 1, 0]])
    P = np.array([[1, 0, 0], [1, 0, 1]])
    assert hierarchical_f1(T, P, parent, average="micro", sample_weight=[1e308, 1e-300]) == 0.0
    T2, P2 = np.array([[1, 1, 0], [1, 1, 0]]), np.array([[1, 1, 0], [1, 1, 1]])
    got = hierarchical_f1(T2, P2, parent, average="micro", sample_weight=[1e308, 3e-15])
    assert got == pytest.approx(hierarchical_f1(T2, P2, parent, average="micro", sample_weight=[1, 0]), rel=1e-15)


def test_real_arguments_may_be_object_arrays_of_numbers():
    """The dtype checks added for strings and complex numbers refused object arrays of floats."""
    floats = np.array([2.0, 3.0], dtype=object)
    assert z_approximation_factor(floats, 3.0, -1.0).tolist() == [0.25, 0.0]
    with pytest.raises(ValueError, match="f_decoded must hold real numbers, got complex values"):
        z_approximation_factor(np.array([2.0 + 1j], dtype=object), 3.0, -1.0)
    from combpred.decision import bayes_decode

    assert bayes_decode(spaces.Multilabel(2), np.array([[0.2, 0.9]], dtype=object), "hamming").tolist() == [[0, 1]]


def test_hierarchical_metrics_take_sparse_predictions():
    """A model fitted on sparse targets predicts CSR (documented); the hierarchical metrics and the
    scorer took it as an object array ("y_pred must hold integers, got dtype object")."""
    from combpred import StructuredRidge
    from scipy import sparse

    parent = [-1, 0, 0, 1, 1, 2]
    space = spaces.Subtrees(parent)
    X = np.random.default_rng(0).normal(size=(60, 4))
    Y = space.sample(60, random_state=0)
    model = StructuredRidge(space=space).fit(X, sparse.csr_matrix(Y))
    P = model.predict(X[:5])
    assert sparse.issparse(P)
    for metric in (hierarchical_loss, hierarchical_f1):
        assert metric(Y[:5], P, parent) == metric(Y[:5], P.toarray(), parent)
        assert metric(sparse.csr_matrix(Y[:5]), P, parent) == metric(Y[:5], P.toarray(), parent)
    scorer = metrics.make_hierarchical_loss_scorer(parent)
    assert scorer(model, X[:5], Y[:5]) == -hierarchical_loss(Y[:5], P.toarray(), parent)


def test_average_must_be_a_bool():
    with pytest.raises(TypeError, match="average must be True or False, got 'no'"):  # "no" was true
        kendall_tau([[1, 2]], [[2, 1]], average="no")
    assert kendall_tau([[1, 2]], [[2, 1]], average=np.bool_(False)).tolist() == [-1.0]


def test_policy_cosine_names_complex_input():
    # float() raised its own TypeError on a complex entry
    from combpred.metrics import policy_cosine

    with pytest.raises(ValueError, match="W_true must hold real numbers, got complex values"):
        policy_cosine([1j, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="X must hold real numbers"):
        policy_cosine(np.ones((2, 3)), np.ones((2, 3)), X=[["a", "b"]])


def test_spearman_rho_of_millions_of_labels():
    # Σ (y_j − ŷ_j)² was summed in int64, which wraps past 2⁶³ from about 3.03 million labels:
    # a ranking against its reverse gave 2.715 at 3.1 million instead of −1
    n = 3_100_000
    ranks = np.arange(1, n + 1)
    assert metrics.spearman_rho(ranks, ranks[::-1]) == pytest.approx(-1.0, abs=1e-12)
    assert metrics.spearman_rho(ranks, ranks) == 1.0
    # rounding took a reversed ranking of 10⁷ labels to −1.0000000000000262, outside [−1, 1] (probe DN)
    ranks = np.arange(1, 10**7 + 1)
    assert metrics.spearman_rho(ranks, ranks[::-1]) == -1.0


@pytest.mark.parametrize("weights", [np.full(5, 1j), [1j] * 5, ["a"] * 5])
def test_node_weights_must_be_real(weights):
    # a complex ndarray was cast with only a ComplexWarning (costs 1j became 0: the loss was 0.0);
    # a complex list raised float()'s TypeError and strings numpy's words, neither naming the argument
    parent = [-1, 0, 0, 1, 1]
    with pytest.raises(ValueError, match="node_weights must hold real numbers"):
        metrics.hierarchical_loss([3], [4], parent, node_weights=weights)
    with pytest.raises(ValueError, match="node_weights must hold real numbers"):
        decision.bayes_decode(spaces.Subtrees(parent), np.full((1, 5), 0.5), "hierarchical", node_weights=weights)


def test_metrics_check_their_working_memory_against_the_budget():
    # 240 KB of node ids on a tree of 20,000 nodes took 1.5 GB; a broadcast view of 10⁸ scores
    # (no memory of its own) made z_approximation_factor allocate gigabytes
    import combpred

    parent = np.arange(-1, 19_999)
    nodes = np.full(5000, 19_999)
    with combpred.config_context(max_memory=100 * 2**20):
        with pytest.raises(MemoryError, match="a hierarchical metric of 5000 rows × 20000 nodes"):
            metrics.hierarchical_loss(nodes, nodes, parent)
        with pytest.raises(MemoryError, match="a hierarchical metric of 5000 rows × 20000 nodes"):
            metrics.hierarchical_f1(nodes, nodes, parent)
        scores = np.broadcast_to(np.float64(1.0), (10**8,))
        with pytest.raises(MemoryError, match="z_approximation_factor over 100000000 scores"):
            metrics.z_approximation_factor(scores, 2.0, 0.0)
        marginals = np.full((200_000, 100), 0.5)  # 160 MB: the rules' copies would be 640 MB
        with pytest.raises(MemoryError, match=r"decision='f1' on marginals of shape \(200000, 100\)"):
            decision.bayes_decode(spaces.Multilabel(100), marginals, "f1")
    assert metrics.hierarchical_loss(nodes[:10], nodes[:10], parent) == 0.0


def test_the_float_2_63_is_outside_int64():
    # it passed the range check (int64's maximum rounds to it) and wrapped to −2⁶³ in the cast
    with pytest.raises(ValueError, match=r"Y_true holds .*9\.22337\d*e\+18.*, outside the 64-bit signed integers"):
        metrics.kendall_tau([[2.0**63, 1.0]], [[1, 2]])
    with pytest.raises(ValueError, match="outside the 64-bit signed integers"):
        metrics.kendall_tau([[-(2.0**64), 1.0]], [[1, 2]])


def test_a_boolean_parent_is_refused():
    with pytest.raises(ValueError, match="parent must hold node ids, not booleans"):
        metrics.hierarchical_loss([1], [1], [-1, True])


def test_huge_node_costs_average_to_their_mean():
    # losses of 1e308 each averaged to inf, although their mean is a float
    parent = [-1, 0, 0]
    costs = np.array([1.0, 1e308, 0.0])
    losses = metrics.hierarchical_loss([1, 2], [2, 1], parent, node_weights=costs, average=False)
    assert_array_equal(losses, [1e308, 1e308])
    assert metrics.hierarchical_loss([1, 2], [2, 1], parent, node_weights=costs) == 1e308
    assert metrics.hierarchical_loss([1, 2], [2, 1], parent, node_weights=costs, sample_weight=[1, 3]) == 1e308


def test_policy_cosine_forms_the_policies_in_blocks(monkeypatch):
    """X @ W was formed whole, n_samples × d, which neither input bounds (X of one column against W
    of one row: 144 KB of inputs took 1.3 GB): blocks of rows give the same cosines."""
    rng = np.random.default_rng(5)
    X, A, B = rng.normal(size=(37, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 4))
    w = rng.uniform(0.5, 2, size=37)
    whole = policy_cosine(A, B, X, average=False), policy_cosine(A, B, X, sample_weight=w)
    monkeypatch.setattr(metrics, "_POLICY_BLOCK", 6 * 5)  # five rows a block, the last one short
    blocked = policy_cosine(A, B, X, average=False), policy_cosine(A, B, X, sample_weight=w)
    assert_array_equal(blocked[0], whole[0])
    assert blocked[1] == whole[1]
    per_row = [float(A @ x @ (B @ x) / np.linalg.norm(A @ x) / np.linalg.norm(B @ x)) for x in X]
    np.testing.assert_allclose(blocked[0], per_row, rtol=1e-12)


def test_scorer_sign_must_be_a_bool():
    """greater_is_better="False" is a true string: a loss would have been maximised."""
    with pytest.raises(TypeError, match="greater_is_better must be True or False, got 'False'"):
        make_structured_scorer(kendall_tau, greater_is_better="False")
    assert make_structured_scorer(kendall_tau, greater_is_better=np.False_)._sign == -1.0


@pytest.mark.parametrize(
    "as_strings", [lambda a: np.asarray(a, dtype=str), lambda a: np.asarray(a, dtype=object).astype(str).astype(object)]
)
def test_numeric_strings_are_not_numbers(as_strings):
    """A cast reads "0.9" as 0.9, so string marginals, node costs, scores and policies were taken."""
    with pytest.raises(ValueError, match="marginals must hold real numbers, got dtype"):
        decision.bayes_decode(spaces.Multilabel(3), as_strings([[0.9, 0.0, 0.6]]), "f1")
    with pytest.raises(ValueError, match="f_decoded must hold real numbers, got dtype"):
        z_approximation_factor(as_strings([2.0]), [3.0], [1.0])
    with pytest.raises(ValueError, match="node_weights must hold real numbers, got dtype"):
        hierarchical_loss([3], [2], [-1, 0, 0, 1, 1], node_weights=as_strings([1.0] * 5))
    with pytest.raises(ValueError, match="W_true must hold real numbers, got dtype"):
        policy_cosine(as_strings([[1.0, 0.0]]), [[2.0, 0.0]])


def test_metrics_take_one_dimensional_sparse_arrays():
    """scipy's 1-D coo_array is one ranking (or one node set), as it was before the integers were
    checked in one place; the sparse-structure check is for 2-D matrices (review)."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    if not hasattr(scipy_sparse, "coo_array"):
        pytest.skip("scipy without sparse arrays")
    try:
        one = scipy_sparse.coo_array(np.array([1, 2, 3]))
    except ValueError:
        pytest.skip("this scipy has no 1-D sparse arrays")
    if len(one.shape) != 1:
        pytest.skip("this scipy has no 1-D sparse arrays")
    assert kendall_tau(one, [1, 3, 2]) == pytest.approx(kendall_tau([1, 2, 3], [1, 3, 2]))


def test_hierarchical_metrics_warn_on_one_node_row_read_as_node_ids():
    """One sample's 0/1 node row passed 1-D, as kendall_tau takes one ranking, reads as node ids
    (a sample per node, each at node 0 or 1) and gave a plausible number without a word (probe AQ):
    it warns; 2-D rows and node ids of other lengths do not."""
    parent = [-1, 0, 0, 1, 1, 2]
    true, pred = np.array([1, 1, 0, 1, 0, 0]), np.array([1, 0, 1, 0, 0, 1])
    for metric in (metrics.hierarchical_loss, metrics.hierarchical_f1):
        with pytest.warns(UserWarning, match="read as node ids"):
            metric(true, pred, parent)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            metric(true[None, :], pred[None, :], parent)
            metric(np.array([3, 4]), np.array([3, 5]), parent)


def test_a_python_int_beyond_float64_is_refused_naming_its_argument():
    """A bare OverflowError ('int too large to convert to float') named no argument (probe AV)."""
    huge = 2**1100
    cases = [
        (lambda: decision.bayes_decode(spaces.Multilabel(3), [[huge, 0, 0]], "hamming"), "marginals"),
        (lambda: metrics.hierarchical_loss([1], [2], [-1, 0, 0], node_weights=[1, huge, 1]), "node_weights"),
        (lambda: metrics.policy_cosine([[huge, 0]], [[1, 0]]), "W_true"),
        (lambda: metrics.z_approximation_factor(1.0, huge, 0.0), "f_max"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=rf"^{name} holds a number too large for a float64"):
            call()


def test_cosmetic_refusals_name_their_argument():
    """from_name with a list raised 'unhashable type: list', and rtol=True was taken as 1 (probe AV)."""
    with pytest.raises(ValueError, match=r"name must be a space's name \(a str\), got list"):
        spaces.from_name(["multilabel"], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="rtol must be a non-negative number, got True"):
        metrics.z_approximation_factor(1.0, 2.0, 0.0, rtol=True)
    with pytest.raises(ValueError, match="^rtol=1000.* is beyond float64's range$"):  # unnamed OverflowError (probe 85)
        metrics.z_approximation_factor(1.0, 2.0, 0.0, rtol=10**400)
    # a contradicting n_classes was dropped without a word (probe 85)
    with pytest.raises(ValueError, match=r"^n_classes is for from_name\('multiclass', ...\); space='multilabel'"):
        spaces.from_name("multilabel", np.zeros((2, 3)), n_classes=7)
    assert spaces.from_name("multilabel", np.zeros((2, 3))).dim == 3


def test_hierarchical_metrics_name_a_dags_parent_sets():
    """load_hierarchical's `parents` (a list per node) failed in NumPy's "inhomogeneous shape" error,
    naming neither parent nor that these metrics take trees (probe DT)."""
    parents = [[], [0], [0], [1, 2]]
    Y = np.array([[1, 1, 0, 0], [1, 0, 1, 0]])
    for call in (
        lambda: hierarchical_loss(Y, Y, parents),
        lambda: metrics.hierarchical_f1(Y, Y, parents),
        lambda: metrics.hierarchical_node_weights(parents),
        lambda: make_hierarchical_loss_scorer(parents),
    ):
        with pytest.raises(
            ValueError, match=r"^parent must be a non-empty 1-D integer array of parent ids.*describe a DAG"
        ):
            call()


def test_a_scorer_of_any_callable_has_a_repr():
    """The scorer's repr read the metric's __name__, which a functools.partial or a callable object
    lacks: repr raised AttributeError, and a GridSearchCV holding the scorer could not be shown in
    a notebook (probe EO)."""
    import functools

    from combpred import StructuredRidge
    from sklearn.model_selection import GridSearchCV

    class Loss:
        def __call__(self, y_true, y_pred):
            return 0.0

    for metric in (functools.partial(combpred.metrics.kendall_tau, average=True), Loss()):
        scorer = combpred.metrics.make_structured_scorer(metric)
        assert repr(scorer).startswith("make_structured_scorer(")
        search = GridSearchCV(StructuredRidge(), {"alpha": [1.0]}, scoring=scorer)
        assert "make_structured_scorer(" in repr(search) and search._repr_html_()
