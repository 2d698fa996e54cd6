"""The main job, `python -m combpred demo` (issue 16, item 7): a tour of four families of structures,
plain text, each section with a measured comparison and a verdict in words."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import combpred
import pytest

PACKAGE_PARENT = str(Path(combpred.__file__).resolve().parent.parent)


def test_demo_tours_four_families_in_plain_text(tmp_path):
    # Its data are the bundled ones, whatever a data directory holds: a glass.csv of 4 rows in
    # COMBPRED_DATA ended it in a traceback, one of 60 rows changed its numbers silently; and an
    # output encoding without ×, τ or ± (PYTHONIOENCODING=ascii) ended it in a UnicodeEncodeError
    # (probe DN).
    (tmp_path / "label_ranking").mkdir()
    (tmp_path / "label_ranking" / "glass.csv").write_text("4,2,2\n" + "0.1,0.2,1,2\n" * 4)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]),
        COMBPRED_DATA=str(tmp_path),
        PYTHONIOENCODING="ascii",
    )
    run = subprocess.run(
        [sys.executable, "-m", "combpred", "demo", "--quick"], capture_output=True, text=True, timeout=600, env=env
    )
    assert run.returncode == 0, run.stderr[-3000:]
    text = run.stdout
    assert "2. Rankings: glass, rank 6 glass types by likelihood (214 samples" in text
    for header in ("1. Label sets", "2. Rankings", "3. Taxonomy paths", "4. Routes"):
        assert header in text
    # every section says in words how combpred compares, with both numbers
    verdicts = re.findall(
        r"(better|worse) on [^:]+: [0-9.]+ against [0-9.]+|level on [^(]+\([0-9.]+ against [0-9.]+\)", text
    )
    assert len(verdicts) >= 6, text
    assert "**" not in text and "|---" not in text  # no Markdown in a terminal
    assert "Traceback" not in run.stderr


def test_demo_piped_into_a_reader_that_leaves_stops_without_a_traceback():
    # `python -m combpred demo | head -1` ended in a BrokenPipeError traceback
    proc = _demo_started()
    proc.stdout.close()  # the reader leaves; the next line the tour writes meets a closed pipe
    _, err = proc.communicate(timeout=600)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err[-3000:]
    assert proc.returncode == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_demo_whose_output_cannot_be_written_says_so_in_one_line():
    # `python -m combpred demo > /dev/full` dumped an OSError traceback
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "combpred", "demo", "--quick"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=600,
        )
    assert run.returncode == 1
    assert run.stderr.strip() == "python -m combpred demo: could not write its output: No space left on device"


def test_demo_interrupted_says_so_in_one_line():
    # Ctrl-C printed a traceback of 12-30 lines through scikit-learn or the core (probe DN)
    proc = _demo_started()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 130
    assert err.strip() == "python -m combpred demo: interrupted"


def _demo_started() -> subprocess.Popen:
    """`python -m combpred demo --quick` in a child, once it has written its first line."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "combpred", "demo", "--quick"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout.readline().startswith("combpred demo")
    return proc


@pytest.mark.parametrize(
    "budget, said",
    [
        ("abc", "COMBPRED_MAX_MEMORY='abc' must be a whole number of bytes"),
        ("100000", "above the memory budget of 100.0 kB"),
    ],
)
def test_demo_with_a_budget_it_cannot_use_says_so_in_one_line(budget, said):
    # a malformed COMBPRED_MAX_MEMORY (the core does not load) or one below what the bundled data
    # need ended the tour in a traceback of 25 lines after its header (probe 82)
    env = dict(
        os.environ,
        COMBPRED_MAX_MEMORY=budget,
        PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]),
    )
    run = subprocess.run(
        [sys.executable, "-m", "combpred", "demo", "--quick"], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m combpred demo: ") and said in lines[0], run.stderr
