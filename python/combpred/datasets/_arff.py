"""A reader of dense ARFF documents in MULAN's layout (yeast, scene)."""

from __future__ import annotations

import gzip
import math
import os
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import _capi


class ValueBudget:
    """The values a reader may hold under the memory budget (``combpred.set_config(max_memory=)``),
    counted as rows arrive at ``bytes_per_value`` (the reader's peak, measured with tracemalloc);
    ``add`` raises the core's MemoryError past it, naming the source. A nominal attribute is one
    column per declared value, and a missing value fills them all: files of 70–150 KB reached
    1.3–1.75 GB."""

    def __init__(self, source: str, bytes_per_value: int):
        self.source, self.values, self.bytes_per_value = source, 0, bytes_per_value
        self.limit = _capi.max_memory()[1] // bytes_per_value

    def add_declaration(self, line: str, lineno: int) -> None:
        """Count an attribute declaration before it is parsed: a nominal attribute's declared values
        become strings, a lookup table and column names, about _DECLARATION_BYTES_PER_CHAR bytes per
        character of the line (a 35 MB header of 4 million values took 1.1 GB uncounted)."""
        self.add(-(-len(line) * _DECLARATION_BYTES_PER_CHAR // self.bytes_per_value), lineno)

    def add_lines(self, text: str) -> None:
        """Count a document's lines before :func:`text_lines` splits it, a value each (a list slot
        and a string: 60 MB of blank lines took 700 MB uncounted), and its characters at
        _TEXT_BYTES_PER_CHAR (the file's bytes, its text and the lines' copy of it, held at once:
        a 287 MB sparse ARFF peaked at 5.16 GB under a budget of 4.10 GB, probe DI)."""
        chars = -(-len(text) * _TEXT_BYTES_PER_CHAR // self.bytes_per_value)
        self.values += text.count("\n") + text.count("\r") + chars
        if self.values > self.limit:
            _capi.check_bytes(self.values * self.bytes_per_value, f"{self.source or 'the document'}: its lines")

    def reserve(self, values: int, lineno: int) -> None:
        """Check, without counting them, that ``values`` more fit: before a line is split into
        them (one row of 20 million labels took 1.9 GB under a budget of 200 MB)."""
        self.add(values, lineno)
        self.values -= values

    def add(self, values: int, lineno: int) -> None:
        self.values += values
        if self.values > self.limit:  # the message is worded only then: add runs once per row
            what = (
                f"{source_line(self.source, lineno)}: the values read so far ({self.values}, "
                f"{self.bytes_per_value} bytes each while read)"
            )
            _capi.check_bytes(self.values * self.bytes_per_value, what)


def source_line(source: str, lineno: int) -> str:
    return f"{source}, line {lineno}" if source else f"line {lineno}"


# read_arff's peak per value: a list slot and a float object while read (32 bytes), then the
# float64 matrix (8), and the document's lines: 40.5 bytes measured with tracemalloc on rows of 500
# zeros, 64 on rows of 5 (each row's own list); the lines of 19-character tokens take 52-80
_BYTES_PER_VALUE = 64
# a document's bytes, its decoded text and its lines, per character of ASCII text
_TEXT_BYTES_PER_CHAR = 3
# the readers' peak per character of an attribute declaration: 1.11 GB for a 35 MB line of
# 4 million nominal values, measured with /usr/bin/time (the values' strings, lookup and columns)
_DECLARATION_BYTES_PER_CHAR = 32


def read_arff(text: str | bytes, *, source: str = "") -> tuple[list[str], np.ndarray]:
    """Parse a dense numeric ARFF document (str, or bytes in UTF-8) into attribute names and a
    float matrix.

    Only what the bundled files use is supported: numeric and {0,1} nominal attributes (whose
    values must be 0 or 1), dense rows, ``%`` comments; attribute names may be quoted. Anything
    else (a string, date or relational attribute, another nominal one) raises ``ValueError``
    naming the line. ``source`` (say, the file's name) prefixes the line in messages.

    The values read are counted against the memory budget (``combpred.set_config(max_memory=)``)
    at 64 bytes each, the reader's peak: past it, ``MemoryError`` names the source and line.

    Parameters
    ----------
    text : str or bytes
        The document (bytes in UTF-8; a leading byte-order mark is skipped).
    source : str, default=""
        What to call the document in messages (say, the file's name).

    Returns
    -------
    names : list of str
        The attribute names, in order.
    X : ndarray of shape (n_rows, n_attributes)
        The values, float64.
    """
    text = document_text(text, source or "text")
    names: list[str] = []
    seen_names: set[str] = set()
    indicators: list[int] = []  # columns of {0,1} nominal attributes
    rows: list[list[float]] = []
    in_data = False
    budget = ValueBudget(source, _BYTES_PER_VALUE)
    for lineno, raw in enumerate(text_lines(text, budget), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        where = source_line(source, lineno)
        if not in_data:
            keyword = header_keyword(line, where)
            if keyword == "attribute":
                # a split at blanks cut a quoted name ('a b' became a) and took any type as numeric
                budget.add_declaration(line, lineno)
                attribute = parse_attribute(line, where, lineno)
                if attribute.name in seen_names:  # a set: a scan of names made 200,000 attributes take 281 s
                    raise ValueError(f"{where}: attribute {attribute.name!r} is declared twice")
                seen_names.add(attribute.name)
                if is_indicator(attribute):
                    indicators.append(len(names))
                elif attribute.kind != "numeric":
                    kind = attribute.kind
                    if kind == "nominal":
                        kind = "nominal {" + ",".join(attribute.values) + "}"
                    raise ValueError(
                        f"{where}: attribute {attribute.name!r} has type {kind[:40]!r}; only numeric and "
                        "{0,1} nominal attributes are supported"
                    )
                names.append(attribute.name)
            elif keyword == "data":
                in_data = True
            continue
        check_data_line(line, where)
        if line.startswith("{"):
            raise ValueError(f"{where}: sparse ARFF rows are not supported")
        values = [v.strip() for v in split_fields(line, where)]
        if len(values) != len(names):
            raise ValueError(f"{where}: {len(values)} values for {len(names)} attributes")
        # a {0,1} attribute's values first: a quoted '1' (valid ARFF) or an 'x' there was "not a
        # finite number", naming no attribute (probe CB)
        for j in indicators:
            values[j] = unquote(values[j], where)
            if values[j] not in ("0", "1"):
                raise ValueError(
                    f"{where}: attribute {names[j]!r}: {values[j][:40]!r} is not one of its declared values (0, 1)"
                )
        if "'" in line or '"' in line:  # any value may be quoted in ARFF, numbers too (probe CC)
            values = [unquote(v, where) for v in values]
        row = [parse_number(v) for v in values]
        if None in row:  # float() also took "inf", "nan", "1e999", "1_000" and non-ASCII digits
            j = row.index(None)
            raise ValueError(f"{where}: attribute {names[j]!r}: {values[j][:40]!r} is not a finite number")
        budget.add(len(row), lineno)
        rows.append(row)
    if not in_data or not names:
        raise ValueError(
            f"{source or 'text'} is not an ARFF document: it has no @attribute declarations or no @data section"
        )
    return names, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))


# --------------------------------------------------------------------------------------------
# pieces shared by the MULAN (multi-label) and Clus HMC readers
# --------------------------------------------------------------------------------------------
NUMERIC_TYPES = ("numeric", "real", "integer")

# An ARFF number: no underscores, no "nan"/"inf" spellings, ASCII digits only (float() accepts all three).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number(token: str) -> float | None:
    """The finite float an ARFF numeric token stands for, or None if it is not one."""
    if not _NUMBER.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def document_text(data: str | bytes, source: str) -> str:
    """The text of a document given as str, or as bytes in UTF-8, without a leading byte-order
    mark (which editors on Windows write, and which made the first line unreadable); ``source``
    names it in errors."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{source}: expected the file's contents as str or bytes, got {type(data).__name__}")
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def header_keyword(line: str, where: str) -> str:
    """The keyword of a stripped, non-comment line before ``@data``: ``"relation"``, ``"attribute"``
    or ``"data"``. Anything else is an error naming ``where``: readers that skipped unknown lines
    silently dropped a misspelt ``@atribute``, or the first line after a second byte-order mark."""
    lower = line.lower()
    if lower == "@data":
        return "data"
    for keyword in ("relation", "attribute"):
        rest = lower[len(keyword) + 1 :]
        if lower.startswith("@" + keyword) and (not rest or rest[0].isspace()):
            return keyword
    raise ValueError(f"{where}: expected @RELATION, @ATTRIBUTE or @DATA, got {line[:40]!r}")


# Weka's instance weight, "{w}" after a row's last value (dense or sparse): unquoted braces after
# a comma at the end of the line
_INSTANCE_WEIGHT = re.compile(r",\s*\{[^{}'\"]*\}\s*$")


def check_data_line(line: str, where: str) -> None:
    """Raise if a stripped line of the data section is not a row this reader takes: a header line
    (an ``@attribute``, a second ``@data`` or an ``@relation`` there had been read as a data row,
    and the message counted its values against the attributes or called ``@data`` not a finite
    number), or a row with Weka's instance weight ``{w}`` at its end (its "1}" was blamed on an
    attribute's value, probe DB)."""
    if line[:1] == "@":
        lower = line.lower()
        for keyword in ("attribute", "data", "relation"):
            rest = lower[len(keyword) + 1 :]
            if lower.startswith("@" + keyword) and (not rest or rest[0].isspace()):
                raise ValueError(f"{where}: {line[:40]!r} inside the data section: declarations come before @DATA")
    if _INSTANCE_WEIGHT.search(line):
        raise ValueError(f"{where}: Weka instance weights ('{{w}}' after a row's values) are not supported")


def unique_columns(names: list[str], source: str) -> None:
    """Raise if two columns share a name: a one-hot column ``a=x`` of a nominal attribute ``a`` and
    an attribute declared as ``'a=x'`` would otherwise be two columns nobody can tell apart."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(
                f"{source}: two feature columns are named {name[:60]!r} (an attribute of that name and a "
                "one-hot column of a nominal attribute); rename one"
            )
        seen.add(name)


# The block in which read_file decompresses and charges a compressed file.
_READ_BLOCK = 16 << 20


def read_file(path: Path, gz: bool = False) -> bytes:
    """The bytes of the file at ``path`` (decompressed where ``gz``), charged against the memory
    budget at _TEXT_BYTES_PER_CHAR a byte, what its text and lines will take, before it is read
    (a regular file's size) and as its blocks arrive (a compressed file's, or one that grows): the
    readers charged a file only once it was read and decoded, and a 1.5 GB file under a budget of
    100 MiB reached 3.2 GB resident before it was refused; a 6 GB one under `ulimit -v` ended in
    a MemoryError with no message (probe EK)."""

    def charge(size: int, what: str) -> None:
        _capi.check_bytes(size * _TEXT_BYTES_PER_CHAR, f"{path}: its text ({size:,} bytes {what})")

    try:
        with open(path, "rb") as raw:
            if not gz:
                charge(os.fstat(raw.fileno()).st_size, "on disk")
                data = raw.read()  # sized by the file (a fixed block was allocated whole for a small file)
                charge(len(data), "read")  # a file that grew while it was read
                return data
            fh = gzip.GzipFile(fileobj=raw)
            blocks, size = [], 0
            while block := fh.read(_READ_BLOCK):
                size += len(block)
                charge(size, "decompressed so far")
                blocks.append(block)
    except OSError as exc:
        if exc.filename is not None or isinstance(exc, FileNotFoundError):
            raise
        # a read that fails (EINVAL of a /proc file, EIO of a bad disk) named no file (probe EL)
        raise type(exc)(exc.errno, f"{exc.strerror or exc} while reading it", str(path)) from exc
    return b"".join(blocks)


def text_lines(text: str, budget: ValueBudget | None = None) -> list[str]:
    """The lines of a text file, split at ``\\n``, ``\\r\\n`` and ``\\r`` only: ``str.splitlines``
    also splits at form feeds, vertical tabs, ``\\x1c``–``\\x1e``, ``\\x85`` and the Unicode line
    separators, which cut a data row in two and shifted every line number after it in messages.
    With ``budget``, the lines are counted against it first (:meth:`ValueBudget.add_lines`)."""
    if budget is not None:
        budget.add_lines(text)
    if "\r" not in text:  # str.split, ten times as fast as the expression on 100 MB, one C call either way
        return text.split("\n")
    return _LINE_BREAK.split(text)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_fields(text: str, where: str) -> list[str]:
    """Split on commas outside single or double quotes; quotes are kept (see :func:`unquote`)."""
    if "'" not in text and '"' not in text:
        return text.split(",")
    fields: list[str] = []
    start, quote, i = 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == ",":
            fields.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise ValueError(f"{where}: unterminated {quote} quote")
    fields.append(text[start:])
    return fields


# Weka writes a tab, newline, carriage return (and form feed, backspace) in a quoted value as
# these escapes; every other escaped character stands for itself (\', \\, \%). Read as the bare
# letter, 'dark\tred' became the column name "darktred" (probe EX).
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "b": "\b"}


def unquote(token: str, where: str) -> str:
    """Strip the blanks around a token and the quotes around a quoted one (``\\`` escapes, with
    ``\\t``, ``\\n``, ``\\r``, ``\\f`` and ``\\b`` the control characters Weka writes as them)."""
    token = token.strip()
    if token[:1] in ("'", '"'):
        if len(token) < 2 or token[-1] != token[0]:
            raise ValueError(f"{where}: badly quoted value {token[:40]!r}")
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), token[1:-1])
    return token


class Attribute(NamedTuple):
    """One ``@attribute`` declaration: its name, kind and, for a nominal one, its values."""

    name: str
    kind: str  # "numeric", "nominal", "hierarchical" or the declared type, lower-case, for any other
    values: tuple[str, ...] = ()  # nominal values; for "hierarchical", the raw declaration list
    lineno: int = 0


def parse_attribute(line: str, where: str, lineno: int = 0) -> Attribute:
    """Parse an ``@attribute <name> <type>`` line (the name may be quoted)."""
    rest = line[len("@attribute") :]
    if not rest[:1].isspace():
        raise ValueError(f"{where}: malformed @attribute")
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        end = 1
        while end < len(rest) and rest[end] != rest[0]:
            end += 2 if rest[end] == "\\" else 1
        if end >= len(rest):
            raise ValueError(f"{where}: malformed @attribute (unterminated quoted name)")
        name, rest = unquote(rest[: end + 1], where), rest[end + 1 :]
        if rest[:1] and not rest[:1].isspace() and rest[:1] != "{":
            raise ValueError(f"{where}: malformed @attribute")
    else:
        parts = rest.split(None, 1)
        if len(parts) < 2:
            raise ValueError(f"{where}: malformed @attribute (it needs a name and a type)")
        name, rest = parts
    spec = rest.strip()
    if not name or not spec:
        raise ValueError(f"{where}: malformed @attribute (it needs a name and a type)")
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise ValueError(f"{where}: attribute {name!r}: nominal values must end with '}}'")
        values = tuple(unquote(v, where) for v in split_fields(spec[1:-1], where))
        if not all(values):
            raise ValueError(f"{where}: attribute {name!r}: empty nominal value")
        if len(set(values)) != len(values):
            raise ValueError(f"{where}: attribute {name!r}: a nominal value is declared twice")
        return Attribute(name, "nominal", values, lineno)
    keyword, _, tail = spec.replace("\t", " ").partition(" ")
    keyword = keyword.lower()
    if keyword in NUMERIC_TYPES:
        if tail.strip():
            raise ValueError(
                f"{where}: attribute {name!r}: unexpected {tail.strip()[:40]!r} after the type {keyword!r}"
            )
        return Attribute(name, "numeric", (), lineno)
    if keyword == "hierarchical":
        return Attribute(name, "hierarchical", (tail.strip(),), lineno)
    return Attribute(name, keyword, (), lineno)


def nominal_columns(attribute: Attribute) -> list[str]:
    """Column names of a nominal feature: ``[name]`` for a 0/1 indicator, else ``name=value`` each.

    A nominal attribute whose values are exactly ``0`` and ``1`` (in either order) is already an
    indicator and stays one column holding 0 or 1; any other is one-hot encoded, one column per
    declared value, in declaration order, named ``"<attribute>=<value>"``.
    """
    if is_indicator(attribute):
        return [attribute.name]
    return [f"{attribute.name}={v}" for v in attribute.values]


def is_indicator(attribute: Attribute) -> bool:
    return attribute.kind == "nominal" and sorted(attribute.values) == ["0", "1"]
