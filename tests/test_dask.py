"""combpred.dask on a real LocalCluster (separate worker processes): the distributed fits equal the
single-machine fits on every space family (StructuredRidge's exact fit; ProbabilisticStructured's
L-BFGS on exact inference), with uneven partitions, DataFrames, Nyström maps, weights and the
empirical reference; lazy prediction; a worker killed mid-fit; NaN in a partition."""

from __future__ import annotations

import collections
import contextlib
import io
import os
import re
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import _dask_tasks  # noqa: E402
from combpred import ProbabilisticStructured, StructuredRidge, _capi, spaces  # noqa: E402
from combpred.dask import DaskProbabilisticStructured, DaskStructuredRidge, _blocks, _centre, _weight_binade  # noqa: E402

TREE = [-1, 0, 0, 1, 1, 2, 5]
ROWS = (37, 150, 0, 13, 200, 60)  # uneven, one partition empty
M, N = sum(ROWS), 4


def _dataframes():
    """pandas and dask.dataframe, or a skip naming why: at the numpy floor (.ci/floors)
    dask.dataframe needs pyarrow, whose current releases refuse numpy 1.x on import (the array
    paths are still tested there)."""
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:
        pytest.skip(f"dask.dataframe cannot be imported: {exc}")
    return pd, dd


@contextlib.contextmanager
def _cluster():
    # One failure of a task (its worker died) is retried; a second fails the computation: the
    # killed-worker tests stay fast.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="1GiB"
        )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def client():
    with _cluster() as c:
        yield c


@pytest.fixture
def killable():
    """A cluster of the test's own, for tests that kill a worker: the shared cluster would have to
    wait for the nanny to bring the worker back, and in CI's fresh venv on a loaded machine it did
    not within 180 s (the models had been checked by then)."""
    with _cluster() as c:
        assert distributed.default_client() is c  # the fits of the test run here
        yield c


def _data(space: spaces.Space, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and structures (in the space's encoding) from a noisy planted linear model."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(M, N))
    d = space.dim
    U = X @ rng.normal(size=(N, d)) + rng.normal(size=(M, d))
    return X, space._from_rows(space._handle().decode(U))


def _close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-10) -> None:
    assert np.abs(a - b).max() <= rtol * max(np.abs(b).max(), 1e-300), np.abs(a - b).max()


def _same_model(dist: StructuredRidge, local: StructuredRidge) -> None:
    _close(dist.coef_, local.coef_)
    _close(dist.intercept_, local.intercept_, 1e-9)
    assert dist.n_samples_seen_ == M


CASES = {
    "multilabel": (spaces.Multilabel(5), "multilabel", {}),
    "multiclass": (spaces.Multiclass(4), "multiclass", {"fit_intercept": False}),
    "permutations": (spaces.Permutations(4), "permutations", {}),
    "hierarchy_paths": (spaces.HierarchyPaths(TREE), None, {"empirical_weight": 0.5}),
    "subtrees": (spaces.Subtrees(TREE), None, {}),
    "dicycles": (spaces.DirectedCycles(5), "dicycles", {}),
    "ksubsets": (spaces.KSubsets(5, 2), None, {}),
    "ordinal": (spaces.Ordinal(5), None, {"empirical_weight": 0.5}),
    "dag_paths": (spaces.DAGPaths([[], [0], [0], [1, 2], [2]]), None, {}),
    "tournaments": (spaces.PartialTournaments(4), None, {}),
    "ucycles": (spaces.UndirectedCycles(5), None, {}),
    "cliques": (spaces.Cliques(4), None, {}),
    # the product reference is a function of the training structures' weighted mean, which the
    # merged statistics hold exactly
    "multilabel_product": (spaces.Multilabel(5), "multilabel", {"empirical_weight": 0.5, "reference": "product"}),
    "subtrees_product": (spaces.Subtrees(TREE), None, {"empirical_weight": 1.0, "reference": "product"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_distributed_fit_equals_the_exact_fit(client, case):
    space, name, params = CASES[case]
    X, Y = _data(space, seed=len(case))
    weighted = case in ("hierarchy_paths", "multilabel", "multilabel_product", "ordinal")
    w = np.random.default_rng(1).uniform(0.2, 2.0, size=M) if weighted else None
    est = {"space": name or space, "alpha": 0.3, "solver": "exact", **params}
    local = StructuredRidge(**est).fit(X, Y, sample_weight=w)
    dX = da.from_array(X, chunks=(ROWS, N))
    dY = da.from_array(Y, chunks=(100,) + Y.shape[1:])  # other row chunks than X: rechunked to X's
    dw = None if w is None else da.from_array(w, chunks=120)
    dist = DaskStructuredRidge(**est).fit(dX, dY, sample_weight=dw)
    _same_model(dist, local)


@pytest.mark.parametrize("solver, tol", [("exact", 1e-9), ("cg", 1e-6)])
def test_distributed_fit_of_shifted_features(client, solver, tol):
    # The statistics (exact) follow their rows' mean and every part (cg) is centred at X's weighted
    # mean, as the in-memory fits centre X: uncentred, X + 1e5 lost 1e-3 in the normal equations, and
    # conjugate gradients stopped at their tolerance far from the minimum. A landmark sample
    # means nothing to the linear kernel and is refused, not ignored.
    X, Y = _data(spaces.Multilabel(5), seed=3)
    local = StructuredRidge(alpha=0.3, solver="exact").fit(X, Y).decision_function(X)
    for shift in (1e4, 1e5):
        est = DaskStructuredRidge(alpha=0.3, solver=solver, tol=1e-10)
        dist = est.fit(da.from_array(X + shift, chunks=(ROWS, N)), Y)
        np.testing.assert_allclose(dist.decision_function(X + shift), local, rtol=0, atol=tol * np.abs(local).max())
    with pytest.raises(ValueError, match="landmark_sample is for the Nyström map"):
        DaskStructuredRidge().fit(da.from_array(X, chunks=(ROWS, N)), Y, landmark_sample=X[:5])
    # first rows too large to average are X's problem, named there (not an overflowing centre's)
    huge = X.copy()
    huge[[5, 6], 0] = 1e308
    with pytest.raises(ValueError, match=r"partition 0 .*X row 5: its squared norm overflows"):
        DaskStructuredRidge(solver=solver).fit(da.from_array(huge, chunks=(ROWS, N)), Y)


def test_distributed_probabilistic_fit_of_shifted_features(client):
    # Every partition's data sums are taken with X centred at its weighted mean, as the in-memory
    # fit centres X: uncentred, L-BFGS met its tolerance at X + 1e3 with probabilities
    # 0.07 from the in-memory fit's, without a warning.
    rng = np.random.default_rng(6)
    X = rng.normal(size=(120, 4))
    Y = (X[:, :3] + rng.normal(size=(120, 3)) > 0).astype(int)
    # Centred implicitly (xᵀW − cᵀW), the partitions' products cancelled at X + 1e8: 200 iterations,
    # a ConvergenceWarning and probabilities 6.6e-5 off, where the in-memory fit took 8 (probe N).
    local = ProbabilisticStructured(tol=1e-10).fit(X, Y).predict_proba(X)
    for shift in (1e3, 1e5, 1e8, 1e9):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            dist = DaskProbabilisticStructured(tol=1e-10).fit(da.from_array(X + shift, chunks=(40, 4)), Y)
        in_memory = ProbabilisticStructured(tol=1e-10).fit(X + shift, Y)
        assert dist.n_iter_ <= 2 * in_memory.n_iter_ + 5
        # predicting at 1e8 rounds xᵀW itself to about 1e-8, in memory too
        np.testing.assert_allclose(dist.predict_proba(X + shift), local, atol=1e-7 if shift < 1e8 else 1e-6)


@pytest.mark.parametrize("intercept", [True, False])
def test_distributed_probabilistic_fit_of_features_on_different_scales(client, intercept):
    # The partitions' sums come with each feature's spread, so that the distributed L-BFGS works in
    # the in-memory fit's coordinates and stops where it stops at the default tol: without them, on
    # features scaled by 1e-4, 1 and 1e5, it stopped with the objective 0.05–0.3 % above the
    # in-memory fit's and the unit-scale feature's coefficients 4–7 % off.
    rng = np.random.default_rng(8)
    X = rng.normal(size=(240, 3)) * [1e-4, 1.0, 1e5]
    Y = (X / [1e-4, 1.0, 1e5] @ rng.normal(size=(3, 4)) + rng.normal(size=(240, 4)) > 0).argmax(axis=1)
    local = ProbabilisticStructured(space="multiclass", fit_intercept=intercept).fit(X, Y)
    dist = DaskProbabilisticStructured(space="multiclass", fit_intercept=intercept).fit(
        da.from_array(X, chunks=(80, 3)), da.from_array(Y, chunks=80)
    )
    assert abs(dist.objective_ - local.objective_) <= 1e-9 * abs(local.objective_)
    _close(dist.coef_[:, 1], local.coef_[:, 1], 1e-4)


def test_iterative_fits_centre_at_the_weighted_mean_of_every_row(client):
    # The iterative fits (cg, ProbabilisticStructured from sums) centred every partition at the
    # mean of X's first 1,000 rows, however far the rest lay; now at X's weighted mean, as the
    # in-memory fits centre X (measured: the distributed ProbabilisticStructured fit of rows whose
    # first 1,000 sit 1e4 or 1e6 away in one feature ended 2.2e-3 / 1.3e-2 from the in-memory fit
    # in probability, 3.6e-4 / 3.3e-3 now).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    X[:1000, 0] += 1e4
    Y = (X[:, :2] > 0).astype(int)
    w = rng.uniform(0.5, 2.0, size=1500)
    space = spaces.Multilabel(2)
    dX, dY = da.from_array(X, chunks=(400, 3)), da.from_array(Y, chunks=(400, 2))
    for weights, expected in [
        (None, X.mean(axis=0)),
        (w, np.average(X, axis=0, weights=w)),
        (np.zeros(1500), X.mean(axis=0)),  # no weight anywhere: the plain mean
    ]:
        dw = None if weights is None else da.from_array(weights, chunks=400)
        exponent = _weight_binade(dw)[0]
        np.testing.assert_allclose(_centre(_blocks(dX, dY, dw), space, None, None, exponent), expected, rtol=1e-12)
    huge = X.copy()
    huge[[5, 6], 0] = 1e308  # a mean that overflows is no centre: X's own checks name the row
    assert _centre(_blocks(da.from_array(huge, chunks=(400, 3)), dY, None), space, None, None, 0) is None
    # weights whose sums of w·x overflow (near 1e308) or lose their digits (subnormal) centre at
    # the same mean: the sums are taken in units of the largest weight's binade (probe BZ)
    for scale in (1e306, 1e-318):
        scaled = w * scale  # subnormal weights hold fewer digits: the mean of those given
        dw = da.from_array(scaled, chunks=400)
        exponent = _weight_binade(dw)[0]
        expected = np.average(X, axis=0, weights=np.ldexp(scaled, -exponent))
        np.testing.assert_allclose(_centre(_blocks(dX, dY, dw), space, None, None, exponent), expected, rtol=1e-12)


def test_a_partition_of_subnormal_weights_fits_as_in_memory(client):
    # a partition whose largest weight was subnormal (1e-310: importance weights of exp(-713)) was
    # refused by StructuredRidge's parts, which the in-memory fit takes beside normal weights, and
    # ProbabilisticStructured's part scaled its weights to mean 1, an overflow (probe BC); weights
    # whose sum is subnormal are refused, naming them
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    Y = (X[:, :3] + rng.normal(size=(400, 3)) > 0).astype(int)
    w = np.ones(400)
    w[399] = 1e-310
    dX = da.from_array(X, chunks=((399, 1), 4))
    for dask_cls, cls, params in [
        (DaskStructuredRidge, StructuredRidge, {"solver": "exact"}),
        (DaskStructuredRidge, StructuredRidge, {"solver": "cg", "tol": 1e-10}),
        (DaskProbabilisticStructured, ProbabilisticStructured, {"tol": 1e-10}),
    ]:
        local = cls(**params).fit(X, Y, sample_weight=w)
        fitted = dask_cls(**params).fit(dX, Y, sample_weight=w)
        np.testing.assert_allclose(fitted.coef_, local.coef_, rtol=0, atol=1e-7)
        with pytest.raises(ValueError, match="subnormal|Σ sample_weight"):
            dask_cls(**params).fit(dX, Y, sample_weight=np.full(400, 1e-320))


def test_probabilistic_weights_at_the_edges_of_float64_fit_as_in_memory(client):
    # weights summing near or beyond the largest float: the partitions' data term, or their weight,
    # overflowed ("the data term's sum is +Inf") where the in-memory fit takes them; subnormal ones
    # lost their digits (the gradient at 0 overflowed). The core now asks for the sums in units of
    # 2**exponent (probe BW).
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    Y = (X @ rng.normal(size=(3, 4)) + rng.normal(size=(200, 4)) > 0).astype(int)
    base = rng.uniform(0.5, 1.5, size=200)
    dX, dY = da.from_array(X, chunks=(50, 3)), da.from_array(Y, chunks=(50, 4))
    for scale, params in [(7e305, {}), (5e306, {"alpha": 0.01}), (1e-315, {"alpha": 0.01})]:
        w = base * scale
        local = ProbabilisticStructured(tol=1e-10, **params).fit(X, Y, sample_weight=w)
        with warnings.catch_warnings():  # inf − inf in the partitions' first sums warned (probe BZ)
            warnings.simplefilter("error", RuntimeWarning)
            dw = da.from_array(w, chunks=50)
            fitted = DaskProbabilisticStructured(tol=1e-10, **params).fit(dX, dY, sample_weight=dw)
        np.testing.assert_allclose(fitted.coef_, local.coef_, rtol=0, atol=1e-7)
    w = base * 5e306  # a sum beyond the largest float: both refuse its default alpha, 1/(2·inf)
    for fit in (
        lambda: ProbabilisticStructured().fit(X, Y, sample_weight=w),
        lambda: DaskProbabilisticStructured().fit(dX, dY, sample_weight=da.from_array(w, chunks=50)),
    ):
        with pytest.raises(ValueError, match="is 0 for these sample weights.*scale sample_weight down or set alpha"):
            fit()


def test_ridge_cg_weights_near_the_largest_float_fit_as_in_memory(client):
    # the partitions' CG set-up and products summed w·x·x in raw units: weights near 5e305 (alpha
    # scaled alike) overflowed them ("its summed moments hold +Inf"), near 1e305 they ran 10
    # iterations to 5e-9 from the in-memory fit, which scales its weights first. Every sum is now
    # in units of the largest weight's binade, and alpha with them (probe CC).
    rng = np.random.default_rng(1)
    X = 3 * rng.normal(size=(200, 3))
    Y = (X @ rng.normal(size=(3, 4)) + rng.normal(size=(200, 4)) > 0).astype(int)
    base = rng.uniform(0.5, 1.5, size=200)
    dX, dY = da.from_array(X, chunks=(50, 3)), da.from_array(Y, chunks=(50, 4))
    unit = StructuredRidge(solver="cg", alpha=0.3, tol=1e-12).fit(X, Y, sample_weight=base)
    for scale in (1e305, 5e305):
        params = {"solver": "cg", "alpha": 0.3 * scale, "tol": 1e-12}
        local = StructuredRidge(**params).fit(X, Y, sample_weight=base * scale)
        fitted = DaskStructuredRidge(**params).fit(dX, dY, sample_weight=da.from_array(base * scale, chunks=50))
        for model in (local, fitted):
            np.testing.assert_allclose(model.coef_, unit.coef_, rtol=0, atol=1e-11 * np.abs(unit.coef_).max())
        assert fitted.objective_ == pytest.approx(local.objective_, rel=1e-12)


def test_ridge_cg_warns_of_weights_further_apart_than_float64_resolves(client):
    # one row weighted 1e20 among ones: the in-memory CG fit warns that the light rows fall below
    # the heavy one's rounding (their scores 1.2 from the optimum); the distributed one did not
    # (probe ET). The partitions' set-up now carries the weights' range, joined by max and min.
    from combpred.exceptions import PrecisionWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = spaces.Multilabel(3).sample(40, random_state=5)
    dX, dY = da.from_array(X, chunks=10), da.from_array(Y, chunks=(10, 3))
    for heavy, warns in ((1e8, False), (1e20, True)):
        w = np.r_[np.ones(25), heavy, np.ones(14)]  # the heavy row in the third partition
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DaskStructuredRidge(solver="cg", alpha=0.1).fit(dX, dY, sample_weight=da.from_array(w, chunks=10))
        spread = [
            c for c in caught if issubclass(c.category, PrecisionWarning) and "sample_weight spans" in str(c.message)
        ]
        assert bool(spread) == warns, (heavy, [str(c.message) for c in caught])


def test_spaces_beyond_the_dense_dimension_are_refused_for_every_distributed_solver(client):
    # d = 4,200 > 4,096: the parts sum d×d moments whatever the solver, so the Dask fit refuses it;
    # the message said that the linear kernel with solver "cg" or "auto" is supported, the very call
    # refused (probe EY). It now names the distributed fit and the in-memory way.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    Y = (rng.random((30, 4200)) < 0.01).astype(int)
    dX, dY = da.from_array(X, chunks=15), da.from_array(Y, chunks=(15, 4200))
    # solver="exact" too: its message sent the user to distributed CG and SGD partial_fit (probe FD)
    for params in ({"solver": "auto"}, {"solver": "cg"}, {"solver": "exact"}, {"kernel": "rbf", "n_components": 5}):
        with pytest.raises(
            ValueError, match=r"dimension 4200 > 4096: a distributed fit \(combpred.dask\) .* needs d ≤ 4096"
        ):
            DaskStructuredRidge(**params).fit(dX, dY)


def test_distributed_cg_on_a_wide_space_takes_the_diagonal_preconditioner(client):
    # beyond 1,024 outputs distributed CG no longer eigendecomposes the d×d curvature (minutes at
    # d = 4,096 in one call Ctrl-C could not reach, probe FD): it still reaches the exact optimum
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = (rng.random((40, 1100)) < 0.05).astype(int)
    fitted = DaskStructuredRidge(solver="cg", tol=1e-10).fit(
        da.from_array(X, chunks=20), da.from_array(Y, chunks=(20, 1100))
    )
    exact = StructuredRidge(solver="exact").fit(X, Y)
    np.testing.assert_allclose(fitted.decision_function(X), exact.decision_function(X), atol=1e-6)


def test_nystrom_fit_warns_where_the_rbf_kernel_loses_precision(client):
    # the in-memory fit warned on X + 1e6 (scores 0.19 from the fit on X); the distributed
    # Nyström fit did not (probe CH). It judges the landmarks, the sample of X the map is built from.
    from combpred.exceptions import PrecisionWarning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = (X @ rng.normal(size=(3, 3)) > 0).astype(int)
    dY = da.from_array(Y, chunks=100)
    with pytest.warns(PrecisionWarning, match="centre X"):
        DaskStructuredRidge(kernel="rbf", gamma=0.5, n_components=50).fit(da.from_array(X + 1e6, chunks=100), dY)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        DaskStructuredRidge(kernel="rbf", gamma=0.5, n_components=50).fit(da.from_array(X, chunks=100), dY)


def test_probabilistic_first_steps_at_the_edges_of_float64_are_the_in_memory_ones(client):
    # the partitions' centre, spread and moments of ψ summed w·x² in raw units: weights near 1e307
    # overflowed them (the fit dropped its solver scaling: its first iterates 5-9 % off the
    # in-memory ones) and subnormal ones lost digits (1e-11 off). They are now summed in units of
    # the largest weight's binade (probe BZ). Multiclass: the in-memory multi-label fit is
    # separable (a run per label), whose iterates are not the joint run's.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = np.argmax(X @ rng.normal(size=(3, 4)) + rng.normal(size=(200, 4)), axis=1)
    base = rng.uniform(0.5, 1.5, size=200)
    dX, dy = da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50)
    for scale in (5e306, 1e-315):
        w = base * scale
        for max_iter in (1, 3):
            params = {"space": "multiclass", "alpha": 0.01, "max_iter": max_iter}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                local = ProbabilisticStructured(**params).fit(X, y, sample_weight=w)
                fitted = DaskProbabilisticStructured(**params).fit(dX, dy, sample_weight=da.from_array(w, chunks=50))
            np.testing.assert_allclose(fitted.coef_, local.coef_, rtol=0, atol=1e-13 * np.abs(local.coef_).max())


def test_empirical_weight_beyond_the_exact_limit_is_one_clear_error(client):
    # above 8,000 unknowns auto took CG, which refused empirical_weight and pointed at the exact
    # fit, which refused the size and pointed at CG (probe BC)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 100))
    Y = (rng.random((60, 80)) < 0.3).astype(int)
    dX, dY = da.from_array(X, chunks=30), da.from_array(Y, chunks=30)
    for solver in ("auto", "exact"):
        with pytest.raises(ValueError, match=r"empirical_weight > 0 is exact.*8080 here.*StructuredRidge in memory"):
            DaskStructuredRidge(empirical_weight=0.5, solver=solver).fit(dX, dY)
    with pytest.raises(ValueError, match=r"solver=\"exact\", at most 8000 unknowns.*in memory"):
        DaskStructuredRidge(empirical_weight=0.5, solver="cg").fit(dX, dY)
    DaskStructuredRidge(empirical_weight=0.5).fit(dX[:, :50], dY)  # 4,080 unknowns: exact


@pytest.mark.parametrize("space", [spaces.Permutations(4), spaces.Multiclass(3), spaces.Subtrees(TREE)])
def test_distributed_probabilistic_fit_takes_the_in_memory_steps(client, space):
    # without the variances of ψ that precondition the in-memory L-BFGS, a fit stopped by max_iter
    # was 1-10 % off the in-memory one (probe BC); with them each step is the same, to rounding
    X, Y = _data(space, seed=4)
    dX, dY = da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, Y.shape[1]) if Y.ndim == 2 else (ROWS,))
    for max_iter in (1, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            local = ProbabilisticStructured(space=space, max_iter=max_iter).fit(X, Y)
            fitted = DaskProbabilisticStructured(space=space, max_iter=max_iter).fit(dX, dY)
        assert fitted.n_iter_ == local.n_iter_ == max_iter
        np.testing.assert_allclose(fitted.coef_, local.coef_, rtol=0, atol=1e-12 * np.abs(local.coef_).max())


def test_product_reference_is_refused_where_fit_refuses_it(client):
    space = spaces.DirectedCycles(5)
    X, Y = _data(space, seed=2)
    est = {"space": "dicycles", "empirical_weight": 0.5, "reference": "product"}
    with pytest.raises(ValueError, match="product") as local_error:
        StructuredRidge(**est).fit(X, Y)
    with pytest.raises(ValueError, match="product") as dist_error:
        DaskStructuredRidge(**est).fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 5)))
    assert str(dist_error.value) == str(local_error.value)


def test_dataframe_input_and_lazy_prediction(client):
    pd, dd = _dataframes()
    X, Y = _data(spaces.Multilabel(4), seed=3)
    names = [f"f{j}" for j in range(N)]
    dX = dd.from_pandas(pd.DataFrame(X, columns=names), npartitions=4)
    dY = dd.from_pandas(pd.DataFrame(Y), npartitions=3)
    dist = DaskStructuredRidge(alpha=0.5, solver="exact").fit(dX, dY)
    local = StructuredRidge(alpha=0.5, solver="exact").fit(pd.DataFrame(X, columns=names), Y)
    _same_model(dist, local)
    assert list(dist.feature_names_in_) == names
    aX = da.from_array(X, chunks=(ROWS, N))
    for method in ("predict", "decision_function", "predict_marginals", "max_marginal_margins"):
        lazy = getattr(dist, method)(aX)
        assert isinstance(lazy, da.Array) and lazy.chunks[0] == ROWS
        out = lazy.compute()
        expected = getattr(local, method)(pd.DataFrame(X, columns=names))
        assert out.dtype == expected.dtype and out.shape == expected.shape
        np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12)


def test_dataframe_of_bool_and_float_columns(client):
    """A Dask DataFrame of a bool column and float ones became an object array ("X must hold real
    numbers, got dtype object"), where the same pandas DataFrame fits in memory as numbers."""
    pd, dd = _dataframes()
    X, Y = _data(spaces.Multilabel(4), seed=4)
    frame = pd.DataFrame({"on": X[:, 0] > 0, **{f"f{j}": X[:, j] for j in range(1, N)}})
    dist = DaskStructuredRidge(solver="exact").fit(dd.from_pandas(frame, npartitions=4), da.from_array(Y, chunks=50))
    local = StructuredRidge(solver="exact").fit(frame, Y)
    _same_model(dist, local)
    lazy = dist.decision_function(dd.from_pandas(frame, npartitions=3))
    np.testing.assert_allclose(lazy.compute(), local.decision_function(frame), rtol=1e-9, atol=1e-12)


def test_multiclass_labels_and_pickle(client):
    import pickle

    rng = np.random.default_rng(5)
    X = rng.normal(size=(M, N))
    y = np.array(["ant", "bee", "cat"])[np.argmax(X[:, :3] + rng.normal(size=(M, 3)), axis=1)]
    local = StructuredRidge(space="multiclass", solver="exact").fit(X, y)
    dist = DaskStructuredRidge(space="multiclass", solver="exact").fit(
        da.from_array(X, chunks=(ROWS, N)), da.from_array(y, chunks=90)
    )
    _same_model(dist, local)
    assert list(dist.classes_) == ["ant", "bee", "cat"]
    pred = dist.predict(da.from_array(X, chunks=(ROWS, N))).compute()
    np.testing.assert_array_equal(pred, local.predict(X))
    back = pickle.loads(pickle.dumps(dist.to_local()))
    assert type(back) is StructuredRidge
    np.testing.assert_array_equal(back.predict(X), pred)


def test_nystrom_map_from_the_first_partition(client):
    X, Y = _data(spaces.Multilabel(3), seed=8)
    est = {"kernel": "rbf", "gamma": 0.3, "n_components": 20, "random_state": 0, "alpha": 0.5}
    stream = StructuredRidge(**est)
    lo = 0
    for rows in ROWS:
        if rows:
            stream.partial_fit(X[lo : lo + rows], Y[lo : lo + rows])
        lo += rows
    dist = DaskStructuredRidge(**est).fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3)))
    np.testing.assert_allclose(dist.decision_function(X), stream.decision_function(X), rtol=1e-9, atol=1e-11)


def test_workers_are_spawned_and_load_the_library_themselves(client):
    assert dask.config.get("distributed.worker.multiprocessing-method") == "spawn"
    X, Y = _data(spaces.Multilabel(3), seed=9)
    DaskStructuredRidge().fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3)))
    states = client.run(_dask_tasks.library_state)
    assert len(states) == 2
    for pid, _method, loaded_in, _ppid in states.values():
        assert pid != os.getpid()
        assert loaded_in in (None, pid)  # a worker that ran no task has not loaded it


def test_nan_in_one_partition_names_it(client):
    X, Y = _data(spaces.Multilabel(3), seed=10)
    X[37 + 150 + 5, 2] = np.nan  # partition 3 (partition 2 is empty)
    with pytest.raises(ValueError, match=r"partition 3 \(rows 187 to 199\): X holds nan at row 192, column 2"):
        DaskStructuredRidge().fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3)))


def test_sparse_chunks_are_refused_by_name():
    # NumPy's "setting an array element with a sequence" came out of the first partition
    X, Y = _data(spaces.Multilabel(3), seed=10)
    dX = da.from_array(sparse.csr_matrix(X), chunks=(ROWS, N))
    with pytest.raises(TypeError, match=r"X must have NumPy chunks, got scipy\.sparse\..*csr_matrix chunks: densify"):
        DaskStructuredRidge().fit(dX, da.from_array(Y, chunks=(ROWS, 3)))


def test_an_error_in_a_lazy_prediction_names_the_block_and_its_rows_in_x():
    # the single-machine message counted rows from the block's first row ("row 5") and said nothing
    # of the block, so the user looked for the bad value at X's row 5
    X, Y = _data(spaces.Multilabel(3), seed=10)
    model = DaskStructuredRidge(solver="exact").fit(X, Y)
    bad = X.copy()
    bad[37 + 150 + 5, 2] = np.nan  # block 3 (block 2 is empty)
    lazy = model.predict(da.from_array(bad, chunks=(ROWS, N)))
    with pytest.raises(ValueError, match=r"^partition 3 \(rows 187 to 199\): Input X contains NaN"):
        lazy.compute()
    bad[37 + 150 + 5, :] = 1e308  # the scores overflow: the core names the row
    lazy = DaskProbabilisticStructured().fit(X, Y).predict_marginals(da.from_array(bad, chunks=(ROWS, N)))
    # the core names the row of X (the partition's first row reaches it as the row origin)
    with pytest.raises(ValueError, match=r"^partition 3 \(rows 187 to 199\): X row 192: "):
        lazy.compute()


def test_prediction_on_unknown_chunks_reads_nothing_until_computed():
    # a DataFrame or a Dask array of unknown chunk sizes was read once at the call, to learn its
    # chunk sizes, and again at compute (probe BC); now the result has X's unknown chunks
    pd, dd = _dataframes()
    X, Y = _data(spaces.Multilabel(3), seed=10)
    calls = []

    def counted(part):
        calls.append(len(part))
        return part

    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=4).map_partitions(counted)
    masked = da.from_array(X, chunks=100)
    masked = masked[masked[:, 0] > -np.inf]  # the same rows, unknown chunk sizes
    for model in (DaskStructuredRidge(solver="exact").fit(X, Y), DaskProbabilisticStructured().fit(X, Y)):
        local = model.to_local()
        for method in ("predict", "decision_function", "predict_marginals"):
            with dask.config.set(scheduler="synchronous"):
                calls.clear()
                lazy = getattr(model, method)(frame)
                assert calls == [] and np.isnan(lazy.chunks[0]).all()
                np.testing.assert_allclose(lazy.compute(), getattr(local, method)(X), rtol=0, atol=1e-12)
                assert sorted(calls) == sorted(len(p) for p in np.array_split(X, 4))
                lazy = getattr(model, method)(masked)
                np.testing.assert_allclose(lazy.compute(), getattr(local, method)(X), rtol=0, atol=1e-12)
    bad = X.copy()
    bad[205, 2] = np.nan
    masked = da.from_array(bad, chunks=100)
    masked = masked[masked[:, 0] > -np.inf]
    with pytest.raises(
        ValueError, match=r"^partition 2 \(100 rows; X's chunk sizes are unknown, so not their rows in X\)"
    ):
        DaskStructuredRidge(solver="exact").fit(X, Y).predict(masked).compute(scheduler="synchronous")


def test_mixing_warnings_of_lazy_marginals_name_rows_of_x():
    """A MixingWarning from a block named rows counted from the block's first row; and building
    the lazy array ran the one-row probe with the user's check_mixing, which warned (or refused
    n_samples) about a row of zeros the user never passed. Now the warning also names the row of
    X, and the probe neither checks nor warns."""
    import warnings

    from combpred.exceptions import MixingWarning

    space = spaces.Permutations(6)
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(60, 3)), space.sample(60, random_state=3)
    model = DaskProbabilisticStructured(space=space, alpha=0.01).fit(X, Y)
    query = dict(method="sampled", sampler="local", random_state=0, check_mixing=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixingWarning)
        lazy = model.predict_marginals(da.from_array(10 * X[:12], chunks=(4, 3)), n_samples=400, **query)
        model.predict_marginals(da.from_array(X[:4], chunks=(4, 3)), n_samples=3, **query)  # refused at compute
    with dask.config.set(scheduler="synchronous"), pytest.warns(MixingWarning) as caught:
        lazy.compute()
    named = [re.search(r"row (\d+) of partition (\d+), X's row (\d+)\)", str(w.message)) for w in caught]
    assert named and all(named)
    assert all(int(m[3]) == 4 * int(m[2]) + int(m[1]) for m in named)
    with pytest.warns(MixingWarning, match=r"\(the first: row \d\) a chain"):  # in memory: no partition
        model.predict_marginals(10 * X[:12], n_samples=400, **query)


def test_lazy_predictions_of_a_model_fitted_on_a_sparse_y_have_numpy_blocks():
    # the blocks were CSR matrices in an array declared NumPy: compute() gave a CSR matrix and a
    # reduction failed with scipy's "unexpected keyword argument 'keepdims'"
    X, Y = _data(spaces.Multilabel(3), seed=11)
    model = DaskStructuredRidge(solver="exact").fit(X, sparse.csr_matrix(Y))
    assert model.sparse_output_
    lazy = model.predict(da.from_array(X, chunks=(ROWS, N)))
    expected = model.predict(X).toarray()
    with dask.config.set(scheduler="synchronous"):
        np.testing.assert_array_equal(lazy.compute(), expected)
        assert int(lazy.sum().compute()) == expected.sum()


@pytest.mark.parametrize("name", ["y", "sample_weight"])
def test_an_in_memory_y_or_weight_of_another_length_is_named(name):
    # Dask's "Chunks do not add up to shape" came first, from wrapping the NumPy array in X's chunks
    X, Y = _data(spaces.Multilabel(3), seed=12)
    dX = da.from_array(X, chunks=(ROWS, N))
    args = {"y": Y[:-1], "sample_weight": None} if name == "y" else {"y": Y, "sample_weight": np.ones(M + 1)}
    with pytest.raises(
        ValueError, match=rf"inconsistent numbers of samples: X has {M}, {name} has {M + (1 if name != 'y' else -1)}"
    ):
        DaskStructuredRidge(solver="exact").fit(dX, **args)


def test_an_invalid_target_names_its_global_row(client):
    # the core's check of the partition's rows counted from the partition's start ("row 5")
    X, Y = _data(spaces.Multilabel(3), seed=10)
    Y[37 + 150 + 5, 1] = 5  # partition 3 (partition 2 is empty)
    with pytest.raises(ValueError, match=r"partition 3 \(rows 187 to 199\): y: row 192: label 1 has value 5"):
        DaskStructuredRidge().fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3)))


def test_a_worker_killed_mid_fit_is_retried_to_the_same_model(killable, tmp_path):
    X, Y = _data(spaces.Multilabel(3), seed=11)
    local = StructuredRidge(solver="exact").fit(X, Y)
    dX = da.from_array(X, chunks=(ROWS, N)).map_blocks(
        _dask_tasks.kill_on_block, 4, str(tmp_path / "killed"), dtype=float
    )
    dist = DaskStructuredRidge(solver="exact").fit(dX, da.from_array(Y, chunks=(ROWS, 3)))
    assert (tmp_path / "killed").exists()  # a worker did die
    _same_model(dist, local)


def test_a_task_that_keeps_killing_workers_fails_the_fit(killable):
    X, Y = _data(spaces.Multilabel(3), seed=12)
    dX = da.from_array(X, chunks=(ROWS, N)).map_blocks(_dask_tasks.kill_on_block, 1, None, dtype=float)
    with pytest.raises(distributed.scheduler.KilledWorker):
        DaskStructuredRidge().fit(dX, da.from_array(Y, chunks=(ROWS, 3)))


def test_settings_without_a_reduction_are_refused():
    X = da.zeros((10, 2), chunks=5)
    Y = da.zeros((10, 3), chunks=5, dtype=int)
    for params, match in [
        ({"solver": "sgd"}, "partial_fit"),
        ({"kernel": "rbf"}, "n_components"),
        ({"kernel": "precomputed"}, "linear models"),
        ({"decision": "kendall"}, "decision='kendall'"),  # a rule the space cannot take, as the in-memory fit says
    ]:
        with pytest.raises(ValueError, match=match):
            DaskStructuredRidge(**params).fit(X, Y)
    assert _capi.usable()


# -- StructuredRidge by distributed conjugate gradients ---------------------------------------

CG_CASES = ["multilabel", "multiclass", "permutations", "subtrees", "dicycles"]


@pytest.mark.parametrize("case", CG_CASES)
def test_distributed_cg_equals_the_exact_fit(client, case):
    space, name, params = CASES[case]
    X, Y = _data(space, seed=len(case) + 40)
    w = np.random.default_rng(3).uniform(0.2, 2.0, size=M) if case in ("multilabel", "subtrees") else None
    est = {"space": name or space, "alpha": 0.3, **params}
    local = StructuredRidge(**est, solver="exact").fit(X, Y, sample_weight=w)
    dX = da.from_array(X, chunks=(ROWS, N))
    dY = da.from_array(Y, chunks=(100,) + Y.shape[1:])
    dw = None if w is None else da.from_array(w, chunks=120)
    dist = DaskStructuredRidge(**est, solver="cg", tol=1e-12, max_iter=10_000).fit(dX, dY, sample_weight=dw)
    _close(dist.coef_, local.coef_, 1e-8)
    _close(dist.intercept_, local.intercept_, 1e-8)
    assert dist.n_iter_ > 1 and dist.n_samples_seen_ == M


class _ThreadedLines(io.StringIO):
    """A stderr that also records whether each line was written on the main thread."""

    def __init__(self) -> None:
        super().__init__()
        self.on_main: list[bool] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.on_main.append(threading.current_thread() is threading.main_thread())
        return super().write(text)


@pytest.mark.parametrize("solver", ["exact", "cg"])
def test_verbose_distributed_fit_reports_progress_as_the_in_memory_fit(client, monkeypatch, solver):
    """verbose prints a line per iteration, the exact solve's one line included (it printed nothing:
    the merged statistics were solved without a progress callback), on the calling thread, where
    Python runs its signal handlers (the core's worker thread had called the callback itself)."""
    X, Y = _data(spaces.Multilabel(3), seed=16)
    dX, dY = da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3))
    monkeypatch.setattr(sys, "stderr", _ThreadedLines())
    dist = DaskStructuredRidge(solver=solver, verbose=1).fit(dX, dY)
    lines = sys.stderr.getvalue().splitlines()
    assert len(lines) == dist.n_iter_ >= 1 and all(sys.stderr.on_main)
    assert all(line.startswith("[DaskStructuredRidge] iter") and "relative gradient" in line for line in lines)
    monkeypatch.setattr(sys, "stderr", _ThreadedLines())
    DaskStructuredRidge(solver=solver).fit(dX, dY)
    assert sys.stderr.getvalue() == ""


def test_auto_runs_distributed_cg_beyond_the_exact_size(client):
    # 450 features (+ intercept) × 20 labels = 9,020 unknowns: more than the exact distributed
    # solve takes (8,000), so solver="auto" runs conjugate gradients; the in-memory CG agrees.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(900, 450))
    Y = (X[:, :20] + rng.normal(size=(900, 20)) > 0).astype(int)
    est = {"space": "multilabel", "alpha": 5.0, "tol": 1e-10, "max_iter": 10_000}
    local = StructuredRidge(**est, solver="cg").fit(X, Y)
    dist = DaskStructuredRidge(**est).fit(da.from_array(X, chunks=(300, 450)), da.from_array(Y, chunks=(250, 20)))
    assert dist.n_iter_ > 1  # iterations: not the one-step exact solve
    _close(dist.coef_, local.coef_, 1e-7)
    # warm-started from its own solution, CG has (up to rounding of the residual) nothing left to do
    again = DaskStructuredRidge(**est, warm_start=True)
    again.fit(da.from_array(X, chunks=(300, 450)), da.from_array(Y, chunks=(250, 20)))
    again.fit(da.from_array(X, chunks=(300, 450)), da.from_array(Y, chunks=(250, 20)))
    assert dist.n_iter_ > 10 and again.n_iter_ <= 1


def test_distributed_cg_refusals_and_partition_errors(client):
    X, Y = _data(spaces.Multilabel(3), seed=15)
    dX, dY = da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3))
    for params, match in [
        ({"solver": "cg", "kernel": "rbf", "n_components": 5}, "linear kernel"),
        ({"solver": "cg", "empirical_weight": 0.5}, "uniform reference"),
    ]:
        with pytest.raises(ValueError, match=match) as refused:
            DaskStructuredRidge(**params).fit(dX, dY)
        # refused on the client before any pass: from a partition's task it blamed that partition
        assert "partition" not in str(refused.value)
    X[37 + 150 + 5, 2] = np.inf
    with pytest.raises(ValueError, match=r"partition 3 \(rows 187 to 199\): X holds inf at row 192, column 2"):
        DaskStructuredRidge(solver="cg").fit(da.from_array(X, chunks=(ROWS, N)), dY)


def test_a_worker_killed_mid_cg_is_retried_to_the_same_model(killable, tmp_path, monkeypatch):
    import functools

    from combpred import dask as cdask

    X, Y = _data(spaces.Multilabel(4), seed=16)
    local = StructuredRidge(solver="exact", alpha=0.3).fit(X, Y)
    marker = str(tmp_path / "killed")
    monkeypatch.setattr(cdask, "_on_partition", functools.partial(_dask_tasks.killing, "_cg_product", marker))
    dist = DaskStructuredRidge(solver="cg", alpha=0.3, tol=1e-12, max_iter=1000).fit(
        da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 4))
    )
    assert (tmp_path / "killed").exists()
    _close(dist.coef_, local.coef_, 1e-8)


# -- ProbabilisticStructured ------------------------------------------------------------------

PROB_CASES = {
    "multiclass": (spaces.Multiclass(4), "multiclass"),
    "multilabel": (spaces.Multilabel(4), "multilabel"),
    "permutations": (spaces.Permutations(4), "permutations"),
    "ordinal": (spaces.Ordinal(5), None),
    "hierarchy_paths": (spaces.HierarchyPaths(TREE), None),
    "subtrees": (spaces.Subtrees(TREE), None),
    "ksubsets": (spaces.KSubsets(5, 2), None),
    "dag_paths": (spaces.DAGPaths([[], [0], [0], [1, 2], [2]]), None),
    "tournaments": (spaces.PartialTournaments(3), None),
    "dicycles": (spaces.DirectedCycles(5), "dicycles"),
    "ucycles": (spaces.UndirectedCycles(5), None),
    "cliques": (spaces.Cliques(4), None),
}


def _prob_data(space: spaces.Space, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, Y = _data(space, seed)
    if type(space) is spaces.Multiclass:
        Y = np.array(["ant", "bee", "cat", "dog"])[np.asarray(Y).ravel()]
    return X, Y


@pytest.mark.parametrize("case", sorted(PROB_CASES))
def test_distributed_probabilistic_fit_equals_the_in_memory_fit(client, case):
    space, name = PROB_CASES[case]
    X, Y = _prob_data(space, seed=len(case) + 20)
    w = np.random.default_rng(2).uniform(0.2, 2.0, size=M) if case in ("multilabel", "subtrees") else None
    if w is not None:
        w[37:187] = 0  # partition 1 weighs nothing
    est = {"space": name or space, "tol": 1e-8, "max_iter": 2000, "fit_intercept": case != "ordinal"}
    local = ProbabilisticStructured(**est).fit(X, Y, sample_weight=w)
    dX = da.from_array(X, chunks=(ROWS, N))
    dY = da.from_array(Y, chunks=(100,) + Y.shape[1:])
    dw = None if w is None else da.from_array(w, chunks=120)
    dist = DaskProbabilisticStructured(**est).fit(dX, dY, sample_weight=dw)
    # The solver is the same; only the order of the sums differs (and multi-label's in-memory fit
    # solves its separable problem label by label).
    _close(dist.coef_, local.coef_, 1e-6)
    _close(dist.intercept_, local.intercept_, 1e-6)
    assert dist.n_features_in_ == N and dist.solver_ == "lbfgs"
    assert abs(dist.objective_ - local.objective_) <= 1e-10 * abs(local.objective_)
    np.testing.assert_array_equal(dist.predict(dX).compute(), local.predict(X))


def test_distributed_probabilistic_predictions_and_pickle(client):
    import pickle

    X, y = _prob_data(spaces.Multiclass(4), seed=31)
    dX = da.from_array(X, chunks=(ROWS, N))
    dist = DaskProbabilisticStructured(space="multiclass", alpha=0.01).fit(dX, da.from_array(y, chunks=90))
    local = dist.to_local()
    assert type(local) is ProbabilisticStructured and list(dist.classes_) == ["ant", "bee", "cat", "dog"]
    for method in ("predict", "decision_function", "predict_marginals", "predict_proba"):
        lazy = getattr(dist, method)(dX)
        assert isinstance(lazy, da.Array) and lazy.chunks[0] == ROWS
        expected = getattr(local, method)(X)
        out = lazy.compute()
        assert out.dtype == expected.dtype and out.shape == expected.shape
        if out.dtype.kind == "f":
            np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)
        else:
            np.testing.assert_array_equal(out, expected)
    back = pickle.loads(pickle.dumps(local))
    np.testing.assert_array_equal(back.predict(X), local.predict(X))
    # a warm start from the fitted model is already converged
    again = DaskProbabilisticStructured(space="multiclass", alpha=0.01, warm_start=True)
    again.fit(dX, da.from_array(y, chunks=90))
    n0 = again.n_iter_
    again.fit(dX, da.from_array(y, chunks=90))
    assert n0 > 0 and again.n_iter_ == 0


def test_distributed_probabilistic_fit_refuses_sampled_inference(client):
    X, Y = _data(spaces.Permutations(4), seed=3)
    dX, dY = da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 4))
    with pytest.raises(ValueError, match="needs exact inference.*sampled inference"):
        DaskProbabilisticStructured(space="permutations", sampler="metropolis").fit(dX, dY)


def test_distributed_probabilistic_fit_names_a_partition_with_nan(client):
    X, Y = _data(spaces.Multilabel(3), seed=10)
    X[37 + 150 + 5, 2] = np.nan
    with pytest.raises(ValueError, match=r"partition 3 \(rows 187 to 199\): X holds nan at row 192, column 2"):
        DaskProbabilisticStructured().fit(da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 3)))


def test_a_worker_killed_mid_probabilistic_fit_is_retried_to_the_same_model(killable, tmp_path, monkeypatch):
    import functools

    from combpred import dask as cdask

    X, Y = _data(spaces.Permutations(4), seed=13)
    est = {"space": "permutations", "tol": 1e-10, "max_iter": 2000}
    local = ProbabilisticStructured(**est).fit(X, Y)
    marker = str(tmp_path / "killed")
    monkeypatch.setattr(cdask, "_on_partition", functools.partial(_dask_tasks.killing, "_prob_sums", marker))
    dist = DaskProbabilisticStructured(**est).fit(
        da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 4))
    )
    assert (tmp_path / "killed").exists()  # a worker died at the third evaluation
    _close(dist.coef_, local.coef_, 1e-6)


def test_a_sum_that_keeps_killing_workers_fails_the_probabilistic_fit(killable, monkeypatch):
    import functools

    from combpred import dask as cdask

    X, Y = _data(spaces.Permutations(4), seed=14)
    monkeypatch.setattr(cdask, "_on_partition", functools.partial(_dask_tasks.killing, "_prob_sums", None))
    with pytest.raises(distributed.scheduler.KilledWorker):
        DaskProbabilisticStructured(space="permutations").fit(
            da.from_array(X, chunks=(ROWS, N)), da.from_array(Y, chunks=(ROWS, 4))
        )


@pytest.mark.parametrize(
    ("wrapper", "base"),
    [(DaskStructuredRidge, StructuredRidge), (DaskProbabilisticStructured, ProbabilisticStructured)],
)
def test_wrappers_take_the_parameters_of_the_methods_they_override(wrapper, base):
    """A public method the Dask estimator overrides takes the parameters of the single-machine
    method, in its order and with its defaults, before any of its own (DaskStructuredRidge.fit's
    landmark_sample): a parameter added to one and not the other was unavailable on Dask."""
    import inspect

    own = [cls for cls in wrapper.__mro__ if cls.__module__ == "combpred.dask"]
    overridden = {
        name
        for cls in own
        for name, attr in vars(cls).items()
        if callable(attr) and not name.startswith("_") and hasattr(base, name)
    }
    assert "predict_marginals" in overridden
    for name in overridden:
        theirs = inspect.signature(getattr(base, name)).parameters
        ours = inspect.signature(getattr(wrapper, name)).parameters
        ours = [(p.name, p.default) for p in ours.values()]
        assert ours[: len(theirs)] == [(p.name, p.default) for p in theirs.values()], name


def test_lazy_predictions_refuse_what_the_fit_refuses():
    """A complex X lost its imaginary part in the blocks' cast to float64 (the result was that of
    the real part, with only NumPy's ComplexWarning); a 1-D X failed with NumPy's AxisError."""
    X, Y = _data(spaces.Multilabel(3), seed=12)
    model = DaskStructuredRidge(solver="exact").fit(X, Y)
    with pytest.raises(ValueError, match="X must hold real numbers, got dtype complex128"):
        model.decision_function(da.from_array(X + 1j, chunks=(ROWS, N)))
    with pytest.raises(ValueError, match=r"X must be 2-D with at least one feature, got shape \(460,\)"):
        model.predict(da.from_array(X[:, 0], chunks=ROWS))


def test_fit_errors_of_the_core_name_the_row_of_x():
    X, Y = _data(spaces.Multilabel(3), seed=13)
    X[37 + 150 + 5, 1] = 1e300  # partition 3: its squared norm overflows, which the core reports by row
    with pytest.raises(
        ValueError,
        match=r"^partition 3 \(rows 187 to 199\): X row 192: its squared norm overflows",
    ):
        DaskStructuredRidge(solver="exact").fit(da.from_array(X, chunks=(ROWS, N)), Y)


def test_dask_fit_takes_what_the_in_memory_fit_takes():
    """A sparse Y and a scalar sample_weight gave 'y must be 1-D or 2-D, got 0 dimensions'; None
    among string class labels raised NumPy's raw TypeError."""
    X, Y = _data(spaces.Multilabel(3), seed=14)
    local = StructuredRidge(solver="exact").fit(X, Y, sample_weight=np.full(M, 2.0))
    dist = DaskStructuredRidge(solver="exact").fit(
        da.from_array(X, chunks=(ROWS, N)), sparse.csr_matrix(Y), sample_weight=2.0
    )
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    # a missing label is refused as the in-memory fit refuses it, naming its partition and row
    # (sorting the labels had failed without naming either, probe 80)
    labels = np.array(["a", "b", "c"] * (M // 3) + ["a"] * (M % 3), dtype=object)
    for missing, row, where in (
        (None, 44, r"partition 1 \(rows 37 to 186\)"),
        (np.nan, 2, r"partition 0 \(rows 0 to 36\)"),
    ):
        holed = labels.copy()
        holed[row] = missing
        with pytest.raises(
            ValueError, match=rf"^{where}: y holds a missing class label \({missing!r}\) at row {row}: drop"
        ):
            DaskStructuredRidge(space="multiclass").fit(
                da.from_array(X, chunks=(ROWS, N)), da.from_array(holed, chunks=ROWS)
            )
    mixed = labels.copy()
    mixed[5] = 3
    with pytest.raises(ValueError, match="y holds class labels that cannot be sorted together"):
        DaskStructuredRidge(space="multiclass").fit(
            da.from_array(X, chunks=(ROWS, N)), da.from_array(mixed, chunks=ROWS)
        )


def test_a_nullable_dtype_dataframe_fits_as_numbers():
    """A DataFrame whose columns are all Float64 (pandas' nullable dtype) was refused as 'dtype
    object', where the in-memory fit takes it."""
    pd, dd = _dataframes()
    X, Y = _data(spaces.Multilabel(3), seed=14)
    local = StructuredRidge(solver="exact").fit(X, Y)
    dist = DaskStructuredRidge(solver="exact").fit(dd.from_pandas(pd.DataFrame(X).astype("Float64"), npartitions=3), Y)
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=1e-9, atol=1e-12)


def test_nystrom_landmarks_come_from_enough_first_partitions():
    """The default landmark sample was X's first partition: one row gave a 1-landmark map (R² 0.53
    against 0.98 in memory) without a word, and an empty first partition was refused as a
    'landmark_sample' the user never passed. Now the first partitions holding n_components rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    Y = (X[:, :3] > 0).astype(int)
    params = dict(alpha=0.1, kernel="rbf", n_components=50, random_state=0)
    reference = DaskStructuredRidge(**params).fit(da.from_array(X, chunks=((100, 300), 5)), Y)
    for chunks in ((0, 100, 300), (1, 99, 300), (30, 20, 350)):
        model = DaskStructuredRidge(**params).fit(da.from_array(X, chunks=(chunks, 5)), Y)
        assert model.n_components_ == 50
        assert model.score(X, Y) > reference.score(X, Y) - 0.05
    with pytest.warns(UserWarning, match=r"first chunk, whose 1 rows are fewer than n_components=50"):
        StructuredRidge(**params).partial_fit(X[:1], Y[:1])


def test_the_memory_budget_of_the_client_applies_on_worker_processes(client):
    """config_context(max_memory=...) set the client's budget only: a distributed CG fit that the
    budget refuses in memory ran on the worker processes under their own default budget. Tasks
    now carry the client's budget; in the client's own process it is left as the context left it."""
    import combpred

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 60))
    Y = (X[:, :40] > 0).astype(int)
    from combpred import dask as cdask

    def budgets_after_a_task_on_every_worker(settings):
        # Which workers run a fit's tasks is the scheduler's choice (one may run none of them, as
        # happened on a loaded machine): every worker gets one task carrying the settings here.
        for worker in client.scheduler_info()["workers"]:
            client.submit(settings.apply, workers=[worker], pure=False).result()
        return set(client.run(lambda: combpred.get_config()["max_memory"]).values())

    with combpred.config_context(max_memory=100_000):
        with pytest.raises(MemoryError):
            StructuredRidge(alpha=0.1, solver="cg", max_iter=5).fit(X, Y)
        with pytest.raises(MemoryError, match="above the memory budget of 100.0 kB"):  # a partition's 500 × 40 Y
            DaskStructuredRidge(alpha=0.1, solver="cg", max_iter=5).fit(da.from_array(X, chunks=500), Y)
        assert budgets_after_a_task_on_every_worker(cdask._Settings.of(None)) == {100_000}
    assert combpred.get_config()["max_memory"] is None  # the context restored the client's default
    model = DaskStructuredRidge(alpha=0.1, solver="cg", max_iter=5).fit(da.from_array(X, chunks=500), Y)
    assert model.coef_.shape == (40, 60)
    assert budgets_after_a_task_on_every_worker(cdask._Settings.of(None)) == {None}  # and a task sets them back


def test_review_details_of_the_dask_inputs():
    """Lazy predictions take numbers held as objects (as in memory; only complex and 1-D X are
    refused); the default landmark sample takes a first partition whole and later ones only for
    the rows still needed; a task from another process (told by a random token, not the process
    id, which repeats across containers) sets the budget, one from this process does not."""
    import combpred
    from combpred import dask as cdask
    from combpred.metrics import make_hierarchical_loss_scorer

    X, Y = _data(spaces.Multilabel(3), seed=15)
    model = DaskStructuredRidge(solver="exact").fit(X, Y)
    lazy = model.decision_function(da.from_array(X.astype(object), chunks=(ROWS, N)))
    np.testing.assert_allclose(lazy.compute(), model.decision_function(X), rtol=1e-12)
    for chunks, rows in (((100, 360), 100), ((30, 430), 50), ((0, 1, 459), 50), ((10, 20, 430), 50)):
        assert cdask._first_rows(da.from_array(X, chunks=(chunks, N)), 50).shape == (rows, N)
    assert cdask._Settings.of(None).process == cdask._process
    before = combpred.get_config()["max_memory"]
    try:
        cdask._Settings(None, 123_456_789, cdask._process).apply()
        assert combpred.get_config()["max_memory"] == before
        cdask._Settings(None, 123_456_789, "another process").apply()
        assert combpred.get_config()["max_memory"] == 123_456_789
    finally:
        combpred.set_config(max_memory=before)
    with pytest.raises(ValueError, match="node_weights must hold real numbers"):
        make_hierarchical_loss_scorer([-1, 0, 0], node_weights=[1, 1j, 1])


def test_fit_tasks_with_n_jobs_none_take_the_workers_default_threads(client):
    """Tasks of a fit with n_jobs=None left the core's threads as the worker last had them (all
    CPUs in a fresh one), where distributed's nanny sets OMP_NUM_THREADS=1 (the review of session
    46): None now takes each worker's own default, an explicit n_jobs still wins, and a
    prediction's tasks leave the count to the estimator's methods."""
    from combpred import _core
    from combpred import dask as cdask

    def threads_after_a_task_on_every_worker(settings):  # every worker, whatever the scheduler picks
        for worker in client.scheduler_info()["workers"]:
            client.submit(settings.apply, workers=[worker], pure=False).result()
        return set(client.run(_core.get_threads).values())

    omp = set(client.run(lambda: os.environ.get("OMP_NUM_THREADS")).values())
    every_core = threads_after_a_task_on_every_worker(cdask._Settings.of(-1))
    expected = {int(next(iter(omp)))} if len(omp) == 1 and None not in omp else every_core
    assert threads_after_a_task_on_every_worker(cdask._Settings.of(None, sets_threads=False)) == every_core
    assert threads_after_a_task_on_every_worker(cdask._Settings.of(None)) == expected
    assert threads_after_a_task_on_every_worker(cdask._Settings.of(1)) == {1}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    DaskStructuredRidge(solver="cg").fit(da.from_array(X, chunks=100), (X[:, :3] > 0).astype(int))


def test_an_abandoned_fit_leaves_an_in_process_cluster_usable():
    """Workers in the client's own process (``LocalCluster(processes=False)``): a partition's error
    abandons the fit, whose task still running on the other worker thread stopped with the core's
    KeyboardInterrupt, which escaped into the worker's event loop and closed it: every later call
    raised "IOLoop is closed", leaving the ``with`` block included (probe AS). The task now fails
    with an ordinary exception, and the cluster computes on."""
    n, p, labels = 200_000, 40, 20
    X = da.random.default_rng(0).normal(size=(n, p), chunks=(20_000, p))
    X = X.map_blocks(  # partition 1 holds a NaN: it fails at once, beside partition 0's long task
        lambda b, block_info=None: (
            np.where(np.arange(len(b))[:, None] == 5, np.nan, b) if block_info[0]["chunk-location"][0] == 1 else b
        ),
        dtype=float,
    )
    Y = (da.random.default_rng(1).normal(size=(n, labels), chunks=(20_000, labels)) > 0).astype(int)
    with (
        distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as c,
    ):
        X, Y = c.persist([X, Y])
        with pytest.raises(ValueError, match="partition 1 .*X must be finite"):
            DaskStructuredRidge(solver="exact", n_jobs=1).fit(X, Y)
        # the abandoned task ends at its next poll; the event loop died when it did
        deadline = time.monotonic() + 30
        while any(c.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        assert c.submit(sum, [1, 2]).result(timeout=30) == 3


def test_a_partition_whose_x_and_y_rows_differ_names_both():
    """A block function that returns fewer rows than its chunk says: the error was that y had the
    wrong shape, whichever of X and y was short (probe AS); it now names both counts."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(1000, 4)), (rng.random((1000, 3)) < 0.5).astype(int)
    short = da.from_array(X, chunks=250).map_blocks(lambda b: b[:-1], dtype=float)
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match=r"partition \d \(rows .*X holds 249 rows and y 250"):
            DaskStructuredRidge().fit(short, da.from_array(Y, chunks=250))


@pytest.mark.parametrize("solver", ["exact", "cg"])
def test_a_fit_takes_numbers_held_as_objects_as_the_in_memory_fit_does(solver):
    """An X of dtype object holding numbers: the in-memory fit and the Dask predictions took it,
    the Dask fit refused it (probe AS); it now fits the model of the numbers, and a partition
    holding something else is refused naming X, the partition and the value."""
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(400, 4)), (rng.random((400, 3)) < 0.5).astype(int)
    Yd = da.from_array(Y, chunks=100)
    with dask.config.set(scheduler="threads"):
        objects = DaskStructuredRidge(solver=solver).fit(da.from_array(X.astype(object), chunks=100), Yd)
        numbers = DaskStructuredRidge(solver=solver).fit(da.from_array(X, chunks=100), Yd)
        np.testing.assert_array_equal(objects.coef_, numbers.coef_)
        odd = X.astype(object)
        # a number written out says how a dask DataFrame of numbers held as objects came to hold
        # strings; text (a categorical column) is told to be encoded, which that setting does not do
        # (probe FN)
        for text, says in (("1.5", "convert-string"), ("x", "encode text and categorical columns")):
            odd[150, 2] = text
            refusal = rf"partition 1 \(rows 100 to 199\): X must hold real numbers, found '{text}' \(str\); .*{says}"
            with pytest.raises(ValueError, match=refusal):
                DaskStructuredRidge(solver=solver).fit(da.from_array(odd, chunks=100), Yd)


def test_distributed_prob_fit_warns_of_unbounded_intercepts_as_in_memory(client):
    # The in-memory fit warns where an intercept has no finite optimum (a label always on, a class
    # or level never seen); the distributed fit was silent there. The partitions' boundary counts,
    # added up, give it the same warning, word for word; rows of weight 0 do not count, and a
    # partition may hold none of the structures.
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    labels = (X > 0).astype(int)
    cases = [
        (spaces.Multilabel(3), np.column_stack([np.ones(30, int), labels[:, 1:]]), None),
        (spaces.Multiclass(4), np.arange(30) % 3, None),
        # a level never seen, though no coordinate is constant; the one row of level 1 weighs nothing
        (spaces.Ordinal(4), np.array([0, 2, 3] * 9 + [1, 0, 2]), np.r_[np.ones(27), 0.0, 1.0, 1.0]),
        (spaces.Multilabel(3), labels, None),  # every label varies: no warning
    ]
    for space, Y, w in cases:
        with warnings.catch_warnings(record=True) as local:
            warnings.simplefilter("always")
            ProbabilisticStructured(space=space, alpha=0.01).fit(X, Y, sample_weight=w)
        chunks = (10,) if Y.ndim == 1 else (10, Y.shape[1])
        with warnings.catch_warnings(record=True) as dist:
            warnings.simplefilter("always")
            DaskProbabilisticStructured(space=space, alpha=0.01).fit(
                da.from_array(X, chunks=(10, 3)),
                da.from_array(Y, chunks=chunks),
                sample_weight=None if w is None else da.from_array(w, chunks=10),
            )

        def unbounded(records):  # the messages, without the estimator's name that leads them
            return [
                str(r.message).split(": ", 1)[1]
                for r in records
                if issubclass(r.category, ConvergenceWarning) and "optimum" in str(r.message)
            ]

        said = unbounded(local)
        assert unbounded(dist) == said
        assert bool(said) == (Y is not labels), (space, said)


def test_score_of_no_rows_is_refused_as_in_memory():
    """score on a Dask X of no rows returned nan with numpy's "Mean of empty slice" warning; in
    memory it is refused (probe FN)."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(60, 3)), (rng.random((60, 2)) < 0.5).astype(int)
    with dask.config.set(scheduler="synchronous"):
        model = DaskStructuredRidge().fit(da.from_array(X, chunks=30), da.from_array(Y, chunks=30))
        for Xe, Ye in ((X[:0], Y[:0]), (da.from_array(X, chunks=30)[:0], da.from_array(Y, chunks=30)[:0])):
            with pytest.raises(ValueError, match="0 sample"):
                model.score(Xe, Ye)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DaskStructuredRidge(solver="exact"),
        lambda: DaskStructuredRidge(solver="cg"),
        DaskProbabilisticStructured,
    ],
)
def test_all_zero_weights_are_refused_naming_sample_weight(make):
    """The distributed fits refused weights that are all zero without naming sample_weight ("the
    statistics' examples have zero total weight"), where the in-memory fits name it (probe FN)."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(90, 3)), (rng.random((90, 3)) < 0.5).astype(int)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="sample_weight"):
        make().fit(da.from_array(X, chunks=30), da.from_array(Y, chunks=30), sample_weight=da.zeros(90, chunks=45))


def test_tilted_estimate_through_dask():
    """DaskStructuredRidge passes predict_marginals' estimate on: a model fitted on NumPy arrays has the
    training structures and gives, on a Dask X, what the in-memory model gives; so does one fitted
    from statistics merged across partitions, which carry the partitions' distinct structures (with
    sample weights, a partition's all zero)."""
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(80, 3)), (rng.random((80, 3)) < 0.4).astype(int)
    dX = da.from_array(X, chunks=40)
    with dask.config.set(scheduler="synchronous"):
        local = DaskStructuredRidge(empirical_weight=1.0).fit(X, Y)
        want = StructuredRidge(empirical_weight=1.0).fit(X, Y).predict_marginals(X, scale=3.0, estimate="tilted")
        got = local.predict_marginals(dX, scale=3.0, estimate="tilted").compute()
        np.testing.assert_allclose(got, want, atol=1e-12)
        with pytest.raises(ValueError, match="marginal_estimate='tilted', marginal_scale='noise_free'"):
            DaskStructuredRidge(decision="hamming", marginal_estimate="tilted").fit(dX, da.from_array(Y, chunks=40))
        sw = rng.random(80) + 0.5
        sw[40:60] = 0
        for weight in (1.0, 0.3):
            merged = DaskStructuredRidge(empirical_weight=weight).fit(
                dX, da.from_array(Y, chunks=40), sample_weight=da.from_array(sw, chunks=20)
            )
            memory = StructuredRidge(empirical_weight=weight, solver="exact").fit(X, Y, sample_weight=sw)
            np.testing.assert_allclose(
                merged.predict_marginals(X, scale=3.0, estimate="tilted"),
                memory.predict_marginals(X, scale=3.0, estimate="tilted"),
                atol=1e-8,
            )
        # partial_fit continues a model solved from partitions with the structures of its chunk too
        streamed = DaskStructuredRidge(empirical_weight=0.3).fit(dX[:40], da.from_array(Y[:40], chunks=20))
        streamed.partial_fit(X[40:], Y[40:])
        np.testing.assert_allclose(
            streamed.predict_marginals(X, scale=3.0, estimate="tilted"),
            StructuredRidge(empirical_weight=0.3, solver="exact")
            .fit(X, Y)
            .predict_marginals(X, scale=3.0, estimate="tilted"),
            atol=1e-8,
        )
        # the product measure needs only the training mean, which merged statistics hold
        product = DaskStructuredRidge(empirical_weight=0.5, reference="product").fit(dX, da.from_array(Y, chunks=40))
        local = StructuredRidge(empirical_weight=0.5, reference="product").fit(X, Y)
        np.testing.assert_allclose(
            product.predict_marginals(X, scale=3.0, estimate="tilted"),
            local.predict_marginals(X, scale=3.0, estimate="tilted"),
            atol=1e-8,
        )


def test_iterative_fits_run_on_the_client_the_caller_selected():
    """Under ``with client.as_current()`` on a client that is not the default, the CG and the
    probabilistic fits sent each evaluation, computed on a thread of its own, to the default client:
    FutureCancelledError "lost dependencies" (probe 89). The thread now runs in the caller's context."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    Y = (X @ rng.normal(size=(3, 3)) > 0).astype(int)
    kw = {"n_workers": 1, "threads_per_worker": 1, "processes": False, "dashboard_address": None}
    with (
        distributed.LocalCluster(**kw) as default_cluster,
        distributed.Client(default_cluster),
        distributed.LocalCluster(**kw) as chosen_cluster,
        distributed.Client(chosen_cluster, set_as_default=False) as chosen,
    ):
        Xd, Yd = da.from_array(X, chunks=100), da.from_array(Y, chunks=100)
        for est, local in (
            (DaskStructuredRidge(solver="cg"), StructuredRidge(solver="cg")),
            (DaskProbabilisticStructured(), ProbabilisticStructured()),
        ):
            with chosen.as_current():
                est.fit(Xd, Yd)
            np.testing.assert_allclose(est.coef_, local.fit(X, Y).coef_, rtol=1e-4, atol=1e-6)  # both to tol


def test_the_exact_fit_reads_each_partition_once():
    """X's and Y's blocks were made delayed apart, their graphs optimised apart: with Y computed from
    X (docs/scaling_out.rst's own example) every block of X was produced twice (probe 89)."""
    made = collections.Counter()

    def produce(b, block_info=None):
        made[block_info[0]["chunk-location"][0]] += 1
        return b + block_info[0]["chunk-location"][0]

    X = da.zeros((600, 4), chunks=(100, 4)).map_blocks(produce, dtype=float)
    Y = (X @ np.random.default_rng(1).normal(size=(4, 3)) > 0).astype(int)
    with dask.config.set(scheduler="sync"):
        DaskStructuredRidge().fit(X, Y)
    assert sorted(made.values()) == [1] * 6, made


def test_a_dask_series_as_x_is_refused_as_1d():
    """A Dask Series answers .columns (dask-expr): its one dtype met list() in an internal TypeError,
    and predict warned of feature names first (probe 89)."""
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # at the numpy floor dask.dataframe needs a pyarrow that refuses numpy 1.x
        pytest.skip(f"dask.dataframe cannot be imported: {exc}")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(100, 2)), (rng.random((100, 3)) < 0.5).astype(int)
    series = dd.from_pandas(pd.Series(X[:, 0], name="x"), npartitions=2)
    with pytest.raises(ValueError, match=r"X must be 2-D"):
        DaskStructuredRidge().fit(series, Y)
    model = DaskStructuredRidge().fit(da.from_array(X, chunks=50), Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"X must be 2-D"):
            model.predict(series)


def test_a_lazy_prediction_reads_the_model_from_one_key():
    """The fitted model was a literal argument of every block's task: an 18.7 MB model over 200
    partitions took 78 s to predict where 2.7 s do (probe 89). Every block now reads one key."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(300, 4)), (rng.normal(size=(300, 3)) > 0).astype(int)
    model = DaskStructuredRidge().fit(X, Y)
    lazy = model.predict(da.from_array(X, chunks=50))
    graph = dict(lazy.__dask_graph__())
    blocks = [key for key in graph if isinstance(key, tuple) and str(key[0]).startswith("_apply")]
    assert len(blocks) == 6
    shared = set.intersection(*(set(dask.core.get_dependencies(graph, key)) for key in blocks))
    assert len(shared) == 1, shared
    np.testing.assert_array_equal(lazy.compute(), model.predict(X))


def test_a_fit_leaves_the_callers_unknown_chunk_sizes_unknown():
    """The fit computed X's unknown chunk sizes in place (dask's compute_chunk_sizes): the caller's
    array changed under it (probe 89)."""
    X = da.from_array(np.random.default_rng(0).normal(size=(100, 3)), chunks=25)
    filtered = X[X[:, 0] > -10]
    Y = (filtered[:, :2] > 0).astype(int)
    assert np.isnan(filtered.chunks[0]).all()
    with dask.config.set(scheduler="sync"):
        model = DaskStructuredRidge().fit(filtered, Y)
    assert np.isnan(filtered.chunks[0]).all()
    np.testing.assert_allclose(
        model.coef_, StructuredRidge().fit(X.compute(), (X[:, :2] > 0).astype(int).compute()).coef_
    )
