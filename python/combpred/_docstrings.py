"""Docstrings assembled from parts written once (a parent's Parameters, a space's decoder limits).

Python 3.13 removes the common indentation of docstrings when it compiles them; earlier versions
keep it. Text spliced into a docstring is written without indentation, at the margin of
:func:`cleaned`, which puts every docstring there whatever the version: splices written for the
indented form found nothing to replace on 3.13 (``import combpred.dask`` failed) or came out
misaligned (probe CF).
"""

from __future__ import annotations

import inspect


def cleaned(doc: str | None) -> str | None:
    """``doc`` without its common indentation (as Python ≥ 3.13 stores it); None stays None (``-OO``)."""
    return None if doc is None else inspect.cleandoc(doc)
