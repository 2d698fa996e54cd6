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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import combpred
import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _have_text_sets() -> bool:
    from combpred import datasets

    try:
        datasets.load_multilabel("medical", subset="train")
    except FileNotFoundError:
        return False
    return True


def _script_env() -> dict[str, str]:
    """The environment a benchmark script runs in: the installed package and benchmarks/ on its path."""
    package_root = str(Path(combpred.__file__).resolve().parent.parent)
    path = [package_root, str(BENCHMARKS)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path))


def _run(script: str, output: Path, timeout: float) -> subprocess.CompletedProcess:
    # in the output's folder (what a script writes beside its table stays there), on one BLAS thread
    # (two runs share the cores, and a spinning OpenBLAS pool next to Go's threads made tiny fits
    # 50x slower)
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick", "--output", str(output)],
        env={**_script_env(), "OPENBLAS_NUM_THREADS": "1"},
        cwd=output.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _skip_reason(needs: str | None) -> str | None:
    """Why a script cannot run here (None when it can)."""
    if needs == "go" and (shutil.which("go") is None or not (BENCHMARKS.parent / "core" / "gemm").is_dir()):
        return "runs the Go benchmarks of a source checkout"
    if needs == "text" and not _have_text_sets():
        return "the MULAN text sets (shared data) are not here"
    if needs == "dask" and importlib.util.find_spec("distributed") is None:
        return "dask not installed"
    if needs is not None and "/" in needs:
        from combpred import datasets

        for relative in needs.split(" "):  # one or more data files, separated by blanks
            if not any((d / relative).is_file() for d in datasets.data_home_candidates()):
                return f"shared benchmark data not found ({relative}); set COMBPRED_DATA"
    return None


# (script, its section in BENCHMARKS.md, a line of its table, what it needs beyond the package)
SCRIPTS = [
    ("spaces.py", "spaces", "| space | d | log\\|Y\\| | create | mean() | covariance_dot(v) | total |", None),
    ("yeast.py", "yeast", "## Multi-label: yeast", None),
    ("yeast_measures.py", "yeast_measures", "## Multi-label yeast: decision rule and reference measure", None),
    ("probabilistic.py", "probabilistic", "## ProbabilisticStructured", None),
    ("prob_fit_time.py", "prob_fit_time", "## ProbabilisticStructured fit time against LogisticRegression", None),
    ("prob_label_ranking.py", "prob_label_ranking", "## Label ranking with ProbabilisticStructured", None),
    ("decision_rules.py", "decision_rules", "## Decision rules on label ranking", None),
    ("many_labels.py", "many_labels", "## Many labels", None),
    ("kernels.py", "kernels", "## Closer to the hardware", "go"),
    ("max_margins.py", "max_margins", "| space | d | programme (ms per input) |", "go"),
    ("sparse_many_labels.py", "sparse_many_labels", "## Many labels on sparse data", None),
    ("log_z_alone.py", "log_z_alone", "| space | max\\|u\\| | exact (ms / row) |", None),
    (
        "sparse_kernel.py",
        "sparse_kernel",
        "| model | fit (s) | predict, all test rows (s) | single row (ms) | Hamming loss |",
        None,
    ),
    (
        "sparse_sgd.py",
        "sparse_sgd",
        "| model | fit (s) | Hamming loss | partial_fit, one pass (s) | Hamming loss | fit / peer |",
        None,
    ),
    ("auto_solver.py", "auto_solver", "| space | rows × k | d | unknowns | nnz | auto picks |", None),
    ("reference_fit_time.py", "reference_fit_time", "## Fit time of the reference measures", "text"),
    ("exact_inference.py", "exact_inference", "| space | d | exact (ms) | sampled (ms) |", "label_ranking/vowel.csv"),
    ("partial_fit.py", "partial_fit", "| rows × features | labels d | unknowns (k·d) | chunk | calls |", None),
    ("brute_force.py", "brute_force", "| space | \\|Y\\| | d | fit (s) | iterations | SciPy fit (s) |", None),
    ("kernel_dual.py", "kernel_dual", "| data | alpha | StructuredRidge fit (s, median) | iterations |", None),
    ("prob_default_alpha.py", "prob_default_alpha", "| data | space | m | α=1 |", "label_ranking/iris.csv"),
    (
        "cancel_latency.py",
        "cancel_latency",
        "| call | workload | T (s) | signals during the call | p50 | max | every trial < 200 ms |",
        None,
    ),
    ("dask_iterative.py", "dask_iterative", "## Iterative fits on Dask", "dask"),
    ("dask_scale.py", "dask_scale", "## Out-of-core fit on Dask", "dask"),
    # the thesis' experiments and the issues' real-data benchmarks
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
        "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.train.arff "
        "hierarchical_funcat_go/imclef07a/ImCLEF07A_Train.arff",
    ),
    ("dicycles.py", "dicycles", "| m | StructuredRidge, α = 1 | StructuredRidge, α by CV |", None),
    ("sgd.py", "sgd", "| solver | iterations / epochs | seconds | final gap |", None),
    ("scale.py", "scale", "| model | training data | fit (s, median (range)) | peak memory (GiB) |", None),
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
]


# The quick runs that take longest (30-130 s each on CI's two cores), longest first.
LONGEST = ("reference_measures.py", "probabilistic.py", "cancel_latency.py", "log_z_alone.py", "spaces.py")


@pytest.fixture(scope="module")
def quick_runs(request, tmp_path_factory):
    """The quick run of every selected script, two at a time: most of a run is one core of Python
    (or a child's start-up), so on CI's two cores the runs take less time than one after another.
    Each test waits for its own run."""
    folder = tmp_path_factory.mktemp("quick_runs")
    selected = {
        item.callspec.params["script"]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_benchmark_script_quick_run"
    }

    def run(script: str) -> tuple[subprocess.CompletedProcess, str]:
        (folder / script).mkdir()
        output = folder / script / "BENCHMARKS.md"
        output.write_text("# Benchmarks\n\nkept text\n")
        proc = _run(script, output, timeout=600)
        return proc, output.read_text()

    runnable = [script for script, _, _, needs in SCRIPTS if script in selected and _skip_reason(needs) is None]
    # the longest first, so that the shorter ones fill the other core beside them
    runnable.sort(key=lambda script: LONGEST.index(script) if script in LONGEST else len(LONGEST))
    with ThreadPoolExecutor(2) as pool:
        yield {script: pool.submit(run, script) for script in runnable}


@pytest.mark.parametrize(
    "script, section, header",
    [
        pytest.param(script, section, header, marks=pytest.mark.skipif(reason is not None, reason=reason or ""))
        for script, section, header, reason in ((s, sec, h, _skip_reason(n)) for s, sec, h, n in SCRIPTS)
    ],
)
def test_benchmark_script_quick_run(quick_runs, script, section, header):
    proc, text = quick_runs[script].result()
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "kept text" in text  # the script rewrites its own section only
    assert f"<!-- {section}:start -->" in text and f"<!-- {section}:end -->" in text
    assert header in text
    assert "Quick smoke run" in text
    if script == "spaces.py":
        for heading in ("Decoding throughput", "Realised z-factor", "Uniform sampling", "Memory of the covariance"):
            assert heading in text
        assert "| Permutations(10) | exact |" in text and "| DirectedCycles(10) | exact |" in text


def _benchmark_module(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hmc_scoring_leaves_out_the_roots_every_instance_carries():
    """AU(PRC) as the HMC literature scores it: the virtual root and the GO ontology roots are not
    scored, so always-positive columns cannot raise the figure."""
    from sklearn.metrics import average_precision_score

    hmc = _benchmark_module("_hmc")
    names = ["root", "GO0003674", "GO0001", "GO0008150", "GO0002", "GO0005575", "GO0003"]
    cols = hmc.scored_columns(names)
    assert cols.tolist() == [2, 4, 6]
    rng = np.random.default_rng(0)
    R = (rng.random((40, len(names))) < 0.3).astype(np.int64)
    R[:, [0, 1, 3, 5]] = 1  # the roots: every instance carries them
    S = rng.random(R.shape)
    S[:, [0, 1, 3, 5]] = 2.0  # ranked first: scored, they would be certain true positives
    expected = average_precision_score(R[:, cols].ravel(), S[:, cols].ravel())
    assert hmc.auprc(R, S, cols) == pytest.approx(expected)
    assert hmc.auprc(R, S, cols) < hmc.auprc(R, S)  # the default (all but column 0) counts them
    for data_set in ("cellcycle_FUN", "gasch2_GO", "imclef07a"):
        line = hmc.published_line(data_set, {"ours": 0.5})
        assert "Clus-HMC" in line and "ours 0.500" in line
    assert "no published" in hmc.published_line("medical", {"ours": 0.5})


def _run_label_ranking(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "label_ranking.py"), "--quick", *args],
        env=_script_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_label_ranking_resumes_from_saved_folds(tmp_path):
    """A stopped run resumes at the first unsaved outer fold, with the same result; folds saved
    under other settings are run again; a table that lacks a data set is not written."""
    import json

    results, output = tmp_path / "results", tmp_path / "BENCHMARKS.md"
    output.write_text("# Benchmarks\n")
    args = ["--datasets", "iris", "--results", str(results), "--output", str(output)]
    first = _run_label_ranking(args)
    saved = json.loads((results / "iris.json").read_text())
    assert saved["folds"] == saved["of"] == 3
    assert len(saved["result"]["taus"]["KNN-Borda"]) == 3
    assert "not written" in first.stdout and "glass" in first.stdout  # the quick table has three sets
    assert output.read_text() == "# Benchmarks\n"

    # Cut back to one fold, as a run stopped after its first fold leaves it.
    cut = json.loads(json.dumps(saved))
    cut["folds"] = 1
    for part in ("taus", "chosen"):
        cut["result"][part] = {m: v[:1] for m, v in cut["result"][part].items()}
    (results / "iris.json").write_text(json.dumps(cut))
    resumed = _run_label_ranking(args)
    assert "resuming after 1 saved folds" in resumed.stdout
    again = json.loads((results / "iris.json").read_text())
    assert again["folds"] == 3
    assert again["result"]["taus"] == saved["result"]["taus"]  # as the uninterrupted run
    assert again["result"]["chosen"] == saved["result"]["chosen"]

    again["settings"]["rbf_tol"] = 1.0  # saved under other settings: stale
    (results / "iris.json").write_text(json.dumps(again))
    stale = _run_label_ranking(args)
    assert "other settings" in stale.stdout and "resuming" not in stale.stdout
    assert json.loads((results / "iris.json").read_text())["settings"]["rbf_tol"] != 1.0


def test_write_section_keeps_the_hand_written_run_notes(tmp_path, monkeypatch):
    """A rerun of a benchmark script replaces its section's tables but keeps the run notes written
    by hand below them, in their order, and the rest of the file."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from _report import RUN_NOTE, write_section

    path = tmp_path / "BENCHMARKS.md"
    path.write_text(
        "# Benchmarks\n\n<!-- a:start -->\n| old table |\n"
        f"{RUN_NOTE}, session 1): first.\n- a line the script wrote\n{RUN_NOTE}, session 2): second.\n"
        "<!-- a:end -->\n\n<!-- b:start -->\nb's body\n<!-- b:end -->\n"
    )
    write_section("a", "| new table |\n- what the script writes now\n", path)
    text = path.read_text()
    assert "| old table |" not in text and "a line the script wrote" not in text
    section = text[text.index("<!-- a:start -->") : text.index("<!-- a:end -->")]
    assert section.splitlines()[1:] == [
        "| new table |",
        "- what the script writes now",
        f"{RUN_NOTE}, session 1): first.",
        f"{RUN_NOTE}, session 2): second.",
    ]
    assert "<!-- b:start -->\nb's body\n<!-- b:end -->" in text
    write_section("c", "c's body", path)  # a new section is appended
    assert text in path.read_text() and path.read_text().rstrip().endswith("c's body\n<!-- c:end -->")
