"""Memory: every allocation whose size a user controls is checked against a budget before it is
made (issue 11, finding 2). Each reproduction runs in a child process under an address-space cap,
where the Go runtime used to abort with "fatal error: out of memory" (which nothing can catch):
the child must survive and raise a clear MemoryError or ValueError naming the parameter."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import combpred
import numpy as np
import pytest
from combpred import ProbabilisticStructured, StructuredRidge, spaces
from combpred._estimator_base import set_threads

PACKAGE_PARENT = str(Path(combpred.__file__).resolve().parent.parent)
ADDRESS_SPACE = 3 * 10**9  # bytes; the Go runtime, NumPy and scikit-learn load well below it

_PREAMBLE = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import numpy as np
import combpred
from combpred import ProbabilisticStructured, StructuredRidge, spaces
rng = np.random.default_rng(0)
try:
{body}
    outcome = {{"raised": None, "message": ""}}
except Exception as exc:
    outcome = {{"raised": type(exc).__name__, "message": str(exc)}}
print(json.dumps(outcome))
"""


def _probe(body: str) -> dict:
    """Run body (statements) in a child under the address-space cap; return what it raised."""
    code = _PREAMBLE.format(cap=ADDRESS_SPACE, body=textwrap.indent(textwrap.dedent(body), "    "))
    env = _child_environment()
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-3000:]}"
    return json.loads(child.stdout.strip().splitlines()[-1])


def _child_environment() -> dict[str, str]:
    # GOMAXPROCS 2: the Go runtime maps a stack and a malloc arena for each thread it may run, so
    # that the room it needs under an address-space limit grows with the machine's CPUs.
    return dict(
        os.environ, GOMAXPROCS="2", PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")])
    )


def _assert_refused(outcome: dict, error: str, *words: str) -> None:
    assert outcome["raised"] == error, outcome
    for word in words:
        assert word in outcome["message"], (word, outcome["message"])


def test_sampled_fit_with_a_billion_samples_is_refused():
    outcome = _probe("""
        sp = spaces.DirectedCycles(16)
        ProbabilisticStructured(space=sp, n_samples=10**9).fit(rng.normal(size=(5, 3)), sp.sample(5, 0))
    """)
    _assert_refused(outcome, "MemoryError", "n_samples = 1000000000", "bytes", "max_memory")


def test_exact_inference_tables_are_refused():
    outcome = _probe("""
        sp = spaces.KSubsets(200000, 100000)
        ProbabilisticStructured(space=sp).fit(rng.normal(size=(2, 3)), sp.sample(2, 0))
    """)
    _assert_refused(outcome, "MemoryError", "ksubsets space [200000 100000]", "bytes")


def test_ridge_on_a_huge_output_dimension_is_refused():
    outcome = _probe("""
        sp = spaces.Permutations(20000)
        StructuredRidge(space=sp).fit(rng.normal(size=(2, 3)), sp.sample(2, 0))
    """)
    _assert_refused(outcome, "MemoryError", "d = 199990000", "2 samples × 3 features", "bytes")


def test_model_bytes_declaring_two_billion_samples_are_refused_at_use():
    # The model bytes' layout (core/prob/encoding.go): magic, version, kind, parameters, intercept,
    # n_features, inference method, then the sample count; W closes them, before the CRC-32C.
    outcome = _probe("""
        import pickle, struct, warnings

        def crc32c(data):
            crc = 0xFFFFFFFF
            for byte in data:
                crc ^= byte
                for _ in range(8):
                    crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
            return crc ^ 0xFFFFFFFF

        sp = spaces.DirectedCycles(16)
        X = rng.normal(size=(5, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = ProbabilisticStructured(space=sp, n_samples=10, max_iter=2).fit(X, sp.sample(5, 0))
        blob = bytearray(pickle.dumps(est))
        i = blob.index(b"CPPM")
        kind = struct.unpack_from("<H", blob, i + 6)[0]
        nparams = struct.unpack_from("<I", blob, i + 8 + kind)[0]
        at = i + 8 + kind + 4 + 8 * nparams + 1 + 4 + 1
        assert struct.unpack_from("<I", blob, at)[0] == 10
        struct.pack_into("<I", blob, at, 2**31 - 1)
        w = at + 4 + 2 + 16 + 2 + 4 + 16 + 1
        rows, cols = struct.unpack_from("<II", blob, w)
        end = w + 8 + 8 * rows * cols
        if struct.unpack_from("<H", blob, i + 4)[0] >= 2:
            end += 8 + 4  # format version 2: relative gradient SE, final samples
        struct.pack_into("<I", blob, end, crc32c(bytes(blob[i:end])))
        pickle.loads(bytes(blob)).predict_marginals(X)
    """)
    _assert_refused(outcome, "MemoryError", "n_samples = 2147483647", "bytes")


def test_thousands_of_threads_are_clamped_and_work():
    outcome = _probe("""
        sp = spaces.Permutations(5)
        X, Y = rng.normal(size=(40, 3)), sp.sample(40, 0)
        expected = StructuredRidge(space=sp, n_jobs=1).fit(X, Y).predict(X)
        for n_jobs in (4096, 2**63, 2**70):
            got = StructuredRidge(space=sp, n_jobs=n_jobs).fit(X, Y).predict(X)
            assert (got == expected).all(), n_jobs
    """)
    assert outcome["raised"] is None, outcome


def test_n_jobs_reads_as_in_joblib():
    # A negative n_jobs counts back from the cores (the core's TestThreadCount checks the counts);
    # 0 means nothing and is refused, as joblib refuses it, instead of meaning all cores.
    sp = spaces.Permutations(4)
    X, Y = np.random.default_rng(0).normal(size=(30, 3)), sp.sample(30, 0)
    try:
        expected = StructuredRidge(space=sp, n_jobs=1).fit(X, Y).predict(X)
        for n_jobs in (-1, -2, -(2**70)):
            assert (StructuredRidge(space=sp, n_jobs=n_jobs).fit(X, Y).predict(X) == expected).all(), n_jobs
        for est in (StructuredRidge(space=sp, n_jobs=0), ProbabilisticStructured(space=sp, n_jobs=0)):
            with pytest.raises(ValueError, match="n_jobs=0"):
                est.fit(X, Y)
    finally:
        set_threads(None)


def test_ordinary_work_runs_under_the_cap_with_the_default_budget():
    outcome = _probe("""
        assert combpred.get_config()["max_memory"] is None
        assert combpred.get_config()["max_memory_bytes"] <= 3 * 10**9 // 2  # half the address space
        sp = spaces.Permutations(8)
        X, Y = rng.normal(size=(300, 10)), sp.sample(300, 0)
        StructuredRidge(space=sp).fit(X, Y).predict(X)
        ProbabilisticStructured(space=sp, max_iter=5).fit(X[:50], Y[:50]).predict_marginals(X[:5])
        sp.covariance()
    """)
    assert outcome["raised"] is None, outcome


@pytest.mark.parametrize(
    ("make", "param"),
    [
        (lambda: spaces.Cliques(10**6), "n_vertices = 1000000"),
        (lambda: spaces.PartialTournaments(10**6), "n_items = 1000000"),
        (lambda: spaces.Permutations(65537), "n_labels = 65537"),
        (lambda: spaces.Multilabel(2**31), "n_labels = 2147483648"),
        (lambda: spaces.Permutations(2**70), "n_labels = 1180591620717411303424"),
        (lambda: spaces.KSubsets(2**64, 2), "n_labels = 18446744073709551616"),
        (lambda: spaces.Subtrees(np.array([2**64 - 1, 0], dtype=np.uint64)), "parent"),
    ],
)
def test_space_sizes_follow_one_rule(make, param):
    with pytest.raises(ValueError, match="out of range") as info:
        make()
    assert param in str(info.value)


def test_the_largest_pair_spaces_are_accepted():
    for sp in (spaces.Permutations(65536), spaces.Cliques(65536), spaces.PartialTournaments(65536)):
        assert sp.dim == 65536 * 65535 // 2


def test_covariance_refuses_before_numpy_allocates():
    with pytest.raises(ValueError, match="too large for a dense matrix"):
        spaces.Permutations(5000).covariance()  # NumPy failed first: "Unable to allocate 1.11 PiB"
    # d²·8 overflowed int64 past 46,341 labels: the message said 2⁶³ − 1 bytes (probe DS)
    with pytest.raises(ValueError, match=r"d = 2112467500 is too large for a dense matrix \(d×d needs 3.57e\+19 bytes"):
        spaces.Permutations(65000).covariance()
    with combpred.config_context(max_memory=10**8):
        with pytest.raises(MemoryError, match=r"covariance: the dense 4950×4950 matrix.*196,020,000 bytes.*max_memory"):
            spaces.Permutations(100).covariance()
    assert spaces.Permutations(100).covariance().shape == (4950, 4950)


def test_the_budget_is_settable_and_names_itself():
    sp = spaces.Permutations(6)
    X, Y = np.random.default_rng(1).normal(size=(30, 3)), sp.sample(30, 1)
    with combpred.config_context(max_memory=10_000):
        assert combpred.get_config() == {"max_memory": 10_000, "max_memory_bytes": 10_000}
        with pytest.raises(MemoryError, match="30 samples × 3 features.*above the memory budget of 10.0 kB"):
            StructuredRidge(space=sp).fit(X, Y)
    assert combpred.get_config()["max_memory"] is None
    StructuredRidge(space=sp).fit(X, Y)


def test_tree_and_dag_spaces_check_their_node_tables_before_building_them():
    # a star of 8·10⁶ nodes took 1.2 GB under a 64 MB budget, and aborted the process under
    # ulimit -v (probe BF); a DAG of 2·10⁶ nodes took 510 MB
    star = np.zeros(1_000_000, dtype=np.int64)
    star[0] = -1
    with combpred.config_context(max_memory=32 * 2**20):
        for cls in (spaces.Subtrees, spaces.HierarchyPaths):
            with pytest.raises(MemoryError, match=r"tables of the \w+ space's 1000000 nodes.*above the memory budget"):
                _ = cls(star).dim
        with pytest.raises(MemoryError, match=r"tables of the dag_paths space's 300000 nodes"):
            _ = spaces.DAGPaths([[]] + [[0]] * 299_999).dim
        assert spaces.Subtrees(star[:1000]).dim == 1000  # small ones within it
    assert spaces.Subtrees(star).dim == 1_000_000


def test_outputs_follow_a_budget_changed_between_calls():
    """Outputs within the budget skip the call into the core (the Python side keeps the budget the core
    reported): a change of the budget must reach the very next check, either way."""
    sp = spaces.Multilabel(4)
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.5).astype(np.int64)
    model = StructuredRidge(space=sp).fit(X, Y)
    rows = np.repeat(X, 50, axis=0)  # 2,000 rows: the scores take 64,000 bytes
    assert model.decision_function(rows).shape == (2000, 4)
    with combpred.config_context(max_memory=50_000):
        with pytest.raises(MemoryError, match=r"an output of shape \(2000, 4\).*above the memory budget of 50.0 kB"):
            model.decision_function(rows)
        assert model.decision_function(rows[:100]).shape == (100, 4)
    assert model.decision_function(rows).shape == (2000, 4)


@pytest.mark.parametrize("bad", [True, -1, 0, math.nan, math.inf, 2**63, 1.5, "1GB", [1]])
def test_max_memory_is_validated(bad):
    with pytest.raises(ValueError, match="max_memory"):
        combpred.set_config(max_memory=bad)
    assert combpred.get_config()["max_memory"] is None


def test_max_memory_accepts_whole_numbers():
    with combpred.config_context(max_memory=4e9):
        assert combpred.get_config()["max_memory"] == 4 * 10**9
    with combpred.config_context(max_memory=np.int64(2**63 - 1)):
        assert combpred.get_config()["max_memory"] == 2**63 - 1
    # a float16's comparison with 2**63 - 1 overflowed with NumPy's warning (probe 85)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # not the UserWarning of live loky workers
        with combpred.config_context(max_memory=np.float16(1024)):
            assert combpred.get_config()["max_memory"] == 1024


@pytest.mark.parametrize("estimator", [StructuredRidge, ProbabilisticStructured])
def test_extreme_alpha_fits_the_limit_or_is_named(estimator):
    """alpha = 1e300 fits the limit (W = 0, the intercept-only optimum: the exact solver used to
    call its system "not positive definite"); alpha = 1e308, beyond the largest alpha for which
    2·alpha is finite, is an error naming alpha (ProbabilisticStructured's gradient was NaN), now
    the range check's: the schema states the core's bound."""
    sp = spaces.Permutations(4)
    X, Y = np.random.default_rng(0).normal(size=(20, 3)), sp.sample(20, 0)
    model = estimator(space=sp, alpha=1e300).fit(X, Y)
    assert np.abs(model.coef_).max() < 1e-100 and np.isfinite(model.intercept_).all()
    with pytest.raises(ValueError, match=r"'alpha' parameter .* 4\.4942328371557893e\+307\]( or None)?\. Got 1e\+308"):
        estimator(space=sp, alpha=1e308).fit(X, Y)


def _with_free_address_space(warm_up: str, body: str) -> dict:
    """Run ``warm_up`` in a child, then ``body`` under an address-space limit 1.2 GB above what the
    child has mapped; return what ``body`` raised."""
    code = textwrap.dedent(
        """
        import json, os, resource
        import numpy as np
        from combpred import StructuredRidge, spaces
        rng = np.random.default_rng(0)
        {warm_up}
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (mapped + 1_200_000_000, resource.RLIM_INFINITY))
        try:
            {body}
            outcome = {{"raised": None, "message": ""}}
        except Exception as exc:
            outcome = {{"raised": type(exc).__name__, "message": str(exc)}}
        print(json.dumps(outcome))
        """
    ).format(warm_up=warm_up, body=body)
    env = _child_environment()
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-3000:]}"
    return json.loads(child.stdout.strip().splitlines()[-1])


def _first_call_with_free_address_space(free: int) -> subprocess.CompletedProcess:
    """Run a first call into the core in a child whose address-space limit leaves ``free`` bytes
    above what it has mapped once NumPy, scikit-learn and combpred are imported."""
    code = textwrap.dedent(
        f"""
        import os, resource
        import numpy as np
        from combpred import StructuredRidge
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (mapped + {free}, resource.RLIM_INFINITY))
        rng = np.random.default_rng(0)
        try:
            StructuredRidge().fit(rng.normal(size=(50, 3)), (rng.random((50, 4)) > 0.5).astype(int))
            print("fitted")
        except MemoryError as exc:
            print("MemoryError:", exc)
        """
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_child_environment()
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_an_address_space_limit_too_small_for_the_go_runtime_is_refused_before_it_starts():
    # The Go runtime reserves about 1.1 GB as it starts, then a stack and a 64 MB malloc arena per
    # thread; a failed mmap aborts the process. A limit that left 1 GiB free aborted every run, at
    # 1.2-1.6 GiB some runs (probe DF; the README had said 1.5 GB of limit was enough).
    for _ in range(3):
        child = _first_call_with_free_address_space(2**30)
        assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-3000:]}"
        assert child.stdout.startswith("MemoryError: combpred's core cannot start"), child.stdout
        assert "ulimit -v" in child.stdout and "GOMAXPROCS" in child.stdout, child.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_an_address_space_limit_the_go_runtime_fits_in_lets_fits_run():
    from combpred import _capi

    # GOMAXPROCS 2, a thread more on a loaded machine, and the room the budget keeps for a call's mappings
    slack = _capi._MAPPING_SLACK["RLIMIT_AS"] + _capi._LOADED_THREAD
    room = _capi._RUNTIME_ADDRESS_SPACE + 2 * _capi._RUNTIME_ADDRESS_SPACE_PER_THREAD + slack
    for _ in range(3):
        child = _first_call_with_free_address_space(room + 16 * 2**20)
        assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-3000:]}"
        assert child.stdout.strip() == "fitted", child.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_requests_beyond_the_free_address_space_are_refused():
    # Under `ulimit -v` the default budget is half the limit, fixed at first use, but imports, BLAS
    # thread stacks and the Go heap's arenas map much of the limit first: a fit the budget allowed
    # ended in the Go runtime's fatal "out of memory" (SIGABRT). The limit here leaves 1.2 GB of
    # address space free; the exact solve below needs about 1 GB.
    outcome = _with_free_address_space(
        "StructuredRidge().fit(rng.normal(size=(20, 3)), (rng.random((20, 3)) > 0.5).astype(int))",
        'StructuredRidge(solver="exact").fit(rng.normal(size=(200, 79)), (rng.random((200, 100)) > 0.5).astype(int))',
    )
    _assert_refused(outcome, "MemoryError", "fitting X of 200 samples", "address-space limit (ulimit -v)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_outputs_python_allocates_beyond_the_free_address_space_are_refused():
    # Outputs Python allocates for the core were checked against the budget alone, in Python: under
    # `ulimit -v` a 1.6 GB sample the budget allowed reached NumPy's own "Unable to allocate"
    # (found by a probe). The core weighs the room left, as it does for its own requests.
    outcome = _with_free_address_space(
        "spaces.Multilabel(10).sample(10, 0)", "spaces.Multilabel(10).sample(20_000_000, 0)"
    )
    _assert_refused(outcome, "MemoryError", "n_samples", "address-space limit (ulimit -v)")


def test_a_sample_too_wide_for_the_budget_names_the_width():
    # Multilabel(2³¹ − 1).sample(1) blamed n_samples alone, which the user had set to 1.
    with combpred.config_context(max_memory=50_000):
        with pytest.raises(MemoryError, match=r"^n_samples structures of width 10000: an output of shape \(1, 10000\)"):
            spaces.Multilabel(10_000).sample(1)
        assert spaces.Multilabel(10_000).sample(0).shape == (0, 10_000)


def test_a_budget_read_while_set_config_changes_it_is_not_cached(monkeypatch):
    """A thread that read the budget from the core while another thread's set_config changed it
    cached the old value until the next set_config, and outputs the new budget refuses went
    through (probe I). The read is held open here where a thread switch can land."""
    import threading

    from combpred import _capi

    rng = np.random.default_rng(0)
    model = StructuredRidge(space=spaces.Multilabel(4)).fit(rng.normal(size=(50, 3)), rng.integers(0, 2, size=(50, 4)))
    read, changed = threading.Event(), threading.Event()
    original = _capi.max_memory

    def slow_max_memory():
        value = original()
        read.set()
        assert changed.wait(30)
        return value

    with combpred.config_context(max_memory=2**40):
        monkeypatch.setattr(_capi, "max_memory", slow_max_memory)
        thread = threading.Thread(target=lambda: model.decision_function(rng.normal(size=(2, 3))))
        thread.start()
        assert read.wait(30)
        monkeypatch.setattr(_capi, "max_memory", original)
        with combpred.config_context(max_memory=2**24):
            changed.set()
            thread.join(30)
            # the user's words: "out" was an internal buffer's name (probe BF)
            with pytest.raises(MemoryError, match=r"^the result: an output of shape \(1048576, 4\)"):
                model.decision_function(np.zeros((2**20, 3)))


def test_worker_processes_inherit_the_budget():
    """set_config reached only its own process: loky workers of cross_val_score(n_jobs=2) ran with
    the default budget a fit with n_jobs=1 was refused under (probe AW). The budget travels in
    COMBPRED_MAX_MEMORY, which a process reads when it loads the core; a bad value is named."""
    previous = combpred.get_config()["max_memory"]
    probe = "import combpred; print(combpred.get_config()['max_memory'])"
    with combpred.config_context(max_memory=123_456_789):
        assert os.environ["COMBPRED_MAX_MEMORY"] == "123456789"
        child = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        assert child.stdout.strip() == "123456789"
    assert os.environ.get("COMBPRED_MAX_MEMORY") == (None if previous is None else str(previous))
    bad = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, "COMBPRED_MAX_MEMORY": "1e9"}
    )
    assert bad.returncode != 0 and "COMBPRED_MAX_MEMORY='1e9' must be a whole number of bytes" in bad.stderr
    # 5,000 digits: int() refused them in a ValueError naming nothing (probe EK)
    assert _capi_budget_error("9" * 5000) and _capi_budget_error("0" * 5000)
    assert combpred._capi._environment_budget("0" * 5000 + "7") == 7


def _capi_budget_error(value: str) -> bool:
    try:
        combpred._capi._environment_budget(value)
    except ImportError as exc:
        return "COMBPRED_MAX_MEMORY=" in str(exc)
    return False


def test_set_config_overrides_a_malformed_environment_budget():
    """A malformed COMBPRED_MAX_MEMORY refused every load of the core, set_config's and
    config_context's own, the documented ways to set the budget, included: they now write the
    variable first."""
    script = (
        "import combpred, os\n"
        "try:\n"
        "    combpred.get_config()\n"
        "except ImportError as exc:\n"
        "    assert 'COMBPRED_MAX_MEMORY' in str(exc)\n"
        "else:\n"
        "    raise SystemExit('the malformed budget was taken')\n"
        "with combpred.config_context(max_memory=2**30):\n"  # it read the previous budget first
        "    assert combpred.get_config()['max_memory'] == 2**30\n"
        "assert combpred.get_config()['max_memory'] is None\n"
        "os.environ['COMBPRED_MAX_MEMORY'] = '1GB'\n"
        "combpred.set_config(max_memory=10**9)\n"
        "assert combpred.get_config()['max_memory'] == 10**9, combpred.get_config()\n"
        "assert os.environ['COMBPRED_MAX_MEMORY'] == str(10**9)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "COMBPRED_MAX_MEMORY": "1GB"}
    )
    assert child.returncode == 0, child.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB and anonymous mmap")
def test_distributed_cg_refuses_before_copying_the_summed_moments():
    """cp_ridge_fit_cg_sums copied b, g and mm (a 488 MB g here) before the budget check refused
    the fit: 15 → 993 MB of resident memory under a 100 MB budget (probe BP)."""
    script = textwrap.dedent(
        """
        import ctypes, mmap, resource
        import numpy as np
        import combpred
        from combpred import _capi, _schema, spaces
        combpred.set_config(max_memory=100 * 2**20)
        lib = _capi.lib()
        space = spaces.Multilabel(3)
        sh = space._h()
        n, d = 8000, 3
        k = n + 1
        g = np.frombuffer(mmap.mmap(-1, k * k * 8), dtype=np.float64)  # zero pages, never touched
        b, mm = np.zeros(k * d), np.eye(d).ravel()
        f64 = lambda a: _capi.f64(a, a.shape, "a")[1]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rc = lib.cp_ridge_fit_cg_sums(sh, n, b"solver=cg", None, k, d, f64(b), f64(g), f64(mm), 1.0, 1, None, 0, 0,
                                      _capi.PRODUCTS(lambda *a: 0), _capi.PROGRESS(), None, _capi.out_i64())
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        print(rc, _schema.status("memory"), round(grown))
        """
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    rc, memory, grown_mb = map(int, child.stdout.split())
    assert rc == memory
    assert grown_mb < 50, f"resident memory grew by {grown_mb} MB before the refusal"


def test_a_budget_change_warns_while_reused_loky_workers_keep_the_old_one():
    """joblib reuses its loky workers from one parallel call to the next, and they keep the budget
    they loaded combpred with: a search under a 200 kB budget ran in full in an earlier call's
    workers while the parent refused the same fit (probe CY). The change now warns, once, with the
    way to apply it; after that shutdown the search's new workers refuse the fit too. A child
    process: the test's own process may hold loky workers of other tests."""
    code = textwrap.dedent(
        """
        import json, warnings
        import numpy as np, combpred
        from joblib.externals.loky import get_reusable_executor
        from sklearn.model_selection import KFold, cross_val_score
        from combpred import StructuredRidge

        X = np.random.default_rng(0).normal(size=(600, 5))
        Y = (X[:, :3] > 0).astype(int)
        est = StructuredRidge(kernel="rbf", solver="exact")

        def search():
            try:
                cross_val_score(est, X, Y, cv=KFold(2), n_jobs=2, error_score="raise")
                return "ran"
            except MemoryError:
                return "MemoryError"

        def changes(budget):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with combpred.config_context(max_memory=budget):
                    result = search() if budget else None
                combpred.set_config(max_memory=None)  # back to the default: no change, no warning
            told = [w for w in caught if "loky" in str(w.message)]
            assert all(w.filename == "<string>" for w in told), [w.filename for w in told]  # the with line
            return [str(w.message) for w in told], result

        out = {"before any worker": changes(10**9)}
        search()  # starts the workers, with the default budget
        out["same budget"] = changes(None)
        out["workers alive"] = changes(200_000)
        get_reusable_executor().shutdown(wait=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                with combpred.config_context(max_memory=10**9):
                    search()
                out["as an error"] = "no warning"
            except UserWarning:
                out["as an error"] = combpred.get_config()["max_memory"]  # restored first
        get_reusable_executor().shutdown(wait=True)
        out["after the shutdown"] = changes(200_000)
        print(json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # workers started inside a block keep its budget after it: its end tells (probe FG: later
    # n_jobs=2 fits ran silently under a closed block's budget)
    told, ran = out["before any worker"]
    assert ran == "ran" and len(told) == 1 and "shutdown(wait=True)" in told[0], told
    assert out["same budget"] == [[], None]
    told, ran = out["workers alive"]
    assert len(told) == 1 and "shutdown(wait=True)" in told[0], told  # at the start only
    assert ran == "ran"  # what the warning tells: those workers keep the default budget
    assert "as an error" in out and out["as an error"] is None  # raised, with the default back
    assert out["after the shutdown"][1] == "MemoryError"  # (joblib ends the workers of a failed call)


def test_a_copy_of_an_argument_is_named_as_its_copy():
    """A broadcast U that decode must copy to a contiguous float64 array was refused as "U: an
    output of shape (2000, 10000)", where decode's output is one value a row (probe DM)."""
    sp = spaces.HierarchyPaths(np.r_[-1, np.zeros(999, dtype=np.int64)])
    U = np.broadcast_to(np.linspace(0, 1, 1000), (2000, 1000))
    with combpred.config_context(max_memory=10**7):
        for method in (sp.decode, sp.max_margins):
            with pytest.raises(
                MemoryError, match=r"^U: its contiguous float64 copy of shape \(2000, 1000\): needs 16.0 MB"
            ):
                method(U)


@pytest.mark.parametrize("make", ["broadcast", "float32", "fortran"])
def test_the_float64_copy_of_a_dense_X_is_checked_before_it_is_made(make):
    """A broadcast, float32 or Fortran-ordered X was copied to float64 whole (+229 MB under a 50 MB
    budget) before a check refused "the result" (probe 85): the copy is refused by name first."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), spaces.Permutations(4).sample(40, random_state=0)
    model = StructuredRidge(space=spaces.Permutations(4)).fit(X, Y)
    big = {
        "broadcast": lambda: np.broadcast_to(X[0], (2 * 10**6, 3)),
        "float32": lambda: np.ones((2 * 10**6, 3), dtype=np.float32),
        "fortran": lambda: np.asfortranarray(np.ones((2 * 10**6, 3))),
    }[make]()
    copy = r"^X: its contiguous float64 copy of shape \(2000000, 3\): needs 48.0 MB"
    with combpred.config_context(max_memory=10**7):
        for method in (model.predict, model.decision_function):
            with pytest.raises(MemoryError, match=copy):
                method(big)
        with pytest.raises(MemoryError, match=copy):
            StructuredRidge(space=spaces.Permutations(4)).fit(big, np.broadcast_to(Y[0], (2 * 10**6, 4)))
    # a float32 X within the budget is read as before
    np.testing.assert_array_equal(
        model.predict(X.astype(np.float32)), model.predict(X.astype(np.float32).astype(float))
    )


def test_a_separable_probabilistic_fit_is_charged_its_own_working_set():
    """A multi-label fit runs one L-BFGS per label, a label per thread at a time, but was charged
    28 copies of W as a joint run: 2,000 × 10⁵ sparse rows with 100 labels were refused as 2.2 GB
    where the fit grows 0.6 GB (probe DP). Here the joint charge, 224 MB, is above a 100 MB
    budget, and the fit's own, about 45 MB, below it."""
    import scipy.sparse as sps

    rng = np.random.default_rng(0)
    X = sps.random(500, 20_000, density=1e-3, format="csr", random_state=0)
    Y = (rng.random((500, 50)) < 0.3).astype(int)
    with combpred.config_context(max_memory=10**8):
        model = ProbabilisticStructured(space="multilabel", max_iter=20).fit(X, Y)
    assert model.coef_.shape == (50, 20_000)
    with combpred.config_context(max_memory=2 * 10**7):  # and a budget below its own charge refuses it
        with pytest.raises(MemoryError, match="fitting X of 500 samples × 20000 features on the multilabel space"):
            ProbabilisticStructured(space="multilabel", max_iter=20).fit(X, Y)


def test_the_output_check_of_the_abi_names_an_unnamed_output():
    """cp_check_output called with no name (NULL or "") began its refusal with ': needs 4.6 EB'
    (probe DX); the Python package always names one, a direct caller may not."""
    from combpred import _capi

    for what in (None, b""):
        with pytest.raises(MemoryError, match=r"^an output: needs 4\.6 EB"):
            _capi.check(_capi.lib().cp_check_output(2**62, what))


def test_config_context_blocks_overlapping_in_two_threads_restore_the_setting_from_before():
    """Each block restored what it found on entry: block A (1 GiB) opened, block B (2 GiB) opened,
    A closed (restoring None, so B's block ran with the default), B closed (restoring A's 1 GiB,
    which stayed for the rest of the process and went to COMBPRED_MAX_MEMORY) (probe EC). The
    newest open block decides now, and the last to close brings back the setting from before."""
    import threading

    before = combpred.get_config()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with combpred.config_context(max_memory=2**30):
            a_in.set()
            assert b_in.wait(30)
        a_out.set()

    def b():
        assert a_in.wait(30)
        with combpred.config_context(max_memory=2**31):
            b_in.set()
            assert a_out.wait(30)
            seen["after A closed"] = combpred.get_config()["max_memory"]

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen["after A closed"] == 2**31
    assert combpred.get_config() == before
    assert os.environ.get("COMBPRED_MAX_MEMORY") == (
        None if before["max_memory"] is None else str(before["max_memory"])
    )
    # one thread: nested blocks and a set_config inside one behave as before
    with combpred.config_context(max_memory=2**30):
        with combpred.config_context(max_memory=2**29):
            assert combpred.get_config()["max_memory"] == 2**29
        assert combpred.get_config()["max_memory"] == 2**30
        combpred.set_config(max_memory=2**28)
        assert combpred.get_config()["max_memory"] == 2**28
    assert combpred.get_config() == before


def test_set_config_from_two_threads_leaves_the_core_and_the_environment_agreeing(monkeypatch):
    """set_config wrote COMBPRED_MAX_MEMORY and then the core, unlocked: two threads at once left
    the core with one budget and the variable workers inherit with the other (probe EC, 7 of 300
    races). The race window is held open here: the first writer waits inside the core's setter."""
    import threading

    from combpred import _core

    before = combpred.get_config()["max_memory"]
    original, first = _core.set_max_memory, threading.Event()

    def slow_set(n_bytes):
        if n_bytes == 3 * 2**30 and not first.is_set():
            first.set()
            threading.Event().wait(0.3)  # the other thread would write both places meanwhile
        return original(n_bytes)

    monkeypatch.setattr(_core, "set_max_memory", slow_set)
    try:
        t = threading.Thread(target=combpred.set_config, kwargs={"max_memory": 3 * 2**30})
        t.start()
        assert first.wait(30)
        combpred.set_config(max_memory=5 * 2**30)
        t.join(30)
        core = combpred.get_config()["max_memory"]
        assert os.environ["COMBPRED_MAX_MEMORY"] == str(core), (os.environ["COMBPRED_MAX_MEMORY"], core)
    finally:
        monkeypatch.setattr(_core, "set_max_memory", original)
        combpred.set_config(max_memory=before)


def test_an_interrupt_inside_a_setting_change_leaves_the_core_and_the_environment_agreeing(monkeypatch):
    """A signal's exception (Ctrl-C, a SIGALRM deadline) that lands after the core took the new
    budget made set_config put the old one back in COMBPRED_MAX_MEMORY alone; one inside
    config_context's entry left the block recorded for good, so later blocks restored its budget
    (probe ED). Both are simulated here at the exact spot."""
    from combpred import _config, _core

    before = combpred.get_config()["max_memory"]
    original = _core.set_max_memory

    def set_then_interrupt(n_bytes):
        original(n_bytes)
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "set_max_memory", set_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        combpred.set_config(max_memory=3 * 2**30)
    assert os.environ.get("COMBPRED_MAX_MEMORY") == str(combpred.get_config()["max_memory"])
    with pytest.raises(KeyboardInterrupt):
        with combpred.config_context(max_memory=2**30):
            pass  # never reached: the entry was interrupted
    monkeypatch.setattr(_core, "set_max_memory", original)
    assert not _config._open_blocks
    assert os.environ.get("COMBPRED_MAX_MEMORY") == str(combpred.get_config()["max_memory"])
    combpred.set_config(max_memory=before)
    with combpred.config_context(max_memory=2**29):
        pass
    assert combpred.get_config()["max_memory"] == before


_PEAK_GROWTH = """
import json, warnings
import numpy as np
import combpred
from combpred import ProbabilisticStructured, spaces
warnings.simplefilter("ignore")

def rss(key):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))

def peak_growth(call):
    before = rss("VmRSS")
    open("/proc/self/clear_refs", "w").write("5")  # VmHWM from here
    call()
    return rss("VmHWM") - before

rng = np.random.default_rng(0)
"""


def _peak_growths(body: str) -> dict:
    """Run body in a child after _PEAK_GROWTH; it assigns ``growth``, a dict of peak_growth(call)
    results (bytes) by name, which this returns."""
    code = _PEAK_GROWTH + textwrap.dedent(body) + "\nprint(json.dumps(growth))\n"
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=_child_environment()
    )
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status and clear_refs")
def test_probabilistic_inference_holds_a_block_of_scores_not_all_of_them():
    """ProbabilisticStructured's inference scored every row before the first row's work, and checked
    only those n × d scores against the budget: with the Go heap's headroom over them it peaked at
    3-3.5 times the budget, and under `ulimit -v` the runtime aborted the process at sizes the check
    had accepted (probe EE). It now scores a block of rows at a time: log Z of a million rows runs
    under a budget below their 120 MB of scores, and marginals grow by about their output."""
    growth = _peak_growths(
        """
        perms, tree = spaces.Permutations(6), spaces.Subtrees([-1, 0, 0, 1, 1, 2, 2])
        fit = lambda sp: ProbabilisticStructured(space=sp, max_iter=5).fit(
            rng.normal(size=(50, 3)), sp.sample(50, random_state=0))
        ranker, tagger = fit(perms), fit(tree)
        X, Y = rng.normal(size=(1_000_000, 3)), np.tile(perms.sample(1, random_state=0), (1_000_000, 1))
        Xt = rng.normal(size=(1_500_000, 3))
        combpred.set_config(max_memory=100 * 2**20)
        growth = {
            "log Z": peak_growth(lambda: ranker.log_partition(X)),
            "log p": peak_growth(lambda: ranker.score_samples(X, Y)),
            "marginals": peak_growth(lambda: tagger.predict_marginals(Xt)),
        }
        """
    )
    budget = 100 * 2**20
    # log Z's own outputs (estimates, stats, counts, method names) take about 110 MB of it
    assert growth["log Z"] < 2 * budget, growth
    assert growth["log p"] < budget, growth
    assert growth["marginals"] < 1_500_000 * 7 * 8 + budget, growth  # the output, and room besides (was 299 MiB)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
def test_a_fit_the_budget_admits_does_not_fill_the_free_address_space_with_garbage():
    """The budget admits a fit whose working set takes up to half the free address space, but the Go
    heap grows to twice its live size before it collects: a KSubsets fit (its programme's tables are
    garbage at every row of every step) filled the rest and the runtime aborted the process (found
    after probe EE). The core now sets the runtime's soft memory limit from the room left, so the
    collector runs first; here 400,000 rows in 250 MB, which aborted in every run before."""
    code = textwrap.dedent(
        """
        import os, resource, warnings
        import numpy as np
        from combpred import ProbabilisticStructured, StructuredRidge, spaces
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        StructuredRidge().fit(rng.normal(size=(20, 3)), (rng.random((20, 3)) > 0.5).astype(int))
        sp = spaces.KSubsets(8, 3)
        X, Y = rng.normal(size=(400_000, 3)), sp.sample(400_000, random_state=1)
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (mapped + 250_000_000, resource.RLIM_INFINITY))
        try:
            ProbabilisticStructured(space=sp, max_iter=10).fit(X, Y)
            print("fitted")
        except MemoryError as exc:
            print("MemoryError:", exc)
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=_child_environment()
    )
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    # Fitted as a rule; a thread the Go runtime starts before the check (a stack and a 64 MB malloc
    # arena) can take the room below twice the fit's 77 MB, and the check then refuses it, clearly
    # (seen once in a CI run on a loaded machine). Either way the process lives.
    out = child.stdout.strip()
    assert out == "fitted" or (out.startswith("MemoryError: fitting X") and "address-space limit" in out), out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status and clear_refs")
def test_a_probabilistic_fit_grows_by_about_its_working_set():
    """A fit's working set is ψ(y_i), the scores and their gradient (3 × m × d floats), which the
    budget is checked against; each evaluation allocated the last two afresh, and the heap's garbage
    took the peak to 2.4 times the working set (Permutations(6), probe EE). They are kept now."""
    growth = _peak_growths(
        """
        sp = spaces.Permutations(6)
        X, Y = rng.normal(size=(300_000, 3)), sp.sample(300_000, random_state=1)
        growth = {"fit": peak_growth(lambda: ProbabilisticStructured(space=sp, max_iter=3).fit(X, Y))}
        """
    )
    working_set = 3 * 300_000 * 15 * 8  # 108 MB; the fit grew 282 MiB before, 115 MiB after
    assert growth["fit"] < 1.5 * working_set, growth


def _memory_cgroup(limit: int | None) -> tuple[Path, str] | None:
    """A new memory cgroup limited to ``limit`` bytes (cgroup v2, else v1; None: no limit) for a
    child to move into, and the name of its limit file, or None where this process cannot make one
    (not root, no writable hierarchy)."""
    name = f"combpred-test-{os.getpid()}"
    for parent, limit_file in (("/sys/fs/cgroup", "memory.max"), ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")):
        group = Path(parent, name)
        try:
            group.mkdir()
        except OSError:
            continue
        try:
            if (group / limit_file).exists():  # a cgroup file system makes it (not a tmpfs where one is mounted)
                if limit is not None:
                    (group / limit_file).write_text(str(limit))
                return group, limit_file
        except OSError:
            pass
        group.rmdir()
    return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups")
@pytest.mark.parametrize("late, namespace, moved", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)])
def test_a_cgroup_memory_limit_below_the_root_sets_the_budget_and_its_room(late, namespace, moved):
    """The budget read a cgroup's limit at the hierarchy's mount point only, which is a container's
    own cgroup but not the cgroup of a batch job, a systemd service or a sandbox below the root: it
    took the machine's memory, and a fit it admitted was killed by the kernel's OOM killer (exit
    137, no exception). It now follows /proc/self/cgroup to the process's own cgroup: the default
    budget is half its limit, and a request beyond half of the room the cgroup has left (here after
    X and y took part of it) is refused with a MemoryError that names the cgroup's limit. ``late``:
    the limit is set after the first call, which the budget never saw (probe EL: OOM-killed).
    ``namespace``: the child runs in a cgroup namespace of its own rooted at its cgroup
    (`unshare -C`), so that neither /proc/self/cgroup nor the mount says where it is under the
    mount point; it is found by its cgroup.procs (probe EL: OOM-killed). ``moved``: the child
    joins the limited cgroup after its first call (probe EP: OOM-killed)."""
    limit = 600 * 2**20
    made = _memory_cgroup(None if late else limit)
    if made is None:
        pytest.skip("cannot make a memory cgroup here (needs root and a writable cgroup hierarchy)")
    group, limit_file = made
    command = [sys.executable, "-c"]
    if namespace:
        unshare = shutil.which("unshare")
        if unshare is None or subprocess.run([unshare, "-C", "true"], capture_output=True).returncode != 0:
            group.rmdir()
            pytest.skip("unshare -C (a cgroup namespace) is not available here")
        # into the cgroup first, then a namespace rooted there: the child's path reads "/", the
        # mount's root "/../.." (the old code then read the mount point's limit, none)
        join = f'echo $$ > {group / "cgroup.procs"}; exec "$0" "$@"'
        command = ["sh", "-c", join, unshare, "-C", *command]
    code = textwrap.dedent(
        f"""
        import os, json, warnings
        if not {moved}:
            open({str(group / "cgroup.procs")!r}, "w").write(str(os.getpid()))
        import numpy as np
        import combpred
        from combpred import ProbabilisticStructured, spaces
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        sp = spaces.Permutations(6)
        outcome = {{"budget": combpred.get_config()["max_memory_bytes"]}}
        small = rng.normal(size=(20_000, 20)), sp.sample(20_000, random_state=0)
        ProbabilisticStructured(space=sp, max_iter=3).fit(*small)
        outcome["small"] = "fitted"
        if {late}:
            open({str(group / limit_file)!r}, "w").write("{limit}")
        if {moved}:
            open({str(group / "cgroup.procs")!r}, "w").write(str(os.getpid()))
        X, Y = rng.normal(size=(700_000, 20)), sp.sample(700_000, random_state=1)  # 146 MB
        try:
            ProbabilisticStructured(space=sp, max_iter=3).fit(X, Y)  # a working set of 252 MB
            outcome["large"] = "fitted"
        except MemoryError as exc:
            outcome["large"] = "MemoryError: " + str(exc)
        print(json.dumps(outcome))
        """
    )
    try:
        child = subprocess.run([*command, code], capture_output=True, text=True, timeout=300, env=_child_environment())
    finally:
        group.rmdir()
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    outcome = json.loads(child.stdout.strip().splitlines()[-1])
    assert late or moved or outcome["budget"] <= limit // 2, outcome
    assert outcome["small"] == "fitted", outcome
    assert outcome["large"].startswith("MemoryError: fitting X of 700000 samples"), outcome
    assert "the memory limit of the process's cgroup" in outcome["large"], outcome


def _under_data_limit(room: int, body: str, warm_up: bool = True) -> subprocess.CompletedProcess:
    """Run ``body`` in a child (after a first call into the core where ``warm_up``) under a
    data-segment limit (RLIMIT_DATA) ``room`` bytes above its writable private mappings."""
    code = textwrap.dedent(
        """
        import os, resource, warnings
        import numpy as np
        from combpred import StructuredRidge, spaces
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        if {warm_up}:
            StructuredRidge().fit(rng.normal(size=(20, 3)), (rng.random((20, 3)) > 0.5).astype(int))
        with open("/proc/self/statm", encoding="ascii") as f:
            data = int(f.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_DATA, (data + {room}, resource.getrlimit(resource.RLIMIT_DATA)[1]))
        try:
        {body}
        except MemoryError as exc:
            print("MemoryError:", exc)
        """
    ).format(room=room, warm_up=warm_up, body=textwrap.indent(textwrap.dedent(body), "    "))
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=_child_environment()
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc/self/statm")
def test_requests_beyond_the_data_segment_limit_are_refused():
    """A data-segment limit (`ulimit -d`, RLIMIT_DATA: the heap and the threads' stacks; what batch
    systems and `prlimit --data` set) was not part of the budget: an rbf fit whose 1.36 GB Gram
    matrix the budget admitted in a 1.2 GB room aborted in the runtime's next mapping (probe EK).
    It is now weighed as an address-space limit is, and the error names it; a fit within half the
    room runs."""
    fit = 'n = {n}\nStructuredRidge(kernel="rbf").fit(rng.normal(size=(n, 3)), (rng.random((n, 3)) > 0.5).astype(int))\nprint("fitted")'
    child = _under_data_limit(1_200_000_000, fit.format(n=13000))
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    assert child.stdout.startswith("MemoryError: fitting X of 13000 samples"), child.stdout
    assert "the process's data-segment limit (ulimit -d) leaves it" in child.stdout, child.stdout
    child = _under_data_limit(1_200_000_000, fit.format(n=6000))
    assert child.returncode == 0 and child.stdout.strip() == "fitted", (child.stdout, child.stderr[-2000:])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc/self/statm")
@pytest.mark.parametrize("free_mib", [30, 100])
def test_a_data_segment_limit_too_small_for_the_go_runtime_is_refused_before_it_starts(free_mib):
    # the runtime's threads' stacks and first heap arenas are charged to RLIMIT_DATA: 250 MiB of
    # limit aborted the first call in pthread_create (probe EK); it needs about 140-160 MiB free
    child = _under_data_limit(
        free_mib * 2**20, 'spaces.Permutations(4).sample(1, random_state=0)\nprint("sampled")', warm_up=False
    )
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    assert child.stdout.startswith("MemoryError: combpred's core cannot start"), child.stdout
    assert "data-segment limit (ulimit -d" in child.stdout, child.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_STACK as glibc reads it")
@pytest.mark.parametrize("in_process", [None, "lowered", "raised"])
def test_large_thread_stacks_count_in_the_start_up_check(in_process):
    """glibc maps each new thread's stack at RLIMIT_STACK: under `ulimit -v 8000000` and
    `ulimit -s 2000000` the runtime's threads took 2 GB each and the first call aborted the process
    in pthread_create, the check having counted 64 MiB a thread (probe EK). glibc fixes the stack
    as the process starts: a process that lowers RLIMIT_STACK afterwards still gets 2 GB stacks
    (the check read the new limit and let it abort), and one that raises it keeps 8 MiB ones (the
    check refused it), probe EN."""
    start_stack = 8 * 2**20 if in_process == "raised" else 2_000_000 * 1024
    later = {None: None, "lowered": 8 * 2**20, "raised": 2_000_000 * 1024}[in_process]
    import resource

    for kind, least in ((resource.RLIMIT_STACK, 2_000_000 * 1024), (resource.RLIMIT_AS, 8_000_000 * 1024)):
        hard = resource.getrlimit(kind)[1]
        if hard != resource.RLIM_INFINITY and hard < least:
            pytest.skip("the hard limits here do not allow 2 GB stacks under an 8 GB address space")

    def limits() -> None:  # in the child before it starts: glibc reads RLIMIT_STACK then
        resource.setrlimit(resource.RLIMIT_STACK, (start_stack, resource.getrlimit(resource.RLIMIT_STACK)[1]))
        resource.setrlimit(resource.RLIMIT_AS, (8_000_000 * 1024, resource.getrlimit(resource.RLIMIT_AS)[1]))

    code = textwrap.dedent(
        f"""
        import resource
        if {later}:
            resource.setrlimit(resource.RLIMIT_STACK, ({later}, resource.getrlimit(resource.RLIMIT_STACK)[1]))
        from combpred import spaces
        try:
            spaces.Permutations(4).sample(1, random_state=0)
            print("sampled")
        except MemoryError as exc:
            print("MemoryError:", exc)
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=_child_environment(),
        preexec_fn=limits,
    )
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    if in_process == "raised":
        assert child.stdout.strip() == "sampled", child.stdout
    else:
        assert child.stdout.startswith("MemoryError: combpred's core cannot start"), child.stdout
        assert "(ulimit -s)" in child.stdout, child.stdout


def _threads_of_user(uid: int) -> int:
    """The threads of the processes of real user uid in /proc."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["Uid"].split()[0]) == uid:
            count += int(fields["Threads"])
    return count


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NPROC counted in /proc")
@pytest.mark.parametrize("spare", [3, 64])
def test_a_thread_limit_too_small_for_the_go_runtime_is_refused_before_it_starts(spare):
    """Under `ulimit -u` (RLIMIT_NPROC: every thread of the user's processes) the Go runtime's
    failed pthread_create aborted the process at the first call or a later fit (probes EJ, EK).
    The first call now raises RuntimeError naming the limit when it leaves fewer threads than the
    runtime starts; with room to spare, a fit runs. Root ignores the limit: as root the child runs
    as nobody, through setpriv."""
    import resource

    command = [sys.executable, "-c"]
    uid = os.getuid()
    if uid == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("root ignores RLIMIT_NPROC, and setpriv is not there to run the child as nobody")
        uid, command = 65534, [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    running = _threads_of_user(uid) + 1  # the child itself

    def limit() -> None:  # in the child, before it starts (setpriv keeps it)
        resource.setrlimit(resource.RLIMIT_NPROC, (running + spare, resource.getrlimit(resource.RLIMIT_NPROC)[1]))

    code = textwrap.dedent(
        """
        try:
            import numpy as np
            from combpred import StructuredRidge
        except ImportError as exc:  # the package is not readable by nobody here
            print("UNREADABLE", exc)
            raise SystemExit(0)
        rng = np.random.default_rng(0)
        X = rng.normal(size=(3000, 20))
        try:
            StructuredRidge(kernel="rbf").fit(X, (X[:, :5] > 0).astype(int))
            print("fitted")
        except RuntimeError as exc:
            print("RuntimeError:", exc)
        """
    )
    child = subprocess.run(
        [*command, code],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(_child_environment(), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", HOME="/tmp"),
        preexec_fn=limit,
        cwd="/",
    )
    if child.stdout.startswith("UNREADABLE") or (uid != os.getuid() and "Permission denied" in child.stderr):
        pytest.skip(f"the child cannot run combpred as uid {uid}: {child.stdout}{child.stderr[-300:]}")
    assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-2000:]}"
    if spare < 8:  # GOMAXPROCS 2 (the child environment's) and six more
        assert child.stdout.startswith("RuntimeError: combpred's core cannot start"), child.stdout
        assert "ulimit -u" in child.stdout, child.stdout
    else:
        assert child.stdout.strip() == "fitted", child.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/statm")
@pytest.mark.parametrize("resource_name, room_mib, procs", [("RLIMIT_AS", 300, "2"), ("RLIMIT_DATA", 80, "1")])
def test_a_limit_lowered_after_the_first_call_is_never_an_abort(resource_name, room_mib, procs):
    """A limit set after a small first call (which had started few of the runtime's threads) with a
    few hundred MB to spare: fits and samples the check admitted at half the room aborted the
    process, in 2 of 4 runs (probe EL: the heap maps whole aligned arenas, 128 MB for a 72 MB
    request, and the threads the fit then started mapped a stack and a malloc arena each). The
    room now leaves out the threads to come and the heap's slack: each call fits or raises
    MemoryError, in two children."""
    code = textwrap.dedent(
        f"""
        import resource, warnings
        import numpy as np
        from combpred import ProbabilisticStructured, StructuredRidge
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)
        StructuredRidge().fit(rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.3).astype(int))
        field = 0 if "{resource_name}" == "RLIMIT_AS" else 5
        used = int(open("/proc/self/statm", encoding="ascii").read().split()[field]) * 4096
        resource.setrlimit(resource.{resource_name}, (used + {room_mib} * 2**20, resource.getrlimit(resource.{resource_name})[1]))
        def ranker(X, n):
            model = ProbabilisticStructured(space="permutations").fit(X, np.argsort(rng.random((n, 5)), 1) + 1)
            model.sample(X[:200], 50, random_state=0)
            return model

        for n in (500, 1000, 2000, 3000, 4000, 6000):
            for fit in (lambda X: StructuredRidge(kernel="rbf").fit(X, (rng.random((n, 5)) < 0.3).astype(int)), ranker):
                try:  # NumPy's own allocations may fail too: MemoryError as well
                    X = rng.normal(size=(n, 10))
                    fit(X, n).predict(X) if fit is ranker else fit(X).predict(X)
                    print("fitted", flush=True)
                except MemoryError:
                    print("MemoryError", flush=True)
        """
    )
    for _ in range(2):
        child = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(_child_environment(), GOMAXPROCS=procs),
        )
        assert child.returncode == 0, f"the child died (status {child.returncode}):\n{child.stderr[-1500:]}"
        assert len(child.stdout.split()) == 12, child.stdout


@pytest.mark.skipif(not Path("/proc/self/uid_map").exists(), reason="user namespaces")
def test_only_root_of_the_initial_user_namespace_is_exempt_from_the_thread_limit():
    """The kernel exempts from RLIMIT_NPROC only root of the initial user namespace: root of a
    namespace owned by an ordinary user (a rootless container, `unshare -Ur`; probe EN), nested
    ones included (their uid_map reads "0 0 1", probe EP), was let through, and the runtime aborted."""
    code = "from combpred import _capi; print(_capi._exempt_from_nproc())"
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_environment())
    identity = Path("/proc/self/uid_map").read_text(encoding="ascii").split() == ["0", "0", "4294967295"]
    assert here.stdout.strip() == str(os.getuid() == 0 and identity)
    unshare = shutil.which("unshare")
    if unshare is None:
        return
    for nesting in ([unshare, "-Ur"], [unshare, "-Ur", unshare, "-Ur"]):
        inside = subprocess.run(
            [*nesting, sys.executable, "-c", code], capture_output=True, text=True, env=_child_environment()
        )
        if inside.returncode == 0:  # user namespaces may be disabled here
            assert inside.stdout.strip() == "False", (nesting, inside.stdout, inside.stderr[-500:])
