"""A reader of dense ARFF documents in MULAN's layout (yeast, scene)."""

from __future__ import annotations

import numpy as np


def read_arff(text: str) -> tuple[list[str], np.ndarray]:
    """Parse a dense numeric ARFF document into attribute names and a float matrix.

    Only what the bundled files use is supported: numeric and {0,1} nominal attributes, dense rows,
    ``%`` comments. Anything else raises ``ValueError`` naming the line.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the ARFF document as a str, got {type(text).__name__}")
    names: list[str] = []
    rows: list[list[float]] = []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        lower = line.lower()
        if not in_data:
            if lower.startswith("@attribute"):
                parts = line.split(None, 2)
                if len(parts) < 3:
                    raise ValueError(f"line {lineno}: malformed @attribute")
                names.append(parts[1].strip("'\""))
            elif lower.startswith("@data"):
                in_data = True
            continue
        if line.startswith("{"):
            raise ValueError(f"line {lineno}: sparse ARFF rows are not supported")
        values = line.split(",")
        if len(values) != len(names):
            raise ValueError(f"line {lineno}: {len(values)} values for {len(names)} attributes")
        try:
            rows.append([float(v) for v in values])
        except ValueError as exc:
            raise ValueError(f"line {lineno}: {exc}") from None
    if not in_data or not names:
        raise ValueError("text is not an ARFF document: it has no @attribute declarations or no @data section")
    return names, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))
