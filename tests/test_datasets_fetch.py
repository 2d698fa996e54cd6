"""Downloads of the data that do not ship (issue 16, item 6), against a local HTTP server serving the
shared data directory, so that no test needs the internet: checksums, caching, corrupted and failed
downloads, and load_hierarchical with no data directory."""

from __future__ import annotations

import hashlib
import http.server
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from combpred import datasets
from combpred.datasets import _fetch

SHARED = next((p for p in datasets.data_home_candidates() if (p / "hierarchical_funcat_go").is_dir()), None)
needs_data = pytest.mark.skipif(SHARED is None, reason="shared benchmark data not found (set COMBPRED_DATA)")


@pytest.fixture
def server(tmp_path):
    """An HTTP server on localhost serving a directory (by default the shared data); yields its URL
    and a list of the paths requested."""
    requested: list[str] = []
    root = {"dir": SHARED}

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root["dir"]), **kwargs)

        def do_GET(self):  # noqa: N802 -- http.server's name
            requested.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", requested, root
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_every_remote_file_has_a_checksum_of_the_provenance():
    for relative, (url, sha) in _fetch.REMOTE_FILES.items():
        assert url.startswith("https://raw.githubusercontent.com/EGiunchiglia/C-HMCNN/e887855")
        assert len(sha) == 64 and int(sha, 16) >= 0
        assert relative.startswith("hierarchical_funcat_go/")


@needs_data
def test_fetch_downloads_checks_and_caches(server, tmp_path, monkeypatch):
    url, requested, _ = server
    monkeypatch.setenv("COMBPRED_DATA_URL", url)
    relative = "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff"
    path = datasets.fetch_file(relative, tmp_path / "cache")
    assert path == tmp_path / "cache" / relative
    assert hashlib.sha256(path.read_bytes()).hexdigest() == _fetch.REMOTE_FILES[relative][1]
    assert requested == ["/" + relative]
    datasets.fetch_file(relative, tmp_path / "cache")  # cached: no second request
    assert len(requested) == 1


@needs_data
def test_a_corrupted_download_is_refused_and_not_kept(server, tmp_path, monkeypatch):
    url, _, root = server
    relative = "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff"
    bad = tmp_path / "mirror" / relative
    bad.parent.mkdir(parents=True)
    bad.write_bytes((SHARED / relative).read_bytes()[:-10] + b"0123456789")
    root["dir"] = tmp_path / "mirror"
    monkeypatch.setenv("COMBPRED_DATA_URL", url)
    with pytest.raises(ValueError, match="SHA-256"):
        datasets.fetch_file(relative, tmp_path / "cache")
    assert not any((tmp_path / "cache").rglob("*.arff*"))


def test_a_failed_download_names_the_url_and_the_way_out(tmp_path, monkeypatch):
    monkeypatch.setenv("COMBPRED_DATA_URL", "http://127.0.0.1:9")  # discard port: connection refused
    with pytest.raises(OSError, match="could not download http://127.0.0.1:9/hierarchical_funcat_go.*COMBPRED_DATA"):
        datasets.fetch_file("hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff", tmp_path, timeout=5)
    assert not any(Path(tmp_path).rglob("*.part"))
    with pytest.raises(ValueError, match="no download"):
        datasets.fetch_file("label_ranking/iris.csv", tmp_path)


@needs_data
def test_load_hierarchical_downloads_when_no_directory_holds_the_files(server, tmp_path, monkeypatch):
    url, requested, _ = server
    monkeypatch.setenv("COMBPRED_DATA_URL", url)
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setattr(datasets, "_source_checkout_root", lambda: None)
    fetched = datasets.load_hierarchical("cellcycle_FUN", cache_home=tmp_path / "cache")
    assert len(requested) == 3
    monkeypatch.setenv("COMBPRED_DATA", str(SHARED))
    local = datasets.load_hierarchical("cellcycle_FUN")
    np.testing.assert_array_equal(fetched.Y_train, local.Y_train)
    np.testing.assert_array_equal(np.isnan(fetched.X_test), np.isnan(local.X_test))
    # offline (download_if_missing=False): the cached copies are local and read, where the flag
    # refused them as if nothing were there (probe 90); an empty cache is named in the error
    monkeypatch.setenv("COMBPRED_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setenv("COMBPRED_DATA_URL", "http://127.0.0.1:9")  # nothing is downloaded
    offline = datasets.load_hierarchical("cellcycle_FUN", cache_home=tmp_path / "cache", download_if_missing=False)
    np.testing.assert_array_equal(offline.Y_train, local.Y_train)
    assert len(requested) == 3
    # a DESCR names the provenance of the copy read: the shared data's file, or the pinned download
    # ("in the data directory" sent a download's user to a file that is not there, probe 90)
    assert f"Provenance: {SHARED / 'hierarchical_funcat_go' / 'PROVENANCE.md'}." in local.DESCR
    assert "Provenance: downloaded from the C-HMCNN repository at a pinned commit" in offline.DESCR
    with pytest.raises(FileNotFoundError, match=r"Nor does the download cache .*empty.* hold it"):
        datasets.load_hierarchical("cellcycle_FUN", cache_home=tmp_path / "empty", download_if_missing=False)


def test_get_data_home_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("COMBPRED_DATA_HOME", str(tmp_path / "home"))
    assert datasets.get_data_home() == tmp_path / "home" and (tmp_path / "home").is_dir()
    assert datasets.get_data_home(tmp_path / "x") == tmp_path / "x"
    with pytest.raises(TypeError, match="data_home"):
        datasets.get_data_home(5)
    # no home directory (no HOME, a user id without a passwd entry): pathlib's words named neither
    # data_home nor the variable (probe 86)
    monkeypatch.delenv("COMBPRED_DATA_HOME")

    def homeless():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(datasets._fetch.Path, "home", staticmethod(homeless))
    with pytest.raises(RuntimeError, match="pass data_home= or set COMBPRED_DATA_HOME"):
        datasets.get_data_home()


@pytest.mark.parametrize("timeout", [float("nan"), -1, 0, 1e308, float("inf"), None, True, "5"])
def test_fetch_file_checks_its_timeout(timeout, tmp_path):
    # inf raised the socket layer's OverflowError, NaN and -1 its words naming neither the argument
    # nor the call, and None waited forever on a server that never answered
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds in \(0, 86400\]"):
        datasets.fetch_file("hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff", tmp_path, timeout=timeout)


@pytest.mark.parametrize(
    ("mirror", "reason"),
    [
        ("not a url", "unknown url type"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("mailto:someone", "scheme 'mailto', not one of http, https, ftp, file"),
        ("http://127.0.0.1:port", "nonnumeric port"),  # http.client's InvalidURL, before any connection
    ],
)
def test_a_malformed_mirror_url_is_named(mirror, reason, tmp_path, monkeypatch):
    """urllib's ValueError ('unknown url type: ...', 'Invalid IPv6 URL') and http.client's InvalidURL
    did not name COMBPRED_DATA_URL; a mailto: URL failed as a download error."""
    monkeypatch.setenv("COMBPRED_DATA_URL", mirror)
    with pytest.raises(
        ValueError, match=rf"^COMBPRED_DATA_URL={re.escape(repr(mirror))} is not a usable URL \(.*{reason}"
    ):
        datasets.fetch_file("hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff", tmp_path, timeout=5)
    assert not any(p.is_file() for p in Path(tmp_path).rglob("*"))


def test_a_data_home_that_is_a_file_is_named(tmp_path):
    """A file given as the cache directory raised the OS's bare 'File exists' (probe AV)."""
    from combpred.datasets import get_data_home

    afile = tmp_path / "afile"
    afile.write_text("x")
    for path in (afile, afile / "below"):
        with pytest.raises(ValueError, match="data_home .* is not a directory"):
            get_data_home(path)
    assert get_data_home(tmp_path / "new" / "dir").is_dir()


def test_a_download_cut_off_midstream_is_an_oserror_naming_the_url(tmp_path, monkeypatch):
    """A chunked response cut off raises http.client.IncompleteRead, which is not an OSError: it
    escaped as is, naming neither the URL nor the way out; no partial file is kept."""
    import http.client

    class CutOff:
        reads = 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, amount):
            CutOff.reads += 1
            if CutOff.reads == 1:
                return b"x" * 100
            raise http.client.IncompleteRead(b"", 1000)

    monkeypatch.setattr(_fetch, "_open", lambda *args: CutOff())
    relative = "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff"
    with pytest.raises(OSError, match=r"could not download .*IncompleteRead.*COMBPRED_DATA"):
        datasets.fetch_file(relative, tmp_path)
    assert not any(Path(tmp_path).rglob("*.part"))


def test_a_cache_entry_that_is_a_directory_is_named(tmp_path, monkeypatch):
    """The download was moved into the directory and the directory returned as the file."""
    relative = "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff"
    (tmp_path / relative).mkdir(parents=True)
    monkeypatch.setattr(_fetch, "_open", lambda *args: pytest.fail("nothing is downloaded"))
    with pytest.raises(OSError, match="exists and is not a file"):
        datasets.fetch_file(relative, tmp_path)


def test_a_download_shorter_than_its_content_length_is_an_oserror(tmp_path, monkeypatch):
    """A response cut off before its Content-Length ends as if complete (read returns b"") and was
    reported as a SHA-256 mismatch (probe BK)."""

    class Short:
        headers = {"Content-Length": "100000"}
        sent = False

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, amount):
            if Short.sent:
                return b""
            Short.sent = True
            return b"abcdef"

    monkeypatch.setattr(_fetch, "_open", lambda *args: Short())
    relative = "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff"
    with pytest.raises(OSError, match=r"could not download .*received 6 of 100000 bytes"):
        datasets.fetch_file(relative, tmp_path)
    assert not any(Path(tmp_path).rglob("*.part"))
    # a Content-Length of 5,000 digits: int() refused it in a ValueError naming nothing (probe EK)
    Short.sent, Short.headers = False, {"Content-Length": "9" * 5000}
    with pytest.raises(OSError, match=r"could not download .*received 6 of 9999999999"):
        datasets.fetch_file(relative, tmp_path)
    # a chunked response's Content-Length does not count (RFC 7230), nor one of non-ASCII digits:
    # the download goes on to its checksum (probe BR)
    for headers, chunked in (({"Content-Length": "100000"}, True), ({"Content-Length": "\u00b2"}, False)):
        Short.sent, Short.headers, Short.chunked = False, headers, chunked
        with pytest.raises(ValueError, match="SHA-256"):
            datasets.fetch_file(relative, tmp_path)
