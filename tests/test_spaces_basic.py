"""Multiclass and Multilabel spaces from Python, against brute force over enumerate()."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _synthetic import brute_moments
from combpred import spaces
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import chisquare

SIZES = range(1, 7)
ALL = [spaces.Multiclass(d) for d in SIZES] + [spaces.Multilabel(d) for d in SIZES]


def _rows(space, Y):
    """Structures as 2-D integer rows (Multiclass returns a 1-D array of class ids)."""
    return np.asarray(Y).reshape(len(Y), -1)


@pytest.mark.parametrize("space", ALL, ids=repr)
def test_enumeration_size_and_encoding(space):
    E = _rows(space, space.enumerate())
    if isinstance(space, spaces.Multiclass):
        assert E.shape == (space.n_classes, 1)
        assert sorted(E[:, 0]) == list(range(space.n_classes))
        assert space.dim == space.n_classes
    else:
        assert E.shape == (2**space.n_labels, space.n_labels)
        assert set(np.unique(E)) <= {0, 1}
        assert space.dim == space.n_labels
    assert space.width == E.shape[1]
    assert space.log_count() == pytest.approx(math.log(len(E)), abs=1e-12)
    assert len(np.unique(E, axis=0)) == len(E)
    assert space.decoder_guarantee == 0.0


@pytest.mark.parametrize("space", ALL, ids=repr)
def test_embed_of_enumeration_is_distinct(space):
    Y = space.enumerate()
    psi = space.embed(Y)
    assert psi.shape == (len(Y), space.dim)
    assert len(np.unique(psi, axis=0)) == len(Y)
    if isinstance(space, spaces.Multiclass):
        assert_array_equal(psi, np.eye(space.n_classes)[Y])
    else:
        assert_array_equal(psi, Y)


@pytest.mark.parametrize("space", ALL, ids=repr)
def test_moments_equal_brute_force(space):
    p, S = brute_moments(space)
    assert_allclose(space.mean(), p, rtol=1e-12, atol=1e-14)
    assert_allclose(space.covariance(), S, rtol=1e-12, atol=1e-14)
    v = np.random.default_rng(space.dim).normal(size=space.dim)
    assert_allclose(space.covariance_dot(v), S @ v, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("space", ALL, ids=repr)
def test_samples_are_uniform(space):
    E = _rows(space, space.enumerate())
    index = {tuple(row): i for i, row in enumerate(E)}
    n = 300 * len(E)
    S = _rows(space, space.sample(n, random_state=12345))
    assert S.shape == (n, space.width)
    counts = np.bincount([index[tuple(row)] for row in S], minlength=len(E))  # KeyError if not a structure
    assert counts.sum() == n
    if len(E) == 1:
        return
    assert chisquare(counts).pvalue > 1e-4
    # a fixed seed reproduces the samples; another seed gives others
    assert_array_equal(_rows(space, space.sample(n, random_state=12345)), S)
    assert not np.array_equal(_rows(space, space.sample(n, random_state=54321)), S)


@pytest.mark.parametrize("space", ALL, ids=repr)
def test_decode_is_brute_force_argmax(space):
    Y = space.enumerate()
    psi = space.embed(Y)
    U = np.random.default_rng(100 + space.dim).normal(size=(200, space.dim))
    best = np.argmax(U @ psi.T, axis=1)
    assert_array_equal(space.decode(U), Y[best])
    # a single row of scores may be given as a vector
    assert_array_equal(space.decode(U[0]), Y[best[:1]])


@pytest.mark.parametrize("d", [3, 5])
def test_validate_names_the_bad_row_multiclass(d):
    space = spaces.Multiclass(d)
    space.validate(np.arange(d))
    for bad in (d, -1, 10 * d):
        y = np.zeros(6, dtype=np.int64)
        y[4] = bad
        with pytest.raises(ValueError, match=rf"row 4: class {bad} is outside \[0, {d}\)"):
            space.validate(y)
        with pytest.raises(ValueError, match="row 4"):
            space.embed(y)


@pytest.mark.parametrize("d", [1, 4])
def test_validate_names_the_bad_row_multilabel(d):
    space = spaces.Multilabel(d)
    space.validate(space.enumerate())
    for bad in (2, -1):
        Y = np.zeros((5, d), dtype=np.int64)
        Y[3, d - 1] = bad
        with pytest.raises(ValueError, match=rf"row 3: label {d - 1} has value {bad}"):
            space.validate(Y)
        with pytest.raises(ValueError, match="row 3"):
            space.embed(Y)


def test_validate_rejects_bad_shapes_and_types():
    space = spaces.Multilabel(3)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 3\)"):
        space.validate(np.zeros((4, 2), dtype=int))
    with pytest.raises(ValueError, match="NaN"):
        space.validate(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="fractional"):
        space.validate(np.full((2, 3), 0.5))
    with pytest.raises(TypeError, match="integers"):
        space.validate(np.array([["a", "b", "c"]]))
    space.validate(np.array([[True, False, True]]))  # booleans are 0/1
    with pytest.raises(ValueError, match="NaN"):
        space.decode(np.array([[0.0, np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"shape \(n_samples, 3\)"):
        space.decode(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="n_samples"):
        space.sample(-1)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        space.covariance_dot(np.zeros(4))


@pytest.mark.parametrize("cls", [spaces.Multiclass, spaces.Multilabel])
@pytest.mark.parametrize(
    "bad, match",
    [
        (0, r"needs n_\w+ ≥ 1, got 0"),
        (-2, r"needs n_\w+ ≥ 1, got -2"),
        (2.5, "integer"),
        (True, "integer"),
        ("3", "integer"),
    ],
)
def test_bad_sizes(cls, bad, match):
    with pytest.raises(ValueError, match=match):
        cls(bad)


def test_equality_hash_repr():
    assert spaces.Multilabel(3) == spaces.Multilabel(3)
    assert spaces.Multilabel(3) != spaces.Multilabel(4)
    assert spaces.Multilabel(3) != spaces.Multiclass(3)
    assert len({spaces.Multilabel(3), spaces.Multilabel(3), spaces.Multiclass(3)}) == 2
    assert repr(spaces.Multiclass(5)) == "Multiclass(5)"


def test_score():
    mc = spaces.Multiclass(4)
    assert mc.score([0, 1, 2, 3], [0, 1, 3, 3]) == pytest.approx(0.75)
    ml = spaces.Multilabel(2)
    assert ml.score([[0, 1], [1, 1]], [[0, 0], [1, 1]]) == pytest.approx(0.75)


def test_empty_inputs():
    space = spaces.Multilabel(3)
    assert space.embed(np.zeros((0, 3), dtype=int)).shape == (0, 3)
    assert space.sample(0).shape == (0, 3)
    assert space.decode(np.zeros((0, 3))).shape == (0, 3)


def test_leaves_only_must_be_a_boolean():
    # bool("False") is True: a string would have silently meant the opposite.
    for make in (
        lambda v: spaces.HierarchyPaths([-1, 0, 0], leaves_only=v),
        lambda v: spaces.DAGPaths([[], [0]], leaves_only=v),
    ):
        with pytest.raises(TypeError, match="leaves_only must be True or False, got 'False'"):
            make("False")
        assert make(np.bool_(True)).leaves_only is True and make(False).leaves_only is False


@pytest.mark.parametrize("make", [spaces.Subtrees, spaces.HierarchyPaths])
def test_parent_ids_are_not_bools(make):
    """np.asarray([-1, 0, True]) is an integer array: True became node 1 without a word, where
    Multilabel(True) and DAGPaths refuse a bool."""
    for bad in ([-1, 0, True], [-1, 0, np.bool_(True)], [-1, 0, np.array(True)]):
        with pytest.raises(ValueError, match="parent must hold integer node ids, got a bool"):
            make(bad)
    with pytest.raises(ValueError, match="parent must be a non-empty 1-D integer array"):
        make(np.array([True, False]))
    assert make([-1, 0, 1]).parent == (-1, 0, 1)


def test_from_name_takes_y_as_a_list():
    # a list met Y.ndim: AttributeError
    assert spaces.from_name("multilabel", [[0, 1], [1, 0]]) == spaces.Multilabel(2)
    assert spaces.from_name("tournaments", [[0, 1, -1]]) == spaces.PartialTournaments(3)


def test_from_name_says_what_it_needs():
    """'multiclass' without n_classes read "n_classes must be an integer, got None", and a y of too
    many columns was "too few" for the space (probes O and N)."""
    with pytest.raises(ValueError, match=r"from_name\('multiclass', \.\.\.\) needs n_classes"):
        spaces.from_name("multiclass", [0, 1, 2])
    assert spaces.from_name("multiclass", None, n_classes=3) == spaces.Multiclass(3)

    class Wide:  # only the shape is read
        shape, ndim = (2, 10**11), 2

    with pytest.raises(ValueError, match=r"y has 100000000000 column\(s\), which space='permutations' cannot take"):
        spaces.from_name("permutations", Wide())


def test_fractional_and_nan_values_name_their_row():
    """The spaces promise an error naming the first invalid row, fractional values included: a
    value of 2 named its row, a 0.5 or a NaN did not (probe BN)."""
    Y = np.array([[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0.5]])
    with pytest.raises(ValueError, match=r"^Y must hold integers, found a fractional value at row 3, column 2$"):
        spaces.Multilabel(3).validate(Y)
    with pytest.raises(ValueError, match=r"^Y contains NaN or infinity at row 3, column 2$"):
        spaces.Multilabel(3).validate(np.where(Y == 0.5, np.nan, Y))
    # scores too (probe DZ: "U contains NaN or infinity" among a thousand rows)
    U = np.zeros((1000, 3))
    U[999, 2] = -np.inf
    for method in (spaces.Multilabel(3).decode, spaces.Multilabel(3).max_margins):
        with pytest.raises(ValueError, match=r"^U contains NaN or infinity at row 999, column 2$"):
            method(U)


def test_an_unknown_name_lists_every_space_built_as_an_object():
    """The list of spaces that need parameters had not followed the DAG spaces (probe FH)."""
    with pytest.raises(ValueError, match="unknown space 'trees'") as info:
        spaces.from_name("trees", [[0, 1]])
    listed = str(info.value).split("need parameters (")[1].rstrip(")").split(", ")
    assert listed == ["KSubsets", "Ordinal", "HierarchyPaths", "DAGPaths", "DAGSubsets", "Subtrees"]


def test_undirected_cycles_come_back_in_the_documented_orientation():
    """The docstring says decode, sample and enumerate return the orientation in which the smallest
    vertex points to the smaller of its neighbours (a user comparing rows with == read every
    route of the other orientation as wrong, probe FJ)."""
    sp = spaces.UndirectedCycles(6)
    rows = np.vstack(
        [
            np.array(list(sp.enumerate())),
            sp.sample(200, random_state=0),
            sp.decode(np.random.default_rng(0).normal(size=(200, 15))),
        ]
    )
    for row in rows:
        on = np.flatnonzero(row >= 0)
        first = on.min()
        before = int(np.flatnonzero(row == first)[0])  # the neighbour pointing to it
        assert row[first] < before, row
