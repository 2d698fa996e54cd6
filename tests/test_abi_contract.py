"""The C ABI has one source: the //export functions of capi/*.go. capi/combpred.h is what
`go run ./capi/cheader` writes from them, and Python's ctypes signatures (_capi._SIGNATURES) declare
the same functions with the same argument and result types (issue 12, item 3)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from combpred import _capi

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "capi" / "combpred.h"

pytestmark = pytest.mark.skipif(not HEADER.exists(), reason="needs a source checkout")


def _header_functions() -> dict[str, tuple[str, list[str]]]:
    """name -> (result type, argument types) of every CP_EXPORT declaration of the header."""
    out = {}
    for ret, name, args in re.findall(r"^CP_EXPORT ([^(\n]+?)\s*\b(cp_\w+)\(([^)]*)\);", HEADER.read_text(), re.M):
        types = [] if args.strip() == "void" else [re.sub(r"\s*\w+$", "", a.strip()) for a in args.split(",")]
        out[name] = (ret.strip(), [t.replace(" *", "*").strip() for t in types])
    return out


def _c_type(t) -> str:
    """The C type a ctypes argument or result type stands for."""
    known = {
        ctypes.c_int: "int",
        ctypes.c_int64: "int64_t",
        ctypes.c_uint64: "uint64_t",
        ctypes.c_double: "double",
        ctypes.c_char_p: "const char*",
        ctypes.c_void_p: "void*",
        ctypes.POINTER(ctypes.c_uint8): "uint8_t*",
        ctypes.POINTER(_capi.CheckedFloat64): "double*",
        ctypes.POINTER(_capi.CheckedInt64): "int64_t*",
        ctypes.POINTER(_capi.CheckedIndex): "void*",
        _capi.PROGRESS: "cp_progress_fn",
        _capi.SUMS: "cp_sums_fn",
        _capi.PRODUCTS: "cp_products_fn",
    }
    return known.get(t, repr(t))


@pytest.mark.skipif(shutil.which("go") is None, reason="needs Go")
def test_header_is_generated_from_the_exports():
    generated = subprocess.run(
        ["go", "run", "./capi/cheader"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=300
    ).stdout
    assert generated == HEADER.read_text(), "capi/combpred.h is stale: run `go run ./capi/cheader > capi/combpred.h`"


def test_python_signatures_match_the_header():
    header = _header_functions()
    assert len(header) > 40
    assert set(_capi._SIGNATURES) == set(header), set(_capi._SIGNATURES) ^ set(header)
    for name, (argtypes, restype) in _capi._SIGNATURES.items():
        ret, args = header[name]
        assert _c_type(restype) == ret.replace(" *", "*"), name
        assert [_c_type(t) for t in argtypes] == args, name


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_the_library_exports_exactly_the_headers_functions():
    """Six internal C helpers were exported with the ABI's prefix, undeclared and unchecked:
    cp_set_error(NULL) and cp_call_progress(NULL, ...) killed the process (probe 87)."""
    listed = subprocess.run(
        ["nm", "-D", "--defined-only", _capi.lib()._name], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    exported = {fields[-1] for fields in map(str.split, listed.splitlines()) if fields and fields[-1].startswith("cp_")}
    assert exported == set(_header_functions()), exported ^ set(_header_functions())


def test_string_arguments_are_bounded_before_they_are_copied():
    """Every const char* argument was copied whole into Go before a length check, outside the
    memory budget: 1.3 GB under an address-space limit aborted the process, and names had no bound
    at all. The bound is read by strnlen, the copy never made; names that are not UTF-8 come back
    in messages as U+FFFD (probe 87)."""
    lib = _capi.lib()
    long = b"a" * (2**16 + 1)
    for call in (
        lambda: lib.cp_ridge_check_distributable(long),
        lambda: lib.cp_check_output(1, long),
        lambda: lib.cp_set_threads_default(long),
    ):
        assert call() == _capi.VALUE
        assert re.fullmatch(r"(the parameter string|what|omp) is longer than 65536 bytes", lib.cp_last_error().decode())
    assert lib.cp_check_output(2**62, b"x\xffy") == _capi.MEMORY
    message = lib.cp_last_error()
    assert message.decode().startswith("x\ufffdy: "), message  # UTF-8, the byte replaced
    _capi.check(lib.cp_set_threads_default(_capi._omp_at_load))  # the default as it was
    assert lib.cp_ridge_check_distributable(b"a" * 2**16) == _capi.VALUE  # at the bound: parsed
    assert "longer than" not in lib.cp_last_error().decode()


def test_info_json_is_read_within_its_buffer():
    # _read_json copies the bytes the core reports, never more than the buffer holds: after a
    # second call that reports a larger size again (the info grew between the calls) the buffer
    # is read as far as it goes, and a report within the first buffer is read in one call
    import json

    from combpred import _core

    text = json.dumps({"kind": "x" * 2000}).encode()
    calls = []

    def grows(buf, cap, needed):
        calls.append(cap)
        n = min(cap, len(text))
        ctypes.memmove(buf, text, n)
        needed.value = len(text) + 500 * (len(calls) - 1)  # the second call reports more
        return _capi.OK

    assert _core._read_json(grows) == {"kind": "x" * 2000}  # no bytes from past the buffer
    assert calls == [1024, len(text)]
    small = json.dumps({"kind": "y"}).encode()

    def fits(buf, cap, needed):
        ctypes.memmove(buf, small, len(small))
        needed.value = len(small)
        return _capi.OK

    assert _core._read_json(fits) == {"kind": "y"}
