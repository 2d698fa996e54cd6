"""Inputs the Dask fits took where the in-memory fits refuse or warn, and sizes they read data for
before refusing (probe N). The synchronous scheduler: nothing here needs workers."""

import warnings

import combpred
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from combpred.dask import DaskProbabilisticStructured, DaskStructuredRidge  # noqa: E402


@pytest.fixture(autouse=True)
def _synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    return X, (X[:, :3] > 0).astype(int)


@pytest.mark.parametrize("cls", [DaskStructuredRidge, DaskProbabilisticStructured])
def test_one_weight_is_spread_lazily(cls):
    """A number was spread by np.full over X's declared rows on the client (72.8 TiB for 10¹³ rows),
    and a 0-d Dask weight raised IndexError."""
    X, Y = _data()
    dX, dY = da.from_array(X, chunks=25), da.from_array(Y, chunks=25)
    plain = cls(max_iter=50).fit(dX, dY)
    for weight in (2.0, da.asarray(2.0), np.float64(2.0)):
        weighted = cls(max_iter=50).fit(dX, dY, sample_weight=weight)
        np.testing.assert_array_equal(weighted.predict(X), cls(max_iter=50).fit(X, Y, sample_weight=2.0).predict(X))
    assert plain.predict(X).shape == Y.shape


def test_one_weight_for_declared_rows_allocates_nothing():
    """np.full spread it over X's declared rows on the client: 72.8 TiB for 10¹³ rows."""
    from combpred.dask import _align

    chunks = (10**12,) * 10
    W = _align(2.0, chunks, "sample_weight")
    assert isinstance(W, da.Array) and W.chunks == (chunks,) and W.dtype == np.float64
    assert float(W[:3].sum().compute()) == 6.0


@pytest.mark.parametrize("cls", [DaskStructuredRidge, DaskProbabilisticStructured])
@pytest.mark.parametrize(
    "weight", [np.array(["1"] * 100), np.ones(100) + 1j, da.ones(100, chunks=50) + 1j], ids=["str", "complex", "dask"]
)
def test_weights_must_be_real_numbers(cls, weight):
    """Strings were parsed and complex weights lost their imaginary parts (ProbabilisticStructured
    ended in numpy's UFuncTypeError); in memory both are refused."""
    X, Y = _data()
    with pytest.raises(ValueError, match="sample_weight must hold real numbers, got dtype"):
        cls().fit(da.from_array(X, chunks=50), da.from_array(Y, chunks=50), sample_weight=weight)


def test_landmark_sample_is_checked_and_a_short_one_warned_of():
    """landmark_sample took strings (parsed) and complex numbers (cast), and one row fitted a
    one-landmark map silently where partial_fit warns."""
    X, Y = _data()
    dX, dY = da.from_array(X, chunks=25), da.from_array(Y, chunks=25)
    with pytest.raises(TypeError, match="landmark_sample must hold real numbers"):
        DaskStructuredRidge(kernel="rbf", n_components=20).fit(dX, dY, landmark_sample=X[:30].astype(str))
    with pytest.warns(UserWarning, match="from 1 landmark rows, fewer than n_components=20"):
        DaskStructuredRidge(kernel="rbf", n_components=20).fit(dX, dY, landmark_sample=X[:1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        DaskStructuredRidge(kernel="rbf", n_components=20).fit(dX, dY, landmark_sample=X[:30])


@pytest.mark.parametrize(
    "make, error, what",
    [
        (lambda: DaskStructuredRidge(solver="cg"), MemoryError, "conjugate gradients on 3001×3 coefficients"),
        (lambda: DaskProbabilisticStructured(), MemoryError, "fitting 3000 features"),
        (lambda: DaskStructuredRidge(solver="exact"), ValueError, "statistics of 9003 unknowns"),
    ],
)
def test_sizes_are_refused_before_the_data_are_read(make, error, what):
    """A fit refused for its moment matrix loaded every partition first (3 s here; with 10¹²
    declared columns dask.persist failed to allocate 14.6 TiB); the exact fit's statistics of too
    many unknowns were refused after the first partition had been read (probe BW)."""
    read = []

    def block(b):
        if b.size:  # not Dask's call on an empty block for the result's type
            read.append(1)
        return b

    rng = np.random.default_rng(1)
    X = da.from_array(rng.normal(size=(200, 3000)), chunks=(20, 3000)).map_blocks(block, dtype=float)
    Y = da.from_array((rng.normal(size=(200, 3)) > 0).astype(int), chunks=(20, 3))
    with combpred.config_context(max_memory=1_000_000), pytest.raises(error, match=what):
        make().fit(X, Y)
    assert not read, f"{len(read)} partitions were read before the refusal"


def test_distributed_cg_above_the_budget_reads_no_partition():
    """Above the budget by its vectors, not by XᵀX alone, distributed CG was refused only after a
    pass over every partition (probe BR): the core refuses it when it resolves the solver."""
    read = []

    def block(b):
        if b.size:
            read.append(1)
        return b

    rng = np.random.default_rng(1)
    X = da.from_array(rng.normal(size=(80, 1000)), chunks=(10, 1000)).map_blocks(block, dtype=float)
    Y = da.from_array((rng.normal(size=(80, 10)) > 0).astype(int), chunks=(10, 10))
    with combpred.config_context(max_memory=20_000_000), pytest.raises(MemoryError, match="conjugate gradients"):
        DaskStructuredRidge(solver="cg").fit(X, Y)
    assert not read, f"{len(read)} partitions were read before the refusal"


@pytest.mark.parametrize("chunks", [100, 10, 1, (7, 50, 43)])
def test_sampled_marginals_do_not_depend_on_the_blocks(chunks):
    """Every block drew its samples from one seed: a row's estimate depended on where the blocks
    began, and different rows at the same place in their blocks had correlated errors (probe N).
    Each row is now seeded by its values, as in one in-memory call."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4))
    Y = combpred.spaces.Permutations(5).sample(100, random_state=0)
    model = DaskProbabilisticStructured(space=combpred.spaces.Permutations(5), max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
    Xq = np.vstack([X[:10]] * 10)
    options = {"method": "sampled", "n_samples": 20, "random_state": 3}
    want = model.to_local().predict_marginals(Xq, **options)
    got = model.predict_marginals(da.from_array(Xq, chunks=(chunks, 4)), **options).compute()
    np.testing.assert_array_equal(got, want)
    # a row's estimate is a function of the row: its copies have it, different rows differ
    np.testing.assert_array_equal(want[:10], want[10:20])
    assert len({row.tobytes() for row in want[:10]}) == 10
    # a RandomState (or the global state, for None) is drawn from once for the whole call, as in
    # memory (probe Y: every block drew from it, in the threaded scheduler's order)
    for seeded in (lambda: np.random.RandomState(4), lambda: np.random.seed(4)):
        model.set_params(decision="kendall", random_state=seeded())
        want = model.to_local().predict_marginals(Xq, method="sampled", n_samples=20)
        want_rule = model.to_local().predict(Xq)
        state = model.random_state if model.random_state is not None else np.random
        after = state.randint(1 << 30, size=3)
        model.set_params(random_state=seeded())
        lazy = model.predict_marginals(da.from_array(Xq, chunks=(chunks, 4)), method="sampled", n_samples=20)
        lazy_rule = model.predict(da.from_array(Xq, chunks=(chunks, 4)))
        with dask.config.set(scheduler="threads"):
            np.testing.assert_array_equal(lazy.compute(), want)
            np.testing.assert_array_equal(lazy_rule.compute(), want_rule)
        state = model.random_state if model.random_state is not None else np.random
        np.testing.assert_array_equal(state.randint(1 << 30, size=3), after)


def test_the_row_origin_is_per_thread_and_restored():
    """cp_set_row_origin words a core error's rows as rows of a larger input; it belongs to the
    thread that set it and ends with the block, nested blocks included, so a later in-memory call
    on a Dask worker's thread numbers rows from its own X."""
    import threading

    from combpred import _capi, spaces

    space = spaces.Multilabel(3)._handle()
    rows = np.array([[0, 1, 0], [1, 1, 2]])  # row 1 holds a 2

    def message():
        with pytest.raises(ValueError) as info:
            space.validate(rows, name="y")
        return str(info.value)

    plain = message()
    assert not plain.startswith("in the rows"), plain
    with _capi.row_origin(40):
        assert message() == "in the rows from 40 on: " + plain
        with _capi.row_origin(7):
            assert message() == "in the rows from 7 on: " + plain  # set, not added
        assert message() == "in the rows from 40 on: " + plain
        seen = []
        worker = threading.Thread(target=lambda: seen.append(message()))
        worker.start()
        worker.join()
        assert seen == [plain]  # another thread's calls keep their own origin
    assert message() == plain
    with pytest.raises(ValueError, match="row origin -1: must be non-negative"):
        with _capi.row_origin(-1):
            pass
    assert message() == plain
    with _capi.row_origin(40):  # a refused origin is named alone, not after the one in force (probe DX)
        with pytest.raises(ValueError, match="^row origin -5: must be non-negative$"):
            with _capi.row_origin(-5):
                pass


def test_row_numbers_of_a_chunked_error_add_up_to_the_row_of_X():
    """Scores are computed a chunk at a time (about 0.1 s of work each): a bad row was named as
    "in the rows from 2097 on: in the rows from 357 on: X row 46", and in a Dask partition the note
    said the row counted from the partition's first row when it counted from a chunk's (review).
    The partition's first row reaches the core as data (cp_set_row_origin), which adds it, and the
    core names X's own row (it said "in the rows from 150 on: X row 70", probe EI)."""
    rng = np.random.default_rng(0)
    m = 100  # 100 kernel columns and 2,000 labels: about 1,300 rows per chunk of scores
    X = rng.normal(size=(m, 5))
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 5)
    Y = (rng.random((m, 2000)) < 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DaskStructuredRidge(kernel="precomputed", alpha=1e-8).fit(K, Y)
    Kq = np.tile(K[:1], (3000, 1))
    Kq[2900] = 1.7e308  # past the first chunk, in memory and in the second partition
    for call in ("decision_function", "predict"):
        with pytest.raises(ValueError) as info:
            getattr(model, call)(Kq)
        assert str(info.value).startswith("X row 2900: "), str(info.value)
        with pytest.raises(ValueError) as info:
            getattr(model, call)(da.from_array(Kq, chunks=(1500, m))).compute()
        assert str(info.value).startswith("partition 1 (rows 1500 to 2999): X row 2900: "), str(info.value)


def test_decision_rules_decode_the_same_marginals_whatever_the_blocks():
    """predict with a decision rule decodes sampled marginals: its blocks seeded their rows from 0,
    so 39 of 60 predictions moved with chunks of 7 (review)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    Y = (X[:, :3] + rng.normal(size=(60, 3)) > 0).astype(int)
    model = DaskProbabilisticStructured(sampler="metropolis", decision="hamming", random_state=0, max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
        want = model.predict(X)
        for chunks in (60, 7):
            np.testing.assert_array_equal(model.predict(da.from_array(X, chunks=(chunks, 4))).compute(), want)


def test_ctrl_c_stops_the_fits_tasks_on_this_processs_threads():
    """After Ctrl-C on the client, the tasks of a Dask fit ran on to their end on the threads of the
    client's process: 7–10 CPU-seconds in the 5 s after, and the next fit waited for the cores
    (probe N). They now stop at their next poll, and those not started do not start."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import json, os, signal, threading, time, warnings
        import dask, dask.array as da
        from combpred.dask import DaskStructuredRidge
        warnings.simplefilter("ignore")
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a background shell ignores it
        dask.config.set(scheduler="threads", num_workers=2)
        X = da.random.default_rng(0).normal(size=(40000, 79), chunks=(10000, 79))
        Y = (X > 0).astype(int)
        X, Y = dask.persist(X, Y)
        threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        start = time.perf_counter()
        try:
            DaskStructuredRidge(solver="exact", alpha=1.0).fit(X, Y)
            outcome = "finished"
        except KeyboardInterrupt:
            outcome = "interrupted"
        elapsed = time.perf_counter() - start
        cpu = time.process_time()
        time.sleep(3.0)
        print(json.dumps({"outcome": outcome, "elapsed": elapsed, "cpu_after": time.process_time() - cpu}))
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["outcome"] == "finished":
        pytest.skip(f"the fit finished before Ctrl-C ({result['elapsed']:.2f} s): nothing to stop")
    assert result["cpu_after"] < 1.0, result


@pytest.mark.parametrize("estimator", ["DaskProbabilisticStructured", "DaskStructuredRidge"])
def test_ctrl_c_during_a_distributed_evaluation_stops_the_fit_at_once(estimator):
    """The iterative fits wait for each evaluation inside the core's callback, where Ctrl-C only
    marks the call's flag: the KeyboardInterrupt came after the evaluation, 7–16 s later on 40,000
    rows (probe BF). The wait now polls the flag."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        f"""
        import json, os, signal, threading, time, warnings
        import dask, dask.array as da, numpy as np
        from combpred import spaces
        from combpred.dask import {estimator}
        warnings.simplefilter("ignore")
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a background shell ignores it
        dask.config.set(scheduler="threads", num_workers=1)
        space = spaces.Permutations(12)
        rng = np.random.default_rng(0)
        X = da.from_array(rng.normal(size=(8000, 10)), chunks=(4000, 10))
        Y = da.from_array(space.sample(8000, random_state=0), chunks=(4000, 12))
        import combpred.dask as cd
        name = "_cg_product" if "Ridge" in "{estimator}" else "_prob_sums"
        evaluate = getattr(cd, name)

        def slow(*args):  # every evaluation takes 2 s at least
            time.sleep(2.0)
            return evaluate(*args)

        setattr(cd, name, slow)
        sent = []
        threading.Timer(1.0, lambda: (sent.append(time.perf_counter()), os.kill(os.getpid(), signal.SIGINT))).start()
        try:
            {estimator}(space=space, max_iter=1000, tol=1e-12, **({{"solver": "cg"}} if "Ridge" in "{estimator}" else {{}})).fit(X, Y)
            outcome, latency = "finished", None
        except KeyboardInterrupt:
            outcome, latency = "interrupted", time.perf_counter() - sent[0]
        print(json.dumps({{"outcome": outcome, "latency": latency}}))
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted" and result["latency"] < 1.0, result


def test_column_names_of_mixed_types_are_refused_as_in_memory():
    """A Dask DataFrame with columns ['a', 1, 'c'] fitted and dropped its names; in memory
    scikit-learn's rule refuses them (probe N)."""
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # at the numpy floor dask.dataframe needs a pyarrow that refuses numpy 1.x
        pytest.skip(f"dask.dataframe cannot be imported: {exc}")
    X, Y = _data()
    frame = pd.DataFrame(X[:, :3], columns=["a", 1, "c"])
    with pytest.raises(TypeError, match="Feature names are only supported if all input features have string names"):
        DaskStructuredRidge().fit(frame, Y)  # in memory
    with pytest.raises(TypeError, match="Feature names are only supported if all input features have string names"):
        DaskStructuredRidge().fit(dd.from_pandas(frame, npartitions=2), Y)
    named = DaskStructuredRidge().fit(dd.from_pandas(frame.set_axis(["a", "b", "c"], axis=1), npartitions=2), Y)
    assert list(named.feature_names_in_) == ["a", "b", "c"]


def test_lazy_predictions_warn_of_feature_names_as_in_memory():
    """A Dask array given to a model fitted with column names, or a Dask DataFrame to one fitted
    without, predicted without scikit-learn's warnings, which a NumPy or pandas X gets (probe 84)."""
    pd = pytest.importorskip("pandas")
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # at the numpy floor dask.dataframe needs a pyarrow that refuses numpy 1.x
        pytest.skip(f"dask.dataframe cannot be imported: {exc}")
    X, Y = _data()
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    named, unnamed = DaskStructuredRidge().fit(frame, Y), DaskStructuredRidge().fit(X, Y)
    for model, lazy, words in (
        (
            named,
            da.from_array(X, chunks=20),
            "X does not have valid feature names, but DaskStructuredRidge was fitted with",
        ),
        (
            unnamed,
            dd.from_pandas(frame, npartitions=2),
            "X has feature names, but DaskStructuredRidge was fitted without",
        ),
    ):
        with pytest.warns(UserWarning, match=words):
            model.predict(lazy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named.predict(dd.from_pandas(frame, npartitions=2))
        unnamed.predict(da.from_array(X, chunks=20))


@pytest.mark.parametrize(
    "make",
    [
        lambda: DaskStructuredRidge(solver="cg"),
        lambda: DaskStructuredRidge(solver="cg", fit_intercept=False),
        lambda: DaskStructuredRidge(solver="exact"),
        lambda: DaskProbabilisticStructured(),
        lambda: DaskProbabilisticStructured(fit_intercept=False),
    ],
)
@pytest.mark.parametrize("extra", [1, -1], ids=["wide", "narrow"])
@pytest.mark.parametrize("which", [0, 1], ids=["first", "later"])
def test_a_block_with_other_columns_than_declared_is_named(make, extra, which):
    """A block function that returns other columns than its chunks declare. Before: numpy's
    'operands could not be broadcast' (probe N); then, through distributed CG without an intercept,
    a core writing b and g past the ends of buffers sized by the declared columns (a corrupted heap,
    the process aborted) or reading past them (a silently wrong model), and messages about a
    'centre' or 'spread' the user never gave (probe CZ). Now every partition's block is checked."""
    X, Y = _data()

    def lying(b, block_info=None):
        if block_info and block_info[0]["chunk-location"][0] == which:
            return np.c_[b, b[:, :1]] if extra > 0 else b[:, :-1]
        return b

    dX = da.from_array(X, chunks=(25, 4)).map_blocks(lying, dtype=float)
    rows = f"rows {25 * which} to {25 * which + 24}"
    message = rf"partition {which} \({rows}\): X's block has shape \(25, {4 + extra}\), but X declares 4 columns"
    with pytest.raises(ValueError, match=message):
        make().fit(dX, da.from_array(Y, chunks=(25, 3)))


def test_a_nystrom_sample_of_other_columns_than_declared_names_x():
    """The landmark sample is X's first partitions: a narrow one was refused as a landmark_sample,
    which the user never gave (probe CZ)."""
    X, Y = _data()
    dX = da.from_array(X, chunks=(25, 4)).map_blocks(lambda b: b[:, :-1], dtype=float)
    with pytest.raises(ValueError, match=r"X's first partitions \(the landmark sample of the Nyström map\) have shape"):
        DaskStructuredRidge(kernel="rbf", n_components=10).fit(dX, da.from_array(Y, chunks=(25, 3)))


@pytest.mark.parametrize("make", [lambda: DaskStructuredRidge(solver="cg"), lambda: DaskProbabilisticStructured()])
def test_a_weight_block_of_two_dimensions_names_sample_weight(make):
    """The iterative fits take the largest weight first, where numpy's concatenation error named
    nothing (probe CZ); the exact fit names the partition."""
    X, Y = _data()
    W = da.ones(100, chunks=25).map_blocks(lambda b: b[:, None], dtype=float)
    with pytest.raises(ValueError, match="sample_weight: its largest value could not be computed"):
        make().fit(da.from_array(X, chunks=(25, 4)), da.from_array(Y, chunks=(25, 3)), sample_weight=W)


def test_score_takes_x_of_unknown_chunk_sizes():
    """fit and predict took such an X (a dask DataFrame's to_dask_array()); score ended in Dask's
    len() error (probe CZ)."""
    X, Y = _data()
    model = DaskStructuredRidge().fit(X, Y)
    dX = da.from_array(X, chunks=(25, 4))
    unknown = dX[dX[:, 0] > -np.inf]
    assert np.isnan(unknown.shape[0])
    weights = da.from_array(np.arange(100.0), chunks=25)
    assert model.score(unknown, Y) == model.to_local().score(X, Y)
    assert model.score(unknown, Y, sample_weight=weights) == model.to_local().score(
        X, Y, sample_weight=np.arange(100.0)
    )


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"solver": "sgd"},
            r"not solver='sgd': stream the partitions through StructuredRidge\(solver='sgd'\)\.partial_fit",
        ),
        ({"kernel": "rbf"}, r"kernel=rbf without n_components is an expansion over every training sample"),
        (
            {"kernel": "precomputed", "n_components": 5},
            r"kernel=precomputed is an expansion over every training sample",
        ),
        ({"kernel": lambda a, b: a @ b.T}, r"does not support callable kernels"),
    ],
)
def test_fits_that_are_not_sums_over_partitions_are_refused(params, message):
    """The core refuses them (cp_ridge_check_distributable) where Python had its own copy of the
    rule and the core answered "sgd" as a solver to run (audit P); a callable kernel, a Python
    object, stays Python's to refuse. Both before any partition is computed: the core's refusal
    first came after the classes of y were (review)."""
    from dask.callbacks import Callback

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.argmax(X, axis=1)
    computed = []
    with Callback(start=lambda dsk: computed.append(len(dsk))), pytest.raises(ValueError, match=message):
        DaskStructuredRidge(space="multiclass", **params).fit(
            da.from_array(X, chunks=(10, 3)), da.from_array(y, chunks=10)
        )
    assert computed == []


@pytest.mark.parametrize("cls", [DaskStructuredRidge, DaskProbabilisticStructured])
def test_dask_estimators_document_every_parameter(cls):
    """Their docstrings said "**params: those of StructuredRidge"; help() now lists each parameter,
    taken from the in-memory estimator's docstring (one text)."""
    import inspect

    local = cls.__mro__[2]
    ours, theirs = inspect.getdoc(cls), inspect.getdoc(local)
    for name in inspect.signature(cls.__init__).parameters:
        if name != "self":
            assert f"\n{name} : " in ours, name
    start = theirs.index("\nspace : ")
    assert theirs[start : theirs.index("\nAttributes\n")] in ours
    assert "**params" not in ours


def test_spliced_docstrings_take_either_indentation():
    """Python 3.13 stores docstrings without their common indentation: the splice of the Parameters
    looked for the indented text, and `import combpred.dask` failed there (probe CF)."""
    import inspect

    from combpred import metrics, spaces
    from combpred.dask import _parameters_of

    parent_doc = "Parent.\n\n    Parameters\n    ----------\n    a : int\n        The a.\n\n    Attributes\n    ----------\n    b_ : int\n"
    child_doc = "Child.\n\n    Parameters\n    ----------\n    **params\n        Those of :class:`~combpred.Parent`.\n"
    for strip in (False, True):  # the docstrings as Python < 3.13 and ≥ 3.13 store them
        Parent = type("Parent", (), {"__doc__": inspect.cleandoc(parent_doc) if strip else parent_doc})
        Child = type("Child", (), {"__doc__": inspect.cleandoc(child_doc) if strip else child_doc})
        assert inspect.getdoc(_parameters_of(Parent)(Child)) == "Child.\n\nParameters\n----------\na : int\n    The a."
    # the other splices come out at the margin of their docstring's sections
    for obj in (metrics.kendall_tau, metrics.spearman_rho, spaces.Permutations, spaces.Cliques):
        doc = inspect.getdoc(obj)
        assert "\nParameters\n----------\n" in doc and "    ----------" not in doc, obj


@pytest.mark.parametrize("lazy", [False, True])
def test_pandas_extension_dtypes_are_read_as_the_in_memory_fit_reads_them(lazy):
    """Nullable, pyarrow and categorical targets and Float64 weights (probe U): the in-memory fit
    takes them, the Dask fit said "y must hold integers, got dtype object" (to_dask_array made
    object chunks of them, and np.asarray object arrays), 'unknown' label type for categories, and
    "must hold real numbers" for the weights. A missing value is refused naming y."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, Y = _data()
    yc = X[:, :3].argmax(1)
    dX = da.from_array(X, chunks=25)

    def given(frame):
        return dd.from_pandas(frame, npartitions=4) if lazy else frame

    ridge = DaskStructuredRidge(solver="exact")
    expected = ridge.fit(dX, Y).coef_
    for dtype in ("Int64", "int64[pyarrow]", "boolean"):
        got = ridge.fit(dX, given(pd.DataFrame(Y).astype(dtype))).coef_
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=dtype)
    expected_w = ridge.fit(dX, Y, sample_weight=np.linspace(1, 2, 100)).coef_
    weights = given(pd.Series(np.linspace(1, 2, 100), dtype="Float64"))
    np.testing.assert_allclose(ridge.fit(dX, Y, sample_weight=weights).coef_, expected_w, rtol=1e-12, atol=1e-14)
    multiclass = DaskStructuredRidge(space="multiclass", solver="exact")
    expected_c = multiclass.fit(dX, yc).predict(X)
    for labels in (pd.Series(yc, dtype="Int64"), pd.Series(yc).astype("category")):
        np.testing.assert_array_equal(multiclass.fit(dX, given(labels)).predict(X), expected_c)
    missing = pd.DataFrame(Y).astype("Int64")
    missing.iloc[30, 1] = pd.NA
    with pytest.raises(ValueError, match=r"y holds a missing value \(pd.NA\)"):
        DaskStructuredRidge().fit(dX, given(missing))
    sparse_frame = pd.DataFrame(Y).astype(pd.SparseDtype(int, 0))
    if not lazy:
        np.testing.assert_allclose(ridge.fit(dX, sparse_frame).coef_, expected, rtol=1e-12, atol=1e-14)
    # categorical columns (the review: object chunks, "must hold integers"), known or not
    categorical = pd.DataFrame(Y, columns=list("abc")).astype(pd.CategoricalDtype([0, 1]))
    frames = [categorical] + ([dd.from_pandas(categorical, npartitions=4).astype("category")] if lazy else [])
    for frame in frames:
        got = ridge.fit(dX, frame if not lazy or frame is not categorical else given(frame)).coef_
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # weights held as objects, as the in-memory fit takes them (lazy ones were refused as object)
    with dask.config.set({"dataframe.convert-string": False}):  # else Dask makes strings of them
        objects = given(pd.Series(list(np.linspace(1, 2, 100)), dtype=object))
        np.testing.assert_allclose(ridge.fit(dX, Y, sample_weight=objects).coef_, expected_w, rtol=1e-12, atol=1e-14)


def test_masked_chunks_that_mask_an_entry_are_refused_by_name():
    """A Dask array of masked chunks lost its masks in the partitions' conversions (session 46): a
    masked-out entry trained at its underlying value, where the in-memory fit refuses it, also in
    arrays whose meta is a plain ndarray (the review) and in a landmark sample. Chunks that mask
    nothing give the plain array's fit."""
    X, Y = _data()
    mask = np.zeros(X.shape, bool)
    mask[60, 1] = True

    def masked(a, m=None, chunks=25):
        return da.from_array(np.ma.masked_array(a, mask=m), chunks=chunks, asarray=False)

    def plain_meta(a, m):  # masked blocks behind an ndarray meta, as from_delayed declares them
        return da.from_delayed(dask.delayed(np.ma.masked_array)(a, mask=m), shape=a.shape, dtype=a.dtype)

    ridge = DaskStructuredRidge(solver="exact")
    expected = ridge.fit(da.from_array(X, chunks=25), Y)
    np.testing.assert_array_equal(ridge.fit(masked(X), masked(Y)).coef_, expected.coef_)
    refused = {
        "X": lambda: DaskStructuredRidge().fit(masked(X, mask), Y),
        "y": lambda: DaskProbabilisticStructured().fit(da.from_array(X, chunks=25), masked(Y, mask[:, :3])),
        "sample_weight": lambda: DaskStructuredRidge().fit(
            X, Y, sample_weight=masked(np.ones(100), np.arange(100) == 70)
        ),
        "X ": lambda: expected.predict(masked(X, mask)).compute(),
        "X  ": lambda: DaskStructuredRidge().fit(plain_meta(X, mask), Y),
        "X   ": lambda: expected.predict(plain_meta(X, mask)).compute(),
        "landmark_sample": lambda: DaskStructuredRidge(kernel="rbf", n_components=10).fit(
            da.from_array(X, chunks=25), Y, landmark_sample=masked(X, mask)
        ),
    }
    for name, call in refused.items():
        with pytest.raises(ValueError, match=rf"{name.strip()} is a masked array that masks 1 of its entries"):
            call()


def test_a_fractional_target_names_its_row_of_y():
    """The partition's conversion counted rows from the partition's start ("at row 200") where
    the core's errors count rows of y ("row 700"), in one message (probe BR)."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(1000, 3)), (rng.random((1000, 3)) < 0.5).astype(float)
    Y[700, 1] = 0.5
    with pytest.raises(ValueError, match=r"partition 2 \(rows 500 to 749\): .*fractional value at row 700, column 1"):
        DaskStructuredRidge(space="multilabel").fit(da.from_array(X, chunks=250), da.from_array(Y, chunks=250))


def test_a_label_outside_the_classes_names_its_row_of_y():
    """A Multiclass object's ids convert as class labels, whose refusal (a fractional or NaN id)
    named no row where the in-memory fit names it (probe BW)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 3)), rng.integers(0, 3, 300).astype(float)
    for bad in (0.5, np.nan):
        y[205] = bad
        with pytest.raises(ValueError, match=r"partition 2 \(rows 200 to 299\): y contains label .* at row 205, which"):
            DaskStructuredRidge(space=combpred.spaces.Multiclass(3)).fit(
                da.from_array(X, chunks=100), da.from_array(y, chunks=100)
            )


def test_auto_takes_cg_where_the_budget_refuses_the_statistics():
    """Under a 40 MB budget the statistics of 1001·4 unknowns (60 MB) were refused where CG, and
    the in-memory fit's auto, fit (probe BZ): auto now resolves to CG."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(200, 1000)), (rng.random((200, 4)) > 0.5).astype(int)
    with combpred.config_context(max_memory=40_000_000):
        model = DaskStructuredRidge().fit(da.from_array(X, chunks=(100, 1000)), da.from_array(Y, chunks=(100, 4)))
    assert model.solver_ == "cg"


@pytest.mark.parametrize("cls", [DaskStructuredRidge, DaskProbabilisticStructured])
def test_errors_of_a_lazy_prediction_name_the_class_called(cls):
    """A Dask X is predicted through an in-memory copy of the model, whose errors named its class
    (StructuredRidge, ProbabilisticStructured) where a NumPy X's name the Dask estimator (probe CT)."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils._param_validation import InvalidParameterError

    X, Y = _data()
    dX = da.from_array(X, chunks=25)
    with pytest.raises(NotFittedError, match=f"This {cls.__name__} instance is not fitted"):
        cls().predict(dX)
    model = cls(max_iter=50).fit(dX, da.from_array(Y, chunks=25))
    with pytest.raises(ValueError, match=f"X has 5 features, but {cls.__name__} is expecting 4 features"):
        model.predict(da.zeros((4, 5), chunks=2))
    with pytest.raises(ValueError, match=f"X has 5 features, but {cls.__name__} is expecting 4 features"):
        model.decision_function(da.zeros((4, 5), chunks=2))
    model.set_params(decision="bogus")
    with pytest.raises(InvalidParameterError, match=f"The 'decision' parameter of {cls.__name__} must be"):
        model.predict(dX)


@pytest.mark.parametrize("cls", [DaskStructuredRidge, DaskProbabilisticStructured])
def test_blocks_that_break_their_chunks_promise_are_named(cls):
    """Blocks whose array says NumPy but hold scipy.sparse reached NumPy's bare "setting an array
    element with a sequence"; a block shorter than its chunk gave lazy predictions shorter than
    their declared shape, so reductions over them dropped rows silently (probe EI)."""
    sparse = pytest.importorskip("scipy.sparse")
    X, Y = _data()
    Xd, Yd = da.from_array(X, chunks=(20, X.shape[1])), da.from_array(Y, chunks=(20, Y.shape[1]))
    as_sparse = Xd.map_blocks(lambda b: sparse.csr_matrix(b) if b[0, 0] == X[20, 0] else b, dtype=float)
    with pytest.raises(ValueError, match=r"partition 1 \(rows 20 to 39\): X's block is a scipy\.sparse"):
        cls(space="multilabel").fit(as_sparse, Yd)
    model = cls(space="multilabel").fit(Xd, Yd)
    with pytest.raises(ValueError, match=r"partition 1 \(rows 20 to 39\): X's block is a scipy\.sparse"):
        model.predict(as_sparse).compute()
    short = Xd.map_blocks(lambda b: b[:-1] if b[0, 0] == X[20, 0] else b, dtype=float)
    for method in ("predict", "decision_function", "predict_marginals"):
        with pytest.raises(ValueError, match="partition 1 .*X's block holds 19 rows, its chunks declare 20"):
            getattr(model, method)(short).compute()


def test_a_memory_error_in_a_partition_names_the_partition():
    """A MemoryError raised where a partition is fitted or predicted named neither the partition nor
    its rows (probe EI); it stays a MemoryError."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(400, 5)), (rng.random((400, 30)) < 0.5).astype(int)
    Xd, Yd = da.from_array(X, chunks=(200, 5)), da.from_array(Y, chunks=(200, 30))
    model = DaskStructuredRidge().fit(Xd, Yd)
    partition = r"^partition [01] \(rows (0 to 199|200 to 399)\): "
    with combpred.config_context(max_memory=2000), pytest.raises(MemoryError, match=partition):
        model.decision_function(Xd).compute()
    # the fit's own statistics fit this budget, and a partition's moments do not
    with combpred.config_context(max_memory=100_000), pytest.raises(MemoryError, match=partition + "fitting X"):
        DaskStructuredRidge(solver="cg").fit(Xd, Yd)
