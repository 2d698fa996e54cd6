"""Smoke tests of the benchmark scripts: each runs with --quick into a temporary file.

The child process finds combpred where this process found it (the source tree's python/ or the
installed package) and the benchmarks' helper modules in benchmarks/, so the tests pass both from a
checkout and against an installed package.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import combpred
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _run(script: str, output: Path, timeout: float) -> subprocess.CompletedProcess:
    package_root = str(Path(combpred.__file__).resolve().parent.parent)
    path = [package_root, str(BENCHMARKS)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick", "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    "script, section, header",
    [
        ("spaces.py", "spaces", "| space | d | log\\|Y\\| | create | mean() | covariance_dot(v) | total |"),
        ("yeast.py", "yeast", "## Multi-label: yeast"),
        ("probabilistic.py", "probabilistic", "## ProbabilisticStructured"),
        ("prob_fit_time.py", "prob_fit_time", "## ProbabilisticStructured fit time against LogisticRegression"),
        ("prob_label_ranking.py", "prob_label_ranking", "## Label ranking with ProbabilisticStructured"),
        ("decision_rules.py", "decision_rules", "## Decision rules on label ranking"),
        ("many_labels.py", "many_labels", "## Many labels"),
        pytest.param(
            "kernels.py",
            "kernels",
            "## Closer to the hardware",
            marks=pytest.mark.skipif(
                shutil.which("go") is None or not (BENCHMARKS.parent / "core" / "gemm").is_dir(),
                reason="runs the Go benchmarks of a source checkout",
            ),
        ),
        ("sparse_many_labels.py", "sparse_many_labels", "## Many labels on sparse data"),
        pytest.param(
            "dask_iterative.py",
            "dask_iterative",
            "## Iterative fits on Dask",
            marks=pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask not installed"),
        ),
        pytest.param(
            "dask_scale.py",
            "dask_scale",
            "## Out-of-core fit on Dask",
            marks=pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="dask not installed"),
        ),
    ],
)
def test_benchmark_script_quick_run(tmp_path, script, section, header):
    output = tmp_path / "BENCHMARKS.md"
    output.write_text("# Benchmarks\n\nkept text\n")
    proc = _run(script, output, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = output.read_text()
    assert "kept text" in text  # the script rewrites its own section only
    assert f"<!-- {section}:start -->" in text and f"<!-- {section}:end -->" in text
    assert header in text
    assert "Quick smoke run" in text
    if script == "spaces.py":
        for heading in ("Decoding throughput", "Realised z-factor", "Uniform sampling", "Memory of the covariance"):
            assert heading in text
        assert "| Permutations(10) | exact |" in text and "| DirectedCycles(10) | exact |" in text
