"""Data intake (issue 15): MULAN sparse multi-label sets, data sets the loaders do not know by name,
nominal features in Clus HMC files and Gene Ontology DAG taxonomies.

Synthetic files are written in tmp_path; the tests on the shared data are skipped, with the places
looked at, when the data directory is absent (COMBPRED_DATA, or ../shared/datasets next to a
source checkout).
"""

from __future__ import annotations

import pickle
import random
import tracemalloc
from pathlib import Path

import combpred
import numpy as np
import pytest
from combpred import datasets, spaces
from combpred.datasets import (
    load_hierarchical,
    load_label_ranking,
    load_multilabel,
    read_arff,
    read_hmc_arff,
    read_mulan_arff,
    read_mulan_xml,
)
from combpred.datasets._arff import _DECLARATION_BYTES_PER_CHAR, _TEXT_BYTES_PER_CHAR
from combpred.datasets._hmc import _VALUES_PER_LABEL, _VALUES_PER_ROW
from scipy import sparse


def _shared(sub: str) -> Path | None:
    for folder in datasets.data_home_candidates():
        if (folder / sub).is_dir():
            return folder
    return None


def _needs(sub: str):
    return pytest.mark.skipif(
        _shared(sub) is None,
        reason=f"shared benchmark data ({sub}/) not found (set COMBPRED_DATA to the datasets directory); looked at: "
        + (", ".join(str(p) for p in datasets.data_home_candidates()) or "nothing"),
    )


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No data directory but the test's own: COMBPRED_DATA unset, no source-checkout lookup."""
    monkeypatch.delenv("COMBPRED_DATA", raising=False)
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    return tmp_path


# --------------------------------------------------------------------------------------------
# MULAN multi-label: synthetic files
# --------------------------------------------------------------------------------------------
XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="lab b"></label>
<label name="la"></label>
</labels>
"""

# The labels are not last, and the XML lists them in another order than the ARFF.
SPARSE = """% toy
@relation toy
@attribute w1 {0,1}
@attribute la {0,1}
@attribute w2 numeric
@attribute 'lab b' {0,1}
@attribute colour {red,green,blue}

@data
{0 1,2 2.5,3 1}
{}
{1 1,2 ?,4 blue}
{4 ?, 0 1}
"""

DENSE = """@relation toy
@attribute w1 {0,1}
@attribute la {0,1}
@attribute w2 numeric
@attribute 'lab b' {0,1}
@attribute colour {red,green,blue}
@data
1,0,2.5,1,red
0,0,0,0,red
0,1,?,0,blue
1,0,0,0,?
"""


def test_read_mulan_arff_sparse_rows():
    data = read_mulan_arff(SPARSE, read_mulan_xml(XML), source="toy.arff")
    assert data.feature_names == ["w1", "w2", "colour=red", "colour=green", "colour=blue"]
    assert data.target_names == ["la", "lab b"]  # the ARFF's order, chosen by name
    assert sparse.isspmatrix_csr(data.X) and data.X.dtype == np.float64
    assert sparse.isspmatrix_csr(data.Y) and data.Y.dtype == np.int64
    X = data.X.toarray()
    nan = np.nan
    expected = [
        [1, 2.5, 1, 0, 0],  # colour absent: its first value, red (Weka's sparse convention)
        [0, 0, 1, 0, 0],
        [0, nan, 0, 0, 1],
        [1, 0, nan, nan, nan],  # '?' for a nominal: NaN in every one-hot column
    ]
    np.testing.assert_array_equal(X, expected)
    assert data.Y.toarray().tolist() == [[0, 1], [0, 0], [1, 0], [0, 0]]
    assert data.X.has_canonical_format


def test_read_mulan_arff_dense_rows_give_the_same_matrices():
    a = read_mulan_arff(SPARSE, ["la", "lab b"])
    b = read_mulan_arff(DENSE.encode(), ["la", "lab b"])
    assert a.feature_names == b.feature_names and a.target_names == b.target_names
    np.testing.assert_array_equal(a.X.toarray(), b.X.toarray())
    np.testing.assert_array_equal(a.Y.toarray(), b.Y.toarray())


def _write_set(root: Path, name: str, train: str, test: str, xml: str = XML, folder: str = "multilabel_sparse") -> Path:
    where = root / folder / name
    where.mkdir(parents=True)
    (where / f"{name}.xml").write_text(xml)
    (where / f"{name}-train.arff").write_text(train)
    (where / f"{name}-test.arff").write_text(test)
    return where


def test_load_multilabel_reads_any_name_whose_files_exist(isolated):
    _write_set(isolated, "toy", SPARSE, DENSE)
    train = load_multilabel("toy", data_home=isolated)
    assert sparse.isspmatrix_csr(train.X) and sparse.isspmatrix_csr(train.Y)
    assert train.X.shape == (4, 5) and train.Y.shape == (4, 2)
    assert train.target_names == ["la", "lab b"] and train.subset == "train"
    both = load_multilabel("toy", subset="all", data_home=isolated)
    assert both.X.shape == (8, 5) and sparse.isspmatrix_csr(both.X)
    dense = load_multilabel("toy", subset="all", data_home=isolated, sparse=False)
    assert isinstance(dense.X, np.ndarray) and dense.X.flags.c_contiguous and dense.X.dtype == np.float64
    assert isinstance(dense.Y, np.ndarray) and dense.Y.dtype == np.int64
    np.testing.assert_array_equal(dense.X, both.X.toarray())
    np.testing.assert_array_equal(dense.Y[:4], dense.Y[4:])
    # a folder named after the set directly under the data directory (as scene/, yeast/) works too
    _write_set(isolated, "flat", DENSE, DENSE, folder=".")
    assert load_multilabel("flat", subset="test", data_home=isolated).X.shape == (4, 5)


def test_load_multilabel_unknown_name_lists_known_names_and_paths(isolated):
    with pytest.raises(ValueError, match="unknown multi-label data set 'nothing'") as info:
        load_multilabel("nothing", data_home=isolated)
    message = str(info.value)
    assert "'medical'" in message and "'bibtex'" in message
    assert str(isolated / "multilabel_sparse" / "nothing" / "nothing.xml") in message
    with pytest.raises(FileNotFoundError, match="medical"):
        load_multilabel("medical", data_home=isolated)
    with pytest.raises(ValueError, match="subset"):
        load_multilabel("medical", subset="valid", data_home=isolated)


@pytest.mark.parametrize("name", ["../etc", "a/b", ".hidden", "", "x..y"])
def test_names_cannot_escape_the_data_directory(name, isolated):
    for load in (load_multilabel, load_label_ranking, load_hierarchical):
        with pytest.raises(ValueError, match="not a valid"):
            load(name, data_home=isolated)


HEADER = """@relation t
@attribute f0 numeric
@attribute f1 {0,1}
@attribute y0 {0,1}
@attribute y1 {0,1}
@data
"""


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (HEADER + "{0 1,x 1}\n", r"line 7: sparse index 'x' is not a non-negative integer"),
        (HEADER + "{0 1}\n{-1 1}\n", r"line 8: sparse index '-1'"),
        (HEADER + "{0 1,4 1}\n", r"line 7: sparse index 4 is out of range \(the file has 4 attributes\)"),
        # it said "is not a non-negative integer" of these
        (HEADER + "{99999999999999999999999 1}\n", r"line 7: sparse index 99999999999999999999999 is out of range"),
        (HEADER + "{" + "9" * 5000 + " 1}\n", r"line 7: sparse index 9{40} is out of range"),
        (HEADER + "{0 1,2 1,0 2}\n", r"line 7: sparse index 0 appears twice"),
        (HEADER + "{0 abc}\n", r"line 7: attribute 'f0': 'abc' is not a finite number"),
        (HEADER + "{0 1e999}\n", r"line 7: attribute 'f0': '1e999' is not a finite number"),
        (HEADER + "{0 nan}\n", r"not a finite number"),
        (HEADER + "{0 1_0}\n", r"not a finite number"),
        (HEADER + "{1 2}\n", r"line 7: attribute 'f1': '2' is not one of its declared values"),
        (HEADER + "{2 2}\n", r"line 7: label 'y0' has value '2'; labels must be 0 or 1"),
        (HEADER + "1,0,?,0\n", r"line 7: label 'y0' has value '\?'"),
        (HEADER + "{0 1\n", r"line 7: a sparse row must end with '}'"),
        (HEADER + "{0}\n", r"line 7: sparse entry '0' is not 'index value'"),
        (HEADER + "1,0,1\n", r"line 7: 3 values for 4 attributes"),
        (HEADER + "1,0,'1,0\n", r"line 7: unterminated ' quote"),
        (HEADER.replace("@data\n", ""), r"no @DATA section"),
        (HEADER.replace("@attribute y1 {0,1}", "@attribute y1 {0,2}"), r"line 5: label 'y1' must be declared"),
        (HEADER.replace("@attribute y1 {0,1}", "@attribute y1 string"), r"line 5: label 'y1' has type 'string'"),
        (HEADER.replace("@attribute f0 numeric", "@attribute f0 date"), r"line 2: attribute 'f0' has type 'date'"),
        (HEADER.replace("@attribute f0 numeric", "@attribute f1 numeric"), r"line 3: attribute 'f1' is declared twice"),
        (
            HEADER.replace("@attribute y1 {0,1}", "@attribute z {0,1}"),
            r"are not attributes of the ARFF file, e\.g\. 'y1'",
        ),
        (HEADER.replace("@attribute f0 numeric", "@attribute f0 {a,a}"), r"line 2: .*declared twice"),
        (HEADER.replace("@attribute f0 numeric", "@attribute f0 {a,b"), r"line 2: .*must end with"),
        (HEADER.replace("@attribute f0 numeric", "@attribute f0"), r"line 2: malformed @attribute"),
        (HEADER.replace("@attribute f0 numeric", "1,2,3"), r"line 2: expected @RELATION, @ATTRIBUTE or @DATA"),
        (b"@data\n\xff\n", r"not UTF-8"),
    ],
)
def test_read_mulan_arff_names_file_and_line(text, match):
    with pytest.raises(ValueError, match=match) as info:
        read_mulan_arff(text, ["y0", "y1"], source="bad.arff")
    assert str(info.value).startswith("bad.arff")


@pytest.mark.parametrize(
    ("xml", "match"),
    [
        ("<labels><label name='a'/>", "malformed XML"),
        ("<labels/>", "no <label"),
        ("<labels><label/></labels>", "no name"),
        ("<labels><label name='a'/><label name='a'/></labels>", "listed twice"),
        ('<!DOCTYPE x [<!ENTITY a "aaaa">]><labels><label name="&a;"/></labels>', "document type"),
    ],
)
def test_read_mulan_xml_errors(xml, match):
    with pytest.raises(ValueError, match=match) as info:
        read_mulan_xml(xml, source="bad.xml")
    assert str(info.value).startswith("bad.xml")


def test_read_mulan_xml_nested_labels_any_namespace():
    xml = '<labels xmlns="urn:x"><label name="a"><label name="a.b"/></label><label name="c"/></labels>'
    assert read_mulan_xml(xml.encode()) == ["a", "a.b", "c"]


def _check_valid(result, n_labels: int) -> None:
    """What every successful parse must satisfy."""
    X, Y = result.X, result.Y
    assert sparse.isspmatrix_csr(X) and X.dtype == np.float64
    assert sparse.isspmatrix_csr(Y) and Y.dtype == np.int64
    assert X.shape == (Y.shape[0], len(result.feature_names))
    assert Y.shape[1] == len(result.target_names) == n_labels
    assert X.has_canonical_format and Y.has_canonical_format
    assert not np.isinf(X.data).any()
    assert np.all(Y.data == 1)


_ALPHABET = list("{}, \n\t'\"%?@01289-+.eE_xX") + ["@data", "@attribute", "{0,1}", "numeric", "\x00", "é"]


def _mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        i = rng.randrange(len(text) + 1)
        if op == 0 and text:  # delete a span
            text = text[:i] + text[i + rng.randint(1, 5) :]
        elif op == 1:  # insert a significant character or keyword
            text = text[:i] + rng.choice(_ALPHABET) + text[i:]
        elif op == 2 and i < len(text):  # replace one character
            text = text[:i] + rng.choice(_ALPHABET) + text[i + 1 :]
        elif op == 3:  # duplicate or drop a line
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            lines[k:k] = [lines[k]] if rng.random() < 0.5 else []
            if rng.random() < 0.5 and len(lines) > 1:
                del lines[k]
            text = "\n".join(lines)
        elif op == 4:  # swap two characters
            j = rng.randrange(len(text) + 1)
            if i < len(text) and j < len(text):
                chars = list(text)
                chars[i], chars[j] = chars[j], chars[i]
                text = "".join(chars)
        else:  # change a number
            text = text.replace(str(rng.randint(0, 4)), str(rng.choice([-1, 5, 99, 10**12])), 1)
    return text


@pytest.mark.parametrize("base", [SPARSE, DENSE], ids=["sparse", "dense"])
def test_fuzzed_arff_raises_value_error_or_parses_validly(base):
    rng = random.Random(15)
    outcomes = {"ok": 0, "ValueError": 0}
    for _ in range(1500):
        text = _mutate(base, rng)
        data = text.encode("utf-8") if rng.random() < 0.5 else text
        if isinstance(data, bytes) and rng.random() < 0.2:  # raw byte damage too
            raw = bytearray(data)
            raw[rng.randrange(len(raw))] = rng.randrange(256)
            data = bytes(raw)
        try:
            result = read_mulan_arff(data, ["la", "lab b"], source="fuzz.arff")
        except ValueError as exc:
            assert str(exc).startswith("fuzz.arff"), str(exc)
            outcomes["ValueError"] += 1
            continue
        _check_valid(result, 2)
        outcomes["ok"] += 1
    assert outcomes["ok"] > 50 and outcomes["ValueError"] > 50  # the mutations exercise both sides


def test_fuzzed_xml_raises_value_error_or_gives_names():
    rng = random.Random(16)
    for _ in range(500):
        text = _mutate(XML, rng)
        try:
            names = read_mulan_xml(text, source="fuzz.xml")
        except ValueError as exc:
            assert str(exc).startswith("fuzz.xml")
            continue
        assert names and all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names)


# --------------------------------------------------------------------------------------------
# MULAN multi-label: the shared data (multilabel_sparse/PROVENANCE.md)
# --------------------------------------------------------------------------------------------
MULTILABEL = {  # train rows, test rows, features, labels, label cardinality (all rows)
    "medical": (333, 645, 1449, 45, 1.25),
    "enron": (1123, 579, 1001, 53, 3.38),
    "bibtex": (4880, 2515, 1836, 159, 2.40),
}


@_needs("multilabel_sparse")
@pytest.mark.parametrize("name", sorted(MULTILABEL))
def test_multilabel_sparse_sets_match_provenance(name):
    n_train, n_test, p, k, cardinality = MULTILABEL[name]
    train = load_multilabel(name)
    test = load_multilabel(name, subset="test")
    assert train.X.shape == (n_train, p) and test.X.shape == (n_test, p)
    assert train.Y.shape == (n_train, k) and test.Y.shape == (n_test, k)
    for part in (train, test):
        assert sparse.isspmatrix_csr(part.X) and part.X.dtype == np.float64
        assert sparse.isspmatrix_csr(part.Y) and part.Y.dtype == np.int64
        assert np.all(part.X.data == 1)  # binary bag of words, zeros implicit
    assert (train.Y.sum() + test.Y.sum()) / (n_train + n_test) == pytest.approx(cardinality, abs=0.005)
    xml = _shared("multilabel_sparse") / "multilabel_sparse" / name / f"{name}.xml"
    assert sorted(train.target_names) == sorted(read_mulan_xml(xml.read_bytes()))
    assert len(train.feature_names) == p and not set(train.feature_names) & set(train.target_names)
    both = load_multilabel(name, subset="all")
    assert both.X.shape == (n_train + n_test, p)
    assert (both.X[:n_train] != train.X).nnz == 0


@_needs("multilabel_sparse")
def test_enron_labels_are_taken_by_name_not_position():
    # enron's ARFF declares its labels in an order unlike the XML's (its last attributes are D.D4, C.C13, D.D14)
    data = load_multilabel("enron", subset="test")
    assert data.target_names[-3:] == ["D.D4", "C.C13", "D.D14"]
    assert "A.A1" in data.target_names and "A.A1" not in data.feature_names


@_needs("yeast")
def test_dense_mulan_yeast_equals_the_bundled_loader():
    data = load_multilabel("yeast", subset="test", sparse=False)
    bundled = datasets.load_yeast()
    np.testing.assert_array_equal(data.X, bundled.X_test)
    np.testing.assert_array_equal(data.Y, bundled.Y_test)
    assert data.target_names == bundled.target_names


# --------------------------------------------------------------------------------------------
# label ranking and hierarchical: names not hard-coded
# --------------------------------------------------------------------------------------------
def test_label_ranking_reads_any_name_whose_file_exists(isolated):
    (isolated / "label_ranking").mkdir()
    (isolated / "label_ranking" / "my_set.csv").write_text("2,1,3\n0.5,2,1,3\n-0.5,1,2,3\n")
    X, Y = load_label_ranking("my_set", data_home=isolated, return_X_y=True)
    np.testing.assert_array_equal(Y, [[2, 1, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match="unknown label-ranking data set 'other'") as info:
        load_label_ranking("other", data_home=isolated)
    assert "'iris'" in str(info.value) and str(isolated / "label_ranking" / "other.csv") in str(info.value)
    # a shipped name still loads from the package when no directory holds it
    assert load_label_ranking("iris", data_home=isolated).filename.endswith("iris.csv.gz")


HMC_TREE = """@RELATION toy
@ATTRIBUTE a NUMERIC
@ATTRIBUTE class hierarchical 1,1/1,1/2,2
@DATA
0.5,1/1
1.5,2
"""


def test_load_hierarchical_reads_any_name_whose_files_exist(isolated):
    folder = isolated / "hierarchical_funcat_go" / "toy"
    folder.mkdir(parents=True)
    for split in ("test", "train", "valid"):
        (folder / f"toy.{split}.arff").write_text(HMC_TREE)
    data = load_hierarchical("toy", data_home=isolated)
    assert data.splits == ["train", "valid", "test"]
    assert data.node_names == ["root", "1", "1/1", "1/2", "2"]
    assert data.parent.tolist() == [-1, 0, 1, 1, 0] and data.is_tree
    assert data.Y_train.tolist() == [[1, 1, 1, 0, 0], [1, 0, 0, 0, 1]]
    paths = load_hierarchical("toy", data_home=isolated, targets="paths")
    assert paths.y_valid.tolist() == [2, 4]
    # ImCLEF's naming (<name>_Train.arff) gives the same splits
    other = isolated / "hierarchical_funcat_go" / "Toy2"
    other.mkdir()
    (other / "Toy2_Train.arff").write_text(HMC_TREE)
    (other / "Toy2_Test.arff").write_text(HMC_TREE)
    assert load_hierarchical("Toy2", data_home=isolated).splits == ["train", "test"]


def test_load_hierarchical_reads_every_split_from_one_directory(isolated):
    """A data directory holding one split of a known set: that split was read from it and the others
    from the next directory holding them, a 10-row train beside the shared valid and test, without
    a word (probe EX). Every split now comes from one directory, and a partial copy is named."""
    folder = isolated / "hierarchical_funcat_go" / "cellcycle_FUN"
    folder.mkdir(parents=True)
    (folder / "cellcycle_FUN.train.arff").write_text(HMC_TREE)
    with pytest.raises(FileNotFoundError, match=r"holds 'train' of this data set but not .*cellcycle_FUN\.valid\.arff"):
        load_hierarchical("cellcycle_FUN", data_home=isolated)
    for split in ("valid", "test"):
        (folder / f"cellcycle_FUN.{split}.arff").write_text(HMC_TREE)
    assert load_hierarchical("cellcycle_FUN", data_home=isolated).X_test.shape == (2, 1)


def test_load_hierarchical_names_splits_by_the_last_part_of_the_file_name(isolated):
    """Files named cellcycle_FUN.<split>.arff in a folder named cellcycle gave splits 'fun.train', ...
    (keys X_fun.train no attribute reaches, the test split first, probe EX)."""
    folder = isolated / "hierarchical_funcat_go" / "cellcycle"
    folder.mkdir(parents=True)
    for split in ("test", "train", "valid"):
        (folder / f"cellcycle_FUN.{split}.arff").write_text(HMC_TREE)
    data = load_hierarchical("cellcycle", data_home=isolated)
    assert data.splits == ["train", "valid", "test"] and data.X_valid.shape == (2, 1)


def test_known_multilabel_names_read_either_layout_of_data_home(isolated):
    """A known name's files in data_home under the other documented layout (multilabel_sparse/yeast/
    for yeast, medical/ for medical) were passed over for the next directory's copy (probe EX)."""
    for relative, name in (("multilabel_sparse/yeast", "yeast"), ("medical", "medical")):
        folder = isolated / relative
        folder.mkdir(parents=True)
        (folder / f"{name}.xml").write_text(XML)
        (folder / f"{name}-train.arff").write_text(DENSE)
        data = load_multilabel(name, data_home=isolated, sparse=False)
        assert data.X.shape[0] == 4 and data.target_names == ["la", "lab b"]


def test_arff_escapes_of_control_characters_are_the_characters():
    """Weka writes a tab, newline or carriage return in a quoted name as \\t, \\n, \\r: they were read
    as the bare letters, 'dark\\tred' becoming the column name 'colour=darktred' (probe EX)."""
    text = "@relation r\n@attribute 'a\\tb' numeric\n@attribute 'c\\nd\\'s\\\\' numeric\n@data\n1,2\n"
    assert read_arff(text)[0] == ["a\tb", "c\nd's\\"]


def test_load_hierarchical_splits_may_declare_the_taxonomy_in_any_order(isolated):
    """The taxonomy is the set of declared nodes: a split listing them in another order was refused
    as declaring "different features or taxonomy" (probe CS). Splits that do differ are told
    apart: which of the two, and what differs."""
    folder = isolated / "hierarchical_funcat_go" / "toy"
    folder.mkdir(parents=True)
    (folder / "toy.train.arff").write_text(HMC_TREE)
    (folder / "toy.test.arff").write_text(HMC_TREE.replace("1,1/1,1/2,2", "2,1/2,1,1/1"))
    data = load_hierarchical("toy", data_home=isolated)
    assert data.node_names == ["root", "1", "1/1", "1/2", "2"]
    assert data.Y_test.tolist() == data.Y_train.tolist() == [[1, 1, 1, 0, 0], [1, 0, 0, 0, 1]]
    (folder / "toy.test.arff").write_text(HMC_TREE.replace("1,1/1,1/2,2", "1,1/1,2"))
    with pytest.raises(ValueError, match=r"split 'test' declares another taxonomy than split 'train': '1/2' in one"):
        load_hierarchical("toy", data_home=isolated)
    (folder / "toy.test.arff").write_text(HMC_TREE.replace("ATTRIBUTE a NUMERIC", "ATTRIBUTE b NUMERIC"))
    with pytest.raises(ValueError, match=r"split 'test' declares other features than split 'train': 'b' where the"):
        load_hierarchical("toy", data_home=isolated)


def test_load_hierarchical_unknown_name_lists_known_names_and_paths(isolated):
    with pytest.raises(ValueError, match="unknown hierarchical data set 'wipo'") as info:
        load_hierarchical("wipo", data_home=isolated)
    message = str(info.value)
    assert "'cellcycle_FUN'" in message and "'gasch2_GO'" in message
    assert str(isolated / "hierarchical_funcat_go" / "wipo") in message
    with pytest.raises(ValueError, match="targets"):
        load_hierarchical("imclef07a", targets="leaves")


# --------------------------------------------------------------------------------------------
# nominal attributes in Clus HMC files
# --------------------------------------------------------------------------------------------
HMC_NOMINAL = """@RELATION 'seq'
@ATTRIBUTE len                                     numeric
@ATTRIBUTE strand                                  {w,c}
@ATTRIBUTE flag                                    {0,1}
@ATTRIBUTE chromosome                              {1,2,'mit x'}
@ATTRIBUTE class                                   hierarchical 01,01/01,02
@DATA
3.5,w,1,2,01/01
?,c,?,'mit x',02
4,?,0,?,01@02
"""


def test_nominal_attributes_are_one_hot():
    names, X, _, labels = read_hmc_arff(HMC_NOMINAL)
    assert names == ["len", "strand=w", "strand=c", "flag", "chromosome=1", "chromosome=2", "chromosome=mit x"]
    nan = np.nan
    expected = [
        [3.5, 1, 0, 1, 0, 1, 0],
        [nan, 0, 1, nan, 0, 0, 1],
        [4, nan, nan, 0, nan, nan, nan],  # '?' -> NaN in every column of the attribute, as for numeric ones
    ]
    np.testing.assert_array_equal(X, expected)
    assert labels == [["01/01"], ["02"], ["01", "02"]]


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("3.5,w,", "3.5,x,", r"line 8: attribute 'strand': 'x' is not one of its declared values"),
        ("3.5,w,1,", "3.5,w,2,", r"line 8: attribute 'flag': '2' is not one of its values"),
        ("{w,c}", "string", r"line 3: attribute 'strand' has type 'string'"),
    ],
)
def test_nominal_attribute_errors(old, new, match):
    with pytest.raises(ValueError, match=match):
        read_hmc_arff(HMC_NOMINAL.replace(old, new, 1))


# --------------------------------------------------------------------------------------------
# DAG taxonomies (Gene Ontology edge lists)
# --------------------------------------------------------------------------------------------
# root -> A, root -> B; A -> C, B -> C (C has two parents); C -> D; B -> E
HMC_DAG = """@RELATION go
@ATTRIBUTE a NUMERIC
@ATTRIBUTE class hierarchical root/GA,root/GB,GA/GC,GB/GC,GC/GD,GB/GE
@DATA
1,GD
2,GE@GA
3,GC
"""


def _write_hmc(root: Path, name: str, text: str) -> None:
    folder = root / "hierarchical_funcat_go" / name
    folder.mkdir(parents=True)
    (folder / f"{name}.train.arff").write_text(text)
    (folder / f"{name}.test.arff").write_text(text)


def test_read_hmc_arff_accepts_edge_lists():
    # the bug: "label 'GD' is not a declared node of the hierarchy"
    _, X, nodes, labels = read_hmc_arff(HMC_DAG)
    assert nodes == ["root/GA", "root/GB", "GA/GC", "GB/GC", "GC/GD", "GB/GE"]
    assert labels == [["GD"], ["GE", "GA"], ["GC"]]
    with pytest.raises(ValueError, match="'GX' is not a declared node"):
        read_hmc_arff(HMC_DAG.replace("3,GC", "3,GX"))


@pytest.mark.parametrize("entry", ["/01", "01/", "01//02"])
def test_read_hmc_arff_refuses_empty_path_components(entry):
    """'/01' was a second top-level node and '01/' a child of '01', where '01//02' was refused
    (probe BH): an empty component is an error at the declaration's line."""
    text = f"@relation r\n@attribute a numeric\n@attribute class hierarchical 01,{entry}\n@data\n1,01\n"
    with pytest.raises(ValueError, match=rf"f\.arff, line 3: hierarchy entry '{entry}' has an empty component"):
        read_hmc_arff(text, source="f.arff")


def test_read_hmc_arff_says_a_declaration_was_read_as_edges():
    """A path-form list that forgot its top-level node has one '/' per entry and reads as edges:
    the undeclared label's error now says so, where it blamed the label alone."""
    text = "@relation r\n@attribute a numeric\n@attribute class hierarchical 01/01,01/02\n@data\n1,01/01\n"
    with pytest.raises(ValueError, match=r"'01/01' is not a declared node .* read as parent/child edges"):
        read_hmc_arff(text)
    with pytest.raises(ValueError, match=r"'GX' is not a declared node of the hierarchy \(the declaration was read"):
        read_hmc_arff(HMC_DAG.replace("3,GC", "3,GX"))


def test_dag_taxonomy_parent_sets_and_closure(isolated):
    _write_hmc(isolated, "go", HMC_DAG)
    data = load_hierarchical("go", data_home=isolated)
    assert data.node_names == ["root", "GA", "GB", "GC", "GD", "GE"]
    assert [p.tolist() for p in data.parents] == [[], [0], [0], [1, 2], [3], [2]]
    assert all(p.dtype == np.int64 for p in data.parents)
    assert all((p < v).all() for v, p in enumerate(data.parents))  # parents first
    assert data.is_tree is False
    assert data.depth.tolist() == [0, 1, 1, 2, 3, 2]
    assert data.is_leaf.tolist() == [False, False, False, False, True, True]
    # closed through every parent: GD -> GC -> GA and GB -> root
    assert data.Y_train.tolist() == [[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 1], [1, 1, 1, 1, 0, 0]]
    assert data.targets == "nodes" and "DAG" in data.DESCR
    # a round trip through pickle keeps the Bunch and its behaviour
    again = pickle.loads(pickle.dumps(data))
    np.testing.assert_array_equal(again.Y_test, data.Y_test)
    assert not hasattr(again, "parent")


def test_tree_representations_of_a_dag_are_refused_clearly(isolated):
    _write_hmc(isolated, "go", HMC_DAG)
    data = load_hierarchical("go", data_home=isolated)
    assert not hasattr(data, "parent")
    with pytest.raises(ValueError, match=r"taxonomy is a DAG: node 'GC' has 2 parents \('GA', 'GB'\)") as info:
        spaces.Subtrees(data.parent)
    assert "targets='nodes'" in str(info.value) and "parents" in str(info.value)
    assert isinstance(info.value, datasets.TaxonomyIsDAGError)
    with pytest.raises(ValueError, match=r"targets='paths' \(single paths\) needs a tree.*node 'GC'"):
        load_hierarchical("go", data_home=isolated, targets="paths")


def test_edge_list_trees_keep_a_parent_array(isolated):
    text = HMC_DAG.replace("GB/GC,", "").replace("1,GD\n", "1,GD@GC\n").replace("2,GE@GA", "2,GE")
    _write_hmc(isolated, "gotree", text)
    data = load_hierarchical("gotree", data_home=isolated)
    assert data.is_tree and data.parent.tolist() == [-1, 0, 0, 1, 3, 2]
    spaces.Subtrees(data.parent).validate(data.Y_train)
    paths = load_hierarchical("gotree", data_home=isolated, targets="paths")
    assert [paths.node_names[v] for v in paths.y_train] == ["GD", "GE", "GC"]


@pytest.mark.parametrize(
    ("edges", "match"),
    [
        ("root/GA,GA/GB,GB/GA", "cycle"),
        ("root/GA,GA/GA", "cycle"),
        ("root/GA,GA/root", "root cannot have a parent"),
    ],
)
def test_bad_edge_lists(isolated, edges, match):
    _write_hmc(isolated, "bad", f"@ATTRIBUTE a NUMERIC\n@ATTRIBUTE class hierarchical {edges}\n@DATA\n1,GA\n")
    with pytest.raises(ValueError, match=match):
        load_hierarchical("bad", data_home=isolated)


def test_edge_lists_without_an_explicit_root_get_a_virtual_one():
    names, parents = datasets._dag_taxonomy(["A/B", "C/B"])
    assert names == ["root", "A", "C", "B"]
    assert [p.tolist() for p in parents] == [[], [0], [0], [1, 2]]


# --------------------------------------------------------------------------------------------
# the shared hierarchical data
# --------------------------------------------------------------------------------------------
@_needs("hierarchical_funcat_go")
def test_gasch2_go_matches_provenance():
    data = load_hierarchical("gasch2_GO")
    assert data.splits == ["train", "valid", "test"]
    for split, n in {"train": 1636, "valid": 849, "test": 1288}.items():
        X, Y = data[f"X_{split}"], data[f"Y_{split}"]
        assert X.shape == (n, 52) and Y.shape == (n, len(data.node_names))
        assert np.all(Y[:, 0] == 1)
        for v in range(1, len(data.parents)):  # closed under every parent
            assert np.all(Y[:, v] <= Y[:, data.parents[v]].min(axis=1))
    assert np.isnan(data.X_train).any()  # '?' present
    assert data.is_tree is False and not hasattr(data, "parent")
    assert data.node_names[0] == "root"
    assert sum(p.size for p in data.parents) == 5837  # every declared edge
    multi = [v for v, p in enumerate(data.parents) if p.size > 1]
    assert len(multi) == 1480
    # a row's nodes are exactly its labels and everything above them, through every parent
    path = _shared("hierarchical_funcat_go") / "hierarchical_funcat_go" / "gasch2_GO" / "gasch2_GO.test.arff"
    _, _, _, labels = read_hmc_arff(path.read_text(encoding="latin-1"))
    index = {n: i for i, n in enumerate(data.node_names)}
    for i in (0, 1, 500, 1287):
        seen, stack = set(), [index[lab] for lab in labels[i]]
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(data.parents[v].tolist())
        assert set(np.flatnonzero(data.Y_test[i]).tolist()) == seen
    with pytest.raises(ValueError, match="DAG"):
        load_hierarchical("gasch2_GO", targets="paths")


@_needs("hierarchical_funcat_go")
def test_tree_sets_report_parent_sets_too():
    data = load_hierarchical("imclef07a")
    assert data.is_tree and data.targets == "paths"
    assert [p.tolist() for p in data.parents[1:]] == [[v] for v in data.parent[1:]]
    assert data.parents[0].size == 0


# --------------------------------------------------------------------------------------------
# fuzzed Clus HMC and label-ranking files, end to end through the loaders
# --------------------------------------------------------------------------------------------
def _check_hierarchical(data) -> None:
    """What every successful load of a Clus HMC set must satisfy."""
    n = len(data.node_names)
    assert len(set(data.node_names)) == n and data.node_names[0] == "root"
    assert len(data.parents) == n and data.parents[0].size == 0
    assert all(p.dtype == np.int64 and (p < v).all() and (p >= 0).all() for v, p in enumerate(data.parents))
    for split in data.splits:
        X, Y = data[f"X_{split}"], data[f"Y_{split}"]
        assert X.dtype == np.float64 and X.ndim == 2 and not np.isinf(X).any()
        assert Y.shape == (X.shape[0], n) and set(np.unique(Y)) <= {0, 1}
        if Y.size:
            assert (Y[:, 0] == 1).all()
        for v, p in enumerate(data.parents[1:], start=1):  # closed under ancestors
            if p.size:
                assert (Y[:, p].min(axis=1) >= Y[:, v]).all()


def _fuzz_files(base: str, rng: random.Random) -> str | bytes:
    text = _mutate(base, rng)
    if rng.random() < 0.2:  # raw byte damage too
        raw = bytearray(text.encode("utf-8"))
        raw[rng.randrange(len(raw))] = rng.randrange(256)
        return bytes(raw)
    return text


@pytest.mark.parametrize("base", [HMC_TREE, HMC_DAG, HMC_NOMINAL], ids=["tree", "dag", "nominal"])
def test_fuzzed_hmc_files_raise_value_error_or_load_validly(isolated, base):
    rng = random.Random(17)
    outcomes = {"ok": 0, "ValueError": 0}
    for trial in range(300):
        name = f"f{trial}"
        folder = isolated / "hierarchical_funcat_go" / name
        folder.mkdir(parents=True)
        damaged = rng.choice(("train", "test"))
        for split in ("train", "test"):
            data = _fuzz_files(base, rng) if split == damaged else base
            path = folder / f"{name}.{split}.arff"
            path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data, encoding="utf-8")
        try:
            loaded = load_hierarchical(name, data_home=isolated)
        except ValueError as exc:
            assert str(exc), "an empty message"
            outcomes["ValueError"] += 1
            continue
        _check_hierarchical(loaded)
        outcomes["ok"] += 1
    assert outcomes["ok"] > 20 and outcomes["ValueError"] > 20  # the mutations exercise both sides


def test_fuzzed_label_ranking_files_raise_value_error_or_load_validly(isolated):
    rng = random.Random(18)
    base = "3,2,4\n0.5,1,2,1,3,4\n-0.5,2e-3,4,3,2,1\n1,-1,1,3,2,4\n"
    (isolated / "label_ranking").mkdir()
    outcomes = {"ok": 0, "ValueError": 0}
    for trial in range(1000):
        data = _fuzz_files(base, rng)
        path = isolated / "label_ranking" / f"f{trial}.csv"
        path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data, encoding="utf-8")
        try:
            X, Y = load_label_ranking(f"f{trial}", data_home=isolated, return_X_y=True)
        except ValueError as exc:
            assert str(exc), "an empty message"
            outcomes["ValueError"] += 1
            continue
        assert X.dtype == np.float64 and X.ndim == 2 and np.isfinite(X).all()
        assert Y.ndim == 2 and Y.shape[0] == X.shape[0] and Y.shape[1] >= 1
        spaces.Permutations(Y.shape[1]).validate(Y)
        outcomes["ok"] += 1
    assert outcomes["ok"] > 20 and outcomes["ValueError"] > 20


@pytest.mark.parametrize("token", ["inf", "-Infinity", "nan", "1e999", "1_000", "\u0661\u0662"])
def test_non_arff_numbers_are_refused_by_every_reader(token):
    # float() takes all of these; the MULAN reader refused them, the HMC and plain ARFF readers
    # turned them into values (inf, nan, 1000, 12)
    hmc = "@ATTRIBUTE a NUMERIC\n@ATTRIBUTE class hierarchical 01,01/01,02\n@DATA\n" + token + ",01/01\n"
    with pytest.raises(ValueError, match=r"line 4: attribute 'a': .* is not a finite number"):
        read_hmc_arff(hmc)
    with pytest.raises(ValueError, match=r"line 3: .* is not a finite number"):
        read_arff("@attribute a numeric\n@data\n" + token + "\n")
    mulan = "@relation r\n@attribute a numeric\n@attribute l {0,1}\n@data\n" + token + ",1\n"
    with pytest.raises(ValueError, match="is not a finite number"):
        read_mulan_arff(mulan, ["l"])


def test_readers_count_the_values_they_hold_against_the_memory_budget():
    # A nominal attribute is one column per declared value, and '?' fills them all: files of
    # 70–150 KB reached 1.3–1.75 GB while read, with no check against the budget
    width, rows = 2000, 400
    nominal = "{" + ",".join(f"v{i}" for i in range(width)) + "}"
    hmc = f"@RELATION r\n@ATTRIBUTE f {nominal}\n@ATTRIBUTE class hierarchical 01,01/01\n@DATA\n" + "?,01\n" * rows
    mulan = f"@relation r\n@attribute f {nominal}\n@attribute L {{0,1}}\n@data\n" + "?,1\n" * rows

    # each reader charges its measured peak per value (HMC 48 bytes, MULAN 64): 100 rows' worth,
    # the document's lines (a value each) and its declarations (a share of the values per character)
    # counted first; an HMC row holds its labels too
    def declared(text, per_value):
        lines = [line for line in text.splitlines() if line.lower().startswith("@attribute")]
        chars = -(-len(text) * _TEXT_BYTES_PER_CHAR // per_value)
        return (
            text.count("\n") + chars + sum(-(-len(line) * _DECLARATION_BYTES_PER_CHAR // per_value) for line in lines)
        )

    # (per row: its values (an HMC row adds its own share), and what it holds after them, its label)
    for reader, text, per_value, values, after, first_row in (
        (read_hmc_arff, hmc, 48, width + _VALUES_PER_ROW, _VALUES_PER_LABEL, 5),
        (lambda t: read_mulan_arff(t, ["L"]), mulan, 64, width + 1, 0, 5),
    ):
        header = declared(text, per_value)
        tripped = (width * 100 - header - values) // (values + after) + 2  # its values pass the budget
        charged = header + (values + after) * (tripped - 1) + values
        with combpred.config_context(max_memory=per_value * width * 100):
            with pytest.raises(
                MemoryError,
                match=rf"line {first_row + tripped - 1}: the values read so far \({charged}, {per_value} bytes",
            ):
                reader(text)
    names, X, _, _ = read_hmc_arff(hmc)  # the default budget holds them
    assert X.shape == (rows, width) and np.isnan(X).all()
    assert read_mulan_arff(mulan, ["L"]).X.shape == (rows, width)


def test_declarations_are_counted_against_the_memory_budget():
    """A header-only file of one nominal attribute with a million values parsed uncounted (a 35 MB
    header of 4 million took 1.1 GB under a 100 MB budget, probe K); declarations are now charged
    by their length before they are parsed."""
    nominal = "{" + ",".join(f"v{i}" for i in range(10**6)) + "}"
    hmc = f"@RELATION r\n@ATTRIBUTE f {nominal}\n@ATTRIBUTE class hierarchical a,b\n@DATA\n"
    mulan = f"@relation r\n@attribute f {nominal}\n@attribute L {{0,1}}\n@data\n"
    with combpred.config_context(max_memory=5 * 10**7):
        for read in (read_hmc_arff, lambda t: read_mulan_arff(t, ["L"]), read_arff):
            with pytest.raises(MemoryError, match=r"line 2: the values read so far"):
                read(hmc if read is read_hmc_arff else mulan)


def test_many_attributes_parse_in_linear_time():
    """The duplicate-name check scanned a list per attribute: 40,000 attributes took 12.6 s
    (read_arff) and 56 s (read_hmc_arff), 200,000 took minutes (probe K). A hang guard: both
    readers now take about half a second for 40,000; the bound leaves room for a slow machine."""
    import time

    n = 40_000
    attributes = "".join(f"@attribute a{i} numeric\n" for i in range(n))
    row = ",".join("0" * n)
    start = time.perf_counter()
    read_arff(f"@relation r\n{attributes}@data\n{row}\n")
    read_hmc_arff(f"@relation r\n{attributes}@attribute class hierarchical a,b\n@data\n{row},a\n")
    assert time.perf_counter() - start < 15


def test_long_numeric_path_codes_are_ordered_without_int():
    """A path component of 5,000 digits stopped the reader with Python's limit on integer
    conversion ('use sys.set_int_max_str_digits()', probe K); codes are ordered by their digits,
    numerically, equal numbers ("10", "010") by their text."""
    long = "9" * 5000
    names, parent = datasets._taxonomy([long, "10", "2", "010", f"{long}/1", "02"])
    assert names == ["root", "02", "2", "010", "10", long, f"{long}/1"]
    assert parent[names.index(f"{long}/1")] == names.index(long)


def test_taxonomy_preorder_is_the_natural_sort_of_the_paths():
    """The taxonomy is walked from each node's children, keyed by their last component, where it
    was sorted by a key of every component of every path (1.24 GB for a 30 MB chain of 5,500 levels,
    in one C call Ctrl-C waited 1.8 s for; probe DM). The order is the sort's, on random trees."""

    def component(c):
        digits = c.lstrip("0")
        return (0, len(digits), digits, c) if c.isascii() and c.isdigit() else (1, 0, "", c)

    rng = np.random.default_rng(3)
    codes = ["1", "01", "2", "10", "a", "b", "²", "003"]
    for _ in range(40):
        paths: list[str] = []
        for _ in range(int(rng.integers(1, 40))):
            parent = paths[int(rng.integers(len(paths)))] + "/" if paths and rng.random() < 0.7 else ""
            path = parent + codes[int(rng.integers(len(codes)))]
            if path not in paths:
                paths.append(path)
        names, parent_ids = datasets._taxonomy(paths)
        assert names == ["root", *sorted(paths, key=lambda p: tuple(component(c) for c in p.split("/")))]
        for i, path in enumerate(names[1:], 1):
            prefix = path.rpartition("/")[0]
            assert parent_ids[i] == (names.index(prefix) if prefix else 0)
    chain = ["/".join(["1"] * depth) for depth in range(1, 3001)]
    names, parent_ids = datasets._taxonomy(chain[::-1])
    assert names[1:] == chain
    np.testing.assert_array_equal(parent_ids, np.arange(-1, 3000))


def test_readers_count_lines_labels_and_fields_before_they_split_them():
    """Some lists were built before anything counted them (probe AV, under a 200 MB budget): the
    lines of a document (60 MB of blank lines took 700 MB), an HMC row's labels (one row of 20
    million took 1.9 GB) and the fields of a MULAN line, split before its width was checked (757
    MB). Each is now checked against the budget before the split, naming the source and line."""
    budget = 64 * 10_000  # ten thousand values
    blank = "@relation r\n@attribute a numeric\n@data\n" + "\n" * 20_000
    hmc = "@RELATION r\n@ATTRIBUTE a NUMERIC\n@ATTRIBUTE class hierarchical 01,01/01\n@DATA\n"
    many_labels = hmc + "1," + "@".join(["01"] * 20_000) + "\n"
    mulan = "@relation r\n@attribute a numeric\n@attribute L {0,1}\n@data\n"
    with combpred.config_context(max_memory=budget):
        for read in (read_arff, read_hmc_arff, lambda t, source: read_mulan_arff(t, ["L"], source=source)):
            with pytest.raises(MemoryError, match=r"^big: its lines"):
                read(blank, source="big")
        with pytest.raises(MemoryError, match=r"line 5: the values read so far"):
            read_hmc_arff(many_labels)
        with pytest.raises(MemoryError, match=r"line 5: the values read so far"):
            read_mulan_arff(mulan + "0," * 20_000 + "1\n", ["L"])
        with pytest.raises(MemoryError, match=r"line 5: the values read so far"):
            read_mulan_arff(mulan + "{" + ",".join(f"{i} 0" for i in range(20_000)) + "}\n", ["L"])
    # within the budget, the same readers take what they took before
    assert read_hmc_arff(hmc + "1,01\n")[1].shape == (1, 1)
    assert read_mulan_arff(mulan + "0.5,1\n", ["L"]).X.shape == (1, 1)


def test_read_mulan_xml_honours_the_declared_encoding():
    """Well-formed XML that declares Latin-1 was refused as "not UTF-8 text" (probe BH)."""
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?><labels><label name="caf\xe9"/></labels>'.encode("latin-1")
    assert read_mulan_xml(latin) == ["café"]
    utf8 = '<?xml version="1.0" encoding="utf-8"?><labels><label name="caf\xe9"/></labels>'.encode()
    assert read_mulan_xml(utf8) == ["café"]
    with pytest.raises(ValueError, match="names an unknown encoding 'nope-42'"):
        read_mulan_xml(b'<?xml version="1.0" encoding="nope-42"?><labels/>')
    with pytest.raises(ValueError, match="not ascii text"):
        read_mulan_xml(b'<?xml version="1.0" encoding="ascii"?><labels><label name="caf\xe9"/></labels>')
    with pytest.raises(ValueError, match="names 'rot13', not a text encoding"):
        read_mulan_xml(b'<?xml version="1.0" encoding="rot13"?><labels><label name="a"/></labels>')


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_read_mulan_xml_reads_wide_encodings_by_their_byte_order_mark(encoding):
    """A UTF-16 or UTF-32 file that declares its encoding was refused as "not UTF-8 text": its
    declaration is not ASCII bytes; the byte-order mark says how to read it, and a DTD in it is
    still refused (probe BK)."""
    doc = '\ufeff<?xml version="1.0" encoding="UTF-16"?><labels><label name="café"/></labels>'
    assert read_mulan_xml(doc.encode(encoding)) == ["café"]
    smuggled = '\ufeff<!DOCTYPE x [<!ENTITY a "b">]><labels><label name="a"/></labels>'
    with pytest.raises(ValueError, match="document type declarations are not accepted"):
        read_mulan_xml(smuggled.encode(encoding))


def test_read_mulan_xml_takes_only_the_declaration_for_one():
    """<?xml-stylesheet ... encoding="latin-1"?> was read as the declaration (probe BK)."""
    doc = '<?xml-stylesheet type="text/xsl" href="l.xsl" encoding="latin-1"?><labels><label name="café"/></labels>'
    assert read_mulan_xml(doc.encode("utf-8")) == ["café"]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_read_mulan_xml_refuses_a_dtd_the_text_check_cannot_see(encoding):
    """UTF-16 without a byte-order mark, read as UTF-8, hid "<!DOCTYPE" behind NULs from the text
    check, and expat, re-detecting the encoding, expanded 17 KB of entities to a 6,000,000-character
    label name (probe BR): the parser itself now refuses the declaration."""
    doc = '<!DOCTYPE labels [<!ENTITY a "' + "x" * 4000 + '">]><labels><label name="' + "&a;" * 1500 + '"/></labels>'
    with pytest.raises(ValueError, match="document type declarations are not accepted"):
        read_mulan_xml(doc.encode(encoding))


@pytest.mark.parametrize(
    "doc",
    [
        b'<?xml version="1.0" encoding="utf-7"?><labels><label name="+2AA-"/></labels>',
        b'<?xml version="1.0" encoding="unicode_escape"?><labels><label name="\\ud800"/></labels>',
        '<labels><label name="\ud800"/></labels>',
    ],
)
def test_read_mulan_xml_names_a_lone_surrogate(doc):
    """Codecs such as utf-7 decode to lone surrogates, which expat's UTF-8 encoding of the text
    refused with a bare UnicodeEncodeError naming no file (probe BW)."""
    with pytest.raises(ValueError, match=r"labels\.xml: .*lone surrogate"):
        read_mulan_xml(doc, source="labels.xml")


def test_a_sparse_row_gives_an_absent_nominal_attribute_its_first_value_even_a_quoted_question_mark():
    # Weka: an attribute a sparse row omits takes its first declared value; the value '?' (quoted:
    # a value, not a missing one) was passed on unquoted and read as missing, NaN in every column
    # of the attribute (probe DI)
    arff = "@relation r\n@attribute a numeric\n@attribute c {'?',y}\n@attribute L1 {0,1}\n@data\n1,'?',0\n{0 1}\n"
    names, X, _, _ = read_mulan_arff(arff, ["L1"])
    assert names == ["a", "c=?", "c=y"]
    np.testing.assert_array_equal(X.toarray(), [[1, 1, 0], [1, 1, 0]])


def test_a_label_file_is_parsed_in_pieces_and_against_the_budget():
    # 60,000 labels, 1.3 MB: the parse crosses the 1 MB pieces expat takes (Ctrl-C lands between
    # them: one Parse of 119 MB ran 5.6 s deaf to it), and a label file that would take more than
    # the budget is refused before its tree is built (351 MB took 6 GB and a bare MemoryError)
    names = [f"label{i}" for i in range(60_000)]
    xml = '<labels xmlns="http://mulan.sourceforge.net/labels">' + "".join(f'<label name="{n}"/>' for n in names)
    xml += "</labels>"
    assert len(xml) > 1 << 20
    assert read_mulan_xml(xml.encode(), source="big.xml") == names
    with combpred.config_context(max_memory=len(xml) * 10):
        with pytest.raises(MemoryError, match=r"^big\.xml: the element tree of its \d+ characters"):
            read_mulan_xml(xml.encode(), source="big.xml")


def test_a_data_path_that_is_no_regular_file_is_named_as_such(isolated):
    # a directory named like a split file was reported as missing, a FIFO named like a label-ranking
    # file as an unknown data set (probe DI)
    _write_set(isolated, "toy", SPARSE, DENSE)
    train = isolated / "multilabel_sparse" / "toy" / "toy-train.arff"
    train.unlink()
    train.mkdir()
    with pytest.raises(ValueError, match=r"toy-train\.arff is there but is not a regular file"):
        load_multilabel("toy", data_home=isolated)
    (isolated / "label_ranking").mkdir()
    (isolated / "label_ranking" / "mine.csv").mkdir()
    with pytest.raises(ValueError, match=r"mine\.csv is there but is not a regular file"):
        load_label_ranking("mine", data_home=isolated)


def test_a_score_too_large_for_the_budget_names_the_embeddings_it_compares():
    # "the result: an output of shape (1000, 4498500)" named an intermediate as the result, which
    # is one value a row (probe DI)
    sp = spaces.Permutations(300)
    Y = np.tile(np.arange(1, 301), (50, 1))
    with combpred.config_context(max_memory=10**6):
        with pytest.raises(MemoryError, match=r"^ψ\(Y_true\) and ψ\(Y_pred\), the embeddings the score compares"):
            sp.score_samples(Y, Y)


def _sparse_file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)  # a hole: no disk, and read back as zeros


@pytest.mark.parametrize("reader", ["label_ranking", "hierarchical", "multilabel_xml", "multilabel_arff"])
def test_a_data_file_beyond_the_budget_is_refused_before_it_is_read(tmp_path, reader):
    """The readers read a whole file, then charged its text: a 1.5 GB file under a budget of
    100 MiB reached 3.2 GB resident before its MemoryError, and a 6 GB one under `ulimit -v`
    ended in a MemoryError with no message (probe EK). A file's size is charged before it is read."""
    size = 200 * 2**20
    if reader == "label_ranking":
        _sparse_file(tmp_path / "label_ranking" / "big.csv", size)
        load, path = (lambda: datasets.load_label_ranking("big", data_home=tmp_path)), "big.csv"
    elif reader == "hierarchical":
        _sparse_file(tmp_path / "hierarchical_funcat_go" / "big" / "big.train.arff", size)
        load, path = (lambda: datasets.load_hierarchical("big", data_home=tmp_path)), "big.train.arff"
    else:
        folder = tmp_path / "multilabel_sparse" / "big"
        _sparse_file(folder / "big.xml", size if reader == "multilabel_xml" else 0)
        if reader == "multilabel_xml":
            path = "big.xml"
        else:
            (folder / "big.xml").write_text(
                '<labels xmlns="http://mulan.sourceforge.net/labels"><label name="a"/></labels>'
            )
            _sparse_file(folder / "big-train.arff", size)
            path = "big-train.arff"
        load = lambda: datasets.load_multilabel("big", subset="train", data_home=tmp_path)  # noqa: E731
    tracemalloc.start()
    try:
        with (
            combpred.config_context(max_memory=50 * 2**20),
            pytest.raises(MemoryError, match=f"{path}: its text") as err,
        ):
            load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "209,715,200 bytes on disk" in str(err.value)
    assert peak < 2**20, peak  # nothing of the file was read


def test_a_compressed_file_is_charged_as_it_is_decompressed(tmp_path):
    # the bundled label-ranking files are gzipped: a gzip bomb is charged block by block
    import gzip

    from combpred.datasets import _arff

    bomb = tmp_path / "bomb.csv.gz"
    with gzip.open(bomb, "wb") as f:
        for _ in range(20):
            f.write(bytes(2**20 * 10))  # 200 MiB of zeros, 200 kB compressed
    tracemalloc.start()
    try:
        with combpred.config_context(max_memory=50 * 2**20), pytest.raises(MemoryError, match="decompressed so far"):
            _arff.read_file(bomb, gz=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60 * 2**20, peak  # a block past a third of the budget, not the whole file


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="a /proc file whose read fails")
def test_a_data_file_whose_read_fails_is_named(tmp_path):
    # /proc/self/pagemap refuses a read from offset 0 of that size: EINVAL, which named no file (probe EL)
    (tmp_path / "label_ranking").mkdir()
    (tmp_path / "label_ranking" / "iris.csv").symlink_to("/proc/self/pagemap")
    with pytest.raises(OSError, match="iris.csv"):
        datasets.load_label_ranking("iris", data_home=tmp_path)
