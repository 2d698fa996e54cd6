"""Smoke tests of the examples (quick mode); the benchmark scripts' are in test_benchmark_scripts.py.

Each example runs in a child process that finds combpred where this process found it (the source
tree's python/ or the installed package), so the tests pass from a checkout and against an installed
package. Examples that read the shared benchmark data are skipped when it is absent (conftest.py
points COMBPRED_DATA at ../shared/datasets when it exists).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import combpred
import pytest
from combpred import datasets

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _env(**extra: str) -> dict[str, str]:
    package_root = str(Path(combpred.__file__).resolve().parent.parent)
    path = [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # One BLAS thread: a spinning OpenBLAS pool next to Go's threads makes tiny fits 50x slower on 2 cores.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "OPENBLAS_NUM_THREADS": "1", **extra}


def _needs(relative: str | None):
    """Skip unless the shared data file is found where combpred.datasets looks."""
    if relative is not None and not any((d / relative).is_file() for d in datasets.data_home_candidates()):
        pytest.skip(f"shared benchmark data not found ({relative}); set COMBPRED_DATA")


@pytest.mark.parametrize(
    "script, png, data",
    [
        ("label_ranking.py", "label_ranking.png", "label_ranking/vehicle.csv"),
        ("route_prediction.py", "route_prediction.png", None),
        ("taxonomy.py", "taxonomy.png", None),
    ],
)
def test_example_runs_and_saves_its_figure(tmp_path, script, png, data):
    pytest.importorskip("matplotlib")
    _needs(data)
    path = EXAMPLES / script
    assert len(path.read_text().splitlines()) < 60, "examples are meant to be short"
    proc = subprocess.run(
        [sys.executable, str(path)],
        env=_env(COMBPRED_EXAMPLE_QUICK="1", MPLBACKEND="Agg"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / png).is_file() and (tmp_path / png).stat().st_size > 1000
    assert f"saved {png}" in proc.stdout
