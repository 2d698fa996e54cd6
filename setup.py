"""Build combpred: the Go core is compiled into a C shared library placed inside the package.

The library is declared as an extension so that wheels are platform-tagged; build_ext runs
`go build -buildmode=c-shared` instead of a C compiler, with the system Go or, when the machine has
none, the toolchain that the build backend (_build/backend.py) had pip fetch from the package index.
"""

import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_build"))
from gotool import check_c_compiler, find_go  # noqa: E402 -- the rules for finding Go, shared with the backend


class GoExtension(Extension):
    def __init__(self, name, package):
        super().__init__(name, sources=[])
        self.package = package


class BuildGo(build_ext):
    def build_extension(self, ext):
        if sys.platform.startswith("linux") and _is_musl():
            sys.exit("error: combpred does not support musl libc (Go c-shared libraries need glibc)")
        go, go_env = find_go()
        check_c_compiler()
        out = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1", **go_env)
        cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./capi"]
        print(" ".join(cmd))
        subprocess.run(cmd, check=True, cwd=os.path.dirname(os.path.abspath(__file__)), env=env)
        header = os.path.splitext(out)[0] + ".h"
        if os.path.exists(header):
            os.remove(header)

    def copy_extensions_to_source(self):
        # An editable install copies the library next to the sources, into a folder that a clean
        # checkout lacks.
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            os.makedirs(build_py.get_package_dir(ext.name.rpartition(".")[0]), exist_ok=True)
        super().copy_extensions_to_source()

    def get_ext_filename(self, ext_name):
        # The library keeps its plain name (libcombpred.so), which _libpath looks for.
        parts = ext_name.split(".")
        lib = {"darwin": "libcombpred.dylib", "win32": "combpred.dll"}.get(sys.platform, "libcombpred.so")
        return os.path.join(*parts[:-1], lib)


class PlatformWheel(bdist_wheel):
    """py3-none-<platform> wheels: Python reaches the library through ctypes, so one wheel serves
    every Python 3 (no CPython ABI tag). The platform tag is the build machine's; `auditwheel
    repair` turns it into the manylinux tag the glibc symbols allow."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


def _is_musl():
    try:
        return "musl" in subprocess.run(["ldd", "--version"], capture_output=True, text=True).stderr.lower()
    except OSError:
        return False


setup(
    ext_modules=[GoExtension("combpred._lib.libcombpred", "combpred")],
    cmdclass={"build_ext": BuildGo, "bdist_wheel": PlatformWheel},
)
