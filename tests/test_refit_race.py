"""A call reads the fitted state once (issue 11, finding 8): a refit in another thread that changes
the output dimension cannot make a call size its buffer for one model and call another."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import combpred

PACKAGE_PARENT = str(Path(combpred.__file__).resolve().parent.parent)


def test_refit_in_another_thread_never_overruns():
    code = """
        import threading, time
        import numpy as np
        from sklearn.exceptions import NotFittedError
        from combpred import StructuredRidge
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30, 4))
        Ys = [(rng.random((30, d)) < 0.5).astype(int) for d in (2, 300)]
        model = StructuredRidge(space="multilabel", solver="exact").fit(X, Ys[0])
        stop = time.monotonic() + 3
        errors = []

        def refit():
            i = 0
            while time.monotonic() < stop:
                model.fit(X, Ys[i % 2])
                i += 1

        def call():
            while time.monotonic() < stop:
                try:
                    u, p = model.decision_function(X), model.predict(X)
                except NotFittedError:
                    continue  # between the reset and the end of a refit
                except Exception as exc:
                    errors.append(repr(exc))
                    return
                if u.shape[1] not in (2, 300) or p.shape[1] not in (2, 300):
                    errors.append(f"shapes {u.shape} {p.shape}")
                    return

        threads = [threading.Thread(target=refit)] + [threading.Thread(target=call) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("ERRORS", errors)
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ERRORS []" in result.stdout, result.stdout
