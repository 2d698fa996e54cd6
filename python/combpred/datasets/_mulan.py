"""A reader of MULAN multi-label ARFF documents with sparse rows, and their XML label lists."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
from scipy import sparse

_NUMERIC_TYPES = ("numeric", "real", "integer")


def _attribute(line: str, lineno: int) -> tuple[str, str]:
    """The name and type of an ``@attribute`` line; the name may be quoted and hold spaces."""
    rest = line[len("@attribute") :].strip()
    if not rest:
        raise ValueError(f"line {lineno}: malformed @attribute")
    if rest[0] in "'\"":
        end = rest.find(rest[0], 1)
        if end < 0:
            raise ValueError(f"line {lineno}: unterminated quoted attribute name")
        name, kind = rest[1:end], rest[end + 1 :].strip()
    else:
        parts = rest.split(None, 1)
        name, kind = parts[0], parts[1].strip() if len(parts) > 1 else ""
    if not kind:
        raise ValueError(f"line {lineno}: attribute {name!r} has no type")
    return name, kind


def read_sparse_arff(text: str) -> tuple[list[str], sparse.csr_matrix]:
    """Parse a MULAN ARFF document, sparse rows (``{index value, ...}``) or dense ones, into the
    attribute names and a CSR float64 matrix of every attribute (features and labels alike).

    Attributes must be numeric or the nominal ``{0,1}`` MULAN uses for binary features and labels.
    The document is untrusted input: anything else — an index out of range or repeated within a
    row, a non-numeric value, a row of the wrong length, a missing ``@data`` — raises ``ValueError``
    naming the line.

    Parameters
    ----------
    text : str
        The file's contents.

    Returns
    -------
    names : list of str
        The attribute names, in order.
    matrix : scipy.sparse.csr_matrix of shape (n_rows, n_attributes)
        The values; entries a sparse row leaves out are 0.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the ARFF document as a str, got {type(text).__name__}")
    names: list[str] = []
    indptr, indices, data = [0], [], []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            lower = line.lower()
            if lower.startswith("@attribute"):
                name, kind = _attribute(line, lineno)
                k = kind.lower()
                binary = k.startswith("{") and sorted(v.strip().strip("'\"") for v in k[1:-1].split(",")) == ["0", "1"]
                if not (k in _NUMERIC_TYPES or binary):
                    raise ValueError(
                        f"line {lineno}: attribute {name!r} has type {kind[:40]!r}; only numeric and {{0,1}} are read"
                    )
                names.append(name)
            elif lower.startswith("@data"):
                in_data = True
            elif not (lower.startswith("@relation")):
                raise ValueError(f"line {lineno}: unexpected header line {line[:40]!r}")
            continue
        n = len(names)
        if line.startswith("{"):
            if not line.endswith("}"):
                raise ValueError(f"line {lineno}: a sparse row must end with '}}'")
            body = line[1:-1].strip()
            seen = set()
            for item in body.split(",") if body else []:
                parts = item.split()
                if len(parts) != 2:
                    raise ValueError(f"line {lineno}: sparse entry {item.strip()!r} is not 'index value'")
                try:
                    j, v = int(parts[0]), float(parts[1])
                except ValueError:
                    raise ValueError(f"line {lineno}: sparse entry {item.strip()!r} is not 'index value'") from None
                if not 0 <= j < n:
                    raise ValueError(f"line {lineno}: index {j} is outside the {n} attributes")
                if j in seen:
                    raise ValueError(f"line {lineno}: index {j} appears twice")
                if not np.isfinite(v):
                    raise ValueError(f"line {lineno}: attribute {names[j]!r} has the non-finite value {parts[1]!r}")
                seen.add(j)
                if v != 0:
                    indices.append(j)
                    data.append(v)
        else:
            values = line.split(",")
            if len(values) != n:
                raise ValueError(f"line {lineno}: {len(values)} values for {n} attributes")
            for j, s in enumerate(values):
                try:
                    v = float(s)
                except ValueError:
                    raise ValueError(f"line {lineno}: attribute {names[j]!r}: {s.strip()!r} is not a number") from None
                if not np.isfinite(v):
                    raise ValueError(f"line {lineno}: attribute {names[j]!r} has the non-finite value {s.strip()!r}")
                if v != 0:
                    indices.append(j)
                    data.append(v)
        # a row's indices are sorted by CSR's canonical form below
        indptr.append(len(indices))
    if not in_data:
        raise ValueError("no @data section")
    matrix = sparse.csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(len(indptr) - 1, len(names)),
    )
    matrix.sort_indices()
    return names, matrix


def read_label_names(xml_text: str) -> list[str]:
    """The label names a MULAN XML file lists (``<label name="..."/>``, namespaced or not, nested
    label hierarchies flattened in document order)."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"the label XML does not parse: {exc}") from None
    names = [el.get("name") for el in root.iter() if re.sub(r"^\{.*\}", "", el.tag) == "label"]
    if not names or any(not n for n in names):
        raise ValueError("the label XML lists no labels, or a label without a name")
    if len(set(names)) != len(names):
        raise ValueError("the label XML lists a label twice")
    return names
