"""combpred.datasets: label-ranking and hierarchical loaders, checked against each PROVENANCE.md.

The data files live outside the package (COMBPRED_DATA, or ../shared/datasets next to a source
checkout). Tests that need them are skipped, with the places looked at, when they are absent.
"""

import re

import combpred
import numpy as np
import pytest
from combpred import datasets, spaces
from combpred.datasets import load_hierarchical, load_label_ranking, load_multilabel, read_hmc_arff
from combpred.datasets._arff import _DECLARATION_BYTES_PER_CHAR, _TEXT_BYTES_PER_CHAR


def _data_dir():
    for folder in datasets.data_home_candidates():
        if (folder / "label_ranking").is_dir() and (folder / "hierarchical_funcat_go").is_dir():
            return folder
    return None


needs_data = pytest.mark.skipif(
    _data_dir() is None,
    reason="shared benchmark data not found (set COMBPRED_DATA to the datasets directory); looked at: "
    + (
        ", ".join(str(p) for p in datasets.data_home_candidates())
        or "nothing: COMBPRED_DATA is unset and this is not a source checkout"
    ),
)

# label_ranking/PROVENANCE.md: instances, features, labels, distinct rankings
LABEL_RANKING = {
    "iris": (150, 4, 3, 5),
    "wine": (178, 13, 3, 5),
    "glass": (214, 9, 6, 30),
    "vehicle": (846, 18, 4, 18),
    "vowel": (528, 10, 11, 294),
    "authorship": (841, 70, 4, 17),
    "stock": (950, 5, 5, 51),
    "calhousing": (20640, 4, 4, 24),
}


def test_the_table_covers_every_name():
    assert sorted(LABEL_RANKING) == sorted(datasets.LABEL_RANKING_DATASETS)


@pytest.mark.parametrize("name", sorted(LABEL_RANKING))
def test_label_ranking_counts_match_provenance(name):
    n, p, k, distinct = LABEL_RANKING[name]
    data = load_label_ranking(name)
    assert data.X.shape == (n, p)
    assert data.Y.shape == (n, k)
    assert data.Y.dtype == np.int64
    assert np.all(np.sort(data.Y, axis=1) == np.arange(1, k + 1))  # complete rankings
    assert len(np.unique(data.Y, axis=0)) == distinct
    assert np.all(np.isfinite(data.X))
    X, Y = load_label_ranking(name, return_X_y=True)
    np.testing.assert_array_equal(Y, data.Y)
    spaces.Permutations(k).validate(Y)


def test_label_ranking_first_row_of_iris():
    # label_ranking/iris.csv line 2: -0.55556,0.25000,-0.86441,-0.91667,1,2,3
    X, Y = load_label_ranking("iris", return_X_y=True)
    np.testing.assert_allclose(X[0], [-0.55556, 0.25, -0.86441, -0.91667])
    np.testing.assert_array_equal(Y[0], [1, 2, 3])


@needs_data
def test_imclef07a_matches_provenance():
    data = load_hierarchical("imclef07a")
    assert data.X_train.shape == (10000, 80)
    assert data.X_test.shape == (1006, 80)
    assert not np.isnan(data.X_train).any() and not np.isnan(data.X_test).any()  # no '?'
    parent = data.parent
    assert parent.shape == (97,)  # 96 declared nodes + the virtual root
    assert data.node_names[0] == "root" and parent[0] == -1
    assert np.all(parent[1:] < np.arange(1, 97))  # parents come first
    assert np.bincount(data.depth).tolist() == [1, 8, 25, 63]  # 8/25/63 per level
    assert data.is_leaf.sum() == 63
    assert np.array_equal(data.is_leaf, data.depth == 3)
    for y in (data.y_train, data.y_test):  # single, full-depth paths
        assert y.shape in ((10000,), (1006,))
        assert data.is_leaf[y].all()
    # the first Train row's label field is 2@2/1@2/1/3
    assert data.node_names[data.y_train[0]] == "2/1/3"
    space = spaces.HierarchyPaths(parent, leaves_only=True)
    space.validate(data.y_train)
    space.validate(data.y_test)


@needs_data
def test_cellcycle_fun_matches_provenance():
    data = load_hierarchical("cellcycle_FUN")
    sizes = {"train": 1628, "valid": 848, "test": 1281}
    parent = data.parent
    assert parent.shape == (500,)  # 499 FunCat nodes + the virtual root
    assert np.bincount(data.depth).tolist() == [1, 18, 80, 178, 142, 77, 4]
    assert data.splits == ["train", "valid", "test"]
    all_paths = []
    for split, n in sizes.items():
        X, Y = data[f"X_{split}"], data[f"Y_{split}"]
        assert X.shape == (n, 77)
        assert Y.shape == (n, 500)
        assert np.isnan(X).any()  # '?' present, returned as NaN
        assert np.all(Y[:, 0] == 1)
        assert np.all(Y[:, 1:] <= Y[:, parent[1:]])  # closed under parents
        spaces.Subtrees(parent).validate(Y)
        # a "path" ends at a node none of whose children is in the set
        has_child = np.zeros_like(Y)
        np.maximum.at(has_child.T, parent[1:], Y[:, 1:].T)
        all_paths.append(((Y == 1) & (has_child == 0)).sum(axis=1))
    assert np.concatenate(all_paths).mean() == pytest.approx(3.2, abs=0.1)  # "~3.2 paths/gene"
    assert (np.concatenate(all_paths) > 1).mean() > 0.5  # mostly multi-path
    partial = np.zeros(0, dtype=bool)
    for split in sizes:  # paths may stop above a leaf
        Y = data[f"Y_{split}"]
        partial = np.r_[partial, ((Y == 1) & ~data.is_leaf).any(axis=1)]
    assert partial.any()


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown label-ranking data set"):
        load_label_ranking("yeast")
    with pytest.raises(ValueError, match="unknown hierarchical data set"):
        load_hierarchical("wipo")
    # a name of valid characters but too long for a file name reached the file system (OSError)
    for load, kind in (
        (load_label_ranking, "label-ranking"),
        (load_hierarchical, "hierarchical"),
        (load_multilabel, "multi-label"),
    ):
        with pytest.raises(ValueError, match=f"the {kind} data set's name has 300 characters, at most 200"):
            load("a" * 300)


def test_missing_data_directory_lists_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("COMBPRED_DATA_HOME", str(tmp_path / "cache"))  # download_if_missing=False reads it
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    (tmp_path / "explicit").mkdir()
    with pytest.raises(FileNotFoundError) as info:
        load_hierarchical("imclef07a", data_home=tmp_path / "explicit", download_if_missing=False)
    message = str(info.value)
    assert str(tmp_path / "explicit" / "hierarchical_funcat_go") in message
    assert str(tmp_path / "nowhere" / "hierarchical_funcat_go") in message
    assert "COMBPRED_DATA" in message
    assert f"Nor does the download cache {tmp_path / 'cache'} hold it" in message


def test_a_link_to_nothing_is_an_error_not_a_reason_to_read_another_copy(tmp_path, monkeypatch):
    # a data file that is a symbolic link whose target is gone was listed among the places looked
    # at as if nothing were there (session 70's notes), and for a set that another directory or the
    # package holds, that copy was read without a word (probe 82): the link is named, as an error
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    for relative in (
        "hierarchical_funcat_go/imclef07a/ImCLEF07A_Train.arff",
        "label_ranking/notbundled.csv",
        "label_ranking/iris.csv",  # bundled with the package
        "multilabel_sparse/medical/medical.xml",
    ):
        link = tmp_path / "home" / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(tmp_path / "moved_away")
    loads = (
        lambda: load_hierarchical("imclef07a", data_home=tmp_path / "home", download_if_missing=False),
        lambda: load_hierarchical("imclef07a", data_home=tmp_path / "home"),  # not downloaded either
        lambda: load_label_ranking("notbundled", data_home=tmp_path / "home"),
        lambda: load_label_ranking("iris", data_home=tmp_path / "home"),
        lambda: datasets.load_multilabel("medical", data_home=tmp_path / "home"),
    )
    for load in loads:
        with pytest.raises(FileNotFoundError) as info:
            load()
        assert f"is a symbolic link to {str(tmp_path / 'moved_away')!r}, which does not exist" in str(info.value)
        assert str(tmp_path / "home") in str(info.value)


def test_multilabel_splits_without_their_label_file_are_a_partial_copy(tmp_path, monkeypatch):
    # the folder was chosen by <name>.xml alone: a data_home holding the ARFF splits but not the
    # label file was passed over for the next directory's copy, without a word (probe 82)
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    shared = tmp_path / "shared" / "multilabel_sparse" / "toy"
    shared.mkdir(parents=True)
    (shared / "toy.xml").write_text("<labels/>")
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "shared"))
    mine = tmp_path / "home" / "multilabel_sparse" / "toy"
    mine.mkdir(parents=True)
    (mine / "toy-train.arff").write_text("@relation toy\n")
    with pytest.raises(FileNotFoundError, match=r"holds 'toy-train.arff' of 'toy' but not toy.xml, its label file"):
        datasets.load_multilabel("toy", data_home=tmp_path / "home")


def test_a_directory_named_twice_is_searched_once(tmp_path, monkeypatch):
    # COMBPRED_DATA set to the directory data_home names (or to a link to it, or to the source
    # checkout's ../shared/datasets) was searched, and listed in the refusal, twice (probe CJ)
    (tmp_path / "data").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "data")
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: tmp_path / "checkout")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "datasets").symlink_to(tmp_path / "data")
    for env in (tmp_path / "data", tmp_path / "link"):
        monkeypatch.setenv("COMBPRED_DATA", str(env))
        assert datasets.data_home_candidates(tmp_path / "data") == [tmp_path / "data"]
        assert datasets.data_home_candidates() == [env]
        with pytest.raises(ValueError, match="Looked for") as info:
            load_label_ranking("nope")
        assert str(info.value).count("nope.csv") == 1, str(info.value)
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "elsewhere"))
    assert datasets.data_home_candidates(tmp_path / "link") == [
        tmp_path / "link",
        tmp_path / "elsewhere",
    ]
    # a COMBPRED_DATA caught in a loop of links is listed, and data_home still serves (probe CL:
    # the de-duplication raised RuntimeError)
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    (tmp_path / "data" / "label_ranking").mkdir()
    (tmp_path / "data" / "label_ranking" / "iris.csv").write_text("2,1,3\n0.5,2,1,3\n-0.5,1,2,3\n")
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "loop_a"))
    assert datasets.data_home_candidates(tmp_path / "data") == [tmp_path / "data", tmp_path / "loop_a"]
    X, _ = load_label_ranking("iris", data_home=tmp_path / "data", return_X_y=True)
    assert X.shape == (2, 1)


@pytest.mark.parametrize("bad", ["missing", "a_file", ""])
def test_a_data_home_that_is_not_a_directory_is_refused(bad, tmp_path, monkeypatch):
    """A mistyped data_home fell through to $COMBPRED_DATA, ../shared or the bundled copy: the
    user believed their own copy was read."""
    (tmp_path / "a_file").write_text("x")
    home = "" if bad == "" else tmp_path / bad
    for load in (
        lambda: load_label_ranking("iris", data_home=home),
        lambda: datasets.load_multilabel("medical", data_home=home),
        lambda: load_hierarchical("cellcycle_FUN", data_home=home, download_if_missing=False),
    ):
        with pytest.raises(ValueError, match=r"data_home .* is not a directory"):
            load()


@pytest.mark.parametrize("name", sorted(LABEL_RANKING))
def test_label_ranking_ships_with_the_package(name, tmp_path, monkeypatch):
    """With no data directory at all (a pip-installed package), the label-ranking sets load from the
    gzipped copies inside the package (issue 16, item 6: they needed an environment variable)."""
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    data = load_label_ranking(name)
    assert data.filename.endswith(f"label_ranking/{name}.csv.gz")
    n, p, k, _ = LABEL_RANKING[name]
    assert data.X.shape == (n, p) and data.Y.shape == (n, k)


@needs_data
@pytest.mark.parametrize("name", sorted(LABEL_RANKING))
def test_shipped_label_ranking_files_equal_the_shared_ones(name):
    import gzip
    from importlib import resources

    shipped = resources.files("combpred.datasets") / "data" / "label_ranking" / f"{name}.csv.gz"
    original = _data_dir() / "label_ranking" / f"{name}.csv"
    assert gzip.decompress(shipped.read_bytes()) == original.read_bytes()


def test_environment_variable_is_used(tmp_path, monkeypatch):
    (tmp_path / "label_ranking").mkdir()
    (tmp_path / "label_ranking" / "iris.csv").write_text("2,1,3\n0.5,2,1,3\n-0.5,1,2,3\n")
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path))
    X, Y = load_label_ranking("iris", return_X_y=True)
    np.testing.assert_array_equal(X, [[0.5], [-0.5]])
    np.testing.assert_array_equal(Y, [[2, 1, 3], [1, 2, 3]])


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("3,1,3\n0.5,2,1,3\n-0.5,1,2,3\n", "header promises"),
        (
            "2,1,3\n0.5,2,2,3\n-0.5,1,2,3\n",
            r"wine\.csv: line 2: the ranks \[2, 2, 3\] \(its last 3 values\) are not a permutation of 1\.\.3",
        ),
        # the rankings' own check named "row 2, column 0", counted from the first data row and the
        # first rank, neither the file nor its line (probe DF)
        ("3,1,3\n0.1,1,2,3\n\n0.2,2,1,3\n0.3,1.5,2,3\n", r"wine\.csv: line 5: the ranks \[1\.5, 2, 3\]"),
        ("1,0,1\n1\n", r"wine\.csv: wine targets must rank at least 2 labels"),
        ("n,p,k\n", "line 1"),
        ("2,-2,5\n7,1,2\n8,2,1\n", r"line 1 must be .*non-negative integers"),  # a negative slice of the rows
        ("1_0,1,3\n", r"line 1 must be"),
        # numpy's reshape refused these shapes in its own words, naming neither the file nor the header
        ("0,99999999999999999999,1\n", r"wine\.csv: the header promises 0 rows of 100000000000000000000 values"),
        ("1000000,3,3\n1,2,3,1,2,3\n", r"the header promises 1000000 rows of 6 values, more than the file's"),
        # int() of 5,000 digits raised a ValueError naming neither the file nor the header (probe EK)
        ("9" * 5000 + ",1,1\n1,1\n", r"wine\.csv: the header promises more than 10\*\*40 rows of 2 values"),
        # numpy's loadtxt named neither the file nor the line (its "row 2" was the third data row)
        ("2,2,3\n0.1,0.2,1,2,3\n0.3,0.4,3,1\n", r"wine\.csv: line 3: 4 values, the header promises 5"),
        # and took these as numbers
        ("2,1,3\n0.5,2,1,3\nnan,1,2,3\n", r"wine\.csv: line 3: 'nan' is not a finite number"),
        ("2,1,3\n0.5,2,1,3\n1_0,1,2,3\n", r"line 3: '1_0' is not a finite number"),
        # a non-ASCII byte was a bare UnicodeDecodeError
        (b"2,1,3\n0.5,2,1,3\n\xc5,1,2,3\n", r"wine\.csv: not an ASCII text file"),
    ],
)
def test_malformed_label_ranking_files(tmp_path, content, match):
    (tmp_path / "label_ranking").mkdir()
    path = tmp_path / "label_ranking" / "wine.csv"
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_label_ranking("wine", data_home=tmp_path)


HMC = """@RELATION toy
% a comment
@ATTRIBUTE a NUMERIC
@ATTRIBUTE b numeric
@ATTRIBUTE class hierarchical 01/02,01,02,01/01,01/01/05
@DATA
1.5,?,01/01/05@02
?,2,01/02
"""


def test_read_hmc_arff_and_taxonomy():
    names, X, nodes, labels = read_hmc_arff(HMC)
    assert names == ["a", "b"]
    np.testing.assert_array_equal(np.isnan(X), [[False, True], [True, False]])
    assert X[0, 0] == 1.5 and X[1, 1] == 2.0
    assert nodes == ["01/02", "01", "02", "01/01", "01/01/05"]
    assert labels == [["01/01/05", "02"], ["01/02"]]
    node_names, parent = datasets._taxonomy(nodes)
    assert node_names == ["root", "01", "01/01", "01/01/05", "01/02", "02"]  # preorder
    assert parent.tolist() == [-1, 0, 1, 2, 1, 0]
    index = {n: i for i, n in enumerate(node_names)}
    Y = datasets._closure_rows(labels, index, parent)
    assert Y.tolist() == [[1, 1, 1, 1, 0, 1], [1, 1, 0, 0, 1, 0]]
    # "²" is a digit to str.isdigit that int() refuses: it sorts as a code, after the numbers
    assert datasets._taxonomy(["01", "01/²", "01/02", "01/a"])[0] == ["root", "01", "01/02", "01/a", "01/²"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (HMC.replace("01/02\n", "03\n"), "not a declared node"),
        (HMC.replace("@ATTRIBUTE b numeric", "@ATTRIBUTE b string"), "only numeric and nominal"),
        (HMC.replace("@ATTRIBUTE b numeric", "@ATTRIBUTE b {x,y}"), "not one of its declared values"),
        (HMC.replace("1.5,?,", "1.5,"), "2 values for 3 attributes"),
        (HMC.replace("@ATTRIBUTE class hierarchical 01/02,01,02,01/01,01/01/05\n", ""), "before any"),
        (HMC.replace("1.5,?", "x,?"), "line 7"),
    ],
)
def test_read_hmc_arff_errors(text, match):
    with pytest.raises(ValueError, match=match):
        read_hmc_arff(text)


def test_read_hmc_arff_names_its_source():
    """Like the other readers, it names the file before the line (it had no source argument)."""
    with pytest.raises(ValueError, match=r"^cellcycle\.arff, line 7: "):
        read_hmc_arff(HMC.replace("1.5,?", "x,?"), source="cellcycle.arff")
    with pytest.raises(ValueError, match=r"^cellcycle\.arff: no '@ATTRIBUTE class hierarchical"):
        read_hmc_arff("@RELATION r\n@ATTRIBUTE a numeric\n", source="cellcycle.arff")


def test_taxonomy_needs_declared_parents():
    with pytest.raises(ValueError, match="not declared"):
        datasets._taxonomy(["01", "02/01"])


def test_single_path_rows_must_be_chains():
    names, parent = datasets._taxonomy(["1", "1/1", "1/2"])
    index = {n: i for i, n in enumerate(names)}
    y = datasets._single_paths([["1", "1/2"], ["1/1"]], index, parent, "train")
    assert [names[v] for v in y] == ["1/2", "1/1"]
    with pytest.raises(ValueError, match="not one path"):
        datasets._single_paths([["1/1", "1/2"]], index, parent, "train")


def test_load_yeast_still_works():
    data = datasets.load_yeast()
    assert data.X_train.shape == (1500, 103) and data.Y_train.shape == (1500, 14)
    assert data.X_test.shape == (917, 103) and data.Y_test.shape == (917, 14)


def test_read_arff_still_works():
    text = "@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n0.5,1\n"
    names, M = datasets.read_arff(text)
    assert names == ["x", "y"] and M.tolist() == [[0.5, 1.0]]


# str.splitlines also broke lines at form feeds, vertical tabs, \x1c-\x1e, \x85 and U+2028/9: a row
# holding one was cut in two, and every line number after it was off by one in messages.
@pytest.mark.parametrize("breaker", ["\f", "\v", "\x1c", "\x85", "\u2028"])
def test_readers_break_lines_at_newlines_only(tmp_path, breaker):
    arff = f"@relation r\n@attribute x numeric\n@attribute y {{0,1}}\n@data\n0.5,{breaker}1\n0.25,0\nbad,1\n"
    with pytest.raises(ValueError, match="line 7"):
        datasets.read_arff(arff)
    names, M = datasets.read_arff(arff.replace("bad,1\n", "").replace("0.25,0\n", "0.25,0\r\n"))
    assert M.tolist() == [[0.5, 1.0], [0.25, 0.0]]
    hmc = HMC.replace("1.5,?", f"1.5{breaker},?")
    read_hmc_arff(hmc)  # the row stays whole: the form feed is blank space inside a field
    with pytest.raises(ValueError, match="line 7"):
        read_hmc_arff(hmc.replace("1.5", "x"))
    mulan = f"@relation t\n@attribute f0 numeric\n@attribute y0 {{0,1}}\n@data\n1,{breaker}0\n1_0,1\n"
    with pytest.raises(ValueError, match="line 6"):
        datasets.read_mulan_arff(mulan, ["y0"])
    (tmp_path / "label_ranking").mkdir()
    (tmp_path / "label_ranking" / "wine.csv").write_text(f"2,1,3\n0.5,{breaker}2,1,3\nnan,1,2,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3: 'nan'" if breaker.isascii() else "not an ASCII text file"):
        load_label_ranking("wine", data_home=tmp_path)


def test_readers_take_str_or_utf8_bytes_and_name_anything_else():
    """read_hmc_arff failed inside re on bytes (which the MULAN readers take) and on None; a single
    label name as a str was iterated letter by letter."""
    assert read_hmc_arff(HMC.encode())[2:] == read_hmc_arff(HMC)[2:]
    np.testing.assert_array_equal(read_hmc_arff(HMC.encode())[1], read_hmc_arff(HMC)[1])
    arff = "@relation r\n@attribute x numeric\n@data\n0.5\n"
    assert datasets.read_arff(arff.encode())[1].tolist() == [[0.5]]
    for reader in (read_hmc_arff, datasets.read_arff):
        with pytest.raises(TypeError, match="text: expected the file's contents as str or bytes, got NoneType"):
            reader(None)
        with pytest.raises(ValueError, match="text: not UTF-8"):
            reader(b"@relation \xff\n")
    mulan = "@relation r\n@attribute f1 numeric\n@attribute L1 {0,1}\n@data\n1.5,1\n"
    assert datasets.read_mulan_arff(mulan, ["L1"]).Y.toarray().tolist() == [[1]]
    with pytest.raises(TypeError, match="label_names must be a list of attribute names, got a single str"):
        datasets.read_mulan_arff(mulan, "L1")


def test_readers_skip_a_utf8_byte_order_mark(tmp_path):
    """A BOM (Windows editors write one) was refused by the label-ranking and MULAN readers."""
    bom = "\ufeff"
    (tmp_path / "label_ranking").mkdir()
    (tmp_path / "label_ranking" / "wine.csv").write_text(bom + "2,1,3\n0.5,2,1,3\n-0.5,1,2,3\n", encoding="utf-8")
    X, Y = load_label_ranking("wine", data_home=tmp_path, return_X_y=True)
    assert X.tolist() == [[0.5], [-0.5]] and Y.tolist() == [[2, 1, 3], [1, 2, 3]]
    mulan = "@relation r\n@attribute f1 numeric\n@attribute L1 {0,1}\n@data\n1.5,1\n"
    for doc in (bom + mulan, (bom + mulan).encode()):
        assert datasets.read_mulan_arff(doc, ["L1"]).Y.toarray().tolist() == [[1]]
    assert read_hmc_arff((bom + HMC).encode())[0] == read_hmc_arff(HMC)[0]
    (tmp_path / "label_ranking" / "wine.csv").write_text("2,1,3\n0.5,2,1,3\n-0.5,1,2,3é\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not an ASCII text file \(character 'é' at offset"):
        load_label_ranking("wine", data_home=tmp_path)


def test_hmc_reader_refuses_a_repeated_attribute():
    """It kept both columns under one name (the MULAN reader refused them)."""
    with pytest.raises(ValueError, match="line 4: attribute 'a' is declared twice"):
        read_hmc_arff(HMC.replace("@ATTRIBUTE b numeric", "@ATTRIBUTE a numeric"))


@pytest.mark.parametrize(
    "edit, line",
    [
        (lambda doc: "\ufeff\ufeff" + doc, 1),  # a second BOM hid the first line from the keyword checks
        (lambda doc: doc.replace("@ATTRIBUTE b", "@ATRIBUTE b", 1), 4),
        (lambda doc: doc.replace("@DATA", "@DATA extra", 1), 6),
    ],
)
def test_every_arff_reader_refuses_an_unknown_header_line(edit, line):
    """The plain and HMC readers skipped a header line they did not know, silently dropping a
    misspelt attribute (or whichever line followed a second byte-order mark); the MULAN reader
    refused it. All three follow that one rule now."""
    where = rf"line {line}: expected @RELATION, @ATTRIBUTE or @DATA, got"
    with pytest.raises(ValueError, match=where):
        read_hmc_arff(edit(HMC))
    plain = "@RELATION toy\n% a comment\n@ATTRIBUTE a NUMERIC\n@ATTRIBUTE b numeric\n% two\n@DATA\n1.5,2\n"
    with pytest.raises(ValueError, match=where):
        datasets.read_arff(edit(plain))
    with pytest.raises(ValueError, match=where):
        datasets.read_mulan_arff(edit(plain.replace("b numeric", "b {0,1}").replace("1.5,2", "1.5,1")), ["b"])


def test_loader_flags_must_be_bools():
    # a truthy string such as "no" was taken as True (return_X_y="no" returned a tuple)
    with pytest.raises(TypeError, match="return_X_y must be True or False, got 'no'"):
        load_label_ranking("iris", return_X_y="no")
    with pytest.raises(TypeError, match="sparse must be True or False, got 'no'"):
        datasets.load_multilabel("medical", sparse="no")
    with pytest.raises(TypeError, match="download_if_missing must be True or False, got 0"):
        load_hierarchical("cellcycle_FUN", download_if_missing=0)


def test_read_arff_reads_quoted_attribute_names_whole():
    """A split at blanks cut a quoted name: 'a b' was read as a."""
    text = "@relation r\n@attribute 'a b' numeric\n@attribute \"c, d\" {0,1}\n@attribute e REAL\n@data\n1,0,2\n"
    names, M = datasets.read_arff(text)
    assert names == ["a b", "c, d", "e"] and M.tolist() == [[1.0, 0.0, 2.0]]
    with pytest.raises(ValueError, match="line 2: malformed @attribute"):
        datasets.read_arff("@relation r\n@attribute 'a b numeric\n@data\n1\n")


@pytest.mark.parametrize(
    ("declaration", "kind"),
    [
        ("'s t' string", "string"),
        ("'s t' STRING", "string"),
        ("'s t' date 'yyyy-MM-dd'", "date"),
        ("'s t' relational", "relational"),
        ("'s t' {a,b}", "nominal {a,b}"),
        ("'s t' {0,1,2}", "nominal {0,1,2}"),
        ("'s t' hierarchical 01,01/01", "hierarchical"),
    ],
)
def test_read_arff_refuses_unsupported_attribute_types(declaration, kind):
    """Every type was read as numeric: a string attribute of numbers loaded as numbers."""
    text = f"@relation r\n@attribute x numeric\n@attribute {declaration}\n@data\n1,1\n"
    with pytest.raises(ValueError, match=rf"^line 3: attribute 's t' has type '{re.escape(kind)}'; only numeric"):
        datasets.read_arff(text)


@pytest.mark.parametrize("value", ["2", "0.5", "-1", "1.0", "x", "'2'"])
def test_read_arff_holds_a_01_attribute_to_its_values(value):
    """A {0,1} attribute took any number."""
    text = f"@relation r\n@attribute x numeric\n@attribute y {{0,1}}\n@data\n0.5,1\n0.5,{value}\n"
    shown = value.strip("'")  # a value that is no number was "not a finite number", naming no attribute (probe CB)
    with pytest.raises(ValueError, match=rf"^line 6: attribute 'y': '{re.escape(shown)}' is not one of its declared"):
        datasets.read_arff(text)
    assert datasets.read_arff(text.replace(f"0.5,{value}\n", "0.5,0\n"))[1].tolist() == [[0.5, 1.0], [0.5, 0.0]]


def test_read_arff_takes_quoted_01_values_and_names_the_attribute_of_a_bad_number():
    # a quoted '1' is valid ARFF, which the MULAN and HMC readers took and read_arff refused (probe CB)
    text = "@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n0.5,'1'\n2,\"0\"\n"
    assert datasets.read_arff(text)[1].tolist() == [[0.5, 1.0], [2.0, 0.0]]
    with pytest.raises(ValueError, match=r"^line 5: attribute 'x': 'abc' is not a finite number"):
        datasets.read_arff(text.replace("0.5,'1'", "abc,'1'"))
    assert datasets.read_arff(text.replace("0.5,'1'", "'0.5','1'"))[1].tolist() == [[0.5, 1.0], [2.0, 0.0]]


def test_label_ranking_reader_counts_its_values_against_the_memory_budget(tmp_path):
    """It ignored the budget: 60 MB of zeros loaded with a 1.7 GB peak under max_memory=100 MB,
    where the MULAN reader raised MemoryError. It charges its measured peak, 64 bytes a value."""
    width, rows = 500, 200
    (tmp_path / "label_ranking").mkdir()
    path = tmp_path / "label_ranking" / "big.csv"
    text = f"{rows},{width - 3},3\n" + ("0," * (width - 3) + "1,2,3\n") * rows
    path.write_text(text)
    # the lines count a value each and the characters a share of one, before the document is split
    # (60 MB of blank lines took 700 MB)
    lines = rows + 1 + -(-len(text) * _TEXT_BYTES_PER_CHAR // 64)
    tripped = (width * 100 - lines) // width + 1  # the row past the budget
    with combpred.config_context(max_memory=64 * width * 100):  # 100 rows' worth, less the lines'
        with pytest.raises(
            MemoryError,
            match=rf"^{re.escape(str(path))}, line {tripped + 1}: the values read so far \({lines + width * tripped}, 64",
        ):
            load_label_ranking("big", data_home=tmp_path)
    with combpred.config_context(max_memory=64 * (width * rows + lines)):  # exactly the file's worth
        X, Y = load_label_ranking("big", data_home=tmp_path, return_X_y=True)
    assert X.shape == (rows, width - 3) and Y.shape == (rows, 3) and not X.any()
    assert load_label_ranking("iris", return_X_y=True)[0].shape == (150, 4)  # the default budget


def test_read_arff_counts_its_values_against_the_memory_budget():
    """It ignored the budget (the MULAN and HMC readers enforced it); it charges its measured peak,
    64 bytes a value, and names the source it is given."""
    width, rows = 500, 200
    text = (
        "@relation r\n"
        + "".join(f"@attribute a{i} numeric\n" for i in range(width))
        + "@data\n"
        + ("0," * (width - 1) + "0\n") * rows
    )
    header = width + 2
    # the declarations count too, a share of the values per character (a nominal one's values), and
    # the lines a value each
    declared = sum(-(-len(f"@attribute a{i} numeric") * _DECLARATION_BYTES_PER_CHAR // 64) for i in range(width))
    declared += text.count("\n") + -(-len(text) * _TEXT_BYTES_PER_CHAR // 64)
    tripped = (64 * width * 100 // 64 - declared) // width + 1  # the row past the budget
    with combpred.config_context(max_memory=64 * width * 100):
        with pytest.raises(
            MemoryError,
            match=rf"^big\.arff, line {header + tripped}: the values read so far \({declared + width * tripped}, 64",
        ):
            datasets.read_arff(text, source="big.arff")
        with pytest.raises(MemoryError, match=rf"^line {header + tripped}: the values read so far"):
            datasets.read_arff(text)
    with combpred.config_context(max_memory=64 * (declared + width * rows)):  # exactly what it holds
        names, M = datasets.read_arff(text)
    assert len(names) == width and M.shape == (rows, width) and not M.any()
    with pytest.raises(ValueError, match=r"^big\.arff, line 3: attribute 'a': 'x' is not a finite number"):
        datasets.read_arff("@attribute a numeric\n@data\nx\n", source="big.arff")


def test_dense_multilabel_is_checked_against_the_memory_budget(tmp_path):
    """sparse=False densified X unchecked: rows of {} over 5,000 attributes (a 154 KB file) became
    a 381 MB X under a 100 MB budget."""
    folder = tmp_path / "wide"
    folder.mkdir()
    (folder / "wide.xml").write_text('<labels><label name="L"/></labels>')
    header = (
        "@relation r\n" + "".join(f"@attribute f{i} numeric\n" for i in range(2000)) + "@attribute L {0,1}\n@data\n"
    )
    (folder / "wide-train.arff").write_text(header + "{}\n" * 2000)
    with combpred.config_context(max_memory=16 * 2**20):  # the dense X is 32 MB
        with pytest.raises(MemoryError, match=r"wide: the dense X \(sparse=False\): an output of shape \(2000, 2000\)"):
            load_multilabel("wide", data_home=tmp_path, sparse=False)
        assert load_multilabel("wide", data_home=tmp_path).X.shape == (2000, 2000)  # sparse stays small
    assert load_multilabel("wide", data_home=tmp_path, sparse=False).X.shape == (2000, 2000)


def _hierarchical_set(tmp_path, name, data: bytes):
    folder = tmp_path / "hierarchical_funcat_go" / name
    folder.mkdir(parents=True)
    (folder / f"{name}.train.arff").write_bytes(data)


def test_load_hierarchical_reads_utf8(tmp_path):
    """It read files as Latin-1: UTF-8 names came back garbled ('été' as 'Ã©tÃ©') and a byte-order
    mark made line 1 unreadable. A file that is not UTF-8 is still read as Latin-1."""
    doc = "@relation r\n@attribute été numeric\n@attribute class hierarchical café,café/ü\n@data\n1,café/ü\n"
    _hierarchical_set(tmp_path, "utf", doc.encode())
    _hierarchical_set(tmp_path, "bom", b"\xef\xbb\xbf" + doc.encode())
    _hierarchical_set(tmp_path, "latin", doc.encode("latin-1"))
    for name in ("utf", "bom", "latin"):
        b = load_hierarchical(name, data_home=tmp_path)
        assert b.feature_names == ["été"] and b.node_names == ["root", "café", "café/ü"], name


def test_path_taxonomies_keep_preorder_and_one_root(tmp_path):
    """Codes equal as numbers ('01', '1') interleaved their subtrees, and a node declared as 'root'
    shared the virtual root's name (a label 'root' went to it)."""
    head = "@relation r\n@attribute a numeric\n@attribute class hierarchical "
    _hierarchical_set(tmp_path, "order", (head + "01,1,1/2,01/3\n@data\n1,01/3\n").encode())
    b = load_hierarchical("order", data_home=tmp_path)
    assert b.node_names == ["root", "01", "01/3", "1", "1/2"] and b.parent.tolist() == [-1, 0, 1, 0, 3]
    _hierarchical_set(tmp_path, "named", (head + "root,root/1,2\n@data\n1,root/1\n").encode())
    with pytest.raises(ValueError, match="node 'root': the virtual root has that name"):
        load_hierarchical("named", data_home=tmp_path)
    # nor can a node hang below it by its name: 'root/1' was put at depth 1, a sibling of '1' (probe CB)
    _hierarchical_set(tmp_path, "below", (head + "1,root/1\n@data\n1,root/1\n").encode())
    with pytest.raises(ValueError, match="node 'root/1': its parent 'root' is not declared"):
        load_hierarchical("below", data_home=tmp_path)


def test_read_arff_refuses_repeated_names_and_trailing_text():
    """The HMC and MULAN readers refused a repeated attribute; read_arff kept both columns, and took
    'numeric {0,1} anything' as numeric."""
    with pytest.raises(ValueError, match="line 3: attribute 'a' is declared twice"):
        datasets.read_arff("@relation r\n@attribute a numeric\n@attribute a numeric\n@data\n1,2\n")
    with pytest.raises(ValueError, match=r"line 2: attribute 'a': unexpected '\{0,1\} anything' after the type"):
        datasets.read_arff("@relation r\n@attribute a numeric {0,1} anything\n@data\n5\n")


def test_a_quoted_question_mark_is_a_value():
    """In ARFF only an unquoted ? is missing: a declared value '?' written quoted was read as NaN."""
    doc = "@relation r\n@attribute f {'?',x}\n@attribute L {0,1}\n@data\n'?',0\nx,1\n?,0\n"
    X = datasets.read_mulan_arff(doc, ["L"]).X.toarray()
    assert X[:2].tolist() == [[1, 0], [0, 1]] and np.isnan(X[2]).all()
    hmc = "@relation r\n@attribute f {'?',x}\n@attribute g {0,1}\n@attribute class hierarchical 01\n@data\n"
    X = read_hmc_arff(hmc + "'?',1,01\n?,?,01\n")[1]
    assert X[0].tolist() == [1, 0, 1] and np.isnan(X[1]).all()


_HEADERS = {  # a reader and a document of one row it reads
    "arff": (datasets.read_arff, "@relation r\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,1\n"),
    "mulan": (
        lambda doc, source: datasets.read_mulan_arff(doc, ["l"], source=source),
        "@relation r\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,1\n",
    ),
    "hmc": (read_hmc_arff, "@relation r\n@attribute a numeric\n@attribute c hierarchical 01,01/02\n@data\n1,01/02\n"),
}


@pytest.mark.parametrize("reader", sorted(_HEADERS))
@pytest.mark.parametrize("late", ["@attribute z numeric", "@DATA", "@relation again"])
def test_readers_refuse_declarations_inside_the_data_section(reader, late):
    """A declaration after @data was read as a data row: '1 values for 2 attributes', or for a
    second @data, "'@data' is not a finite number"."""
    read, doc = _HEADERS[reader]
    read(doc, source="f.arff")  # the document without it is read
    with pytest.raises(ValueError, match=rf"f\.arff, line 6: '{re.escape(late)}' inside the data section"):
        read(doc + late + "\n", source="f.arff")


@pytest.mark.parametrize("reader", sorted(_HEADERS))
@pytest.mark.parametrize("weighted", ["1,1,{5}", "1,1, { 0.5 }", "{0 1, 1 1}, {5}"])
def test_readers_name_weka_instance_weights(reader, weighted):
    """A row with Weka's instance weight {w} at its end (valid ARFF) was refused by blaming an
    attribute's value "1}" (probe DB); the message now names the weight."""
    read, doc = _HEADERS[reader]
    row = weighted.replace("1,1", doc.rsplit("\n", 2)[-2]) if reader == "hmc" else weighted
    with pytest.raises(ValueError, match=r"f\.arff, line 6: Weka instance weights \('\{w\}' after a row's values\)"):
        read(doc + row + "\n", source="f.arff")


@pytest.mark.parametrize("reader", ["mulan", "hmc"])
def test_readers_refuse_two_columns_of_one_name(reader):
    """A one-hot column 'a=x' of nominal a and an attribute declared 'a=x' were two columns of one name."""
    read, doc = _HEADERS[reader]
    doc = doc.replace("@attribute a numeric", "@attribute a {x,y}\n@attribute 'a=x' numeric").replace("\n1,", "\nx,1,")
    with pytest.raises(ValueError, match="f.arff: two feature columns are named 'a=x'"):
        read(doc, source="f.arff")
    read(doc.replace("'a=x'", "'a=z'"), source="f.arff")


def test_mulan_messages_name_what_is_wrong():
    """name="" read "has no name attribute", and a label's declared values printed as an unordered
    Python set ({'2', '0', '1'}) (probe O)."""
    xml = '<labels xmlns="http://mulan.sourceforge.net/labels"><label name=""></label></labels>'
    with pytest.raises(ValueError, match="a <label> element has no name .*missing or empty"):
        datasets.read_mulan_xml(xml, source="l.xml")
    doc = "@relation r\n@attribute a numeric\n@attribute l {0,1,2}\n@data\n1,1\n"
    with pytest.raises(ValueError, match=r"label 'l' must be declared \{0,1\}, got \{0,1,2\}"):
        datasets.read_mulan_arff(doc, ["l"], source="f.arff")


def test_read_hmc_arff_takes_quoted_numbers_and_node_sets():
    """ARFF may quote any value: read_arff took '1.5', the HMC reader refused it and a quoted
    node set (probe CC). A quoted '?' is a value, so a numeric attribute refuses it."""
    quoted = HMC.replace("1.5,?,01/01/05@02", "'1.5',?,'01/01/05@02'").replace("?,2,01/02", '?,"2","01/02"')
    names, X, nodes, labels = read_hmc_arff(quoted)
    plain = read_hmc_arff(HMC)
    np.testing.assert_array_equal(X, plain[1])
    assert (names, nodes, labels) == (plain[0], plain[2], plain[3])
    with pytest.raises(ValueError, match=r"^line 7: attribute 'a': '\?' is not a finite number"):
        read_hmc_arff(HMC.replace("1.5,?,", "'?',?,"))
    with pytest.raises(ValueError, match=r"^line 7: the node set: badly quoted value"):
        read_hmc_arff(HMC.replace("01/01/05@02", "'01/01/05@02'x"))


def test_an_hmc_file_cut_off_before_its_data_is_refused(tmp_path):
    """A split truncated before @DATA (an interrupted copy) loaded as a split of 0 rows (probe EG)."""
    head = "@relation r\n@attribute a numeric\n@attribute class hierarchical 01,01/02\n"
    with pytest.raises(ValueError, match=r"cut\.arff: no @DATA section \(is the file complete\?\)"):
        read_hmc_arff(head, source="cut.arff")
    with pytest.raises(ValueError, match="no @DATA section"):
        read_hmc_arff(head[:-5])  # cut inside the hierarchy's line
    assert read_hmc_arff(head + "@data\n")[1].shape == (0, 1)  # a split of no rows, declared so, reads


def test_a_split_read_as_latin1_is_named_when_its_taxonomy_differs(tmp_path):
    """One stray Latin-1 byte (in a comment) made the whole split Latin-1 and its UTF-8 node names
    mojibake; the error said only that it declared another taxonomy (probe EG)."""
    doc = "@relation r\n@attribute a numeric\n@attribute class hierarchical é,é/ü,x\n@data\n1,x\n"
    folder = tmp_path / "hierarchical_funcat_go" / "enc"
    folder.mkdir(parents=True)
    (folder / "enc.train.arff").write_bytes(doc.encode())
    (folder / "enc.test.arff").write_bytes(b"% caf\xe9\n" + doc.encode())
    with pytest.raises(ValueError, match=r"split 'test' was read as Latin-1, being not UTF-8 text \(byte 5: "):
        load_hierarchical("enc", data_home=tmp_path)


def test_hmc_rows_and_taxonomies_are_charged_to_the_budget(tmp_path):
    """Rows of one label and no feature were charged 96 of their about 300 bytes (3.8M rows grew
    1.05 GB under a 600 MB budget), and building a taxonomy was not charged at all (a star of 10⁶
    edges grew 609 MB under 350 MB) (probe EG)."""
    head = "@relation r\n@attribute class hierarchical 01\n@data\n"
    with combpred.config_context(max_memory=30 * 2**20):  # 200,000 rows: 60 MB read, 30 MB charged before
        with pytest.raises(MemoryError, match="the values read so far"):
            read_hmc_arff(head + "01\n" * 200_000)
    edges = ",".join(f"r/n{i}" for i in range(50_000))
    folder = tmp_path / "hierarchical_funcat_go" / "star"
    folder.mkdir(parents=True)
    (folder / "star.train.arff").write_text(
        f"@relation r\n@attribute a numeric\n@attribute class hierarchical {edges}\n@data\n1,n1\n"
    )
    with combpred.config_context(max_memory=20 * 10**6):  # the declaration reads; its 50,000 edges need 40 MB
        with pytest.raises(MemoryError, match=r"star\.train\.arff: the taxonomy of its 50000 declared edges"):
            load_hierarchical("star", data_home=tmp_path)
    assert load_hierarchical("star", data_home=tmp_path).is_tree
