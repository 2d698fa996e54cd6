"""Run the hostile-input battery (probes.py) in subprocesses and classify every probe.

    python tests/battery/runner.py [--out REPORT.md] [--json FILE] [--filter SUBSTR] [--timeout S] [--memory GiB]

A worker subprocess (``--worker``) runs probes one after another, under an address-space limit
(RLIMIT_AS), announcing ``start i`` and ``result i <json>`` on stdout. The parent enforces each probe's
timeout (it kills the worker's process group: *hang*), notices a worker that dies mid-probe (Go's "out of
memory" or an OOM kill: *memory*; a signal or any other exit: *crash*) and starts a fresh worker for the
next probe. Probes that need a fresh process (fork, signals, a second library, environment variables)
run alone in their own worker.

Outcomes: ok (valid input, sane result), clear (expected exception type whose message names the
argument), unclear (another exception type, or a message that does not name it), silent (invalid input
accepted, or a wrong result without a word), crash, hang, memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUTCOMES = ("ok", "clear", "unclear", "silent", "crash", "hang", "memory")
CATEGORIES = ("params", "arrays", "structures", "weights", "spaces", "metrics", "datasets", "bytes", "processes")


# -- worker ------------------------------------------------------------------------------------------------


def _summary(value: object) -> str:
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return f"ndarray {value.shape} {value.dtype}"
    except Exception:
        pass
    text = repr(value)
    return text if len(text) < 160 else text[:160] + "..."


def classify(probe) -> tuple[str, str]:
    import probes as P

    with warnings.catch_warnings(record=True) as warns:
        warnings.simplefilter("always")
        try:
            result = probe.run()
        except BaseException as exc:  # noqa: BLE001 - every exception is a finding to classify
            name, message = type(exc).__name__, str(exc)
            detail = f"{name}: {message}"
            if probe.expect == "ok":
                return "unclear", f"valid call raised {detail}"
            if P.is_clear_type(exc) and P.names_argument(message, probe.words):
                return "clear", detail
            if P.is_clear_type(exc):
                return "unclear", f"message names none of {list(probe.words)}: {detail}"
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
            return "unclear", detail + where
        if probe.expect == "error":
            extra = ""
            if probe.check is not None:
                try:
                    extra = probe.check(result, warns) or ""
                except Exception as exc:  # noqa: BLE001
                    extra = f"{type(exc).__name__}: {exc}"
            return "silent", f"accepted: {_summary(result)}" + (f"; {extra}" if extra else "")
        if probe.check is None:
            return "ok", ""
        try:
            problem = probe.check(result, warns)
        except BaseException as exc:  # noqa: BLE001 - the result could not even be used
            problem = f"checking the result raised {type(exc).__name__}: {exc}"
        return ("silent", problem) if problem else ("ok", "")


def worker(memory_gib: float) -> None:
    limit = int(memory_gib * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT / "tests"))
    import probes as P

    table = P.build()
    try:  # keep the library's own memory budget (when it has one) under the worker's cap, as a user under a ulimit
        import combpred

        if hasattr(combpred, "set_config"):
            combpred.set_config(max_memory=limit // 2)
    except Exception:  # noqa: BLE001 - a probe will meet the same failure and classify it
        pass
    out = sys.stdout
    for line in sys.stdin:
        i = int(line)
        out.write(f"start {i}\n")
        out.flush()
        try:
            outcome, detail = classify(table[i])
        except BaseException as exc:  # noqa: BLE001 - the harness itself must survive
            outcome, detail = "unclear", f"harness: {type(exc).__name__}: {exc}"
        out.write(f"result {i} {json.dumps([outcome, detail[:2000]])}\n")
        out.flush()


# -- parent ------------------------------------------------------------------------------------------------


def package_parent() -> str:
    """The directory holding the combpred this interpreter imports (installed, or on PYTHONPATH), else the
    checkout's python/: the workers probe the same package as the caller."""
    import importlib.util

    spec = importlib.util.find_spec("combpred")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).resolve().parent.parent)
    return str(ROOT / "python")


class Worker:
    def __init__(self, memory_gib: float, env: dict | None = None):
        self.stderr = tempfile.TemporaryFile()
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join([package_parent(), environment.get("PYTHONPATH", "")])
        environment.update(env or {})
        environment.setdefault("OMP_NUM_THREADS", "1")
        environment.setdefault("OPENBLAS_NUM_THREADS", "1")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--memory", str(memory_gib)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=environment,
            start_new_session=True,
            cwd=str(ROOT),
        )
        self.buffer = b""

    def send(self, i: int) -> None:
        self.proc.stdin.write(f"{i}\n".encode())
        self.proc.stdin.flush()

    def read_line(self, deadline: float) -> str | None:
        """The next stdout line, or None on EOF or when the deadline passes."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(errors="replace")

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except Exception:
                pass
        self.stderr.close()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def death_outcome(worker: Worker) -> tuple[str, str]:
    code = worker.proc.wait(timeout=10)
    text = worker.stderr_text()
    lowered = text.lower()
    # Go's "fatal error: runtime: out of memory", a thread that cannot get its stack under the address-space
    # limit, or the kernel's OOM killer
    if any(s in lowered for s in ("out of memory", "cannot allocate memory", "pthread_create failed")) or (
        code == -signal.SIGKILL
    ):
        outcome = "memory"
    else:
        outcome = "crash"
    if code < 0:
        how = f"killed by {signal.Signals(-code).name}"
    else:
        how = f"exited with status {code}"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    marks = ("fatal error", "panic", "out of memory", "pthread_create", "SIGSEGV", "signal ", "Error")
    key = [ln for ln in lines if any(m in ln for m in marks)][:3]
    return outcome, f"worker {how}: " + " | ".join(key or lines[-3:])[:600]


def run_probes(table, indices, timeout: float | None, memory_gib: float, progress: bool, jobs: int = 1) -> list[dict]:
    """Run the probes ``indices`` of ``table`` in ``jobs`` workers at a time, each taking the next
    probe when it is done (the slowest probes wait on child processes or take a core for tens of
    seconds); the results come back in the order of ``indices``."""
    if jobs <= 1:
        results = _run_probes(table, iter(indices), len(indices), timeout, memory_gib, progress)
        for r in results:
            del r["index"]
        return results
    lock = threading.Lock()
    pending = iter(indices)

    def take():
        while True:
            with lock:
                i = next(pending, None)
            if i is None:
                return
            yield i

    with ThreadPoolExecutor(jobs) as pool:
        parts = list(
            pool.map(lambda _: _run_probes(table, take(), len(indices), timeout, memory_gib, progress), range(jobs))
        )
    by_index = {r.pop("index"): r for part in parts for r in part}
    return [by_index[i] for i in indices]


def _run_probes(table, indices, total: int, timeout: float | None, memory_gib: float, progress: bool) -> list[dict]:
    results: list[dict] = []
    current: Worker | None = None
    started = time.monotonic()
    for n, i in enumerate(indices):
        probe = table[i]
        limit = timeout if timeout is not None else probe.timeout
        if probe.isolated or probe.env:
            if current is not None:
                current.close()
                current = None
            w = Worker(memory_gib, probe.env)
        else:
            if current is None or current.proc.poll() is not None:
                current = Worker(memory_gib)
            w = current
        t0 = time.monotonic()
        w.send(i)
        # the first probe of a worker also waits for its start-up (imports)
        line = w.read_line(t0 + limit + 30)
        outcome = detail = None
        if line is None or line != f"start {i}":
            if line is None:
                try:
                    w.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
            if line is None and w.proc.poll() is None:
                outcome, detail = "hang", f"the worker did not start the probe within {limit + 30:.0f} s"
            elif line is None:
                outcome, detail = death_outcome(w)
            else:
                outcome, detail = "crash", f"protocol error: {line[:200]}"
        else:
            t1 = time.monotonic()
            line = w.read_line(t1 + limit)
            while line is not None and not line.startswith(f"result {i} "):
                line = w.read_line(t1 + limit)  # stray output of the probe itself
            if line is None:
                try:  # EOF comes before the exit status of a worker that died
                    w.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
            if line is not None:
                outcome, detail = json.loads(line.split(" ", 2)[2])
            elif w.proc.poll() is None:
                outcome, detail = "hang", f"no result within {limit:.0f} s"
            else:
                outcome, detail = death_outcome(w)
        elapsed = time.monotonic() - t0
        if outcome in ("hang", "crash", "memory") or probe.isolated or probe.env:
            w.kill()
            if w is current:
                current = None
        results.append(
            {
                "index": i,
                "id": probe.id,
                "category": probe.category,
                "call": probe.call,
                "expect": probe.expect,
                "outcome": outcome,
                "detail": detail,
                "seconds": round(elapsed, 3),
            }
        )
        if progress and (outcome not in ("ok", "clear") or n % 200 == 0):
            print(f"[{n + 1} of {total} {time.monotonic() - started:6.1f}s] {outcome:8s} {probe.id}", file=sys.stderr)
    if current is not None:
        current.close()
    return results


def counts(results: list[dict]) -> tuple[Counter, dict[str, Counter]]:
    total = Counter(r["outcome"] for r in results)
    per = {c: Counter(r["outcome"] for r in results if r["category"] == c) for c in CATEGORIES}
    return total, per


def report(results: list[dict], seconds: float, header: str) -> str:
    import probes as P

    total, per = counts(results)
    n_allowed = sum(1 for r in results if r["outcome"] == "unclear" and P.allowed(r))
    lines = [header, "", f"{len(results)} probes in {seconds:.0f} s.", ""]
    lines.append("| category | " + " | ".join(OUTCOMES) + " | total |")
    lines.append("|---" * (len(OUTCOMES) + 2) + "|")
    for c in CATEGORIES:
        if sum(per[c].values()):
            lines.append(f"| {c} | " + " | ".join(str(per[c][o]) for o in OUTCOMES) + f" | {sum(per[c].values())} |")
    lines.append("| **all** | " + " | ".join(f"**{total[o]}**" for o in OUTCOMES) + f" | **{len(results)}** |")
    lines += [
        "",
        f"Of the {total['unclear']} unclear answers, {n_allowed} are scikit-learn's own (the allow-list "
        "`probes.ALLOWED_UNCLEAR`, marked *allowed* below); the targets are 0 crash, hang, memory and silent, "
        "and no other unclear answer.",
        "",
    ]
    for o in ("crash", "hang", "memory", "silent", "unclear"):
        bad = [r for r in results if r["outcome"] == o]
        if not bad:
            continue
        lines += [f"## {o} ({len(bad)})", "", "| probe | call | detail |", "|---|---|---|"]
        for r in bad:
            detail = r["detail"].replace("|", "\\|").replace("\n", " ")[:300]
            if o == "unclear" and P.allowed(r):
                detail = f"*allowed*: {detail}"
            lines.append(f"| `{r['id']}` | {r['call'].replace('|', '/')} | {detail} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory", type=float, default=6.0, help="address-space limit of a worker, GiB (default 6)")
    parser.add_argument("--timeout", type=float, default=None, help="per-probe timeout in s (default: each probe's)")
    parser.add_argument("--filter", action="append", default=[], help="run only probes whose id contains SUBSTR")
    parser.add_argument("--out", help="write the Markdown report here")
    parser.add_argument("--json", help="write every probe's result as JSON here")
    parser.add_argument("--list", action="store_true", help="list the probe ids and exit")
    parser.add_argument("--from-json", help="re-render the report of a previous --json run instead of running")
    parser.add_argument("--header", default="", help="a line added under the report's title")
    parser.add_argument(
        "--jobs", type=int, default=min(2, os.cpu_count() or 1), help="workers at a time (default: 2, or 1 on one CPU)"
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.memory)
        return 0
    sys.path.insert(0, str(HERE))
    import probes as P

    table = P.build()
    indices = [i for i, p in enumerate(table) if not args.filter or any(f in p.id for f in args.filter)]
    if args.list:
        print("\n".join(table[i].id for i in indices))
        return 0
    if args.from_json:
        previous = json.loads(Path(args.from_json).read_text())
        results, seconds, when = previous["results"], previous["seconds"], previous.get("when", "?")
        commit = previous.get("commit", "?")
        calls = {p.id: p.call for p in table}
        for r in results:  # the descriptions of the current table
            r["call"] = calls.get(r["id"], r["call"])
    else:
        t0 = time.monotonic()
        results = run_probes(table, indices, args.timeout, args.memory, not args.quiet, args.jobs)
        seconds = time.monotonic() - t0
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    header = (
        f"# combpred hostile-input battery\n\nRun {when} on commit {commit or '?'}; "
        f"`python tests/battery/runner.py` (worker memory cap {args.memory:g} GiB)."
        + (f"\n{args.header}" if args.header else "")
    )
    text = report(results, seconds, header)
    if args.out:
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"seconds": seconds, "when": when, "commit": commit, "results": results}, indent=1)
        )
    total, per = counts(results)
    print(f"{len(results)} probes in {seconds:.1f} s: " + ", ".join(f"{o} {total[o]}" for o in OUTCOMES))
    for c in CATEGORIES:
        if sum(per[c].values()):
            print(f"  {c:10s} " + ", ".join(f"{o} {per[c][o]}" for o in OUTCOMES if per[c][o]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
