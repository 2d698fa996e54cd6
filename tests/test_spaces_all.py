"""Every output space of combpred.spaces, checked against brute force over enumerable sizes.

For each space at several sizes (and tree shapes): log|Y|, the closed-form moments p and S, the
covariance operator, distinct embeddings, validation (accepts exactly Y, names the bad row), exact
uniform sampling (chi-square), exact decoding (against argmax over Y) and pickling. Then: constructor
errors, the approximate decoders against the NumPy dynamic programmes of benchmarks/_exact.py, and
the (proposed) way to demand exact decoding.
"""

from __future__ import annotations

import functools
import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from combpred import spaces
from scipy.stats import chisquare

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import _exact  # noqa: E402  (NumPy exact DPs shared with benchmarks/spaces.py)

RTOL = 1e-12


# -- trees --------------------------------------------------------------------------------------
def _random_tree(n: int, seed: int) -> list[int]:
    """A random recursive tree with shuffled node ids, so that parents are not numbered first."""
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(0, v)) for v in range(1, n)]
    perm = rng.permutation(n)  # node v is renamed perm[v]
    out = [0] * n
    for v in range(n):
        out[perm[v]] = -1 if parent[v] < 0 else int(perm[parent[v]])
    return out


TREES = {
    "single": [-1],
    "chain5": [-1, 0, 1, 2, 3],
    "star7": [-1, 0, 0, 0, 0, 0, 0],
    "binary15": [-1] + [(v - 1) // 2 for v in range(1, 15)],
    "caterpillar": [-1, 0, 1, 2, 0, 0, 1, 1, 2, 2, 3, 3],
    "rootlast": [4, 4, 0, 0, -1, 2],
    "random9": _random_tree(9, 1),
    "random12": _random_tree(12, 7),
}

# name -> factory; every space class at ≥ 3 sizes, the tree spaces on every shape above.
CASES: dict[str, callable] = {}
for n in (1, 2, 5, 9):
    CASES[f"multiclass-{n}"] = functools.partial(spaces.Multiclass, n)
for n in (1, 3, 6, 9):
    CASES[f"multilabel-{n}"] = functools.partial(spaces.Multilabel, n)
for n, k in ((1, 1), (5, 2), (7, 3), (8, 8), (10, 5)):
    CASES[f"ksubsets-{n}-{k}"] = functools.partial(spaces.KSubsets, n, k)
for n in (2, 3, 6, 11):
    CASES[f"ordinal-{n}"] = functools.partial(spaces.Ordinal, n)
for name, parent in TREES.items():
    CASES[f"paths-{name}"] = functools.partial(spaces.HierarchyPaths, parent)
    CASES[f"leafpaths-{name}"] = functools.partial(spaces.HierarchyPaths, parent, leaves_only=True)
    CASES[f"subtrees-{name}"] = functools.partial(spaces.Subtrees, parent)
DAGS = {
    "single": [[]],
    "diamond": [[], [0], [0], [1, 2]],
    "shortcut": [[], [0], [0, 1]],
    "rootlast": [[2], [2], [], [0, 1], [0, 1, 3]],
    "two-diamonds": [[], [0], [0], [1, 2], [1], [3, 4], [2, 5]],
}
for name, parents in DAGS.items():
    CASES[f"dagpaths-{name}"] = functools.partial(spaces.DAGPaths, parents)
    CASES[f"dagleafpaths-{name}"] = functools.partial(spaces.DAGPaths, parents, leaves_only=True)
for n in (2, 3, 4, 5, 8):  # one label has no pairs: Permutations(1) is refused
    CASES[f"permutations-{n}"] = functools.partial(spaces.Permutations, n)
for n in (2, 3, 4, 5):
    CASES[f"tournaments-{n}"] = functools.partial(spaces.PartialTournaments, n)
for n in (3, 4, 5, 7, 9):
    CASES[f"dicycles-{n}"] = functools.partial(spaces.DirectedCycles, n)
for n in (3, 4, 6, 8):
    CASES[f"ucycles-{n}"] = functools.partial(spaces.UndirectedCycles, n)
for n in (2, 3, 5, 8, 13):
    CASES[f"cliques-{n}"] = functools.partial(spaces.Cliques, n)

ALL_CLASSES = {
    spaces.Multiclass,
    spaces.Multilabel,
    spaces.KSubsets,
    spaces.Ordinal,
    spaces.HierarchyPaths,
    spaces.DAGPaths,
    spaces.Subtrees,
    spaces.Permutations,
    spaces.PartialTournaments,
    spaces.DirectedCycles,
    spaces.UndirectedCycles,
    spaces.Cliques,
}


class Brute:
    """A space with its enumeration, embeddings and brute-force moments (computed once per case)."""

    def __init__(self, name: str):
        self.name = name
        self.space = CASES[name]()
        self.Y = self.space.enumerate()
        self.rows = self.Y.reshape(len(self.Y), -1)
        self.psi = self.space.embed(self.Y)
        self.mean = self.psi.mean(axis=0)
        centred = self.psi - self.mean
        self.cov = centred.T @ centred / len(self.psi)
        self.index = {row.tobytes(): i for i, row in enumerate(self.psi)}


@functools.cache
def brute(name: str) -> Brute:
    return Brute(name)


def _close(actual, expected, rtol: float = RTOL) -> None:
    """Equal to rtol relative to the scale of the expected array (entries may be exactly zero)."""
    expected = np.asarray(expected, dtype=float)
    scale = float(np.abs(expected).max()) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * max(scale, 1e-300))


def _scores(space: spaces.Space, Y: np.ndarray, U: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", space.embed(Y), U)


def test_every_space_class_is_covered():
    covered = {type(CASES[name]()) for name in CASES}
    public = {
        obj
        for obj in vars(spaces).values()
        if isinstance(obj, type)
        and issubclass(obj, spaces.Space)
        and obj is not spaces.Space
        and not obj.__name__.startswith("_")
    }
    # DAGSubsets has no counts to compare with enumeration: tests/test_dag_spaces.py checks it
    assert public == ALL_CLASSES | {spaces.DAGSubsets}
    assert covered == ALL_CLASSES
    for cls in ALL_CLASSES - {spaces.HierarchyPaths, spaces.Subtrees}:
        assert sum(type(CASES[name]()) is cls for name in CASES) >= 3, cls
    assert {CASES[name]().leaves_only for name in CASES if name.startswith(("paths", "leafpaths"))} == {False, True}
    assert {CASES[name]().leaves_only for name in CASES if name.startswith("dag")} == {False, True}


@pytest.mark.parametrize("name", CASES)
class TestAgainstBruteForce:
    def test_log_count(self, name):
        b = brute(name)
        assert b.space.log_count() == pytest.approx(math.log(len(b.Y)), rel=RTOL, abs=RTOL)

    def test_mean_and_covariance(self, name):
        b = brute(name)
        assert b.space.dim == b.psi.shape[1]
        assert b.rows.shape[1] == b.space.width
        _close(b.space.mean(), b.mean)
        cov = b.space.covariance()
        _close(cov, b.cov)
        np.testing.assert_array_equal(cov, cov.T)

    def test_covariance_dot(self, name):
        b = brute(name)
        rng = np.random.default_rng(len(name))
        cov = b.space.covariance()
        for v in (rng.normal(size=b.space.dim), np.ones(b.space.dim), rng.integers(-3, 4, b.space.dim)):
            expected = cov @ v
            scale = max(float(np.abs(cov).sum(axis=1).max(initial=0)), 1.0) * max(float(np.abs(v).max(initial=0)), 1.0)
            np.testing.assert_allclose(b.space.covariance_dot(v), expected, rtol=0, atol=1e-12 * scale)
        with pytest.raises(ValueError, match="shape"):
            b.space.covariance_dot(np.zeros(b.space.dim + 1))
        # near the float64 limit: the product is linear, so S·v = 2^k · S·(v / 2^k) where that is
        # finite ([1e308, 1e308, 0] on Multilabel(3) was refused as "S·v[0] = NaN", probe DZ);
        # where it is not, it is refused as an overflow
        huge = 1e308 * np.sign(rng.normal(size=b.space.dim))
        want = 2.0**1000 * b.space.covariance_dot(huge / 2.0**1000)
        if np.all(np.isfinite(want)):
            np.testing.assert_allclose(b.space.covariance_dot(huge), want, rtol=1e-12, atol=0)
        else:
            with pytest.raises(ValueError, match=r"^S·v overflows float64 \(v's largest \|value\| is 1e\+308\)"):
                b.space.covariance_dot(huge)

    def test_embeddings_distinct(self, name):
        b = brute(name)
        assert len(b.index) == len(b.Y)
        assert len({row.tobytes() for row in b.rows}) == len(b.Y)

    def test_validate_accepts_exactly_the_structures(self, name):
        b = brute(name)
        b.space.validate(b.Y)  # every enumerated structure, in one call
        accepted = {tuple(r) for r in b.rows}
        if isinstance(b.space, spaces.UndirectedCycles):  # the other orientation is the same cycle
            accepted |= {tuple(_reverse_cycle(r)) for r in b.rows}
        rng = np.random.default_rng(123)
        lo, hi = _value_domain(b.space)
        candidates = [rng.integers(lo, hi + 1, size=b.space.width) for _ in range(150)]
        for _ in range(250):  # near misses: one value changed, or two swapped
            row = b.rows[rng.integers(len(b.rows))].copy()
            j = rng.integers(b.space.width)
            if rng.random() < 0.5 or b.space.width < 2:
                row[j] = rng.integers(lo, hi + 1)
            else:
                k = rng.integers(b.space.width)
                row[j], row[k] = row[k], row[j]
            candidates.append(row)
        n_rejected = 0
        for row in candidates:
            if tuple(row) in accepted:
                b.space.validate(row.reshape(1, -1))
                continue
            n_rejected += 1
            good = b.rows[: min(2, len(b.rows))]
            with pytest.raises(ValueError, match=rf"^Y: row {len(good)}: "):
                b.space.validate(np.vstack([good, row]))
            with pytest.raises(ValueError, match=rf"^Y: row {len(good)}: "):
                b.space.embed(np.vstack([good, row]))
        assert n_rejected > 0

    def test_sample_is_uniform(self, name):
        b = brute(name)
        size = len(b.Y)
        samples = b.space.sample(min(max(60 * size, 600), 30000), random_state=2024)
        b.space.validate(samples)
        if size < 2 or size > 400:
            assert size == 1 or size > 400
            return
        keys = [b.index[row.tobytes()] for row in b.space.embed(samples)]
        counts = np.bincount(keys, minlength=size)
        assert chisquare(counts).pvalue > 1e-4, counts

    def test_sample_reproducible(self, name):
        space = brute(name).space
        np.testing.assert_array_equal(space.sample(20, random_state=5), space.sample(20, random_state=5))

    def test_decode_is_argmax(self, name):
        b = brute(name)
        assert b.space.decoder_guarantee == 0.0
        rng = np.random.default_rng(99)
        d = b.space.dim
        U = np.vstack(
            [
                rng.normal(size=(200, d)),
                rng.integers(-1, 2, size=(40, d)).astype(float),  # many ties
                np.zeros((1, d)),
                1e6 * rng.normal(size=(5, d)),
            ]
        )
        Y = b.space.decode(U)
        b.space.validate(Y)
        best = (b.psi @ U.T).max(axis=0)
        got = _scores(b.space, Y, U)
        np.testing.assert_allclose(got, best, rtol=1e-9, atol=1e-9 * np.abs(U).sum(axis=1).max())

    def test_pickle_round_trip(self, name):
        space = brute(name).space
        fresh = CASES[name]()
        for original in (fresh, space):  # before and after the Go handle exists
            copy = pickle.loads(pickle.dumps(original))
            assert copy == original and hash(copy) == hash(original) and repr(copy) == repr(original)
            assert copy.dim == original.dim and copy.log_count() == original.log_count()
            np.testing.assert_array_equal(copy.mean(), original.mean())
            U = np.random.default_rng(0).normal(size=(5, copy.dim))
            np.testing.assert_array_equal(copy.decode(U), original.decode(U))


LARGE = {
    "multiclass-300": lambda: spaces.Multiclass(300),
    "multilabel-300": lambda: spaces.Multilabel(300),
    "ksubsets-300-100": lambda: spaces.KSubsets(300, 100),
    "ordinal-300": lambda: spaces.Ordinal(300),
    "paths-random400": lambda: spaces.HierarchyPaths(_random_tree(400, 3)),
    "leafpaths-random400": lambda: spaces.HierarchyPaths(_random_tree(400, 3), leaves_only=True),
    "subtrees-random400": lambda: spaces.Subtrees(_random_tree(400, 3)),
    "subtrees-chain300": lambda: spaces.Subtrees([-1] + list(range(299))),
    "permutations-40": lambda: spaces.Permutations(40),
    "tournaments-25": lambda: spaces.PartialTournaments(25),
    "dicycles-40": lambda: spaces.DirectedCycles(40),
    "ucycles-40": lambda: spaces.UndirectedCycles(40),
    "cliques-40": lambda: spaces.Cliques(40),
}


@pytest.mark.parametrize("name", LARGE)
def test_operator_and_sampling_agree_with_moments_beyond_enumeration(name):
    """Beyond enumerable sizes: the covariance operator equals the dense S, S is positive
    semi-definite, and the moments of 20,000 uniform samples match p and S along random directions."""
    space = LARGE[name]()
    d = space.dim
    assert np.isfinite(space.log_count())
    if space.log_count() > math.log(2**22):  # MaxEnumerate of core/space
        with pytest.raises(ValueError, match="enumerate"):
            space.enumerate()
    p, S = space.mean(), space.covariance()
    np.testing.assert_array_equal(S, S.T)
    assert np.linalg.eigvalsh(S).min() > -1e-10 * max(1.0, np.abs(S).max())
    rng = np.random.default_rng(17)
    A = np.vstack([rng.normal(size=d), np.ones(d), rng.integers(0, 2, d)]).astype(float)
    for a in A:
        np.testing.assert_allclose(
            space.covariance_dot(a), S @ a, rtol=0, atol=1e-12 * np.abs(S).sum(axis=1).max() * np.abs(a).max()
        )
    Y = space.sample(20_000, random_state=3)
    space.validate(Y)
    proj = space.embed(Y) @ A.T
    for j, a in enumerate(A):
        var = a @ S @ a
        if var < 1e-12:  # a constant direction (the root of a tree): every sample has the mean
            np.testing.assert_allclose(proj[:, j], a @ p, atol=1e-9)
            continue
        assert abs(proj[:, j].mean() - a @ p) < 6 * np.sqrt(var / len(Y)), (j, proj[:, j].mean(), a @ p)
        assert proj[:, j].var() == pytest.approx(var, rel=0.08), j


def _subtree_count(parent: list[int]) -> int:
    children: dict[int, list[int]] = {}
    for v, u in enumerate(parent):
        children.setdefault(u, []).append(v)
    g = {}
    order = [children[-1][0]]
    for v in order:
        order.extend(children.get(v, []))
    for v in reversed(order):  # g(v) = Π_children (1 + g(c)), exact in Python integers
        g[v] = math.prod(1 + g[c] for c in children.get(v, []))
    return g[order[0]]


def _cycle_count(n: int) -> int:
    return sum(math.comb(n, i) * math.factorial(i - 1) for i in range(3, n + 1))


_BIG_TREE = _random_tree(2000, 5)
LOG_COUNTS = [
    (spaces.Multiclass(5000), 5000),
    (spaces.Multilabel(2000), 2**2000),
    (spaces.KSubsets(2000, 1000), math.comb(2000, 1000)),
    (spaces.Ordinal(1000), 1000),
    (spaces.HierarchyPaths(_BIG_TREE), 2000),
    (spaces.HierarchyPaths(_BIG_TREE, leaves_only=True), 2000 - len(set(_BIG_TREE) - {-1})),
    (spaces.Subtrees(_BIG_TREE), _subtree_count(_BIG_TREE)),
    (spaces.Subtrees([-1] + [0] * 1999), 2**1999),
    (spaces.Permutations(300), math.factorial(300)),
    (spaces.PartialTournaments(300), 3 ** (300 * 299 // 2)),
    (spaces.DirectedCycles(300), _cycle_count(300)),
    (spaces.UndirectedCycles(300), _cycle_count(300) // 2),
    (spaces.Cliques(300), 2**300 - 300),
    (spaces.DirectedCycles(3), 2),
    (spaces.UndirectedCycles(3), 1),
]


@pytest.mark.parametrize("space, count", LOG_COUNTS, ids=[repr(s) for s, _ in LOG_COUNTS])
def test_log_count_at_large_sizes_against_exact_integers(space, count):
    assert space.log_count() == pytest.approx(math.log(count), rel=1e-12)


def test_dense_covariance_refused_for_large_pair_spaces():
    with pytest.raises(ValueError, match="too large for a dense matrix"):
        spaces.Permutations(300).covariance()


def _reverse_cycle(row: np.ndarray) -> np.ndarray:
    out = np.full_like(row, -1)
    for v, s in enumerate(row):
        if s >= 0:
            out[s] = v
    return out


def _value_domain(space: spaces.Space) -> tuple[int, int]:
    """A range of integers reaching just past the valid values of one entry."""
    if isinstance(space, spaces.PartialTournaments):
        return -2, 2
    if isinstance(space, (spaces.Multiclass,)):  # Ordinal, HierarchyPaths: one id
        return -2, space.dim + 1
    if isinstance(space, spaces.Permutations):
        return 0, space.width + 1
    if isinstance(space, (spaces.DirectedCycles, spaces.UndirectedCycles)):
        return -2, space.width
    return -1, 2  # 0/1 rows


# -- explicit corruptions: each names the row and the problem --------------------------------------
CORRUPTIONS = [
    (spaces.Permutations(4), [[1, 2, 3, 4], [4, 3, 2, 1]], [2, 2, 3, 4], r"rank 2 appears twice"),
    (spaces.Permutations(4), [[1, 2, 3, 4], [4, 3, 2, 1]], [1, 2, 3, 5], r"rank 5, outside \[1, 4\]"),
    (spaces.Permutations(4), [[1, 2, 3, 4], [4, 3, 2, 1]], [0, 1, 2, 3], r"rank 0, outside"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [1, 2, 6, -1, -1, -1], "out of range"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [1, 2, 0, 4, 5, 3], "two cycles"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [1, 0, -1, -1, -1, -1], "length 2"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [0, -1, -1, -1, -1, -1], "its own successor"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [-1] * 6, "no vertex is on the cycle"),
    (spaces.DirectedCycles(6), [[1, 2, 0, -1, -1, -1]], [1, 2, 3, -1, -1, -1], "not on the cycle"),
    (spaces.UndirectedCycles(5), [[1, 2, 0, -1, -1], [2, 0, 1, -1, -1]], [1, 0, 3, 4, 2], "two cycles|length 2"),
    (spaces.UndirectedCycles(5), [[1, 2, 0, -1, -1]], [1, 2, 0, 0, -1], "successor"),
    (spaces.Subtrees([-1, 0, 0, 1]), [[1, 0, 0, 0], [1, 1, 0, 1]], [1, 0, 0, 1], "node 3 .*parent 1 is not"),
    (spaces.Subtrees([-1, 0, 0, 1]), [[1, 0, 0, 0]], [0, 1, 0, 0], "root"),
    (spaces.Subtrees([-1, 0, 0, 1]), [[1, 0, 0, 0]], [1, 2, 0, 0], "value 2"),
    (spaces.KSubsets(4, 2), [[1, 1, 0, 0], [0, 0, 1, 1]], [1, 1, 1, 0], "3 labels, want 2"),
    (spaces.KSubsets(4, 2), [[1, 1, 0, 0]], [1, 0, 0, 0], "1 labels, want 2"),
    (spaces.KSubsets(4, 2), [[1, 1, 0, 0]], [2, 0, 0, 0], "value 2"),
    (spaces.PartialTournaments(3), [[1, 0, -1], [0, 0, 0]], [1, 2, 0], r"value 2 at pair \(0,2\)"),
    (spaces.PartialTournaments(3), [[1, 0, -1]], [-2, 0, 0], r"value -2"),
    (spaces.Multilabel(3), [[1, 0, 1], [0, 0, 0]], [1, 2, 0], "label 1 has value 2"),
    (spaces.Multilabel(3), [[1, 0, 1]], [-1, 0, 0], "value -1"),
    (spaces.Multiclass(3), [[0], [2]], [3], r"class 3 is outside \[0, 3\)"),
    (spaces.Multiclass(3), [[0]], [-1], "class -1"),
    (spaces.Ordinal(3), [[0], [2]], [3], r"level 3 outside \[0, 3\)"),
    (spaces.HierarchyPaths([-1, 0, 0, 1], leaves_only=True), [[2], [3]], [1], "not a leaf"),
    (spaces.HierarchyPaths([-1, 0, 0, 1]), [[2], [3]], [4], r"node 4 outside \[0, 4\)"),
    (spaces.Cliques(4), [[1, 1, 0, 0], [0, 0, 0, 0]], [1, 0, 0, 0], "exactly one vertex"),
    (spaces.Cliques(4), [[1, 1, 0, 0]], [1, 2, 0, 0], "value 2"),
]


@pytest.mark.parametrize(
    "space, good, bad, message", CORRUPTIONS, ids=lambda x: repr(x) if isinstance(x, spaces.Space) else ""
)
def test_validate_names_row_and_problem(space, good, bad, message):
    space.validate(np.array(good))
    Y = np.array(good + [bad] + good)
    with pytest.raises(ValueError, match=rf"^Y: row {len(good)}: .*({message})"):
        space.validate(Y)


@pytest.mark.parametrize(
    "space, good, bad, message", CORRUPTIONS, ids=lambda x: repr(x) if isinstance(x, spaces.Space) else ""
)
def test_score_samples_refuses_what_validate_refuses(space, good, bad, message):
    """score_samples scored invalid structures on the spaces with their own scores (a 0/1 row
    holding 7, class 100 of three, a subtree without its root, node 99 of a path space)."""
    good_rows = np.array(good + good[:1])
    bad_rows = np.array(good + [bad])
    assert np.all(space.score_samples(good_rows, good_rows) == 1.0)
    with pytest.raises(ValueError, match=rf"^Y_true: row {len(good)}: .*({message})"):
        space.score_samples(bad_rows, good_rows)
    with pytest.raises(ValueError, match=rf"^Y_pred: row {len(good)}: .*({message})"):
        space.score_samples(good_rows, bad_rows)


@pytest.mark.parametrize(
    "space, Y, message",
    [
        (spaces.Permutations(3), np.ones((2, 4), dtype=int), r"shape \(n_samples, 3\)"),
        (spaces.Multilabel(3), np.array([[0.5, 0, 1]]), "fractional"),
        (spaces.Multilabel(3), np.array([[np.nan, 0, 1]]), "NaN"),
        (spaces.Cliques(3), np.ones(3, dtype=int), r"shape \(n_samples, 3\)"),
    ],
)
def test_validate_rejects_bad_arrays(space, Y, message):
    with pytest.raises(ValueError, match=message):
        space.validate(Y)


def test_decode_rejects_bad_scores():
    space = spaces.Permutations(4)
    with pytest.raises(ValueError, match="NaN or infinity"):
        space.decode(np.full((1, 6), np.inf))
    with pytest.raises(ValueError, match=r"shape \(n_samples, 6\)"):
        space.decode(np.zeros((2, 5)))
    # numbers only, as the C ABI's buffers take them: numpy parsed "1" as 1.0 (objects that are all
    # real numbers are read as them, test_real_number_arguments_read_objects_...)
    for bad in (np.array([list("123456")]), np.full((1, 6), None), np.zeros((1, 6), dtype=complex)):
        for call in (space.decode, space.max_margins):
            with pytest.raises(TypeError, match=f"^U must hold real numbers, got dtype {bad.dtype}$"):
                call(bad)


# -- constructors ---------------------------------------------------------------------------------
def _first_use(space: spaces.Space) -> None:
    _ = space.dim  # the Go handle (and the C ABI's validation) comes with the first use


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: spaces.Multiclass(0), "multiclass needs n_classes ≥ 1, got 0"),
        (lambda: spaces.Multilabel(0), "multilabel needs n_labels ≥ 1, got 0"),
        (lambda: spaces.Multilabel(2.5), "n_labels must be an integer"),
        (lambda: spaces.Multilabel(True), "n_labels must be an integer"),
        (lambda: spaces.Multilabel(2**63), "n_labels = 9223372036854775808 is out of range"),
        (lambda: spaces.Multilabel(-(2**63) - 1), "n_labels = -9223372036854775809 is out of range"),
        (lambda: spaces.Multiclass(np.int64(-(2**63))), "n_classes ≥ 1, got -9223372036854775808"),
        (lambda: spaces.KSubsets(0, 1), "ksubsets needs n_labels ≥ 1, got 0"),
        (lambda: spaces.KSubsets(3, 0), r"1 ≤ k ≤ n_labels = 3, got k = 0"),
        (lambda: _first_use(spaces.KSubsets(3, 4)), r"1 ≤ k ≤ n_labels = 3, got k = 4"),
        (lambda: spaces.Ordinal(1), "ordinal needs n_levels ≥ 2"),
        (lambda: spaces.Permutations(0), "permutations needs n_labels ≥ 2, got 0"),
        (lambda: spaces.Permutations(1), "permutations needs n_labels ≥ 2, got 1"),
        (lambda: _first_use(spaces.Permutations(100_000)), "not supported"),
        (lambda: spaces.PartialTournaments(1), "tournaments needs n_items ≥ 2, got 1"),
        (lambda: spaces.DirectedCycles(2), "dicycles needs n_vertices ≥ 3, got 2"),
        (lambda: spaces.UndirectedCycles(-7), "ucycles needs n_vertices ≥ 3, got -7"),
        (lambda: spaces.Cliques(1), "cliques needs n_vertices ≥ 2, got 1"),
        (lambda: spaces.HierarchyPaths([]), "non-empty 1-D integer array"),
        (lambda: spaces.Subtrees([[-1, 0]]), "non-empty 1-D integer array"),
        (lambda: spaces.Subtrees([-1.0, 0.0]), "non-empty 1-D integer array"),
    ],
)
def test_constructor_rejects_invalid_sizes(make, message):
    with pytest.raises(ValueError, match=message):
        make()


BAD_PARENTS = [
    ([-1, 2, 1], r"cycle through node 1"),
    ([1, 0], r"no root.*cycle through node 0"),
    ([-1, -1, 0], r"two roots: 0 and 1"),
    ([-1, 5, 0], r"node 1's parent 5 is out of range"),
    ([-1, 0, -2], r"node 2's parent -2 is out of range"),
]


@pytest.mark.parametrize("cls", [spaces.HierarchyPaths, spaces.Subtrees])
@pytest.mark.parametrize("parent, message", BAD_PARENTS)
def test_parent_array_rejected_by_c_abi(cls, parent, message):
    with pytest.raises(ValueError, match=rf"^space: {cls.kind}: .*{message}"):
        _first_use(cls(parent))


@pytest.mark.parametrize("make", [lambda: spaces.Subtrees([-1, 2, 1]), lambda: spaces.KSubsets(3, 4)])
def test_constructor_validates_eagerly(make):
    with pytest.raises(ValueError):
        make()


# -- approximate decoders, beyond the exact sizes -----------------------------------------------------
EXACT_LIMITS = [
    # (class, largest exact size, guarantee just above it, NumPy extremes (max, min))
    (spaces.Permutations, 16, 0.5, lambda u, n: (_exact.linear_ordering_max(u, n), -_exact.linear_ordering_max(u, n))),
    (spaces.DirectedCycles, 14, 0.5, lambda u, n: (_exact.dicycle_max(u, n), -_exact.dicycle_max(u, n))),
    (spaces.UndirectedCycles, 14, 1.0, _exact.ucycle_extremes),
    (spaces.Cliques, 20, None, _exact.clique_extremes),
]


@pytest.mark.parametrize("cls, limit, nu, extremes", EXACT_LIMITS, ids=lambda x: getattr(x, "__name__", ""))
def test_guarantee_switches_at_exact_limit(cls, limit, nu, extremes):
    assert cls(limit).decoder_guarantee == 0.0
    above = cls(limit + 1)
    expected = 1 - 1 / above.dim if nu is None else nu
    assert above.decoder_guarantee == pytest.approx(expected)


@pytest.mark.parametrize("cls, limit, nu, extremes", EXACT_LIMITS, ids=lambda x: getattr(x, "__name__", ""))
def test_numpy_extremes_agree_with_exact_go_decoder(cls, limit, nu, extremes):
    rng = np.random.default_rng(3)
    for n in (4, 9):
        space = cls(n)
        U = rng.normal(size=(5, space.dim))
        got = _scores(space, space.decode(U), U)
        best = [extremes(u, n)[0] for u in U]
        np.testing.assert_allclose(got, best, rtol=1e-12, atol=1e-12)
        psi = space.embed(space.enumerate())
        np.testing.assert_allclose([extremes(u, n)[1] for u in U], (psi @ U.T).min(axis=0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls, limit, nu, extremes", EXACT_LIMITS, ids=lambda x: getattr(x, "__name__", ""))
def test_approximate_decoder_keeps_its_guarantee(cls, limit, nu, extremes):
    """Just above the exact limit: valid structures whose realised ν stays within the guarantee."""
    n = limit + 1
    space = cls(n)
    U = np.random.default_rng(11).normal(size=(20, space.dim))
    Y = space.decode(U)
    space.validate(Y)
    got = _scores(space, Y, U)
    for u, f in zip(U, got, strict=True):
        hi, lo = extremes(u, n)
        realised = (hi - f) / (hi - lo)
        assert -1e-12 <= realised <= space.decoder_guarantee + 1e-12


# -- exact decoding on demand --------------------------------------------------------------------
# The four spaces with an approximate path take decoder="auto" | "exact" | "approximate". The choice
# is a parameter of the space (part of its Go params, so it is pickled and travels inside fitted
# models); "exact" reaches beyond the auto limit up to a hard limit and is refused beyond it, and
# "approximate" forces the local search even where Y can be enumerated (to measure it).
HARD_LIMITS = {spaces.Permutations: 22, spaces.DirectedCycles: 18, spaces.UndirectedCycles: 18, spaces.Cliques: 20}
APPROXIMABLE = [(cls, limit + 1, extremes) for cls, limit, _, extremes in EXACT_LIMITS if HARD_LIMITS[cls] > limit]


@pytest.mark.parametrize("cls, n, extremes", APPROXIMABLE, ids=lambda x: getattr(x, "__name__", ""))
def test_exact_decoder_on_demand_beyond_default_limit(cls, n, extremes):
    space = cls(n, decoder="exact")
    assert space.decoder_guarantee == 0.0
    assert space != cls(n) and pickle.loads(pickle.dumps(space)) == space
    U = np.random.default_rng(5).normal(size=(3, space.dim))
    Y = space.decode(U)
    space.validate(Y)
    np.testing.assert_allclose(_scores(space, Y, U), [extremes(u, n)[0] for u in U], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", list(HARD_LIMITS), ids=lambda c: c.__name__)
def test_exact_decoder_refused_beyond_hard_limit(cls):
    assert cls(HARD_LIMITS[cls], decoder="exact").decoder_guarantee == 0.0
    with pytest.raises(
        ValueError, match=f"exact decoding of {cls.kind} is limited to {cls._size_name} ≤ {HARD_LIMITS[cls]}"
    ):
        cls(HARD_LIMITS[cls] + 1, decoder="exact")
    with pytest.raises(ValueError, match="decoder"):
        cls(8, decoder="fast")
    for not_a_name in ([], None, 1):  # a list met "unhashable type: 'list'"
        with pytest.raises(ValueError, match="decoder must be one of"):
            cls(8, decoder=not_a_name)


@pytest.mark.parametrize("cls", list(HARD_LIMITS), ids=lambda c: c.__name__)
def test_approximate_decoder_on_demand_at_enumerable_size(cls):
    space = cls(7, decoder="approximate")
    assert space.decoder_guarantee > 0
    psi = space.embed(space.enumerate())
    U = np.random.default_rng(6).normal(size=(100, space.dim))
    Y = space.decode(U)
    space.validate(Y)
    all_scores = psi @ U.T
    hi, lo = all_scores.max(axis=0), all_scores.min(axis=0)
    realised = (hi - _scores(space, Y, U)) / (hi - lo)
    assert np.all(realised <= space.decoder_guarantee + 1e-12)


def test_structured_ridge_predicts_exactly_when_demanded():
    from combpred import StructuredRidge

    space = spaces.Permutations(17, decoder="exact")
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 3))
    Y = spaces.Permutations(17).sample(60, random_state=0)
    model = StructuredRidge(space=space).fit(X, Y)
    assert model.space_.decoder_guarantee == 0.0
    U = model.decision_function(X[:4])
    got = _scores(space, model.predict(X[:4]), U)
    np.testing.assert_allclose(got, [_exact.linear_ordering_max(u, 17) for u in U], rtol=1e-10)


def test_sample_arguments_are_named():
    space = spaces.Multilabel(2)
    with pytest.raises(ValueError, match="n_samples must be a non-negative integer, got True"):
        space.sample(True)  # drew one structure
    with pytest.raises(ValueError, match="^random_state: "):  # numpy's message named only the value
        space.sample(2, random_state=np.random.default_rng(0))
    assert space.sample(np.int64(3), random_state=np.random.RandomState(0)).shape == (3, 2)


def test_covariance_dot_refuses_non_finite_input_and_overflow():
    space = spaces.Multilabel(3)
    with pytest.raises(
        ValueError, match=r"^v\[1\] = NaN: values must be finite"
    ):  # a vector: it was v[0, 1] (probe CE)
        space.covariance_dot(np.array([0.0, np.nan, 1.0]))  # returned NaN
    with pytest.raises(ValueError, match="scale v down"):
        spaces.Permutations(4).covariance_dot(np.full(6, 1e308))
    np.testing.assert_allclose(space.covariance_dot(np.ones(3)), space.covariance() @ np.ones(3))


def test_real_number_arguments_read_objects_and_sparse_vectors_as_their_numbers():
    """Scores held as objects (pandas' dtype object) were refused by decode, max_margins and
    covariance_dot as "got dtype object" while bayes_decode and the metrics read them; a sparse v
    was called "dtype object" too, where decode densifies a sparse U (probe 85)."""
    from scipy import sparse

    space = spaces.Permutations(4)
    U = np.random.default_rng(0).normal(size=(3, space.dim))
    np.testing.assert_array_equal(space.decode(U.astype(object)), space.decode(U))
    np.testing.assert_array_equal(space.max_margins(U.astype(object)), space.max_margins(U))
    v = U[0]
    expected = space.covariance() @ v
    for given in (v.astype(object), sparse.csr_matrix(v), sparse.coo_array(v)):
        np.testing.assert_allclose(space.covariance_dot(given), expected, rtol=1e-12)
    with pytest.raises(TypeError, match="^U must hold real numbers, got dtype object"):  # not all numbers
        space.decode(np.array([["a", 1.0, 2.0, 3.0, 4.0, 5.0]], dtype=object))
