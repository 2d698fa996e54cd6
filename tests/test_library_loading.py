"""Loading the core library: a library that is not combpred's is refused with ImportError naming its
path, and a second copy of the library in one process (a second Go runtime, unsupported by Go:
golang/go#65050) is refused with a clear message (issue 11, finding 9)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import combpred
import numpy as np
import pytest
from combpred import _capi, _libpath

PACKAGE_PARENT = str(Path(combpred.__file__).resolve().parent.parent)


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]), **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=full
    )


def _library() -> Path:
    _capi.lib()
    return next(p for p in _libpath.candidate_paths() if p.is_file())


def test_foreign_library_is_an_import_error_naming_it():
    foreign = np._core._multiarray_umath.__file__ if hasattr(np, "_core") else np.core._multiarray_umath.__file__
    result = _run(
        """
        from combpred import spaces
        try:
            spaces.Multilabel(3)
        except ImportError as exc:
            print("IMPORTERROR", exc)
        """,
        COMBPRED_LIBRARY=foreign,
    )
    assert "IMPORTERROR" in result.stdout, (result.stdout, result.stderr[-2000:])
    assert foreign in result.stdout and "not combpred's core library" in result.stdout
    assert "cp_" in result.stdout  # names the missing symbols


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/maps")
@pytest.mark.parametrize("name", ["libcombpred.so", "core.so", "core", "deleted.so"])
def test_second_copy_of_the_library_is_refused(tmp_path, name):
    # a copy is known by its symbols, not by its file's name: "core.so" was not seen (probe EK),
    # nor a copy whose file was deleted once loaded, "/x/deleted.so (deleted)" in the maps (probe EN)
    copy = tmp_path / "elsewhere" / name
    copy.parent.mkdir()
    shutil.copy(_library(), copy)
    result = _run(
        f"""
        import ctypes, os
        ctypes.CDLL({str(copy)!r})  # another copy, e.g. of another installation, already loaded
        if {name == "deleted.so"}:
            os.remove({str(copy)!r})
        from combpred import spaces
        try:
            spaces.Multilabel(3)
        except ImportError as exc:
            print("IMPORTERROR", exc)
        else:
            print("LOADED")
        """
    )
    assert "IMPORTERROR" in result.stdout, (result.stdout, result.stderr[-2000:])
    assert str(copy) in result.stdout and "golang/go#65050" in result.stdout
    # the same library, loaded twice by path, is one copy: accepted
    result = _run(
        f"""
        import ctypes
        ctypes.CDLL({str(_library())!r})
        from combpred import spaces
        print(spaces.Multilabel(3).mean())
        """
    )
    assert result.returncode == 0 and "0.5" in result.stdout, result.stderr[-2000:]


@pytest.mark.skipif(sys.platform != "linux", reason="a FIFO and /dev/zero")
def test_a_library_path_that_is_not_a_regular_file_says_so(tmp_path):
    # a directory, a device or a FIFO was reported "(not found)" (probe EK)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (str(tmp_path), "/dev/zero", str(fifo)):
        result = _run(
            """
            from combpred import spaces
            try:
                spaces.Multilabel(3)
            except ImportError as exc:
                print("IMPORTERROR", exc)
            """,
            COMBPRED_LIBRARY=path,
        )
        assert f"{path} (there, but not a regular file" in result.stdout, (result.stdout, result.stderr[-2000:])


@pytest.mark.parametrize(
    "value", ["abc", "10XB", "-1", "4GB", " 4GiB", "9223372036854775808", "8388608TiB", "9" * 5000, "-" + "9" * 5000]
)
def test_a_gomemlimit_the_go_runtime_cannot_read_is_an_import_error(value):
    # The Go runtime aborted the process at the core's first call, "fatal error: malformed
    # GOMEMLIMIT", after `import combpred` had succeeded (probe DN)
    run = _run(
        """
        from combpred import spaces
        try:
            spaces.Multilabel(3).dim
        except ImportError as exc:
            print("refused:", exc)
        """,
        GOMEMLIMIT=value,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith(f"refused: GOMEMLIMIT={value!r} is not a memory limit the Go runtime"), run.stdout


def test_a_gomemlimit_the_go_runtime_reads_loads():
    for value in ("4GiB", "0", "-0", "123456789", "8388607TiB", "off"):
        run = _run("from combpred import spaces; print(spaces.Multilabel(3).dim)", GOMEMLIMIT=value)
        assert run.returncode == 0 and run.stdout.strip() == "3", (value, run.stderr[-2000:])


def test_gomaxprocs_is_read_as_the_go_runtime_reads_it(monkeypatch):
    # 2**31 is no int32 to Go, which then takes the CPU count; the address-space check took it for
    # 2**31 threads and asked for 10¹¹ MiB of room (probe DN); the core keeps at least two Ps (probe EC)
    cpus = max(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(), 2)
    for value, threads in (
        ("3", 3),
        ("1", 2),
        ("2147483647", 2**31 - 1),
        ("2147483648", cpus),
        (" 3", cpus),
        ("0", cpus),
        ("0003", 3),
        # int() refuses more than 4,300 digits, in a ValueError naming nothing (probe EK)
        ("9" * 5000, cpus),
        ("0" * 5000 + "3", 3),
    ):
        monkeypatch.setenv("GOMAXPROCS", value)
        assert _capi._go_threads() == threads, value


@pytest.mark.parametrize("address_limit", [False, True])
def test_no_encoding_warning_under_strict_interpreter_settings(address_limit):
    # `-X warn_default_encoding -W error::EncodingWarning` made every first call fail: the core's
    # loading read /proc/self/maps and /proc/self/statm with open()'s default encoding (probe EK)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (8 * 10**9, resource.RLIM_INFINITY))"
    code = f"""
        {limit if address_limit else ""}
        import pickle
        import numpy as np
        from combpred import StructuredRidge, datasets, spaces
        assert datasets.load_yeast().X_train.shape[0] > 0  # a bundled data set read
        rng = np.random.default_rng(0)
        X, Y = rng.normal(size=(30, 3)), spaces.Multilabel(4).sample(30, random_state=0)
        model = pickle.loads(pickle.dumps(StructuredRidge().fit(X, Y)))
        print("OK", model.predict(X[:2]).shape)
        """
    result = subprocess.run(
        [sys.executable, "-X", "warn_default_encoding", "-W", "error::EncodingWarning", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")])),
    )
    assert "OK (2, 4)" in result.stdout, result.stderr[-2000:]
