"""Download benchmark files that do not ship with the package, check them and cache them.

In scikit-learn's manner (``sklearn.datasets.get_data_home`` and its ``fetch_*`` functions): a file
is downloaded once from its original public source, pinned to a commit, into a data home; its
SHA-256 must match the one recorded here (the checksums of ``SHA256SUMS`` in the data's provenance),
and it is moved into place only then, so that an interrupted or corrupted download never leaves a
file behind. ``COMBPRED_DATA_URL`` points the downloads at a mirror laid out like the data
directory (``<url>/hierarchical_funcat_go/...``): an offline copy, or the tests' local server.
"""

from __future__ import annotations

import hashlib
import http.client
import numbers
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .. import _capi

__all__ = ["REMOTE_FILES", "fetch_file", "get_data_home"]

# C-HMCNN (Giunchiglia & Lukasiewicz, NeurIPS 2020) redistributes the Clus HMC benchmark files of
# KU Leuven; GPL-3.0, so they are downloaded rather than shipped. Commit e887855 is the one the
# provenance records.
_CHMCNN = "https://raw.githubusercontent.com/EGiunchiglia/C-HMCNN/e887855ab4b3b8f22e4fafc80a0a33c1d1ac0041/HMC_data/"

# path inside the data directory -> (original URL, SHA-256)
REMOTE_FILES: dict[str, tuple[str, str]] = {
    "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.train.arff": (
        _CHMCNN + "datasets_FUN/cellcycle_FUN/cellcycle_FUN.train.arff",
        "4c97ccf6f15b49392b3bda7fec1f601ed921746ef0b78d6fcd4c85a0424dfd66",
    ),
    "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.valid.arff": (
        _CHMCNN + "datasets_FUN/cellcycle_FUN/cellcycle_FUN.valid.arff",
        "8914f37522a484ce1790625e4993d89eed73ce4f6d667711c691a389e3a4f982",
    ),
    "hierarchical_funcat_go/cellcycle_FUN/cellcycle_FUN.test.arff": (
        _CHMCNN + "datasets_FUN/cellcycle_FUN/cellcycle_FUN.test.arff",
        "2dd7798e23375743b2e31e0236d9a6cb7a73351a777efe381946105417fd1299",
    ),
    "hierarchical_funcat_go/imclef07a/ImCLEF07A_Train.arff": (
        _CHMCNN + "others/ImCLEF07A_Train.arff",
        "fe240039db5272579924897bcac6c0c38b6cb117277aa49281a2ec936b01e7c9",
    ),
    "hierarchical_funcat_go/imclef07a/ImCLEF07A_Test.arff": (
        _CHMCNN + "others/ImCLEF07A_Test.arff",
        "e95c33e0bc8a23be9b093bc34268404c47f304739bd73eceda58f8cbc42a90fb",
    ),
    "hierarchical_funcat_go/gasch2_GO/gasch2_GO.train.arff": (
        _CHMCNN + "datasets_GO/gasch2_GO/gasch2_GO.train.arff",
        "3ec204ab8c0adf9431c35c2f888f9a68b3ef627407d64c480ff7186a14724b29",
    ),
    "hierarchical_funcat_go/gasch2_GO/gasch2_GO.valid.arff": (
        _CHMCNN + "datasets_GO/gasch2_GO/gasch2_GO.valid.arff",
        "65b482fcf419248d8bd76bc2ef355d67fa9c1b3e5a683601b5f6595e575a272f",
    ),
    "hierarchical_funcat_go/gasch2_GO/gasch2_GO.test.arff": (
        _CHMCNN + "datasets_GO/gasch2_GO/gasch2_GO.test.arff",
        "7e24abde7788aa3192ac747c74cff9968f606cc46b744212f7244b318579b02f",
    ),
}

# A download larger than this is refused: the largest file above is 1.7 MB.
_MAX_BYTES = 64 << 20


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the directory that caches downloaded data sets, creating it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The directory; by default ``$COMBPRED_DATA_HOME``, else ``~/combpred_data`` (as
        scikit-learn's ``~/scikit_learn_data``).

    Returns
    -------
    data_home : pathlib.Path
    """
    if data_home is None:
        data_home = os.environ.get("COMBPRED_DATA_HOME") or _home() / "combpred_data"
    if not isinstance(data_home, (str, os.PathLike)):
        raise TypeError(f"data_home must be a path (str or os.PathLike), got {type(data_home).__name__}")
    path = Path(data_home).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # the OS said only "File exists"
        raise ValueError(f"data_home {str(path)!r} is not a directory (it, or a folder above it, is a file)") from None
    return path


def cached_file(relative: str, data_home: str | os.PathLike | None = None) -> Path | None:
    """The copy of ``relative`` (a key of ``REMOTE_FILES``) an earlier download left in the cache
    (:func:`get_data_home`), if it is there with its SHA-256; else None."""
    target = get_data_home(data_home) / relative
    return target if target.is_file() and _sha256(target) == REMOTE_FILES[relative][1] else None


def _home() -> Path:
    """The user's home directory, or an error that says what to set instead: pathlib's "Could not
    determine home directory" (no HOME, a user id without a passwd entry, as in some containers)
    named neither data_home nor COMBPRED_DATA_HOME (probe 86)."""
    try:
        return Path.home()
    except (RuntimeError, KeyError) as exc:
        raise RuntimeError(
            f"no home directory for the default data_home ({exc}): pass data_home= or set COMBPRED_DATA_HOME"
        ) from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_MAX_TIMEOUT = 86_400


def fetch_file(relative: str, data_home: str | os.PathLike | None = None, *, timeout: float = 60.0) -> Path:
    """Return the local path of a data file, downloading and checking it on first use.

    Parameters
    ----------
    relative : str
        The file's path inside the data directory: one of the files the loaders download (others
        raise ``ValueError``).
    data_home : str or path-like, default=None
        The cache directory (see :func:`get_data_home`).
    timeout : float, default=60.0
        Seconds to wait for the server, a positive number of at most a day (86,400).

    Returns
    -------
    path : pathlib.Path
        The cached file, whose SHA-256 matched.

    Raises
    ------
    ValueError
        For a file this module does not know, a download whose checksum differs, or a
        ``COMBPRED_DATA_URL`` that is not an http(s), ftp or file URL (the message names it).
    OSError
        When the download fails (no network, say); the message names the URL and the way out.
    """
    # the socket layer's words for a bad timeout named neither it nor the call (inf: OverflowError),
    # and None waited forever on a server that accepted and never answered
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not 0 < timeout <= _MAX_TIMEOUT:
        raise ValueError(f"timeout must be a number of seconds in (0, {_MAX_TIMEOUT}], got {timeout!r}")
    if not isinstance(relative, str) or relative not in REMOTE_FILES:
        raise ValueError(f"no download is known for {relative!r}")
    url, sha256 = REMOTE_FILES[relative]
    mirror = os.environ.get("COMBPRED_DATA_URL")
    if mirror:
        url = mirror.rstrip("/") + "/" + relative
    target = get_data_home(data_home) / relative
    if cached_file(relative, data_home) is not None:
        return target
    if target.exists() and not target.is_file():  # a directory: the download was moved into it
        raise OSError(f"{target} exists and is not a file; remove it so that {relative!r} can be downloaded there")
    if mirror:
        _check_mirror(mirror, url)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with _open(url, mirror, timeout) as response:
                    copied = 0
                    while block := response.read(1 << 20):
                        copied += len(block)
                        if copied > _MAX_BYTES:
                            raise ValueError(f"{url}: the download exceeds {_MAX_BYTES >> 20} MiB; refused")
                        out.write(block)
                    # a response cut off before its Content-Length ends as if complete (read returns
                    # b""), and was reported as a checksum mismatch (probe BK); a chunked one's
                    # Content-Length does not count (RFC 7230), and '²' is a digit to isdigit
                    length = getattr(response, "headers", {}).get("Content-Length", "").strip()
                    chunked = getattr(response, "chunked", False)
                    expected = _capi.bounded_decimal(length, _MAX_BYTES + 1)  # int() refuses 4,301 digits
                    if not chunked and expected is not None and copied < expected:
                        raise OSError(f"received {copied} of {length[:40]} bytes: the connection closed early")
            except (OSError, http.client.HTTPException) as exc:  # a cut-off chunked response: IncompleteRead
                raise OSError(
                    f"could not download {url}: {exc}. Without network, copy the file to {target} or point "
                    "COMBPRED_DATA (or data_home=) at a directory holding it"
                ) from exc
        found = _sha256(Path(partial))
        if found != sha256:
            raise ValueError(f"{url}: SHA-256 {found} differs from the expected {sha256}; the file was not kept")
        shutil.move(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return target


_SCHEMES = ("http", "https", "ftp", "file")


def _bad_mirror(mirror: str, reason: object) -> ValueError:
    return ValueError(
        f"COMBPRED_DATA_URL={mirror!r} is not a usable URL ({reason}); set it to the http(s)://, ftp:// or "
        "file:// URL of a mirror of the data directory, or unset it to download from the original source"
    )


def _check_mirror(mirror: str, url: str) -> None:
    """Refuse a malformed ``COMBPRED_DATA_URL`` before a partial file is made or a connection tried
    (a file already cached is returned without looking at it): urllib's words for one ("unknown url
    type: 'not a url/...'", "Invalid IPv6 URL") did not name the variable."""
    try:
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        urllib.request.Request(url)
    except ValueError as exc:
        raise _bad_mirror(mirror, exc) from None
    if scheme not in _SCHEMES:
        raise _bad_mirror(mirror, f"scheme {scheme!r}, not one of {', '.join(_SCHEMES)}" if scheme else "no scheme")


def _open(url: str, mirror: str | None, timeout: float) -> Any:
    """``urlopen(url)``; a ValueError it raises for a URL from ``COMBPRED_DATA_URL`` (http.client's
    InvalidURL, not a ValueError, for a port that is not a number or a blank in the host) names
    the variable."""
    try:
        return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 -- https or the user's mirror
    except (ValueError, http.client.InvalidURL) as exc:
        if mirror:
            raise _bad_mirror(mirror, exc) from None
        raise
