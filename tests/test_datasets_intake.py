"""Data as users have it (issue 15): MULAN sparse ARFF, nominal HMC attributes, Gene Ontology DAGs
declared as edges, and data sets the loaders do not name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from combpred import datasets
from combpred.datasets import load_hierarchical, load_label_ranking, load_multilabel, read_hmc_arff, read_sparse_arff
from scipy import sparse

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"

SPARSE = """@relation toy
@attribute w1 numeric
@attribute 'lab A' {0,1}
@attribute w2 {0,1}
@attribute labB {0,1}
@data
{0 2.5,1 1}
{2 1,3 1}
0,0,0,1
{}
"""


def test_read_sparse_arff_rows_and_names():
    names, M = read_sparse_arff(SPARSE)
    assert names == ["w1", "lab A", "w2", "labB"]
    assert sparse.isspmatrix_csr(M) and M.dtype == np.float64
    np.testing.assert_array_equal(M.toarray(), [[2.5, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (SPARSE.replace("{0 2.5,1 1}", "{4 1}"), "index 4 is outside the 4 attributes"),
        (SPARSE.replace("{0 2.5,1 1}", "{0 1,0 2}"), "index 0 appears twice"),
        (SPARSE.replace("{0 2.5,1 1}", "{0 x}"), "is not 'index value'"),
        (SPARSE.replace("{0 2.5,1 1}", "{0 2.5,1 1"), "must end with"),
        (SPARSE.replace("{0 2.5,1 1}", "{0 nan}"), "non-finite"),
        (SPARSE.replace("0,0,0,1", "0,0,1"), "3 values for 4 attributes"),
        (SPARSE.replace("@data", ""), "line 7: unexpected header line"),
        (SPARSE.replace("@attribute w1 numeric", "@attribute w1 string"), "only numeric"),
        (SPARSE.split("@data")[0], "no @data"),
    ],
)
def test_read_sparse_arff_refuses_malformed_rows(text, match):
    with pytest.raises(ValueError, match=match):
        read_sparse_arff(text)


def test_read_sparse_arff_fuzz_never_raises_anything_but_value_error():
    rng = np.random.default_rng(0)
    alphabet = list("{}, 0123456789.-e@xn\n'%")
    for _ in range(400):
        text = list(SPARSE)
        for _ in range(rng.integers(1, 6)):
            i = int(rng.integers(len(text)))
            op = rng.integers(3)
            if op == 0:
                text[i] = str(rng.choice(alphabet))
            elif op == 1:
                text.insert(i, str(rng.choice(alphabet)))
            else:
                del text[i]
        try:
            names, M = read_sparse_arff("".join(text))
        except ValueError:
            continue
        assert M.shape[1] == len(names) and np.all(np.isfinite(M.data))


def _write_set(home: Path, name: str) -> None:
    folder = home / "multilabel_sparse" / name
    folder.mkdir(parents=True)
    (folder / f"{name}-train.arff").write_text(SPARSE)
    (folder / f"{name}-test.arff").write_text(SPARSE.replace("{0 2.5,1 1}", "{0 7}"))
    (folder / f"{name}.xml").write_text(
        '<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels">'
        '<label name="labB"></label><label name="lab A"></label></labels>'
    )


def test_load_multilabel_takes_labels_by_name(tmp_path):
    _write_set(tmp_path, "toy")
    data = load_multilabel("toy", data_home=tmp_path)
    assert data.target_names == ["labB", "lab A"] and data.feature_names == ["w1", "w2"]
    assert sparse.isspmatrix_csr(data.X) and sparse.isspmatrix_csr(data.Y)
    np.testing.assert_array_equal(data.X.toarray(), [[2.5, 0], [0, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(data.Y.toarray(), [[0, 1], [1, 0], [1, 0], [0, 0]])
    both = load_multilabel("toy", subset="all", data_home=tmp_path, sparse_targets=False)
    assert both.X.shape == (8, 2) and isinstance(both.Y, np.ndarray) and both.X[4, 0] == 7
    with pytest.raises(ValueError, match="subset"):
        load_multilabel("toy", subset="valid", data_home=tmp_path)
    with pytest.raises(ValueError, match="plain folder name"):
        load_multilabel("../toy", data_home=tmp_path)
    bad = tmp_path / "multilabel_sparse" / "toy" / "toy-train.arff"
    bad.write_text(SPARSE.replace("{2 1,3 1}", "{2 1,3 2}"))
    with pytest.raises(ValueError, match="other than 0 and 1"):
        load_multilabel("toy", data_home=tmp_path)


@pytest.mark.skipif(not (SHARED / "multilabel_sparse").is_dir(), reason="the shared data are not here")
@pytest.mark.parametrize(
    ("name", "train", "test", "features", "labels", "cardinality"),
    [
        ("medical", 333, 645, 1449, 45, 1.25),
        ("enron", 1123, 579, 1001, 53, 3.38),
        ("bibtex", 4880, 2515, 1836, 159, 2.40),
    ],
)
def test_shared_mulan_sets(name, train, test, features, labels, cardinality):
    a = load_multilabel(name, subset="all", data_home=SHARED)
    assert a.X.shape == (train + test, features) and a.Y.shape == (train + test, labels)
    assert abs(a.Y.sum() / a.Y.shape[0] - cardinality) < 0.01
    assert load_multilabel(name, data_home=SHARED).X.shape[0] == train


HMC_NOMINAL = """@RELATION t
@ATTRIBUTE a numeric
@ATTRIBUTE colour {red,'dark blue'}
@ATTRIBUTE class hierarchical 01,01/01,02
@DATA
1,red,01/01
2,?,02
3,'dark blue',01
"""


def test_nominal_attributes_are_one_hot():
    names, X, _, _ = read_hmc_arff(HMC_NOMINAL)
    assert names == ["a", "colour=red", "colour=dark blue"]
    np.testing.assert_array_equal(X[[0, 2]], [[1, 1, 0], [3, 0, 1]])
    assert X[1, 0] == 2 and np.isnan(X[1, 1:]).all()


GO = """@RELATION g
@ATTRIBUTE a numeric
@ATTRIBUTE class hierarchical root/A,root/B,A/C,B/C,C/D,A/E
@DATA
1,D
2,E@B
"""


def _write_hmc(home: Path, name: str, text: str) -> None:
    folder = home / "hierarchical_funcat_go" / name
    folder.mkdir(parents=True)
    for split in ("train", "test"):
        (folder / f"{name}.{split}.arff").write_text(text)


def test_go_dag_from_edges(tmp_path):
    _write_hmc(tmp_path, "toy_GO", GO)
    data = load_hierarchical("toy_GO", data_home=tmp_path, download_if_missing=False)
    assert data.splits == ["train", "test"] and not data.is_tree
    names = data.node_names
    assert names[0] == "root" and set(names) == {"root", "A", "B", "C", "D", "E"}
    pos = {n: i for i, n in enumerate(names)}
    for v, ps in enumerate(data.parents):  # topological: parents first
        assert all(p < v for p in ps)
    assert sorted(names[p] for p in data.parents[pos["C"]]) == ["A", "B"]
    rows = {frozenset(n for n, on in zip(names, r, strict=True) if on) for r in data.Y_train}
    assert rows == {frozenset("root A B C D".split()), frozenset("root A B E".split())}  # closed through every parent
    assert data.depth[pos["D"]] == 3 and data.is_leaf[pos["D"]] and not data.is_leaf[pos["C"]]
    with pytest.raises(ValueError, match="DAG .*'C' has 2 parents"):
        data.parent  # noqa: B018
    with pytest.raises(ValueError, match="DAG"):
        data["parent"]


def test_tree_written_as_edges_has_a_parent_array(tmp_path):
    _write_hmc(tmp_path, "toy_tree", GO.replace(",B/C", "").replace("E@B", "E"))
    data = load_hierarchical("toy_tree", data_home=tmp_path, download_if_missing=False)
    assert data.is_tree and data.parent[0] == -1 and np.all(data.parent[1:] < np.arange(1, len(data.parent)))


def test_cyclic_edges_are_refused(tmp_path):
    _write_hmc(tmp_path, "loop_GO", GO.replace("C/D", "C/D,D/A"))
    with pytest.raises(ValueError, match="cycle"):
        load_hierarchical("loop_GO", data_home=tmp_path, download_if_missing=False)


@pytest.mark.skipif(
    not (SHARED / "hierarchical_funcat_go" / "gasch2_GO").is_dir(), reason="the shared data are not here"
)
def test_shared_gene_ontology_set():
    data = load_hierarchical("gasch2_GO", data_home=SHARED, download_if_missing=False)
    assert data.X_train.shape == (1636, 52) and data.X_valid.shape[0] == 849 and data.X_test.shape[0] == 1288
    assert not data.is_tree and data.Y_train[:, 0].all()
    # every row is closed under every parent
    for v, ps in enumerate(data.parents):
        for p in ps:
            assert np.all(data.Y_train[:, p] >= data.Y_train[:, v])


def test_label_ranking_sets_the_loader_does_not_name(tmp_path):
    folder = tmp_path / "label_ranking"
    folder.mkdir()
    (folder / "mine.csv").write_text("3,2,3\n0.1,0.2,1,2,3\n0.3,0.4,3,1,2\n0.5,0.6,2,3,1\n")
    X, Y = load_label_ranking("mine", data_home=tmp_path, return_X_y=True)
    assert X.shape == (3, 2) and Y.tolist()[1] == [3, 1, 2]
    with pytest.raises(ValueError, match="unknown label-ranking data set 'theirs'"):
        load_label_ranking("theirs", data_home=tmp_path)
    with pytest.raises(ValueError, match="plain file name"):
        load_label_ranking("../mine", data_home=tmp_path)
    assert "mine" not in datasets.LABEL_RANKING_DATASETS
