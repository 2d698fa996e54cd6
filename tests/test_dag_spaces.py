"""DAG taxonomies (issue 15, item 4): single paths through every parent (spaces.DAGPaths), checked
against enumeration in tests/test_spaces_all.py and here on the Gene Ontology DAG of gasch2_GO and
with both estimators."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, datasets, spaces

DIAMOND = [[], [0], [0], [1, 2], [3], [2]]


@pytest.mark.parametrize(
    ("parents", "error", "match"),
    [
        ([], ValueError, "non-empty"),
        ("abc", ValueError, "non-empty"),
        ([[1], [0]], ValueError, "no root"),
        ([[], [5]], ValueError, "out of range"),
        ([[], [1]], ValueError, "its own parent"),
        ([[], [0, 0]], ValueError, "twice"),
        ([[], [0], [3], [2]], ValueError, "cycle"),
        ([[], []], ValueError, "two roots"),
        ([[], ["a"]], ValueError, r"parents\[1\] must hold integer"),
        ([[], [True]], ValueError, r"parents\[1\] must hold integer"),
        ([[], [2**64]], ValueError, "out of range"),
        ([[], (0,), (-(2**63) - 1,)], ValueError, r"parents\[2\] holds a node id out of range"),
        # nested one level too deep: ravel read [[0]] as {0}; ragged: numpy's "inhomogeneous shape"
        ([[], [[0]]], ValueError, r"parents\[1\] must be a flat sequence of parent ids"),
        ([[], [0], [[0, 1]]], ValueError, r"parents\[2\] must be a flat sequence of parent ids"),
        ([[], [0], [0, [1]]], ValueError, r"parents\[2\] must hold integer node ids, got \[0, \[1\]\]"),
    ],
)
def test_bad_parent_sets_are_refused_naming_the_node(parents, error, match):
    with pytest.raises(error, match=match):
        spaces.DAGPaths(parents)


def test_parent_sets_read_alike_from_lists_and_arrays():
    """Lists and tuples of ints take a path without NumPy's per-node conversion (2,000,000 nodes
    took 23 s before the core could refuse them); every other form reads to the same sets."""
    forms = [
        DIAMOND,
        [tuple(p) for p in DIAMOND],
        [np.array(p, dtype=np.int64) for p in DIAMOND],
        [[np.int32(q) for q in p] for p in DIAMOND],
    ]
    assert len({spaces.DAGPaths(parents).parents for parents in forms}) == 1
    assert spaces.DAGPaths(DIAMOND).parents == ((), (0,), (0,), (1, 2), (3,), (2,))


def test_moments_of_a_diamond():
    space = spaces.DAGPaths(DIAMOND)
    # node 3 lies below both 1 and 2: P(1 and 2 on the path) = |{3, 4}|/6, not 0 as on a tree
    psi = space.embed(np.arange(6))
    np.testing.assert_array_equal(psi[4], [1, 1, 1, 1, 1, 0])
    cov = space.covariance()
    assert cov[1, 2] == pytest.approx(2 / 6 - (3 / 6) * (4 / 6))
    assert space.decode(np.array([[0, -1, -1, 5, -9, 1.5]]))[0] == 3
    leaves = spaces.DAGPaths(DIAMOND, leaves_only=True)
    assert leaves.log_count() == pytest.approx(np.log(2))
    with pytest.raises(ValueError, match="not a leaf"):
        leaves.validate([3])


def test_gene_ontology_dag_of_gasch2():
    data = datasets.load_hierarchical("gasch2_GO")
    space = spaces.DAGPaths(data.parents)
    n = len(data.node_names)
    assert space.dim == n and space.log_count() == pytest.approx(np.log(n))
    # a node's ψ is its closure under every parent: the loader's closure of a one-label row
    rng = np.random.default_rng(0)
    for v in rng.choice(n, 20, replace=False):
        row = np.zeros(n, dtype=np.int64)
        stack = [v]
        while stack:
            w = stack.pop()
            if not row[w]:
                row[w] = 1
                stack.extend(data.parents[w].tolist())
        np.testing.assert_array_equal(space.embed([v])[0], row)
    p = space.mean()
    assert p[0] == 1.0 and np.all((p > 0) & (p <= 1))
    u = rng.normal(size=(3, n))
    best = space.decode(u)
    scores = u @ space.embed(np.arange(n)).T
    np.testing.assert_array_equal(best, scores.argmax(axis=1))


def _planted(n_samples: int, seed: int):
    """Inputs whose nearest of six centres is the node (one per node of DIAMOND)."""
    centres = np.random.default_rng(0).normal(size=(6, 4)) * 3
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 6, n_samples)
    return centres[y] + rng.normal(size=(n_samples, 4)) * 0.3, y


@pytest.mark.parametrize(
    "make",
    [
        lambda s: StructuredRidge(space=s, kernel="rbf", alpha=0.01),
        lambda s: ProbabilisticStructured(space=s, alpha=0.01),
    ],
)
def test_estimators_learn_dag_paths(make):
    X, y = _planted(300, 1)
    Xt, yt = _planted(200, 2)
    model = make(spaces.DAGPaths(DIAMOND)).fit(X, y)
    pred = model.predict(Xt)
    assert np.mean(pred == yt) > 0.9
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(Xt), pred)


def _closed_sets(parents):
    n = len(parents)
    out = []
    for mask in range(1 << n):
        row = [(mask >> v) & 1 for v in range(n)]
        if row[0] and all(row[p] for v in range(n) if row[v] for p in parents[v]):
            out.append(row)
    return np.array(out)


def test_dag_subsets_decode_a_best_closed_set():
    space = spaces.DAGSubsets(DIAMOND)
    Y = _closed_sets(DIAMOND)
    rng = np.random.default_rng(3)
    U = rng.normal(size=(200, 6)) - 0.3
    best = (U @ Y.T).max(axis=1)
    got = space.decode(U)
    space.validate(got)
    np.testing.assert_allclose(np.einsum("ij,ij->i", U, got), best, rtol=1e-12)


def test_dag_subsets_have_no_counts_and_say_why():
    space = spaces.DAGSubsets(DIAMOND)
    for call in (space.log_count, space.mean, space.covariance, space.enumerate, lambda: space.sample(3)):
        with pytest.raises(ValueError, match="#P-hard"):
            call()
    with pytest.raises(ValueError, match="parent 2 is not"):
        space.validate([[1, 1, 0, 1, 0, 0]])


def _planted_sets(n_samples: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 3))
    W = np.random.default_rng(0).normal(size=(3, 6)) * 2
    return X, spaces.DAGSubsets(DIAMOND).decode(X @ W - 0.5)


def test_structured_ridge_fits_dag_subsets_with_the_empirical_reference():
    X, Y = _planted_sets(300, 1)
    Xt, Yt = _planted_sets(200, 2)
    space = spaces.DAGSubsets(DIAMOND)
    with pytest.raises(ValueError, match=r"#P-hard.*empirical_weight=1"):
        StructuredRidge(space=space).fit(X, Y)
    model = StructuredRidge(space=space, empirical_weight=1.0, alpha=0.01).fit(X, Y)
    pred = model.predict(Xt)
    space.validate(pred)
    assert np.mean(pred == Yt) > 0.9
    # the same fit as the multi-label one over the same rows: only the decoder differs
    labels = StructuredRidge(space="multilabel", empirical_weight=1.0, alpha=0.01).fit(X, Y)
    np.testing.assert_allclose(model.decision_function(Xt), labels.decision_function(Xt), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(pred, space.decode(model.decision_function(Xt)))
    M = model.predict_marginals(Xt)
    assert M.shape == Yt.shape and np.all((M >= 0) & (M <= 1))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(Xt), pred)
    with pytest.raises(ValueError, match="#P-hard"):
        ProbabilisticStructured(space=space).fit(X, Y)


@pytest.mark.parametrize("space", [spaces.Subtrees, spaces.HierarchyPaths])
@pytest.mark.parametrize("parents", [[[], [0], [0]], np.array([[], [0], [0]], dtype=object)])
def test_tree_spaces_name_parent_sets(space, parents):
    """load_hierarchical's `parents` (a set per node, trees too) given to a tree space failed with
    NumPy's "inhomogeneous shape" error; the error now says which spaces take parent sets."""
    with pytest.raises(ValueError, match="parent sets, one list per node .* are for DAGPaths and DAGSubsets"):
        space(parents)


def test_parent_sets_that_are_not_sets_are_named():
    """A dict was iterated by its keys ({0: [], 1: [0]} read node 0 as its own parent), a bare id
    was taken for a one-element set, and a tree's flat parent array failed on "parent -1 out of
    range" without a hint (probe L)."""
    with pytest.raises(ValueError, match="got a mapping"):
        spaces.DAGPaths({0: [], 1: [0]})
    with pytest.raises(ValueError, match=r"parents\[1\] = 0 is not a sequence"):
        spaces.DAGSubsets([[], 0])
    with pytest.raises(ValueError, match=r"parents\[0\] = -1 is not a sequence.*flat parent array"):
        spaces.DAGPaths([-1, 0, 0])
    assert spaces.DAGPaths([None, [0], (0, 1)]).dim == 3  # None is the root's empty set; any sequence is a set


def test_sparse_scores_are_decoded_as_their_dense_copy():
    """A scipy.sparse U was refused as 'setting an array element with a sequence' (probe L)."""
    from scipy import sparse

    space = spaces.DAGPaths([[], [0], [0], [1, 2]])
    U = np.array([[0.0, 1.0, 0.0, -3.0], [0.0, 0.0, 2.0, 0.0]])
    np.testing.assert_array_equal(space.decode(sparse.csr_matrix(U)), space.decode(U))
    np.testing.assert_array_equal(space.max_margins(sparse.coo_matrix(U)), space.max_margins(U))


def test_dag_subsets_beyond_the_dense_reference_say_how_to_shrink_the_dag():
    # gasch2_GO's 4,132 terms were refused without a word on what to do: no other reference exists
    parents = [[]] + [[i - 1] for i in range(1, 4200)]
    Y = np.zeros((3, 4200), dtype=int)
    Y[:, 0] = 1
    with pytest.raises(ValueError, match="above 4096; .* keep the nodes the training structures hold"):
        StructuredRidge(space=spaces.DAGSubsets(parents), empirical_weight=1).fit(np.eye(3), Y)
