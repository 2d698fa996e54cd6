"""Issue 11, finding 3: enumeration is bounded by structures × width, so that a space with few but
wide structures (a chain of 10⁶ nodes has 10⁶ rooted subtrees of width 10⁶) is refused at once
instead of running for days."""

import subprocess
import sys

import numpy as np
import pytest
from combpred import spaces

_CHAIN = """
import numpy as np
from combpred import spaces
try:
    spaces.Subtrees(np.arange(-1, 10**6 - 1)).enumerate()
except ValueError as exc:
    print("refused:", exc)
"""


def test_wide_enumeration_is_refused_quickly():
    done = subprocess.run([sys.executable, "-c", _CHAIN], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: enumerate: the space has more than" in done.stdout
    assert "values in all" in done.stdout


@pytest.mark.parametrize("space", [spaces.Multilabel(12), spaces.Permutations(7), spaces.Subtrees(np.arange(-1, 40))])
def test_enumeration_below_the_bound_still_lists_every_structure(space):
    rows = space.enumerate()
    assert len(rows) == round(np.exp(space.log_count()))
    assert len({tuple(np.ravel(r)) for r in rows}) == len(rows)
