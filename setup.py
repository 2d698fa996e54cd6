"""Build combpred: the Go core is compiled into a C shared library placed inside the package.

The library is declared as an extension so that wheels are platform-tagged; build_ext runs
`go build -buildmode=c-shared` instead of a C compiler.
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

MIN_GO = (1, 24)


class GoExtension(Extension):
    def __init__(self, name, package):
        super().__init__(name, sources=[])
        self.package = package


class BuildGo(build_ext):
    def build_extension(self, ext):
        if sys.platform.startswith("linux") and _is_musl():
            sys.exit("error: combpred does not support musl libc (Go c-shared libraries need glibc)")
        go = shutil.which("go")
        if go is None:
            sys.exit(f"error: building combpred needs Go ≥ {MIN_GO[0]}.{MIN_GO[1]} on PATH (the `go` command was not found)")
        version = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
        found = tuple(int(x) for x in re.findall(r"\d+", version)[:2]) if version else (0, 0)
        if found < MIN_GO:
            sys.exit(f"error: building combpred needs Go ≥ {MIN_GO[0]}.{MIN_GO[1]}, found {version or 'unknown'}")
        out = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./capi"]
        print(" ".join(cmd))
        subprocess.run(cmd, check=True, cwd=os.path.dirname(os.path.abspath(__file__)), env=env)
        header = os.path.splitext(out)[0] + ".h"
        if os.path.exists(header):
            os.remove(header)

    def get_ext_filename(self, ext_name):
        # The library keeps its plain name (libcombpred.so), which _libpath looks for.
        parts = ext_name.split(".")
        lib = {"darwin": "libcombpred.dylib", "win32": "combpred.dll"}.get(sys.platform, "libcombpred.so")
        return os.path.join(*parts[:-1], lib)


def _is_musl():
    try:
        return "musl" in subprocess.run(["ldd", "--version"], capture_output=True, text=True).stderr.lower()
    except OSError:
        return False


setup(
    ext_modules=[GoExtension("combpred._lib.libcombpred", "combpred")],
    cmdclass={"build_ext": BuildGo},
)
