"""Packaging: building without Go fails with one clear line."""

import subprocess
import sys
from pathlib import Path

import pytest

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
    assert last == "error: building combpred needs Go ≥ 1.24 on PATH (the `go` command was not found)"
    assert not any((tmp_path / "out").rglob("libcombpred*"))
