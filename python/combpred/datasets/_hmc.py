"""A reader of Clus HMC ARFF documents (tree taxonomies such as FunCat and ImageCLEF) and the
taxonomy helpers of the hierarchical loaders."""

from __future__ import annotations

import heapq

import numpy as np

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
    source_line,
    split_fields,
    text_lines,
    unique_columns,
    unquote,
)


def hierarchy_form(entries: list[str]) -> str:
    """How a ``hierarchical`` declaration writes its taxonomy: ``"paths"`` or ``"edges"``.

    Tree taxonomies (FunCat, ImageCLEF) list every node as its path from the root, so the
    top-level nodes appear without a ``/``. Gene Ontology files list the edges of a DAG as
    ``parent/child`` (``root/GO0003674``): every entry has exactly one ``/``. A list of that
    second shape is read as edges, any other as paths.
    """
    if entries and all(e.count("/") == 1 for e in entries):
        return "edges"
    return "paths"


def declared_nodes(entries: list[str]) -> list[str]:
    """The node names a declaration introduces, in order of first appearance; an entry with an
    empty component (a leading, trailing or doubled ``/``) is refused."""
    for entry in entries:
        # '/01' was a second top-level node, '01/' a child of '01'; tested without splitting the
        # entry, which took a second for a chain of 10,000 levels
        if entry.startswith("/") or entry.endswith("/") or "//" in entry:
            raise ValueError(f"hierarchy entry {entry!r} has an empty component (a leading, trailing or doubled '/')")
    if hierarchy_form(entries) == "paths":
        return list(entries)
    nodes: dict[str, None] = {}
    for edge in entries:
        parent, child = edge.split("/")
        nodes.setdefault(parent)
        nodes.setdefault(child)
    return list(nodes)


# the reader's peak per value: a list slot and a float object while read, then the float64 matrix
# (41.5 bytes measured with tracemalloc)
_BYTES_PER_VALUE = 48
# a row label's share of the reader's peak, in values: its string (49 bytes and its characters), a
# list slot, and the unstripped string of the split (about 96 bytes measured on 20 labels a row)
_VALUES_PER_LABEL = 2
# a row's own share of the reader's peak, in values, beyond its values and labels: its list, its
# labels' list and their slots (100-153 bytes measured; uncounted, 3.8M rows of one label and no
# feature grew 1.05 GB under a budget of 600 MB, probe EG)
_VALUES_PER_ROW = 4
# the peak of building a taxonomy from its declaration, per declared entry (node path or edge): the
# maps of parents and children, the names, the parent arrays and the depths (238-691 bytes measured,
# flat paths to an edge chain; a star of 10⁶ edges grew 609 MB uncounted, probe EG)
TAXONOMY_BYTES_PER_ENTRY = 800


def read_hmc_arff(text: str | bytes, *, source: str = "") -> tuple[list[str], np.ndarray, list[str], list[list[str]]]:
    """Parse a dense Clus HMC ARFF document (a tree or a DAG taxonomy).

    The last attribute must be ``@ATTRIBUTE class hierarchical <list>``, whose comma-separated
    list declares the taxonomy, in one of two forms (``hierarchy_form``):

    * **paths** (FunCat, ImageCLEF trees): every node as its path from the root (``01/01/03``), the
      parent being the path prefix; data rows name nodes by their paths;
    * **edges** (Gene Ontology DAGs): every edge as ``parent/child`` (``GO0003674/GO0003774``),
      a node may have several parents; data rows name nodes by their ids (``GO0003774``).

    In data rows the last field is the node set joined by ``@``. The other attributes are the
    features:

    * numeric ones, one column each; ``?`` (missing) becomes NaN;
    * nominal ones (``{a,b,c}``), **one-hot encoded**: one column per declared value, in
      declaration order, named ``"<attribute>=<value>"``, holding 1 for the row's value and 0
      for the others; a missing ``?`` gives NaN in every column of that attribute (as a missing
      numeric value gives NaN in its column). A nominal attribute whose values are exactly
      ``{0,1}`` is already an indicator and stays one 0/1 column named after the attribute.

    Duplicate declarations are dropped.

    Parameters
    ----------
    text : str or bytes
        The file's contents (bytes in UTF-8).
    source : str, default=""
        The file's name, which messages put before the line (as ``read_arff``'s do).

    Returns
    -------
    feature_names : list of str
        One per column of X (nominal attributes expanded as above).
    X : ndarray of shape (n_samples, n_features)
        Features, NaN where the file has ``?``.
    nodes : list of str
        The declaration list, deduplicated, in declaration order: node paths, or ``parent/child``
        edges.
    labels : list of list of str
        Each row's nodes as written (paths or node ids; ancestors are implied, not necessarily
        listed).

    Raises
    ------
    ValueError
        Naming the line, for anything else: string or date attributes, sparse rows, a missing or
        misplaced hierarchical attribute, wrong field counts, values that are neither numbers nor
        declared nominal values, undeclared labels.
    """
    text = document_text(text, source or "text")
    attributes: list[Attribute] = []
    names: list[str] = []
    seen_names: set[str] = set()
    budget = ValueBudget(source, _BYTES_PER_VALUE)
    hierarchy: list[str] | None = None
    rows: list[list[float]] = []
    labels: list[list[str]] = []
    in_data = False
    declared_set: set[str] = set()
    for lineno, raw in enumerate(text_lines(text, budget), 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        where = source_line(source, lineno)
        if not in_data:
            keyword = header_keyword(line, where)
            if keyword == "attribute":
                if hierarchy is not None:
                    raise ValueError(f"{where}: the hierarchical attribute must be the last attribute")
                budget.add_declaration(line, lineno)
                attribute = parse_attribute(line, where, lineno)
                # as the MULAN reader refuses; a set, since a scan made 40,000 attributes take 56 s
                if attribute.name in seen_names:
                    raise ValueError(f"{where}: attribute {attribute.name!r} is declared twice")
                seen_names.add(attribute.name)
                if attribute.kind == "hierarchical":
                    declared = [v.strip() for v in attribute.values[0].split(",") if v.strip()]
                    if not declared:
                        raise ValueError(f"{where}: the hierarchical attribute declares no nodes")
                    hierarchy = list(dict.fromkeys(declared))
                    try:
                        declared_set = set(declared_nodes(hierarchy))
                    except ValueError as exc:
                        raise ValueError(f"{where}: {exc}") from None
                elif attribute.kind == "numeric":
                    attributes.append(attribute)
                    names.append(attribute.name)
                elif attribute.kind == "nominal":
                    attributes.append(attribute)
                    names.extend(nominal_columns(attribute))
                else:
                    raise ValueError(
                        f"{where}: attribute {attribute.name!r} has type {attribute.kind!r}; only numeric "
                        "and nominal features and the final hierarchical attribute are supported"
                    )
            elif keyword == "data":
                if hierarchy is None:
                    raise ValueError(f"{where}: @DATA before any 'hierarchical' class attribute")
                in_data = True
                unique_columns(names, source or "text")
                form_note = (
                    " (the declaration was read as parent/child edges, since each of its entries has exactly one "
                    "'/'; a path-form taxonomy lists its top-level nodes too)"
                    if hierarchy_form(hierarchy) == "edges"
                    else ""
                )
                encoders = [_encoder(a) for a in attributes]
            continue
        check_data_line(line, where)
        if line.startswith("{"):
            raise ValueError(f"{where}: sparse ARFF rows are not supported")
        budget.reserve(line.count(",") + 1, lineno)
        values = split_fields(line, where)
        if len(values) != len(attributes) + 1:
            raise ValueError(f"{where}: {len(values)} values for {len(attributes) + 1} attributes")
        row: list[float] = []
        try:
            for encode, value in zip(encoders, values[:-1], strict=True):
                encode(value.strip(), row)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        budget.add(len(row) + _VALUES_PER_ROW, lineno)
        rows.append(row)
        # the labels' strings, before they are split: a string and a list slot each, and the
        # strings of the split before they are stripped (at one value each, 20 labels a row took
        # twice the budget, probe DM)
        budget.add(_VALUES_PER_LABEL * (values[-1].count("@") + 1), lineno)
        try:  # ARFF may quote any value, this string too (probe CC)
            node_set = unquote(values[-1], "the node set")
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row_labels = [v.strip() for v in node_set.split("@")]
        for lab in row_labels:
            if lab not in declared_set:
                raise ValueError(f"{where}: label {lab!r} is not a declared node of the hierarchy{form_note}")
        labels.append(row_labels)
    if hierarchy is None:
        raise ValueError(f"{source + ': ' if source else ''}no '@ATTRIBUTE class hierarchical ...' declaration found")
    if not in_data:  # a file cut short (an interrupted copy) read as a split of no rows (probe EG)
        raise ValueError(f"{source + ': ' if source else ''}no @DATA section (is the file complete?)")
    X = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))
    return names, X, hierarchy, labels


def _encoder(attribute: Attribute):
    """A function appending one field's column(s) to a row (see :func:`read_hmc_arff`)."""
    if attribute.kind == "numeric":

        def numeric(value: str, row: list[float]) -> None:
            value = value.strip()
            if value[:1] in ("'", '"'):  # any value may be quoted in ARFF, numbers too (probe CC)
                value = unquote(value, "value")
                number = parse_number(value)  # a quoted '?' is a value, and no number
            else:
                number = np.nan if value == "?" else parse_number(value)
            if number is None:  # float() also took "inf", "nan", "1e999", "1_000" and non-ASCII digits
                raise ValueError(f"attribute {attribute.name!r}: {value[:40]!r} is not a finite number")
            row.append(number)

        return numeric
    if is_indicator(attribute):

        def indicator(value: str, row: list[float]) -> None:
            if value.strip() == "?":  # missing; a quoted '?' is a value (ARFF)
                row.append(np.nan)
                return
            value = unquote(value, "value")
            if value in ("0", "1"):
                row.append(float(value))
            else:
                raise ValueError(f"attribute {attribute.name!r}: {value[:40]!r} is not one of its values 0, 1")

        return indicator
    position = {v: i for i, v in enumerate(attribute.values)}
    width = len(position)

    def onehot(value: str, row: list[float]) -> None:
        if value.strip() == "?":  # missing; a quoted '?' is a value (ARFF)
            row.extend([np.nan] * width)
            return
        value = unquote(value, "value")
        i = position.get(value)
        if i is None:
            raise ValueError(f"attribute {attribute.name!r}: {value[:40]!r} is not one of its declared values")
        block = [0.0] * width
        block[i] = 1.0
        row.extend(block)

    return onehot


def _component_key(component: str) -> tuple:
    # Natural order of the components: numbers numerically, other codes (e.g. "a", or "²", a digit to
    # str.isdigit that int() refuses) after them. Codes equal as numbers ("01" and "1") are told
    # apart by their text: tied, they interleaved their subtrees ("01", "1", "1/2", "01/3"). Numbers
    # compare by the length and text of their digits without leading zeros, not by int(): a code of
    # 5,000 digits stopped the reader with Python's own limit on integer conversion.
    if component.isascii() and component.isdigit():
        digits = component.lstrip("0")
        return (0, len(digits), digits, component)
    return (1, 0, "", component)


def _taxonomy(nodes: list[str]) -> tuple[list[str], np.ndarray]:
    """Node names (virtual root first, then the paths in depth-first preorder, siblings in the
    natural order of their last components) and parent array.

    The preorder is walked from each node's children, keyed by their last component alone: a sort
    of the whole paths by a key per component held every component of every path at once, 1.24 GB
    for a 30 MB chain of 5,500 levels, in one C call that Ctrl-C waited 1.8 s for (probe DM)."""
    if "root" in nodes:  # it would share the virtual root's name, and take its labels
        raise ValueError("node 'root': the virtual root has that name; a path-form taxonomy cannot declare it")
    declared = set(nodes)
    children: dict[str, list[tuple[tuple, str]]] = {"": []}
    for path in nodes:
        prefix, _, last = path.rpartition("/")
        # declared nodes only: "root/1" was put below the virtual root, a sibling of "1" (probe CB)
        if prefix and prefix not in declared:
            raise ValueError(f"node {path!r}: its parent {prefix!r} is not declared")
        children.setdefault(prefix, []).append((_component_key(last), path))
    names = ["root"]
    parent_ids = [-1]
    stack = [(0, child) for child in _siblings(children[""])]
    while stack:
        parent_id, path = stack.pop()
        names.append(path)
        parent_ids.append(parent_id)
        stack.extend((len(names) - 1, child) for child in _siblings(children.get(path, [])))
    return names, np.array(parent_ids, dtype=np.int64)


def _siblings(keyed: list[tuple[tuple, str]]) -> list[str]:
    """Sibling paths in reverse natural order, as a stack pops them in order."""
    keyed.sort(reverse=True)
    return [path for _, path in keyed]


def _dag_taxonomy(edges: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """Node names and parent sets of a taxonomy declared as ``parent/child`` edges.

    Node 0 is the root: the node named ``"root"`` when the edges have one, else a virtual root
    named ``"root"``; every other node without a parent hangs below it. The other nodes follow in
    a topological order (ties broken by name), so every parent id is smaller than its child's.
    Cycles are refused, naming a node on one.
    """
    parents_of: dict[str, set[str]] = {}
    for edge in edges:
        parent, _, child = edge.partition("/")
        if not parent or not child or "/" in child:
            raise ValueError(f"edge {edge!r} is not 'parent/child'")
        if child == "root":
            raise ValueError(f"edge {edge!r}: the root cannot have a parent")
        parents_of.setdefault(parent, set())
        parents_of.setdefault(child, set()).add(parent)
    parents_of.pop("root", None)
    for ps in parents_of.values():
        if not ps:
            ps.add("root")
    children: dict[str, list[str]] = {"root": []}
    for node, ps in parents_of.items():
        for p in ps:
            children.setdefault(p, []).append(node)
    waiting = {node: len(ps) for node, ps in parents_of.items()}
    ready = ["root"]
    names: list[str] = []
    while ready:
        node = heapq.heappop(ready)
        names.append(node)
        for child in children.get(node, ()):
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, child)
    if len(names) != len(parents_of) + 1:
        stuck = min(node for node, count in waiting.items() if count)
        raise ValueError(f"the taxonomy's edges form a cycle (through or above node {stuck!r})")
    index = {name: i for i, name in enumerate(names)}
    parents = [np.zeros(0, dtype=np.int64)]
    parents += [np.array(sorted(index[p] for p in parents_of[name]), dtype=np.int64) for name in names[1:]]
    return names, parents


def _closure_rows_dag(labels: list[list[str]], index: dict[str, int], parents: list[np.ndarray]) -> np.ndarray:
    """0/1 node rows holding each row's labels and all their ancestors, through every parent."""
    _capi.check_output((len(labels), len(parents)), "Y, the rows × nodes targets of the file")
    Y = np.zeros((len(labels), len(parents)), dtype=np.int64)
    for i, row in enumerate(labels):
        Y[i, [index[lab] for lab in row]] = 1
    for v in range(len(parents) - 1, 0, -1):  # children after parents: sweep from the last node up
        if parents[v].size:
            Y[:, parents[v]] |= Y[:, v : v + 1]
    return Y


def _closure_rows(labels: list[list[str]], index: dict[str, int], parent: np.ndarray) -> np.ndarray:
    _capi.check_output((len(labels), parent.size), "Y, the rows × nodes targets of the file")
    Y = np.zeros((len(labels), parent.size), dtype=np.int64)
    for i, row in enumerate(labels):
        for lab in row:
            v = index[lab]
            while v >= 0 and not Y[i, v]:
                Y[i, v] = 1
                v = parent[v]
    return Y


def _single_paths(labels: list[list[str]], index: dict[str, int], parent: np.ndarray, split: str) -> np.ndarray:
    """The deepest node of each row, checking that the row's nodes all lie on its root path."""
    depth = np.zeros(parent.size, dtype=np.int64)
    for v in range(1, parent.size):  # parents first
        depth[v] = depth[parent[v]] + 1
    y = np.empty(len(labels), dtype=np.int64)
    for i, row in enumerate(labels):
        ids = [index[lab] for lab in row]
        v = max(ids, key=lambda u: depth[u])
        deepest = v
        chain = set()
        while v > 0:
            chain.add(v)
            v = parent[v]
        if not set(ids) - {0} <= chain:
            raise ValueError(f"{split} row {i}: labels {row} are not one path from the root")
        y[i] = deepest
    return y
