"""The guard of the user's signal handlers during a long call (``_capi.handlers_as_flag``): what
it does when a handler fires while the handlers are being put back, and with guards left behind.
Signals are sent to this process's main thread, where pytest runs the tests."""

from __future__ import annotations

import json
import os
import signal
import sys

import pytest
from combpred import _capi

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


class Deadline(Exception):
    pass


@pytest.fixture
def handlers():
    """A raising SIGUSR1 handler, a recording SIGUSR2 handler and Python's own SIGINT handler (a
    pytest-xdist worker or a background shell ignores SIGINT), the previous ones put back after."""
    seen = []

    def deadline(signum, frame):
        raise Deadline()

    def record(signum, frame):
        seen.append(signum)

    previous = {s: signal.getsignal(s) for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGUSR1, deadline)
    signal.signal(signal.SIGUSR2, record)
    yield deadline, record, seen
    for s, h in previous.items():
        signal.signal(s, h)


def test_inside_the_call_a_raising_handler_cancels_and_a_returning_one_runs(handlers):
    deadline, record, seen = handlers
    flag: list = []
    with _capi.handlers_as_flag(flag):
        assert signal.getsignal(signal.SIGUSR1) is not deadline  # guarded
        os.kill(os.getpid(), signal.SIGUSR2)
        os.kill(os.getpid(), signal.SIGUSR1)
    assert seen == [signal.SIGUSR2]
    assert len(flag) == 1 and isinstance(flag[0], Deadline)
    assert signal.getsignal(signal.SIGUSR1) is deadline
    assert signal.getsignal(signal.SIGUSR2) is record


def test_a_handler_raising_while_the_handlers_are_put_back(handlers, monkeypatch):
    """An exception raised in the middle of the restore (a signal whose handler is back already)
    neither stops the restore nor is lost: every handler is back, then it is raised. Before, the
    handlers after it in the loop stayed guarded for good, swallowing their exceptions."""
    deadline, record, seen = handlers
    real = _capi._setsignal
    calls = []

    def setsignal(signum, handler):
        result = real(signum, handler)
        calls.append(signum)
        if len(calls) == len(guarded) + 1:  # the first restore, once it is done
            raise Deadline()
        return result

    guarded = [s for s in _capi._GUARDED if callable(signal.getsignal(s))]
    monkeypatch.setattr(_capi, "_setsignal", setsignal)
    with pytest.raises(Deadline):
        with _capi.handlers_as_flag([]):
            pass
    monkeypatch.undo()
    assert signal.getsignal(signal.SIGUSR1) is deadline
    assert signal.getsignal(signal.SIGUSR2) is record
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_guard_left_behind_is_the_handler_itself(handlers, monkeypatch):
    """Should a guard outlive its call, it passes the signal on (the handler's exception is
    raised, not kept in a dead flag), and the next call puts the user's handler back."""
    deadline, record, seen = handlers
    real = _capi._setsignal
    restoring = []

    def setsignal(signum, handler):
        if restoring and signum == signal.SIGUSR1:
            return None  # the restore of SIGUSR1 missed
        return real(signum, handler)

    monkeypatch.setattr(_capi, "_setsignal", setsignal)
    with _capi.handlers_as_flag([]):
        restoring.append(True)
    monkeypatch.undo()
    left = signal.getsignal(signal.SIGUSR1)
    assert left is not deadline
    with pytest.raises(Deadline):
        os.kill(os.getpid(), signal.SIGUSR1)
    flag: list = []
    with _capi.handlers_as_flag(flag):
        os.kill(os.getpid(), signal.SIGUSR1)
    assert len(flag) == 1 and isinstance(flag[0], Deadline)  # guarded by this call, not the old guard
    assert signal.getsignal(signal.SIGUSR1) is deadline


def test_a_call_inside_a_handler_guards_the_users_handler(handlers):
    """A call made by a handler during another call: its guard calls the user's handler (marking
    the inner call), and the outer guard is back after it."""
    deadline, record, seen = handlers
    outer: list = []
    with _capi.handlers_as_flag(outer):
        outer_guard = signal.getsignal(signal.SIGUSR1)
        inner: list = []
        with _capi.handlers_as_flag(inner):
            os.kill(os.getpid(), signal.SIGUSR1)
        assert len(inner) == 1 and isinstance(inner[0], Deadline) and outer == []
        assert signal.getsignal(signal.SIGUSR1) is outer_guard
    assert signal.getsignal(signal.SIGUSR1) is deadline


def test_an_interrupt_while_ctypes_converts_the_arguments_stays_a_keyboard_interrupt():
    """The array arguments were converted by Python ``from_param`` methods, where the eval loop runs
    signal handlers: ctypes wrapped a KeyboardInterrupt raised there as ``ctypes.ArgumentError``
    ("argument 1: KeyboardInterrupt: "), an Exception that ``except Exception`` swallows: 16 % of
    interrupts in a loop of get_config (probe ED). The conversion is ctypes' own now, in C. Run in a
    child: SIGALRM timers at intervals from 3 µs to 300 µs, for 3 s, with Python's Ctrl-C handler."""
    import subprocess
    import textwrap

    code = textwrap.dedent(
        """
        import collections, json, signal, time
        import numpy as np
        import combpred
        from combpred import spaces

        space, U = spaces.Multilabel(3), np.zeros((1, 3))
        combpred.get_config(), space.decode(U)
        signal.signal(signal.SIGALRM, signal.default_int_handler)
        seen, interval, end = collections.Counter(), 3e-6, time.monotonic() + 3
        while time.monotonic() < end:
            try:
                signal.setitimer(signal.ITIMER_REAL, interval)
                for _ in range(50):
                    combpred.get_config()
                    space.decode(U)
            except KeyboardInterrupt:
                seen["KeyboardInterrupt"] += 1
            except Exception as exc:
                seen[type(exc).__name__ + ": " + str(exc)[:80]] += 1
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            except KeyboardInterrupt:
                pass
            interval = interval * 1.05 if interval < 3e-4 else 3e-6
        print(json.dumps(seen))
        """
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr[-3000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen.pop("KeyboardInterrupt", 0) > 100, seen
    assert not seen, f"interrupts that came out as other exceptions: {seen}"


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and os.uname().machine in ("x86_64", "aarch64")),
    reason="reads glibc's struct sigaction of x86-64 and arm64",
)
def test_a_long_call_leaves_the_kernels_dispositions_as_it_found_them():
    """The guard swaps Python-level handlers through signal.signal(), which installs Python's C
    handler whatever the kernel held: a long call had replaced a SIG_IGN of SIGINT set in C, a
    faulthandler.register handler and the Go runtime's own SIGSEGV handler, and dropped the
    SA_RESTART of signal.siginterrupt(sig, False), for good (probe EJ). Run in a child: the
    dispositions are the whole process's."""
    code = """
import ctypes, faulthandler, json, os, signal, time
import numpy as np
libc = ctypes.CDLL(None)
def action(sig):  # the kernel's disposition: glibc's handler, first 64 bits of the mask, flags
    buf = ctypes.create_string_buffer(1024)  # (glibc fills the rest of its 1024-bit mask with stack bytes)
    assert libc.sigaction(sig, None, buf) == 0
    return (buf.raw[:16] + buf.raw[136:140]).hex()
signal.signal(signal.SIGSEGV, lambda s, f: None)  # a Python handler, which Go's takes over at load
from combpred import _capi, spaces
_capi.lib()
libc.signal.restype = ctypes.c_void_p
libc.signal(signal.SIGINT, ctypes.c_void_p(1))  # SIG_IGN, set in C: Python's table still has its handler
signal.signal(signal.SIGUSR2, lambda s, f: None)
signal.siginterrupt(signal.SIGUSR2, False)  # SA_RESTART
signal.signal(signal.SIGUSR1, lambda s, f: None)
faulthandler.register(signal.SIGUSR1, all_threads=False)
watched = (signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGSEGV)
before = {s: action(s) for s in watched}
spaces.Permutations(60).decode(np.random.default_rng(0).normal(size=(2000, 1770)))  # a long call
changed = [signal.Signals(s).name for s in watched if action(s) != before[s]]
print(json.dumps(changed), flush=True)
os.kill(os.getpid(), signal.SIGINT)
time.sleep(0.05)
print("SIGINT still ignored")
"""
    import subprocess
    import textwrap

    child = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert json.loads(child.stdout.strip().splitlines()[0]) == [], child.stdout
    assert child.returncode == 0 and child.stdout.strip().endswith("SIGINT still ignored"), child.stderr[-2000:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads' signal masks in /proc")
def test_a_signal_the_main_thread_blocks_waits_for_it_though_the_core_runs_threads():
    """The Go runtime's threads kept the signal mask of the load, and took a SIGINT the main thread
    had blocked with signal.pthread_sigmask: Python raised KeyboardInterrupt inside the section
    meant to defer it (probe EJ). The library is loaded with the asynchronous signals blocked, so
    the runtime's threads never take them. (OpenBLAS's own threads would: one BLAS thread here.)"""
    code = """
import os, signal, time
import numpy as np
from combpred import spaces
spaces.Permutations(5).decode(np.zeros((1, 10)))  # loads the core, which starts its threads
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
try:
    os.kill(os.getpid(), signal.SIGINT)
    spaces.Permutations(60).decode(np.random.default_rng(0).normal(size=(2000, 1770)))  # the runtime's threads at work
    time.sleep(0.1)
    print("deferred", signal.SIGINT in signal.sigpending(), flush=True)
except KeyboardInterrupt:
    print("interrupted inside the section", flush=True)
try:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    time.sleep(0.1)
except KeyboardInterrupt:
    print("interrupted after it", flush=True)
"""
    import subprocess

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert child.stdout.split("\n")[:2] == ["deferred True", "interrupted after it"], (
        child.stdout,
        child.stderr[-2000:],
    )
