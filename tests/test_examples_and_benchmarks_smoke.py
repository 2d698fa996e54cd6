"""Smoke tests of the thesis-experiment benchmarks (--quick) and of the examples (quick mode).

Each script runs in a child process that finds combpred where this process found it (the source
tree's python/ or the installed package) and the benchmarks' helpers in benchmarks/, so the tests
pass from a checkout and against an installed package. Scripts that read the shared benchmark data
are skipped when it is absent (conftest.py points COMBPRED_DATA at ../shared/datasets when it exists).
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
BENCHMARKS = ROOT / "benchmarks"
EXAMPLES = ROOT / "examples"


def _env(**extra: str) -> dict[str, str]:
    package_root = str(Path(combpred.__file__).resolve().parent.parent)
    path = [package_root, str(BENCHMARKS)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # One BLAS thread: a spinning OpenBLAS pool next to Go's threads makes tiny fits 50x slower on 2 cores.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "OPENBLAS_NUM_THREADS": "1", **extra}


def _needs(*relatives: str | None):
    """Skip unless every shared data file is found where combpred.datasets looks."""
    for relative in relatives:
        if relative is not None and not any((d / relative).is_file() for d in datasets.data_home_candidates()):
            pytest.skip(f"shared benchmark data not found ({relative}); set COMBPRED_DATA")


@pytest.mark.parametrize(
    "script, section, header, data",
    [
        ("yeast_degrees.py", "yeast_degrees", "| model | CV-chosen (Hamming) | Hamming loss |", None),
        (
            "label_ranking.py",
            "label_ranking",
            "| data set | n × features / labels | StructuredRidge (linear) |",
            "label_ranking/iris.csv",
        ),
        (
            "hierarchical.py",
            "hierarchical",
            "| model | chosen on validation | valid ℓ_H |",
            (
                "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.train.arff",
                "hierarchical_funcat_go/imclef07a/ImCLEF07A_Train.arff",
            ),
        ),
        ("dicycles.py", "dicycles", "| m | StructuredRidge, α = 1 | StructuredRidge, α by CV |", None),
        ("sgd.py", "sgd", "| solver | iterations / epochs | seconds | final gap |", None),
        ("scale.py", "scale", "| model | training data | fit (s) | peak memory (GiB) |", None),
        (
            "reference_measures.py",
            "reference_measures",
            "| model | chosen | valid AU(PRC) | valid ℓ_H |",
            "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.train.arff",
        ),
        (
            "gene_ontology.py",
            "gene_ontology",
            "| model | chosen on valid | valid AU(PRC) | valid hF1 |",
            "hierarchical_funcat_go/gasch2_GO/gasch2_GO.train.arff",
        ),
        (
            "sparse_text.py",
            "sparse_text",
            "| model | chosen | Hamming loss | ranking loss | micro-F1 | macro-F1 | fit (s) | fit memory (MiB) |",
            "multilabel_sparse/medical/medical-train.arff",
        ),
    ],
)
def test_benchmark_quick_run(tmp_path, script, section, header, data):
    _needs(*(data if isinstance(data, tuple) else (data,)))
    output = tmp_path / "BENCHMARKS.md"
    output.write_text("# Benchmarks\n\nkept text\n")
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick", "--output", str(output)],
        env=_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = output.read_text()
    assert "kept text" in text  # only the script's own section is rewritten
    assert f"<!-- {section}:start -->" in text and f"<!-- {section}:end -->" in text
    assert header in text
    assert "Quick smoke run" in text
    assert "met" in text or "missed" in text  # the target verdict is written


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
