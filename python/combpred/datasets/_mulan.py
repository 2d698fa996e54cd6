"""Readers of MULAN multi-label data: the ARFF file (sparse or dense rows) and its XML label file.

Both read untrusted bytes: anything they do not understand raises ``ValueError`` naming the file
(``source``) and, for the ARFF, the line. Sparse rows are parsed straight into CSR arrays; no
dense matrix is ever built.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import NamedTuple
from xml.parsers import expat

import numpy as np
from scipy import sparse

from .. import _capi
from ._arff import (
    Attribute,
    ValueBudget,
    check_data_line,
    document_text,
    header_keyword,
    is_indicator,
    nominal_columns,
    parse_attribute,
    parse_number,
    split_fields,
    text_lines,
    unique_columns,
    unquote,
)

__all__ = ["MulanData", "read_mulan_arff", "read_mulan_xml"]

_INDEX = re.compile(r"[0-9]+")


# the encoding an XML declaration names, at the very start of the bytes
_XML_ENCODING = re.compile(rb"""\A\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")

# byte-order marks of the encodings whose declarations are not ASCII bytes (UTF-32 first: its
# little-endian mark begins with UTF-16's)
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _xml_text(data: str | bytes, source: str) -> str:
    """The text of an XML document: bytes with a UTF-16 or UTF-32 byte-order mark decoded so,
    others by the encoding their declaration names (a Latin-1 file that said so was refused as
    "not UTF-8 text"), else as UTF-8."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        for bom, codec in _WIDE_BOMS:
            if data.startswith(bom):
                try:
                    return data.decode(codec)
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{source}: not {codec.upper()} text (byte {exc.start}: {exc.reason})") from None
        declared = _XML_ENCODING.match(data)
        if declared is not None:
            name = declared.group(1).decode("ascii")
            try:
                codec = codecs.lookup(name).name
            except LookupError:
                raise ValueError(f"{source}: the XML declaration names an unknown encoding {name!r}") from None
            if codec != "utf-8":
                try:
                    return bytes(data).decode(codec)
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{source}: not {name} text (byte {exc.start}: {exc.reason})") from None
                except (UnicodeError, LookupError) as exc:  # rot13, hex, idna: not text encodings
                    raise ValueError(
                        f"{source}: the XML declaration names {name!r}, not a text encoding: {exc}"
                    ) from None
    return document_text(data, source)


# The characters expat takes per call (about 10-50 ms of parsing), and the bytes an element tree of
# label elements holds per character of the file, measured by probe DI (14.5 million labels of 23
# characters: 6.2 GB peak for 351 MB, about 18 a character; 10 million: 5.0 GB for 228 MB, 22).
_XML_CHUNK = 1 << 20
_XML_BYTES_PER_CHAR = 24


class _DoctypeRefused(Exception):
    """Raised from inside expat when a document type declaration starts."""


def _parse_without_dtd(text: str, source: str) -> ET.Element:
    """The element tree of ``text``, built by an expat parser that refuses any document type
    declaration itself: the text check misses one that expat finds by re-detecting the encoding
    (UTF-16 bytes without a byte-order mark, read as UTF-8, hid "<!DOCTYPE" behind NULs, and 17 KB
    expanded to a 6,000,000-character label name; probe BR). Tags are "uri}local" for namespaced
    elements, which the caller reads by their local part. Malformed XML raises ET.ParseError."""
    parser = expat.ParserCreate(namespace_separator="}")
    builder = ET.TreeBuilder()

    def refuse(*_args: object) -> None:
        raise _DoctypeRefused

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        # in pieces, so that Ctrl-C lands between them: one Parse of 119 MB ran 5.6 s deaf to it
        for start in range(0, len(text), _XML_CHUNK):
            parser.Parse(text[start : start + _XML_CHUNK], False)
        parser.Parse("", True)
    except _DoctypeRefused:
        raise ValueError(f"{source}: document type declarations are not accepted in a label file") from None
    except expat.ExpatError as exc:
        raise ET.ParseError(str(exc)) from None
    except UnicodeEncodeError as exc:  # expat takes text as UTF-8; codecs such as utf-7 decode to lone surrogates
        raise ValueError(
            f"{source}: the text holds {exc.object[exc.start : exc.end]!r} at character {exc.start}, a lone "
            "surrogate, which is no character"
        ) from None
    return builder.close()


def read_mulan_xml(data: str | bytes, *, source: str = "<xml>") -> list[str]:
    """Read the label names of a MULAN XML label file, in document order.

    Every ``<label name="...">`` element counts, at any depth (MULAN nests the labels of a
    hierarchy); the namespace is ignored.

    Parameters
    ----------
    data : str or bytes
        The file's contents: bytes in UTF-16 or UTF-32 with a byte-order mark, or in the encoding
        their XML declaration names (UTF-8 without one).
    source : str, default="<xml>"
        The file's name, for messages.

    Returns
    -------
    names : list of str

    Raises
    ------
    ValueError
        For malformed XML, a document type declaration (refused: entities can expand without
        bound), a label without a name, a repeated name, or no label at all.
    """
    text = _xml_text(data, source)
    # before the tree is built: a 351 MB label file took 6 GB unchecked, and ended in a bare MemoryError
    _capi.check_bytes(len(text) * _XML_BYTES_PER_CHAR, f"{source}: the element tree of its {len(text)} characters")
    try:
        root = _parse_without_dtd(text, source)
    except ET.ParseError as exc:
        raise ValueError(f"{source}: malformed XML: {exc}") from None
    names: list[str] = []
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.rpartition("}")[2] != "label":
            continue
        name = element.get("name")
        if not name:  # absent, or name="": both left the label nameless
            raise ValueError(f"{source}: a <label> element has no name (its name attribute is missing or empty)")
        names.append(name)
    if not names:
        raise ValueError(f"{source}: no <label name=...> element")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{source}: label {name!r} is listed twice")
        seen.add(name)
    return names


class MulanData(NamedTuple):
    """What :func:`read_mulan_arff` returns."""

    feature_names: list[str]
    X: sparse.csr_matrix
    target_names: list[str]
    Y: sparse.csr_matrix


class _Column(NamedTuple):
    attribute: Attribute
    is_label: bool
    first: int  # first output column (of X or Y)
    lookup: dict[str, float] | None  # nominal value -> number (indicator, label) or column offset (one-hot)
    onehot: bool


# the reader's peak per value: a Python int index and a float in two lists, then the CSR arrays
# (59 bytes measured with tracemalloc)
_BYTES_PER_VALUE = 64


def read_mulan_arff(data: str | bytes, label_names: Sequence[str], *, source: str = "<arff>") -> MulanData:
    """Parse a MULAN multi-label ARFF file, sparse or dense, into CSR feature and label matrices.

    Rows are either dense (``v1,v2,...``, one value per attribute) or sparse
    (``{index value, index value, ...}``, attribute indices from 0, absent attributes take their
    default: 0 for a numeric attribute, the first declared value for a nominal one, as in Weka).

    The labels are the attributes named in ``label_names`` (from the XML file), wherever they
    stand; they keep the ARFF's attribute order. Their values must be 0 or 1. The other
    attributes are features: numeric ones (``?`` = missing, NaN), 0/1 nominal ones (one 0/1
    column) and other nominal ones, one-hot encoded with columns ``"<attribute>=<value>"`` (a
    missing ``?`` gives NaN in every column of the attribute).

    Parameters
    ----------
    data : str or bytes
        The file's contents (bytes must be UTF-8).
    label_names : sequence of str
        The label attributes' names.
    source : str, default="<arff>"
        The file's name, for messages.

    Returns
    -------
    MulanData
        ``feature_names``, ``X`` (CSR float64, n_samples × n_features, explicit zeros dropped),
        ``target_names`` and ``Y`` (CSR int64, 0/1, n_samples × n_labels).

    Raises
    ------
    ValueError
        Naming the file and line: no ``@DATA``, malformed declarations, unsupported types
        (string, date, relational), a label absent from the header or declared with values other
        than 0/1, a sparse index that is not a number, out of range or repeated, a value that is
        not a number or not a declared nominal value, a label value other than 0/1, wrong field
        counts.
    """
    text = document_text(data, source)
    if isinstance(label_names, (str, bytes)):  # iterated, "L1" was the labels "L" and "1"
        raise TypeError(
            f"{source}: label_names must be a list of attribute names, got a single {type(label_names).__name__}"
        )
    labels = list(label_names)
    if not labels or not all(isinstance(name, str) for name in labels):
        raise ValueError(f"{source}: label_names must be a non-empty list of attribute names")
    attributes: list[Attribute] = []
    budget = ValueBudget(source, _BYTES_PER_VALUE)
    lines = text_lines(text, budget)
    data_start = None
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        where = f"{source}, line {lineno}"
        keyword = header_keyword(line, where)
        if keyword == "attribute":
            budget.add_declaration(line, lineno)
            attributes.append(parse_attribute(line, where, lineno))
        elif keyword == "data":
            data_start = lineno
            break
    if data_start is None:
        raise ValueError(f"{source}: no @DATA section (is this an ARFF file?)")
    if not attributes:
        raise ValueError(f"{source}: no @ATTRIBUTE declarations before @DATA")

    by_name: dict[str, Attribute] = {}
    for a in attributes:
        if a.name in by_name:
            raise ValueError(f"{source}, line {a.lineno}: attribute {a.name!r} is declared twice")
        by_name[a.name] = a
    label_set = set(labels)
    if len(label_set) != len(labels):
        raise ValueError(f"{source}: a label name is given twice")
    absent = [name for name in labels if name not in by_name]
    if absent:
        raise ValueError(
            f"{source}: {len(absent)} label(s) of the XML file are not attributes of the ARFF file, e.g. {absent[0]!r}"
        )

    columns: list[_Column] = []
    feature_names: list[str] = []
    target_names: list[str] = []
    for a in attributes:
        where = f"{source}, line {a.lineno}"
        if a.name in label_set:
            if a.kind == "nominal":
                if not set(a.values) <= {"0", "1"}:
                    raise ValueError(
                        f"{where}: label {a.name!r} must be declared {{0,1}}, got {{{','.join(a.values)}}}"
                    )
                lookup = {v: float(v) for v in a.values}
            elif a.kind == "numeric":
                lookup = None
            else:
                raise ValueError(f"{where}: label {a.name!r} has type {a.kind!r}; labels must be {{0,1}} or numeric")
            columns.append(_Column(a, True, len(target_names), lookup, False))
            target_names.append(a.name)
            continue
        if a.kind == "numeric":
            columns.append(_Column(a, False, len(feature_names), None, False))
            feature_names.append(a.name)
        elif a.kind == "nominal":
            if is_indicator(a):
                lookup = {v: float(v) for v in a.values}
                onehot = False
            else:
                lookup = {v: float(i) for i, v in enumerate(a.values)}
                onehot = True
            columns.append(_Column(a, False, len(feature_names), lookup, onehot))
            feature_names.extend(nominal_columns(a))
        else:
            raise ValueError(
                f"{where}: attribute {a.name!r} has type {a.kind!r}; only numeric and nominal attributes are supported"
            )

    unique_columns(feature_names, source)

    # Sparse rows: what an absent attribute stands for, where that is not zero (Weka: the first nominal value).
    defaults: list[tuple[int, _Column]] = []
    for j, col in enumerate(columns):
        if col.attribute.kind == "nominal" and (col.onehot or col.lookup[col.attribute.values[0]] != 0):
            defaults.append((j, col))

    n_attr = len(attributes)
    x_indptr, x_indices, x_data = [0], [], []
    y_indptr, y_indices, y_data = [0], [], []

    def put(
        j: int, token: str, where: str, xrow: dict[int, float], yrow: dict[int, int], value: str | None = None
    ) -> None:
        """Store attribute j's ``token`` as the file writes it, or its unquoted ``value`` (never missing)."""
        col = columns[j]
        a = col.attribute
        missing = value is None and token.strip() == "?"  # a quoted '?' is a value (ARFF)
        if value is None:
            value = unquote(token, where)
        if col.is_label:
            number = col.lookup.get(value) if col.lookup is not None else parse_number(value)
            if number not in (0.0, 1.0):
                raise ValueError(f"{where}: label {a.name!r} has value {value[:40]!r}; labels must be 0 or 1")
            if number:
                yrow[col.first] = 1
            return
        if missing:
            if col.onehot:
                for k in range(len(a.values)):
                    xrow[col.first + k] = np.nan
            else:
                xrow[col.first] = np.nan
            return
        if col.lookup is None:
            number = parse_number(value)
            if number is None:
                raise ValueError(f"{where}: attribute {a.name!r}: {value[:40]!r} is not a finite number")
            if number != 0.0:
                xrow[col.first] = number
            return
        number = col.lookup.get(value)
        if number is None:
            raise ValueError(f"{where}: attribute {a.name!r}: {value[:40]!r} is not one of its declared values")
        if col.onehot:
            xrow[col.first + int(number)] = 1.0
        elif number != 0.0:
            xrow[col.first] = number

    for lineno in range(data_start + 1, len(lines) + 1):
        line = lines[lineno - 1].strip()
        if not line or line.startswith("%"):
            continue
        where = f"{source}, line {lineno}"
        check_data_line(line, where)
        xrow: dict[int, float] = {}
        yrow: dict[int, int] = {}
        if line.startswith("{"):
            if not line.endswith("}"):
                raise ValueError(f"{where}: a sparse row must end with '}}'")
            body = line[1:-1].strip()
            seen: set[int] = set()
            if body:
                budget.reserve(body.count(",") + 1, lineno)
                for item in split_fields(body, where):
                    parts = item.strip().split(None, 1)
                    if len(parts) != 2:
                        raise ValueError(f"{where}: sparse entry {item.strip()[:40]!r} is not 'index value'")
                    if not _INDEX.fullmatch(parts[0]):
                        raise ValueError(f"{where}: sparse index {parts[0][:40]!r} is not a non-negative integer")
                    digits = parts[0].lstrip("0") or "0"
                    j = int(digits) if len(digits) <= 18 else n_attr  # beyond int64: out of range too
                    if j >= n_attr:
                        raise ValueError(
                            f"{where}: sparse index {parts[0][:40]} is out of range (the file has {n_attr} attributes)"
                        )
                    if j in seen:
                        raise ValueError(f"{where}: sparse index {j} appears twice")
                    seen.add(j)
                    put(j, parts[1], where, xrow, yrow)
            for j, col in defaults:
                if j not in seen:
                    # the first declared value, unquoted already: a value '?' passed as a token
                    # read as missing, all-NaN columns (probe DI)
                    put(j, "", where, xrow, yrow, value=col.attribute.values[0])
        else:
            budget.reserve(line.count(",") + 1, lineno)
            fields = split_fields(line, where)
            if len(fields) != n_attr:
                raise ValueError(f"{where}: {len(fields)} values for {n_attr} attributes")
            for j, token in enumerate(fields):
                put(j, token, where, xrow, yrow)
        budget.add(len(xrow) + len(yrow), lineno)
        for k in sorted(xrow):
            x_indices.append(k)
            x_data.append(xrow[k])
        x_indptr.append(len(x_indices))
        for k in sorted(yrow):
            y_indices.append(k)
            y_data.append(1)
        y_indptr.append(len(y_indices))

    n = len(x_indptr) - 1
    X = sparse.csr_matrix(
        (
            np.asarray(x_data, dtype=np.float64),
            np.asarray(x_indices, dtype=np.int32),
            np.asarray(x_indptr, dtype=np.int64),
        ),
        shape=(n, len(feature_names)),
    )
    Y = sparse.csr_matrix(
        (
            np.asarray(y_data, dtype=np.int64),
            np.asarray(y_indices, dtype=np.int32),
            np.asarray(y_indptr, dtype=np.int64),
        ),
        shape=(n, len(target_names)),
    )
    return MulanData(feature_names, X, target_names, Y)
