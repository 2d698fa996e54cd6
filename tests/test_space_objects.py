"""Space objects as values: fixed at construction, pickled by parameters that are checked again
when read, and scored only on something (found by a probe of the spaces used directly)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from combpred import spaces

EVERY = [
    spaces.Multiclass(3),
    spaces.Multilabel(3),
    spaces.KSubsets(4, 2),
    spaces.Ordinal(4),
    spaces.HierarchyPaths([-1, 0, 0, 1], leaves_only=True),
    spaces.DAGPaths([[], [0], [0], [1, 2]]),
    spaces.DAGSubsets([[], [0], [0], [1, 2]]),
    spaces.Subtrees([-1, 0, 0, 1]),
    spaces.Permutations(4, decoder="exact"),
    spaces.PartialTournaments(3),
    spaces.DirectedCycles(4),
    spaces.UndirectedCycles(4),
    spaces.Cliques(4),
]


@pytest.mark.parametrize("space", EVERY, ids=repr)
def test_parameters_cannot_change_after_construction(space):
    # Multilabel(3) with n_labels set to 5 equalled Multilabel(5), printed as it, pickled as it,
    # and embedded 3 labels: the core's handle keeps the parameters it was made from.
    public = [k for k in vars(space) if not k.startswith("_")]
    assert public
    for name in public:
        before = getattr(space, name)
        with pytest.raises(AttributeError, match=f"{name} cannot be changed"):
            setattr(space, name, before)
        with pytest.raises(AttributeError, match=f"{name} cannot be deleted"):
            delattr(space, name)
        assert getattr(space, name) == before


@pytest.mark.parametrize("space", EVERY, ids=repr)
def test_pickles_round_trip(space):
    copy = pickle.loads(pickle.dumps(space))
    assert copy == space and repr(copy) == repr(space) and hash(copy) == hash(space)
    assert copy.dim == space.dim and copy.width == space.width


@pytest.mark.parametrize(
    "space, name, value, words",
    [
        (spaces.Multilabel(3), "n_labels", 2**70, "out of range"),
        (spaces.Multilabel(3), "n_labels", "3", "must be an integer"),
        (spaces.Multilabel(3), "n_labels", 3.5, "must be an integer"),
        (spaces.Permutations(4), "decoder", "bogus", "decoder must be one of"),
        (spaces.HierarchyPaths([-1, 0, 0]), "leaves_only", "yes", "leaves_only must be True or False"),
        (spaces.Subtrees([-1, 0, 0]), "parent", [-1, 0, True], "got a bool"),
        (spaces.DAGSubsets([[], [0]]), "parents", "ab", "parents must be"),
    ],
)
def test_tampered_pickles_are_refused_by_the_constructors_checks(space, name, value, words):
    # A pickle is untrusted: its parameters were read unchecked (OverflowError, KeyError at first
    # use, or n_labels='3' taken as 3).
    state = space.__getstate__() | {name: value}
    blank = type(space).__new__(type(space))
    with pytest.raises(ValueError, match=f"a pickled {type(space).__name__} holds an invalid parameter: .*{words}"):
        blank.__setstate__(state)


def test_a_tampered_parent_set_is_refused_by_the_core_at_first_use():
    state = spaces.DAGPaths([[], [0], [0]]).__getstate__() | {"parents": ((), (2,), (7,))}
    blank = spaces.DAGPaths.__new__(spaces.DAGPaths)
    blank.__setstate__(state)
    with pytest.raises(ValueError, match="out of range"):
        _ = blank.dim


@pytest.mark.parametrize("space", [spaces.Multiclass(3), spaces.Multilabel(3), spaces.Permutations(3)], ids=repr)
def test_scoring_nothing_is_an_error(space):
    # The mean of no scores was nan with NumPy's "Mean of empty slice" warning.
    empty = np.zeros((0,) if space.width == 1 else (0, space.width), dtype=np.int64)
    with pytest.raises(ValueError, match="hold no structures"):
        space.score(empty, empty)
    assert space.score_samples(empty, empty).shape == (0,)


@pytest.mark.parametrize(
    ("cls", "size"),
    [
        (spaces.Permutations, "n_labels"),
        (spaces.PartialTournaments, "n_items"),
        (spaces.DirectedCycles, "n_vertices"),
        (spaces.UndirectedCycles, "n_vertices"),
        (spaces.Cliques, "n_vertices"),
    ],
)
def test_pair_spaces_take_their_size_by_the_name_their_docstrings_use(cls, size):
    # Permutations(n_labels=4) was a TypeError from a private base class, and
    # DirectedCycles(5).n_vertices did not exist
    by_name = cls(**{size: 5})
    assert by_name == cls(5) and getattr(by_name, size) == 5
    assert pickle.loads(pickle.dumps(by_name)) == by_name
    with pytest.raises(ValueError, match=size):
        cls(**{size: -1})
    # the size is held as n, as pickles made before held it; a bogus one is still refused
    state = by_name.__getstate__()
    assert state["n"] == 5 and size not in state
    clone = cls.__new__(cls)
    with pytest.raises(ValueError, match="invalid parameter"):
        clone.__setstate__({**state, "n": "5"})


def test_partial_tournaments_cannot_predict_an_unordered_pair_as_documented():
    # the thesis' ψ (the row itself) gives an unordered pair score 0 against ±u for its
    # orientations: predict orients every pair, and the model's probability of "unordered" is
    # 1/(1 + e^u + e^-u) ≤ 1/3 per pair even when 90 % of the training pairs are unordered
    from combpred import ProbabilisticStructured, StructuredRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = np.where(rng.random((200, 3)) < 0.9, 0, rng.choice([-1, 1], size=(200, 3)))
    space = spaces.PartialTournaments(3)
    assert np.all(StructuredRidge(space=space).fit(X, Y).predict(X) != 0)
    prob = ProbabilisticStructured(space=space).fit(X, Y)
    every = space.enumerate()
    assert len(every) == 27
    rows = np.repeat(X[:5], len(every), axis=0)
    p = np.exp(prob.score_samples(rows, np.tile(every, (5, 1)))).reshape(5, len(every))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-9)
    unordered = p @ (every == 0)  # (5 rows, 3 pairs)
    assert np.all(unordered <= 1 / 3 + 1e-12) and unordered.max() > 0.3


def test_spaces_with_the_same_few_parameters_share_one_core_handle():
    # a core space never changes once made, so spaces with the same kind and a few integer
    # parameters share the handle made last (a fit with space="multilabel" made one every time,
    # issue 18); the number kept is bounded, and a space with many parameters has its own
    from combpred import _core

    a, b = spaces.Multilabel(5), spaces.Multilabel(5)
    assert a._handle() is b._handle()
    assert spaces.Multilabel(6)._handle() is not a._handle()
    assert (
        spaces.Permutations(5, decoder="exact")._handle() is not spaces.Permutations(5, decoder="approximate")._handle()
    )
    kept = a._handle()
    for n in range(7, 7 + _core._RECENT_SPACES_MAX + 1):
        spaces.Multilabel(n)
    assert len(_core._recent_spaces()) <= _core._RECENT_SPACES_MAX
    c = spaces.Multilabel(5)
    assert c._handle() is not kept  # forgotten, made again; a and b keep theirs alive
    np.testing.assert_array_equal(c.mean(), a.mean())
    parent = [-1, 0, 0, 1, 1, 2]  # more integers than the handles kept take
    assert spaces.Subtrees(parent)._handle() is not spaces.Subtrees(parent)._handle()


def test_spaces_are_shared_only_between_equal_parameters():
    # shared handles answer for their own parameters: a space refused by the core is not kept,
    # and every space of EVERY made again reports what the first did
    with pytest.raises(ValueError):
        spaces.Permutations(10**6, decoder="exact")
    for space in EVERY:
        again = pickle.loads(pickle.dumps(space))
        assert again._info() == space._info()


def test_every_space_documents_its_parameters_and_their_least_values():
    """Nine space classes named their parameters in prose only (probe EM). Each class's Parameters
    section lists every __init__ parameter, and the least sizes it states are the core's."""
    import inspect
    import re

    for name in spaces.__all__:
        cls = getattr(spaces, name)
        if not (isinstance(cls, type) and issubclass(cls, spaces.Space)) or cls is spaces.Space:
            continue
        section = inspect.getdoc(cls).split("Parameters\n----------\n", 1)
        assert len(section) == 2, f"{name} has no Parameters section"
        for param in list(inspect.signature(cls.__init__).parameters)[1:]:
            assert re.search(rf"^{param} :", section[1], re.M), f"{name}: {param} is not documented"
    for make, least in [
        (spaces.Multiclass, 1),
        (spaces.Multilabel, 1),
        (spaces.Ordinal, 2),
        (spaces.PartialTournaments, 2),
        (lambda k: spaces.KSubsets(4, k), 1),
    ]:
        make(least)
        with pytest.raises(ValueError):
            make(least - 1)
    with pytest.raises(ValueError):
        spaces.KSubsets(4, 5)  # k at most n_labels
